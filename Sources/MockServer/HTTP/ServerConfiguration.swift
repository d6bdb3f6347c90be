import HTTPCore

/// Settings of the HTTP listener and its connections. Times are in milliseconds.
public struct ServerConfiguration: Sendable {
  /// Address to bind: an IPv4 or IPv6 literal or a host name (`127.0.0.1`, `::1`, `0.0.0.0`, `localhost`).
  public var host: String = "127.0.0.1"
  /// TCP port; 0 lets the kernel pick a free one (read it back from the server after start).
  public var port: Int = 8080
  /// Parser limits for every request.
  public var limits = ParserLimits()
  /// A keep-alive connection with no request in progress is closed after this long (default 60 000 ms).
  public var idleTimeoutMilliseconds = 60_000
  /// A request head (request-line and fields) must complete within this long of its first byte, or the
  /// client gets 408 and the connection closes (default 15 000 ms). Defeats slow-header clients.
  public var requestHeadTimeoutMilliseconds = 15_000
  /// Most request content buffered at once across all connections (requests still being received), in
  /// bytes; a request whose content would go beyond it gets 503 and the connection closes (default
  /// 256 MiB). Without it, unfinished uploads were bounded only by connections × `limits.maxBodyBytes`.
  public var maxBufferedRequestBytes = 256 << 20
  /// Most simultaneous connections; beyond it a new connection gets 503 and is closed (default 10 000).
  public var maxConnections = 10_000
  /// Longest a `hold` step (no response / stall faults) keeps a connection, in ms (default 300 000).
  public var maxHoldMilliseconds = 300_000
  /// On shutdown, responses in flight get this long to finish before connections are closed (ms).
  public var shutdownGraceMilliseconds = 5_000
  /// Value of the `Server` field on every response, or nil for none.
  public var serverHeader: String? = "mockserver"
  /// Number of event-loop threads (SO_REUSEPORT listeners when more than one). Default 1.
  public var eventLoops = 1
  /// The readiness mechanism of the event loops (`--event-loop`); nil (the default) takes
  /// `MOCKSERVER_EVENT_LOOP` when it is set, else the system's own (``EventLoopBackend/platformDefault``).
  public var eventLoopBackend: EventLoopBackend?

  /// Creates the default configuration.
  public init() {}
}
