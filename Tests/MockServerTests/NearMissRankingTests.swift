import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import Mappings
@testable import MockJSON
@testable import MockServer

/// Near misses are ranked by WireMock's weighted distance (URL 10, method 3, every other part 1; normalized
/// Levenshtein distance for literal strings), so the stub a one-character typo missed comes first, even
/// next to stubs whose other parts matched.
@Suite("Near-miss ranking by distance")
struct NearMissRankingTests {
  /// The near-miss names for `req`, nearest first (the request must match no stub).
  func ranking(_ stubs: [String], _ req: HTTPRequest) throws -> [String] {
    let table = StubTable(try stubs.map { try makeStub($0) })
    guard case .unmatched(let report) = table.match(req, scenarioState: { _ in "Started" }, nearMissLimit: 10)
    else {
      Issue.record("expected no match")
      return []
    }
    let distances = report.nearMisses.map(\.distance)
    #expect(distances == distances.sorted())
    #expect(distances.allSatisfy { $0 > 0 && $0 <= 1 })
    return report.nearMisses.compactMap(\.stubName)
  }

  @Test("a one-character typo in the path ranks the stub it missed first")
  func pathTypo() throws {
    let names = try ranking(
      [
        #"{"name":"friends","request":{"method":"GET","urlPath":"/api/friends"},"response":{}}"#,
        #"{"name":"absent","request":{"method":"GET","urlPath":"/api/absent","headers":{"Accept":{"contains":"json"}}},"response":{}}"#,
        #"{"name":"orders","request":{"method":"GET","urlPath":"/orders/list"},"response":{}}"#,
      ], request(.get, "/api/friendz", headers: ["Accept": "application/json"]))
    #expect(names.first == "friends")
  }

  @Test("a wrong method ranks the stub with the same URL first")
  func wrongMethod() throws {
    let names = try ranking(
      [
        #"{"name":"create","request":{"method":"POST","urlPath":"/api/users"},"response":{}}"#,
        #"{"name":"other","request":{"method":"GET","urlPath":"/catalog/items"},"response":{}}"#,
        #"{"name":"any-user","request":{"method":"GET","urlPathPattern":"/api/user/[0-9]+"},"response":{}}"#,
      ], request(.get, "/api/users"))
    #expect(names.first == "create")
  }

  @Test("a wrong header value ranks the stub whose value is closest first")
  func wrongHeader() throws {
    let names = try ranking(
      [
        #"{"name":"v1","request":{"method":"GET","urlPath":"/me","headers":{"Authorization":{"equalTo":"Bearer abcdef"}}},"response":{}}"#,
        #"{"name":"v2","request":{"method":"GET","urlPath":"/me","headers":{"Authorization":{"equalTo":"Basic zzzzzzzzzzzz"}}},"response":{}}"#,
        #"{"name":"elsewhere","request":{"method":"GET","urlPath":"/mine"},"response":{}}"#,
      ], request(.get, "/me", headers: ["Authorization": "Bearer abcdeg"]))
    #expect(names.first == "v1")
    #expect(names.firstIndex(of: "v1")! < names.firstIndex(of: "v2")!)
  }

