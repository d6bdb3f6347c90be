#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// A failed system call: which call, and the `errno` it left.
public struct IOError: Error, Sendable, CustomStringConvertible, Hashable {
  /// The system call or operation, e.g. `bind`.
  public var operation: String
  /// The `errno` value; 0 when the failure has no errno (the operation text then says it all).
  public var errno: Int32

  /// Creates an error from an operation name and errno.
  package init(_ operation: String, errno: Int32) {
    self.operation = operation
    self.errno = errno
  }

  /// `bind: Address already in use (errno 98)`.
  public var description: String {
    errno == 0 ? operation : "\(operation): \(String(cString: strerror(errno))) (errno \(errno))"
  }
}

/// The outcome of one non-blocking read or write on a ``ByteStream``.
package enum IOResult: Sendable, Equatable {
  /// This many bytes were transferred (> 0).
  case bytes(Int)
  /// Nothing can be done now; retry when the socket is readable (or writable if `wantsWrite`).
  case wouldBlock(wantsWrite: Bool)
  /// The peer closed its sending side (read) — no more bytes will come.
  case eof
  /// The operation failed; the connection is unusable.
  case failed(IOError)
}
