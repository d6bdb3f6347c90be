/// How much of a response body has arrived.
public struct DownloadProgress: Sendable, Hashable {
  /// Body bytes received so far.
  public var receivedBytes: Int64
  /// The expected body size in bytes (from `Content-Length`), or nil when unknown (chunked, close-framed).
  public var expectedBytes: Int64?

  /// Creates a progress value.
  public init(receivedBytes: Int64, expectedBytes: Int64?) {
    self.receivedBytes = receivedBytes
    self.expectedBytes = expectedBytes
  }

  /// `receivedBytes / expectedBytes` in 0...1, or nil when the size is unknown. A zero-length body is 1.
  public var fraction: Double? {
    guard let expectedBytes else { return nil }
    if expectedBytes <= 0 { return 1 }
    return min(1, Double(receivedBytes) / Double(expectedBytes))
  }
}

/// Receives download progress; called on an arbitrary thread, possibly often.
public typealias ProgressHandler = @Sendable (DownloadProgress) -> Void
