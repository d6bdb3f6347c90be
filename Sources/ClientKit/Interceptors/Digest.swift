import Foundation

#if !CLIENTKIT_NATIVE && canImport(CryptoKit)
  import CryptoKit
#endif

/// Message digests and HMACs: libcrypto on Linux, CryptoKit on Apple platforms.
public enum Digest {
  /// A hash function.
  public enum Algorithm: String, Sendable, Hashable, CaseIterable {
    /// MD5 (RFC 1321), 16 bytes. Only for legacy backends.
    case md5
    /// SHA-1 (RFC 3174), 20 bytes. Only for legacy backends.
    case sha1
    /// SHA-256 (FIPS 180-4), 32 bytes.
    case sha256

    /// Digest length in bytes.
    public var byteCount: Int {
      switch self {
      case .md5: return 16
      case .sha1: return 20
      case .sha256: return 32
      }
    }
  }

  /// The digest of `data`.
  /// - Returns: `algorithm.byteCount` bytes.
  public static func hash(_ algorithm: Algorithm, _ data: Data) -> [UInt8] {
    #if CLIENTKIT_NATIVE
      return libcryptoHash(algorithm, data)
    #elseif canImport(CryptoKit)
      switch algorithm {
      case .md5: return Array(Insecure.MD5.hash(data: data))
      case .sha1: return Array(Insecure.SHA1.hash(data: data))
      case .sha256: return Array(SHA256.hash(data: data))
      }
    #else
      return unavailable()
    #endif
  }

  /// The HMAC (RFC 2104) of `data` under `key`.
  /// - Returns: `algorithm.byteCount` bytes.
  public static func hmac(_ algorithm: Algorithm, key: Data, _ data: Data) -> [UInt8] {
    #if CLIENTKIT_NATIVE
      return libcryptoHMAC(algorithm, key: key, data)
    #elseif canImport(CryptoKit)
      let symmetric = SymmetricKey(data: key)
      switch algorithm {
      case .md5: return Array(HMAC<Insecure.MD5>.authenticationCode(for: data, using: symmetric))
      case .sha1: return Array(HMAC<Insecure.SHA1>.authenticationCode(for: data, using: symmetric))
      case .sha256: return Array(HMAC<SHA256>.authenticationCode(for: data, using: symmetric))
      }
    #else
      return unavailable()
    #endif
  }

  /// Lower-case hexadecimal spelling of `bytes`.
  public static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef".utf8)
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count * 2)
    for b in bytes {
      out.append(digits[Int(b >> 4)])
      out.append(digits[Int(b & 0x0F)])
    }
    return String(decoding: out, as: UTF8.self)
  }

  #if !CLIENTKIT_NATIVE && !canImport(CryptoKit)
    /// Only in `make check-portable`'s build of the portable core on Linux, which has neither libcrypto
    /// (left out on purpose) nor CryptoKit (Apple only). Never part of a shipped build.
    private static func unavailable() -> [UInt8] {
      fatalError("ClientKit.Digest: no digest implementation on this platform")
    }
  #endif
}
