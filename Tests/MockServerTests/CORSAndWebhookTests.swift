import Foundation
import TestSupport
import Testing

@testable import MockJSON
@testable import MockServer

/// Issue 18: CORS for stubs (`--enable-stub-cors`, `"x-cors": true`) over sockets, and webhooks sent to a
/// second server whose journal is checked. The browser test is in CORSBrowserTests.
@Suite("CORS for stubs and webhooks")
struct CORSAndWebhookTests {
  @Test("x-cors: preflight answered, Access-Control-* on the response; other stubs and paths untouched")
  func perStubCORS() async throws {
    try await withMockService { service, port in
      _ = try http(
        port, "POST", "/__admin/mappings",
        body:
          #"{"x-cors":true,"request":{"method":"PUT","urlPath":"/items/1"},"response":{"status":200,"headers":{"X-Total":"3"},"body":"ok"}}"#
      )
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"request":{"method":"GET","url":"/plain"},"response":{"status":200}}"#)
      let preflight = try http(
        port, "OPTIONS", "/items/1",
        headers: [
          "Origin": "http://app.example:3000", "Access-Control-Request-Method": "PUT",
          "Access-Control-Request-Headers": "content-type, x-trace",
        ])
      #expect(preflight.status == 200)
      #expect(preflight.headers["access-control-allow-origin"] == "http://app.example:3000")
      #expect(preflight.headers["access-control-allow-methods"] == "PUT")
      #expect(preflight.headers["access-control-allow-headers"] == "content-type, x-trace")
      #expect(preflight.headers["access-control-allow-credentials"] == "true")
      #expect(preflight.headers["access-control-max-age"] == "1800")

      let actual = try http(
        port, "PUT", "/items/1", body: "{}", headers: ["Origin": "http://app.example:3000"])
      #expect(actual.status == 200)
      #expect(actual.body == "ok")
      #expect(actual.headers["access-control-allow-origin"] == "http://app.example:3000")
      #expect(actual.headers["access-control-expose-headers"]?.contains("X-Total") == true)
      // Without Origin, or for a stub without x-cors: no CORS headers.
      #expect(try http(port, "PUT", "/items/1", body: "{}").headers["access-control-allow-origin"] == nil)
      let plain = try http(port, "GET", "/plain", headers: ["Origin": "http://app.example:3000"])
      #expect(plain.headers["access-control-allow-origin"] == nil)
      // A preflight for a method or path no CORS stub serves is not answered as allowed.
      let wrong = try http(
        port, "OPTIONS", "/items/1",
        headers: ["Origin": "http://app.example:3000", "Access-Control-Request-Method": "DELETE"])
      #expect(wrong.status == 404)
      #expect(service.journal.unmatchedCount == 1)
    }
  }

  @Test("--enable-stub-cors: every stub; an unserved preflight says so in its near-miss log line")
  func globalCORSAndLogLine() async throws {
    try await withMockService(configure: { $0.stubCORS = true }) { _, port in
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"request":{"method":"GET","url":"/any"},"response":{"status":200}}"#)
      let preflight = try http(
        port, "OPTIONS", "/any", headers: ["Origin": "http://a.test", "Access-Control-Request-Method": "GET"])
      #expect(preflight.status == 200)
      let get = try http(port, "GET", "/any", headers: ["Origin": "http://a.test"])
      #expect(get.headers["access-control-allow-origin"] == "http://a.test")
    }
    // The near-miss note (the binary's log lines are checked in RobustnessTests' WireMockFlagTests).
    let note = MockResponder.unservedPreflightNote(
      HTTPRequest(
        head: HTTPRequestHead(
          method: .options, target: "/nothing",
          headers: ["Origin": "http://a.test", "Access-Control-Request-Method": "POST"])))
    #expect(note?.contains("CORS preflight") == true)
    #expect(note?.contains("POST /nothing") == true)
  }

  @Test("webhooks (serveEventListeners and postServeActions) reach a second server; failures are logged")
  func webhooksReachTheReceiver() async throws {
    try await withMockService { receiver, receiverPort in
      _ = try http(
        receiverPort, "POST", "/__admin/mappings",
        body: #"{"request":{"urlPath":"/hook"},"response":{"status":204}}"#)
      try await withMockService { sender, port in
        let listener = """
          {"id":"w","request":{"method":"POST","url":"/order"},"response":{"status":201,"body":"created"},
           "serveEventListeners":[{"name":"webhook","parameters":{"method":"POST",
             "url":"http://127.0.0.1:\(receiverPort)/hook?from={{originalRequest.url}}",
             "headers":{"Content-Type":"application/json","X-Order":"{{jsonPath originalRequest.body '$.id'}}"},
             "body":"{\\"order\\": {{originalRequest.body}}}"}}]}
          """
        #expect(try http(port, "POST", "/__admin/mappings", body: listener).status == 201)
        let old = """
          {"id":"old","request":{"method":"GET","url":"/old"},"response":{"status":200},
           "postServeActions":[{"name":"webhook","parameters":{"method":"PUT",
             "url":"http://127.0.0.1:\(receiverPort)/hook/old","body":"plain",
             "delay":{"type":"uniform","lower":10,"upper":50}}}]}
          """
        #expect(try http(port, "POST", "/__admin/mappings", body: old).status == 201)
        let failing = """
          {"id":"bad","request":{"method":"GET","url":"/bad"},"response":{"status":200},
           "serveEventListeners":[{"name":"webhook","parameters":{"url":"http://127.0.0.1:1/nowhere"}}]}
          """
        #expect(try http(port, "POST", "/__admin/mappings", body: failing).status == 201)

        let served = try http(port, "POST", "/order", body: #"{"id":42}"#)
        #expect(served.status == 201)
        #expect(served.body == "created")
        #expect(try http(port, "GET", "/old").status == 200)
        #expect(try http(port, "GET", "/bad").status == 200)
        #expect(
          eventually(timeout: 10) {
            receiver.journal.snapshot().filter { $0.request.head.rawPath.hasPrefix("/hook") }.count == 2
          })
        let entries = receiver.journal.snapshot()
        let hook = try #require(entries.first { $0.request.head.rawPath == "/hook" })
        #expect(hook.request.method.rawValue == "POST")
        #expect(hook.request.head.target == "/hook?from=/order")
        #expect(hook.request.headers.first("X-Order") == "42")
        #expect(String(decoding: hook.request.body, as: UTF8.self) == #"{"order": {"id":42}}"#)
        let oldHook = try #require(entries.first { $0.request.head.rawPath == "/hook/old" })
        #expect(oldHook.request.method.rawValue == "PUT")
        #expect(String(decoding: oldHook.request.body, as: UTF8.self) == "plain")
        #expect(eventually(timeout: 10) { sender.responder.webhooks.delivered == 2 })
        // Each outcome is in the sending side's journal, the failure included.
        #expect(
          eventually(timeout: 10) {
            sender.journal.snapshot().first { $0.request.head.rawPath == "/bad" }?.webhooks.first?
              .contains("connection refused") == true
          })
        let order = sender.journal.snapshot().first { $0.request.head.rawPath == "/order" }
        #expect(order?.webhooks == ["POST http://127.0.0.1:\(receiverPort)/hook?from=/order -> 204"])
        let listed = try http(port, "GET", "/__admin/requests?matchingStub=bad").body
        #expect(listed.contains("\"webhooks\""))
      }
    }
  }
}
