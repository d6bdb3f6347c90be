/// Picks a transport per request: ``SocketTransport`` for `http` URLs, ``URLSessionTransport`` for
/// `https` (``SocketTransport`` has no TLS). This is ``APIClient``'s default on Linux.
public final class AutomaticTransport: Transport {
  /// The transport for `http` URLs.
  public let plain: SocketTransport
  /// The transport for `https` URLs.
  public let secure: URLSessionTransport

  /// Creates the pair.
  /// - Parameters:
  ///   - plain: transport for `http` (default a new ``SocketTransport``).
  ///   - secure: transport for `https` (default a new ``URLSessionTransport``).
  public init(plain: SocketTransport = SocketTransport(), secure: URLSessionTransport = URLSessionTransport())
  {
    self.plain = plain
    self.secure = secure
  }

  /// Sends with ``plain`` or ``secure`` depending on the URL scheme.
  /// - Throws: whatever the chosen transport throws.
  public func send(_ request: TransportRequest, progress: ProgressHandler?) async throws(APIError)
    -> TransportResponse
  {
    if request.url.scheme?.lowercased() == "http" {
      return try await plain.send(request, progress: progress)
    }
    return try await secure.send(request, progress: progress)
  }
}
