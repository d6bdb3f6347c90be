import ClientKit
import Foundation
import HTTPCore
import MockServer
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Answers `subject=SUBJECT path=PATH` (subject `-` without a client certificate).
private struct SubjectResponder: HTTPResponder {
  func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    let text = "subject=\(context.clientCertificateSubject ?? "-") path=\(request.head.rawPath)"
    return .respond(status: .ok, body: Array(text.utf8))
  }
}

private func monotonicNow() -> UInt64 {
  var ts = timespec()
  clock_gettime(CLOCK_MONOTONIC, &ts)
  return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// A non-blocking connection to 127.0.0.1:port (closed when the client goes).
private func connectNonBlocking(port: Int) throws -> RawClient {
  let client = try RawClient(port: port)
  _ = fcntl(client.fd, F_SETFL, fcntl(client.fd, F_GETFL) | O_NONBLOCK)
  return client
}

/// Sends `GET path` over TLS and returns the response text (until the server closes).
private func get(
  _ path: String, port: Int, host: String = "localhost", context: TLSClientContext
) throws -> (String, TLSClientStream) {
  let client = try connectNonBlocking(port: port)
  defer { withExtendedLifetime(client) {} }
  let stream = try TLSClientStream(fd: client.fd, host: host, context: context)
  defer { stream.close() }
  let deadline = monotonicNow() + 5_000_000_000
  try stream.handshake(until: deadline)
  try stream.writeAll(
    Array("GET \(path) HTTP/1.1\r\nHost: \(host)\r\nConnection: close\r\n\r\n".utf8), until: deadline)
  var response: [UInt8] = []
  var buffer = [UInt8](repeating: 0, count: 4096)
  while true {
    let n = try stream.read(into: &buffer, until: deadline)
    if n == 0 { break }
    response += buffer[0..<n]
  }
  return (String(decoding: response, as: UTF8.self), stream)
}

/// Runs `body` with a server whose HTTPS listener serves `served`.
@discardableResult
private func withHTTPS<T>(
  serving served: CertificateAndKey, clientCA: String? = nil, _ body: (Int) throws -> T
) throws -> T {
  var configuration = ServerConfiguration()
  configuration.port = 0
  configuration.shutdownGraceMilliseconds = 500
  let server = HTTPServer(configuration: configuration, responder: SubjectResponder())
  try server.start()
  defer { server.shutdown(graceful: false) }
  let context = try TLSServerContext(
    certificateChainPEM: served.certificatePEM, privateKeyPEM: served.privateKeyPEM,
    clientCertificateAuthorityPEM: clientCA)
  let port = try server.addHTTPSListener(port: 0, context: context)
  return try body(port)
}

@Suite("TLS: ClientKit trust configuration")
struct TLSTrustConfigurationTests {
  let root: CertificateAndKey
  let trust: TrustConfiguration

  init() throws {
    root = try CertificateFactory.makeSelfSigned()
    trust = .onlyCertificates(root.certificatePEM)
  }

  @Test func acceptsTheTrustedCertificateForEachLoopbackName() throws {
    for host in ["localhost", "127.0.0.1", "::1", "[::1]", "LOCALHOST"] {
      try trust.evaluate(chainPEM: root.certificatePEM, host: host)
    }
    #expect(throws: TLSTrustFailure.hostnameMismatch) {
      try trust.evaluate(chainPEM: root.certificatePEM, host: "example.com")
    }
    #expect(throws: TLSTrustFailure.hostnameMismatch) {
      try trust.evaluate(chainPEM: root.certificatePEM, host: "127.0.0.2")
    }
  }

  @Test func faultCertificatesFailWithTheirReason() throws {
    let expected: [(TLSCertificateFault, TLSTrustFailure)] = [
      (.expired, .expired), (.wrongHost, .hostnameMismatch), (.untrusted, .untrustedRoot),
    ]
    for (fault, failure) in expected {
      let served = try CertificateFactory.makeFaultCertificate(fault, trusted: root)
      #expect(throws: failure, "\(fault)") {
        try trust.evaluate(chainPEM: served.certificatePEM, host: "localhost")
      }
    }
  }

  @Test func validityIsCheckedAtTheGivenDate() throws {
    let past = Date().addingTimeInterval(-86_400)
    let future = Date().addingTimeInterval(400 * 86_400)
    #expect(throws: TLSTrustFailure.notYetValid) {
      try trust.evaluate(chainPEM: root.certificatePEM, host: "localhost", at: past)
    }
    #expect(throws: TLSTrustFailure.expired) {
      try trust.evaluate(chainPEM: root.certificatePEM, host: "localhost", at: future)
    }
  }

  @Test func systemRootsAloneDoNotTrustASelfSignedCertificate() {
    #expect(throws: TLSTrustFailure.untrustedRoot) {
      try TrustConfiguration.system.evaluate(chainPEM: root.certificatePEM, host: "localhost")
    }
  }

  @Test func publicKeyPinsMatchLeafOrIssuerAndNeverReplaceTrust() throws {
    let leafPin = try TrustConfiguration.publicKeyHash(certificatePEM: root.certificatePEM)
    #expect(leafPin == (try CertificateFactory.publicKeySHA256(certificatePEM: root.certificatePEM)))
    var pinned = trust
    pinned.pinnedPublicKeyHashes = [leafPin]
    try pinned.evaluate(chainPEM: root.certificatePEM, host: "localhost")

    pinned.pinnedPublicKeyHashes = [Data(repeating: 7, count: 32).base64EncodedString()]
    #expect(throws: TLSTrustFailure.pinMismatch) {
      try pinned.evaluate(chainPEM: root.certificatePEM, host: "localhost")
    }

    // A CA pin accepts any leaf that CA issued.
    let ca = try CertificateFactory.makeAuthority()
    let leaf = try CertificateFactory.issue(
      commonName: "localhost", hosts: ["localhost"], usage: .server, issuer: ca,
      notBefore: Date().addingTimeInterval(-60), notAfter: Date().addingTimeInterval(3600))
    var caPinned = TrustConfiguration.onlyCertificates(ca.certificatePEM)
    caPinned.pinnedPublicKeyHashes = [try TrustConfiguration.publicKeyHash(certificatePEM: ca.certificatePEM)]
    try caPinned.evaluate(chainPEM: leaf.certificatePEM, host: "localhost")

    // A matching pin on an untrusted chain is still refused.
    var untrusted = TrustConfiguration(usesSystemTrustStore: false, pinnedPublicKeyHashes: [leafPin])
    #expect(throws: TLSTrustFailure.untrustedRoot) {
      try untrusted.evaluate(chainPEM: root.certificatePEM, host: "localhost")
    }
    untrusted.trustedCertificatesPEM = ["garbage"]
    #expect(throws: TLSTrustFailure.self) {
      try untrusted.evaluate(chainPEM: root.certificatePEM, host: "localhost")
    }
  }

  @Test func pinMatchesOpenSSLCommandLine() throws {
    let file = NSTemporaryDirectory() + "pin-\(UUID().uuidString).pem"
    try root.certificatePEM.write(toFile: file, atomically: true, encoding: .utf8)
    defer { try? FileManager.default.removeItem(atPath: file) }
    let output = try runProcess(
      "/bin/sh",
      [
        "-c",
        "openssl x509 -in \"$0\" -pubkey -noout | openssl pkey -pubin -outform der"
          + " | openssl dgst -sha256 -binary | base64", file,
      ]
    ).stdout
    let expected = output.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(try TrustConfiguration.publicKeyHash(certificatePEM: root.certificatePEM) == expected)
  }

  @Test func malformedInputIsAnErrorNotACrash() {
    #expect(throws: TLSTrustFailure.self) { try trust.evaluate(chainDER: [[0x30, 0x82, 0xFF]], host: "x") }
    #expect(throws: TLSTrustFailure.self) { try trust.evaluate(chainDER: [], host: "x") }
    #expect(throws: TLSTrustFailure.self) { try trust.evaluate(chainPEM: "", host: "x") }
    #expect(throws: TLSTrustFailure.self) { try TrustConfiguration.publicKeyHash(certificatePEM: "nope") }
  }
}

