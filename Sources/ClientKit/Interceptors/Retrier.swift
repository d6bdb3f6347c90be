/// Decides whether a failed attempt is sent again: ``RetryPolicy`` is the built-in one; plug in your own
/// with `APIClient(retrier:)`.
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
  /// Retries made so far (0 after the first attempt).
  public var retryCount: Int
  /// Time since the call started.
  public var elapsed: Duration
}

extension RetryPolicy: Retrier {
  /// ``decision(for:isIdempotent:retryCount:)``.
  public func retry(_ error: APIError, context: RetryContext) async -> RetryDecision {
    decision(for: error, isIdempotent: context.isIdempotent, retryCount: context.retryCount)
  }
}
