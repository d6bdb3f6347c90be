#if canImport(Glibc)
  import CLinuxShims
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The socket calls whose form differs between systems: a close-on-exec socket, an accepted connection
/// that is non-blocking and close-on-exec from the start, sending without `SIGPIPE`, naming a thread.
/// Linux does each in the call itself (`SOCK_CLOEXEC`, `accept4`, `MSG_NOSIGNAL`); elsewhere `fcntl` and
/// `SO_NOSIGPIPE` follow the call.
enum PlatformSocket {
  /// The flags for `send`/`sendmsg` on a socket from this type: `MSG_NOSIGNAL` on Linux (a peer that
  /// hung up is `EPIPE`, not a signal); 0 elsewhere, where the socket has `SO_NOSIGPIPE` instead.
  @inline(__always)
  static var sendFlags: Int32 {
    #if os(Linux)
      return Int32(MSG_NOSIGNAL)
    #else
      return 0
    #endif
  }

  /// `SOCK_STREAM` as `getaddrinfo`'s hints and `socket` take it (an enum case on Glibc, a macro on Darwin):
  /// the one place that names it, for files whose other imports (COpenSSL's headers) hide Glibc's enum.
  static var streamType: Int32 {
    #if os(Linux)
      return Int32(SOCK_STREAM.rawValue)
    #else
      return SOCK_STREAM
    #endif
  }

  /// A new TCP socket of `family`, close-on-exec, optionally non-blocking, that never raises `SIGPIPE`;
  /// -1 with `errno` set on failure.
  static func makeStreamSocket(family: Int32, nonBlocking: Bool) -> Int32 {
    #if os(Linux)
      var type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
      if nonBlocking { type |= Int32(SOCK_NONBLOCK.rawValue) }
      return socket(family, type, 0)
    #else
      let fd = socket(family, SOCK_STREAM, 0)
      guard fd >= 0 else { return fd }
      prepare(fd, nonBlocking: nonBlocking)
      return fd
    #endif
  }

  /// Accepts one pending connection on the listening socket `fd` as a non-blocking, close-on-exec socket
  /// (`accept4` on Linux, `accept` then `fcntl` elsewhere), its peer's address in `address`; -1 with
  /// `errno` set when none was accepted.
  @inline(__always)
  static func accept(
    _ fd: Int32, address: UnsafeMutablePointer<sockaddr>, length: UnsafeMutablePointer<socklen_t>
  ) -> Int32 {
    #if os(Linux)
      return cshims_accept4(fd, address, length, Int32(SOCK_NONBLOCK.rawValue | SOCK_CLOEXEC.rawValue))
    #else
      let client = Darwin.accept(fd, address, length)
      guard client >= 0 else { return client }
      prepare(client, nonBlocking: true)
      return client
    #endif
  }

  #if !os(Linux)
    /// Close-on-exec, non-blocking when asked, `SO_NOSIGPIPE`, and `TCP_NODELAY` (which Linux copies
    /// from the listening socket).
    private static func prepare(_ fd: Int32, nonBlocking: Bool) {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      if nonBlocking { _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK) }
      var one: Int32 = 1
      _ = setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
      _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
    }
  #endif

  /// Names the calling thread (at most 15 bytes on Linux; a longer name is refused there).
  static func setCurrentThreadName(_ name: String) {
    #if os(Linux)
      _ = cshims_set_thread_name(name)
    #else
      _ = pthread_setname_np(name)
    #endif
  }
}
