import COpenSSL

/// Message digests and HMACs (RFC 2104) computed with libcrypto, for the server and for the client on
/// platforms without CryptoKit.
package enum LibcryptoDigest {
  /// A hash function.
  package enum Algorithm: Sendable {
    /// MD5 (RFC 1321), 16 bytes.
    case md5
    /// SHA-1 (RFC 3174), 20 bytes.
    case sha1
    /// SHA-256 (FIPS 180-4), 32 bytes.
    case sha256

    var evp: OpaquePointer? {
      switch self {
      case .md5: return EVP_md5()
      case .sha1: return EVP_sha1()
      case .sha256: return EVP_sha256()
      }
    }
  }

  /// The digest of `data` (16, 20 or 32 bytes by algorithm).
  package static func hash(_ algorithm: Algorithm, _ data: UnsafeRawBufferPointer) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    let ok = out.withUnsafeMutableBufferPointer { output in
      // Never hand libcrypto a nil pointer, even for empty input.
      withUnsafeBytes(of: UInt8(0)) { zero in
        EVP_Digest(
          data.baseAddress ?? zero.baseAddress, data.count, output.baseAddress, &length, algorithm.evp, nil)
      }
    }
    precondition(ok == 1, "EVP_Digest failed")
    return Array(out.prefix(Int(length)))
  }

  /// The digest of `bytes`.
  package static func hash(_ algorithm: Algorithm, _ bytes: [UInt8]) -> [UInt8] {
    bytes.withUnsafeBytes { hash(algorithm, $0) }
  }

  /// The HMAC of `data` under `key` (16, 20 or 32 bytes by algorithm).
  package static func hmac(_ algorithm: Algorithm, key: [UInt8], _ data: [UInt8]) -> [UInt8] {
    var out = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
    var length: UInt32 = 0
    // Never hand libcrypto a nil pointer, even for an empty key or message.
    let keyBytes = key.isEmpty ? [UInt8(0)] : key
    let dataBytes = data.isEmpty ? [UInt8(0)] : data
    let result = out.withUnsafeMutableBufferPointer { o in
      HMAC(algorithm.evp, keyBytes, Int32(clamping: key.count), dataBytes, data.count, o.baseAddress, &length)
    }
    precondition(result != nil, "HMAC failed")
    return Array(out.prefix(Int(length)))
  }
}
