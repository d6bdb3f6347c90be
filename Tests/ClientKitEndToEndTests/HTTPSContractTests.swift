import ClientKit
import Foundation
import HTTPCore
import MockServer
import MockServerTesting
import TestSupport
import Testing

private struct Me: Codable, Sendable, Equatable {
  var id: Int
  var name: String
}

/// `GET /api/v1/me` answering a ``Me`` inside the `status`/`result` envelope.
private struct GetMe: Request {
  typealias Response = Me
  var path: String { "/api/v1/me" }
  var timeout: Duration?
  var envelope: (any ResponseEnvelope)? { StatusResultEnvelope() }
}

/// The two ways a ClientKit app reaches an HTTPS mock with a custom trust configuration.
enum HTTPSTransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case sockets
  case automatic

  var testDescription: String { rawValue }

  func make(trust: TrustConfiguration, identity: TLSClientIdentity? = nil) -> any Transport {
    switch self {
    case .sockets: return SocketTransport(trust: trust, clientIdentity: identity)
    case .automatic: return AutomaticTransport(trust: trust, clientIdentity: identity)
    }
  }
}

private func client(_ server: TestMockServer, _ transport: any Transport) throws -> APIClient {
  APIClient(baseURL: try #require(server.httpsBaseURL), retryPolicy: .never, transport: transport)
}

private func trust(_ server: TestMockServer) throws -> TrustConfiguration {
  .onlyCertificates(try #require(server.certificatePEM))
}

private let okBody = #"{"status":"OK","result":{"id":1,"name":"Ann"}}"#

@Suite("HTTPS contract: the main ClientKit cases over TLS against TestMockServer")
struct HTTPSContractTests {
  @Test(arguments: HTTPSTransportKind.allCases)
  func okEnvelopeIsDecodedOverTLS(kind: HTTPSTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody))
    let me = try await client(server, kind.make(trust: try trust(server))).send(GetMe())
    #expect(me == Me(id: 1, name: "Ann"))
    let entry = try #require(server.requests.first)
    #expect(entry.isTLS)
    #expect(entry.clientCertificateSubject == nil)
    #expect(entry.request.head.headers.first("Host") == "127.0.0.1:\(try #require(server.httpsPort))")
  }

  @Test(arguments: HTTPSTransportKind.allCases)
  func ngIsAnApplicationError(kind: HTTPSTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(
      .get("/api/v1/me").willReturn(
        status: 200, json: #"{"status":"NG","code":"E42","message":"no such user"}"#))
    let errorClient = try client(server, kind.make(trust: try trust(server)))
    let error = await apiError { () async throws(APIError) in
      try await errorClient.send(GetMe())
    }
    guard case .application(let app, let response)? = error else {
      Issue.record("expected .application, got \(String(describing: error))")
      return
    }
    #expect(app.message == "no such user")
    #expect(response.statusCode == 200)
  }

  @Test(arguments: HTTPSTransportKind.allCases)
  func unauthorizedAndServiceUnavailable(kind: HTTPSTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 401, json: #"{"status":"NG","message":"login"}"#))
    let api = try client(server, kind.make(trust: try trust(server)))
    let unauthorized = await apiError { () async throws(APIError) in try await api.send(GetMe()) }
    #expect(unauthorized?.isUnauthorized == true)
    #expect(unauthorized?.statusCode == 401)

    server.reset()
    try server.stub(.get("/api/v1/me").willReturn(status: 503, headers: [("Retry-After", "7")]))
    let unavailable = await apiError { () async throws(APIError) in try await api.send(GetMe()) }
    #expect(unavailable?.isServerError == true)
    #expect(unavailable?.statusCode == 503)
    #expect(unavailable?.retryAfter == .seconds(7))
  }

  @Test(arguments: HTTPSTransportKind.allCases)
  func resetFaultIsConnectionReset(kind: HTTPSTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willFail(with: "CONNECTION_RESET_BY_PEER"))
    let errorClient = try client(server, kind.make(trust: try trust(server)))
    let error = await apiError { () async throws(APIError) in
      try await errorClient.send(GetMe())
    }
    guard case .connectionReset? = error else {
      Issue.record("expected .connectionReset, got \(String(describing: error))")
      return
    }
  }

  @Test(arguments: HTTPSTransportKind.allCases)
  func timeoutAgainstADelayIsTimedOutAtTheLimit(kind: HTTPSTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody, delayMilliseconds: 60_000))
    let api = try client(server, kind.make(trust: try trust(server)))
    let start = ContinuousClock.now
    let error = await apiError { () async throws(APIError) in
      try await api.send(GetMe(timeout: .milliseconds(400)))
    }
    let elapsed = ContinuousClock.now - start
    guard case .timedOut(let limit, _)? = error else {
      Issue.record("expected .timedOut, got \(String(describing: error))")
      return
    }
    #expect(limit == .milliseconds(400))
    // Timed out, not answered: the response was a minute away. The upper bound is half of that, one only
    // a deadline that never fired misses (a loaded machine resumes the task late by seconds, not 30).
    #expect(elapsed >= .milliseconds(390) && elapsed < .seconds(30), "\(elapsed)")
  }

  @Test(arguments: HTTPSTransportKind.allCases)
  func cancellationStopsAWaitingTLSExchange(kind: HTTPSTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody, delayMilliseconds: 60_000))
    let api = try client(server, kind.make(trust: try trust(server)))
    let task = Task { () async -> APIError? in
      await apiError { () async throws(APIError) in try await api.send(GetMe()) }
    }
    // Cancelled once the server has the request (its answer then waits the minute).
    #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
    let start = ContinuousClock.now
    task.cancel()
    let error = await task.value
    guard case .cancelled? = error else {
      Issue.record("expected .cancelled, got \(String(describing: error))")
      return
    }
    // Stopped at once, not when the client's deadline or the minute's delay ends: half of it is a bound
    // only a cancellation that waits for the answer misses.
    #expect(ContinuousClock.now - start < .seconds(30))
  }

  @Test func keepAliveReusesOneTLSConnection() async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody))
    let transport = SocketTransport(trust: try trust(server))
    let api = try client(server, transport)
    for _ in 0..<4 { _ = try await api.send(GetMe()) }
    let addresses = server.requests.map(\.clientAddress)
    #expect(addresses.count == 4)
    #expect(Set(addresses).count == 1, "one TLS connection, one handshake: \(addresses)")
    let port = try #require(server.httpsPort)
    #expect(transport.idleConnectionCount(host: "127.0.0.1", port: port, scheme: "https") == 1)
    #expect(transport.idleConnectionCount(host: "127.0.0.1", port: port) == 0)
  }

  @Test func plainAndSecureListenersServeTheSameStubs() async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody))
    let transport = AutomaticTransport(trust: try trust(server))
    let secure = try await client(server, transport).send(GetMe())
    let plain = try await APIClient(baseURL: server.baseURL, retryPolicy: .never, transport: transport)
      .send(GetMe())
    #expect(secure == plain)
    #expect(server.requests.map(\.isTLS) == [true, false])
  }
}

