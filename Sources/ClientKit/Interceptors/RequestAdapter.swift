/// Changes a built request before it is sent: adds headers, parameters, signatures.
///
/// Adapters run in the order given to ``APIClient``, after the client has applied its base URL, default
/// headers and query items and body, and after its ``AuthenticationInterceptor`` and other
/// ``RequestInterceptor``s, and again for every retry (so timestamps and signatures are fresh). Put
/// signing last.
public protocol RequestAdapter: Sendable {
  /// Returns the adapted request.
  /// - Parameter request: the request as built so far.
  /// - Returns: the request to send.
  /// - Throws: any error; an ``APIError`` is passed through, anything else becomes
  ///   ``APIError/invalidRequest(_:)``.
  func adapt(_ request: TransportRequest) async throws -> TransportRequest

  /// Returns the adapted request, knowing what the call asked for. The client calls this one; the
  /// default implementation calls ``adapt(_:)``.
  /// - Parameters:
  ///   - request: the request as built so far.
  ///   - context: what the call asked for (e.g. whether it wants credentials).
  /// - Returns: the request to send.
  /// - Throws: as ``adapt(_:)``.
  func adapt(_ request: TransportRequest, context: AdaptContext) async throws -> TransportRequest
}

extension RequestAdapter {
  /// Calls ``adapt(_:)``: most adapters do not need the context.
  public func adapt(_ request: TransportRequest, context: AdaptContext) async throws -> TransportRequest {
    try await adapt(request)
  }
}

/// What an adapter knows about the call besides the built request.
public struct AdaptContext: Sendable, Hashable {
  /// ``Request/requiresAuthentication`` of the call: false for a login or token refresh request, which
  /// must not carry (or wait for) credentials.
  public var requiresAuthentication: Bool

  /// Creates a context.
  public init(requiresAuthentication: Bool = true) {
    self.requiresAuthentication = requiresAuthentication
  }
}

/// An adapter and a retrier in one (Alamofire's `RequestInterceptor`): it changes every attempt before it
/// is sent and is asked first whether a failed attempt is sent again. ``AuthenticationInterceptor`` is
/// one; pass others as `APIClient(interceptors:)`.
public protocol RequestInterceptor: RequestAdapter, Retrier {}

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