@Suite("TLS: ClientKit TLSClientStream against the HTTPS listener")
struct TLSClientStreamTests {
  @Test func getOverTLSAndChainDER() throws {
    let root = try CertificateFactory.makeSelfSigned()
    let context = try TLSClientContext(trust: .onlyCertificates(root.certificatePEM))
    try withHTTPS(serving: root) { port in
      for host in ["localhost", "127.0.0.1"] {
        let (text, stream) = try get("/hello", port: port, host: host, context: context)
        #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(text.hasSuffix("subject=- path=/hello"))
        #expect(stream.protocolVersion == "" || stream.protocolVersion.hasPrefix("TLS"))
      }
      // The chain the server sent verifies with the DER API too.
      let client = try connectNonBlocking(port: port)
      defer { withExtendedLifetime(client) {} }
      let stream = try TLSClientStream(fd: client.fd, host: "localhost", context: context)
      defer { stream.close() }
      try stream.handshake(until: monotonicNow() + 5_000_000_000)
      #expect(stream.protocolVersion == "TLSv1.3")
      let chain = stream.peerCertificateChainDER
      #expect(chain.count == 1)
      try TrustConfiguration.onlyCertificates(root.certificatePEM).evaluate(
        chainDER: chain, host: "localhost")
    }
  }

