/// Decides whether a failed attempt is sent again: ``RetryPolicy`` is the built-in one; plug in your own
/// with `APIClient(retrier:)`.
///
/// After a failed attempt the client asks, in order, its ``AuthenticationInterceptor``, its
/// ``RequestInterceptor``s and then its retrier (Alamofire's retry chain): the first
/// ``RetryDecision/retry(after:)`` is taken; ``RetryDecision/doNotRetryWithError(_:)`` ends the call with
/// that error; ``RetryDecision/doNotRetry`` passes the question on (the last one reports the error).
///
/// ```swift
/// struct RetryOfflineOnce: Retrier {
///   func retry(_ error: APIError, context: RetryContext) async -> RetryDecision {
///     context.retryCount == 0 && error.isTransportFailure ? .retry(after: .seconds(1)) : .doNotRetry
///   }
/// }
/// ```
/// The client's overall deadline still applies: a retry whose wait would pass it is not made.
public protocol Retrier: Sendable {
  /// What to do after `error`.
  /// - Parameters:
  ///   - error: the failure of the last attempt.
  ///   - context: the request, its idempotency and the retries made so far.
  /// - Returns: the decision.
  func retry(_ error: APIError, context: RetryContext) async -> RetryDecision
}

/// What a ``Retrier`` knows about the call.
public struct RetryContext: Sendable {
  /// The last attempt's request, when one was built.
  public var request: RequestInfo?
  /// Whether the request may be sent twice.
  public var isIdempotent: Bool
  /// Retries this retrier (or interceptor) has granted so far in this call (0 after the first attempt).
  /// Each one in the chain counts its own: a retry after a token refresh does not use up one of
  /// ``RetryPolicy/maxRetries``.
  public var retryCount: Int
  /// ``Request/requiresAuthentication`` of the call.
  public var requiresAuthentication: Bool
  /// Time since the call started.
  public var elapsed: Duration

  /// Creates a context (the client makes one per retrier and failed attempt; tests of custom retriers
  /// make their own).
  public init(
    request: RequestInfo? = nil, isIdempotent: Bool, retryCount: Int = 0, requiresAuthentication: Bool = true,
    elapsed: Duration = .zero
  ) {
    self.request = request
    self.isIdempotent = isIdempotent
    self.retryCount = retryCount
    self.requiresAuthentication = requiresAuthentication
    self.elapsed = elapsed
  }
}

extension RetryPolicy: Retrier {
  /// ``decision(for:isIdempotent:retryCount:)``.
  public func retry(_ error: APIError, context: RetryContext) async -> RetryDecision {
    decision(for: error, isIdempotent: context.isIdempotent, retryCount: context.retryCount)
  }
}
