/// Why a server's certificate was not accepted, or why the TLS handshake failed. The integrator maps each
/// case to ClientKit's `APIError` (see docs/tls.md).
public enum TLSTrustFailure: Error, Sendable, Hashable, CustomStringConvertible {
  /// A certificate in the chain is past its notAfter date.
  case expired
  /// A certificate in the chain is before its notBefore date (device clock behind, or a bad certificate).
  case notYetValid
  /// The leaf certificate is not for the host connected to (no matching subjectAltName).
  case hostnameMismatch
  /// The chain does not lead to a trusted root (self-signed, unknown CA, missing intermediate).
  case untrustedRoot
  /// The chain is trusted but no certificate in it has a pinned public-key hash.
  case pinMismatch
  /// The certificate is unusable for another reason (bad signature, wrong purpose, unreadable); the
  /// text is OpenSSL's reason.
  case invalidCertificate(String)
  /// The TLS handshake itself failed (protocol error, alert from the server such as "certificate
  /// required", the peer closed during the handshake); the text is OpenSSL's reason.
  case handshakeFailed(String)

  /// A sentence for logs: `certificate has expired`, `host name does not match the certificate`...
  public var description: String {
    switch self {
    case .expired: return "certificate has expired"
    case .notYetValid: return "certificate is not yet valid"
    case .hostnameMismatch: return "host name does not match the certificate"
    case .untrustedRoot: return "certificate is not issued by a trusted authority"
    case .pinMismatch: return "no certificate in the chain matches a pinned public key"
    case .invalidCertificate(let reason): return "invalid certificate: \(reason)"
    case .handshakeFailed(let reason): return "TLS handshake failed: \(reason)"
    }
  }
}
