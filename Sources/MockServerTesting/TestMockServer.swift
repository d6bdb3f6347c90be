import Foundation
import HTTPCore
import Mappings
import MockJSON
import MockServer
import MockServerCLI

/// A mock server running inside the test process on a free loopback port: start it with a fixtures
/// folder and/or stubs written in Swift, point the client at ``baseURL``, verify what the client sent
/// through the journal, ``reset()`` between tests, ``stop()`` at the end.
///
/// Every instance is independent (its own port, stubs, journal and scenarios), so parallel tests can each
/// start their own. Works from Swift Testing and XCTest alike.
///
/// ```swift
/// let server = try TestMockServer.start()
/// defer { server.stop() }
/// try server.stub(.get("/api/v1/me").willReturn(status: 200, json: #"{"status":"OK","result":{"id":1}}"#))
/// // … exercise the client against server.baseURL …
/// try server.verify(count: 1, .get("/api/v1/me"))
/// ```
///
/// With `https:` it also listens for HTTPS on another free port (``httpsBaseURL``) with a certificate
/// generated for the run; trust ``certificatePEM`` in the client (`TrustConfiguration.onlyCertificates`).
public final class TestMockServer: Sendable {
  /// The mock application (stubs, journal, scenarios).
  public let service: MockService
  private let server: HTTPServer
  private let tls: TLSMaterial?

  /// What the HTTPS listener was started with.
  private struct TLSMaterial: Sendable {
    var port: Int
    var root: CertificateAndKey
    var clientAuthority: CertificateAndKey?
  }

  private init(service: MockService, server: HTTPServer, tls: TLSMaterial?) {
    self.service = service
    self.server = server
    self.tls = tls
  }

  /// Starts a server on `127.0.0.1` and a free port.
  /// - Parameters:
  ///   - fixtures: a fixtures folder (`mappings/`, `__files/`, `envelopes.json`) to load, or nil for none.
  ///   - configure: adjusts the service configuration (seed, journal size, global delay…).
  ///   - configureServer: adjusts the HTTP configuration (timeouts, limits).
  ///   - https: also listen for HTTPS with a generated certificate (see ``TestHTTPSOptions``), or nil
  ///     for plain HTTP only.
  /// - Throws: ``TestMockServerError/invalidFixtures(_:)`` with the lint report when the folder has
  ///   errors; `IOError` when a socket cannot be bound; `TLSError` when the certificate cannot be made.
  public static func start(
    fixtures: String? = nil, configure: (inout MockServiceConfiguration) -> Void = { _ in },
    configureServer: (inout ServerConfiguration) -> Void = { _ in }, https: TestHTTPSOptions? = nil
  ) throws -> TestMockServer {
    var fixtureSet = FixtureSet(stubs: [], envelopes: EnvelopeSet(), problems: [])
    if let fixtures {
      fixtureSet = FixtureLoader.load(directory: fixtures)
      if fixtureSet.hasErrors { throw TestMockServerError.invalidFixtures(fixtureSet.report()) }
    }
    var configuration = MockServiceConfiguration()
    configuration.fixturesDirectory = fixtures
    configuration.logLevel = .quiet
    // Every admin answer is checked against /__admin/openapi.json (a mismatch becomes a 500 naming it).
    configuration.adminResponseCheck = AdminResponseCheck.check
    configure(&configuration)
    let service = MockService(configuration: configuration, fixtures: fixtureSet)
    var serverConfiguration = ServerConfiguration()
    serverConfiguration.port = 0
    serverConfiguration.shutdownGraceMilliseconds = 1000
    serverConfiguration.maxHoldMilliseconds = configuration.maxHoldMilliseconds
    configureServer(&serverConfiguration)
    let server = HTTPServer(configuration: serverConfiguration, responder: service)
    try server.start()
    guard let https else { return TestMockServer(service: service, server: server, tls: nil) }
    do {
      let tls = try startHTTPS(on: server, options: https)
      return TestMockServer(service: service, server: server, tls: tls)
    } catch {
      server.shutdown(graceful: false)
      throw error
    }
  }

