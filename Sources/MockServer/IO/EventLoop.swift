import Foundation
import HTTPCore
import Synchronization

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
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

/// One event-loop thread: level-triggered readiness for many descriptors from an ``EventNotifier`` (epoll
/// or poll, see ``EventLoopBackend``), a timer heap driving the notifier's wait timeout, and a queue for
/// work submitted from other threads, announced by the notifier's wake-up.
///
/// Invariant (why `@unchecked Sendable` is sound): every stored property except `inbox` and `notifier`
/// (whose ``EventNotifier/wake()`` is safe from any thread) is read and written only on the loop's own
/// thread; other threads talk to the loop only through ``execute(_:)``, which goes through the
/// `Mutex`-guarded inbox. Those properties are `@exclusivity(unchecked)`: confined to one thread, their
/// dynamic exclusivity checks (`swift_beginAccess`, three per request in `run`) guarded nothing.
final class EventLoop: @unchecked Sendable {
  private let notifier: EventNotifier
  private let inbox = Mutex<[@Sendable () -> Void]>([])
  @exclusivity(unchecked) private var handlers: [EventHandler?] = []
  @exclusivity(unchecked) private var interests: [Interest] = []
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

  /// Creates the loop's notifier (its descriptors) of the given backend (default: the environment's,
  /// ``EventLoopBackend/fromEnvironment()``).
  /// - Throws: ``IOError`` when the system refuses them, or the backend is not one this system has.
  init(backend: EventLoopBackend? = nil, readBufferSize: Int = 65536) throws(IOError) {
    if let backend {
      notifier = try EventNotifier(backend)
    } else {
      notifier = try EventNotifier(EventLoopBackend.fromEnvironment())
    }
    readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: readBufferSize, alignment: 16)
  }

  deinit {
    readBuffer.deallocate()
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
        PlatformSocket.setCurrentThreadName(start.name)
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
    notifier.wake()
  }

  /// Asks the loop to exit after the current iteration. Safe from any thread.
  func stop() {
    execute { [self] in self.stopped = true }
  }

  // MARK: Loop-thread API

  /// Registers `handler` for `fd` with the given interest.
  func register(fd: Int32, handler: EventHandler, readable: Bool = true, writable: Bool = false) {
    let index = Int(fd)
    if index >= handlers.count {
      let newCount = max(index + 1, handlers.count * 2, 64)
      handlers.append(contentsOf: [EventHandler?](repeating: nil, count: newCount - handlers.count))
      interests.append(contentsOf: [Interest](repeating: .none, count: newCount - interests.count))
    }
    handlers[index] = handler
    let interest = Interest(readable: readable, writable: writable)
    interests[index] = interest
    notifier.add(fd: fd, interest: interest)
  }

  /// Changes the interest for a registered `fd`; does nothing if unchanged.
  func setInterest(fd: Int32, readable: Bool, writable: Bool) {
    let index = Int(fd)
    guard index < interests.count, handlers[index] != nil else { return }
    let interest = Interest(readable: readable, writable: writable)
    guard interests[index] != interest else { return }
    interests[index] = interest
    notifier.modify(fd: fd, interest: interest)
  }

  /// Removes `fd` from the loop. Call before closing the descriptor. With `closing`, the descriptor is
  /// about to be closed, which ends an epoll registration by itself (one system call fewer).
  func deregister(fd: Int32, closing: Bool = false) {
    let index = Int(fd)
    guard index < handlers.count, handlers[index] != nil else { return }
    handlers[index] = nil
    interests[index] = .none
    notifier.remove(fd: fd, closing: closing)
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
    switch notifier {
    #if os(Linux)
      case .epoll(let epoll): run(epoll)
    #endif
    case .poll(let poll): run(poll)
    }
    drainInbox()
  }

  /// The loop proper, specialised for each backend: no dynamic dispatch per event.
  @inline(__always)
  private func run<Notifier: ReadinessNotifier>(_ notifier: Notifier) {
    while !stopped {
      let n = notifier.wait(timeoutMilliseconds: nextTimeoutMilliseconds())
      if n < 0 { break }
      for i in 0..<n {
        let event = notifier.event(at: i)
        let fd = event.fd
        if fd < 0 {
          drainInbox()
          continue
        }
        let index = Int(fd)
        guard index < handlers.count, let handler = handlers[index] else { continue }
        handler.handleEvent(readable: event.readable, writable: event.writable, hangUp: event.hangUp)
      }
      runDueTimers()
    }
  }

  private func drainInbox() {
    notifier.acknowledgeWake()
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
