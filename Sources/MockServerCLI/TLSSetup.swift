import Foundation
import MockServer

#if canImport(Glibc)
  import Glibc
#endif

/// Turns the TLS command-line options into a ``TLSServerContext`` and writes certificate files.
enum TLSSetup {
  /// The prepared HTTPS configuration.
  struct Prepared {
    /// The context every HTTPS connection uses.
    var context: TLSServerContext
    /// The certificate clients should trust (printed as `certificate: PATH`).
    var trustPath: String
    /// True when ``trustPath`` was generated at startup (removed again at shutdown).
    var isGenerated = false
  }

  /// Builds the context from `--tls-cert`/`--tls-key` (or a certificate generated now for localhost,
  /// 127.0.0.1 and ::1, whose key stays in memory and whose certificate is written to
  /// `generatedDirectory`), `--tls-client-ca` and `--tls-fault`.
  /// - Throws: ``TLSError`` for unreadable files, bad PEM, or a fault without a CA to sign it.
  static func prepare(
    _ options: CommandLineOptions, generatedDirectory: String = NSTemporaryDirectory()
  ) throws(TLSError) -> Prepared {
    let fault = options.tlsFault.flatMap(TLSCertificateFault.init(rawValue:))
    let served: CertificateAndKey
    let trustPath: String
    if let certFile = options.tlsCertificateFile, let keyFile = options.tlsKeyFile {
      let own = CertificateAndKey(
        certificatePEM: try TLSServerContext.readFile(certFile),
        privateKeyPEM: try TLSServerContext.readFile(keyFile))
      var issuer: CertificateAndKey?
      if let caFile = options.tlsCAFile, let caKeyFile = options.tlsCAKeyFile {
        issuer = CertificateAndKey(
          certificatePEM: try TLSServerContext.readFile(caFile),
          privateKeyPEM: try TLSServerContext.readFile(caKeyFile))
      }
      trustPath = options.tlsCAFile ?? certFile
      switch fault {
      case nil:
        served = own
      case .untrusted?:
        served = try CertificateFactory.makeFaultCertificate(.untrusted, trusted: own)
      case let fault?:
        guard let issuer else {
          throw TLSError(
            "--tls-fault \(fault.rawValue)",
            detail: "with --tls-cert it needs --tls-ca and --tls-ca-key (the CA clients trust)")
        }
        served = try CertificateFactory.makeFaultCertificate(fault, trusted: issuer)
      }
    } else {
      let root = try CertificateFactory.makeSelfSigned()
      // A private folder of its own (mkdtemp: a random name, mode 0700) and a file that must not exist
      // yet and is no symbolic link: `mockserver-PID-localhost.pem` in the shared temporary folder could
      // be planted by another local user as a link to a file of ours, which was then overwritten.
      let folder = try privateDirectory(in: generatedDirectory)
      let path = (folder as NSString).appendingPathComponent("localhost.pem")
      try write(root.certificatePEM, to: path, mode: 0o644, exclusive: true)
      trustPath = path
      if let fault {
        served = try CertificateFactory.makeFaultCertificate(fault, trusted: root)
      } else {
        served = root
      }
    }
    var clientCA: String?
    if let file = options.tlsClientCAFile { clientCA = try TLSServerContext.readFile(file) }
    let context = try TLSServerContext(
      certificateChainPEM: served.certificatePEM, privateKeyPEM: served.privateKeyPEM,
      clientCertificateAuthorityPEM: clientCA)
    return Prepared(
      context: context, trustPath: trustPath, isGenerated: options.tlsCertificateFile == nil)
  }

  /// `mockserver cert`: writes `ca.pem`, `ca-key.pem` (reused when both exist), `server.pem` (server
  /// certificate for localhost, 127.0.0.1, ::1 followed by the CA), `server-key.pem`, and `client.pem`,
  /// `client-key.pem` (a client certificate for mutual TLS) into `directory`, creating it.
  /// - Returns: the lines to print, one per file.
  /// - Throws: ``TLSError`` when a file cannot be read or written, or OpenSSL fails.
  static func writeCertificateSet(to directory: String) throws(TLSError) -> [String] {
    do {
      try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    } catch {
      throw TLSError("create \(directory)", detail: error.localizedDescription)
    }
    func path(_ name: String) -> String { (directory as NSString).appendingPathComponent(name) }
    var lines: [String] = []
    let ca: CertificateAndKey
    let manager = FileManager.default
    if manager.fileExists(atPath: path("ca.pem")), manager.fileExists(atPath: path("ca-key.pem")) {
      ca = CertificateAndKey(
        certificatePEM: try TLSServerContext.readFile(path("ca.pem")),
        privateKeyPEM: try TLSServerContext.readFile(path("ca-key.pem")))
      lines.append("kept \(path("ca.pem")) (the existing local CA)")
    } else {
      ca = try CertificateFactory.makeAuthority()
      try write(ca.certificatePEM, to: path("ca.pem"), mode: 0o644)
      try write(ca.privateKeyPEM, to: path("ca-key.pem"), mode: 0o600)
      lines.append("wrote \(path("ca.pem")) (trust this CA in clients)")
      lines.append("wrote \(path("ca-key.pem"))")
    }
    let now = Date()
    let server = try CertificateFactory.issue(
      commonName: "localhost", hosts: CertificateFactory.loopbackHosts, usage: .server, issuer: ca,
      notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(397 * CertificateFactory.day)
    )
    try write(server.certificatePEM, to: path("server.pem"), mode: 0o644)
    try write(server.privateKeyPEM, to: path("server-key.pem"), mode: 0o600)
    let client = try CertificateFactory.issue(
      commonName: "mockserver client", hosts: [], usage: .client, issuer: ca,
      notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(397 * CertificateFactory.day)
    )
    try write(client.certificatePEM, to: path("client.pem"), mode: 0o644)
    try write(client.privateKeyPEM, to: path("client-key.pem"), mode: 0o600)
    lines += ["server.pem", "server-key.pem", "client.pem", "client-key.pem"].map { "wrote \(path($0))" }
    return lines
  }

  /// Writes `text` to `path` with permissions `mode` (set before any byte is written).
  /// A new folder with a random name and mode 0700 in `parent` (`mkdtemp`).
  /// - Throws: ``TLSError`` naming the folder when it cannot be made.
  static func privateDirectory(in parent: String) throws(TLSError) -> String {
    var template = Array((parent as NSString).appendingPathComponent("mockserver-XXXXXX").utf8CString)
    let made = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.flatMap { mkdtemp($0) }
    }
    guard made != nil else {
      throw TLSError("create a folder in \(parent)", detail: String(cString: strerror(errno)))
    }
    return String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  /// Writes `text` to `path` with `mode`; with `exclusive`, the file must not exist yet and a symbolic
  /// link there is refused (`O_EXCL | O_NOFOLLOW`) instead of followed.
  static func write(_ text: String, to path: String, mode: mode_t, exclusive: Bool = false) throws(TLSError) {
    let flags = exclusive ? O_EXCL | O_NOFOLLOW : O_TRUNC
    let fd = open(path, O_WRONLY | O_CREAT | flags | O_CLOEXEC, mode)
    guard fd >= 0 else { throw TLSError("write \(path)", detail: String(cString: strerror(errno))) }
    defer { close(fd) }
    _ = fchmod(fd, mode)
    let bytes = Array(text.utf8)
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if n < 0, errno == EINTR { continue }
      guard n > 0 else { throw TLSError("write \(path)", detail: String(cString: strerror(errno))) }
      offset += n
    }
  }
}
