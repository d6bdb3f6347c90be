import Foundation
import HTTPCore
import Mappings
import MockJSON
import RegularExpressions
import Templating

/// Runs a served stub's `recordState` and `deleteState` listeners (docs/stateful.md): after its response
/// is rendered and before it is sent (WireMock's `beforeResponseSent`), in file order, each listener's
/// values rendered before it writes (so it sees the writes of the listeners before it, not its own).
struct StateListenerRunner: Sendable {
  let store: StateStore
  let templating: TemplatingConfiguration

  /// Runs `listeners` for `request`, answered with `response`; returns the problems found at run time (a
  /// context that rendered blank, a refused write, an index that is not a number), for the log and the
  /// journal. `state` is the request's use of the store (a failure of the shared store is kept there).
  func run(
    _ listeners: [StateListener], request: HTTPRequest, context: RequestContext, response: ServedResponse,
    seed: UInt64, state: StateAccess
  ) -> [String] {
    let model = TemplateRequest.model(
      request, scheme: context.isTLS ? "https" : "http", port: context.localPort,
      clientIP: ResponseTemplating.clientIP(context.clientAddress))
    var responseFields = TemplateMap(caseInsensitive: true)
    for field in response.headers { responseFields.set(field.name, .string(field.value)) }
    let responseModel = TemplateValue.map(
      TemplateMap([
        ("status", .int(response.status)),
        (
          "body",
          .string(TextCharset.decode(response.body, contentType: response.headers.first("Content-Type")))
        ),
        ("headers", .map(responseFields)),
      ]))
    let templateContext = TemplateContext(
      request: model, environment: templating.environment, seed: seed,
      additionalModel: TemplateMap([("response", responseModel)]), state: state)
    var problems: [String] = []
    func render(_ t: Template) -> String {
      guard Template.mayContainTags(t.source) else { return t.source }
      let r = t.render(templateContext)
      problems += r.problems
      return r.text
    }
    func renderFields(_ fields: [(String, Template)]) -> [StateField] {
      fields.map { StateField($0.0, render($0.1)) }
    }
    let token = store.newWriteToken()
    for (k, listener) in listeners.enumerated() {
      switch listener {
      case .record(let r):
        let name = render(r.context)
        guard !name.trimmingCharacters(in: .whitespaces).isEmpty else {
          problems.append("recordState \(k): the context rendered blank; nothing written")
          continue
        }
        // Every value first, then one write.
        let properties = renderFields(r.properties)
        let first = r.addFirst.map(renderFields)
        let last = r.addLast.map(renderFields)
        let refusal = state.write(name, token: token) { c in
          let adding = (first == nil ? 0 : 1) + (last == nil ? 0 : 1)
          if adding > 0, c.list.count + adding > StateStore.maximumListEntries {
            return "context \(name): list not extended: it holds \(c.list.count) entries, "
              + "\(StateStore.maximumListEntries) at most"
          }
          for p in properties {
            if p.value == "null" {
              c.properties.removeAll { $0.key == p.key }
            } else if let i = c.properties.firstIndex(where: { $0.key == p.key }) {
              c.properties[i].value = p.value
            } else {
              c.properties.append(p)
            }
          }
          if let first { c.list.insert(first, at: 0) }
          if let last { c.list.append(last) }
          return nil
        }
        if let refusal { problems.append("recordState \(k): \(refusal)") }
      case .delete(let d):
        if let list = d.list {
          guard case .context(let t) = d.target else { continue }
          let name = render(t)
          // Rendered before the store is locked (a template may read the store).
          var indexText = ""
          var whereProperty = ""
          var whereValue = ""
          switch list {
          case .index(let it): indexText = render(it).trimmingCharacters(in: .whitespaces)
          case .matching(let property, let value):
            whereProperty = render(property)
            whereValue = render(value)
          case .first, .last: break
          }
          var note: String?
          _ = state.changeExisting(name, token: token) { c in
            switch list {
            case .first: if !c.list.isEmpty { c.list.removeFirst() }
            case .last: if !c.list.isEmpty { c.list.removeLast() }
            case .index:
              let text = indexText
              guard let i = Int(text), i >= -1, i < c.list.count else {
                note =
                  "deleteState \(k): list index \(JSONValue.quoted(text)) of context \(name) is not a "
                  + "number from -1 to \(c.list.count - 1); nothing deleted"
                return
              }
              if i == -1 {
                if !c.list.isEmpty { c.list.removeLast() }
              } else {
                c.list.remove(at: i)
              }
            case .matching:
              let (p, v) = (whereProperty, whereValue)
              if let i = c.list.firstIndex(where: { e in e.contains { $0.key == p && $0.value == v } }) {
                c.list.remove(at: i)
              }
            }
          }
          if let note { problems.append(note) }
          continue
        }
        switch d.target {
        case .context(let t):
          state.delete([render(t)])
        case .contexts(let ts):
          for t in ts { state.delete([render(t)]) }
        case .matching(let t, let compiled):
          if let compiled {
            state.delete(matching: compiled)
          } else {
            let pattern = render(t)
            do {
              state.delete(matching: try CompiledRegex(pattern))
            } catch {
              problems.append(
                "deleteState \(k): contextsMatching \(JSONValue.quoted(pattern)) is not a valid regular "
                  + "expression (\(error.message)); nothing deleted")
            }
          }
        }
      }
    }
    return problems
  }
}
