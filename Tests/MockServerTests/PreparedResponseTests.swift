import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import MockServer

@Suite("Prepared responses")
struct PreparedResponseTests {
  static let id = "5d2b3f0e-6c1a-4e8b-9f47-2a1c3e5b7d90"
  static let stubs = """
    [{"id": "5d2b3f0e-6c1a-4e8b-9f47-2a1c3e5b7d90", "request": {"method": "GET", "urlPath": "/friends"},
      "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "body": "{\\"status\\":\\"OK\\"}"}}]
    """

  func plan(_ service: MockService, headers: HTTPHeaders) -> ResponsePlan {
    service.respond(
      to: HTTPRequest(head: HTTPRequestHead(method: .get, target: "/friends", headers: headers)),
      context: RequestContext(
        client: .text("127.0.0.1:1"), localPort: 1, isTLS: false, clientCertificateSubject: nil,
        connectionID: 1,
        requestNumber: 1, receivedAt: 0))
  }

  @Test func usedWhenTheRequestCannotChangeTheAnswer() async throws {
    try await withMockServer(mappings: Self.stubs) { server, service in
      for _ in 0..<2 {
        let steps = plan(service, headers: ["Host": "x"]).steps
        guard case .prepared(let prepared) = steps.first else {
          Issue.record("expected a prepared response, got \(steps)")
          return
        }
        // The head is serialized once without its framing; the connection adds `Content-Length`.
        let head = String(decoding: prepared.headPrefix, as: UTF8.self)
        #expect(
          head
            == "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMatched-Stub-Id: \(Self.id)\r\nVary: Accept-Encoding\r\n"
        )
        #expect(prepared.announcedLength == 15)
        // The stub's own content: the head with its `Content-Length` line is kept whole as well.
        #expect(prepared.framedHead == prepared.headPrefix + Array("Content-Length: 15\r\n".utf8))
        #expect(prepared.answering(Array("{}".utf8)).framedHead == nil)
      }
      guard case .response = plan(service, headers: ["Host": "x", "Accept-Encoding": "gzip"]).steps.first
      else {
        Issue.record("Accept-Encoding must go through content negotiation")
        return
      }
      let client = try RawClient(port: server.port)
      client.send(
        "GET /friends HTTP/1.1\r\nHost: x\r\n\r\nHEAD /friends HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
      )
      let (bytes, _) = client.read(timeout: 3)
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(
        text.hasPrefix(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMatched-Stub-Id: \(Self.id)\r\nVary: Accept-Encoding\r\nContent-Length: 15\r\nDate: "
        ))
      #expect(text.components(separatedBy: "{\"status\":\"OK\"}").count == 2)
      #expect(text.hasSuffix("Connection: close\r\n\r\n"))
    }
  }
}

extension PreparedResponseTests {
  static let corsStub = """
    [{"id": "5d2b3f0e-6c1a-4e8b-9f47-2a1c3e5b7d90", "request": {"method": "GET", "urlPath": "/friends"},
      "response": {"status": 200, "body": "{}"}, "x-cors": true}]
    """

  /// A plain stub's answer is a plan stored with its prepared response after the first serve; what a
  /// request or the settings can change must still change it, and its journal entries are whole.
  @Test func aPlainStubsStoredPlanYieldsToTheRequestAndTheSettings() async throws {
    try await withMockServer(mappings: Self.stubs) { _, service in
      for _ in 0..<3 {
        guard case .prepared = plan(service, headers: ["Host": "x"]).steps.first else {
          Issue.record("expected the prepared response")
          return
        }
      }
      guard case .response = plan(service, headers: ["Host": "x", "Accept-Encoding": "gzip"]).steps.first
      else {
        Issue.record("Accept-Encoding must go through content negotiation")
        return
      }
      service.settings.globalDelayMilliseconds = 40
      guard case .pause(let ms) = plan(service, headers: ["Host": "x"]).steps.first, ms == 40 else {
        Issue.record("a global delay set after the answer was stored must apply")
        return
      }
      service.settings.globalDelayMilliseconds = 0
      service.settings.setDelayDistribution(.uniform(lower: 5, upper: 6), json: nil)
      guard case .pause = plan(service, headers: ["Host": "x"]).steps.first else {
        Issue.record("a global delay distribution set after the answer was stored must apply")
        return
      }
      service.settings.setDelayDistribution(nil, json: nil)
      guard case .prepared = plan(service, headers: ["Host": "x"]).steps.first else {
        Issue.record("without a global delay the stored answer serves again")
        return
      }
      let entries = service.journal.snapshot()
      #expect(entries.count == 7)
      for e in entries {
        #expect(e.stubID == Self.id)
        #expect(e.responseStatus == 200)
        // A delayed answer is final only when the connection has sent it (never here: no connection).
        #expect(e.served == ((e.addedDelayMilliseconds ?? 0) > 0 ? nil : true))
        #expect(e.fault == nil)
      }
      #expect(entries.filter { $0.served == nil }.count == 2)
      #expect(Set(entries.map(\.id)).count == 7)
    }
  }

  @Test func aCORSStubsStoredPlanStillAnswersAnOrigin() async throws {
    try await withMockServer(mappings: Self.corsStub) { _, service in
      for _ in 0..<2 { _ = plan(service, headers: ["Host": "x"]) }
      guard
        case .response(let head, _) = plan(service, headers: ["Host": "x", "Origin": "http://a.test"]).steps
          .first
      else {
        Issue.record("a request with Origin needs the CORS headers")
        return
      }
      #expect(head.headers.first("Access-Control-Allow-Origin") == "http://a.test")
    }
  }

