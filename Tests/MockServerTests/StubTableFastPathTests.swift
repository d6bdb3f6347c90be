import HTTPCore
import Testing

@testable import Mappings
@testable import MockServer

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
    #"{"id":"catch","priority":9,"request":{"method":"ANY","urlPathPattern":"/.*"},"response":{"status":404}}"#,
  ]

  static let targets = [
    "/a", "/a?x=1", "/b", "/b?q=%ZZ", "/u/1", "/u/2", "/c", "/caf%C3%A9", "/a/", "/", "/b%2F",
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
        guard let fast = table.matchByMethodAndPath(req.head) else { continue }
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
      }
    }
  }

  @Test func usedForPlainLiteralStubs() throws {
    let table = StubTable(try [Self.stubJSON[2], Self.stubJSON[3]].map { try makeStub($0) })
    #expect(table.matchByMethodAndPath(request(.get, "/b?x=1", headers: ["Host": "x"]).head)?.id == "b")
    #expect(table.matchByMethodAndPath(request(.post, "/b", headers: ["Host": "x"]).head)?.id == "b-post")
    #expect(table.matchByMethodAndPath(request(.get, "/b%20", headers: ["Host": "x"]).head) == nil)
  }
}
