import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import MockServer

#if canImport(Glibc)
  import Glibc
#endif

@Suite("Connections over loopback sockets (RFC 9112 §9)")
struct ConnectionTests {
  @Test func keepAliveByDefaultOnHTTP11() async throws {
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
      let (first, end1) = client.readResponse()
      #expect(first.hasPrefix("HTTP/1.1 200 OK\r\n"))
      #expect(first.hasSuffix("ok:/a"))
      #expect(end1 == .open)
      #expect(!first.contains("Connection: close"))
      client.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
      let (second, _) = client.readResponse()
      #expect(second.hasSuffix("ok:/b"))
    }
  }

  @Test func connectionCloseAndHTTP10() async throws {
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.send("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      let (text, end) = client.read(timeout: 3)
      #expect(String(decoding: text, as: UTF8.self).contains("Connection: close"))
      #expect(end == .eof)

      let old = try RawClient(port: server.port)
      old.send("GET /a HTTP/1.0\r\n\r\n")
      let (oldText, oldEnd) = old.read(timeout: 3)
      #expect(String(decoding: oldText, as: UTF8.self).hasPrefix("HTTP/1.1 200 OK"))
      #expect(oldEnd == .eof)

      let kept = try RawClient(port: server.port)
      kept.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
      let (keptText, keptEnd) = kept.readResponse()
      #expect(keptText.contains("Connection: keep-alive"))
      #expect(keptEnd == .open)
    }
  }

  @Test func pipelinedRequestsAnsweredInOrder() async throws {
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.send(
        "GET /delay/200 HTTP/1.1\r\nHost: x\r\n\r\nGET /fast HTTP/1.1\r\nHost: x\r\n\r\n"
          + "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
      let text = client.readResponses(3)
      let delayed = try #require(text.range(of: "delayed 200"))
      let fast = try #require(text.range(of: "ok:/fast"))
      let echo = try #require(text.range(of: "abc"))
      #expect(delayed.lowerBound < fast.lowerBound)
      #expect(fast.lowerBound < echo.lowerBound)
    }
  }

  @Test func chunkedRequestOneByteAtATime() async throws {
    // A chunked upload written one byte at a time: extension ignored, trailer consumed, body decoded, connection still usable.
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.sendByteByByte(
        "POST /echo HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n7\r\n{\"id\":1\r\n8;ext=1\r\n"
          + ",\"qty\":2\r\n1\r\n}\r\n0\r\nX-Trailer: t\r\n\r\n", pauseMicroseconds: 50)
      let (text, _) = client.readResponse()
      #expect(text.hasSuffix("{\"id\":1,\"qty\":2}"))
      #expect(text.contains("X-Trailers: 1"))
      client.send("GET /ping HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n")
      let (ping, _) = client.readResponse()
      #expect(ping.hasSuffix("ok:/ping"))
    }
  }

  @Test func expectContinueSendsGoAheadOnlyWhenContentIsWanted() async throws {
    // `100 Continue` only when the server wants the content; a request refused on its head alone is
    // answered before the upload, with `Connection: close`.
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.send(
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 14\r\n"
          + "Expect: 100-continue\r\n\r\n")
      // The body is sent only once the interim response is in: a server waiting for the body first would
      // leave this read empty at its timeout.
      let (interim, _) = client.read(timeout: 5) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
      #expect(String(decoding: interim, as: UTF8.self) == "HTTP/1.1 100 Continue\r\n\r\n")
      client.send("{\"foo\": \"bar\"}")
      let (final, _) = client.readResponse()
      #expect(final.hasPrefix("HTTP/1.1 200 OK"))
      #expect(final.hasSuffix("{\"foo\": \"bar\"}"))

      let rejected = try RawClient(port: server.port)
      rejected.send(
        "PUT /reject HTTP/1.1\r\nHost: x\r\nContent-Length: 10485760\r\nExpect: 100-continue\r\n\r\n")
      let (bytes, end) = rejected.read(timeout: 3)
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.hasPrefix("HTTP/1.1 413 Content Too Large\r\n"))
      #expect(!text.contains("100 Continue"))
      #expect(text.contains("Connection: close"))
      #expect(end == .eof)
    }
  }

  @Test func bodySentWithoutWaitingForContinue() async throws {
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.send(
        "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nExpect: 100-continue\r\n\r\nhi")
      let (text, _) = client.readResponse()
      #expect(!text.contains("100 Continue"))
      #expect(text.hasSuffix("hi"))
    }
  }

  @Test func headHasGetHeadersWithoutContent() async throws {
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.send("HEAD /big/1000 HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n")
      let (bytes, _) = client.read(timeout: 5) { String(decoding: $0, as: UTF8.self).contains("ok:/after") }
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.contains("Content-Length: 1000\r\n"))
      #expect(!text.contains("aaaa"))
      #expect(text.hasSuffix("ok:/after"))
    }
  }

  @Test(arguments: [204, 304, 205])
  func noContentStatusesHaveNoFraming(code: Int) async throws {
    // Statuses without content carry no framing: the responder asked for Transfer-Encoding and a body; neither may go out. 205 has no
    // content either, announced as Content-Length: 0 (RFC 9110 §15.3.6).
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.send("GET /status/\(code) HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n")
      let (bytes, _) = client.read(timeout: 5) { String(decoding: $0, as: UTF8.self).contains("ok:/next") }
      let text = String(decoding: bytes, as: UTF8.self)
      let first = text.components(separatedBy: "HTTP/1.1 200 OK")[0]
      #expect(first.hasPrefix("HTTP/1.1 \(code) "))
      #expect(!first.contains("Transfer-Encoding"))
      #expect(first.contains("Content-Length") == (code == 205))
      if code == 205 { #expect(first.contains("Content-Length: 0\r\n")) }
      #expect(first.hasSuffix("\r\n\r\n"))
    }
  }

  @Test func errorAnswersToHEADCarryNoContent() async throws {
    try await withServer { server in
      for request in [
        "HEAD /a HTTP/1.1\r\nHost: a b\r\n\r\n", "HEAD /x#f HTTP/1.1\r\nHost: x\r\n\r\n",
        "HEAD /a HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n",
      ] {
        let client = try RawClient(port: server.port)
        client.send(request)
        let (bytes, _) = client.read(timeout: 3)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 4") || text.hasPrefix("HTTP/1.1 5"))
        #expect(text.hasSuffix("\r\n\r\n"), "\(request)")
      }
    }
  }

  @Test func parseErrorsAnswerWithStatusThenClose() async throws {
    let cases: [(String, String)] = [
      ("GET / HTTP/1.1\r\n\r\n", "400"),
      ("GET / HTTP/2.0\r\nHost: x\r\n\r\n", "505"),
      ("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n\r\n", "501"),
      ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "400"),
      ("GET /" + String(repeating: "a", count: 9000) + " HTTP/1.1\r\nHost: x\r\n\r\n", "414"),
      ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 99999999999\r\n\r\n", "413"),
    ]
    try await withServer { server in
      for (request, status) in cases {
        let client = try RawClient(port: server.port)
        client.send(request)
        let (bytes, end) = client.read(timeout: 3)
        let text = String(decoding: bytes, as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 \(status) "), "\(request.prefix(40))")
        #expect(text.contains("Connection: close"))
        #expect(end == .eof)
      }
    }
  }

  @Test func oversizedHeaderSectionGets431ThenClose() async throws {
    // Real-world large headers (long tokens, big cookies) pass: 24 KiB of headers pass (in one write and in 512-byte pieces), 1 MiB gets 431.
    try await withServer { server in
      let big =
        "GET /me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer " + String(repeating: "a", count: 16384)
        + "\r\nCookie: s=" + String(repeating: "b", count: 8192) + "\r\n\r\n"
      let client = try RawClient(port: server.port)
      client.send(big)
      #expect(client.readResponse().0.hasSuffix("ok:/me"))
      let bytes = Array(big.utf8)
      for start in stride(from: 0, to: bytes.count, by: 512) {
        client.send(Array(bytes[start..<min(start + 512, bytes.count)]))
        usleep(5000)
      }
      #expect(client.readResponse().0.hasSuffix("ok:/me"))

      let huge = try RawClient(port: server.port)
      huge.send("GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + String(repeating: "c", count: 1 << 20) + "\r\n\r\n")
      let (reply, end) = huge.read(timeout: 5)
      #expect(
        String(decoding: reply, as: UTF8.self).hasPrefix("HTTP/1.1 431 Request Header Fields Too Large"))
      #expect(end == .eof || end == .reset)
    }
  }

  @Test func idleAndSlowHeaderClientsAreClosed() async throws {
    try await withServer(configure: {
      $0.idleTimeoutMilliseconds = 300
      $0.requestHeadTimeoutMilliseconds = 400
    }) { server in
      let idle = try RawClient(port: server.port)
      let (_, idleEnd) = idle.read(timeout: 3)
      #expect(idleEnd == .eof)

      let slow = try RawClient(port: server.port)
      let started = Date()
      slow.send("GET / HTTP/1.1\r\n")
      var end = RawClient.ReadEnd.open
      var received: [UInt8] = []
      // Dripping for up to 30 s: a server that restarts the 0.4 s head timeout on every line never closes.
      while Date().timeIntervalSince(started) < 30 {
        slow.send("X-Drip: 1\r\n")
        let (bytes, e) = slow.read(timeout: 0.1)
        received += bytes
        if e == .eof || e == .reset {
          end = e
          break
        }
      }
      #expect(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 408 "))
      // Closed by the 0.4 s head timeout while the client still dripped (an order check, not a time bound).
      #expect(end == .eof || end == .reset, "still open after 30 s of dripping")
    }
  }

  @Test func clientHangingUpMidResponseDoesNotHurtTheServer() async throws {
    try await withServer { server in
      for _ in 0..<5 {
        let client = try RawClient(port: server.port)
        client.send("GET /big/20000000 HTTP/1.1\r\nHost: x\r\n\r\n")
        _ = client.read(timeout: 0.2) { $0.count > 100_000 }
      }
      let fresh = try RawClient(port: server.port)
      fresh.send("GET /alive HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(fresh.readResponse().0.hasSuffix("ok:/alive"))
    }
  }

  @Test func delayedRequestIsCancelledWhenClientLeaves() async throws {
    try await withServer { server in
      do {
        let client = try RawClient(port: server.port)
        client.send("GET /delay/10000 HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(100_000)
      }
      // Up to 5 s, half the delay: a connection kept for the delayed response would still be open.
      var waited = 0
      while server.connectionCount > 0, waited < 100 {
        usleep(50_000)
        waited += 1
      }
      #expect(server.connectionCount == 0)
    }
  }

  @Test func maximumConnectionCount() async throws {
    try await withServer(configure: { $0.maxConnections = 2 }) { server in
      let a = try RawClient(port: server.port)
      let b = try RawClient(port: server.port)
      a.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
      b.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(a.readResponse().0.hasSuffix("ok:/a"))
      #expect(b.readResponse().0.hasSuffix("ok:/b"))
      let c = try RawClient(port: server.port)
      let (text, end) = c.read(timeout: 5)
      #expect(String(decoding: text, as: UTF8.self).hasPrefix("HTTP/1.1 503 "))
      #expect(end == .eof || end == .reset)
    }
  }

  @Test func manyConcurrentKeepAliveConnections() async throws {
    try await withServer { server in
      var clients: [RawClient] = []
      for _ in 0..<1000 { clients.append(try RawClient(port: server.port)) }
      for (i, client) in clients.enumerated() { client.send("GET /c\(i) HTTP/1.1\r\nHost: x\r\n\r\n") }
      var ok = 0
      for (i, client) in clients.enumerated() where client.readResponse().0.hasSuffix("ok:/c\(i)") {
        ok += 1
      }
      #expect(ok == 1000)
      #expect(server.connectionCount == 1000)
    }
  }

  @Test func halfOpenIdleConnectionsDoNotDelayANewClient() async throws {
    try await withServer { server in
      var idle: [RawClient] = []
      for i in 0..<200 {
        let c = try RawClient(port: server.port)
        if i % 2 == 0 { c.send("GET / HTTP/1.1\r\nHo") }  // half a request, then silence
        idle.append(c)
      }
      let client = try RawClient(port: server.port)
      client.send("GET /new HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(client.readResponse(timeout: 20).0.hasSuffix("ok:/new"))
      // A server stuck on the half requests would answer only once their 15 s head timeout closed them:
      // answered while they are still open is the order check.
      #expect(idle[0].read(timeout: 0.1).1 == .timeout, "the first half request is still waiting")
      #expect(idle[198].read(timeout: 0.1).1 == .timeout, "the last half request is still waiting")
      #expect(idle.count == 200)
    }
  }

  @Test func gracefulShutdownFinishesResponsesInFlight() async throws {
    var configuration = ServerConfiguration()
    configuration.port = 0
    configuration.shutdownGraceMilliseconds = 3000
    let server = HTTPServer(configuration: configuration, responder: PathResponder())
    try server.start()
    let client = try RawClient(port: server.port)
    client.send("GET /delay/300 HTTP/1.1\r\nHost: x\r\n\r\n")
    usleep(50_000)
    let stopper = Thread { server.shutdown(graceful: true) }
    stopper.start()
    let (bytes, end) = client.read(timeout: 3)
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.hasPrefix("HTTP/1.1 200 OK"))
    #expect(text.contains("Connection: close"))
    #expect(text.hasSuffix("delayed 300"))
    #expect(end == .eof)
    #expect(throws: RawClientError.self) { _ = try RawClient(port: server.port) }
  }

  @Test func resetStepSendsRST() async throws {
    try await withServer { server in
      let client = try RawClient(port: server.port)
      client.send("GET /reset HTTP/1.1\r\nHost: x\r\n\r\n")
      let (bytes, end) = client.read(timeout: 5)
      #expect(bytes.isEmpty)
      #expect(end == .reset)
    }
  }

  @Test func listensOnIPv6Loopback() async throws {
    try await withServer(configure: { $0.host = "::1" }) { server in
      #expect(server.baseURL.hasPrefix("http://[::1]:"))
      let client = try RawClient(port: server.port, host: "::1")
      client.send("GET /v6 HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(client.readResponse().0.hasSuffix("ok:/v6"))
    }
  }
}

@Suite("Malformed requests over real sockets (RFC 9112), whole and one byte at a time")
struct MalformedRequestSocketTests {
  static let cases: [(String, String, Int)] = [
    ("HTTP/2.0", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505),
    ("malformed version", "GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400),
    ("relative target", "GET a/b HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    ("missing Host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
    ("repeated Host", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("invalid Host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
    ("space before colon", "GET / HTTP/1.1\r\nHost: h\r\nX-A : 1\r\n\r\n", 400),
    ("obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n  continued\r\n\r\n", 400),
    ("NUL in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{0}b\r\n\r\n", 400),
    ("invalid Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n", 400),
    (
      "conflicting Content-Length",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400
    ),
    (
      "CL with TE", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
      400
    ),
    (
      "unknown transfer coding", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501
    ),
    ("bad chunk size", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
    ("fragment", "GET /a#f HTTP/1.1\r\nHost: h\r\n\r\n", 400),
  ]

  @Test(arguments: cases, [false, true])
  func rejected(testCase: (String, String, Int), byteByByte: Bool) async throws {
    try await withServer { server in
      let client = try RawClient(port: server.port)
      if byteByByte {
        client.sendByteByByte(testCase.1, pauseMicroseconds: 20)
      } else {
        client.send(testCase.1)
      }
      let (bytes, end) = client.read(timeout: 3)
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.hasPrefix("HTTP/1.1 \(testCase.2) "), "\(testCase.0)")
      #expect(text.contains("Connection: close\r\n"), "\(testCase.0)")
      #expect(end == .eof || end == .reset, "\(testCase.0)")
      // The server keeps serving.
      let next = try RawClient(port: server.port)
      next.send("GET /after HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(next.readResponse().0.hasSuffix("ok:/after"))
    }
  }
}
