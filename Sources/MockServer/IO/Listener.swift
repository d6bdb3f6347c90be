import HTTPCore

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
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
    hints.ai_socktype = PlatformSocket.streamType
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV
    var result: UnsafeMutablePointer<addrinfo>?
    let rc = getaddrinfo(host, String(port), &hints, &result)
    guard rc == 0, let info = result else {
      if rc == EAI_SYSTEM { throw IOError("getaddrinfo(\(host))", errno: errno) }
      throw IOError("cannot resolve \(host): \(String(cString: gai_strerror(rc)))", errno: 0)
    }
    defer { freeaddrinfo(result) }
    let fd = PlatformSocket.makeStreamSocket(family: info.pointee.ai_family, nonBlocking: false)
    guard fd >= 0 else { throw IOError("socket", errno: errno) }
    var one: Int32 = 1
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
    if reusePort {
      setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, socklen_t(MemoryLayout<Int32>.size))
    }
    guard bind(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 else {
      let e = errno
      SocketOps.close(fd)
      throw IOError("bind \(host):\(port)", errno: e)
    }
    guard listen(fd, backlog) == 0 else {
      let e = errno
      SocketOps.close(fd)
      throw IOError("listen", errno: e)
    }
    SocketOps.setNonBlocking(fd)
    // Linux copies TCP_NODELAY from the listening socket to each accepted one: set once here instead of
    // one `setsockopt` per connection. Where it is not inherited, accept() sets it (below).
    SocketOps.setNoDelay(fd)
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
    /// A connection: a non-blocking, TCP_NODELAY socket and its peer (formatted when read).
    case accepted(fd: Int32, peer: ClientAddress)
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
          PlatformSocket.accept(fd, address: $0, length: &length)
        }
      }
      if client >= 0 {
        return .accepted(fd: client, peer: Listener.peer(storage))
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
  func close() { SocketOps.close(fd) }

  /// Numeric address and port of a socket address.
  static func describe(_ storage: sockaddr_storage) -> (String, Int) {
    let text = formatted(storage, bracketed: false, withPort: false)
    return (text.isEmpty ? "?" : text, port(of: storage))
  }

  /// The peer as the journal and logs show it: an IPv4 peer kept as its address and port (formatted when
  /// read), any other as ``peerText(_:)``.
  static func peer(_ storage: sockaddr_storage) -> ClientAddress {
    guard Int32(storage.ss_family) == AF_INET else { return .text(peerText(storage)) }
    return withUnsafePointer(to: storage) {
      $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
        .ipv4(
          address: UInt32(bigEndian: $0.pointee.sin_addr.s_addr), port: UInt16(bigEndian: $0.pointee.sin_port)
        )
      }
    }
  }

  /// The peer as `address:port` (`[address]:port` for IPv6), numeric, as the journal and logs show it:
  /// formatted in one pass without `getnameinfo`.
  static func peerText(_ storage: sockaddr_storage) -> String {
    let text = formatted(storage, bracketed: true, withPort: true)
    return text.isEmpty ? "?:0" : text
  }

  /// The port of an IPv4 or IPv6 socket address (host byte order), 0 for other families.
  private static func port(of storage: sockaddr_storage) -> Int {
    let family = Int32(storage.ss_family)
    return withUnsafePointer(to: storage) { pointer -> Int in
      switch family {
      case AF_INET:
        return pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
          Int(UInt16(bigEndian: $0.pointee.sin_port))
        }
      case AF_INET6:
        return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) {
          Int(UInt16(bigEndian: $0.pointee.sin6_port))
        }
      default:
        return 0
      }
    }
  }

  /// The numeric address (`inet_ntop`), optionally in brackets when IPv6 and followed by `:port`; empty for
  /// a family other than IPv4 and IPv6.
  private static func formatted(_ storage: sockaddr_storage, bracketed: Bool, withPort: Bool) -> String {
    let family = Int32(storage.ss_family)
    guard family == AF_INET || family == AF_INET6 else { return "" }
    let port = port(of: storage)
    if family == AF_INET6, scopeID(of: storage) != 0 {
      // A link-local peer: getnameinfo names the scope (`fe80::1%eth0`), which inet_ntop does not.
      let address = scopedAddress(storage)
      let host = bracketed ? "[\(address)]" : address
      return withPort ? "\(host):\(port)" : host
    }
    if family == AF_INET {
      let address = withUnsafePointer(to: storage) { pointer in
        pointer.withMemoryRebound(to: sockaddr_in.self, capacity: 1) {
          UInt32(bigEndian: $0.pointee.sin_addr.s_addr)
        }
      }
      return ClientAddress.format(ipv4: address, port: UInt16(truncatingIfNeeded: port), withPort: withPort)
    }
    // INET6_ADDRSTRLEN (46) + brackets + ":65535"
    return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 64) { buffer -> String in
      guard let base = buffer.baseAddress else { return "" }
      let open = bracketed ? 1 : 0
      var end = open
      let converted = withUnsafePointer(to: storage) { pointer -> Bool in
        let destination = UnsafeMutableRawPointer(base + open).assumingMemoryBound(to: CChar.self)
        return pointer.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { address in
          withUnsafePointer(to: address.pointee.sin6_addr) {
            inet_ntop(AF_INET6, $0, destination, 48) != nil
          }
        }
      }
      guard converted else { return "" }
      while end < 48 + open, base[end] != 0 { end += 1 }
      if open == 1 {
        base[0] = UInt8(ascii: "[")
        base[end] = UInt8(ascii: "]")
        end += 1
      }
      if withPort {
        base[end] = UInt8(ascii: ":")
        end = ClientAddress.writeDecimal(port, to: base, at: end + 1)
      }
      return String(decoding: UnsafeBufferPointer(start: base, count: end), as: UTF8.self)
    }
  }

  private static func scopeID(of storage: sockaddr_storage) -> UInt32 {
    withUnsafePointer(to: storage) {
      $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { $0.pointee.sin6_scope_id }
    }
  }

  /// `getnameinfo`'s numeric host, scope included; "?" when it fails.
  private static func scopedAddress(_ storage: sockaddr_storage) -> String {
    var storage = storage
    var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
    let rc = withUnsafePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        getnameinfo(
          $0, socklen_t(MemoryLayout<sockaddr_in6>.size), &host, socklen_t(host.count), nil, 0, NI_NUMERICHOST
        )
      }
    }
    guard rc == 0 else { return "?" }
    return String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}
