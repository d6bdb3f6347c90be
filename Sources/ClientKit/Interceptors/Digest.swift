import COpenSSL
import Foundation

/// Message digests and HMACs computed with libcrypto (OpenSSL).
public enum Digest {
  /// A hash function.
  public enum Algorithm: String, Sendable, Hashable, CaseIterable {
    /// MD5 (RFC 1321), 16 bytes. Only for legacy backends.
    case md5
    /// SHA-1 (RFC 3174), 20 bytes. Only for legacy backends.
    case sha1
    /// SHA-256 (FIPS 180-4), 32 bytes.
    case sha256

    fileprivate var evp: OpaquePointer? {
      switch self {
      case .md5: return EVP_md5()
      case .sha1: return EVP_sha1()
      case .sha256: return EVP_sha256()
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
    var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    let ok = data.withUnsafeBytes { input in
      out.withUnsafeMutableBufferPointer { output in
        EVP_Digest(input.baseAddress, input.count, output.baseAddress, &length, algorithm.evp, nil)
      }
    }
    precondition(ok == 1, "EVP_Digest failed")
    return Array(out.prefix(Int(length)))
  }

  /// The HMAC (RFC 2104) of `data` under `key`.
  /// - Returns: `algorithm.byteCount` bytes.
  public static func hmac(_ algorithm: Algorithm, key: Data, _ data: Data) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    // Never hand libcrypto a nil pointer, even for an empty key or message.
    let keyBytes = key.isEmpty ? [UInt8(0)] : [UInt8](key)
    let dataBytes = data.isEmpty ? [UInt8(0)] : [UInt8](data)
    let result = out.withUnsafeMutableBufferPointer { o in
      HMAC(algorithm.evp, keyBytes, Int32(key.count), dataBytes, data.count, o.baseAddress, &length)
    }
    precondition(result != nil, "HMAC failed")
    return Array(out.prefix(Int(length)))
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
