#if !CLIENTKIT_NATIVE && canImport(Security) && canImport(CryptoKit)
  import CryptoKit
  import Foundation
  import Security

  // Apple platforms: certificate checks with the Security framework (the same contract as the OpenSSL
  // version on Linux). Not compiled on Linux: see docs/clientkit.md, "What is compiled where".

  extension TrustConfiguration {
    /// Checks a server's certificate chain for `host` with `SecTrust`: the chain must lead to a trusted
    /// root (the system's unless ``usesSystemTrustStore`` is false, plus ``trustedCertificatesPEM``), be
    /// valid at `date`, name `host` (SSL server policy), and match a pin when pins are set.
    /// - Parameters:
    ///   - chainDER: DER certificates as the server sent them, leaf first.
    ///   - host: the host name or IP literal connected to.
    ///   - date: the time to check validity at (default now).
    /// - Throws: ``TLSTrustFailure`` naming the problem.
    public func evaluate(chainDER: [[UInt8]], host: String, at date: Date? = nil) throws(TLSTrustFailure) {
      let certificates = chainDER.compactMap { SecCertificateCreateWithData(nil, Data($0) as CFData) }
      guard !certificates.isEmpty, certificates.count == chainDER.count else {
        throw .invalidCertificate("the server sent an unreadable certificate")
      }
      var anchors: [SecCertificate] = []
      for pem in trustedCertificatesPEM {
        guard let blocks = Self.certificatesDER(fromPEM: pem), !blocks.isEmpty else {
          throw .invalidCertificate("a trusted certificate is not PEM")
        }
        for der in blocks {
          guard let anchor = SecCertificateCreateWithData(nil, Data(der) as CFData) else {
            throw .invalidCertificate("a trusted certificate is unreadable")
          }
          anchors.append(anchor)
        }
      }
      let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
      var trust: SecTrust?
      guard
        SecTrustCreateWithCertificates(
          certificates as CFArray, SecPolicyCreateSSL(true, name as CFString), &trust) == errSecSuccess,
        let trust
      else { throw .invalidCertificate("SecTrustCreateWithCertificates failed") }
      if !anchors.isEmpty || !usesSystemTrustStore {
        SecTrustSetAnchorCertificates(trust, anchors as CFArray)
        SecTrustSetAnchorCertificatesOnly(trust, !usesSystemTrustStore)
      }
      if let date { SecTrustSetVerifyDate(trust, date as CFDate) }
      var error: CFError?
      if !SecTrustEvaluateWithError(trust, &error) {
        throw Self.failure(forSecurityError: error.map { CFErrorGetCode($0) } ?? 0, error: error)
      }
      guard !pinnedPublicKeyHashes.isEmpty else { return }
      let verified = (SecTrustCopyCertificateChain(trust) as? [SecCertificate]) ?? certificates
      for certificate in verified {
        let der = [UInt8](SecCertificateCopyData(certificate) as Data)
        if let spki = Self.subjectPublicKeyInfo(ofCertificate: der),
          pinnedPublicKeyHashes.contains(Data(SHA256.hash(data: spki)).base64EncodedString())
        {
          return
        }
      }
      throw .pinMismatch
    }

    /// The pin value of the first certificate in `pem`: base64 SHA-256 of its SubjectPublicKeyInfo.
    /// - Throws: ``TLSTrustFailure/invalidCertificate(_:)`` when `pem` holds no readable certificate.
    public static func publicKeyHash(certificatePEM pem: String) throws(TLSTrustFailure) -> String {
      guard let der = certificatesDER(fromPEM: pem)?.first,
        let spki = subjectPublicKeyInfo(ofCertificate: der)
      else { throw .invalidCertificate("no public key") }
      return Data(SHA256.hash(data: spki)).base64EncodedString()
    }

    /// Maps a Security framework result code (`errSec…`) to a failure.
    static func failure(forSecurityError code: Int, error: CFError?) -> TLSTrustFailure {
      switch OSStatus(truncatingIfNeeded: code) {
      case errSecCertificateExpired: return .expired
      case errSecCertificateNotValidYet: return .notYetValid
      case errSecHostNameMismatch: return .hostnameMismatch
      case errSecNotTrusted, errSecCreateChainFailed, errSecNoBasicConstraints: return .untrustedRoot
      default:
        let text = error.map { CFErrorCopyDescription($0) as String } ?? "trust evaluation failed (\(code))"
        return .invalidCertificate(text)
      }
    }
  }
#endif
