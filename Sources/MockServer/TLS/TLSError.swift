import COpenSSL
import NativeSupport

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
