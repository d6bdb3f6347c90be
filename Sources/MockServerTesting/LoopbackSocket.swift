import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Why a loopback socket call failed: the call and its `errno`.
package struct LoopbackSocketError: Error, CustomStringConvertible {
  /// `socket: errno 24`, `connect: errno 111`, `send: errno 32`.
  package var description: String
  package init(_ description: String) { self.description = description }
}

/// Plain TCP to `127.0.0.1` for tests that write requests byte for byte (no HTTP client in between):
/// the one implementation of connect, send-all and read-to-end the test suites share.
package enum LoopbackSocket {
  /// A blocking TCP socket connected to `127.0.0.1:port` (close-on-exec); the caller closes it.
  /// - Throws: ``LoopbackSocketError`` naming `socket` or `connect` and the `errno`.
  package static func connect(port: Int) throws(LoopbackSocketError) -> Int32 {
    guard let port16 = UInt16(exactly: port) else { throw LoopbackSocketError("connect: port \(port)") }
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw LoopbackSocketError("socket: errno \(errno)") }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = in_port_t(port16.bigEndian)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let rc = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard rc == 0 else {
      let code = errno
      close(fd)
      throw LoopbackSocketError("connect: errno \(code)")
    }
    return fd
  }

  /// Sends all of `bytes` on `fd` (`MSG_NOSIGNAL`: a closed peer is an error, not a signal).
  /// - Throws: ``LoopbackSocketError`` naming `send` and the `errno` when it stops early.
  package static func sendAll(_ fd: Int32, _ bytes: [UInt8]) throws(LoopbackSocketError) {
    var sent = 0
    while sent < bytes.count {
      let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      guard n > 0 else { throw LoopbackSocketError("send: errno \(errno)") }
      sent += n
    }
  }

  /// Every byte `fd` receives until the peer closes, an error, or `timeout` seconds pass.
  package static func readToEnd(_ fd: Int32, timeout: Double) -> [UInt8] {
    var out: [UInt8] = []
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 65536)
    while Date() < deadline {
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&pfd, 1, 200) > 0 else { continue }
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n <= 0 { break }
      out += buffer[0..<n]
    }
    return out
  }

  /// One exchange on a fresh connection to `127.0.0.1:port`: `request` as written out, then every byte
  /// the server sends until it closes (the request should say `Connection: close`) or `timeout` seconds.
  /// - Throws: ``LoopbackSocketError`` when the connection or the send fails.
  package static func exchange(port: Int, _ request: [UInt8], timeout: Double) throws(LoopbackSocketError)
    -> [UInt8]
  {
    let fd = try connect(port: port)
    defer { close(fd) }
    try sendAll(fd, request)
    return readToEnd(fd, timeout: timeout)
  }
}
