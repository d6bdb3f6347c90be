/// How the server talks to upstreams (proxy stubs, `--proxy-all`, recording). Times in milliseconds.
public struct ProxyConfiguration: Sendable, Equatable {
  /// Longest wait without progress on an upstream exchange (`--proxy-timeout-ms`, default 30 000): while
  /// connecting, sending, or waiting for the next bytes of the response. Past it the client gets 504.
  public var timeoutMilliseconds = 30_000
  /// Extra CA certificates (PEM file) trusted for upstream HTTPS besides the system store (`--proxy-ca`).
  public var caFile: String?
  /// Accept any upstream certificate (`--proxy-insecure`).
  public var insecure = false
  /// Largest upstream response content buffered, in bytes (default 64 MiB, `--max-body-bytes`): what a
  /// recording session keeps of one response (longer ones are recorded cut, and say so). Relayed content
  /// is streamed and has no limit.
  public var maxBodyBytes = 64 << 20
  /// Base URL that requests no stub matches are forwarded to (`--proxy-all`), or nil for 404s.
  public var proxyAllBaseURL: String?
  /// Record the exchanges proxied (`--record-mappings`, and `mockserver record`) from the start.
  public var recordFromStart = false
  /// Most upstream exchanges in flight at once; more get 503 (each holds a thread while it waits).
  public var maxConcurrentExchanges = 256

  /// Defaults.
  public init() {}
}
