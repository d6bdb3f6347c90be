import Synchronization

/// The content of an `x-sse` stub's response (docs/streaming.md, "Server-sent events"): its events,
/// rendered and framed once per request, each handed to the connection when due.
///
/// Timer-fed: after each take the stream names when its next event is due (or its hold ends,
/// ``nextTakeDeadline``), and the connection's event loop takes again then, from its own timer heap. An
/// open stream costs its events, this object and one loop timer, never a thread.
/// Delays count from the previous event's write (from the head for the first). A pass of the list that
/// took less than a millisecond (every delay 0) is followed by the next one a millisecond later at the
/// soonest, so a looping stream of zero delays cannot keep the loop's thread to itself.
final class ServerSentEventsStream: ContentSource {
  /// One event, framed (`event:`, `id:`, `retry:`, `data:` lines and the blank line).
  struct Event: Sendable {
    var bytes: [UInt8]
    /// Waited before it (0...86,400,000 ms).
    var delayMilliseconds: Int
  }

  /// What follows the last pass.
  enum Ending: Sendable, Equatable {
    /// The response ends (`closeConnection: true`).
    case finish
    /// The stream stays open this many milliseconds (`closeConnection: false`, `--max-hold-ms`), then
    /// ends.
    case hold(milliseconds: Int)
  }

  private struct State {
    /// The next event to write.
    var index: Int
    /// Passes begun (the first counts).
    var pass = 1
    /// When the next event (or the end of the hold) is due, monotonic ns; set when the head is written.
    var dueAt: UInt64 = 0
    /// When the current pass began, monotonic ns.
    var passStartedAt: UInt64 = 0
    /// The last pass is over and the stream holds until `dueAt`.
    var holding = false
    var end: ContentEnd?
    var cancelled = false
    /// The connection wrote the head and takes the content.
    var attached = false
    var wake: (@Sendable () -> Void)?
  }

  let events: [Event]
  /// Passes of the list (`repeat`), nil to loop until the client leaves.
  let passes: Int?
  let ending: Ending
  let heartbeat: ContentHeartbeat?
  private let state: Mutex<State>

  /// Creates a stream.
  /// - Parameters:
  ///   - events: the framed events (rendered for this request).
  ///   - startIndex: the first event of the first pass (after `Last-Event-ID`'s), 0...events.count.
  ///   - passes: `repeat` (≥ 1), nil for `loop`.
  ///   - ending: what follows the last pass (ignored when looping).
  ///   - heartbeatMilliseconds: idle time before a `:` comment line, 0 for none.
  init(events: [Event], startIndex: Int, passes: Int?, ending: Ending, heartbeatMilliseconds: Int) {
    self.events = events
    self.passes = passes.map { max(1, $0) }
    self.ending = ending
    heartbeat =
      heartbeatMilliseconds > 0
      ? ContentHeartbeat(bytes: Array(":\n".utf8), intervalMilliseconds: heartbeatMilliseconds) : nil
    state = Mutex(State(index: min(max(0, startIndex), events.count)))
  }

  /// Unsent output the connection keeps before it stops taking events (they wait here, due).
  var outputBound: Int { 64 << 10 }

  /// True once the connection wrote the head and took the stream (false when the client left during the
  /// head's delay, or the response carried no content: `HEAD`).
  var headWritten: Bool { state.withLock { $0.attached } }

  /// Loop thread, right after the head is written: delays count from now.
  func attach(wake: @escaping @Sendable () -> Void) -> Bool {
    let now = SocketOps.monotonicNanos()
    return state.withLock { s in
      guard !s.cancelled else { return false }
      s.attached = true
      s.wake = wake
      s.passStartedAt = now
      s.dueAt = s.index < events.count ? now + Self.nanos(events[s.index].delayMilliseconds) : now
      return true
    }
  }

  /// Loop thread: the events due now (at least one when one is due, about `maxBytes` at most), and the end
  /// once the last pass (and its hold) is over.
  func take(maxBytes: Int) -> (bytes: [UInt8], end: ContentEnd?) {
    let now = SocketOps.monotonicNanos()
    return state.withLock { s in
      guard !s.cancelled else { return ([], nil) }
      var out: [UInt8] = []
      while s.end == nil {
        if s.holding {
          if now >= s.dueAt { s.end = .finished }
          break
        }
        if s.index == events.count {
          // A pass is over: another, a hold, or the end.
          let more = passes.map { s.pass < $0 } ?? true
          if more, !events.isEmpty {
            s.pass += 1
            s.index = 0
            let soonest = s.passStartedAt + 1_000_000
            s.dueAt = max(now + Self.nanos(events[0].delayMilliseconds), soonest)
            s.passStartedAt = max(now, soonest)
            if s.dueAt > now { break }
            continue
          }
          if passes == nil {
            // A loop without events: open until the client leaves.
            s.holding = true
            s.dueAt = .max
            break
          }
          switch ending {
          case .finish:
            s.end = .finished
          case .hold(let ms):
            s.holding = true
            s.dueAt = now + Self.nanos(ms)
            continue
          }
          break
        }
        guard s.dueAt <= now, out.isEmpty || out.count + events[s.index].bytes.count <= maxBytes else {
          break
        }
        out.append(contentsOf: events[s.index].bytes)
        s.index += 1
        if s.index < events.count { s.dueAt = now + Self.nanos(events[s.index].delayMilliseconds) }
      }
      return (out, s.end)
    }
  }

  /// The server stops: the stream ends now (the last chunk), whatever is left.
  func serverStopping() {
    let wake = state.withLock { s -> (@Sendable () -> Void)? in
      guard !s.cancelled, s.end == nil else { return nil }
      s.end = .finished
      return s.wake
    }
    wake?()
  }

  /// The client left, the server stopped or the response has no content: nothing more is taken.
  func cancel() {
    state.withLock { s in
      s.cancelled = true
      s.wake = nil
    }
  }

  /// When the next event is due, or the hold ends (monotonic ns); nil once ended, or when only the client's
  /// leaving ends the stream (a loop without events).
  var nextTakeDeadline: UInt64? {
    state.withLock { s in s.cancelled || s.end != nil || !s.attached || s.dueAt == .max ? nil : s.dueAt }
  }

  private static func nanos(_ milliseconds: Int) -> UInt64 { UInt64(max(0, milliseconds)) * 1_000_000 }
}
