/// Sends one HTTP request and returns the complete response: the layer under ``APIClient``.
///
/// Implementations map every failure to an ``APIError`` transport case (``APIError/timedOut(limit:request:)``,
/// ``APIError/cannotConnect(_:reason:)``, ``APIError/connectionReset(_:)``, ``APIError/emptyResponse(_:)``,
/// ``APIError/connectionLost(_:receivedBytes:)``, ``APIError/truncatedBody(_:statusCode:expected:received:)``,
/// ``APIError/malformedResponse(_:detail:)``, ``APIError/tlsFailure(_:_:)``, ``APIError/cancelled``),
/// enforce ``TransportRequest/timeout`` as a total deadline, stop when the calling task is cancelled, and
/// never re-send a request that is not idempotent.
///
/// Which transport ``APIClient`` uses when none is given: ``URLSessionTransport`` on Apple platforms,
/// ``AutomaticTransport`` on Linux: ``SocketTransport`` for `http` (Linux `URLSession` rounds timeouts down
/// to whole seconds and may re-send a request on a reused connection) and ``URLSessionTransport`` for
/// `https`.
public protocol Transport: Sendable {
  /// Sends `request` and waits for the whole response.
  /// - Parameters:
  ///   - request: the built request.
  ///   - progress: called as body bytes arrive, or nil.
  /// - Returns: the response, whatever its status code.
  /// - Throws: an ``APIError`` transport case, or ``APIError/cancelled``.
  func send(_ request: TransportRequest, progress: ProgressHandler?) async throws(APIError)
    -> TransportResponse
}