  @Test("a wrong JSON body field ranks the stub with the closest body first")
  func wrongJSONField() throws {
    let names = try ranking(
      [
        #"{"name":"close","request":{"method":"POST","urlPath":"/orders","bodyPatterns":[{"equalToJson":{"item":"apple","qty":2,"note":"x"}}]},"response":{}}"#,
        #"{"name":"far","request":{"method":"POST","urlPath":"/orders","bodyPatterns":[{"equalToJson":{"sku":1,"count":9,"gift":true}}]},"response":{}}"#,
      ], request(.post, "/orders", body: #"{"item":"apple","qty":3,"note":"x"}"#))
    #expect(names == ["close", "far"])
  }

  @Test("the 404 over a real socket lists the typo's stub first, with its distance")
  func overSockets() async throws {
    let stubs = try [
      makeStub(
        #"{"id":"1","name":"friends","request":{"method":"GET","urlPath":"/api/friends"},"response":{}}"#),
      makeStub(
        #"{"id":"2","name":"absent","request":{"method":"GET","urlPath":"/api/absent","headers":{"Accept":{"contains":"json"}}},"response":{}}"#
      ),
    ]
    let fixtures = FixtureSet(stubs: stubs, envelopes: EnvelopeSet(), problems: [])
    try await withMockService(fixtures: fixtures) { _, port in
      let reply = try http(port, "GET", "/api/friendz", headers: ["Accept": "application/json"])
      #expect(reply.status == 404)
      let misses = try #require(reply.json?["nearMisses"]?.arrayValue)
      #expect(misses.first?["stub"]?["name"] == .string("friends"))
      let first = try #require(misses.first?["distance"]?.numberValue?.doubleValue)
      let second = try #require(misses.last?["distance"]?.numberValue?.doubleValue)
      #expect(first < second)
      // The admin near-miss endpoint ranks from the same evaluation.
      let admin = try http(
        port, "POST", "/__admin/near-misses/request",
        body: #"{"method":"GET","url":"/api/friendz","headers":{"Accept":"application/json"}}"#,
        headers: ["Content-Type": "application/json"])
      let adminMisses = try #require(admin.json?["nearMisses"]?.arrayValue)
      #expect(adminMisses.first?["stubMapping"]?["name"] == .string("friends"))
      #expect(adminMisses.first?["matchResult"]?["distance"]?.numberValue?.doubleValue ?? 1 < 0.2)
    }
  }
}

@Suite("Normalized Levenshtein distance")
struct StringDistanceTests {
  @Test(arguments: [
    ("", "", 0.0), ("abc", "abc", 0.0), ("abc", "", 1.0), ("", "ab", 1.0), ("kitten", "sitting", 3.0 / 7),
    ("/api/friends", "/api/friendz", 1.0 / 12), ("flaw", "lawn", 2.0 / 4), ("abcdef", "xyz", 1.0),
  ])
  func distances(a: String, b: String, expected: Double) {
    #expect(abs(StringDistance.normalized(a, b) - expected) < 1e-9)
    #expect(abs(StringDistance.normalized(b, a) - expected) < 1e-9)
  }
}

@Suite("Bounded costs of matching large bodies")
struct LargeBodyCostTests {
  /// The byte search agrees with a plain scan, on short texts over a two-letter alphabet (where prefix
  /// fallbacks matter) and on code-unit-exact Unicode (no canonical equivalence, as Java's `contains`).
  @Test func byteSearchAgreesWithAPlainScan() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2000 {
      let h = String((0..<Int.random(in: 0...12, using: &generator)).map { _ in "ab".randomElement()! })
      let n = String((0..<Int.random(in: 0...4, using: &generator)).map { _ in "ab".randomElement()! })
      let plain =
        n.isEmpty
        || Array(h.utf8).indices.contains { start in
          Array(h.utf8)[start...].starts(with: Array(n.utf8))
        }
      #expect(ByteSearch.contains(h, n) == plain, "\(h) contains \(n)")
    }
    #expect(ByteSearch.contains("caf\u{E9}", "\u{E9}"))
    #expect(!ByteSearch.contains("cafe\u{301}", "\u{E9}"))
  }

  /// A crafted pattern against a large body is linear: 4 MiB of `a` against 1,000 `a`s and a `b` (a plain
  /// scan compares 4 billion bytes; linear is 4 million). Counted in byte comparisons, not in time.
  @Test func byteSearchIsLinear() {
    let body = String(repeating: "a", count: 4 << 20)
    let needle = String(repeating: "a", count: 1000) + "b"
    var steps = 0
    #expect(!ByteSearch.contains(body, needle, steps: &steps))
    #expect(steps > 0 && steps <= 2 * (body.utf8.count + needle.utf8.count), "\(steps) comparisons")
    var found = 0
    #expect(ByteSearch.contains(body + "b", needle, steps: &found))
    #expect(found <= 2 * (body.utf8.count + 1 + needle.utf8.count), "\(found) comparisons")
  }

  /// The near-miss distance of a large body next to a short expected value is not a full Levenshtein
  /// table (64 MiB × 5 took 46 s on the loop): past 4 million cells the middles count as different.
  /// Counted in table cells, not in time.
  @Test func distanceOfALargeBodyIsBounded() {
    let body = String(repeating: "a", count: 8 << 20)
    var cells = 0
    let d = StringDistance.normalized("hello", body, cells: &cells)
    #expect(d > 0.99 && d <= 1)
    #expect(cells <= StringDistance.tableCellLimit, "\(cells) cells")
    // Small middles still get the exact table.
    var small = 0
    #expect(abs(StringDistance.normalized("kitten", "sitting", cells: &small) - 3.0 / 7) < 1e-9)
    #expect(small == 6 * 7)
  }
}
