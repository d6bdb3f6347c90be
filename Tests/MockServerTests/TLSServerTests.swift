import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import MockServer
@testable import MockServerCLI

#if canImport(Glibc)
  import Glibc
#endif

@Suite("TLS: HTTPS listener over loopback sockets")
struct TLSServerTests {
  @Test func curlTrustsTheGeneratedCertificate() async throws {
    let tls = try LocalhostTLS()
    try await withHTTPSServer(tls: tls.context) { server, port in
      for host in ["localhost", "127.0.0.1"] {
        let result = try curl([
          "--cacert", tls.certificatePath, "-w", " %{http_code}", "https://\(host):\(port)/x",
        ])
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout == "tls=true subject=- path=/x 200")
      }
      let plain = try curl(["-w", " %{http_code}", "\(server.baseURL)/p"])
      #expect(plain.stdout == "tls=false subject=- path=/p 200")
    }
  }

  @Test func pythonSSLTalksToTheHTTPSPort() async throws {
    let tls = try LocalhostTLS()
    try await withHTTPSServer(tls: tls.context) { _, port in
      let script = """
        import ssl, http.client, sys
        ctx = ssl.create_default_context(cafile=sys.argv[1])
        for i in range(3):
            c = http.client.HTTPSConnection("localhost", int(sys.argv[2]), context=ctx, timeout=10)
            c.request("POST", "/py/%d" % i, body=b"x" * 100000)
            r = c.getresponse()
            print(r.status, r.read().decode(), c.sock.version())
            c.close()
        """
      let result = try runProcess("python3", ["-c", script, tls.certificatePath, String(port)])
      #expect(result.status == 0, "\(result.stderr)")
      let lines = result.stdout.split(separator: "\n")
      #expect(lines.count == 3)
      #expect(lines.first == "200 tls=true subject=- path=/py/0 TLSv1.3")
    }
  }

  @Test func largeResponseAndKeepAliveOverTLS() async throws {
    let tls = try LocalhostTLS()
    try await withHTTPSServer(tls: tls.context) { _, port in
      let url = "https://localhost:\(port)/big/3000000"
      let result = try curl([
        "--cacert", tls.certificatePath, "-o", "/dev/null", "-o", "/dev/null", "-w",
        "%{size_download} %{num_connects}\n", url, url,
      ])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout == "3000000 1\n3000000 0\n")
    }
  }

  @Test func handshakeGarbageClosesOnlyThatConnection() async throws {
    let tls = try LocalhostTLS()
    try await withHTTPSServer(tls: tls.context) { server, port in
      // Plain HTTP to the TLS port, then random bytes after a valid-looking record header.
      let plaintext = try RawClient(port: port)
      plaintext.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
      let (_, end1) = plaintext.read(timeout: 5)
      #expect(end1 == .eof || end1 == .reset)

      let noise = try RawClient(port: port)
      noise.send([0x16, 0x03, 0x01, 0x00, 0x40] + (0..<64).map { UInt8(truncatingIfNeeded: $0 &* 37) })
      let (_, end2) = noise.read(timeout: 5)
      #expect(end2 == .eof || end2 == .reset)

      let good = try curl(["--cacert", tls.certificatePath, "https://localhost:\(port)/after"])
      #expect(good.stdout == "tls=true subject=- path=/after", "\(good.stderr)")
      let plain = try RawClient(port: server.port)
      plain.send("GET /plain HTTP/1.1\r\nHost: x\r\n\r\n")
      let (text, _) = plain.readResponse()
      #expect(text.hasSuffix("path=/plain"))
    }
  }

  @Test func stalledHandshakesDoNotBlockOthersAndTimeOut() async throws {
    let tls = try LocalhostTLS()
    func stall(_ port: Int) throws -> (silent: RawClient, half: RawClient) {
      let silent = try RawClient(port: port)
      let half = try RawClient(port: port)
      // A handshake record header announcing 512 bytes, then only part of a ClientHello.
      half.send(
        [0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xFC, 0x03, 0x03] + [UInt8](repeating: 7, count: 40))
      return (silent, half)
    }
    // With a minute's head timeout, a client is served while the stalled handshakes are still open (an
    // order check: a server blocked on them would serve it only after closing them).
    try await withHTTPSServer(
      tls: tls.context, configure: { $0.requestHeadTimeoutMilliseconds = 60_000 }
    ) { _, port in
      let stalled = try stall(port)
      let good = try curl(["--cacert", tls.certificatePath, "https://localhost:\(port)/meanwhile"])
      #expect(good.stdout == "tls=true subject=- path=/meanwhile", "\(good.stderr)")
      #expect(stalled.silent.read(timeout: 0.2).1 == .timeout, "the silent handshake is still open")
      #expect(stalled.half.read(timeout: 0.2).1 == .timeout, "the partial handshake is still open")
    }
    // With a 0.8 s head timeout, the stalled handshakes are closed.
    try await withHTTPSServer(tls: tls.context, configure: { $0.requestHeadTimeoutMilliseconds = 800 }) {
      server, port in
      let (silent, half) = try stall(port)
      let (_, silentEnd) = silent.read(timeout: 20)
      let (_, halfEnd) = half.read(timeout: 20)
      #expect(silentEnd == .eof || silentEnd == .reset)
      #expect(halfEnd == .eof || halfEnd == .reset)
      var waited = 0
      while server.connectionCount > 0, waited < 250 {
        usleep(20_000)
        waited += 1
      }
      #expect(server.connectionCount == 0)
    }
  }

  @Test func mutualTLSRequiresAClientCertificateFromTheCA() async throws {
    let directory = try TemporaryFolder()
    defer { directory.remove() }
    let ca = try CertificateFactory.makeAuthority(commonName: "test CA")
    let now = Date()
    let serverCert = try CertificateFactory.issue(
      commonName: "localhost", hosts: CertificateFactory.loopbackHosts, usage: .server, issuer: ca,
      notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(3600))
    let alice = try CertificateFactory.issue(
      commonName: "alice", hosts: [], usage: .client, issuer: ca, notBefore: now.addingTimeInterval(-60),
      notAfter: now.addingTimeInterval(3600))
    let stranger = try CertificateFactory.issue(
      commonName: "mallory", hosts: [], usage: .client, issuer: try CertificateFactory.makeAuthority(),
      notBefore: now.addingTimeInterval(-60), notAfter: now.addingTimeInterval(3600))
    let context = try TLSServerContext(
      certificateChainPEM: serverCert.certificatePEM, privateKeyPEM: serverCert.privateKeyPEM,
      clientCertificateAuthorityPEM: ca.certificatePEM)
    #expect(context.requiresClientCertificate)
    let caPath = try directory.write("ca.pem", ca.certificatePEM)
    let alicePath = try directory.write("alice.pem", alice.certificatePEM)
    let aliceKey = try directory.write("alice-key.pem", alice.privateKeyPEM)
    let strangerPath = try directory.write("mallory.pem", stranger.certificatePEM)
    let strangerKey = try directory.write("mallory-key.pem", stranger.privateKeyPEM)
    try await withHTTPSServer(tls: context) { _, port in
      let url = "https://localhost:\(port)/who"
      let anonymous = try curl(["--cacert", caPath, url])
      #expect(anonymous.status != 0)
      #expect(anonymous.stdout.isEmpty)
      let wrong = try curl(["--cacert", caPath, "--cert", strangerPath, "--key", strangerKey, url])
      #expect(wrong.status != 0)
      #expect(wrong.stdout.isEmpty)
      let good = try curl(["--cacert", caPath, "--cert", alicePath, "--key", aliceKey, url])
      #expect(good.status == 0, "\(good.stderr)")
      #expect(good.stdout == "tls=true subject=CN=alice,O=mockserver path=/who")
    }
  }

  @Test(arguments: [
    (TLSCertificateFault.expired, "certificate has expired"),
    (.wrongHost, "no alternative certificate subject name matches target host name"),
    (.untrusted, "unable to get local issuer certificate"),
  ])
  func certificateFaultsFailCurlWithTheMatchingError(fault: TLSCertificateFault, message: String)
    async throws
  {
    let tls = try LocalhostTLS()
    let served = try CertificateFactory.makeFaultCertificate(fault, trusted: tls.root)
    let context = try TLSServerContext(
      certificateChainPEM: served.certificatePEM, privateKeyPEM: served.privateKeyPEM)
    try await withHTTPSServer(tls: context) { _, port in
      let result = try curl(["--cacert", tls.certificatePath, "https://localhost:\(port)/x"])
      #expect(result.status == 60, "\(result.stderr)")
      #expect(result.stderr.contains(message), "\(result.stderr)")
      // The same server is fine for a client that does not verify: only the certificate is wrong.
      let insecure = try curl(["-k", "https://localhost:\(port)/x"])
      #expect(insecure.stdout == "tls=true subject=- path=/x")
    }
  }

  @Test func badPEMAndMismatchedKeysAreReportedNotCrashed() throws {
    let a = try CertificateFactory.makeSelfSigned()
    let b = try CertificateFactory.makeSelfSigned()
    #expect(throws: TLSError.self) {
      try TLSServerContext(certificateChainPEM: a.certificatePEM, privateKeyPEM: b.privateKeyPEM)
    }
    #expect(throws: TLSError.self) {
      try TLSServerContext(certificateChainPEM: "not a certificate", privateKeyPEM: a.privateKeyPEM)
    }
    #expect(throws: TLSError.self) {
      try TLSServerContext(
        certificateChainPEM: "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        privateKeyPEM: a.privateKeyPEM)
    }
    #expect(throws: TLSError.self) {
      try TLSServerContext(certificateChainPEM: a.certificatePEM, privateKeyPEM: "")
    }
    #expect(throws: TLSError.self) {
      try CertificateFactory.makeSelfSigned(hosts: ["a,b"])
    }
  }
}

