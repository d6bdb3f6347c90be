/// What a descriptor registered with an ``EventNotifier`` waits for.
struct Interest: Equatable {
  /// Bit 0: readable (and, where the system reports it apart, the peer's half-close); bit 1: writable.
  var bits: UInt8

  /// Neither: only errors and hang-ups are reported (the system reports them whatever was asked).
  static let none = Interest(bits: 0)

  @inline(__always)
  init(bits: UInt8) { self.bits = bits }

  @inline(__always)
  init(readable: Bool, writable: Bool) {
    bits = (readable ? 1 : 0) | (writable ? 2 : 0)
  }

  var readable: Bool { bits & 1 != 0 }
  var writable: Bool { bits & 2 != 0 }
}

/// One readiness report from ``ReadinessNotifier/event(at:)``.
struct Readiness {
  /// The descriptor, or -1 for the notifier's own wake-up (``ReadinessNotifier/wake()`` was called).
  var fd: Int32
  /// Input (or end of input, or an error) can be read without blocking.
  var readable: Bool
  /// Output can be written without blocking.
  var writable: Bool
  /// The peer hung up or the socket has an error.
  var hangUp: Bool

  /// The report of the notifier's wake-up.
  static let wakeUp = Readiness(fd: -1, readable: true, writable: false, hangUp: false)
}

/// A level-triggered readiness notifier with a wake-up: the one seam between an ``EventLoop`` and the
/// system. Every method but ``wake()`` is called on the loop's thread only.
///
/// Level-triggered: a descriptor is reported on every wait while it is ready for what was asked (a
/// socket with unread input is readable again on the next wait). Hang-ups and errors are reported
/// whatever the interest, as both `epoll(7)` and `poll(2)` do.
protocol ReadinessNotifier: AnyObject {
  /// Starts watching `fd` (not watched yet) for `interest`.
  func add(fd: Int32, interest: Interest)
  /// Changes what `fd` (watched) is watched for.
  func modify(fd: Int32, interest: Interest)
  /// Stops watching `fd`. `closing`: the descriptor is closed next, which by itself ends an epoll
  /// registration (one system call fewer).
  func remove(fd: Int32, closing: Bool)
  /// Waits until something is ready or `timeoutMilliseconds` pass (-1: no limit). Returns how many
  /// reports ``event(at:)`` can give (0 on a timeout or a signal), or -1 when waiting failed for good.
  func wait(timeoutMilliseconds: Int32) -> Int
  /// Report `index` (0 ..< what ``wait(timeoutMilliseconds:)`` returned) of the last wait.
  func event(at index: Int) -> Readiness
  /// Makes the loop's current or next wait return with a ``Readiness/wakeUp`` report. Any thread.
  func wake()
  /// Consumes the wake-ups so far (after a ``Readiness/wakeUp`` report, before running the work they
  /// announced).
  func acknowledgeWake()
}

/// The notifier a loop runs on: one of two concrete types, not an existential, so each call is a switch
/// on a tag and a direct call (and the loop's wait-and-dispatch runs specialised for the backend, see
/// ``EventLoop``).
enum EventNotifier {
  #if os(Linux)
    /// `epoll(7)` and an `eventfd(2)`.
    case epoll(EpollNotifier)
  #endif
  /// `poll(2)` and a pipe.
  case poll(PollNotifier)

  /// A new notifier of the given backend.
  /// - Throws: ``IOError`` when the system refuses its descriptors, or the backend does not exist here.
  init(_ backend: EventLoopBackend) throws(IOError) {
    switch backend {
    case .epoll:
      #if os(Linux)
        self = .epoll(try EpollNotifier())
      #else
        throw IOError("epoll is not available on this system", errno: 0)
      #endif
    case .poll:
      self = .poll(try PollNotifier())
    }
  }

  @inline(__always)
  func add(fd: Int32, interest: Interest) {
    switch self {
    #if os(Linux)
      case .epoll(let notifier): notifier.add(fd: fd, interest: interest)
    #endif
    case .poll(let notifier): notifier.add(fd: fd, interest: interest)
    }
  }

  @inline(__always)
  func modify(fd: Int32, interest: Interest) {
    switch self {
    #if os(Linux)
      case .epoll(let notifier): notifier.modify(fd: fd, interest: interest)
    #endif
    case .poll(let notifier): notifier.modify(fd: fd, interest: interest)
    }
  }

  @inline(__always)
  func remove(fd: Int32, closing: Bool) {
    switch self {
    #if os(Linux)
      case .epoll(let notifier): notifier.remove(fd: fd, closing: closing)
    #endif
    case .poll(let notifier): notifier.remove(fd: fd, closing: closing)
    }
  }

  /// Any thread.
  func wake() {
    switch self {
    #if os(Linux)
      case .epoll(let notifier): notifier.wake()
    #endif
    case .poll(let notifier): notifier.wake()
    }
  }

  func acknowledgeWake() {
    switch self {
    #if os(Linux)
      case .epoll(let notifier): notifier.acknowledgeWake()
    #endif
    case .poll(let notifier): notifier.acknowledgeWake()
    }
  }
}
