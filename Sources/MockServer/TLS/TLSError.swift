import COpenSSL

/// A TLS setup failure: loading or generating certificates and keys, or configuring OpenSSL.
public struct TLSError: Error, Sendable, CustomStringConvertible, Equatable {
  /// What was being done, e.g. `load certificate`.
  public var operation: String
  /// OpenSSL's error queue (or another reason) as text; may be empty.
  public var detail: String

  /// Creates an error from an operation and a detail text.
  public init(_ operation: String, detail: String = "") {
    self.operation = operation
    self.detail = detail
  }

  /// An error for `operation` with OpenSSL's queued errors as the detail (the queue is emptied).
  static func openSSL(_ operation: String) -> TLSError {
    TLSError(operation, detail: OpenSSLErrors.drain())
  }

  /// `load certificate: error:0480006C:PEM routines::no start line`.
  public var description: String {
    detail.isEmpty ? operation : "\(operation): \(detail)"
  }
}

/// OpenSSL's per-thread error queue.
enum OpenSSLErrors {
  /// Empties the calling thread's queue and returns its entries joined by `; ` (empty when none).
  static func drain() -> String {
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

  /// Empties the queue without reading it (before an SSL call whose error is read with SSL_get_error).
  static func clear() { ERR_clear_error() }
}
