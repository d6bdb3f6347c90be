import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A free TCP port on 127.0.0.1: bound, then closed, so nothing listens on it (a server can bind it right
/// after; a client connecting to it is refused).
package func freePort() -> Int {
  let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
  defer { Glibc.close(fd) }
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = 0
  address.sin_addr.s_addr = inet_addr("127.0.0.1")
  var length = socklen_t(MemoryLayout<sockaddr_in>.size)
  _ = withUnsafeMutablePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      _ = bind(fd, $0, length)
      return getsockname(fd, $0, &length)
    }
  }
  return Int(UInt16(bigEndian: address.sin_port))
}

/// Why a connection could not be made: the `errno` of `getaddrinfo`, `socket` or `connect`.
package enum RawClientError: Error { case connect(Int32) }

/// The one raw socket client of the test suites: a blocking TCP connection to the loopback interface for
/// tests that write requests byte for byte (no HTTP client in between), with a deadline on every read.
package final class RawClient {
  package let fd: Int32
  private var isClosed = false

  /// How a read ended.
  package enum ReadEnd: Equatable, Sendable {
    /// `until` held; the connection is still open.
    case open
    /// The peer closed its side (FIN).
    case eof
    /// The peer reset the connection, or another error ended the read.
    case reset
    /// The deadline passed first.
    case timeout

    /// The connection ended (closed or reset), as opposed to still open or timed out.
    package var closed: Bool { self == .eof || self == .reset }
  }

  /// Connects to `host:port` (`127.0.0.1` unless told; `::1` works too), close-on-exec, with Nagle's
  /// algorithm off so small writes go out as written.
  package init(port: Int, host: String = "127.0.0.1") throws {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var result: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
      throw RawClientError.connect(errno)
    }
    defer { freeaddrinfo(result) }
    fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw RawClientError.connect(errno) }
    guard Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
      // No close here: `fd` is initialised, so deinit runs when init throws and closes it (closing it
      // twice could close a descriptor another test has opened meanwhile).
      throw RawClientError.connect(errno)
    }
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  deinit { close() }

  /// Closes the connection now (the peer sees end of stream); the client is not used afterwards.
  package func close() {
    guard !isClosed else { return }
    isClosed = true
    Glibc.close(fd)
  }

  /// One exchange on a fresh connection: `request` as written, then every byte the server sends until it
  /// closes (the request should say `Connection: close`) or `timeout` seconds pass.
  package static func exchange(port: Int, _ request: [UInt8], timeout: Double) throws -> [UInt8] {
    let client = try RawClient(port: port)
    client.send(request)
    return client.read(timeout: timeout).bytes
  }

  /// Sets the kernel receive buffer (before reading nothing, to make a slow reader).
  package func setReceiveBuffer(_ bytes: Int32) {
    var value = bytes
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
  }

  /// Sends everything, or stops at the first error (`MSG_NOSIGNAL`: a closed peer is an error, not a
  /// signal); returns the bytes sent.
  @discardableResult
  package func send(_ bytes: [UInt8]) -> Int {
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if n <= 0 { return offset }
      offset += n
    }
    return offset
  }

  @discardableResult
  package func send(_ text: String) -> Int { send(Array(text.utf8)) }

  /// Sends without waiting for room: returns what the kernel took now (0 when full).
  package func sendNow(_ bytes: [UInt8]) -> Int {
    let n = bytes.withUnsafeBytes {
      Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }
    return max(0, n)
  }

  /// Sends `text` one byte per write, with a short pause between writes.
  package func sendByteByByte(_ text: String, pauseMicroseconds: UInt32 = 200) {
    for b in text.utf8 {
      send([b])
      usleep(pauseMicroseconds)
    }
  }

  /// Shuts down the sending side (the server reads end of stream).
  package func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }

  /// Whether the peer sent something not read yet (or closed), without waiting and without reading it.
  package var hasBytesWaiting: Bool {
    var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
    return poll(&pfd, 1, 0) > 0
  }

  /// Reads until `until` holds for the bytes so far, end of stream, an error, or `timeout` seconds.
  package func read(timeout: Double = 10, until: ([UInt8]) -> Bool = { _ in false }) -> (
    bytes: [UInt8], end: ReadEnd
  ) {
    var data: [UInt8] = []
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      if until(data) { return (data, .open) }
      let remaining = deadline.timeIntervalSinceNow
      if remaining <= 0 { return (data, .timeout) }
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&pfd, 1, Int32(max(1, remaining * 1000))) == 0 { return (data, .timeout) }
      let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
      if n > 0 {
        data.append(contentsOf: buffer[0..<n])
      } else if n == 0 {
        return (data, .eof)
      } else if errno != EINTR {
        return (data, .reset)
      }
    }
  }

  /// Reads one complete response (Content-Length framed or bodiless; interim 1xx responses do not count)
  /// and returns its text ("" when none came) and how the read ended.
  package func readResponse(timeout: Double = 10) -> (text: String, end: ReadEnd) {
    let (bytes, end) = read(timeout: timeout) { RawClient.responseCount($0) >= 1 }
    return (String(decoding: bytes, as: UTF8.self), end)
  }

  /// Reads until `count` complete responses arrived (or the deadline); returns the text read.
  package func readResponses(_ count: Int, timeout: Double = 10) -> String {
    String(decoding: read(timeout: timeout) { RawClient.responseCount($0) >= count }.bytes, as: UTF8.self)
  }

  /// Reads until `count` complete responses arrived (or the deadline); returns how many did.
  package func countResponses(_ count: Int, timeout: Double = 10) -> Int {
    RawClient.responseCount(read(timeout: timeout) { RawClient.responseCount($0) >= count }.bytes)
  }

  /// Counts complete Content-Length framed (or bodiless) final responses in `bytes`; interim 1xx
  /// responses are skipped.
  package static func responseCount(_ bytes: [UInt8]) -> Int {
    var count = 0
    var index = 0
    while index < bytes.count {
      guard let end = headEnd(bytes, from: index) else { return count }
      let head = String(decoding: bytes[index..<end], as: UTF8.self)
      var length = 0
      for line in head.split(separator: "\r\n") where line.lowercased().hasPrefix("content-length:") {
        length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
      }
      let informational = head.hasPrefix("HTTP/1.1 1")
      if informational { length = 0 }
      let bodyStart = end + 4
      guard bytes.count - bodyStart >= length else { return count }
      if !informational { count += 1 }
      index = bodyStart + length
    }
    return count
  }

  /// The index of the CRLF CRLF that ends the head starting at `start`, if it is in `bytes`.
  package static func headEnd(_ bytes: [UInt8], from start: Int) -> Int? {
    var i = start
    while i + 4 <= bytes.count {
      if bytes[i] == 13, bytes[i + 1] == 10, bytes[i + 2] == 13, bytes[i + 3] == 10 { return i }
      i += 1
    }
    return nil
  }
}
