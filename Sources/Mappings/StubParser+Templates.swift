import HTTPCore
import MockJSON
import Templating

/// Response templating: `transformers`, `transformerParameters` and the templated fields, compiled once.
///
/// Every field containing `{{` is compiled, so global templating (`--global-response-templating`) can
/// apply it; a stub that names `response-template` gets syntax errors and unknown helpers as lint errors
/// located inside the template, other stubs keep a field that does not compile as literal text.
extension StubParser {
  static let templateTransformer = "response-template"

  /// True when `transformers` names `response-template`.
  static func isLocallyTemplated(_ o: JSONObject) -> Bool {
    o["transformers"]?.arrayValue?.contains(.string(templateTransformer)) ?? false
  }

  static func parseTemplates(
    _ o: JSONObject, _ path: String, _ context: StubParsingContext, _ r: ResponseDefinition,
    _ d: inout Diagnostics
  ) -> ResponseTemplate? {
    var local = false
    if let t = o["transformers"] {
      let p = JSONPathText.child(path, "transformers")
      if let names = t.arrayValue, names.allSatisfy({ $0.stringValue != nil }) {
        for name in names.compactMap(\.stringValue) {
          if name == templateTransformer {
            local = true
          } else {
            d.warning(
              p,
              "transformer \(JSONValue.quoted(name)) is not available here (only response-template); ignored")
          }
        }
      } else {
        d.error(p, expected: "an array of transformer names such as [\"response-template\"]", found: t)
      }
    }
    var template = ResponseTemplate(local: local)
    if let params = o["transformerParameters"] {
      let p = JSONPathText.child(path, "transformerParameters")
      if params.objectValue == nil {
        d.error(p, expected: "an object of parameters for the template", found: params)
      } else {
        template.parameters = params
        template.disableBodyFileTemplating = params["disableBodyFileTemplating"]?.boolValue ?? false
      }
    }

    var unknownHelpers: [String] = []
    // The JSON path of a problem (and the text of a body) are made only when there may be a template.
    func compile(_ text: String, _ p: @autoclosure () -> String, _ d: inout Diagnostics) -> Template? {
      guard Template.mayContainTags(text) else { return nil }
      do {
        return try Template(text)
      } catch {
        if local {
          d.error(p(), message: "\(error.line):\(error.column): \(error.message)")
        } else if error.message.hasPrefix("unknown helper") {
          unknownHelpers.append("\(p()): \(error.line):\(error.column): \(error.message)")
          // Under --global-response-templating the text is served as written (WireMock 3 answers 500):
          // said here, so lint and the start-up report name it with its file and JSON path.
          d.warning(
            p(),
            "\(error.line):\(error.column): \(error.message) (a WireMock extension's helper?); under "
              + "--global-response-templating this text is served as written")
        }
        return nil
      }
    }

    if let u = o["proxyBaseUrl"]?.stringValue {
      template.proxyBaseUrl = compile(u, JSONPathText.child(path, "proxyBaseUrl"), &d)
    }
    if let m = o["statusMessage"]?.stringValue {
      template.statusMessage = compile(m, JSONPathText.child(path, "statusMessage"), &d)
    }
    // Header values are matched to their fixture fields only when one of them may hold a template.
    if r.headers.contains(where: { Template.mayContainTags($0.value) }), let h = o["headers"]?.objectValue {
      // Header fields are stored in fixture order, list values expanded: walk them the same way.
      var values: [(key: String, item: Int?, text: String)] = []
      for m in h {
        if let s = m.value.stringValue {
          values.append((m.key, nil, s))
        } else if let a = m.value.arrayValue {
          values += a.enumerated().compactMap { k, v in v.stringValue.map { (m.key, k, $0) } }
        }
      }
      for (index, field) in r.headers.enumerated() {
        guard let k = values.firstIndex(where: { $0.text == field.value }) else { continue }
        let (key, item, text) = values.remove(at: k)
        let p = { () -> String in
          let field = JSONPathText.child(JSONPathText.child(path, "headers"), key)
          return item.map { "\(field)[\($0)]" } ?? field
        }
        if let t = compile(text, p(), &d) { template.headers.append(.init(index: index, template: t)) }
      }
    }
    let bodyMayContainTags = Template.mayContainTags(utf8: r.body)
    switch r.bodySource {
    case .text where bodyMayContainTags:
      template.body = compile(String(decoding: r.body, as: UTF8.self), JSONPathText.child(path, "body"), &d)
    case .json where bodyMayContainTags:
      template.body = compile(
        String(decoding: r.body, as: UTF8.self), JSONPathText.child(path, "jsonBody"), &d)
    case .envelope where bodyMayContainTags:
      template.body = compile(
        String(decoding: r.body, as: UTF8.self), JSONPathText.child(path, "x-envelope"), &d)
    case .file(let name):
      let p = JSONPathText.child(path, "bodyFileName")
      if Template.mayContainTags(name) {
        template.bodyFileName = compile(name, p, &d)
        template.files = BodyFileReader(context.readBodyFile)
      } else if !template.disableBodyFileTemplating, bodyMayContainTags {
        template.body = compile(String(decoding: r.body, as: UTF8.self), p, &d)
      }
    default: break
    }
    template.unknownHelpers = unknownHelpers
    if template.isEmpty, !local, unknownHelpers.isEmpty { return nil }
    return template
  }
}