@Suite("HTTPS contract: certificate failures, pins and mutual TLS")
struct HTTPSTrustContractTests {
  @Test(arguments: [
    (TLSCertificateFault.untrusted, TLSTrustFailure.untrustedRoot),
    (.expired, .expired),
    (.wrongHost, .hostnameMismatch),
  ])
  func faultCertificateIsATypedTLSFailure(fault: TLSCertificateFault, expected: TLSTrustFailure) async throws
  {
    let server = try TestMockServer.start(https: TestHTTPSOptions(certificateFault: fault))
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody))
    for kind in HTTPSTransportKind.allCases {
      let errorClient = try client(server, kind.make(trust: try trust(server)))
      let error = await apiError { () async throws(APIError) in
        try await errorClient.send(GetMe())
      }
      guard case .tlsFailure(let info, let failure)? = error else {
        Issue.record("\(kind): expected .tlsFailure, got \(String(describing: error))")
        continue
      }
      #expect(failure == expected, "\(kind)")
      #expect(info.url.path == "/api/v1/me")
      #expect(error?.trustFailure == expected)
      #expect(error?.description.contains(expected.description) == true)
    }
    #expect(server.requests.isEmpty, "nothing is sent before the certificate is accepted")
  }

  @Test(arguments: HTTPSTransportKind.allCases)
  func pinMatchIsServedAndPinMismatchIsRefused(kind: HTTPSTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody))
    var pinned = try trust(server)
    pinned.pinnedPublicKeyHashes = [
      try TrustConfiguration.publicKeyHash(certificatePEM: try #require(server.certificatePEM))
    ]
    #expect(try await client(server, kind.make(trust: pinned)).send(GetMe()) == Me(id: 1, name: "Ann"))

    pinned.pinnedPublicKeyHashes = [Data(repeating: 9, count: 32).base64EncodedString()]
    let errorClient = try client(server, kind.make(trust: pinned))
    let error = await apiError { () async throws(APIError) in
      try await errorClient.send(GetMe())
    }
    #expect(error?.trustFailure == .pinMismatch, "\(String(describing: error))")
    #expect(server.requests.count == 1)
  }

  @Test(arguments: HTTPSTransportKind.allCases)
  func mutualTLSWithAClientIdentity(kind: HTTPSTransportKind) async throws {
    let server = try TestMockServer.start(https: TestHTTPSOptions(requiresClientCertificate: true))
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody))
    let trust = try trust(server)

    let anonymousClient = try client(server, kind.make(trust: trust))

    let anonymous = await apiError { () async throws(APIError) in

      try await anonymousClient.send(GetMe())
    }
    guard case .tlsFailure(_, .handshakeFailed(let reason))? = anonymous else {
      Issue.record("expected .tlsFailure(.handshakeFailed), got \(String(describing: anonymous))")
      return
    }
    #expect(reason.contains("certificate required"), "\(reason)")

    let issued = try server.makeClientIdentity(commonName: "app")
    let identity = TLSClientIdentity(
      certificatePEM: issued.certificatePEM, privateKeyPEM: issued.privateKeyPEM)
    let me = try await client(server, kind.make(trust: trust, identity: identity)).send(GetMe())
    #expect(me == Me(id: 1, name: "Ann"))
    let entry = try #require(server.requests.last)
    #expect(entry.clientCertificateSubject == "CN=app,O=mockserver")
    #expect(entry.isTLS)
  }

  @Test func clientIdentityNeedsAServerThatAsksForIt() throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    #expect(throws: TestMockServerError.self) { try server.makeClientIdentity() }
    let plain = try TestMockServer.start()
    defer { plain.stop() }
    #expect(plain.httpsBaseURL == nil && plain.certificatePEM == nil && plain.httpsPort == nil)
  }
}