  /// The stored plan draws from the seeded generator what the general way draws, so `--seed` gives the
  /// same journal ids whichever way a stub is answered.
  @Test func aStoredPlanKeepsSeededJournalIDs() async throws {
    func ids(_ mappings: String) async throws -> [String] {
      try await withMockServer(mappings: mappings, configure: { $0.seed = 11 }) { _, service in
        for _ in 0..<4 { _ = plan(service, headers: ["Host": "x"]) }
        return service.journal.snapshot().map(\.id)
      }
    }
    // `fixedDelayMilliseconds: 0` adds no delay but is not plain: every request takes the general way.
    let general = Self.stubs.replacingOccurrences(
      of: #""status": 200,"#, with: #""status": 200, "fixedDelayMilliseconds": 0,"#)
    #expect(general != Self.stubs)
    let plainIDs = try await ids(Self.stubs)
    #expect(plainIDs.count == 4)
    #expect(try await ids(general) == plainIDs)
  }
}

@Suite("Journal entry ids")
struct JournalIDTests {
  @Test func versionFourUUIDText() {
    let id = SplitMix64.uuidString(0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210)
    #expect(id == "01234567-89ab-4def-bedc-ba9876543210")
    var rng = SplitMix64(seed: 1)
    for _ in 0..<100 {
      let text = SplitMix64.uuidString(rng.next(), rng.next())
      #expect(UUID(uuidString: text) != nil)
      #expect(Array(text)[14] == "4")
    }
  }
}

@Suite("Server-wide requests")
struct ServerWideRequestTests {
  @Test func optionsAsteriskDescribesTheServer() async throws {
    try await withMockServer(mappings: "[]") { server, _ in
      let client = try RawClient(port: server.port)
      client.send("OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n")
      let (text, _) = client.readResponse()
      #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
      #expect(text.contains("Allow: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS\r\n"))
      #expect(text.contains("Content-Length: 0\r\n"))
    }
  }
}

@Suite("HEAD, Connection: close stubs, unserved responses")
struct StubSemanticsTests {
  static let stubs = """
    [
      {"request": {"method": "GET", "urlPath": "/doc"},
       "response": {"status": 200, "headers": {"X-Doc": "1"}, "body": "document"}},
      {"request": {"method": "ANY", "urlPathPattern": "/.*"}, "priority": 9, "response": {"status": 401}},
      {"request": {"method": "HEAD", "urlPath": "/special"}, "response": {"status": 204}},
      {"request": {"method": "GET", "urlPath": "/special"}, "response": {"status": 200, "body": "get"}},
      {"request": {"method": "GET", "urlPath": "/bye"},
       "response": {"status": 200, "headers": {"Connection": "close"}, "body": "bye"}},
      {"request": {"method": "GET", "urlPath": "/slow"}, "response": {"status": 200, "fixedDelayMilliseconds": 5000}}
    ]
    """

  @Test func headIsAnsweredByTheGETStub() async throws {
    try await withMockServer(mappings: Self.stubs) { server, _ in
      let client = try RawClient(port: server.port)
      client.send(
        "HEAD /doc HTTP/1.1\r\nHost: x\r\n\r\nHEAD /special HTTP/1.1\r\nHost: x\r\n\r\nGET /doc HTTP/1.1\r\nHost: x\r\n\r\n"
      )
      let (bytes, _) = client.read(timeout: 3) { String(decoding: $0, as: UTF8.self).hasSuffix("document") }
      let responses = String(decoding: bytes, as: UTF8.self).components(separatedBy: "HTTP/1.1 ").dropFirst()
      let parts = Array(responses)
      #expect(parts.count == 3)
      #expect(parts[0].hasPrefix("200 OK\r\n") && parts[0].contains("X-Doc: 1\r\n"))
      #expect(parts[0].contains("Content-Length: 8\r\n") && parts[0].hasSuffix("\r\n\r\n"))
      #expect(parts[1].hasPrefix("204 "))
      #expect(parts[2].hasSuffix("document"))
    }
  }

  @Test func stubConnectionCloseClosesTheConnection() async throws {
    try await withMockServer(mappings: Self.stubs) { server, _ in
      let client = try RawClient(port: server.port)
      client.send("GET /bye HTTP/1.1\r\nHost: x\r\n\r\n")
      let (bytes, end) = client.read(timeout: 3)
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.contains("Connection: close\r\n"))
      #expect(text.hasSuffix("bye"))
      #expect(end == .eof)
    }
  }

  @Test func aResponseNeverSentHasNoStatusInTheJournal() async throws {
    try await withMockServer(mappings: Self.stubs) { server, service in
      do {
        let client = try RawClient(port: server.port)
        client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(eventually { !service.journal.entries(limit: 1).isEmpty }, "the request never arrived")
      }  // closed before its answer
      #expect(eventually { service.journal.entries(limit: 1).first?.served != nil })
      let entry = service.journal.entries(limit: 1).first
      #expect(entry?.served == false)
      #expect(entry?.responseStatus == nil)
    }
  }
}

@Suite("Prepared responses: framing")
struct PreparedResponseFramingTests {
  @Test func aStatusWithoutContentAnnouncesNoLength() {
    let prepared = PreparedResponse(head: HTTPResponseHead(status: HTTPStatus(code: 204)), body: [])
    #expect(prepared.announcedLength == nil)
    #expect(prepared.framedHead == prepared.headPrefix)
    let empty = PreparedResponse(head: HTTPResponseHead(status: .ok), body: [])
    #expect(empty.framedHead == empty.headPrefix + Array("Content-Length: 0\r\n".utf8))
  }
}
