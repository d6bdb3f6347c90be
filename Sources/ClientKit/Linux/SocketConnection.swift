#if CLIENTKIT_NATIVE
  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Darwin)
    import Darwin
  #endif

  /// Why a socket operation failed, before it is mapped to an ``APIError`` with the request.
  enum SocketFailure: Error, Sendable, Equatable {
    /// The deadline passed.
    case deadline
    /// Connecting failed (refused, unreachable, name not resolved).
    case connect(String)
    /// The peer reset the connection (ECONNRESET, EPIPE).
    case reset
    /// The operation was interrupted by cancellation (the socket was shut down).
    case cancelled
    /// Another errno.
    case other(Int32, String)
    /// The TLS handshake failed or the server's certificate was rejected.
    case trust(TLSTrustFailure)
    /// The TLS session had already failed.
    case closed

    init(_ error: TLSClientError) {
      switch error {
      case .trust(let failure): self = .trust(failure)
      case .deadline: self = .deadline
      case .reset: self = .reset
      case .io(let code, let text): self = .other(code, text)
      case .closed: self = .closed
      }
    }
  }

  /// The monotonic clock in nanoseconds.
  func monotonicNanoseconds() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
  }

  /// Text for an errno value.
  func errnoText(_ code: Int32) -> String {
    guard let text = strerror(code) else { return "errno \(code)" }
    return String(cString: text)
  }

  /// One non-blocking TCP socket with deadline-bounded operations, plain or with a TLS session
  /// (``startTLS(host:context:until:)``), after which reads and writes go through the session. Owned by one
  /// exchange at a time (or by the pool while idle); never used by two threads at once, except
  /// ``shutdownNow()``, which only calls `shutdown(2)` on a descriptor that stays open until the owner
  /// closes it. Hence `@unchecked Sendable`.
  final class SocketConnection: @unchecked Sendable {
    let fd: Int32
    /// The pool key this connection is for (`scheme://host:port`).
    let key: String
    /// The TLS session, for `https`.
    private var tls: TLSClientStream?
    /// Exchanges completed on this connection.
    var useCount = 0
    /// When the connection was returned to the pool (monotonic ns).
    var idleSince: UInt64 = 0
    private var closed = false

    init(fd: Int32, key: String) {
      self.fd = fd
      self.key = key
    }

    deinit { close() }

    /// Ends the TLS session (close_notify, best effort) and closes the descriptor (idempotent).
    func close() {
      guard !closed else { return }
      closed = true
      tls?.close()
      tls = nil
      _ = systemClose(fd)
    }

    /// Runs the TLS handshake for `host` and checks the server's certificate before `deadline`; reads and
    /// writes are encrypted from then on.
    /// - Throws: ``SocketFailure/trust(_:)``, ``SocketFailure/deadline``, ``SocketFailure/reset``, other
    ///   errors.
    func startTLS(host: String, context: TLSClientContext, until deadline: UInt64) throws(SocketFailure) {
      do {
        let stream = try TLSClientStream(fd: fd, host: host, context: context)
        tls = stream
        try stream.handshake(until: deadline)
      } catch {
        throw SocketFailure(error)
      }
    }

    /// Wakes any thread blocked in `poll` on this socket (used by cancellation).
    func shutdownNow() {
      _ = shutdown(fd, Int32(SHUT_RDWR))
    }

    /// Connects to `host:port` before `deadline` (monotonic ns), trying each resolved address in turn.
    /// - Throws: ``SocketFailure/connect(_:)``, ``SocketFailure/deadline``.
    static func connect(
      host: String, port: Int, key: String, deadline: UInt64, control: ExchangeControl
    ) throws(SocketFailure) -> SocketConnection {
      var hints = addrinfo()
      hints.ai_family = AF_UNSPEC
      #if canImport(Glibc)
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
      #else
        hints.ai_socktype = SOCK_STREAM
      #endif
      hints.ai_flags = AI_NUMERICSERV
      var list: UnsafeMutablePointer<addrinfo>?
      let rc = getaddrinfo(host, String(port), &hints, &list)
      guard rc == 0, let first = list else {
        let text = rc == 0 ? "no address" : String(cString: gai_strerror(rc))
        throw .connect("cannot resolve \(host): \(text)")
      }
      defer { freeaddrinfo(list) }
      var lastError = "no address for \(host)"
      var cursor: UnsafeMutablePointer<addrinfo>? = first
      while let info = cursor {
        cursor = info.pointee.ai_next
        let fd = socket(info.pointee.ai_family, info.pointee.ai_socktype, info.pointee.ai_protocol)
        if fd < 0 {
          lastError = errnoText(errno)
          continue
        }
        let connection = SocketConnection(fd: fd, key: key)
        guard control.attach(connection) else {
          connection.close()
          throw .cancelled
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
          _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let result = systemConnect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen)
        if result == 0 { return connection }
        let code = errno
        guard code == EINPROGRESS || code == EINTR else {
          lastError = errnoText(code)
          control.detachAndClose(connection)
          continue
        }
        do {
          try connection.wait(for: Int16(POLLOUT), until: deadline)
        } catch {
          control.detachAndClose(connection)
          throw error
        }
        var soError: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
        if soError == 0 { return connection }
        control.detachAndClose(connection)
        if control.isCancelled { throw .cancelled }
        lastError = errnoText(soError)
      }
      throw .connect(lastError)
    }

    /// Waits until the socket is ready for `events` or `deadline` (monotonic ns) passes.
    /// - Throws: ``SocketFailure/deadline``.
    func wait(for events: Int16, until deadline: UInt64) throws(SocketFailure) {
      while true {
        let now = monotonicNanoseconds()
        guard now < deadline else { throw .deadline }
        let remainingMs = Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
        var pfd = pollfd(fd: fd, events: events, revents: 0)
        let rc = poll(&pfd, 1, remainingMs)
        if rc > 0 { return }
        if rc == 0 { continue }
        if errno == EINTR { continue }
        throw .other(errno, errnoText(errno))
      }
    }

    /// Writes all of `bytes` before `deadline`.
    /// - Throws: ``SocketFailure/reset`` (ECONNRESET, EPIPE), ``SocketFailure/deadline``, other errors.
    func writeAll(_ bytes: [UInt8], until deadline: UInt64) throws(SocketFailure) {
      if let tls {
        do {
          return try tls.writeAll(bytes, until: deadline)
        } catch {
          throw SocketFailure(error)
        }
      }
      var offset = 0
      while offset < bytes.count {
        let n = bytes.withUnsafeBytes { buffer in
          sendNoSignal(fd, buffer.baseAddress.map { $0 + offset }, bytes.count - offset)
        }
        if n > 0 {
          offset += n
          continue
        }
        let code = errno
        if n < 0 && (code == EAGAIN || code == EWOULDBLOCK || code == EINTR) {
          try wait(for: Int16(POLLOUT), until: deadline)
          continue
        }
        if code == ECONNRESET || code == EPIPE { throw .reset }
        throw .other(code, errnoText(code))
      }
    }

    /// Reads what is available into `buffer`, waiting until `deadline`.
    /// - Returns: the number of bytes read; 0 at end of stream.
    /// - Throws: ``SocketFailure/reset``, ``SocketFailure/deadline``, other errors.
    func read(into buffer: inout [UInt8], until deadline: UInt64) throws(SocketFailure) -> Int {
      if let tls {
        do {
          return try tls.read(into: &buffer, until: deadline)
        } catch {
          throw SocketFailure(error)
        }
      }
      while true {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if n >= 0 { return n }
        let code = errno
        if code == EAGAIN || code == EWOULDBLOCK || code == EINTR {
          try wait(for: Int16(POLLIN), until: deadline)
          continue
        }
        if code == ECONNRESET { throw .reset }
        throw .other(code, errnoText(code))
      }
    }

    /// What ``readNow(into:)`` found.
    enum ReadStep: Equatable {
      /// `count` bytes were read into the buffer (0: end of stream).
      case read(Int)
      /// Nothing yet: wait until the socket is ready for these `poll` events, then call again.
      case wait(Int16)
    }

    /// Reads what is available into `buffer` without waiting (through the TLS session when there is one),
    /// for a reader that waits itself and lets another thread write in between (a TLS session must not be
    /// used by two threads at once: the caller serializes its calls with the writes).
    /// - Throws: ``SocketFailure/reset``, other errors.
    func readNow(into buffer: inout [UInt8]) throws(SocketFailure) -> ReadStep {
      if let tls {
        let step = buffer.withUnsafeMutableBytes { raw in
          Result { () throws(TLSClientError) in try tls.readStep(into: raw) }
        }
        switch step {
        case .failure(let error): throw SocketFailure(error)
        case .success((let n, .done)): return .read(n)
        case .success((_, .wantsRead)): return .wait(Int16(POLLIN))
        case .success((_, .wantsWrite)): return .wait(Int16(POLLOUT))
        }
      }
      while true {
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        if n >= 0 { return .read(n) }
        let code = errno
        if code == EINTR { continue }
        if code == EAGAIN || code == EWOULDBLOCK { return .wait(Int16(POLLIN)) }
        if code == ECONNRESET { throw .reset }
        throw .other(code, errnoText(code))
      }
    }

    /// True when an idle connection is still usable: the peer has not closed or reset it and has sent
    /// nothing unsolicited (checked with a non-blocking `MSG_PEEK`).
    ///
    /// On TLS, bytes waiting on the socket are not necessarily unsolicited data: a TLS 1.3 server may send
    /// session tickets (or a key update) after the handshake. Those records are consumed with a
    /// non-blocking read; the connection is reusable when they carried no application data and no
    /// close_notify. Any application byte or alert makes it unusable (it is then closed).
    func isReusable() -> Bool {
      for _ in 0..<16 {
        var byte: UInt8 = 0
        let n = recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT))
        if n < 0 {
          let code = errno
          return code == EAGAIN || code == EWOULDBLOCK
        }
        guard n > 0, let tls else { return false }
        var probe = [UInt8](repeating: 0, count: 1)
        let step = probe.withUnsafeMutableBytes { raw in
          Result { () throws(TLSClientError) in try tls.readStep(into: raw) }
        }
        guard case .success((0, .wantsRead)) = step else { return false }
      }
      return false
    }
  }

  private func sendNoSignal(_ fd: Int32, _ pointer: UnsafeRawPointer?, _ count: Int) -> Int {
    #if canImport(Glibc)
      return send(fd, pointer, count, Int32(MSG_NOSIGNAL))
    #else
      return send(fd, pointer, count, 0)
    #endif
  }

  private func systemClose(_ fd: Int32) -> Int32 {
    #if canImport(Glibc)
      return Glibc.close(fd)
    #else
      return Darwin.close(fd)
    #endif
  }

  private func systemConnect(_ fd: Int32, _ addr: UnsafeMutablePointer<sockaddr>?, _ len: socklen_t)
    -> Int32
  {
    #if canImport(Glibc)
      return Glibc.connect(fd, addr, len)
    #else
      return Darwin.connect(fd, addr, len)
    #endif
  }
#endif
