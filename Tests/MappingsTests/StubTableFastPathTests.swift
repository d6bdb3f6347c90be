import HTTPCore
import TestSupport
import Testing

@testable import Mappings

@Suite("StubTable: matching by method and path agrees with the full match")
struct StubTableFastPathTests {
  static let stubJSON = [
    #"{"id":"a","request":{"method":"GET","urlPath":"/a"},"response":{"status":200}}"#,
    #"{"id":"a-header","request":{"method":"GET","urlPath":"/a","headers":{"X":{"equalTo":"1"}}},"response":{"status":201}}"#,
    #"{"id":"b","request":{"method":"GET","urlPath":"/b"},"response":{"status":200}}"#,
    #"{"id":"b-post","request":{"method":"POST","urlPath":"/b"},"response":{"status":200}}"#,
    #"{"id":"regex","priority":3,"request":{"method":"GET","urlPathPattern":"/b.*"},"response":{"status":202}}"#,
    #"{"id":"tpl","request":{"method":"GET","urlPathTemplate":"/u/{id}"},"response":{"status":200}}"#,
    #"{"id":"u-lit","request":{"method":"GET","urlPath":"/u/1"},"response":{"status":203}}"#,
    #"{"id":"tpl-any","request":{"method":"ANY","urlPathTemplate":"/t/{a}/x"},"response":{"status":200}}"#,
    #"{"id":"tpl-post","request":{"method":"POST","urlPathTemplate":"/t/{a}/{b}"},"response":{"status":200}}"#,
    #"{"id":"tpl-param","request":{"method":"GET","urlPathTemplate":"/t/{a}/y","pathParameters":{"a":{"equalTo":"1"}}},"response":{"status":200}}"#,
    #"{"id":"any-lit","request":{"method":"ANY","urlPath":"/c"},"response":{"status":200}}"#,
    #"{"id":"c-get","request":{"method":"GET","urlPath":"/c"},"response":{"status":200}}"#,
    #"{"id":"catch","priority":9,"request":{"method":"ANY","urlPathPattern":"/.*"},"response":{"status":404}}"#,
  ]

  static let targets = [
    "/a", "/a?x=1", "/b", "/b?q=%ZZ", "/u/1", "/u/2", "/c", "/caf%C3%A9", "/a/", "/", "/b%2F",
    "/u/", "/u//x", "/u/7/x", "/t/1/x", "/t/1/y", "/a#f", "/a?x#y", "/c?%", "/c#%", "/c?a?b",
  ]

  @Test(arguments: [0, 1, 2, 3])
  func sameWinnerAsTheFullMatch(variant: Int) throws {
    // Different subsets and orders, so that ranks differ.
    var chosen = Self.stubJSON
    if variant == 1 { chosen.reverse() }
    if variant == 2 { chosen.removeAll { $0.contains(#""id":"regex""#) || $0.contains(#""id":"catch""#) } }
    if variant == 3 { chosen = chosen.filter { !$0.contains("urlPathPattern") && !$0.contains("Template") } }
    let table = StubTable(try chosen.map { try makeStub($0) })
    for method in [HTTPMethod.get, .post, .head] {
      for target in Self.targets {
        let req = request(method, target, headers: ["Host": "x", "X": "1"])
        guard let fast = table.matchByMethodAndPath(req.head)?.stub else { continue }
        let full: StubMatch
        do {
          full = table.match(try RequestView(req), scenarioState: { _ in "Started" })
        } catch {
          Issue.record("fast path matched \(fast.id) for \(target), but the full match rejects it: \(error)")
          continue
        }
        guard case .matched(let stub, _) = full else {
          Issue.record("fast path matched \(fast.id) for \(method) \(target), the full match found none")
          continue
        }
        #expect(stub.id == fast.id, "\(method) \(target)")
        if case .matched(_, let parameters) = full {
          #expect(table.matchByMethodAndPath(req.head)?.pathParameters == parameters, "\(method) \(target)")
        }
      }
    }
  }

  @Test func usedForPlainLiteralStubs() throws {
    let table = StubTable(try [Self.stubJSON[2], Self.stubJSON[3]].map { try makeStub($0) })
    #expect(table.matchByMethodAndPath(request(.get, "/b?x=1", headers: ["Host": "x"]).head)?.stub.id == "b")
    #expect(
      table.matchByMethodAndPath(request(.post, "/b", headers: ["Host": "x"]).head)?.stub.id == "b-post")
    #expect(table.matchByMethodAndPath(request(.get, "/b%20", headers: ["Host": "x"]).head) == nil)
  }

  @Test func usedForPlainTemplateStubs() throws {
    let table = StubTable(
      try [Self.stubJSON[2], Self.stubJSON[5], Self.stubJSON[7]].map { try makeStub($0) })
    let hit = table.matchByMethodAndPath(request(.get, "/u/42?x=1", headers: ["Host": "x"]).head)
    #expect(hit?.stub.id == "tpl")
    #expect(hit?.pathParameters == ["id": "42"])
    // A template with a pathParameters matcher needs the full match.
    let withParameter = StubTable(try [Self.stubJSON[9]].map { try makeStub($0) })
    #expect(withParameter.matchByMethodAndPath(request(.get, "/t/1/y", headers: ["Host": "x"]).head) == nil)
  }
}
