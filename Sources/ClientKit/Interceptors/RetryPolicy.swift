import Foundation

/// Whether and when to send a failed request again.
public enum RetryDecision: Sendable, Hashable {
  /// Send again after the delay.
  case retry(after: Duration)
  /// Do not send again; the next retrier in the chain decides, the last one reports the error.
  case doNotRetry
  /// Do not send again and end the call with this error instead (e.g. a failed token refresh).
  case doNotRetryWithError(APIError)
}

/// The retrier: exponential backoff with jitter for failures that a new attempt may cure.
///
/// Retried (up to ``maxRetries`` times):
/// - ``APIError/cannotConnect(_:reason:)`` for every request (nothing reached the server);
/// - 429 for every request (RFC 6585: the request was not processed);
/// - for idempotent requests only (``Request/isIdempotent``): timeouts, resets, empty responses, lost
///   connections, truncated bodies, other transport failures, and the statuses in ``retryableStatusCodes``.
///
/// Never retried: cancellation, invalid requests, TLS failures, malformed responses, application errors,
/// decoding errors, failed token refreshes, other statuses. 401 is handled by the
/// ``AuthenticationInterceptor``, which the client asks first.
///
/// Delay before retry *n* (0-based): `min(maxDelay, baseDelay × multiplier^n)`, scaled by a random factor
/// in `[1 − jitter, 1]`. A `Retry-After` header (seconds or HTTP-date) replaces the computed delay; one
/// longer than ``maxRetryAfter`` means give up.
public struct RetryPolicy: Sendable {
  /// Retries after the first attempt; 0 disables retrying. Default 2.
  public var maxRetries: Int
  /// Delay before the first retry. Default 0.5 s.
  public var baseDelay: Duration
  /// Growth factor per retry. Default 2.
  public var multiplier: Double
  /// Upper bound of a computed delay. Default 30 s.
  public var maxDelay: Duration
  /// Fraction of the delay that is randomised, 0...1. Default 0.5.
  public var jitter: Double
  /// Statuses retried for idempotent requests. Default 408, 429, 500, 502, 503, 504.
  public var retryableStatusCodes: Set<Int>
  /// The longest `Retry-After` honoured; longer means do not retry. Default 60 s.
  public var maxRetryAfter: Duration
  /// Source of randomness in `0..<1`, for tests.
  public var random: @Sendable () -> Double

  /// Creates a policy; see the properties for the defaults.
  public init(
    maxRetries: Int = 2, baseDelay: Duration = .milliseconds(500), multiplier: Double = 2,
    maxDelay: Duration = .seconds(30), jitter: Double = 0.5,
    retryableStatusCodes: Set<Int> = [408, 429, 500, 502, 503, 504],
    maxRetryAfter: Duration = .seconds(60),
    random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
  ) {
    self.maxRetries = maxRetries
    self.baseDelay = baseDelay
    self.multiplier = multiplier
    self.maxDelay = maxDelay
    self.jitter = min(1, max(0, jitter))
    self.retryableStatusCodes = retryableStatusCodes
    self.maxRetryAfter = maxRetryAfter
    self.random = random
  }

  /// The default policy: 2 retries, 0.5 s base delay doubling, 50 % jitter.
  public static var `default`: RetryPolicy { RetryPolicy() }
  /// Never retry.
  public static var never: RetryPolicy { RetryPolicy(maxRetries: 0) }

  /// Decides what to do after `error`.
  /// - Parameters:
  ///   - error: the failure of the last attempt.
  ///   - isIdempotent: whether the request may be sent twice.
  ///   - retryCount: retries already made (0 after the first attempt).
  /// - Returns: the decision.
  public func decision(for error: APIError, isIdempotent: Bool, retryCount: Int) -> RetryDecision {
    guard retryCount < maxRetries else { return .doNotRetry }
    switch error {
    case .cannotConnect:
      return .retry(after: backoff(retryCount: retryCount))
    case .timedOut, .connectionReset, .emptyResponse, .connectionLost, .truncatedBody, .transportFailure:
      return isIdempotent ? .retry(after: backoff(retryCount: retryCount)) : .doNotRetry
    case .unacceptableStatus(let response, _):
      let code = response.statusCode
      guard retryableStatusCodes.contains(code), isIdempotent || code == 429 else { return .doNotRetry }
      if let after = response.retryAfter {
        return after > maxRetryAfter ? .doNotRetry : .retry(after: after)
      }
      return .retry(after: backoff(retryCount: retryCount))
    case .application, .emptyBody, .decoding, .refreshFailed, .invalidRequest, .cancelled, .tlsFailure,
      .malformedResponse, .deadlineExceeded, .responseTooLarge:
      return .doNotRetry
    }
  }

  /// The jittered exponential delay before retry number `retryCount` (0-based).
  public func backoff(retryCount: Int) -> Duration {
    let base = Double(baseDelay.components.seconds) + Double(baseDelay.components.attoseconds) / 1e18
    let cap = Double(maxDelay.components.seconds) + Double(maxDelay.components.attoseconds) / 1e18
    let raw = min(cap, base * pow(multiplier, Double(max(0, retryCount))))
    let factor = 1 - jitter + jitter * min(1, max(0, random()))
    return .milliseconds(Int64((raw * factor * 1000).rounded()))
  }
}
