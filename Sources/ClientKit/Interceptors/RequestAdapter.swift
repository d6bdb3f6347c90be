/// Changes a built request before it is sent: adds headers, parameters, signatures.
///
/// Adapters run in the order given to ``APIClient``, after the client has applied its base URL, default
/// headers and query items, body and authentication, and again for every retry (so timestamps and
/// signatures are fresh). Put signing last.
public protocol RequestAdapter: Sendable {
  /// Returns the adapted request.
  /// - Parameter request: the request as built so far.
  /// - Returns: the request to send.
  /// - Throws: any error; an ``APIError`` is passed through, anything else becomes
  ///   ``APIError/invalidRequest(_:)``.
  func adapt(_ request: TransportRequest) async throws -> TransportRequest
}

/// A ``RequestAdapter`` made from a closure.
public struct ClosureAdapter: RequestAdapter {
  private let body: @Sendable (TransportRequest) async throws -> TransportRequest

  /// Creates an adapter that calls `body`.
  public init(_ body: @escaping @Sendable (TransportRequest) async throws -> TransportRequest) {
    self.body = body
  }

  /// Calls the closure.
  public func adapt(_ request: TransportRequest) async throws -> TransportRequest {
    try await body(request)
  }
}
