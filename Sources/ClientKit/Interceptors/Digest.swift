import Foundation
import NativeSupport

/// Message digests and HMACs.
public enum Digest {
  /// A hash function.
  public enum Algorithm: String, Sendable, Hashable, CaseIterable {
    /// MD5 (RFC 1321), 16 bytes. Only for legacy backends.
    case md5
    /// SHA-1 (RFC 3174), 20 bytes. Only for legacy backends.
    case sha1
    /// SHA-256 (FIPS 180-4), 32 bytes.
    case sha256

    var libcrypto: LibcryptoDigest.Algorithm {
      switch self {
      case .md5: return .md5
      case .sha1: return .sha1
      case .sha256: return .sha256
      }
    }

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
    data.withUnsafeBytes { LibcryptoDigest.hash(algorithm.libcrypto, $0) }
  }

  /// The HMAC (RFC 2104) of `data` under `key`.
  /// - Returns: `algorithm.byteCount` bytes.
  public static func hmac(_ algorithm: Algorithm, key: Data, _ data: Data) -> [UInt8] {
    LibcryptoDigest.hmac(algorithm.libcrypto, key: [UInt8](key), [UInt8](data))
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
}
