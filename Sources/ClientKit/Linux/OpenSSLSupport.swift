#if CLIENTKIT_NATIVE
  import COpenSSL
  import Foundation
  import NativeSupport

  /// An owned `X509*`, freed once in `deinit`.
  ///
  /// Invariant (`@unchecked Sendable`): never mutated after construction; OpenSSL's reference counting
  /// and read accessors are thread-safe.
  final class OwnedCertificate: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Takes ownership of one reference.
    init(owning pointer: OpaquePointer) { self.pointer = pointer }
    /// Adds a reference to a borrowed certificate and owns that reference.
    init(retaining pointer: OpaquePointer) {
      X509_up_ref(pointer)
      self.pointer = pointer
    }
    deinit { X509_free(pointer) }

    /// The DER encoding.
    var der: [UInt8] {
      var out: UnsafeMutablePointer<UInt8>?
      let length = i2d_X509(pointer, &out)
      guard length > 0, let out else { return [] }
      defer { cossl_free(out) }
      return Array(UnsafeBufferPointer(start: out, count: Int(length)))
    }

    /// Base64 SHA-256 of the DER SubjectPublicKeyInfo, or nil.
    var publicKeySHA256: String? {
      guard let key = X509_get0_pubkey(pointer) else { return nil }
      var der: UnsafeMutablePointer<UInt8>?
      let length = i2d_PUBKEY(key, &der)
      guard length > 0, let der else { return nil }
      defer { cossl_free(der) }
      let digest = LibcryptoDigest.hash(.sha256, UnsafeRawBufferPointer(start: der, count: Int(length)))
      return Data(digest).base64EncodedString()
    }

    /// Every CERTIFICATE block in `pem`, in order.
    /// - Throws: the OpenSSL reason as text when a block is malformed or there is none.
    static func parsePEM(_ pem: String) throws(TLSTrustFailure) -> [OwnedCertificate] {
      ERR_clear_error()
      guard let bio = BIO_new(BIO_s_mem()) else { throw .invalidCertificate("out of memory") }
      defer { BIO_free(bio) }
      let bytes = Array(pem.utf8)
      _ = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32(clamping: $0.count)) }
      var result: [OwnedCertificate] = []
      while let cert = PEM_read_bio_X509(bio, nil, nil, nil) {
        result.append(OwnedCertificate(owning: cert))
      }
      let last = ERR_peek_last_error()
      if last != 0, ERR_GET_REASON(last) != PEM_R_NO_START_LINE {
        throw .invalidCertificate("unreadable PEM: \(OpenSSLErrors.drain())")
      }
      ERR_clear_error()
      guard !result.isEmpty else { throw .invalidCertificate("no CERTIFICATE block in PEM") }
      return result
    }

    /// A certificate from DER bytes.
    /// - Throws: ``TLSTrustFailure/invalidCertificate(_:)`` when the bytes are not a certificate.
    static func parseDER(_ der: [UInt8]) throws(TLSTrustFailure) -> OwnedCertificate {
      let cert = der.withUnsafeBufferPointer { buffer -> OpaquePointer? in
        var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
        return d2i_X509(nil, &cursor, buffer.count)
      }
      guard let cert else {
        ERR_clear_error()
        throw .invalidCertificate("unreadable DER certificate")
      }
      return OwnedCertificate(owning: cert)
    }
  }
#endif
