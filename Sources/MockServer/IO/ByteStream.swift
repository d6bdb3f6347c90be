/// The seam between a connection and its transport: plain TCP or TLS implement it, so one connection
/// implementation serves both. All calls happen on the owning event loop's thread and never block.
protocol ByteStream: AnyObject {
  /// The socket descriptor, for event registration.
  var fd: Int32 { get }
  /// Reads available bytes into `buffer`.
  func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult
  /// Writes as many of `bytes` as possible now.
  func write(_ bytes: UnsafeRawBufferPointer) -> IOResult
  /// True when the stream holds already-received bytes that a `read` returns without the socket being
  /// readable (TLS records decrypted ahead).
  var hasBufferedInput: Bool { get }
  /// Ends the sending side (TCP FIN, or TLS close_notify then FIN).
  func shutdownWrite()
  /// Details of the peer learned by the stream (for TLS: the client certificate subject), or nil.
  var peerDescription: String? { get }
  /// Releases the stream's resources and closes the socket. `reset` sends a TCP RST instead of a FIN;
  /// otherwise input still buffered is read and dropped first (unread input turns a close into an RST)
  /// unless `inputDrained` says the last read just found the socket empty.
  func close(reset: Bool, inputDrained: Bool)
  /// True while a handshake (TLS) has not completed: no request bytes can have arrived yet.
  var isHandshaking: Bool { get }
  /// Writes as many of `first` then `second` as possible now with one gathering call, so `second` need
  /// not be copied behind `first`; nil when the stream cannot (the caller copies and uses ``write(_:)``).
  func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> IOResult?
}

extension ByteStream {
  /// ``close(reset:inputDrained:)`` with input that may still be buffered.
  func close(reset: Bool) { close(reset: reset, inputDrained: false) }
  /// Plain streams have no handshake.
  var isHandshaking: Bool { false }
  /// No gathering write (TLS encrypts records from one buffer).
  func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> IOResult? { nil }
}

/// A plain TCP byte stream.
final class PlainByteStream: ByteStream {
  let fd: Int32
  init(fd: Int32) { self.fd = fd }
  func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult { SocketOps.read(fd, into: buffer) }
  func write(_ bytes: UnsafeRawBufferPointer) -> IOResult { SocketOps.send(fd, bytes) }
  func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> IOResult? {
    SocketOps.send(fd, first, second)
  }
  var hasBufferedInput: Bool { false }
  var peerDescription: String? { nil }
  func shutdownWrite() { SocketOps.shutdownWrite(fd) }
  func close(reset: Bool, inputDrained: Bool) {
    if reset {
      SocketOps.setLingerZero(fd)
    } else if !inputDrained {
      SocketOps.discardAvailable(fd)
    }
    SocketOps.close(fd)
  }
}
