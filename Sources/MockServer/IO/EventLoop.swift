import CLinuxShims
import Foundation
import HTTPCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Receives readiness events for one descriptor registered with an ``EventLoop``.
protocol EventHandler: AnyObject {
  /// Called on the loop thread when the descriptor is readable, writable, or hung up.
  func handleEvent(readable: Bool, writable: Bool, hangUp: Bool)
}

/// A cancellable one-shot timer on an ``EventLoop``. Touched only on the loop thread.
final class LoopTimer {
  fileprivate let deadline: UInt64
  fileprivate let sequence: UInt64
  fileprivate var action: (() -> Void)?
  fileprivate init(deadline: UInt64, sequence: UInt64, action: @escaping () -> Void) {
    self.deadline = deadline
    self.sequence = sequence
    self.action = action
  }
  /// Prevents the action from running; safe to call more than once.
  func cancel() { action = nil }
  /// True until the timer fired or was cancelled.
  var isPending: Bool { action != nil }
}

/// One epoll event-loop thread: level-triggered readiness for many descriptors, a timer heap driving
/// `epoll_wait`'s timeout, and an eventfd-woken queue for work submitted from other threads.
///
/// Invariant (why `@unchecked Sendable` is sound): every stored property except `inbox` and `epollFD`/
/// `wakeFD` (immutable after init) is read and written only on the loop's own thread; other threads talk
/// to the loop only through ``execute(_:)``, which goes through the `Mutex`-guarded inbox. Those
/// properties are `@exclusivity(unchecked)`: confined to one thread, their dynamic exclusivity checks
/// (`swift_beginAccess`, three per request in `run`) guarded nothing.
final class EventLoop: @unchecked Sendable {
  private let epollFD: Int32
  private let wakeFD: Int32
  private let inbox = Mutex<[@Sendable () -> Void]>([])
  @exclusivity(unchecked) private var handlers: [EventHandler?] = []
  @exclusivity(unchecked) private var interests: [UInt32] = []
  @exclusivity(unchecked) private var timers: [LoopTimer] = []
  @exclusivity(unchecked) private var timerSequence: UInt64 = 0
  /// Timers cancelled through ``cancel(_:)`` that may still sit in the heap.
  @exclusivity(unchecked) private var cancelledTimers = 0
  @exclusivity(unchecked) private var stopped = false
  private let threadID = Mutex<pthread_t?>(nil)
  /// The loop's reusable read buffer (one per loop: only its thread reads into it).
  let readBuffer: UnsafeMutableRawBufferPointer
  /// Cached `Date` header value, refreshed at most once per second.
  @exclusivity(unchecked) private var dateCache: (second: Int, bytes: [UInt8]) = (-1, [])

