/// How ``APIClient/events(for:configuration:)`` reads a `text/event-stream` and reconnects, with the
/// defaults of a browser's `EventSource`.
public struct EventStreamConfiguration: Sendable, Hashable {
  /// The wait before reconnecting until the server sets one with a `retry` field (WHATWG's
  /// "reconnection time"; default 3 s). Negative values count as zero.
  public var reconnectionTime: Duration
  /// Whether the stream reconnects after the response ends or the connection fails (default true). When
  /// false, the events stream finishes when the response ends and throws when the connection fails.
  public var reconnects: Bool
  /// Most consecutive failed connection attempts (no response head, or the connection lost before any
  /// event) before the stream throws the last failure; nil (default) retries for as long as the stream is
  /// consumed, as `EventSource` does.
  public var maxReconnectionAttempts: Int?
  /// The last event ID to resume from: sent as `Last-Event-ID` on the first connection too when not
  /// empty (default empty).
  public var lastEventID: String
  /// The longest line accepted, in bytes (default 1 MiB, at least 1); a longer one fails the stream with
  /// ``APIError/malformedResponse(_:detail:)``.
  public var maxLineBytes: Int

  /// Creates a configuration.
  public init(
    reconnectionTime: Duration = .seconds(3), reconnects: Bool = true, maxReconnectionAttempts: Int? = nil,
    lastEventID: String = "", maxLineBytes: Int = 1 << 20
  ) {
    self.reconnectionTime = max(.zero, reconnectionTime)
    self.reconnects = reconnects
    self.maxReconnectionAttempts = maxReconnectionAttempts.map { max(0, $0) }
    self.lastEventID = lastEventID
    self.maxLineBytes = max(1, maxLineBytes)
  }
}
