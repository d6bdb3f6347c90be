import CLinuxShims

#if canImport(Glibc)
  import Glibc
#endif

/// A bound, listening, non-blocking TCP socket.
final class Listener: Sendable {
  /// The listening descriptor.
  let fd: Int32
  /// The port actually bound (the kernel's choice when 0 was asked).
  let port: Int
  /// The numeric address bound, e.g. `127.0.0.1` or `::1`.
  let address: String

  /// Binds `host:port` and listens.
  /// - Parameters:
  ///   - host: numeric IPv4/IPv6 address or host name; the first address it resolves to is used.
  ///   - port: 0...65535; 0 picks a free port.
  ///   - reusePort: sets SO_REUSEPORT so several loops can listen on the same port.
  /// - Throws: ``IOError`` for resolution (`getaddrinfo`), `socket`, `bind` or `listen` failures.
  init(host: String, port: Int, reusePort: Bool = false, backlog: Int32 = 1024) throws(IOError) {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
    var result: UnsafeMutablePointer<addrinfo>?
    let rc = getaddrinfo(host, String(port), &hints, &result)
    guard rc == 0, let info = result else {
      if rc == EAI_SYSTEM { throw IOError("getaddrinfo(\(host))", errno: errno) }
      throw IOError("cannot resolve \(host): \(String(cString: gai_strerror(rc)))", errno: 0)
    }
    defer { freeaddrinfo(result) }
    let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard fd >= 0 else { throw IOError("socket", errno: errno) }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    if reusePort {
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
    }
    guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
      let e = errno
      Glibc.close(fd)
      throw IOError("bind \(host):\(port)", errno: e)
    }
    guard listen(fd, backlog) == 0 else {
      let e = errno
      Glibc.close(fd)
      throw IOError("listen", errno: e)
    }
    SocketOps.setNonBlocking(fd)
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    _ = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    let (address, boundPort) = Listener.describe(storage)
    self.fd = fd
    self.port = boundPort
    self.address = address
  }

  /// What one `accept` gave.
  enum AcceptResult {
    /// A connection: a non-blocking, TCP_NODELAY socket and the peer's `address:port`.
    case accepted(fd: Int32, peer: String)
    /// Nothing is pending.
    case wouldBlock
    /// Out of descriptors or kernel memory (`EMFILE`, `ENFILE`, `ENOBUFS`, `ENOMEM`): a connection is
    /// pending and stays pending, so the listener stays readable until something is done about it.
    case exhausted(errno: Int32)
    /// Any other error (the connection, if any, is lost).
    case failed(errno: Int32)
  }

  /// Accepts one pending connection as a non-blocking, TCP_NODELAY socket.
  func accept() -> AcceptResult {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    while true {
      let client = withUnsafeMutablePointer(to: &storage) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
          cshims_accept4(fd, $0, &length, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
        }
      }
      if client >= 0 {
        SocketOps.setNoDelay(client)
        let (address, port) = Listener.describe(storage)
        let peer = address.contains(":") ? "[\(address)]:\(port)" : "\(address):\(port)"
        return .accepted(fd: client, peer: peer)
      }
      let error = errno
      switch error {
      case EINTR, ECONNABORTED: continue
      case EAGAIN, EWOULDBLOCK: return .wouldBlock
      case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .exhausted(errno: error)
      default: return .failed(errno: error)
      }
    }
  }

  /// Stops listening.
  func close() { Glibc.close(fd) }

  /// Numeric address and port of a socket address.
  static func describe(_ storage: sockaddr_storage) -> (String, Int) {
    var storage = storage
    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
    let length = socklen_t(
      Int32(storage.ss_family) == AF_INET6
        ? MemoryLayout<sockaddr_in6>.size : MemoryLayout<sockaddr_in>.size)
    let rc = withUnsafePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getnameinfo(
          $0, length, &host, socklen_t(host.count), &service, socklen_t(service.count),
          NI_NUMERICHOST | NI_NUMERICSERV)
      }
    }
    guard rc == 0 else { return ("?", 0) }
    let hostString = String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    let serviceString = String(
      decoding: service.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return (hostString, Int(serviceString) ?? 0)
  }
}
