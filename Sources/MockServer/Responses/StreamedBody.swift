import Dispatch
import Synchronization

/// Response content produced on another thread and written by the connection as it arrives: a proxy
/// stub relays an upstream's answer through one (``ResponsePlan/Step/streamedResponse(_:framing:source:)``).
///
/// A bounded queue between one producer and the connection's event loop. The producer's
/// ``write(_:timeoutMilliseconds:)`` blocks while ``capacity`` bytes wait; the connection takes bytes only
/// while its own unsent output is under its bound, so a client that reads slowly slows the producer
/// (and so the upstream read) down instead of growing memory: a body of any size costs at most the
/// queue, the connection's output bound and the socket buffers.
public final class StreamedBody: ContentSource {
  private struct State {
    var chunks: [[UInt8]] = []
    var head = 0
    var queuedBytes = 0
    var end: ContentEnd?
    var cancelled = false
    var wake: (@Sendable () -> Void)?
    var wakePending = false
    var producerWaiting = false
  }

  /// Bytes queued before the producer waits.
  public let capacity: Int
  private let state = Mutex(State())
  /// Signalled when the consumer makes room or cancels while the producer waits.
  private let room = DispatchSemaphore(value: 0)

  /// Creates an empty body.
  /// - Parameter capacity: bytes queued before ``write(_:timeoutMilliseconds:)`` blocks (at least 1).
  public init(capacity: Int = 256 << 10) {
    self.capacity = max(1, capacity)
  }

  /// True once the connection stopped taking content (the client went away or the server stopped):
  /// the producer should stop producing.
  public var isCancelled: Bool { state.withLock { $0.cancelled } }

  /// Producer thread: queues `bytes`, first waiting while the queue is full. Never call it on an event
  /// loop thread.
  /// - Parameters:
  ///   - bytes: the next content bytes (an empty array is ignored).
  ///   - timeoutMilliseconds: the longest wait for room without the connection taking a byte.
  /// - Returns: false when the content is no longer wanted (cancelled, ended, or no room came in time);
  ///   the producer then stops.
  @discardableResult
  public func write(_ bytes: [UInt8], timeoutMilliseconds: Int = 30_000) -> Bool {
    guard !bytes.isEmpty else { return !isCancelled }
    let wait = DispatchTimeInterval.milliseconds(max(1, min(timeoutMilliseconds, 86_400_000)))
    while true {
      let outcome = state.withLock { s -> (accepted: Bool?, wake: (@Sendable () -> Void)?) in
        if s.cancelled || s.end != nil { return (false, nil) }
        if s.queuedBytes > 0, s.queuedBytes + bytes.count > capacity {
          s.producerWaiting = true
          return (nil, nil)
        }
        s.chunks.append(bytes)
        s.queuedBytes += bytes.count
        guard !s.wakePending, let wake = s.wake else { return (true, nil) }
        s.wakePending = true
        return (true, wake)
      }
      if let accepted = outcome.accepted {
        outcome.wake?()
        return accepted
      }
      if room.wait(timeout: .now() + wait) == .timedOut {
        let stillFull = state.withLock { s in
          s.producerWaiting && !s.cancelled && s.queuedBytes + bytes.count > capacity
        }
        if stillFull { return false }
      }
    }
  }

  /// Producer thread: every byte was written; the connection ends the response once it has sent them.
  public func finish() { end(.finished) }

  /// Producer thread: the content cannot be completed; the connection closes after what it has sent.
  public func fail() { end(.failed) }

  private func end(_ how: ContentEnd) {
    let wake = state.withLock { s -> (@Sendable () -> Void)? in
      guard s.end == nil, !s.cancelled else { return nil }
      s.end = how
      guard !s.wakePending, let wake = s.wake else { return nil }
      s.wakePending = true
      return wake
    }
    wake?()
  }

  /// Most unsent output the connection keeps before it stops taking content (its producer then waits:
  /// back-pressure up to the upstream).
  public var outputBound: Int { 256 << 10 }

  /// None: the content flows or the producer's own timeout ends it.
  public var heartbeat: ContentHeartbeat? { nil }

  /// Loop thread: sets how to wake the connection; true when content (or the end) already waits.
  public func attach(wake: @escaping @Sendable () -> Void) -> Bool {
    state.withLock { s in
      s.wake = wake
      let waiting = s.queuedBytes > 0 || s.end != nil
      s.wakePending = waiting
      return waiting
    }
  }

  /// Loop thread: takes queued bytes, at most about `maxBytes` (at least one queued piece), and the end
  /// once nothing is left before it. Wakes a waiting producer when room was made.
  public func take(maxBytes: Int) -> (bytes: [UInt8], end: ContentEnd?) {
    let (bytes, end, signal) = state.withLock { s -> ([UInt8], ContentEnd?, Bool) in
      var out: [UInt8] = []
      while s.head < s.chunks.count, out.isEmpty || out.count + s.chunks[s.head].count <= maxBytes {
        if out.isEmpty {
          out = s.chunks[s.head]
        } else {
          out.append(contentsOf: s.chunks[s.head])
        }
        s.chunks[s.head] = []
        s.head += 1
      }
      s.queuedBytes -= out.count
      if s.head == s.chunks.count {
        s.chunks.removeAll(keepingCapacity: true)
        s.head = 0
        if s.end == nil { s.wakePending = false }
      }
      let signal = s.producerWaiting && !out.isEmpty
      if signal { s.producerWaiting = false }
      return (out, s.queuedBytes == 0 ? s.end : nil, signal)
    }
    if signal { room.signal() }
    return (bytes, end)
  }

  /// Loop thread: stops taking content (the connection closed, or the response has no content); the
  /// producer's next write returns false. Idempotent.
  public func cancel() {
    let signal = state.withLock { s -> Bool in
      s.cancelled = true
      s.chunks = []
      s.head = 0
      s.queuedBytes = 0
      s.wake = nil
      let waiting = s.producerWaiting
      s.producerWaiting = false
      return waiting
    }
    if signal { room.signal() }
  }
}
