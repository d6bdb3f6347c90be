import HTTPCore
import TestSupport
import Testing

@testable import Mappings
@testable import MockServer

/// WireMock's selection rule with literal and template stubs side by side: the matching stub with the
/// lowest `priority` number wins, and among equal priorities the one added last. The indexes (literal
/// paths, the template trie, the method-and-path fast path) must pick exactly the stub a scan of every
/// stub would pick.
@Suite("Stub selection with templates: priority, then the most recently added")
struct TemplateSelectionTests {
  /// A stub with id `id` and `field: url` (`urlPath`, `urlPathTemplate`, …; nil: any URL).
  static func stub(
    _ id: String, _ field: String?, _ url: String = "", method: String = "GET", priority: Int? = nil,
    extra: String = ""
  ) throws -> StubMapping {
    var request = #""method":"\#(method)""#
    if let field { request += #","\#(field)":"\#(url)""# }
    if !extra.isEmpty { request += "," + extra }
    let rank = priority.map { #""priority":\#($0),"# } ?? ""
    return try makeStub(#"{"id":"\#(id)",\#(rank)"request":{\#(request)},"response":{"status":200}}"#)
  }

  /// The winner by WireMock's rule from a scan of every stub (no index), with its path parameters.
  static func reference(_ stubs: [StubMapping], _ req: HTTPRequest) throws -> (String, [String: String])? {
    let view = try RequestView(req)
    var best: (Int, [String: String])?
    for (k, s) in stubs.enumerated() {
      let (ok, parameters) = s.request.matches(view)
      guard ok else { continue }
      if let b = best, stubs[b.0].priority < s.priority { continue }  // equal: the later one wins
      best = (k, parameters)
    }
    return best.map { (stubs[$0.0].id, $0.1) }
  }

  /// The table's winner (through the fast path when it applies) with its path parameters.
  static func served(_ table: StubTable, _ req: HTTPRequest) -> (String, [String: String])? {
    guard case .matched(let s, let parameters) = table.match(req, scenarioState: { _ in "Started" }) else {
      return nil
    }
    return (s.id, parameters)
  }

  static func get(_ target: String) -> HTTPRequest { request(.get, target, headers: ["Host": "x"]) }

  @Test func equalPriorityLiteralAndTemplateTheLaterWins() throws {
    let literal = try Self.stub("literal", "urlPath", "/api/users/42")
    let template = try Self.stub("template", "urlPathTemplate", "/api/users/{id}")
    #expect(Self.served(StubTable([literal, template]), Self.get("/api/users/42"))?.0 == "template")
    #expect(Self.served(StubTable([template, literal]), Self.get("/api/users/42"))?.0 == "literal")
    // Only the template fits another id.
    #expect(Self.served(StubTable([template, literal]), Self.get("/api/users/7"))?.0 == "template")
    #expect(Self.served(StubTable([template, literal]), Self.get("/api/users/7"))?.1 == ["id": "7"])
  }

  @Test func priorityBeatsRecencyEitherWay() throws {
    let literal = try Self.stub("literal", "urlPath", "/api/users/42", priority: 1)
    let template = try Self.stub("template", "urlPathTemplate", "/api/users/{id}", priority: 2)
    #expect(Self.served(StubTable([template, literal]), Self.get("/api/users/42"))?.0 == "literal")
    #expect(Self.served(StubTable([literal, template]), Self.get("/api/users/42"))?.0 == "literal")
    let urgent = try Self.stub("urgent", "urlPathTemplate", "/api/{kind}/42", priority: 1)
    let plain = try Self.stub("plain", "urlPath", "/api/users/42")
    #expect(Self.served(StubTable([urgent, plain]), Self.get("/api/users/42"))?.0 == "urgent")
    #expect(Self.served(StubTable([urgent, plain]), Self.get("/api/users/42"))?.1 == ["kind": "users"])
  }

  @Test func templatesWithDifferentLiteralPrefixes() throws {
    let stubs = [
      try Self.stub("users-id", "urlPathTemplate", "/api/users/{id}"),
      try Self.stub("kind-42", "urlPathTemplate", "/api/{kind}/42"),
      try Self.stub("v-users", "urlPathTemplate", "/{version}/users/{id}"),
      try Self.stub("orders", "urlPathTemplate", "/api/users/{id}/orders"),
      try Self.stub("post-only", "urlPathTemplate", "/api/users/{id}", method: "POST"),
    ]
    let table = StubTable(stubs)
    // Three templates of this shape fit; the last added wins.
    #expect(Self.served(table, Self.get("/api/users/42"))?.0 == "v-users")
    #expect(Self.served(table, Self.get("/api/users/42"))?.1 == ["version": "api", "id": "42"])
    #expect(Self.served(table, Self.get("/api/items/42"))?.0 == "kind-42")
    #expect(Self.served(table, Self.get("/api/items/41"))?.0 == nil)
    #expect(Self.served(table, Self.get("/api/users/42/orders"))?.0 == "orders")
    #expect(Self.served(table, request(.post, "/api/users/42", headers: ["Host": "x"]))?.0 == "post-only")
    // Without the newest, the next newest of the same shape.
    let older = StubTable(Array(stubs.prefix(2)))
    #expect(Self.served(older, Self.get("/api/users/42"))?.0 == "kind-42")
    #expect(Self.served(older, Self.get("/api/users/7"))?.0 == "users-id")
    #expect(Self.served(older, Self.get("/api/users/"))?.0 == nil)
  }

  @Test func aTemplateWithMoreCriteriaStillRanks() throws {
    // The newest template needs a header: without it the older literal wins, with it the template.
    let stubs = [
      try Self.stub("literal", "urlPath", "/api/users/42"),
      try Self.stub(
        "needs-header", "urlPathTemplate", "/api/users/{id}", extra: #""headers":{"X":{"equalTo":"1"}}"#),
      try Self.stub(
        "needs-42", "urlPathTemplate", "/api/{kind}/{id}", extra: #""pathParameters":{"id":{"equalTo":"42"}}"#
      ),
    ]
    let table = StubTable(stubs)
    #expect(Self.served(table, Self.get("/api/users/42"))?.0 == "needs-42")
    #expect(Self.served(table, Self.get("/api/users/7"))?.0 == nil)
    #expect(
      Self.served(table, request(.get, "/api/users/7", headers: ["Host": "x", "X": "1"]))?.0 == "needs-header"
    )
    #expect(Self.served(StubTable(Array(stubs.prefix(2))), Self.get("/api/users/42"))?.0 == "literal")
  }

  @Test func stubsAddedAndRemovedAtRuntime() throws {
    let fileLiteral = try Self.stub("file-literal", "urlPath", "/api/users/42")
    let fileTemplate = try Self.stub("file-template", "urlPathTemplate", "/api/users/{id}")
    let store = StubStore(fixtures: FixtureSet(stubs: [fileTemplate, fileLiteral]), fixturesDirectory: nil)
    #expect(Self.served(store.table, Self.get("/api/users/42"))?.0 == "file-literal")
    store.add(try Self.stub("runtime-template", "urlPathTemplate", "/api/{kind}/{id}"))
    #expect(Self.served(store.table, Self.get("/api/users/42"))?.0 == "runtime-template")
    store.add(try Self.stub("runtime-literal", "urlPath", "/api/users/42"))
    #expect(Self.served(store.table, Self.get("/api/users/42"))?.0 == "runtime-literal")
    #expect(Self.served(store.table, Self.get("/api/users/7"))?.0 == "runtime-template")
    store.remove(id: "runtime-literal")
    #expect(Self.served(store.table, Self.get("/api/users/42"))?.0 == "runtime-template")
    store.remove(id: "runtime-template")
    #expect(Self.served(store.table, Self.get("/api/users/42"))?.0 == "file-literal")
    #expect(Self.served(store.table, Self.get("/api/users/7"))?.0 == "file-template")
    store.remove(id: "file-literal")
    #expect(Self.served(store.table, Self.get("/api/users/42"))?.0 == "file-template")
    // Re-adding a file stub's id at runtime makes it the newest.
    store.add(try Self.stub("file-literal", "urlPath", "/api/users/42"))
    #expect(Self.served(store.table, Self.get("/api/users/42"))?.0 == "file-literal")
  }

  @Test func nearMissesStillCoverTemplates() throws {
    let table = StubTable([
      try Self.stub("literal", "urlPath", "/api/users/42"),
      try Self.stub("template", "urlPathTemplate", "/api/users/{id}/orders"),
    ])
    guard
      case .unmatched(let report) = table.match(Self.get("/api/users/7/order"), scenarioState: { _ in "" })
    else {
      Issue.record("expected no match")
      return
    }
    #expect(Set(report.nearMisses.map(\.stubID)) == ["literal", "template"])
    // The method decides nothing on its own: a POST to a GET template's path is a near miss too.
    guard
      case .unmatched(let post) = table.match(
        request(.post, "/api/users/7/orders", headers: ["Host": "x"]), scenarioState: { _ in "" })
    else {
      Issue.record("expected no match for the POST")
      return
    }
    #expect(post.nearMisses.first?.stubID == "template")
  }

  /// Random tables of literal, template, pattern and any-URL stubs of mixed methods and priorities, some
  /// added and removed at runtime: the served winner and its path parameters are the reference scan's.
  @Test(arguments: 0..<24)
  func randomTablesAgreeWithAScan(seed: Int) throws {
    var rng = SplitMix64(seed: UInt64(seed) &* 0x9E37_79B9)
    func pick<T>(_ items: [T]) -> T { items[Int(rng.next() % UInt64(items.count))] }
    let urls: [(String?, String)] = [
      ("urlPath", "/api/users/42"), ("urlPath", "/api/users"), ("urlPath", "/api/items/42"),
      ("urlPath", "/x"),
      ("urlPathTemplate", "/api/users/{id}"), ("urlPathTemplate", "/api/{kind}/42"),
      ("urlPathTemplate", "/api/{kind}/{id}"), ("urlPathTemplate", "/{a}/users/{id}"),
      ("urlPathTemplate", "/api/users/{id}/orders"), ("urlPathTemplate", "/x/{y}"),
      ("urlPathPattern", "/api/.*"), (nil, ""),
    ]
    let store = StubStore(fixtures: FixtureSet(), fixturesDirectory: nil)
    let count = 4 + Int(rng.next() % 20)
    for k in 0..<count {
      let (field, url) = pick(urls)
      var extra = ""
      switch rng.next() % 6 {
      case 0: extra = #""headers":{"X":{"equalTo":"1"}}"#
      case 1 where url.contains("{id}"): extra = #""pathParameters":{"id":{"equalTo":"42"}}"#
      default: break
      }
      store.add(
        try Self.stub(
          "s\(k)", field, url, method: pick(["GET", "GET", "POST", "ANY"]),
          priority: pick([nil, nil, 1, 5, 7]),
          extra: extra))
      if rng.next() % 5 == 0 { store.remove(id: "s\(Int(rng.next() % UInt64(k + 1)))") }
    }
    let stubs = store.stubs
    let table = store.table
    let targets = [
      "/api/users/42", "/api/users/42?x=1", "/api/users", "/api/items/42", "/api/users/7/orders", "/x/1",
      "/x",
      "/api/users/%34%32", "/other", "/api//42",
    ]
    for method in [HTTPMethod.get, .post, .head] {
      for target in targets {
        for headers: HTTPHeaders in [["Host": "x"], ["Host": "x", "X": "1"]] {
          let req = request(method, target, headers: headers)
          let expected = try Self.reference(stubs, req)
          let got = Self.served(table, req)
          #expect(got?.0 == expected?.0, "seed \(seed): \(method) \(target) \(headers)")
          #expect(got?.1 == expected?.1, "seed \(seed): \(method) \(target) \(headers)")
        }
      }
    }
  }
}
