import Foundation
import TestSupport
import Testing

@testable import MockJSON
@testable import MockServer

/// Issue 18: the journal shows requests as WireMock 3.x does (checked against WireMock 2.35.1's jar, whose
/// behaviour here is the same): CORS preflights its CORS filter answers never reach the journal; requests
/// answered from `__files/` are unmatched (WireMock forwards them to its file servlet after no stub
/// matched); requests forwarded by `--proxy-all` or a recording session are matched by the catch-all proxy
/// stub WireMock adds. And webhooks see the served response as `originalResponse`. All over sockets.
@Suite("Journal parity with WireMock, webhooks' originalResponse")
struct JournalParityTests {
  /// The `requests` array of a journal listing.
  static func requests(_ port: Int, _ target: String) throws -> [JSONValue] {
    let reply = try http(port, "GET", target)
    return try #require(reply.json?["requests"]?.arrayValue, "\(target): \(reply.status) \(reply.body)")
  }

  @Test("answered CORS preflights are not journaled; the request that follows is")
  func preflightsAreNotJournaled() async throws {
    try await withMockService(configure: { $0.stubCORS = true }) { _, port in
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"id":"any","request":{"method":"GET","url":"/any"},"response":{"status":200}}"#)
      let preflight = try http(
        port, "OPTIONS", "/any", headers: ["Origin": "http://a.test", "Access-Control-Request-Method": "GET"])
      #expect(preflight.status == 200)
      #expect(try Self.requests(port, "/__admin/requests").isEmpty)
      #expect(try http(port, "GET", "/any", headers: ["Origin": "http://a.test"]).status == 200)
      let listed = try Self.requests(port, "/__admin/requests")
      #expect(listed.count == 1)
      #expect(listed.first?["request"]?["method"]?.stringValue == "GET")
      #expect(listed.first?["wasMatched"]?.boolValue == true)
      #expect(try Self.requests(port, "/__admin/requests/unmatched").isEmpty)
    }
  }

  @Test("a GET served from __files/ is journaled unmatched, with near misses, as WireMock lists it")
  func bodyFilesAreUnmatched() async throws {
    let folder = try temporaryFolder("journal-files", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try FileManager.default.createDirectory(atPath: folder + "/__files", withIntermediateDirectories: true)
    try Data(#"{"page":1}"#.utf8).write(to: URL(fileURLWithPath: folder + "/__files/page.json"))
    try await withMockService(configure: { $0.fixturesDirectory = folder }) { _, port in
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"id":"pages","request":{"method":"GET","url":"/page.jsn"},"response":{"status":200}}"#)
      let served = try http(port, "GET", "/page.json")
      #expect(served.status == 200)
      #expect(served.body == #"{"page":1}"#)
      let entry = try #require(try Self.requests(port, "/__admin/requests").first)
      #expect(entry["wasMatched"]?.boolValue == false)
      #expect(entry["stubMapping"] == nil)
      let unmatched = try Self.requests(port, "/__admin/requests/unmatched")
      #expect(unmatched.map { $0["url"]?.stringValue } == ["/page.json"])
      let misses = try http(port, "GET", "/__admin/requests/unmatched/near-misses")
      let nearMisses = try #require(misses.json?["nearMisses"]?.arrayValue, "\(misses.body)")
      #expect(nearMisses.contains { $0["stubMapping"]?["id"]?.stringValue == "pages" })
      #expect(
        try http(port, "GET", "/__admin/requests?matchingStub=pages").json?["requests"]?.arrayValue?.isEmpty
          == true)
    }
  }

  @Test("--proxy-all and recording sessions: matched by the catch-all proxy stub, never unmatched")
  func proxiedRequestsAreMatched() async throws {
    try await withMockService { _, upstreamPort in
      _ = try http(
        upstreamPort, "POST", "/__admin/mappings",
        body: #"{"request":{"method":"GET","urlPath":"/up"},"response":{"status":200,"body":"up"}}"#)
      let base = "http://127.0.0.1:\(upstreamPort)"
      try await withMockService(configure: { $0.proxy.proxyAllBaseURL = base }) { _, port in
        _ = try http(
          port, "POST", "/__admin/mappings",
          body: #"{"id":"local","request":{"method":"GET","url":"/local"},"response":{"status":204}}"#)
        let proxied = try http(port, "GET", "/up")
        #expect(proxied.status == 200)
        #expect(proxied.body == "up")
        #expect(try http(port, "GET", "/local").status == 204)
        let listed = try Self.requests(port, "/__admin/requests")
        let up = try #require(listed.first { $0["request"]?["url"]?.stringValue == "/up" })
        #expect(up["wasMatched"]?.boolValue == true)
        #expect(up["response"]?["status"]?.numberValue?.intValue == 200)
        let stub = try #require(up["stubMapping"])
        #expect(stub["response"]?["proxyBaseUrl"]?.stringValue == base)
        #expect(stub["request"]?["method"]?.stringValue == "ANY")
        let id = try #require(stub["id"]?.stringValue)
        let local = listed.first { $0["request"]?["url"]?.stringValue == "/local" }
        #expect(local?["stubMapping"]?["id"]?.stringValue == "local")
        #expect(try Self.requests(port, "/__admin/requests/unmatched").isEmpty)
        let nearMisses = try http(port, "GET", "/__admin/requests/unmatched/near-misses").json
        #expect(nearMisses?["nearMisses"]?.arrayValue?.isEmpty == true)
        let byStub = try Self.requests(port, "/__admin/requests?matchingStub=\(id)")
        #expect(byStub.map { $0["request"]?["url"]?.stringValue } == ["/up"])
      }
      // A recording session with a target: the same, under the session's own catch-all stub.
      try await withMockService { _, port in
        let start = try http(
          port, "POST", "/__admin/recordings/start", body: #"{"targetBaseUrl":"\#(base)"}"#,
          headers: ["Content-Type": "application/json"])
        #expect(start.status == 200)
        #expect(try http(port, "GET", "/up").body == "up")
        #expect(try http(port, "POST", "/__admin/recordings/stop").status == 200)
        let entry = try #require(try Self.requests(port, "/__admin/requests").first)
        #expect(entry["wasMatched"]?.boolValue == true)
        #expect(entry["stubMapping"]?["response"]?["proxyBaseUrl"]?.stringValue == base)
        #expect(try Self.requests(port, "/__admin/requests/unmatched").isEmpty)
      }
    }
  }

  @Test("webhook templates see the served response as originalResponse (status, headers, body)")
  func webhookOriginalResponse() async throws {
    try await withMockService { receiver, receiverPort in
      _ = try http(
        receiverPort, "POST", "/__admin/mappings",
        body: #"{"request":{"urlPath":"/hook"},"response":{"status":204}}"#)
      try await withMockService { _, port in
        let stub = """
          {"request":{"method":"POST","url":"/orders"},
           "response":{"status":201,"headers":{"X-Order-Id":"o-{{jsonPath request.body '$.id'}}",
             "Content-Type":"application/json"},"jsonBody":{"created":true},"transformers":["response-template"]},
           "serveEventListeners":[{"name":"webhook","parameters":{
             "url":"http://127.0.0.1:\(receiverPort)/hook?status={{originalResponse.status}}",
             "headers":{"X-Order":"{{originalResponse.headers.X-Order-Id}}","X-Method":"{{originalRequest.method}}"},
             "body":"{{originalResponse.body}} {{originalResponse.bodyAsBase64}}"}}]}
          """
        #expect(try http(port, "POST", "/__admin/mappings", body: stub).status == 201)
        let served = try http(port, "POST", "/orders", body: #"{"id":7}"#)
        #expect(served.status == 201)
        #expect(served.headers["x-order-id"] == "o-7")
        #expect(
          eventually(timeout: 10) {
            receiver.journal.snapshot().contains { $0.request.head.rawPath == "/hook" }
          })
        let hook = try #require(receiver.journal.snapshot().first { $0.request.head.rawPath == "/hook" })
        #expect(hook.request.head.target == "/hook?status=201")
        #expect(hook.request.headers.first("X-Order") == "o-7")
        #expect(hook.request.headers.first("X-Method") == "POST")
        let body = String(decoding: hook.request.body, as: UTF8.self)
        #expect(body == #"{"created":true} "# + Data(#"{"created":true}"#.utf8).base64EncodedString())
      }
    }
  }
}
