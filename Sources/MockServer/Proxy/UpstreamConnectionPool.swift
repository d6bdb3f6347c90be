import Dispatch
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Idle persistent connections to upstreams (RFC 9112 §9.3), kept per origin (scheme, host and port) for
/// the next exchange with it: proxy stubs, `--proxy-all` and recording sessions share one pool.
///
/// Bounded: at most ``maxIdlePerOrigin`` idle connections per origin and ``maxOrigins`` origins (the
/// oldest idle connection goes first), none kept longer than ``idleTimeoutMilliseconds``. A connection is
/// only put back after a response read to its end on a connection that can carry another (see
/// ``UpstreamResponse/release()``), never after an error or `Connection: close`. Taking one checks it
/// first: a connection the upstream closed meanwhile (readable: end of stream or stray bytes) is closed
/// and the next is tried.
package final class UpstreamConnectionPool: Sendable {
  /// Idle connections kept per origin.
  package let maxIdlePerOrigin: Int
  /// Origins with idle connections kept.
  package let maxOrigins: Int
  /// Longest time a connection stays idle in the pool, in ms.
  package let idleTimeoutMilliseconds: Int

  private struct Idle: @unchecked Sendable {
    // @unchecked: a stream in the pool belongs to no thread; it is handed to exactly one taker under the
    // pool's lock, and only that thread uses it afterwards.
    let stream: any ByteStream
    let since: UInt64
  }

  private let idle = Mutex<[String: [Idle]]>([:])
  /// A sweep is scheduled: idle connections are closed when their time is up even if no exchange comes
  /// (they stayed open for good, half-closed once the upstream gave up, holding descriptors).
  private let sweepScheduled = Atomic<Bool>(false)

  /// Creates an empty pool.
  package init(maxIdlePerOrigin: Int = 32, maxOrigins: Int = 16, idleTimeoutMilliseconds: Int = 4_000) {
    self.maxIdlePerOrigin = max(0, maxIdlePerOrigin)
    self.maxOrigins = max(1, maxOrigins)
    self.idleTimeoutMilliseconds = max(0, idleTimeoutMilliseconds)
  }

  deinit { closeAll() }

  /// Idle connections now, over every origin.
  package var idleCount: Int { idle.withLock { $0.values.reduce(0) { $0 + $1.count } } }

  /// The most recently used idle connection to `origin` that is still open, or nil.
  func checkout(_ origin: String) -> (any ByteStream)? {
    while true {
      let (candidate, expired) = idle.withLock { all -> (Idle?, [Idle]) in
        let expired = removeExpired(&all)
        // Changed in place: a list copied out of the dictionary and stored back was copied whole (a
        // retain and a release per idle connection) on every exchange, under the lock all exchange
        // threads share.
        guard let last = all[origin]?.popLast() else { return (nil, expired) }
        if all[origin]?.isEmpty == true { all[origin] = nil }
        return (last, expired)
      }
      for entry in expired { entry.stream.close(reset: false) }
      guard let candidate else { return nil }
      if Self.isOpen(candidate.stream) { return candidate.stream }
      candidate.stream.close(reset: false)
    }
  }

  /// Keeps `stream` for the next exchange with `origin` (closing the oldest idle one over the bounds).
  func checkin(_ stream: any ByteStream, key origin: String) {
    guard maxIdlePerOrigin > 0, idleTimeoutMilliseconds > 0 else {
      stream.close(reset: false)
      return
    }
    let now = SocketOps.monotonicNanos()
    let closing = idle.withLock { all -> [Idle] in
      var closing = removeExpired(&all)
      all[origin, default: []].append(Idle(stream: stream, since: now))
      if let count = all[origin]?.count, count > maxIdlePerOrigin, let oldest = all[origin]?.removeFirst() {
        closing.append(oldest)
      }
      while all.count > maxOrigins {
        // The origin whose newest idle connection is the oldest.
        guard let victim = all.min(by: { ($0.value.last?.since ?? 0) < ($1.value.last?.since ?? 0) })?.key,
          let removed = all.removeValue(forKey: victim)
        else { break }
        closing += removed
      }
      return closing
    }
    for entry in closing { entry.stream.close(reset: false) }
    scheduleSweep(afterNanos: UInt64(idleTimeoutMilliseconds) * 1_000_000)
  }

  /// Closes the expired idle connections after `nanos` (once: a sweep already scheduled covers it), then
  /// again when the oldest one left is due.
  private func scheduleSweep(afterNanos nanos: UInt64) {
    guard
      sweepScheduled.compareExchange(expected: false, desired: true, ordering: .acquiringAndReleasing)
        .exchanged
    else { return }
    DispatchQueue.global(qos: .utility).asyncAfter(
      deadline: .now() + .nanoseconds(Int(min(nanos, 1 << 40)) + 1_000_000)
    ) { [weak self] in
      self?.sweep()
    }
  }

  private func sweep() {
    // Cleared first: a connection checked in from here on schedules its own sweep.
    sweepScheduled.store(false, ordering: .sequentiallyConsistent)
    let limit = UInt64(idleTimeoutMilliseconds) * 1_000_000
    let (expired, oldest) = idle.withLock { all -> ([Idle], UInt64?) in
      (removeExpired(&all), all.values.compactMap { $0.first?.since }.min())
    }
    for entry in expired { entry.stream.close(reset: false) }
    guard let oldest else { return }
    let now = SocketOps.monotonicNanos()
    scheduleSweep(afterNanos: oldest &+ limit > now ? oldest &+ limit - now : 0)
  }

  /// Closes every idle connection.
  package func closeAll() {
    let all = idle.withLock { all -> [Idle] in
      defer { all = [:] }
      return all.values.flatMap { $0 }
    }
    for entry in all { entry.stream.close(reset: false) }
  }

  /// Removes (and returns, to be closed outside the lock) connections idle for longer than the timeout.
  private func removeExpired(_ all: inout [String: [Idle]]) -> [Idle] {
    let now = SocketOps.monotonicNanos()
    let limit = UInt64(idleTimeoutMilliseconds) * 1_000_000
    var expired: [Idle] = []
    for (origin, list) in all {
      guard let first = list.first, now - first.since > limit else { continue }
      let kept = list.filter { now - $0.since <= limit }
      expired += list.filter { now - $0.since > limit }
      all[origin] = kept.isEmpty ? nil : kept
    }
    return expired
  }

  /// True when nothing is waiting to be read on the idle connection: a readable one was closed by the
  /// upstream (end of stream, reset) or holds bytes no request asked for. A TLS record that carries no
  /// application data (a session ticket) is consumed and the connection kept.
  private static func isOpen(_ stream: any ByteStream) -> Bool {
    var descriptor = pollfd(fd: stream.fd, events: Int16(POLLIN), revents: 0)
    let rc = poll(&descriptor, 1, 0)
    if rc == 0 && !stream.hasBufferedInput { return true }
    if rc < 0 { return false }
    var byte: [UInt8] = [0]
    let result = byte.withUnsafeMutableBytes { stream.read(into: $0) }
    if case .wouldBlock(let wantsWrite) = result { return !wantsWrite }
    return false
  }
}
