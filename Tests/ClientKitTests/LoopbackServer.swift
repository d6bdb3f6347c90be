import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Server-side waits for the client to hang up, and how each one ended: the ordering a deadline or
/// cancellation test checks instead of a wall-clock bound on the client. A busy machine can stretch any
/// bound; it cannot make a client that gave up at its deadline hang up after the server's much longer wait
/// ran out, which is what a broken deadline does.
final class HangUps: Sendable {
  private let outcomes = Mutex<[Bool]>([])

  /// Waits (on the connection's thread) up to `seconds` for the peer to close, and records whether it did.
  func wait(_ connection: ServerConnection, within seconds: Double) {
    let closed = connection.waitForPeerClose(within: seconds)
    outcomes.withLock { $0.append(closed) }
  }

  /// Suspends until `count` waits have ended; true when the client hung up first in every one.
  func clientHungUpFirst(count: Int = 1) async -> Bool {
    while true {
      let ended = outcomes.withLock { $0 }
      if ended.count >= count { return ended.allSatisfy { $0 } }
      try? await Task.sleep(for: .milliseconds(20))
    }
  }
}

/// A tiny blocking TCP server on 127.0.0.1 for transport tests: each accepted connection runs `handler`
/// on its own thread and is closed when the handler returns.
final class LoopbackServer: Sendable {
  let port: Int
  private let listenFD: Int32
  let accepted = Counter()

  init(_ handler: @escaping @Sendable (ServerConnection) -> Void) throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw POSIXError(.EIO) }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 64) == 0 else { throw POSIXError(.EADDRINUSE) }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    self.port = Int(UInt16(bigEndian: address.sin_port))
    self.listenFD = fd
    let accepted = self.accepted
    Thread {
      while true {
        let client = accept(fd, nil, nil)
        if client < 0 {
          if errno == EINTR { continue }
          // Only this thread closes the listening descriptor, after `stop()` shut it down, so the number
          // can never be reused by another socket while this thread might still call accept on it.
          close(fd)
          return
        }
        accepted.increment()
        let connection = ServerConnection(fd: client)
        Thread {
          handler(connection)
          connection.close()
        }.start()
      }
    }.start()
  }

  /// Stops accepting (the accept thread then closes the listening socket).
  func stop() {
    shutdown(listenFD, Int32(SHUT_RDWR))
  }

  /// A port on which nothing listens (bound, then closed).
  static func closedPort() -> Int {
    guard let server = try? LoopbackServer({ _ in }) else { return 1 }
    server.stop()
    return server.port
  }

  var url: String { "http://127.0.0.1:\(port)" }
}

/// One accepted connection, used by one handler thread.
final class ServerConnection: @unchecked Sendable {
  let fd: Int32
  private var buffer: [UInt8] = []
  private var closed = false

  init(fd: Int32) { self.fd = fd }

  /// Reads one request; returns its request line, headers and body, or nil at EOF.
  func readRequest() -> (line: String, headers: [String: String], body: [UInt8])? {
    while true {
      if let end = find([13, 10, 13, 10]) {
        let headText = String(decoding: buffer[0..<end], as: UTF8.self)
        var lines = headText.components(separatedBy: "\r\n")
        let line = lines.removeFirst()
        var headers: [String: String] = [:]
        for l in lines {
          guard let colon = l.firstIndex(of: ":") else { continue }
          headers[l[..<colon].lowercased()] = l[l.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        while buffer.count < end + 4 + length {
          guard fill() else { return nil }
        }
        let body = Array(buffer[(end + 4)..<(end + 4 + length)])
        buffer.removeFirst(end + 4 + length)
        return (line, headers, body)
      }
      guard fill() else { return nil }
    }
  }

  private func find(_ needle: [UInt8]) -> Int? {
    guard buffer.count >= needle.count else { return nil }
    for i in 0...(buffer.count - needle.count) where Array(buffer[i..<(i + needle.count)]) == needle {
      return i
    }
    return nil
  }

  private func fill() -> Bool {
    var chunk = [UInt8](repeating: 0, count: 4096)
    let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
    guard n > 0 else { return false }
    buffer.append(contentsOf: chunk[0..<n])
    return true
  }

  func write(_ text: String) { write(Array(text.utf8)) }

  func write(_ bytes: [UInt8]) {
    var offset = 0
    while offset < bytes.count {
      let n = bytes.withUnsafeBytes {
        send(fd, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
      }
      if n <= 0 { return }
      offset += n
    }
  }

  /// True when the peer closed (or reset) within `seconds`.
  func waitForPeerClose(within seconds: Double) -> Bool {
    let deadline = Date().addingTimeInterval(seconds)
    while Date() < deadline {
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&pfd, 1, 50) > 0 {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, 0)
        if n <= 0 { return true }
      }
    }
    return false
  }

  /// Closes with FIN.
  func close() {
    guard !closed else { return }
    closed = true
    #if canImport(Glibc)
      _ = Glibc.close(fd)
    #else
      _ = Darwin.close(fd)
    #endif
  }

  /// Closes with RST (SO_LINGER 0).
  func reset() {
    var option = linger(l_onoff: 1, l_linger: 0)
    setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    close()
  }
}
