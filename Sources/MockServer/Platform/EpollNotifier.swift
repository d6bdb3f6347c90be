#if os(Linux)
  import CLinuxShims
  import Glibc

  /// Level-triggered `epoll(7)` with an `eventfd(2)` wake-up.
  ///
  /// Invariant: the descriptors are immutable; `events` is written by `epoll_wait` and read by
  /// ``event(at:)`` on the loop's thread only; ``wake()`` (any thread) only writes the eventfd.
  final class EpollNotifier: ReadinessNotifier {
    private let epollFD: Int32
    private let wakeFD: Int32
    /// Reports of the last wait (at most ``capacity``).
    private let events: UnsafeMutablePointer<epoll_event>
    private static let capacity = 256

    /// Creates the epoll and eventfd descriptors and watches the eventfd.
    /// - Throws: ``IOError`` when the kernel refuses them.
    init() throws(IOError) {
      let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
      guard ep >= 0 else { throw IOError("epoll_create1", errno: errno) }
      let ev = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
      guard ev >= 0 else {
        let e = errno
        Glibc.close(ep)
        throw IOError("eventfd", errno: e)
      }
      epollFD = ep
      wakeFD = ev
      events = .allocate(capacity: Self.capacity)
      events.initialize(repeating: epoll_event(), count: Self.capacity)
      var event = epoll_event()
      event.events = EPOLLIN.rawValue
      event.data.fd = ev
      epoll_ctl(ep, EPOLL_CTL_ADD, ev, &event)
    }

    deinit {
      events.deallocate()
      Glibc.close(epollFD)
      Glibc.close(wakeFD)
    }

    /// Readable also asks for `EPOLLRDHUP`: a half-close is reported as input (its end).
    @inline(__always)
    private static func mask(_ interest: Interest) -> UInt32 {
      var m: UInt32 = 0
      if interest.readable { m |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
      if interest.writable { m |= EPOLLOUT.rawValue }
      return m
    }

    func add(fd: Int32, interest: Interest) {
      var event = epoll_event()
      event.events = Self.mask(interest)
      event.data.fd = fd
      epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
    }

    func modify(fd: Int32, interest: Interest) {
      var event = epoll_event()
      event.events = Self.mask(interest)
      event.data.fd = fd
      epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    func remove(fd: Int32, closing: Bool) {
      if !closing { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
    }

    func wait(timeoutMilliseconds: Int32) -> Int {
      let n = epoll_wait(epollFD, events, Int32(Self.capacity), timeoutMilliseconds)
      if n < 0 { return errno == EINTR ? 0 : -1 }
      return Int(n)
    }

    @inline(__always)
    func event(at index: Int) -> Readiness {
      let event = events[index]
      let fd = event.data.fd
      if fd == wakeFD { return .wakeUp }
      let bits = event.events
      let hangUp = bits & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
      return Readiness(
        fd: fd, readable: bits & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 || hangUp,
        writable: bits & EPOLLOUT.rawValue != 0, hangUp: hangUp)
    }

    func wake() {
      var one: UInt64 = 1
      _ = Glibc.write(wakeFD, &one, 8)
    }

    func acknowledgeWake() {
      var counter: UInt64 = 0
      _ = Glibc.read(wakeFD, &counter, 8)
    }
  }
#endif
