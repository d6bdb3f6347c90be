import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A TCP proxy on a free loopback port in front of a local server (the slow-store test of issue 47):
/// it forwards both ways until ``stall()``, then keeps forwarding requests but holds every reply it reads
/// from the server until ``resume()``. ``heldReplies`` counts the replies it held, so a test waits for
/// the event "a client is waiting on the server" instead of a time.
package final class StallingProxy: @unchecked Sendable {
  package let port: Int
  private let upstreamPort: Int
  private let listener: Int32
  /// Guards `stalled`, `stopped`, `held` and `sockets`.
  private let condition = NSCondition()
  private var stalled = false
  private var stopped = false
  private var held = 0
  private var sockets: [Int32] = []

  /// Listens on a free loopback port and forwards each connection to `127.0.0.1:upstreamPort`.
  package init(upstreamPort: Int) throws {
    self.upstreamPort = upstreamPort
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw RedisServerError(description: "proxy: socket() failed") }
    var address = StallingProxy.loopback(port: 0)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, listen(fd, 64) == 0 else {
      Glibc.close(fd)
      throw RedisServerError(description: "proxy: bind/listen failed")
    }
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    port = Int(UInt16(bigEndian: address.sin_port))
    listener = fd
    let thread = Thread { [self] in acceptLoop() }
    thread.start()
  }

  deinit { stop() }

  /// `redis://127.0.0.1:PORT` of the proxy.
  package var url: String { "redis://127.0.0.1:\(port)" }

  /// From now on, replies are held.
  package func stall() {
    condition.lock()
    stalled = true
    condition.unlock()
  }

  /// Sends the held replies and forwards again.
  package func resume() {
    condition.lock()
    stalled = false
    condition.broadcast()
    condition.unlock()
  }

  /// True while replies are held.
  package var isStalled: Bool {
    condition.lock()
    defer { condition.unlock() }
    return stalled
  }

  /// Replies held since the proxy started (each read from the server while stalled).
  package var heldReplies: Int {
    condition.lock()
    defer { condition.unlock() }
    return held
  }

  /// Closes the listener and every connection.
  package func stop() {
    condition.lock()
    guard !stopped else {
      condition.unlock()
      return
    }
    stopped = true
    stalled = false
    let open = sockets
    sockets = []
    condition.broadcast()
    condition.unlock()
    shutdown(listener, Int32(SHUT_RDWR))
    Glibc.close(listener)
    for fd in open { shutdown(fd, Int32(SHUT_RDWR)) }
  }

  private static func loopback(port: Int) -> sockaddr_in {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return address
  }

  private func acceptLoop() {
    while true {
      let client = accept(listener, nil, nil)
      guard client >= 0 else { return }
      let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
      var address = StallingProxy.loopback(port: upstreamPort)
      let connected = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
        }
      }
      guard connected == 0 else {
        Glibc.close(client)
        Glibc.close(upstream)
        continue
      }
      condition.lock()
      if stopped {
        condition.unlock()
        Glibc.close(client)
        Glibc.close(upstream)
        return
      }
      sockets += [client, upstream]
      condition.unlock()
      Thread { [self] in pump(from: client, to: upstream, holding: false) }.start()
      Thread { [self] in pump(from: upstream, to: client, holding: true) }.start()
    }
  }

  /// Copies bytes until either side closes; with `holding`, what is read while stalled waits.
  private func pump(from source: Int32, to destination: Int32, holding: Bool) {
    var buffer = [UInt8](repeating: 0, count: 16 << 10)
    while true {
      let n = read(source, &buffer, buffer.count)
      guard n > 0 else { break }
      if holding {
        condition.lock()
        if stalled { held += 1 }
        while stalled, !stopped { condition.wait() }
        let done = stopped
        condition.unlock()
        if done { break }
      }
      var sent = 0
      while sent < n {
        let w = buffer[sent..<n].withUnsafeBytes { write(destination, $0.baseAddress, $0.count) }
        guard w > 0 else { break }
        sent += w
      }
      if sent < n { break }
    }
    shutdown(source, Int32(SHUT_RDWR))
    shutdown(destination, Int32(SHUT_RDWR))
  }
}