  /// Creates the loop's epoll and eventfd descriptors.
  /// - Throws: ``IOError`` when the kernel refuses them.
  init(readBufferSize: Int = 65536) throws(IOError) {
    let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
    guard ep >= 0 else { throw IOError("epoll_create1", errno: errno) }
    let ev = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    guard ev >= 0 else {
      Glibc.close(ep)
      throw IOError("eventfd", errno: errno)
    }
    epollFD = ep
    wakeFD = ev
    readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readBufferSize, alignment: 16)
    var event = epoll_event()
    event.events = EPOLLIN.rawValue
    event.data.fd = ev
    epoll_ctl(ep, EPOLL_CTL_ADD, ev, &event)
  }

  deinit {
    readBuffer.deallocate()
    Glibc.close(epollFD)
    Glibc.close(wakeFD)
  }

  /// Starts the loop on a new thread named `name` (a POSIX thread with a 1 MiB stack: Foundation's
  /// `Thread` paged in about 0.25 MiB of Foundation's code at start, issue 20's idle memory).
  func start(name: String) {
    final class Start {
      let loop: EventLoop
      let name: String
      init(_ loop: EventLoop, _ name: String) {
        self.loop = loop
        self.name = name
      }
    }
    var attributes = pthread_attr_t()
    pthread_attr_init(&attributes)
    defer { pthread_attr_destroy(&attributes) }
    // 16 MiB of address space (pages are committed only when touched): input nested to the parsers'
    // limits (512 JSON levels, 100 template blocks) recurses on this stack in debug builds too.
    pthread_attr_setstacksize(&attributes, 16 << 20)
    let start = Unmanaged.passRetained(Start(self, name)).toOpaque()
    var thread = pthread_t()
    let created = pthread_create(
      &thread, &attributes,
      { context in
        let start = Unmanaged<Start>.fromOpaque(context!).takeRetainedValue()
        _ = cshims_set_thread_name(start.name)
        start.loop.threadID.withLock { $0 = pthread_self() }
        start.loop.run()
        return nil
      }, start)
    precondition(created == 0, "EventLoop: pthread_create failed (\(created))")
    pthread_detach(thread)
  }

  /// True when called on the loop's thread.
  var inLoop: Bool {
    threadID.withLock { id in id.map { pthread_equal($0, pthread_self()) != 0 } ?? false }
  }

  /// Runs `work` on the loop thread, soon. Safe from any thread.
  func execute(_ work: @escaping @Sendable () -> Void) {
    inbox.withLock { $0.append(work) }
    var one: UInt64 = 1
    _ = Glibc.write(wakeFD, &one, 8)
  }

  /// Asks the loop to exit after the current iteration. Safe from any thread.
  func stop() {
    execute { [self] in self.stopped = true }
  }

  // MARK: Loop-thread API

  /// Registers `handler` for `fd` with the given interest (EPOLLIN / EPOLLOUT bits).
  func register(fd: Int32, handler: EventHandler, readable: Bool = true, writable: Bool = false) {
    let index = Int(fd)
    if index >= handlers.count {
      let newCount = max(index + 1, handlers.count * 2, 64)
      handlers.append(contentsOf: [EventHandler?](repeating: nil, count: newCount - handlers.count))
      interests.append(contentsOf: [UInt32](repeating: 0, count: newCount - interests.count))
    }
    handlers[index] = handler
    let mask = Self.mask(readable: readable, writable: writable)
    interests[index] = mask
    var event = epoll_event()
    event.events = mask
    event.data.fd = fd
    epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
  }

  /// Changes the interest for a registered `fd`; does nothing if unchanged.
  func setInterest(fd: Int32, readable: Bool, writable: Bool) {
    let index = Int(fd)
    guard index < interests.count, handlers[index] != nil else { return }
    let mask = Self.mask(readable: readable, writable: writable)
    guard interests[index] != mask else { return }
    interests[index] = mask
    var event = epoll_event()
    event.events = mask
    event.data.fd = fd
    epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
  }

  /// Removes `fd` from the loop. Call before closing the descriptor. With `closing`, the descriptor is
  /// about to be closed, which removes it from the epoll set by itself (one system call fewer).
  func deregister(fd: Int32, closing: Bool = false) {
    let index = Int(fd)
    guard index < handlers.count, handlers[index] != nil else { return }
    handlers[index] = nil
    interests[index] = 0
    if !closing { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil) }
  }

  private static func mask(readable: Bool, writable: Bool) -> UInt32 {
    var m: UInt32 = 0
    if readable { m |= EPOLLIN.rawValue | EPOLLRDHUP.rawValue }
    if writable { m |= EPOLLOUT.rawValue }
    return m
  }

  /// Schedules `action` on the loop thread after `milliseconds` (≥ 0). Returns a handle to cancel it.
  @discardableResult
  func schedule(afterMilliseconds milliseconds: Int, _ action: @escaping () -> Void) -> LoopTimer {
    let deadline = SocketOps.monotonicNanos() + ResponseTiming.timerNanoseconds(milliseconds)
    timerSequence += 1
    let timer = LoopTimer(deadline: deadline, sequence: timerSequence, action: action)
    heapPush(timer)
    return timer
  }

  /// Cancels `timer`. Cancelled timers leave the heap lazily; when they outnumber live ones the heap is
  /// rebuilt, so closing many connections (each with a pending lingering-close timer) cannot pile up
  /// dead timers until their deadlines.
  func cancel(_ timer: LoopTimer) {
    guard timer.action != nil else { return }
    timer.cancel()
    cancelledTimers += 1
    if cancelledTimers > 1024, cancelledTimers * 2 > timers.count {
      timers.removeAll { $0.action == nil }
      cancelledTimers = 0
      // Re-establish the heap order.
      var i = timers.count / 2 - 1
      while i >= 0 {
        siftDown(from: i)
        i -= 1
      }
    }
  }

  /// The current `Date` field line, `Date: ` and the IMF-fixdate (RFC 9110 §5.6.7) and CRLF, as UTF-8
  /// bytes, made once per second.
  func httpDateLine() -> [UInt8] {
    var now = time_t()
    time(&now)
    let second = Int(now)
    if second != dateCache.second {
      dateCache = (second, Array("Date: \(HTTPDate.format(Int64(now)))\r\n".utf8))
    }
    return dateCache.bytes
  }

  // MARK: Loop

  private func run() {
    let maxEvents = 256
    var events = [epoll_event](repeating: epoll_event(), count: maxEvents)
    while !stopped {
      let timeout = nextTimeoutMilliseconds()
      let n = events.withUnsafeMutableBufferPointer {
        epoll_wait(epollFD, $0.baseAddress, Int32(maxEvents), timeout)
      }
      if n < 0 {
        if errno == EINTR { continue }
        break
      }
      for i in 0..<Int(n) {
        let event = events[i]
        let fd = event.data.fd
        if fd == wakeFD {
          drainInbox()
          continue
        }
        let index = Int(fd)
        guard index < handlers.count, let handler = handlers[index] else { continue }
        let bits = event.events
        let hangUp = bits & (EPOLLHUP.rawValue | EPOLLERR.rawValue) != 0
        handler.handleEvent(
          readable: bits & (EPOLLIN.rawValue | EPOLLRDHUP.rawValue) != 0 || hangUp,
          writable: bits & EPOLLOUT.rawValue != 0, hangUp: hangUp)
      }
      runDueTimers()
    }
    drainInbox()
  }

  private func drainInbox() {
    var counter: UInt64 = 0
    _ = Glibc.read(wakeFD, &counter, 8)
    let work = inbox.withLock { queue -> [@Sendable () -> Void] in
      let w = queue
      queue.removeAll(keepingCapacity: true)
      return w
    }
    for item in work { item() }
  }

  private func nextTimeoutMilliseconds() -> Int32 {
    while let first = timers.first, first.action == nil { _ = heapPop() }
    guard let first = timers.first else { return -1 }
    let now = SocketOps.monotonicNanos()
    if first.deadline <= now { return 0 }
    let ms = (first.deadline - now + 999_999) / 1_000_000
    return Int32(min(ms, 60_000))
  }

  private func runDueTimers() {
    guard !timers.isEmpty else { return }
    let now = SocketOps.monotonicNanos()
    while let first = timers.first, first.deadline <= now {
      _ = heapPop()
      if let action = first.action {
        first.action = nil
        action()
      }
    }
  }

  // MARK: Timer heap (min-heap on deadline, then sequence)

  private func less(_ a: LoopTimer, _ b: LoopTimer) -> Bool {
    a.deadline != b.deadline ? a.deadline < b.deadline : a.sequence < b.sequence
  }

  private func heapPush(_ timer: LoopTimer) {
    timers.append(timer)
    var i = timers.count - 1
    while i > 0 {
      let parent = (i - 1) / 2
      guard less(timers[i], timers[parent]) else { break }
      timers.swapAt(i, parent)
      i = parent
    }
  }

  private func heapPop() -> LoopTimer? {
    guard !timers.isEmpty else { return nil }
    let top = timers[0]
    let last = timers.removeLast()
    if !timers.isEmpty {
      timers[0] = last
      siftDown(from: 0)
    }
    if top.action == nil, cancelledTimers > 0 { cancelledTimers -= 1 }
    return top
  }

  private func siftDown(from start: Int) {
    var i = start
    while true {
      let l = 2 * i + 1
      let r = l + 1
      var m = i
      if l < timers.count, less(timers[l], timers[m]) { m = l }
      if r < timers.count, less(timers[r], timers[m]) { m = r }
      if m == i { break }
      timers.swapAt(i, m)
      i = m
    }
  }
}