  private static func startHTTPS(on server: HTTPServer, options: TestHTTPSOptions) throws -> TLSMaterial {
    let root = try CertificateFactory.makeSelfSigned()
    let served = try options.certificateFault.map {
      try CertificateFactory.makeFaultCertificate($0, trusted: root)
    }
    let clientAuthority =
      options.requiresClientCertificate
      ? try CertificateFactory.makeAuthority(commonName: "mockserver test client CA") : nil
    let context = try TLSServerContext(
      certificateChainPEM: (served ?? root).certificatePEM, privateKeyPEM: (served ?? root).privateKeyPEM,
      clientCertificateAuthorityPEM: clientAuthority?.certificatePEM)
    let port = try server.addHTTPSListener(port: 0, context: context)
    return TLSMaterial(port: port, root: root, clientAuthority: clientAuthority)
  }

  /// The port the server listens on.
  public var port: Int { server.port }

  /// `http://127.0.0.1:PORT` (no trailing slash).
  public var baseURL: URL {
    URL(string: server.baseURL) ?? URL(fileURLWithPath: "/")
  }

  /// The HTTPS port, or nil when started without `https:`.
  public var httpsPort: Int? { tls?.port }

  /// `https://127.0.0.1:PORT` (no trailing slash), or nil when started without `https:`. The
  /// certificate also names `localhost` and `::1`.
  public var httpsBaseURL: URL? {
    guard let tls else { return nil }
    let host = server.boundAddress
    return URL(string: "https://\(host.contains(":") ? "[\(host)]" : host):\(tls.port)")
  }

  /// The certificate to trust for ``httpsBaseURL`` (PEM): the self-signed certificate generated for this
  /// run, which the listener serves, or which issued the fault certificate it serves. Its public key is
  /// the one to pin. Nil when started without `https:`.
  public var certificatePEM: String? { tls?.root.certificatePEM }

  /// A new client certificate and key (PEM) that the HTTPS listener accepts, for servers started with
  /// ``TestHTTPSOptions/requiresClientCertificate``; the journal records its subject as
  /// `CN=<commonName>,O=mockserver`.
  /// - Throws: ``TestMockServerError/invalidStub(_:)`` when the server does not require client
  ///   certificates; `TLSError` when the certificate cannot be made.
  public func makeClientIdentity(commonName: String = "client") throws -> CertificateAndKey {
    guard let authority = tls?.clientAuthority else {
      throw TestMockServerError.invalidStub("the server was not started with requiresClientCertificate")
    }
    let now = Date()
    return try CertificateFactory.issue(
      commonName: commonName, hosts: [], usage: .client, issuer: authority,
      notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(86_400))
  }

  /// Adds a stub (it outranks earlier stubs of equal priority) and returns its id.
  /// - Throws: ``TestMockServerError/invalidStub(_:)`` with the lint-format problems.
  @discardableResult
  public func stub(_ stub: StubBuilder) throws -> String {
    try self.stub(json: stub.json)
  }

  /// Adds a stub written as WireMock stub mapping JSON and returns its id.
  /// - Throws: ``TestMockServerError/invalidStub(_:)`` when the JSON is malformed or not a valid stub.
  @discardableResult
  public func stub(json: String) throws -> String {
    let value: JSONValue
    do {
      value = try JSONValue.parse(json)
    } catch {
      throw TestMockServerError.invalidStub("stub JSON: \(error)")
    }
    let context = StubParsingContext(
      envelopes: service.store.envelopes, makeID: { UUID().uuidString.lowercased() })
    let (parsed, problems) = StubParser.parse(value, file: "stub", context: context)
    guard let parsed, !problems.contains(where: \.isError) else {
      throw TestMockServerError.invalidStub(FixtureLoader.report(problems))
    }
    service.store.add(parsed)
    return parsed.id
  }

  /// Removes the stub `id`; returns false when there is none.
  @discardableResult
  public func removeStub(id: String) -> Bool { service.store.remove(id: id) }