  @Test func faultsAndPinsSurfaceAsTypedFailures() throws {
    let root = try CertificateFactory.makeSelfSigned()
    let context = try TLSClientContext(trust: .onlyCertificates(root.certificatePEM))
    let cases: [(TLSCertificateFault, TLSTrustFailure)] = [
      (.expired, .expired), (.wrongHost, .hostnameMismatch), (.untrusted, .untrustedRoot),
    ]
    for (fault, failure) in cases {
      let served = try CertificateFactory.makeFaultCertificate(fault, trusted: root)
      try withHTTPS(serving: served) { port in
        #expect(throws: TLSClientError.trust(failure), "\(fault)") {
          _ = try get("/x", port: port, context: context)
        }
      }
    }
    var pinned = TrustConfiguration.onlyCertificates(root.certificatePEM)
    pinned.pinnedPublicKeyHashes = [Data(repeating: 1, count: 32).base64EncodedString()]
    let pinnedContext = try TLSClientContext(trust: pinned)
    try withHTTPS(serving: root) { port in
      #expect(throws: TLSClientError.trust(.pinMismatch)) {
        _ = try get("/x", port: port, context: pinnedContext)
      }
    }
  }

  @Test func mutualTLSWithAndWithoutIdentity() throws {
    let ca = try CertificateFactory.makeAuthority()
    let now = Date()
    let server = try CertificateFactory.issue(
      commonName: "localhost", hosts: CertificateFactory.loopbackHosts, usage: .server, issuer: ca,
      notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(3600))
    let client = try CertificateFactory.issue(
      commonName: "app", hosts: [], usage: .client, issuer: ca, notBefore: now.addingTimeInterval(-60),
      notAfter: now.addingTimeInterval(3600))
    let trust = TrustConfiguration.onlyCertificates(ca.certificatePEM)
    try withHTTPS(serving: server, clientCA: ca.certificatePEM) { port in
      let anonymous = try TLSClientContext(trust: trust)
      do {
        _ = try get("/x", port: port, context: anonymous)
        Issue.record("a client without a certificate was served")
      } catch let error as TLSClientError {
        guard case .trust(.handshakeFailed(let reason)) = error else {
          Issue.record("unexpected \(error)")
          return
        }
        #expect(reason.contains("certificate required"), "\(reason)")
      }
      let identified = try TLSClientContext(
        trust: trust,
        identity: TLSClientIdentity(
          certificatePEM: client.certificatePEM, privateKeyPEM: client.privateKeyPEM))
      let (text, _) = try get("/me", port: port, context: identified)
      #expect(text.hasSuffix("subject=CN=app,O=mockserver path=/me"))
    }
  }
}
