import HTTPCore
import MockJSON
import Synchronization
import Testing

@testable import Templating

/// A fixed store for the `state` helper.
final class FixedStateLookup: TemplateStateLookup {
  let contexts: [String: StateContextSnapshot]
  init(_ contexts: [StateContextSnapshot]) {
    var map: [String: StateContextSnapshot] = [:]
    for c in contexts { map[c.name] = c }
    self.contexts = map
  }
  func stateContext(named name: String) -> StateContextSnapshot? { contexts[name] }
}

/// The `state` helper of WireMock's state extension, the engine alone: what it renders for present and
/// missing contexts and values (the README's table, as the extension's StateTemplateHelperProviderExtension
/// tests assert it), and its error texts.
struct StateHelperTests {
  static let lookup = FixedStateLookup([
    StateContextSnapshot(
      name: "c", properties: [StateField("p", "v"), StateField("empty", "")],
      list: [[StateField("id", "1")], [StateField("id", "2")]], updateCount: 3),
    StateContextSnapshot(name: "bare", properties: [], list: [], updateCount: 1),
  ])

  func render(_ template: String, store: (any TemplateStateLookup)? = StateHelperTests.lookup) throws
    -> String
  {
    let request = HTTPRequest(head: HTTPRequestHead(method: .get, target: "/x/1"), body: [])
    let model = TemplateRequest.model(request, port: 8080)
    return try Template(template).render(TemplateContext(request: model, state: store)).text
  }

  @Test(arguments: [
    ("{{state context='c' property='p'}}", "v"),
    ("{{state context='c' property='empty' default='d'}}", ""),
    ("{{state context='c' property='nope'}}", ""),
    ("{{state context='c' property='nope' default='d'}}", "d"),
    ("{{state context='x' property='p'}}", ""),
    ("{{state context='x' property='p' default='d'}}", "d"),
    ("{{state context='c' property='updateCount'}}", "3"),
    ("{{state context='x' property='updateCount'}}", "0"),
    ("{{state context='x' property='updateCount' default='5'}}", "5"),
    ("{{state context='c' property='listSize'}}", "2"),
    ("{{state context='bare' property='listSize' default='9'}}", "0"),
    ("{{state context='x' property='listSize'}}", "0"),
    ("{{state context='bare' property='list' default='[1]'}}", "[]"),
    ("{{state context='x' property='list'}}", "[]"),
    ("{{state context='x' property='list' default='[{\"a\":\"b\"}]'}}", "[{a=b}]"),
    ("{{state context='c' property='list'}}", "[{id=1}, {id=2}]"),
    ("{{state context='c' list='[1]'}}", "{id=2}"),
    ("{{state context='c' list='[1].id'}}", "2"),
    ("{{state context='x' property='list' default='oops'}}", "[]"),
    ("{{#each (state context='c' property='list')}}{{id}},{{/each}}", "1,2,"),
    ("{{state context='c' list='[0].id'}}", "1"),
    ("{{state context='c' list='[-1].id'}}", "2"),
    ("{{state context='c' list=(join '[' request.pathSegments.[1] '].id' '')}}", "2"),
    ("{{state context='c' list='[7].id'}}", ""),
    ("{{state context='c' list='[7].id' default='d'}}", "d"),
    ("{{state context='x' list='[0].id' default='d'}}", "d"),
    ("{{state context='' property='p'}}", "[ERROR: 'context' cannot be empty]"),
    ("{{state context='c'}}", "[ERROR: Either 'property' or 'list' has to be set]"),
    ("{{state context='c' property='p' list='[0]'}}", "[ERROR: Either 'property' or 'list' has to be set]"),
    ("{{#with (state context='c' property='nope') as | v |}}\"{{v}}\"{{else}}null{{/with}}", "null"),
  ])
  func rendersAsTheExtension(_ template: String, _ expected: String) throws {
    #expect(try render(template) == expected)
  }

  /// Without a store (a template rendered outside a server) every context is missing.
  @Test func withoutAStoreEveryContextIsMissing() throws {
    #expect(try render("{{state context='c' property='p' default='none'}}", store: nil) == "none")
    #expect(try render("{{state context='c' property='updateCount'}}", store: nil) == "0")
  }
}