@Suite("TLS: command line")
struct TLSCommandLineTests {
  @Test func parsesTLSOptions() throws {
    let options = try CommandLineOptions.parse([
      "--https-port", "0", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--tls-client-ca=ca.pem",
      "--tls-fault", "wrong-host",
    ])
    #expect(options.httpsPort == 0)
    #expect(options.tlsCertificateFile == "c.pem")
    #expect(options.tlsKeyFile == "k.pem")
    #expect(options.tlsClientCAFile == "ca.pem")
    #expect(options.tlsFault == "wrong-host")
    let cert = try CommandLineOptions.parse(["cert", "--out", "/tmp/x"])
    #expect(cert.command == .cert)
    #expect(cert.certOutputDirectory == "/tmp/x")
  }

  @Test func rejectsIncompleteTLSOptions() {
    for arguments in [
      ["--https-port", "0", "--tls-cert", "c.pem"], ["--tls-fault", "expired"],
      ["--https-port", "0", "--tls-fault", "revoked"], ["--https-port", "70000"], ["--out", "x"],
    ] {
      #expect(throws: CommandLineOptions.UsageError.self, "\(arguments)") {
        try CommandLineOptions.parse(arguments)
      }
    }
  }

  @Test func certCommandWritesAUsableSet() throws {
    let directory = try TemporaryFolder()
    defer { directory.remove() }
    let lines = try TLSSetup.writeCertificateSet(to: directory.path)
    #expect(lines.count == 6)
    let again = try TLSSetup.writeCertificateSet(to: directory.path)
    #expect(again.first?.hasPrefix("kept") == true)
    let caPath = (directory.path as NSString).appendingPathComponent("ca.pem")
    let serverPath = (directory.path as NSString).appendingPathComponent("server.pem")
    let verify = try runProcess("openssl", ["verify", "-CAfile", caPath, serverPath])
    #expect(verify.status == 0, "\(verify.stdout) \(verify.stderr)")
    let attributes = try FileManager.default.attributesOfItem(
      atPath: (directory.path as NSString).appendingPathComponent("server-key.pem"))
    #expect((attributes[.posixPermissions] as? Int) == 0o600)
  }

  @Test func generatedSetupWritesTheTrustedCertificate() throws {
    let directory = try TemporaryFolder()
    defer { directory.remove() }
    var options = try CommandLineOptions.parse(["--https-port", "0"])
    let prepared = try TLSSetup.prepare(options, generatedDirectory: directory.path)
    let text = try String(contentsOfFile: prepared.trustPath, encoding: .utf8)
    #expect(text.hasPrefix("-----BEGIN CERTIFICATE-----"))
    options.tlsFault = "expired"
    options.tlsCertificateFile = prepared.trustPath
    options.tlsKeyFile = prepared.trustPath
    #expect(throws: TLSError.self) { try TLSSetup.prepare(options, generatedDirectory: directory.path) }
  }

  /// The generated certificate goes to a new 0700 folder with a random name, created with `O_EXCL` and
  /// `O_NOFOLLOW`: a link planted at the name it used to have (`mockserver-PID-localhost.pem`, predictable
  /// by another local user) is not followed, and the file it points at is left as it was (it was
  /// overwritten).
  @Test func generatedCertificatePathIsPrivate() throws {
    let directory = try TemporaryFolder()
    defer { directory.remove() }
    let victim = try directory.write("victim.txt", "keep me")
    let planted = (directory.path as NSString).appendingPathComponent("mockserver-\(getpid())-localhost.pem")
    try FileManager.default.createSymbolicLink(atPath: planted, withDestinationPath: victim)
    let options = try CommandLineOptions.parse(["--https-port", "0"])
    let prepared = try TLSSetup.prepare(options, generatedDirectory: directory.path)
    #expect(try String(contentsOfFile: victim, encoding: .utf8) == "keep me")
    #expect(prepared.trustPath != planted)
    let folder = (prepared.trustPath as NSString).deletingLastPathComponent
    #expect(folder != directory.path)
    let attributes = try FileManager.default.attributesOfItem(atPath: folder)
    #expect((attributes[.posixPermissions] as? Int) == 0o700)
    #expect(
      try String(contentsOfFile: prepared.trustPath, encoding: .utf8).hasPrefix("-----BEGIN CERTIFICATE"))
    #expect(throws: TLSError.self) {
      try TLSSetup.write("x", to: planted, mode: 0o644, exclusive: true)
    }
  }
}
