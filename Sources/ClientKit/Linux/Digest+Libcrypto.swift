#if CLIENTKIT_NATIVE
  import Foundation
  import NativeSupport

  // Linux: digests from libcrypto (NativeSupport), shared with the server.
  extension Digest {
    static func libcryptoHash(_ algorithm: Algorithm, _ data: Data) -> [UInt8] {
      data.withUnsafeBytes { LibcryptoDigest.hash(algorithm.libcrypto, $0) }
    }

    static func libcryptoHMAC(_ algorithm: Algorithm, key: Data, _ data: Data) -> [UInt8] {
      LibcryptoDigest.hmac(algorithm.libcrypto, key: [UInt8](key), [UInt8](data))
    }
  }

  extension Digest.Algorithm {
    var libcrypto: LibcryptoDigest.Algorithm {
      switch self {
      case .md5: return .md5
      case .sha1: return .sha1
      case .sha256: return .sha256
      }
    }
  }
#endif
