import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import TestSupport
import Testing

/// Client deadlines against server delays, silences and stalls (brief §6), on fresh and warm connections
/// alike, and delays applied per request on a reused connection; over both transports.
///
/// Tolerances hold on a busy 2-core machine: a deadline must fire after at least 90 % of it, and before
/// the server's delay or hold would have ended the exchange otherwise (a 1 s deadline against a 5 s
/// delay: after 0.9 s and before 5 s). Both transports enforce the deadline themselves (URLSessionTransport with its own timer, since
/// Linux URLSession rounds `timeoutInterval` down to whole seconds), so sub-second deadlines work too.
@Suite("Contract: timeouts and delays", .serialized)
struct TimeoutContractTests {
  static let slowStub = StubBuilder.get("/slow").willReturn(json: #"{"id":1}"#, delayMilliseconds: 5000)
  static let fastStub = StubBuilder.get("/fast").willReturn(json: #"{"id":2}"#)

  /// Asserts `error` is `.timedOut` with `limit`, after at least 90 % of `limit` and before `otherwise`
  /// seconds, when the exchange would have ended another way had the deadline not fired (by default 5 s:
  /// the slow stub's delay; the NO_RESPONSE and HEADERS_THEN_STALL holds last far longer).
  func expectTimedOut(
    _ error: APIError?, limit: Duration, elapsed: Double, before otherwise: Double = 5,
    sourceLocation: SourceLocation = #_sourceLocation
  ) {
    guard case .timedOut(let reported, let request)? = error else {
      Issue.record("expected .timedOut, got \(String(describing: error))", sourceLocation: sourceLocation)
      return
    }
    #expect(reported == limit, sourceLocation: sourceLocation)
    #expect(request.url.path.hasPrefix("/"), sourceLocation: sourceLocation)
    let lower = seconds(limit) * 0.9
    #expect(elapsed >= lower && elapsed < otherwise, "elapsed \(elapsed) s", sourceLocation: sourceLocation)
    #expect(error?.presentation == .toast, sourceLocation: sourceLocation)
  }

  @Test(
    "a 1 s deadline against a 5 s delay, fresh and warm connection",
    arguments: TransportKind.allCases)
  func deadlineFreshAndWarm(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(Self.slowStub)
    try server.stub(Self.fastStub)
    let client = makeClient(server.baseURL, kind.make(), timeout: .seconds(1))

    let (fresh, freshElapsed) = await timedError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/slow"))
    }
    expectTimedOut(fresh, limit: .seconds(1), elapsed: freshElapsed)

    #expect(try await client.send(Endpoint<Item>(.get, "/fast")) == Item(id: 2))
    let (warm, warmElapsed) = await timedError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/slow"))
    }
    expectTimedOut(warm, limit: .seconds(1), elapsed: warmElapsed)

    // The late answers to /slow are never read as the answer to the next request.
    #expect(try await client.send(Endpoint<Item>(.get, "/fast")) == Item(id: 2))
    // The server saw the client give up: the delayed responses were not served.
    #expect(
      await eventually(within: .seconds(10)) {
        server.requests.filter { $0.request.head.target == "/slow" }.allSatisfy { $0.served == false }
      })
  }

  @Test("a per-request timeout overrides the client's, below one second", arguments: TransportKind.allCases)
  func perRequestSubSecondTimeout(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(Self.slowStub)
    let client = makeClient(server.baseURL, kind.make(), timeout: .seconds(20))
    let (error, elapsed) = await timedError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/slow", timeout: .milliseconds(500)))
    }
    expectTimedOut(error, limit: .milliseconds(500), elapsed: elapsed)
  }

  @Test("NO_RESPONSE: nothing comes back, the deadline fires", arguments: TransportKind.allCases)
  func noResponseAtAll(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/silent").willFail(with: "NO_RESPONSE"))
    let client = makeClient(server.baseURL, kind.make(), timeout: .seconds(1))
    let (error, elapsed) = await timedError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/silent"))
    }
    expectTimedOut(error, limit: .seconds(1), elapsed: elapsed)
  }

  @Test("HEADERS_THEN_STALL: the deadline also covers reading the body", arguments: TransportKind.allCases)
  func headersThenStall(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(
      .get("/stall").willReturn(
        responseJSON: #"{"status":200,"body":"{\"id\":1}","fault":"HEADERS_THEN_STALL"}"#))
    let client = makeClient(server.baseURL, kind.make(), timeout: .seconds(1))
    let (error, elapsed) = await timedError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/stall"))
    }
    expectTimedOut(error, limit: .seconds(1), elapsed: elapsed)
  }

  @Test("a timed-out GET is retried with a new deadline each attempt", arguments: TransportKind.allCases)
  func timeoutRetriedForIdempotent(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    // A response the client gave up on does not advance a sequence (it was never served), so the slow
    // stub is swapped for a fast one once the first attempt has arrived.
    // The stub is swapped while the first attempt waits out its 2 s deadline, before the retry arrives.
    let slow = try server.stub(.get("/eventually").willReturn(json: #"{"id":1}"#, delayMilliseconds: 10_000))
    let client = makeClient(
      server.baseURL, kind.make(), retryPolicy: RetryPolicy(maxRetries: 1), timeout: .seconds(2),
      totalTimeout: .seconds(10))
    async let call = client.response(Endpoint<Item>(.get, "/eventually"))
    #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
    server.removeStub(id: slow)
    try server.stub(.get("/eventually").willReturn(json: #"{"id":2}"#))
    let response = try await call
    #expect(response.value == Item(id: 2))
    #expect(response.attempts == 2)
    #expect(seconds(response.duration) >= 1.8)
    try server.verify(count: 2, .get("/eventually"))
  }

  @Test(
    "a delay applies to every request on a reused connection, also after a reset",
    arguments: TransportKind.allCases)
  func delayPerRequestOnReusedConnection(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/warmup").willReturn(json: #"{"id":0}"#))
    try server.stub(.get("/slow").willReturn(json: #"{"id":1}"#, delayMilliseconds: 1000))
    let client = makeClient(server.baseURL, kind.make(), timeout: .seconds(5))

    func timed(_ path: String) async throws -> Double {
      let start = ContinuousClock.now
      _ = try await client.send(Endpoint<Item>(.get, path))
      return seconds(ContinuousClock.now - start)
    }
    // /warmup only opens the connection. Each /slow waits its 1 s; the client's 5 s deadline bounds them.
    _ = try await timed("/warmup")
    let first = try await timed("/slow")
    let second = try await timed("/slow")
    #expect(first >= 0.95, "first /slow took \(first) s")
    #expect(second >= 0.95, "second /slow took \(second) s")
    if kind == .socket {
      // All three went over one keep-alive connection (same client port).
      let peers = Set(server.requests.map(\.clientAddress))
      #expect(peers.count == 1, "client addresses: \(peers)")
    }

    // Reset the server, install the delay again: the connection opened before the reset is delayed too.
    server.reset()
    try server.stub(.get("/slow").willReturn(json: #"{"id":1}"#, delayMilliseconds: 1000))
    let afterReset = try await timed("/slow")
    #expect(afterReset >= 0.95, "/slow after reset took \(afterReset) s")
  }

  @Test("a global delay (server setting) applies per request too", arguments: [TransportKind.socket])
  func globalDelay(kind: TransportKind) async throws {
    let server = try TestMockServer.start(configure: { $0.globalDelayMilliseconds = 2000 })
    defer { server.stop() }
    try server.stub(Self.fastStub)
    let client = makeClient(server.baseURL, kind.make(), timeout: .milliseconds(400))
    let (error, elapsed) = await timedError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/fast"))
    }
    expectTimedOut(error, limit: .milliseconds(400), elapsed: elapsed, before: 2)
    let patient = makeClient(server.baseURL, kind.make(), timeout: .seconds(10))
    #expect(try await patient.send(Endpoint<Item>(.get, "/fast")) == Item(id: 2))
  }
}
