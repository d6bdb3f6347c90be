import HTTPCore
import TestSupport
import Testing

@testable import Mappings
@testable import MockJSON

/// The id (or name) of the winning stub, "404", or "400".
func winner(_ table: StubTable, _ req: HTTPRequest, state: @escaping (String) -> String = { _ in "Started" })
  -> String
{
  switch table.match(req, scenarioState: state) {
  case .matched(let s, _): return s.name ?? s.id
  case .unmatched: return "404"
  case .invalidRequest: return "400"
  }
}

@Suite("Stub table: URL matching, priority, scenarios, near misses")
struct StubTableTests {
  /// An exact path is not a prefix; regex anchored; query is not part of the path.
  static let br13 = [
    #"{"name":"fixed","request":{"method":"GET","urlPath":"/fixedpath"},"response":{"status":205}}"#,
    #"{"name":"users","request":{"method":"GET","urlPathPattern":"/users/[0-9]+"},"response":{"status":200}}"#,
  ]

  @Test(
    "exact and anchored paths",
    arguments: [
      ("/fixedpath", "fixed"), ("/fixedpathEmptyBody", "404"), ("/fixedpath/", "404"),
      ("/fixedpath?x=1", "fixed"),
      ("/users/12", "users"), ("/users/12/orders", "404"), ("/v2/users/12", "404"), ("/users/12?x", "users"),
    ])
  func br13(target: String, expected: String) throws {
    let table = StubTable(try StubTableTests.br13.map { try makeStub($0) })
    #expect(winner(table, request(.get, target)) == expected)
  }

