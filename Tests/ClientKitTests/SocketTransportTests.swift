import ClientKit
import Foundation
import HTTPCore
import Synchronization
import Testing

/// SocketTransport against a real loopback server: each network fault a typed error of its own, header
/// fields kept in order, case and duplicates, deadlines on fresh and warm connections, keep-alive and
/// re-send rules.
@Suite("SocketTransport", .serialized)
struct SocketTransportTests {
  func get(
    _ server: LoopbackServer, _ path: String = "/status", method: HTTPMethod = .get,
    timeout: Duration = .seconds(5),
    transport: SocketTransport = SocketTransport()
  ) async throws(APIError) -> TransportResponse {
    let request = TransportRequest(method: method, url: URL(string: server.url + path)!, timeout: timeout)
    return try await transport.send(request, progress: nil)
  }

  func failure(_ server: LoopbackServer, method: HTTPMethod = .get) async -> APIError? {
    await apiError { () async throws(APIError) in try await get(server, method: method) }
  }

  // MARK: Network faults, each a typed error of its own

  @Test func emptyReplyIsEmptyResponse() async throws {
    let server = try LoopbackServer { c in _ = c.readRequest() }
    defer { server.stop() }
    #expect(await failure(server)?.caseName == "emptyResponse")
  }

  @Test func resetIsConnectionReset() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.reset()
    }
    defer { server.stop() }
    #expect(await failure(server)?.caseName == "connectionReset")
  }

  @Test func truncatedBodyCarriesExpectedAndReceived() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"status\":\"OK\"")
    }
    defer { server.stop() }
    let error = await failure(server)
    guard case .truncatedBody(_, let status, let expected, let received)? = error else {
      Issue.record("expected .truncatedBody, got \(String(describing: error))")
      return
    }
    #expect(status == 200)
    #expect(expected == 100)
    #expect(received == 14)
  }

  @Test func halfHeadIsConnectionLost() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write("HTTP/1.1 200 OK\r\nContent-Ty")
    }
    defer { server.stop() }
    let error = await failure(server)
    guard case .connectionLost(_, let received)? = error else {
      Issue.record("expected .connectionLost, got \(String(describing: error))")
      return
    }
    #expect(received == 27)
  }

  @Test func garbageIsMalformedResponse() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write([0x00, 0x17] + Array("garbage\r\n\r\n".utf8))
    }
    defer { server.stop() }
    #expect(await failure(server)?.caseName == "malformedResponse")
  }

  @Test func garbageWithoutLineEndIsMalformedNotLost() async throws {
    // 1024 bytes that never form a head, then FIN (MockServer's RANDOM_DATA_THEN_CLOSE).
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write([UInt8](repeating: 0x7A, count: 1024))
    }
    defer { server.stop() }
    #expect(await failure(server)?.caseName == "malformedResponse")
  }

  @Test func garbageIsReportedAtOnceEvenWhenTheServerKeepsTheConnection() async throws {
    let hangUps = HangUps()
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write("SSH-2.0-OpenSSH_9.6")
      hangUps.wait(c, within: 20)
    }
    defer { server.stop() }
    let error = await apiError { () async throws(APIError) in
      try await get(server, timeout: .seconds(20))
    }
    #expect(error?.caseName == "malformedResponse")
    // Reported on arrival, not when the server closes or the deadline fires (both 20 s away).
    #expect(await hangUps.clientHungUpFirst())
  }

  @Test func concurrentSlowExchangesOverlap() async throws {
    // 40 exchanges each waiting 1 s for its answer: they must run side by side (a thread each), not a few
    // at a time behind Dispatch's slowly growing pool (8 at a time). The server counts the requests it
    // holds at once: more than 8 shows they overlap, whatever the machine's speed.
    let inFlight = Mutex((now: 0, most: 0))
    let server = try LoopbackServer { c in
      while c.readRequest() != nil {
        inFlight.withLock {
          $0.now += 1; $0.most = max($0.most, $0.now)
        }
        Thread.sleep(forTimeInterval: 1)
        inFlight.withLock { $0.now -= 1 }
        c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
      }
    }
    defer { server.stop() }
    let transport = SocketTransport()
    let statuses = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<40 {
        group.addTask {
          (try? await get(server, timeout: .seconds(20), transport: transport))?.statusCode ?? 0
        }
      }
      var all: [Int] = []
      for await status in group { all.append(status) }
      return all
    }
    #expect(statuses == Array(repeating: 200, count: 40))
    let most = inFlight.withLock { $0.most }
    #expect(most > 8, "at most \(most) exchanges were in flight at once")
  }

  @Test func resetMidBodyIsTruncated() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 50\r\n\r\n0123456789")
      Thread.sleep(forTimeInterval: 0.1)
      c.reset()
    }
    defer { server.stop() }
    let error = await failure(server)
    guard case .truncatedBody(_, _, let expected, let received)? = error else {
      Issue.record("expected .truncatedBody, got \(String(describing: error))")
      return
    }
    #expect(expected == 50)
    #expect(received == 10)
  }

  @Test func refusedIsCannotConnect() async {
    let port = LoopbackServer.closedPort()
    let request = TransportRequest(
      method: .get, url: URL(string: "http://127.0.0.1:\(port)/x")!, timeout: .seconds(5))
    let error = await apiError { () async throws(APIError) in
      try await SocketTransport().send(request, progress: nil)
    }
    #expect(error?.caseName == "cannotConnect")
  }

  @Test func faultsRepeatedlyNeverCrashAndStayDistinct() async throws {
    let server = try LoopbackServer { c in
      guard let request = c.readRequest() else { return }
      if request.line.contains("/empty") { return }
      if request.line.contains("/rst") { return c.reset() }
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"status\":\"OK\"")
    }
    defer { server.stop() }
    let transport = SocketTransport()
    for _ in 0..<20 {
      for (path, name) in [
        ("/empty", "emptyResponse"), ("/rst", "connectionReset"), ("/trunc", "truncatedBody"),
      ] {
        let error = await apiError { () async throws(APIError) in
          try await get(server, path, transport: transport)
        }
        #expect(error?.caseName == name, "\(path)")
      }
    }
  }

  // MARK: Deadlines

  /// Serves `/fast` at once; holds `/slow` for 20 s, recording whether the client gave up before.
  static func slowServer(hangUps: HangUps) throws -> LoopbackServer {
    try LoopbackServer { c in
      while let request = c.readRequest() {
        if request.line.contains("/slow") {
          hangUps.wait(c, within: 20)
          c.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nlate")
          return
        }
        c.write("HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nfast")
      }
    }
  }

  @Test(arguments: [false, true])
  func deadlineCoversTheWholeExchange(warm: Bool) async throws {
    let hangUps = HangUps()
    let server = try Self.slowServer(hangUps: hangUps)
    defer { server.stop() }
    let transport = SocketTransport()
    if warm {
      #expect(try await get(server, "/fast", transport: transport).body == Data("fast".utf8))
    }
    let start = ContinuousClock.now
    let error = await apiError { () async throws(APIError) in
      try await get(server, "/slow", timeout: .milliseconds(400), transport: transport)
    }
    let elapsed = ContinuousClock.now - start
    guard case .timedOut(let limit, _)? = error else {
      Issue.record("expected .timedOut, got \(String(describing: error))")
      return
    }
    #expect(limit == .milliseconds(400))
    #expect(elapsed >= .milliseconds(390))
    #expect(server.accepted.count == 1, "a warm connection is reused for /slow")
    // The connection was discarded: the next request cannot read the late answer.
    let next = try await get(server, "/fast", transport: transport)
    #expect(next.body == Data("fast".utf8))
    // The server sees the hang-up within its 20 s hold: the deadline did not wait it out.
    #expect(await hangUps.clientHungUpFirst(), "the deadline must not wait out the server's 20 s hold")
  }

  @Test func cancellationStopsAWaitingExchange() async throws {
    let hangUps = HangUps()
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      hangUps.wait(c, within: 20)
    }
    defer { server.stop() }
    let task = Task {
      await apiError { () async throws(APIError) in try await get(server, timeout: .seconds(20)) }
    }
    try await Task.sleep(for: .milliseconds(100))
    task.cancel()
    let error = await task.value
    #expect(error?.caseName == "cancelled")
    // Not when the server gives up or the deadline fires (both 20 s away).
    #expect(await hangUps.clientHungUpFirst())
  }

  // MARK: Header fields as sent, and framing

  @Test func headersKeepOrderCaseAndDuplicates() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write(
        "HTTP/1.1 200 OK\r\nx-trace: a\r\nX-Trace: b\r\nx-request-id: 42\r\ncontent-type: application/json\r\nContent-Length: 2\r\n\r\n{}"
      )
    }
    defer { server.stop() }
    let response = try await get(server, "/dup")
    #expect(response.headers["x-trace"] == "a, b")
    #expect(response.headers["X-REQUEST-ID"] == "42")
    #expect(response.headers.fields.map(\.name).prefix(3) == ["x-trace", "X-Trace", "x-request-id"])
  }

  @Test func chunkedInformationalHeadAndNoContentResponses() async throws {
    let server = try LoopbackServer { c in
      while let request = c.readRequest() {
        if request.line.hasPrefix("HEAD") {
          c.write("HTTP/1.1 200 OK\r\nContent-Length: 120\r\n\r\n")
        } else if request.line.contains("/chunked") {
          c.write(
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=1\r\n world\r\n0\r\nX-T: 1\r\n\r\n"
          )
        } else {
          c.write("HTTP/1.1 204 No Content\r\n\r\n")
        }
      }
    }
    defer { server.stop() }
    let transport = SocketTransport()
    let chunked = try await get(server, "/chunked", transport: transport)
    #expect(chunked.statusCode == 200)
    #expect(chunked.body == Data("hello world".utf8))
    let head = try await get(server, "/h", method: .head, transport: transport)
    #expect(head.statusCode == 200)
    #expect(head.body.isEmpty)
    let noContent = try await get(server, "/d", method: .delete, transport: transport)
    #expect(noContent.statusCode == 204)
    #expect(server.accepted.count == 1)
  }

  @Test func gzipContentIsDecoded() async throws {
    // gzip of "hello gzip" (fixed bytes produced by `printf 'hello gzip' | gzip -n`).
    let gz: [UInt8] = [
      0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9, 0xc9, 0x57, 0x48,
      0xaf, 0xca, 0x2c, 0x00, 0x00, 0x19, 0x6a, 0xd2, 0xdf, 0x0a, 0x00, 0x00, 0x00,
    ]
    let sawAcceptEncoding = Counter()
    let server = try LoopbackServer { c in
      guard let request = c.readRequest() else { return }
      if request.headers["accept-encoding"] == "gzip" { sawAcceptEncoding.increment() }
      c.write(
        Array("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: \(gz.count)\r\n\r\n".utf8) + gz)
    }
    defer { server.stop() }
    let response = try await get(server, "/gz")
    #expect(String(decoding: response.body, as: UTF8.self) == "hello gzip")
    #expect(sawAcceptEncoding.count == 1)
  }

  @Test func progressReportsBytesAndFraction() async throws {
    let size = 1 << 20
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write(
        Array("HTTP/1.1 200 OK\r\nContent-Length: \(size)\r\n\r\n".utf8) + [UInt8](repeating: 65, count: size)
      )
    }
    defer { server.stop() }
    let log = Mutex<[DownloadProgress]>([])
    let request = TransportRequest(method: .get, url: URL(string: server.url + "/big")!)
    let response = try await SocketTransport().send(request) { p in log.withLock { $0.append(p) } }
    #expect(response.body.count == size)
    let updates = log.withLock { $0 }
    #expect(updates.count > 1)
    #expect(updates.last?.receivedBytes == Int64(size))
    #expect(updates.last?.expectedBytes == Int64(size))
    #expect(updates.last?.fraction == 1)
    #expect(zip(updates, updates.dropFirst()).allSatisfy { $0.receivedBytes <= $1.receivedBytes })
  }

  // MARK: Keep-alive and re-sends

  @Test func keepAliveReusesOneConnection() async throws {
    let server = try LoopbackServer { c in
      while c.readRequest() != nil { c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok") }
    }
    defer { server.stop() }
    let transport = SocketTransport()
    for _ in 0..<3 { #expect(try await get(server, transport: transport).body == Data("ok".utf8)) }
    #expect(server.accepted.count == 1)
    #expect(transport.idleConnectionCount(host: "127.0.0.1", port: server.port) == 1)
  }

  @Test(arguments: [HTTPMethod.get, .post])
  func stalePooledConnectionIsDetectedBeforeWriting(method: HTTPMethod) async throws {
    let received = Counter()
    let closed = Counter()
    let server = try LoopbackServer { c in
      guard c.readRequest() != nil else { return }
      received.increment()
      // Keep-alive framing, then the server closes the idle connection.
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
      c.close()
      closed.increment()
    }
    defer { server.stop() }
    let transport = SocketTransport()
    _ = try await get(server, method: method, transport: transport)
    // The second request goes out once the server has closed the pooled connection.
    for _ in 0..<200 where closed.count == 0 { try await Task.sleep(for: .milliseconds(50)) }
    let second = try await get(server, method: method, transport: transport)
    #expect(second.body == Data("ok".utf8))
    #expect(received.count == 2, "each request reached the server exactly once")
    #expect(server.accepted.count == 2)
  }

  @Test func nonIdempotentRequestIsNeverResentAfterAFailure() async throws {
    let received = Counter()
    let server = try LoopbackServer { c in
      while c.readRequest() != nil {
        // The first exchange on each connection is answered; the second is swallowed (empty reply).
        if received.increment() % 2 == 0 { return }
        c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
      }
    }
    defer { server.stop() }
    let transport = SocketTransport()
    _ = try await get(server, "/a", method: .post, transport: transport)
    let error = await apiError { () async throws(APIError) in
      try await get(server, "/b", method: .post, transport: transport)
    }
    #expect(error?.caseName == "emptyResponse")
    #expect(received.count == 2, "the POST was not silently sent again")
  }

  @Test func idempotentRequestIsRetriedOnAFreshConnectionAfterAStaleReuse() async throws {
    let received = Counter()
    let server = try LoopbackServer { c in
      while c.readRequest() != nil {
        if received.increment() == 2 { return }  // the reused connection dies without answering
        c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
      }
    }
    defer { server.stop() }
    let transport = SocketTransport()
    _ = try await get(server, transport: transport)
    let response = try await get(server, transport: transport)
    #expect(response.body == Data("ok".utf8))
    #expect(received.count == 3)
    #expect(server.accepted.count == 2)
  }

  @Test func concurrentRequestsUseSeparateConnectionsAndAllSucceed() async throws {
    let server = try LoopbackServer { c in
      while let request = c.readRequest() {
        let body = String(request.line.split(separator: " ")[1])
        Thread.sleep(forTimeInterval: 0.02)
        c.write("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)")
      }
    }
    defer { server.stop() }
    let transport = SocketTransport()
    let bodies = await withTaskGroup(of: String.self) { group in
      for i in 0..<8 {
        group.addTask {
          let r = try? await get(server, "/n\(i)", transport: transport)
          return r.map { String(decoding: $0.body, as: UTF8.self) } ?? "failed"
        }
      }
      var all: [String] = []
      for await b in group { all.append(b) }
      return all
    }
    #expect(Set(bodies) == Set((0..<8).map { "/n\($0)" }))
    #expect(server.accepted.count <= 8)
  }

  @Test func automaticTransportRoutesByScheme() async throws {
    let server = try LoopbackServer { c in
      _ = c.readRequest()
      c.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
    }
    defer { server.stop() }
    let automatic = AutomaticTransport()
    let request = TransportRequest(method: .get, url: URL(string: server.url + "/")!)
    #expect(try await automatic.send(request, progress: nil).body == Data("ok".utf8))
    #expect(automatic.plain.idleConnectionCount(host: "127.0.0.1", port: server.port) <= 1)
    #if !canImport(Darwin)
      #expect(APIClient.platformDefaultTransport() is AutomaticTransport)
    #endif
  }

  @Test func otherSchemesAreRejectedWithAClearError() async {
    let request = TransportRequest(method: .get, url: URL(string: "ftp://example.com/")!)
    let error = await apiError { () async throws(APIError) in
      try await SocketTransport().send(request, progress: nil)
    }
    #expect(error?.caseName == "invalidRequest")
  }

  // MARK: TLS failures without a TLS server (the HTTPS contract suite covers real handshakes)

  @Test func httpsToAPlainHTTPServerIsAHandshakeFailure() async throws {
    let server = try LoopbackServer { c in
      c.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
      _ = c.waitForPeerClose(within: 5)
    }
    defer { server.stop() }
    let request = TransportRequest(
      method: .get, url: URL(string: "https://127.0.0.1:\(server.port)/")!, timeout: .seconds(5))
    let error = await apiError { () async throws(APIError) in
      try await SocketTransport().send(request, progress: nil)
    }
    guard case .tlsFailure(let info, .handshakeFailed(let reason))? = error else {
      Issue.record("expected .tlsFailure(.handshakeFailed), got \(String(describing: error))")
      return
    }
    #expect(info.url == request.url)
    #expect(!reason.isEmpty)
    #expect(error?.isTransportFailure == true)
  }

  @Test func aSilentHandshakeTimesOutAtTheDeadline() async throws {
    let hangUps = HangUps()
    let server = try LoopbackServer { c in hangUps.wait(c, within: 20) }
    defer { server.stop() }
    let request = TransportRequest(
      method: .get, url: URL(string: "https://127.0.0.1:\(server.port)/")!, timeout: .milliseconds(300))
    let start = ContinuousClock.now
    let error = await apiError { () async throws(APIError) in
      try await SocketTransport().send(request, progress: nil)
    }
    let elapsed = ContinuousClock.now - start
    #expect(error?.caseName == "timedOut")
    // At the 0.3 s deadline (never before it), long before the server gives up (20 s).
    #expect(elapsed >= .milliseconds(290), "\(elapsed)")
    #expect(await hangUps.clientHungUpFirst())
  }

  @Test func cancellationStopsAWaitingHandshake() async throws {
    let hangUps = HangUps()
    let server = try LoopbackServer { c in hangUps.wait(c, within: 20) }
    defer { server.stop() }
    let request = TransportRequest(
      method: .get, url: URL(string: "https://127.0.0.1:\(server.port)/")!, timeout: .seconds(30))
    let task = Task { () async -> APIError? in
      await apiError { () async throws(APIError) in try await SocketTransport().send(request, progress: nil) }
    }
    try await Task.sleep(for: .milliseconds(150))
    task.cancel()
    let error = await task.value
    #expect(error?.caseName == "cancelled")
    // Not when the server gives up (20 s) or the deadline fires (30 s).
    #expect(await hangUps.clientHungUpFirst())
  }

  @Test func blockedExchangesNeverDelayTheStartOfAnother() async throws {
    let hangUps = HangUps()
    let server = try LoopbackServer { c in hangUps.wait(c, within: 30) }
    defer { server.stop() }
    let transport = SocketTransport()
    let url = URL(string: "http://127.0.0.1:\(server.port)/")!
    let blockers = (0..<4).map { _ in
      Task {
        await apiError { () async throws(APIError) in
          try await transport.send(
            TransportRequest(method: .get, url: url, timeout: .seconds(20)), progress: nil)
        }
      }
    }
    try await Task.sleep(for: .milliseconds(200))
    let error = await apiError { () async throws(APIError) in
      try await transport.send(
        TransportRequest(method: .get, url: url, timeout: .milliseconds(200)), progress: nil)
    }
    #expect(error?.caseName == "timedOut")
    // A request queued behind the four would start only when one of them ends (their deadline is 20 s):
    // it would not have connected by its own deadline.
    #expect(server.accepted.count == 5, "the fifth exchange started while the four were blocked")
    for blocker in blockers { blocker.cancel() }
    for blocker in blockers { #expect(await blocker.value?.caseName == "cancelled") }
    // All five hung up before the server's 30 s waits ran out: every blocked exchange was running.
    #expect(await hangUps.clientHungUpFirst(count: 5), "every blocked exchange was running, none queued")
  }

  @Test func anUnreadableClientIdentityFailsEachHTTPSRequestNotTheInit() async throws {
    let transport = SocketTransport(
      clientIdentity: TLSClientIdentity(certificatePEM: "not a certificate", privateKeyPEM: "nor a key"))
    let request = TransportRequest(method: .get, url: URL(string: "https://127.0.0.1:1/")!)
    for _ in 0..<2 {
      let error = await apiError { () async throws(APIError) in
        try await transport.send(request, progress: nil)
      }
      guard case .tlsFailure(_, .invalidCertificate)? = error else {
        Issue.record("expected .tlsFailure(.invalidCertificate), got \(String(describing: error))")
        return
      }
    }
  }

  @Test func automaticTransportSendsHTTPSThroughSocketsOnlyWithCustomTLS() {
    #expect(!AutomaticTransport().sendsHTTPSThroughSockets)
    #expect(!AutomaticTransport(trust: .system).sendsHTTPSThroughSockets)
    #expect(
      AutomaticTransport(trust: TrustConfiguration(trustedCertificatesPEM: ["x"])).sendsHTTPSThroughSockets)
    #expect(
      AutomaticTransport(trust: TrustConfiguration(usesSystemTrustStore: false)).sendsHTTPSThroughSockets)
    #expect(
      AutomaticTransport(trust: TrustConfiguration(pinnedPublicKeyHashes: ["AAAA"])).sendsHTTPSThroughSockets)
    #expect(
      AutomaticTransport(
        trust: .system, clientIdentity: TLSClientIdentity(certificatePEM: "", privateKeyPEM: "")
      )
      .sendsHTTPSThroughSockets)
  }

  // MARK: End to end through APIClient

  @Test func clientOverSocketTransport() async throws {
    let server = try LoopbackServer { c in
      while let request = c.readRequest() {
        let ok = request.line.hasPrefix("GET /api/users/1?v=2 ")
        let body =
          ok ? #"{"status":"OK","result":{"id":1,"name":"Ann"}}"# : #"{"status":"NG","message":"bad"}"#
        c.write(
          "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
      }
    }
    defer { server.stop() }
    let client = APIClient(
      baseURL: URL(string: server.url + "/api/")!,
      defaultQueryItems: { [URLQueryItem(name: "v", value: "2")] },
      envelope: StatusResultEnvelope(), transport: SocketTransport())
    #expect(try await client.send(GetUser(id: 1)).name == "Ann")
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 2)) }
    #expect(error?.applicationError?.message == "bad")
  }
}
