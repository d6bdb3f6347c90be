import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A blocking loopback TCP client for tests: raw bytes in, raw bytes out, with deadlines.
final class RawClient {
  let fd: Int32

  /// Connects to `127.0.0.1:port` (or `host`).
  init(port: Int, host: String = "127.0.0.1") throws {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var result: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &result) == 0, let info = result else {
      throw RawClientError.connect(errno)
    }
    defer { freeaddrinfo(result) }
    fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
    guard connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
      // No close here: `fd` is initialised, so deinit runs when init throws and closes it (closing it
      // twice could close a descriptor another test has opened meanwhile).
      throw RawClientError.connect(errno)
    }
    var one: Int32 = 1
    setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
  }

  deinit { Glibc.close(fd) }

  func send(_ text: String) { send(Array(text.utf8)) }

  func send(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if n <= 0 { return }
      offset += n
    }
  }

  /// Sends `bytes` one byte per write, with a short pause between writes.
  func sendByteByByte(_ text: String, pauseMicroseconds: UInt32 = 200) {
    for b in text.utf8 {
      send([b])
      usleep(pauseMicroseconds)
    }
  }

  enum ReadEnd: Equatable { case open, eof, reset, timeout }

  /// Reads until `until` is satisfied by the accumulated bytes, EOF, reset, or the deadline.
  func read(timeout: Double = 5, until: ([UInt8]) -> Bool = { _ in false }) -> ([UInt8], ReadEnd) {
    var data: [UInt8] = []
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      if until(data) { return (data, .open) }
      let remaining = deadline.timeIntervalSinceNow
      if remaining <= 0 { return (data, .timeout) }
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      let ready = poll(&pfd, 1, Int32(max(1, remaining * 1000)))
      if ready == 0 { return (data, .timeout) }
      let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
      if n > 0 {
        data.append(contentsOf: buffer[0..<n])
      } else if n == 0 {
        return (data, .eof)
      } else if errno == ECONNRESET {
        return (data, .reset)
      } else if errno != EINTR {
        return (data, .reset)
      }
    }
  }

  /// Reads one complete response (Content-Length framed or until close) and returns it as text.
  func readResponse(timeout: Double = 5) -> (String, ReadEnd) {
    let (bytes, end) = read(timeout: timeout) { RawClient.isCompleteResponse($0) }
    return (String(decoding: bytes, as: UTF8.self), end)
  }

  /// Reads `count` complete responses.
  func readResponses(_ count: Int, timeout: Double = 5) -> String {
    let (bytes, _) = read(timeout: timeout) { RawClient.responseCount($0) >= count }
    return String(decoding: bytes, as: UTF8.self)
  }

  static func isCompleteResponse(_ bytes: [UInt8]) -> Bool { responseCount(bytes) >= 1 }

  /// Counts complete Content-Length-framed (or bodiless) final responses in `bytes`.
  static func responseCount(_ bytes: [UInt8]) -> Int {
    var count = 0
    var index = 0
    let terminator: [UInt8] = [13, 10, 13, 10]
    while index < bytes.count {
      var headEnd: Int?
      var i = index
      while i + 4 <= bytes.count {
        if bytes[i] == 13, Array(bytes[i..<i + 4]) == terminator {
          headEnd = i
          break
        }
        i += 1
      }
      guard let end = headEnd else { return count }
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

  func shutdownWrite() { Glibc.shutdown(fd, Int32(SHUT_WR)) }
}

enum RawClientError: Error { case connect(Int32) }
