import COpenSSL

/// libssl and libcrypto, loaded with `dlopen` on the first OpenSSL call (COpenSSL's trampolines).
package enum OpenSSLLibrary {
  /// Loads the libraries once. Nil when they are loaded; otherwise why they could not be, e.g.
  /// `could not load OpenSSL (libssl.so.3: cannot open shared object file: …)`. Set-up code calls this
  /// before its first OpenSSL call and reports the problem: any other call without the libraries stops the
  /// process with the same message.
  package static var loadProblem: String? { cossl_load().map { String(cString: $0) } }
}

/// OpenSSL's per-thread error queue, read the one way both the server and the client read it.
package enum OpenSSLErrors {
  /// Empties the calling thread's queue and returns its entries joined by `; ` (empty when none), e.g.
  /// `error:0480006C:PEM routines::no start line`.
  package static func drain() -> String {
    var parts: [String] = []
    while true {
      let code = ERR_get_error()
      if code == 0 { break }
      var buffer = [CChar](repeating: 0, count: 256)
      ERR_error_string_n(code, &buffer, buffer.count)
      parts.append(String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
    return parts.joined(separator: "; ")
  }

  /// Empties the queue without reading it (before an SSL call whose error is read with `SSL_get_error`).
  package static func clear() { ERR_clear_error() }
}

/// The process-wide BIO method that writes with `MSG_NOSIGNAL`, so a peer that hung up yields EPIPE
/// rather than a SIGPIPE that would kill the host process (OpenSSL's socket BIO uses `write(2)`).
///
/// Invariant (`@unchecked Sendable`): created once by the thread-safe `static let`, never mutated or
/// freed; OpenSSL only reads a `BIO_METHOD`.
package final class NoSignalBIOMethod: @unchecked Sendable {
  /// The one instance.
  package static let shared = NoSignalBIOMethod()
  /// Nil only when OpenSSL could not allocate it.
  package let pointer: OpaquePointer?
  private init() { pointer = cossl_make_nosigpipe_method() }
}

/// Text forms of X.509 names and memory BIOs.
package enum X509Text {
  /// `name` in one-line RFC 2253 form, or nil.
  package static func rfc2253(_ name: OpaquePointer?) -> String? {
    guard let name, let bio = BIO_new(BIO_s_mem()) else { return nil }
    defer { BIO_free(bio) }
    guard X509_NAME_print_ex(bio, name, 0, UInt(cossl_xn_flag_rfc2253())) >= 0 else { return nil }
    return memoryBIOString(bio)
  }

  /// The bytes written to a memory `bio`, as UTF-8 text.
  package static func memoryBIOString(_ bio: OpaquePointer) -> String {
    var pointer: UnsafeMutablePointer<CChar>?
    let length = cossl_bio_get_mem_data(bio, &pointer)
    guard let pointer, length > 0 else { return "" }
    return UnsafeRawBufferPointer(start: pointer, count: length).withMemoryRebound(to: UInt8.self) {
      String(decoding: $0, as: UTF8.self)
    }
  }
}
