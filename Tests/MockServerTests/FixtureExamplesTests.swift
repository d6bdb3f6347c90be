import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import Mappings
@testable import MockJSON
@testable import MockServer

/// Serves `req` from `table` the way the server will: response for the winner, or 404 near-miss body.
func serve(_ table: StubTable, _ req: HTTPRequest, state: @escaping (String) -> String = { _ in "Started" })
  -> (status: Int, body: String, stub: StubMapping?)
{
  switch table.match(req, scenarioState: state) {
  case .matched(let stub, _):
    let r = stub.response.httpResponse(for: req.method)
    return (r.status.code, String(decoding: r.body, as: UTF8.self), stub)
  case .unmatched(let report): return (404, String(decoding: report.jsonBody(), as: UTF8.self), nil)
  case .invalidRequest(let e): return (400, e.description, nil)
  }
}

@Suite("Bundled Fixtures/ example API")
struct FixtureExamplesTests {
  static let set = FixtureLoader.load(directory: bundledFixtures)
  static let table = StubTable(set.stubs)
  static let bearer: HTTPHeaders = ["Authorization": "Bearer demo-token"]
  static let admin: HTTPHeaders = ["Authorization": "Basic YWRtaW46czNjcmV0"]  // admin:s3cret
  static let wrong: HTTPHeaders = ["Authorization": "Basic YWRtaW46d3Jvbmc="]  // admin:wrong

  @Test("loads with no problems")
  func loadsClean() {
    #expect(FixtureExamplesTests.set.problems.map(\.description) == [])
    #expect(FixtureExamplesTests.set.stubs.count == 30)
  }

