import Foundation

/// Which server certificates a client accepts: the roots it trusts (the system's, extra CAs such as
/// mockserver's, or only those) and optional public-key pins. There is deliberately no switch to accept
/// any certificate: a test that needs a self-signed server trusts that certificate instead.
public struct TrustConfiguration: Sendable, Hashable {
  /// Extra trust anchors as PEM text; each string may hold several `CERTIFICATE` blocks.
  public var trustedCertificatesPEM: [String]
  /// Whether the system's CA store (OpenSSL's default locations) is trusted too.
  public var usesSystemTrustStore: Bool
  /// Public-key pins: base64 SHA-256 of a DER SubjectPublicKeyInfo (the `pin-sha256` / curl
  /// `--pinnedpubkey sha256//` value). When not empty, at least one certificate of the verified chain
  /// (leaf, intermediate or root) must match one; pins never replace chain validation.
  public var pinnedPublicKeyHashes: Set<String>

  /// Creates a configuration.
  /// - Parameters:
  ///   - trustedCertificatesPEM: extra root certificates (PEM).
  ///   - usesSystemTrustStore: also trust the system roots (default true).
  ///   - pinnedPublicKeyHashes: base64 SHA-256 SPKI hashes; empty for no pinning.
  public init(
    trustedCertificatesPEM: [String] = [], usesSystemTrustStore: Bool = true,
    pinnedPublicKeyHashes: Set<String> = []
  ) {
    self.trustedCertificatesPEM = trustedCertificatesPEM
    self.usesSystemTrustStore = usesSystemTrustStore
    self.pinnedPublicKeyHashes = pinnedPublicKeyHashes
  }

  /// The system roots only, no pins.
  public static let system = TrustConfiguration()

  /// Trusts only the certificate authority (or self-signed certificate) in `pem`, e.g. the file
  /// mockserver prints as `certificate: PATH`, or `ca.pem` from `mockserver cert`.
  public static func onlyCertificates(_ pem: String) -> TrustConfiguration {
    TrustConfiguration(trustedCertificatesPEM: [pem], usesSystemTrustStore: false)
  }

  /// The DER bytes of every `CERTIFICATE` block in `pem`, in order (RFC 7468), or nil when a block's base64
  /// is invalid.
  static func certificatesDER(fromPEM pem: String) -> [[UInt8]]? {
    var result: [[UInt8]] = []
    var base64: String?
    for rawLine in pem.split(whereSeparator: \.isNewline) {
      let line = rawLine.trimmingCharacters(in: .whitespaces)
      if line == "-----BEGIN CERTIFICATE-----" {
        base64 = ""
      } else if line == "-----END CERTIFICATE-----" {
        guard let text = base64, let data = Data(base64Encoded: text) else { return nil }
        result.append([UInt8](data))
        base64 = nil
      } else if base64 != nil {
        base64! += line
      }
    }
    return result
  }

  /// The DER SubjectPublicKeyInfo of a DER X.509 certificate (RFC 5280 §4.1), or nil when the bytes are
  /// not a certificate: the seventh element of `tbsCertificate` (the sixth without the `[0]` version).
  static func subjectPublicKeyInfo(ofCertificate der: [UInt8]) -> [UInt8]? {
    guard let certificate = DER.element(in: der[...]), certificate.tag == 0x30,
      let tbs = DER.element(in: certificate.content), tbs.tag == 0x30
    else { return nil }
    var cursor = tbs.content
    var index = 0
    while let element = DER.element(in: cursor) {
      if index == 0, element.tag != 0xA0 { index = 1 }  // no explicit version: serialNumber comes first
      if index == 6 { return element.tag == 0x30 ? Array(element.whole) : nil }
      cursor = cursor[element.whole.endIndex...]
      index += 1
    }
    return nil
  }
}

/// The smallest DER reader that finds elements by position (tag, definite length).
enum DER {
  struct Element {
    var tag: UInt8
    var content: ArraySlice<UInt8>
    var whole: ArraySlice<UInt8>
  }

  /// The element at the start of `bytes`, or nil when it is not well-formed DER.
  static func element(in bytes: ArraySlice<UInt8>) -> Element? {
    var i = bytes.startIndex
    guard i < bytes.endIndex else { return nil }
    let tag = bytes[i]
    i += 1
    guard i < bytes.endIndex else { return nil }
    var length = Int(bytes[i])
    i += 1
    if length & 0x80 != 0 {
      let count = length & 0x7F
      guard count > 0, count <= 4, i + count <= bytes.endIndex else { return nil }
      length = 0
      for _ in 0..<count {
        length = length << 8 | Int(bytes[i])
        i += 1
      }
    }
    guard length >= 0, i + length <= bytes.endIndex else { return nil }
    return Element(tag: tag, content: bytes[i..<i + length], whole: bytes[bytes.startIndex..<i + length])
  }
}
