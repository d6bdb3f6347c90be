/// Response content produced while the connection writes it: by another thread (a proxy stub relaying a
/// large upstream answer, ``StreamedBody``), by other requests (the dashboard's feed,
/// ``EventStreamSubscription``), or by timers. One plan step,
/// ``ResponsePlan/Step/streamedResponse(_:framing:source:)``, and one pump in the connection serve them all.
///
/// The connection calls every method on its event loop's thread; a source may be fed from any thread and
/// wakes the connection through the closure given to ``attach(wake:)``.
public protocol ContentSource: AnyObject, Sendable {
  /// Sets how to wake the connection (callable from any thread, at most once per wake-up asked for) when
  /// content or the end is ready.
  /// - Returns: true when content (or the end) already waits.
  func attach(wake: @escaping @Sendable () -> Void) -> Bool
  /// Takes the content produced so far, about `maxBytes` at most (at least one piece when any waits),
  /// and the end once nothing is left before it.
  /// - Parameter maxBytes: the room left under ``outputBound`` (> 0).
  func take(maxBytes: Int) -> (bytes: [UInt8], end: ContentEnd?)
  /// Stops the content: the connection went away, the server stops, or the response carries none
  /// (`HEAD`, `204`, `304`). Idempotent; what feeds the source should stop.
  func cancel()
  /// Most unsent output, in bytes, the connection keeps before it stops taking content (back-pressure:
  /// content waits in the source, whose producer slows down or drops).
  var outputBound: Int { get }
  /// Bytes written while the output has been idle for `intervalMilliseconds` (an event stream's comment
  /// line, which keeps proxies and clients from timing the connection out), or nil for none.
  var heartbeat: ContentHeartbeat? { get }
  /// The server is stopping gracefully: a source whose content would not end by itself soon (an `x-sse`
  /// stream) ends it now, so the response ends properly instead of being cut when the grace runs out.
  /// Called on the loop's thread. The default does nothing.
  func serverStopping()
  /// For content due at a time (a timer-fed source): the monotonic time in nanoseconds (the clock of
  /// `CLOCK_MONOTONIC`) at which the connection takes again without being woken, asked after each `take`
  /// that returned no end; nil for none. The connection's event loop keeps that timer, so a timed source
  /// needs no timer thread of its own. The default is nil.
  var nextTakeDeadline: UInt64? { get }
}

extension ContentSource {
  /// Default: nothing (the content ends by itself, or the grace cuts it).
  public func serverStopping() {}
  /// Default: none (the source wakes the connection itself).
  public var nextTakeDeadline: UInt64? { nil }
}

/// How a ``ContentSource``'s content ended.
public enum ContentEnd: Sendable {
  /// Every byte was produced; the response ends properly (the last chunk, when chunked).
  case finished
  /// The content cannot be completed (an upstream reset part way): the connection closes after what it
  /// sent, so the client sees a truncated response rather than a complete-looking one.
  case failed
}

/// A keep-alive written while a stream's output is idle.
public struct ContentHeartbeat: Sendable {
  /// The bytes (e.g. `: heartbeat\n\n`, a comment line of `text/event-stream`).
  public var bytes: [UInt8]
  /// Idle time before each, in milliseconds (1...86,400,000).
  public var intervalMilliseconds: Int

  /// Creates a heartbeat; the interval is clamped to 1...86,400,000 ms.
  public init(bytes: [UInt8], intervalMilliseconds: Int) {
    self.bytes = bytes
    self.intervalMilliseconds = min(max(intervalMilliseconds, 1), 86_400_000)
  }
}

/// How a streamed response's content is delimited (RFC 9112 §6).
public enum ContentFraming: Sendable, Hashable {
  /// `Content-Length` announces exactly this many bytes (≥ 0).
  case length(Int)
  /// Chunked transfer coding (RFC 9112 §7.1) for HTTP/1.1; for an HTTP/1.0 client the content ends when
  /// the connection closes.
  case chunked
  /// No length and no chunking: the content ends when the connection closes (RFC 9112 §6.3), which it
  /// does after the stream (a live event stream, which only ends when the client leaves).
  case untilClose

  /// The announced length, or nil.
  var length: Int? {
    if case .length(let n) = self { return n }
    return nil
  }
}

/// A protocol the connection switched to after `101 Switching Protocols` (RFC 9110 §7.8; a WebSocket,
/// RFC 6455): its output is content like any ``ContentSource``'s, pumped by the connection, and every byte
/// the connection receives from then on (those already buffered after the request's head first) goes to
/// ``receive(_:)``. Its content ending (``ContentEnd/finished``) closes the connection; the peer closing or
/// the connection failing cancels it (``ContentSource/cancel()``).
public protocol UpgradedSession: ContentSource {
  /// Loop thread: bytes received; output they cause is taken by the connection's pump right after.
  func receive(_ bytes: UnsafeRawBufferPointer)
  /// Loop thread: the server stops; the session queues its goodbye (a WebSocket's close 1001) and ends its
  /// content without waiting for the peer.
  func serverStopping()
}