  @Test(
    "each example answers as documented",
    arguments: [
      (request(.get, "/api/v1/friends", headers: bearer), 200, "friends-list"),
      (request(.get, "/api/v1/friends?page=999", headers: bearer), 200, "friends-page-out-of-range"),
      (request(.get, "/api/v1/friends"), 401, "friends-unauthorized"),
      (
        request(
          .post, "/api/v1/friends/requests", headers: ["Authorization": "Bearer t"], body: #"{"userId":7}"#),
        201, "friend-request-sent"
      ),
      (
        request(
          .post, "/api/v1/friends/requests", headers: ["Authorization": "Bearer t", "X-Demo-Rate": "burst"]),
        400, "friend-request-too-frequent"
      ),
      (request(.get, "/api/v1/friends/suggestions", headers: bearer), 429, "friend-suggestions-rate-limited"),
      (request(.get, "/api/v2/users/42", headers: admin), 200, "user-by-id"),
      (request(.get, "/api/v2/users/0", headers: admin), 404, "user-not-found"),
      (request(.get, "/api/v2/users/42", headers: wrong), 401, "user-unauthorized"),
      (request(.get, "/api/v2/users/42"), 401, "user-unauthorized"),
      (
        request(
          .put, "/api/v2/users/42",
          headers: [
            "Authorization": "Basic YWRtaW46czNjcmV0", "Content-Type": "application/json; charset=utf-8",
          ], body: #"{"name":"Aiko Tanaka","email":"a@b.c"}"#), 200, "user-update"
      ),
      (request(.get, "/api/v2/avatars/42.png", headers: admin), 200, "user-avatar"),
      (request(.get, "/api/v1/reports/daily"), 500, "server-error"),
      (request(.post, "/api/v1/payments/charge"), 503, "maintenance"),
      (request(.get, "/api/v1/timeline"), 200, "slow-timeline"),
      (request(.get, "/api/v1/search?q=ramen"), 200, "jittery-search"),
      (request(.get, "/api/v1/catalog"), 200, "large-catalog"),
      (request(.get, "/api/v1/export.csv"), 200, "dribbled-export"),
      (request(.get, "/api/v1/flaky"), 200, "connection-reset"),
      (request(.get, "/api/v1/notifications"), 200, "notifications-poll"),
      (request(.get, "/health"), 200, "health"),
      // The to-do example (todos.json); its GET/PUT/DELETE of one record need the server's state store
      // (StatefulMockingTests.bundledToDoExampleServesCRUD).
      (request(.post, "/api/v1/todos", body: #"{"title":"milk"}"#), 201, "todo-create"),
      (request(.get, "/api/v1/todos"), 200, "todo-list"),
      (request(.get, "/api/v1/nothing-here"), 404, ""),
    ])
  func answers(req: HTTPRequest, status: Int, stubName: String) {
    let r = serve(FixtureExamplesTests.table, req)
    #expect(r.status == status)
    #expect((r.stub?.name ?? "") == stubName)
  }

  /// The bodies the README shows for its curl commands.
  @Test("README outputs")
  func readmeBodies() throws {
    let t = FixtureExamplesTests.table
    #expect(
      serve(t, request(.get, "/api/v1/friends", headers: FixtureExamplesTests.bearer)).body
        == #"{"status":"OK","result":[{"id":101,"name":"Aiko","online":true,"score":12.50},{"id":102,"name":"Bruno","online":false,"score":7.0}]}"#
    )
    #expect(
      serve(t, request(.get, "/api/v2/users/42", headers: FixtureExamplesTests.admin)).body
        == #"{"code":0,"data":{"id":42,"name":"Aiko Tanaka","email":"aiko@example.com","balance":1250.00},"info":null}"#
    )
    #expect(
      serve(t, request(.get, "/api/v1/friends")).body
        == #"{"status":"NG","message":"authentication required"}"#)
  }

  @Test("timing, size and fault examples")
  func specials() throws {
    let byName = Dictionary(
      FixtureExamplesTests.set.stubs.map { ($0.name ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    #expect((byName["slow-timeline"]?.response.fixedDelayMilliseconds ?? 0) > 20_000)
    #expect((byName["large-catalog"]?.response.body.count ?? 0) > 300_000)
    #expect(byName["connection-reset"]?.response.fault == .connectionResetByPeer)
    #expect(byName["friend-suggestions-rate-limited"]?.response.headers.first("Retry-After") == "30")
    #expect(byName["maintenance"]?.response.headers.first("Retry-After") == "120")
    let poll = try #require(byName["notifications-poll"])
    #expect((0..<4).map { poll.response(serveCount: $0).status } == [200, 200, 503, 200])
    let catalog = try JSONValue.parse(bytes: byName["large-catalog"]?.response.body ?? [])
    #expect(catalog["result"]?["count"] == .number(JSONNumber(4000)))
  }
}

/// Mapping files written in WireMock's documented format; each must load unchanged and behave as
/// WireMock's documentation says.
@Suite("WireMock-format mapping files")
struct FixtureWireMockCompatTests {
  static let files: [String: String] = [
    // "Stubbing" page: the basic example, a single stub per file.
    "mappings/basic.json": #"""
    {
      "request": {"method": "GET", "url": "/some/thing"},
      "response": {"status": 200, "body": "Hello world!", "headers": {"Content-Type": "text/plain"}}
    }
    """#,
    // "Stubbing" page: priority, a catch-all at low priority and a specific resource at high priority.
    "mappings/priority.json": #"""
    {
      "mappings": [
        {"priority": 1, "request": {"method": "GET", "url": "/api/specific-resource"}, "response": {"status": 200}},
        {"priority": 5, "request": {"method": "GET", "urlPattern": "/api/.*"},
         "response": {"status": 401, "body": "Not allowed"}}
      ]
    }
    """#,
    // "Stateful behaviour" page: the to-do list scenario.
    "mappings/todo.json": #"""
    {
      "mappings": [
        {"scenarioName": "To do list", "requiredScenarioState": "Started",
         "request": {"method": "GET", "url": "/todo/items"},
         "response": {"status": 200, "body": "<items><item>Buy milk</item></items>"}},
        {"scenarioName": "To do list", "requiredScenarioState": "Started",
         "newScenarioState": "Cancel newspaper item added",
         "request": {"method": "POST", "url": "/todo/items",
                     "bodyPatterns": [{"contains": "Cancel newspaper subscription"}]},
         "response": {"status": 201}},
        {"scenarioName": "To do list", "requiredScenarioState": "Cancel newspaper item added",
         "request": {"method": "GET", "url": "/todo/items"},
         "response": {"status": 200,
                      "body": "<items><item>Buy milk</item><item>Cancel newspaper subscription</item></items>"}}
      ]
    }
    """#,
    // "Request matching" page: the everything example (without the XML and multipart parts).
    "mappings/everything.json": #"""
    {
      "request": {
        "urlPath": "/everything",
        "method": "ANY",
        "headers": {"Accept": {"contains": "xml"}},
        "queryParameters": {"search_term": {"equalTo": "WireMock"}},
        "cookies": {"session": {"matches": ".*12345.*"}},
        "basicAuthCredentials": {"username": "jeff@example.com", "password": "jeffteenjefftyjeff"},
        "bodyPatterns": [{"equalToJson": "{ \"total_results\": 4 }"}, {"matchesJsonPath": "$.total_results"}]
      },
      "response": {"status": 200}
    }
    """#,
    // "Request matching" page: URL templates and path parameters.
    "mappings/template.json": #"""
    {
      "request": {
        "urlPathTemplate": "/contacts/{contactId}/addresses/{addressId}",
        "method": "GET",
        "pathParameters": {
          "contactId": {"equalTo": "12345"},
          "addressId": {"or": [{"equalTo": "99876"}, {"equalTo": "55555"}]}
        }
      },
      "response": {"status": 200}
    }
    """#,
    // "Request matching" page: multi-valued query parameter, JSON body with ignore flags, absent header.
    "mappings/multi.json": #"""
    {
      "mappings": [
        {"request": {"method": "GET", "urlPath": "/things",
                     "queryParameters": {"id": {"hasExactly": [{"equalTo": "1"}, {"equalTo": "2"}, {"equalTo": "3"}]}}},
         "response": {"status": 200}},
        {"request": {"method": "POST", "urlPath": "/json",
                     "headers": {"X-Not-Here": {"absent": true}},
                     "bodyPatterns": [{"equalToJson": {"a": [1, 2], "b": 1.0}, "ignoreArrayOrder": true,
                                       "ignoreExtraElements": true}]},
         "response": {"status": 201, "jsonBody": {"ok": true}}}
      ]
    }
    """#,
    // "Simulating faults" page.
    "mappings/faults.json": #"""
    {
      "mappings": [
        {"request": {"method": "GET", "url": "/fault"}, "response": {"fault": "MALFORMED_RESPONSE_CHUNK"}},
        {"request": {"method": "GET", "url": "/delayed"}, "response": {"status": 200, "fixedDelayMilliseconds": 2000}},
        {"request": {"method": "GET", "url": "/random"},
         "response": {"status": 200, "delayDistribution": {"type": "lognormal", "median": 80, "sigma": 0.4}}},
        {"request": {"method": "GET", "url": "/dribble"},
         "response": {"status": 200, "body": "Hello world!",
                      "chunkedDribbleDelay": {"numberOfChunks": 5, "totalDuration": 1000}}}
      ]
    }
    """#,
  ]

  @Test("WireMock documentation examples load and behave as documented")
  func behave() throws {
    let dir = try TempFixtures(files: FixtureWireMockCompatTests.files)
    defer { dir.remove() }
    let set = FixtureLoader.load(directory: dir.root.path)
    #expect(set.problems.map(\.description) == [])
    let t = StubTable(set.stubs)

    let basic = serve(t, request(.get, "/some/thing"))
    #expect(basic.status == 200 && basic.body == "Hello world!")
    #expect(basic.stub?.response.headers.first("Content-Type") == "text/plain")
    #expect(serve(t, request(.get, "/some/thing/else")).status == 404)

    #expect(serve(t, request(.get, "/api/specific-resource")).status == 200)
    #expect(serve(t, request(.get, "/api/other")).status == 401)

    #expect(serve(t, request(.get, "/todo/items")).body == "<items><item>Buy milk</item></items>")
    let post = serve(t, request(.post, "/todo/items", body: "Cancel newspaper subscription"))
    #expect(post.status == 201 && post.stub?.newScenarioState == "Cancel newspaper item added")
    #expect(
      serve(t, request(.get, "/todo/items"), state: { _ in "Cancel newspaper item added" }).body.contains(
        "Cancel newspaper"))

    let everything: HTTPHeaders = [
      "Accept": "text/xml", "Cookie": "session=abc-12345-xyz",
      "Authorization": "Basic " + Base64.encode(Array("jeff@example.com:jeffteenjefftyjeff".utf8)),
    ]
    #expect(
      serve(
        t,
        request(
          .delete, "/everything?search_term=WireMock", headers: everything, body: #"{"total_results":4.0}"#)
      ).status == 200)
    #expect(
      serve(
        t,
        request(
          .delete, "/everything?search_term=wiremock", headers: everything, body: #"{"total_results":4}"#)
      ).status == 404)

    #expect(serve(t, request(.get, "/contacts/12345/addresses/55555")).status == 200)
    #expect(serve(t, request(.get, "/contacts/12345/addresses/1")).status == 404)

    #expect(serve(t, request(.get, "/things?id=3&id=1&id=2")).status == 200)
    #expect(serve(t, request(.get, "/things?id=1&id=2")).status == 404)
    let json = serve(t, request(.post, "/json", body: #"{"b":1,"a":[2,1],"c":true}"#))
    #expect(json.status == 201 && json.body == #"{"ok":true}"#)

    #expect(serve(t, request(.get, "/fault")).stub?.response.fault == .malformedResponseChunk)
    #expect(serve(t, request(.get, "/delayed")).stub?.response.fixedDelayMilliseconds == 2000)
    #expect(
      serve(t, request(.get, "/random")).stub?.response.delayDistribution
        == .lognormal(median: 80, sigma: 0.4, maxValue: nil))
    #expect(serve(t, request(.get, "/dribble")).stub?.response.chunkedDribbleDelay?.numberOfChunks == 5)
  }
}