@Suite("HTTPS contract: URLSession on this platform")
struct URLSessionHTTPSContractTests {
  /// Measured with Swift 6.3 on Linux: corelibs URLSession never asks the delegate about server trust,
  /// verifies against the system roots only and reports libcurl's reason as NSURLErrorUnknown with text;
  /// the transport maps the text to the typed failure.
  @Test func defaultURLSessionRejectsTheMockCertificateWithATypedFailure() async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody))
    let errorClient = try client(server, AutomaticTransport())
    let error = await apiError { () async throws(APIError) in
      try await errorClient.send(GetMe())
    }
    #expect(error?.trustFailure == .untrustedRoot, "\(String(describing: error))")
    #expect(server.requests.isEmpty)
  }

  #if !canImport(Security)
    @Test func customTrustIsRefusedByURLSessionHereRatherThanIgnored() async throws {
      let server = try TestMockServer.start(https: .standard)
      defer { server.stop() }
      let transport = URLSessionTransport(trust: try trust(server))
      let errorClient = try client(server, transport)
      let error = await apiError { () async throws(APIError) in
        try await errorClient.send(GetMe())
      }
      guard case .invalidRequest(let reason)? = error else {
        Issue.record("expected .invalidRequest, got \(String(describing: error))")
        return
      }
      #expect(reason.contains("TrustConfiguration"))
    }
  #else
    @Test func customTrustIsAppliedByURLSession() async throws {
      let server = try TestMockServer.start(https: .standard)
      defer { server.stop() }
      try server.stub(.get("/api/v1/me").willReturn(status: 200, json: okBody))
      let transport = URLSessionTransport(trust: try trust(server))
      #expect(try await client(server, transport).send(GetMe()) == Me(id: 1, name: "Ann"))
    }
  #endif
}
