import COpenSSL
import Foundation
import NativeSupport

/// A certificate and its private key, both PEM text. The key is never written anywhere by this type.
public struct CertificateAndKey: Sendable, Equatable {
  /// One `CERTIFICATE` PEM block (the leaf), or several (leaf first, then intermediates).
  public var certificatePEM: String
  /// The private key as a PKCS #8 `PRIVATE KEY` PEM block.
  public var privateKeyPEM: String

  /// Creates a pair from PEM text.
  public init(certificatePEM: String, privateKeyPEM: String) {
    self.certificatePEM = certificatePEM
    self.privateKeyPEM = privateKeyPEM
  }
}

/// Certificates served to make clients fail certificate validation in a specific way.
public enum TLSCertificateFault: String, Sendable, CaseIterable {
  /// Issued by the trusted certificate but its validity ended (notAfter one day in the past).
  case expired
  /// Issued by the trusted certificate for `wrong.host.invalid` only (no localhost / loopback SAN).
  case wrongHost = "wrong-host"
  /// For the right hosts and dates, but issued by a freshly generated CA no client trusts.
  case untrusted
}

/// Makes keys and X.509 certificates with OpenSSL: EC P-256 keys, SHA-256 signatures, random 128-bit
/// serials, subjectAltName entries (DNS names and IP addresses).
package enum CertificateFactory {
  /// What a certificate is for.
  package enum Usage: Sendable {
    /// A TLS server (extendedKeyUsage serverAuth).
    case server
    /// A TLS client, for mutual TLS (extendedKeyUsage clientAuth).
    case client
    /// A certificate authority (basicConstraints CA:TRUE, keyCertSign).
    case authority
  }

  /// The hosts of the default certificate: `localhost`, `127.0.0.1`, `::1`.
  package static let loopbackHosts = ["localhost", "127.0.0.1", "::1"]

  /// One day, in seconds.
  package static let day: TimeInterval = 86_400

  /// A self-signed certificate for `hosts` that can also issue certificates (CA:TRUE), so a client that
  /// trusts it accepts both it and the fault certificates it signs. Valid from one hour ago for
  /// `validDays` days.
  /// - Parameters:
  ///   - commonName: subject CN (default `localhost`).
  ///   - hosts: DNS names and IP literals for subjectAltName.
  ///   - validDays: validity in days (default 397, the longest Apple platforms accept for servers).
  /// - Throws: ``TLSError`` when OpenSSL fails.
  package static func makeSelfSigned(
    commonName: String = "localhost", hosts: [String] = loopbackHosts, validDays: Int = 397
  ) throws(TLSError) -> CertificateAndKey {
    let now = Date()
    return try make(
      commonName: commonName, hosts: hosts, usage: .server, selfSignedCA: true,
      notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(Double(validDays) * day),
      issuer: nil)
  }

  /// A self-signed certificate authority (no subjectAltName), valid from one hour ago for `validDays`.
  /// - Throws: ``TLSError`` when OpenSSL fails.
  package static func makeAuthority(
    commonName: String = "mockserver local CA", validDays: Int = 3650
  ) throws(TLSError) -> CertificateAndKey {
    let now = Date()
    return try make(
      commonName: commonName, hosts: [], usage: .authority, selfSignedCA: false,
      notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(Double(validDays) * day),
      issuer: nil)
  }

  /// A certificate for `hosts` with a new key, signed by `issuer` (whose certificate must be a CA).
  /// - Parameters:
  ///   - commonName: subject CN.
  ///   - hosts: DNS names and IP literals for subjectAltName (may be empty for client certificates).
  ///   - usage: server, client or intermediate authority.
  ///   - issuer: the signing certificate (first PEM block) and its key.
  ///   - notBefore: start of validity.
  ///   - notAfter: end of validity.
  /// - Returns: the new certificate followed by the issuer's certificate (a chain to serve) and the key.
  /// - Throws: ``TLSError`` for unreadable issuer PEM or OpenSSL failures.
  package static func issue(
    commonName: String, hosts: [String], usage: Usage, issuer: CertificateAndKey, notBefore: Date,
    notAfter: Date
  ) throws(TLSError) -> CertificateAndKey {
    try make(
      commonName: commonName, hosts: hosts, usage: usage, selfSignedCA: false, notBefore: notBefore,
      notAfter: notAfter, issuer: issuer)
  }

  /// The certificate to serve for `fault`, signed by `trusted` (for `expired` and `wrongHost`) or by a
  /// new unknown CA (`untrusted`).
  /// - Returns: chain PEM (leaf first) and key PEM.
  /// - Throws: ``TLSError`` when OpenSSL fails.
  package static func makeFaultCertificate(
    _ fault: TLSCertificateFault, trusted: CertificateAndKey
  ) throws(TLSError) -> CertificateAndKey {
    let now = Date()
    switch fault {
    case .expired:
      return try issue(
        commonName: "localhost", hosts: loopbackHosts, usage: .server, issuer: trusted,
        notBefore: now.addingTimeInterval(-30 * day), notAfter: now.addingTimeInterval(-day))
    case .wrongHost:
      return try issue(
        commonName: "wrong.host.invalid", hosts: ["wrong.host.invalid"], usage: .server, issuer: trusted,
        notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(30 * day))
    case .untrusted:
      let unknown = try makeAuthority(commonName: "mockserver untrusted CA", validDays: 30)
      var leaf = try issue(
        commonName: "localhost", hosts: loopbackHosts, usage: .server, issuer: unknown,
        notBefore: now.addingTimeInterval(-3600), notAfter: now.addingTimeInterval(30 * day))
      // Serve the leaf alone: the client cannot find its issuer ("unable to get local issuer").
      if let first = try PEM.certificates(leaf.certificatePEM).first {
        leaf.certificatePEM = try PEM.encode(first.pointer)
      }
      return leaf
    }
  }

  /// Base64 of the SHA-256 of the first certificate's SubjectPublicKeyInfo (DER): the value package-key
  /// pinning compares (`curl --pinnedpubkey sha256//VALUE`).
  /// - Throws: ``TLSError`` when `certificatePEM` holds no readable certificate.
  package static func publicKeySHA256(certificatePEM: String) throws(TLSError) -> String {
    guard let first = try PEM.certificates(certificatePEM).first else {
      throw TLSError("read certificate", detail: "no CERTIFICATE block")
    }
    guard let key = X509_get0_pubkey(first.pointer) else { throw .openSSL("read package key") }
    var der: UnsafeMutablePointer<UInt8>?
    let length = i2d_PUBKEY(key, &der)
    guard length > 0, let der else { throw .openSSL("encode package key") }
    defer { cossl_free(der) }
    let digest = LibcryptoDigest.hash(.sha256, UnsafeRawBufferPointer(start: der, count: Int(length)))
    return Data(digest).base64EncodedString()
  }

  // MARK: Building

  private static func make(
    commonName: String, hosts: [String], usage: Usage, selfSignedCA: Bool, notBefore: Date,
    notAfter: Date, issuer: CertificateAndKey?
  ) throws(TLSError) -> CertificateAndKey {
    let key = try PrivateKey.generate()
    guard let cert = X509_new() else { throw .openSSL("X509_new") }
    let owner = X509Certificate(owning: cert)
    defer { withExtendedLifetime(owner) {} }
    var issuerCertificate: X509Certificate?
    var issuerKey: PrivateKey?
    var issuerChain: [X509Certificate] = []
    if let issuer {
      issuerChain = try PEM.certificates(issuer.certificatePEM)
      guard let first = issuerChain.first else {
        throw TLSError("read issuer certificate", detail: "no CERTIFICATE block")
      }
      issuerCertificate = first
      issuerKey = try PEM.privateKey(issuer.privateKeyPEM)
    }
    guard X509_set_version(cert, 2) == 1 else { throw .openSSL("X509_set_version") }
    try setRandomSerial(cert)
    guard ASN1_TIME_set(X509_getm_notBefore(cert), time_t(notBefore.timeIntervalSince1970)) != nil,
      ASN1_TIME_set(X509_getm_notAfter(cert), time_t(notAfter.timeIntervalSince1970)) != nil
    else { throw .openSSL("set validity") }
    guard let name = X509_NAME_new() else { throw .openSSL("X509_NAME_new") }
    defer { X509_NAME_free(name) }
    try addEntry(name, "O", "mockserver")
    try addEntry(name, "CN", commonName)
    guard X509_set_subject_name(cert, name) == 1 else { throw .openSSL("set subject") }
    let issuerName = issuerCertificate.map { X509_get_subject_name($0.pointer) } ?? name
    guard X509_set_issuer_name(cert, issuerName) == 1 else { throw .openSSL("set issuer") }
    guard X509_set_pubkey(cert, key.pointer) == 1 else { throw .openSSL("set package key") }

    var v3 = X509V3_CTX()
    X509V3_set_ctx(&v3, issuerCertificate?.pointer ?? cert, cert, nil, nil, 0)
    var extensions: [(Int32, String)] = []
    switch usage {
    case .authority:
      extensions = [
        (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
      ]
    case .server:
      extensions =
        selfSignedCA
        ? [
          (NID_basic_constraints, "critical,CA:TRUE"),
          (NID_key_usage, "critical,digitalSignature,keyCertSign"),
        ]
        : [
          (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
        ]
      extensions.append((NID_ext_key_usage, "serverAuth"))
    case .client:
      extensions = [
        (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
        (NID_ext_key_usage, "clientAuth"),
      ]
    }
    extensions.append((NID_subject_key_identifier, "hash"))
    if issuer != nil { extensions.append((NID_authority_key_identifier, "keyid:always")) }
    if !hosts.isEmpty { extensions.append((NID_subject_alt_name, try subjectAltName(hosts))) }
    for (nid, value) in extensions {
      guard let ext = X509V3_EXT_conf_nid(nil, &v3, nid, value) else {
        throw .openSSL("extension \(String(cString: OBJ_nid2sn(nid))) = \(value)")
      }
      defer { X509_EXTENSION_free(ext) }
      guard X509_add_ext(cert, ext, -1) == 1 else { throw .openSSL("add extension") }
    }
    guard X509_sign(cert, (issuerKey ?? key).pointer, EVP_sha256()) > 0 else { throw .openSSL("sign") }
    var chainPEM = try PEM.encode(cert)
    for link in issuerChain { chainPEM += try PEM.encode(link.pointer) }
    return CertificateAndKey(certificatePEM: chainPEM, privateKeyPEM: try PEM.encode(key))
  }

  /// `DNS:localhost,IP:127.0.0.1,IP:::1`; rejects entries with characters that would change the list.
  static func subjectAltName(_ hosts: [String]) throws(TLSError) -> String {
    var entries: [String] = []
    for host in hosts {
      guard !host.isEmpty, !host.contains(","), host.allSatisfy({ $0.isASCII && !$0.isWhitespace }) else {
        throw TLSError("subjectAltName", detail: "invalid host '\(host)'")
      }
      let isIP =
        host.contains(":")
        || (host.split(separator: ".").count == 4 && host.allSatisfy { $0.isNumber || $0 == "." })
      entries.append(isIP ? "IP:\(host)" : "DNS:\(host)")
    }
    return entries.joined(separator: ",")
  }

  private static func addEntry(_ name: OpaquePointer, _ field: String, _ value: String) throws(TLSError) {
    let bytes = Array(value.utf8)
    let ok = bytes.withUnsafeBufferPointer {
      X509_NAME_add_entry_by_txt(name, field, MBSTRING_UTF8, $0.baseAddress, Int32($0.count), -1, 0)
    }
    guard ok == 1 else { throw .openSSL("subject \(field)") }
  }

  private static func setRandomSerial(_ cert: OpaquePointer) throws(TLSError) {
    guard let bn = BN_new() else { throw .openSSL("BN_new") }
    defer { BN_free(bn) }
    guard BN_rand(bn, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY) == 1,
      BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(cert)) != nil
    else { throw .openSSL("serial number") }
  }
}

/// An owned `X509*`: freed once, in `deinit`.
///
/// Invariant (`@unchecked Sendable`): the certificate is never mutated after construction; OpenSSL's
/// reference counting and read accessors are thread-safe.
final class X509Certificate: @unchecked Sendable {
  let pointer: OpaquePointer
  /// Takes ownership of one reference to `pointer`.
  init(owning pointer: OpaquePointer) { self.pointer = pointer }
  deinit { X509_free(pointer) }
}

/// An owned `EVP_PKEY*`: freed once, in `deinit`.
///
/// Invariant (`@unchecked Sendable`): never mutated after construction.
final class PrivateKey: @unchecked Sendable {
  let pointer: OpaquePointer
  /// Takes ownership of one reference to `pointer`.
  init(owning pointer: OpaquePointer) { self.pointer = pointer }
  deinit { EVP_PKEY_free(pointer) }

  /// A new EC P-256 key.
  static func generate() throws(TLSError) -> PrivateKey {
    guard let key = cossl_generate_ec_p256() else { throw .openSSL("generate EC P-256 key") }
    return PrivateKey(owning: key)
  }
}

/// PEM encoding and decoding through memory BIOs.
enum PEM {
  /// Every `CERTIFICATE` block in `text`, in order (empty when there is none).
  /// - Throws: ``TLSError`` when a block is malformed.
  static func certificates(_ text: String) throws(TLSError) -> [X509Certificate] {
    let bio = try memoryBIO(text)
    defer { BIO_free(bio) }
    var result: [X509Certificate] = []
    OpenSSLErrors.clear()
    while let cert = PEM_read_bio_X509(bio, nil, nil, nil) {
      result.append(X509Certificate(owning: cert))
    }
    // The loop ends with "no start line" at the end of input; anything else is a real error.
    let last = ERR_peek_last_error()
    if last != 0, ERR_GET_REASON(last) != PEM_R_NO_START_LINE {
      throw TLSError.openSSL("read certificate")
    }
    OpenSSLErrors.clear()
    return result
  }

  /// The first private key in `text` (PKCS #8, traditional EC or RSA; unencrypted).
  /// - Throws: ``TLSError`` when there is none or it cannot be read.
  static func privateKey(_ text: String) throws(TLSError) -> PrivateKey {
    let bio = try memoryBIO(text)
    defer { BIO_free(bio) }
    OpenSSLErrors.clear()
    guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
      throw TLSError.openSSL("read private key")
    }
    return PrivateKey(owning: key)
  }

  /// A memory BIO holding a copy of `text` (BIO_new_mem_buf would only borrow the bytes).
  static func memoryBIO(_ text: String) throws(TLSError) -> OpaquePointer {
    guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("BIO_new") }
    let bytes = Array(text.utf8)
    let written = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32(clamping: $0.count)) }
    guard bytes.isEmpty || written == Int32(clamping: bytes.count) else {
      BIO_free(bio)
      throw .openSSL("BIO_write")
    }
    return bio
  }

  /// `cert` as a PEM block.
  static func encode(_ cert: OpaquePointer) throws(TLSError) -> String {
    guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("BIO_new") }
    defer { BIO_free(bio) }
    guard PEM_write_bio_X509(bio, cert) == 1 else { throw .openSSL("write certificate") }
    return X509Text.memoryBIOString(bio)
  }

  /// `key` as a PKCS #8 PEM block (unencrypted).
  static func encode(_ key: PrivateKey) throws(TLSError) -> String {
    guard let bio = BIO_new(BIO_s_mem()) else { throw .openSSL("BIO_new") }
    defer { BIO_free(bio) }
    guard PEM_write_bio_PrivateKey(bio, key.pointer, nil, nil, 0, nil, nil) == 1 else {
      throw .openSSL("write private key")
    }
    return X509Text.memoryBIOString(bio)
  }
}
