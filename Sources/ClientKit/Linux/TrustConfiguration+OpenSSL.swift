#if CLIENTKIT_NATIVE
  import COpenSSL
  import Foundation
  import NativeSupport

  #if canImport(Glibc)
    import Glibc
  #endif

  // Linux: certificate checks with OpenSSL (the socket transport's TLS uses the same store).

  extension TrustConfiguration {
    /// Checks a server's certificate chain for `host`: the chain must lead to a trusted root, be valid at
    /// `date`, be for TLS servers, name `host` (DNS name or IP address in subjectAltName), and match a pin
    /// when pins are set.
    /// - Parameters:
    ///   - chainDER: DER certificates as the server sent them, leaf first.
    ///   - host: the host name or IP literal connected to (`[::1]` brackets allowed).
    ///   - date: the time to check validity at (default now).
    /// - Throws: ``TLSTrustFailure`` naming the first problem found.
    public func evaluate(chainDER: [[UInt8]], host: String, at date: Date? = nil) throws(TLSTrustFailure) {
      var chain: [OwnedCertificate] = []
      for der in chainDER { chain.append(try OwnedCertificate.parseDER(der)) }
      try TrustStore(self).evaluate(chain: chain, host: host, at: date)
    }

    /// As ``evaluate(chainDER:host:at:)`` with the chain as PEM text (leaf first).
    /// - Throws: ``TLSTrustFailure``.
    public func evaluate(chainPEM: String, host: String, at date: Date? = nil) throws(TLSTrustFailure) {
      try TrustStore(self).evaluate(chain: try OwnedCertificate.parsePEM(chainPEM), host: host, at: date)
    }

    /// The pin value of the first certificate in `pem`: base64 SHA-256 of its SubjectPublicKeyInfo.
    /// - Throws: ``TLSTrustFailure/invalidCertificate(_:)`` when `pem` holds no readable certificate.
    public static func publicKeyHash(certificatePEM pem: String) throws(TLSTrustFailure) -> String {
      guard let first = try OwnedCertificate.parsePEM(pem).first, let hash = first.publicKeySHA256 else {
        throw .invalidCertificate("no public key")
      }
      return hash
    }
  }

  /// An OpenSSL `X509_STORE` built from a ``TrustConfiguration``, and the chain check against it.
  ///
  /// Invariant (`@unchecked Sendable`): the store is filled in `init` and only read afterwards (OpenSSL
  /// locks its lazy lookups), so one instance may verify on many threads at once. Freed once in `deinit`.
  final class TrustStore: @unchecked Sendable {
    let configuration: TrustConfiguration
    private let store: OpaquePointer?
    /// The reason the store could not be built (checked at evaluation time), or nil.
    private var setupFailure: TLSTrustFailure?

    init(_ configuration: TrustConfiguration) {
      self.configuration = configuration
      store = X509_STORE_new()
      guard let store else {
        setupFailure = .invalidCertificate("out of memory")
        return
      }
      if configuration.usesSystemTrustStore {
        _ = X509_STORE_set_default_paths(store)
      }
      for pem in configuration.trustedCertificatesPEM {
        do {
          for cert in try OwnedCertificate.parsePEM(pem) {
            // A duplicate anchor is reported as an error by OpenSSL and is harmless.
            _ = X509_STORE_add_cert(store, cert.pointer)
          }
        } catch {
          setupFailure = .invalidCertificate("trusted certificate: \(error)")
        }
      }
      ERR_clear_error()
    }

    deinit {
      if let store { X509_STORE_free(store) }
    }

    /// Verifies `chain` (leaf first) for `host` at `date` (default now).
    /// - Throws: ``TLSTrustFailure``.
    func evaluate(chain: [OwnedCertificate], host: String, at date: Date?) throws(TLSTrustFailure) {
      if let setupFailure { throw setupFailure }
      guard let store, let leaf = chain.first else { throw .invalidCertificate("no certificate") }
      guard let untrusted = cossl_sk_x509_new() else { throw .invalidCertificate("out of memory") }
      defer { cossl_sk_x509_free(untrusted) }  // borrowed certificates: free the stack only
      for cert in chain.dropFirst() { _ = cossl_sk_x509_push(untrusted, cert.pointer) }
      guard let ctx = X509_STORE_CTX_new() else { throw .invalidCertificate("out of memory") }
      defer { X509_STORE_CTX_free(ctx) }
      guard X509_STORE_CTX_init(ctx, store, leaf.pointer, untrusted) == 1 else {
        throw .invalidCertificate(OpenSSLErrors.drain())
      }
      _ = X509_STORE_CTX_set_purpose(ctx, X509_PURPOSE_SSL_SERVER)
      if let date { X509_STORE_CTX_set_time(ctx, 0, time_t(date.timeIntervalSince1970)) }
      ERR_clear_error()
      if X509_verify_cert(ctx) != 1 {
        let code = X509_STORE_CTX_get_error(ctx)
        ERR_clear_error()
        throw Self.failure(forVerifyError: code)
      }
      try Self.checkHost(host, leaf: leaf.pointer)
      let pins = configuration.pinnedPublicKeyHashes
      if !pins.isEmpty {
        guard let verified = X509_STORE_CTX_get1_chain(ctx) else { throw .pinMismatch }
        defer { cossl_sk_x509_pop_free(verified) }
        var matched = false
        for index in 0..<cossl_sk_x509_num(verified) {
          guard let cert = cossl_sk_x509_value(verified, index) else { continue }
          if let hash = OwnedCertificate(retaining: cert).publicKeySHA256, pins.contains(hash) {
            matched = true
            break
          }
        }
        guard matched else { throw .pinMismatch }
      }
    }

    /// Maps an `X509_V_ERR_*` code to a failure.
    static func failure(forVerifyError code: Int32) -> TLSTrustFailure {
      switch code {
      case X509_V_ERR_CERT_HAS_EXPIRED: return .expired
      case X509_V_ERR_CERT_NOT_YET_VALID: return .notYetValid
      case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH: return .hostnameMismatch
      case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
        X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
        X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED, X509_V_ERR_CERT_REJECTED:
        return .untrustedRoot
      default:
        return .invalidCertificate(String(cString: X509_verify_cert_error_string(Int(code))))
      }
    }

    /// Checks that `leaf` names `host` (IP literals against IP SANs, names against DNS SANs/wildcards).
    /// - Throws: ``TLSTrustFailure/hostnameMismatch``.
    static func checkHost(_ host: String, leaf: OpaquePointer) throws(TLSTrustFailure) {
      var name = host
      if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
      guard !name.isEmpty, !name.utf8.contains(0) else { throw .hostnameMismatch }
      let matched: Bool
      if isIPAddress(name) {
        matched = X509_check_ip_asc(leaf, name, 0) == 1
      } else {
        let bytes = Array(name.utf8)
        matched =
          bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) {
              X509_check_host(
                leaf, $0.baseAddress, $0.count, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS), nil)
            }
          } == 1
      }
      ERR_clear_error()
      guard matched else { throw .hostnameMismatch }
    }

    /// True for IPv4 and IPv6 literals.
    static func isIPAddress(_ text: String) -> Bool {
      var v4 = in_addr()
      var v6 = in6_addr()
      return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
  }
#endif
