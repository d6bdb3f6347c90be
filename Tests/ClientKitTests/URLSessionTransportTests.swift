import ClientKit
import Foundation
import HTTPCore
import Synchronization
import Testing

@Suite("URLSessionTransport", .serialized)
struct URLSessionTransportTests {
  func send(_ url: String, method: HTTPMethod = .get, timeout: Duration = .seconds(5), body: Data = Data())
    async throws(APIError) -> TransportResponse
  {
    let request = TransportRequest(
      method: method, url: URL(string: url)!, headers: ["X-Test": "1"], body: body, timeout: timeout)
    return try await URLSessionTransport().send(request, progress: nil)
  }

  @Test func getAndPostRoundTrip() async throws {
    let seen = Mutex<[String]>([])
    let server = try LoopbackServer { c in
      while let request = c.readRequest() {
        seen.withLock { $0.append(request.line + " " + String(decoding: request.body, as: UTF8.self)) }
        let status = request.line.contains("/missing") ? "404 Not Found" : "200 OK"
        c.write(
          "HTTP/1.1 \(status)\r\nContent-Type: application/json\r\nX-Request-Id: 42\r\nContent-Length: 2\r\n\r\n{}"
        )
      }
    }
    defer { server.stop() }
    let ok = try await send(server.url + "/a?x=1")
    #expect(ok.statusCode == 200)
    #expect(ok.body == Data("{}".utf8))
    #expect(ok.headers["x-request-id"] == "42")
    let created = try await send(server.url + "/b", method: .post, body: Data("hi".utf8))
    #expect(created.statusCode == 200)
    let missing = try await send(server.url + "/missing")
    #expect(missing.statusCode == 404)
    #expect(seen.withLock { $0 }.first == "GET /a?x=1 HTTP/1.1 ")
    #expect(seen.withLock { $0 }.contains("POST /b HTTP/1.1 hi"))
  }

  @Test func refusedIsCannotConnect() async {
    let port = LoopbackServer.closedPort()
    let error = await apiError { () async throws(APIError) in try await send("http://127.0.0.1:\(port)/") }
    #expect(error?.caseName == "cannotConnect")
  }

  @Test func ownDeadlineIsEnforcedBelowOneSecond() async throws {
    let hangUps = HangUps()
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      hangUps.wait(c, within: 20)
    }
    defer { server.stop() }
    let error = await apiError { () async throws(APIError) in
      try await send(server.url + "/slow", timeout: .milliseconds(300))
    }
    guard case .timedOut(let limit, _)? = error else {
      Issue.record("expected .timedOut, got \(String(describing: error))")
      return
    }
    #expect(limit == .milliseconds(300))
    // At the deadline, not when the server gives up (20 s).
    #expect(await hangUps.clientHungUpFirst())
  }

  @Test func unauthorizedWithBasicChallengeIsDeliveredNotHung() async throws {
    // Linux URLSession turns this 401 into an authentication challenge and, unanswered, never completes
    // the task (swift-corelibs-foundation#5456); the transport declines it and delivers the 401.
    let server = try LoopbackServer { c in
      while c.readRequest() != nil {
        c.write(
          "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic realm=\"users\"\r\n"
            + "Content-Type: application/json\r\nContent-Length: 14\r\n\r\n{\"code\":40100}")
      }
    }
    defer { server.stop() }
    // A hung task would end in .timedOut at the deadline, thrown here.
    let response = try await send(server.url + "/users/42", timeout: .seconds(10))
    #expect(response.statusCode == 401)
    #expect(response.body == Data(#"{"code":40100}"#.utf8))
    #expect(response.headers["www-authenticate"] == #"Basic realm="users""#)
  }

  @Test func randomBytesAreMalformedResponse() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write([UInt8](repeating: 0x7A, count: 1024))
    }
    defer { server.stop() }
    let error = await apiError { () async throws(APIError) in try await send(server.url + "/r") }
    #expect(error?.caseName == "malformedResponse")
  }

  @Test func truncatedBodyIsNeverASuccess() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"status\":\"OK\"")
    }
    defer { server.stop() }
    let error = await apiError { () async throws(APIError) in try await send(server.url + "/t") }
    #expect(error != nil)
    #expect(error?.isTransportFailure == true)
  }
}