  /// Requests received, oldest first (bounded by the journal size, default 10,000).
  public var requests: [JournalEntry] { service.journal.snapshot() }

  /// Requests no stub matched, oldest first.
  public var unmatchedRequests: [JournalEntry] { requests.filter { !$0.wasMatched } }

  /// Number of received requests that match `pattern`.
  /// - Throws: ``TestMockServerError/invalidStub(_:)`` when the pattern is not a valid request pattern.
  public func count(_ pattern: RequestPatternBuilder) throws -> Int {
    let matcher = try pattern.compiled()
    return requests.filter { entry in
      guard let view = try? RequestView(entry.request) else { return false }
      return matcher.matches(view).0
    }.count
  }

  /// Checks that exactly `count` received requests match `pattern`.
  /// - Throws: ``TestMockServerError/verificationFailed(_:)`` describing the requests received, when the
  ///   count differs.
  public func verify(count expected: Int, _ pattern: RequestPatternBuilder) throws {
    let actual = try count(pattern)
    guard actual == expected else {
      let seen = requests.map { "\($0.request.method.rawValue) \($0.request.head.target)" }
      throw TestMockServerError.verificationFailed(
        "expected \(expected) request(s) matching \(pattern.json), found \(actual); received: "
          + (seen.isEmpty ? "none" : seen.joined(separator: ", ")))
    }
  }

  /// Clears the journal, runtime stubs, scenario states and response sequences; file stubs stay.
  public func reset() {
    for stub in service.store.runtimeStubs { service.store.remove(id: stub.id) }
    service.resetRequestsAndScenarios()
  }

  /// Stops the server (responses in flight finish, up to 1 s), blocking the calling thread meanwhile.
  /// Safe to call twice. From async code prefer ``shutdown()``.
  public func stop() {
    server.shutdown(graceful: true)
  }

  /// Stops the server like ``stop()`` without blocking a Swift concurrency thread while responses in
  /// flight finish.
  public func shutdown() async {
    let server = self.server
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let thread = Thread {
        server.shutdown(graceful: true)
        continuation.resume()
      }
      thread.start()
    }
  }

  deinit { server.shutdown(graceful: false) }
}

/// How ``TestMockServer`` serves HTTPS.
public struct TestHTTPSOptions: Sendable, Equatable {
  /// Serve a certificate that fails validation this way (signed by ``TestMockServer/certificatePEM``
  /// for `expired` and `wrongHost`, by an unknown CA for `untrusted`), or nil for a valid one.
  public var certificateFault: TLSCertificateFault?
  /// Require a client certificate (mutual TLS) issued by ``TestMockServer/makeClientIdentity(commonName:)``.
  public var requiresClientCertificate: Bool

  /// Creates options.
  public init(certificateFault: TLSCertificateFault? = nil, requiresClientCertificate: Bool = false) {
    self.certificateFault = certificateFault
    self.requiresClientCertificate = requiresClientCertificate
  }

  /// A valid certificate for `localhost`, `127.0.0.1` and `::1`; no client certificate required.
  public static let standard = TestHTTPSOptions()
}

/// Why a ``TestMockServer`` call failed.
public enum TestMockServerError: Error, CustomStringConvertible, Equatable {
  /// The fixtures folder has errors; the lint report.
  case invalidFixtures(String)
  /// A stub or pattern is not valid; the problems.
  case invalidStub(String)
  /// `verify` found a different count; what was received.
  case verificationFailed(String)
  /// The `mockserver` binary could not be launched or did not print its `listening on` line.
  case launchFailed(String)

  /// A one-line, human-readable explanation.
  public var description: String {
    switch self {
    case .invalidFixtures(let s): return "invalid fixtures:\n\(s)"
    case .invalidStub(let s): return "invalid stub: \(s)"
    case .verificationFailed(let s): return "verification failed: \(s)"
    case .launchFailed(let s): return "mockserver did not start: \(s)"
    }
  }
}