  /// `//` is significant; a `url` with query matches path+query exactly.
  @Test(
    "double slashes and url with query",
    arguments: [
      ("/api/users", "users"), ("/api//users", "404"), ("/api/users/", "404"),
      ("/categories?per_page=50", "cats"), ("/categories?per_page=50&x=1", "404"), ("/categories", "404"),
    ])
  func br14(target: String, expected: String) throws {
    let table = StubTable([
      try makeStub(#"{"name":"users","request":{"urlPath":"/api/users"},"response":{}}"#),
      try makeStub(#"{"name":"cats","request":{"url":"/categories?per_page=50"},"response":{}}"#),
    ])
    #expect(winner(table, request(.get, target)) == expected)
  }

  /// Percent-encoded UTF-8: decode to bytes, then UTF-8; hex case-insensitive; invalid escapes are 400, never a match. A
  /// query that decodes to bytes that are not UTF-8 is no error (issue 17): only matchers that read the
  /// query fail on it (`queryParameters` here, so 404).
  @Test(
    "percent-encoded UTF-8",
    arguments: [
      ("/search?q=%E4%B8%AD%E6%96%87", "search"), ("/caf%C3%A9/menu", "cafe"), ("/caf%c3%a9/menu", "cafe"),
      ("/café/menu", "cafe"), ("/search?q=%E4%B8", "404"), ("/search?q=%ZZ", "400"), ("/caf%C3/menu", "400"),
      ("/search?q=%E4%B8%AD", "404"), ("/search?q=%", "400"),
    ])
  func br16(target: String, expected: String) throws {
    let table = StubTable([
      try makeStub(
        #"{"name":"search","request":{"urlPath":"/search","queryParameters":{"q":{"equalTo":"中文"}}},"response":{}}"#
      ),
      try makeStub(#"{"name":"cafe","request":{"urlPath":"/café/menu"},"response":{}}"#),
    ])
    #expect(winner(table, request(.get, target)) == expected)
  }

  @Test("invalid percent-encoding diagnostic names the escape")
  func invalidDiagnostic() {
    let table = StubTable([])
    guard
      case .invalidRequest(let e) = table.match(
        request(.get, "/search?q=%ZZ"), scenarioState: { _ in "Started" })
    else {
      Issue.record("expected invalidRequest")
      return
    }
    #expect(e.component == "query")
    #expect(e.description.contains("%ZZ"))
  }

  @Test(
    "each URL field compares what the docs say",
    arguments: [
      (#"{"url":"/a/b?x=1&y=2"}"#, "/a/b?x=1&y=2", true), (#"{"url":"/a/b?x=1&y=2"}"#, "/a/b?y=2&x=1", false),
      (#"{"url":"/a/b"}"#, "/a/b?x=1", false), (#"{"url":"/a%20b?q=a+b"}"#, "/a%20b?q=a+b", true),
      (#"{"url":"/a b?q=%41"}"#, "/a%20b?q=A", true), (#"{"url":"/s?q=a%26b"}"#, "/s?q=a&b", false),
      (#"{"urlPath":"/a/b"}"#, "/a/b?x=1", true), (#"{"urlPath":"/a%2Fb"}"#, "/a/b", false),
      (#"{"urlPath":"/a%2fb"}"#, "/a%2Fb", true),
      (#"{"urlPattern":"/a/.*\\?x=[0-9]"}"#, "/a/zz?x=1", true),
      (#"{"urlPattern":"/a/.*"}"#, "/b/a/c", false),
      (#"{"urlPathPattern":"/a/[a-z]+"}"#, "/a/bc?x=1", true),
      (#"{"urlPathPattern":"/a/[a-z]+"}"#, "/a/b1", false),
      (#"{"urlPathTemplate":"/contacts/{id}"}"#, "/contacts/12", true),
      (#"{"urlPathTemplate":"/contacts/{id}"}"#, "/contacts/12/x", false),
      (#"{"urlPathTemplate":"/contacts/{id}"}"#, "/contacts/", false),
      (#"{}"#, "/anything?at=all", true),
    ])
  func urlFields(request pattern: String, target: String, expected: Bool) throws {
    let stub = try makeStub(#"{"request":\#(pattern),"response":{}}"#)
    let table = StubTable([stub])
    #expect((winner(table, request(.get, target)) != "404") == expected)
  }

  @Test("urlPathTemplate gives decoded path parameters and checks pathParameters")
  func pathTemplate() throws {
    let stub = try makeStub(
      #"{"request":{"urlPathTemplate":"/contacts/{contactId}/addresses/{addressId}","pathParameters":{"contactId":{"equalTo":"12 3"},"addressId":{"matches":"[0-9]+"}}},"response":{}}"#
    )
    let table = StubTable([stub])
    guard
      case .matched(_, let params) = table.match(
        request(.get, "/contacts/12%203/addresses/99"), scenarioState: { _ in "Started" })
    else {
      Issue.record("no match")
      return
    }
    #expect(params == ["contactId": "12 3", "addressId": "99"])
    #expect(winner(table, request(.get, "/contacts/12%203/addresses/x")) == "404")
  }

  @Test(
    "method, headers, query, cookies, basic auth, body",
    arguments: [
      (
        request(
          .get, "/r?page=2&tag=a&tag=b",
          headers: [
            "accept": "application/json", "Cookie": "sid=abc; theme=dark",
            "Authorization": "Basic dXNlcjpwYXNz",
          ], body: #"{"n":1}"#), true
      ),
      (
        request(
          .post, "/r?page=2&tag=a&tag=b",
          headers: [
            "accept": "application/json", "Cookie": "sid=abc", "Authorization": "Basic dXNlcjpwYXNz",
          ], body: #"{"n":1}"#), false
      ),
      (
        request(
          .get, "/r?page=3&tag=a&tag=b",
          headers: [
            "Accept": "application/json", "Cookie": "sid=abc", "Authorization": "Basic dXNlcjpwYXNz",
          ], body: #"{"n":1}"#), false
      ),
      (
        request(
          .get, "/r?page=2&tag=a",
          headers: [
            "Accept": "application/json", "Cookie": "sid=abc", "Authorization": "Basic dXNlcjpwYXNz",
          ], body: #"{"n":1}"#), false
      ),
      (
        request(
          .get, "/r?page=2&tag=a&tag=b",
          headers: ["Accept": "text/html", "Cookie": "sid=abc", "Authorization": "Basic dXNlcjpwYXNz"],
          body: #"{"n":1}"#), false
      ),
      (
        request(
          .get, "/r?page=2&tag=a&tag=b",
          headers: ["Accept": "application/json", "Authorization": "Basic dXNlcjpwYXNz"], body: #"{"n":1}"#),
        false
      ),
      (
        request(
          .get, "/r?page=2&tag=a&tag=b",
          headers: [
            "Accept": "application/json", "Cookie": "sid=abc", "Authorization": "Basic dXNlcjp3cm9uZw==",
          ], body: #"{"n":1}"#), false
      ),
      (
        request(
          .get, "/r?page=2&tag=a&tag=b",
          headers: [
            "Accept": "application/json", "Cookie": "sid=abc", "Authorization": "Basic dXNlcjpwYXNz",
          ], body: #"{"n":2}"#), false
      ),
      (
        request(
          .get, "/r?page=2&tag=a&tag=b",
          headers: [
            "Accept": "application/json", "Cookie": "sid=abc", "Authorization": "Basic dXNlcjpwYXNz",
            "X-Debug": "1",
          ], body: #"{"n":1.0}"#), false
      ),
    ])
  func requestFields(req: HTTPRequest, expected: Bool) throws {
    let stub = try makeStub(
      #"""
      {"request":{"method":"GET","urlPath":"/r",
        "queryParameters":{"page":{"equalTo":"2"},"tag":{"hasExactly":[{"equalTo":"b"},{"equalTo":"a"}]}},
        "headers":{"Accept":{"contains":"json"},"X-Debug":{"absent":true}},
        "cookies":{"sid":{"equalTo":"abc"}},
        "basicAuthCredentials":{"username":"user","password":"pass"},
        "bodyPatterns":[{"equalToJson":{"n":1}},{"matchesJsonPath":"$.n"}]},
       "response":{"status":200}}
      """#)
    #expect((winner(StubTable([stub]), req) != "404") == expected)
  }

  @Test("query values decode + as space and repeat")
  func queryDecoding() throws {
    let view = try RequestView(request(.get, "/s?q=a+b%2Bc&q=%E4%B8%AD&flag&=x"))
    #expect(view.queryValues("q") == ["a b+c", "中"])
    #expect(view.queryValues("flag") == [""])
    #expect(view.url == "/s?q=a+b%2Bc&q=中&flag&=x")
  }

  @Test(
    "priority: lowest number wins, ties go to the most recently added",
    arguments: [
      ([("a", 5), ("b", 5)], "b"), ([("a", 1), ("b", 5)], "a"), ([("a", 5), ("b", 1), ("c", 1)], "c"),
      ([("a", 3), ("b", 4), ("c", 5)], "a"),
    ])
  func priority(stubs: [(String, Int)], expected: String) throws {
    // Mix literal and pattern stubs so ranking crosses the index and the linear list.
    let table = StubTable(
      try stubs.enumerated().map { k, s in
        let url = k % 2 == 0 ? #""urlPath":"/p""# : #""urlPathPattern":"/[p]""#
        return try makeStub(#"{"name":"\#(s.0)","priority":\#(s.1),"request":{\#(url)},"response":{}}"#)
      })
    #expect(winner(table, request(.get, "/p")) == expected)
  }

  @Test("ANY-method and method-specific literal stubs both found")
  func anyMethod() throws {
    let table = StubTable([
      try makeStub(#"{"name":"any","request":{"method":"ANY","urlPath":"/x"},"response":{}}"#),
      try makeStub(#"{"name":"post","priority":1,"request":{"method":"POST","urlPath":"/x"},"response":{}}"#),
    ])
    #expect(winner(table, request(.delete, "/x")) == "any")
    #expect(winner(table, request(.post, "/x")) == "post")
  }

  @Test("scenario state gates a stub")
  func scenarios() throws {
    let table = StubTable([
      try makeStub(
        #"{"name":"first","scenarioName":"todo","requiredScenarioState":"Started","newScenarioState":"added","request":{"urlPath":"/t"},"response":{}}"#
      ),
      try makeStub(
        #"{"name":"second","scenarioName":"todo","requiredScenarioState":"added","request":{"urlPath":"/t"},"response":{}}"#
      ),
    ])
    #expect(winner(table, request(.get, "/t"), state: { _ in "Started" }) == "first")
    #expect(winner(table, request(.get, "/t"), state: { _ in "added" }) == "second")
    #expect(winner(table, request(.get, "/t"), state: { _ in "other" }) == "404")
    #expect(table.stubs[0].newScenarioState == "added")
  }

  /// A selection made by request header affects only that request (the table is immutable).
  @Test("per-request selection does not leak")
  func br11() async throws {
    let table = StubTable([
      try makeStub(
        #"{"name":"default","request":{"urlPath":"/client-api/v2/test"},"response":{"jsonBody":{"status":"OK","result":"default"}}}"#
      ),
      try makeStub(
        #"{"name":"elon","priority":1,"request":{"urlPath":"/client-api/v2/test","headers":{"Prefer":{"contains":"example=elon"}}},"response":{"jsonBody":{"status":"OK","result":"elon"}}}"#
      ),
      try makeStub(
        #"{"name":"400","priority":1,"request":{"urlPath":"/client-api/v2/test","headers":{"Prefer":{"contains":"code=400"}}},"response":{"status":400,"jsonBody":{"status":"NG","error":{"code":"E400"}}}}"#
      ),
    ])
    let requests = [
      (request(.get, "/client-api/v2/test", headers: ["Prefer": "example=elon"]), "elon"),
      (request(.get, "/client-api/v2/test", headers: ["Prefer": "code=400"]), "400"),
      (request(.get, "/client-api/v2/test"), "default"),
    ]
    for (req, expected) in requests { #expect(winner(table, req) == expected) }
    await withTaskGroup(of: Bool.self) { group in
      for k in 0..<300 {
        let (req, expected) = requests[k % 3]
        group.addTask { winner(table, req) == expected }
      }
      for await ok in group { #expect(ok) }
    }
  }

  @Test("near misses name the failing parts, best first")
  func nearMisses() throws {
    let table = StubTable([
      try makeStub(#"{"name":"orders","request":{"method":"POST","urlPath":"/orders"},"response":{}}"#),
      try makeStub(
        #"{"name":"me","request":{"method":"GET","urlPath":"/users/me","headers":{"Authorization":{"equalTo":"Bearer t"}},"queryParameters":{"v":{"equalTo":"2"}}},"response":{}}"#
      ),
      try makeStub(#"{"name":"other","request":{"method":"PUT","urlPath":"/elsewhere"},"response":{}}"#),
    ])
    guard
      case .unmatched(let report) = table.match(
        request(.get, "/users/me?v=1"), scenarioState: { _ in "Started" })
    else {
      Issue.record("expected no match")
      return
    }
    #expect(report.nearMisses.count == 3)
    let best = try #require(report.nearMisses.first)
    #expect(best.stubName == "me")
    #expect(best.mismatches.map(\.label) == ["query v", "header Authorization"])
    #expect(best.mismatches[1].expected == #"{"equalTo":"Bearer t"}"#)
    #expect(best.mismatches[1].actual == "(absent)")
    #expect(best.mismatches[0].actual == "1")
    // Weighted mean (method 3, URL 10, each other part 1): two parts of weight 1 failed at distance 1.
    #expect(abs(best.distance - 2.0 / 15) < 0.001)
    let distances = report.nearMisses.map(\.distance)
    #expect(distances == distances.sorted())
    #expect(report.nearMisses.dropFirst().allSatisfy { $0.distance > best.distance })

    let json = try JSONValue.parse(String(decoding: report.jsonBody(), as: UTF8.self))
    #expect(json["status"] == .number(JSONNumber(404)))
    #expect(json["nearMisses"]?.arrayValue?.first?["stub"]?["name"] == .string("me"))
    #expect(
      json["nearMisses"]?.arrayValue?.first?["mismatches"]?.arrayValue?.last
        == (try JSONValue.parse(
          #"{"part":"header Authorization","expected":"{\"equalTo\":\"Bearer t\"}","actual":"(absent)"}"#)))
    let text = report.text()
    #expect(text.hasPrefix("No stub mapping matched GET /users/me?v=1"))
    #expect(text.contains("header Authorization: expected {\"equalTo\":\"Bearer t\"}, got (absent)"))
  }

  @Test("near miss reports a scenario in the wrong state")
  func nearMissScenario() throws {
    let table = StubTable([
      try makeStub(
        #"{"name":"s","scenarioName":"cart","requiredScenarioState":"full","request":{"urlPath":"/c"},"response":{}}"#
      )
    ])
    guard case .unmatched(let r) = table.match(request(.get, "/c"), scenarioState: { _ in "Started" }) else {
      Issue.record("expected no match")
      return
    }
    #expect(r.nearMisses.first?.mismatches.map(\.label) == ["scenario cart"])
    #expect(r.nearMisses.first?.mismatches.first?.actual == #"state "Started""#)
  }

  /// How fast the table builds and answers is measured by `make bench` ("startup ms, 10,000 stubs",
  /// "req/s, 10,000 stubs (literal hit)", "matching cost"), not here: here every stub is indexed and found.
  @Test("10,000 literal stubs: all indexed, each found")
  func scale() throws {
    let ctx = try testContext()
    var stubs: [StubMapping] = []
    for k in 0..<10_000 {
      let (s, _) = StubParser.parse(
        try JSONValue.parse(
          #"{"name":"item-\#(k)","request":{"method":"GET","urlPath":"/items/\#(k)"},"response":{"body":"\#(k)"}}"#
        ),
        file: "x.json", context: ctx)
      stubs.append(try #require(s))
    }
    let table = StubTable(stubs)
    // No stub left to the linear scan, which would compare each request with all 10,000.
    #expect(table.linear.isEmpty)
    for k in [0, 1, 4_999, 9_999] {
      #expect(winner(table, request(.get, "/items/\(k)")) == "item-\(k)")
    }
    #expect(winner(table, request(.get, "/items/10000")) == "404")
  }
}
