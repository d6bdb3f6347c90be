import Foundation
import HTTPCore

/// Every way a call through ``APIClient`` can fail: one closed enum, each case carrying what there is.
///
/// Transport failures carry the ``RequestInfo`` of the attempt; failures with a response carry the
/// ``ResponseInfo`` (status, headers, full body, and ``ResponseInfo/bodyExcerpt``). Helpers such as
/// ``isUnauthorized`` and ``retryAfter`` answer the usual questions without a `switch`.
public enum APIError: Error, Sendable, Hashable {
  /// No complete response arrived within `limit` (connect, send, wait and read together).
  case timedOut(limit: Duration, request: RequestInfo)
  /// The call's overall deadline (``Request/totalTimeout`` or ``APIClient/totalTimeout``) passed, or
  /// attempts timed out until retries ran out: the report says how many attempts were made, their
  /// per-attempt limit, the overall limit and the time spent.
  case deadlineExceeded(TimeoutReport)
  /// The response body is larger than the transport accepts in memory (`limit` bytes;
  /// ``SocketTransport``'s `maxResponseBodyBytes`, 64 MiB by default). Download large bodies to a file with
  /// ``APIClient/download(_:to:progress:)`` instead. Never retried.
  case responseTooLarge(RequestInfo, limit: Int)
  /// The connection could not be established (refused, host not found, unreachable). Nothing was sent,
  /// so any request may be retried.
  case cannotConnect(RequestInfo, reason: String)
  /// The peer reset the connection (RST) before a complete response arrived.
  case connectionReset(RequestInfo)
  /// The server closed the connection after the request without sending a single byte.
  case emptyResponse(RequestInfo)
  /// The connection ended before a complete response head arrived (some bytes had been received).
  case connectionLost(RequestInfo, receivedBytes: Int)
  /// The head arrived but the body ended early: `expected` body bytes (nil when the framing is chunked
  /// and the size is unknown), `received` bytes before the end. Never delivered as a success.
  case truncatedBody(RequestInfo, statusCode: Int, expected: Int?, received: Int)
  /// The bytes received are not an HTTP response.
  case malformedResponse(RequestInfo, detail: String)
  /// The TLS handshake or the server's certificate was rejected; the ``TLSTrustFailure`` says why
  /// (``TLSTrustFailure/expired``, ``TLSTrustFailure/hostnameMismatch``, ``TLSTrustFailure/untrustedRoot``,
  /// ``TLSTrustFailure/pinMismatch``…). Nothing was sent. Never retried.
  case tlsFailure(RequestInfo, TLSTrustFailure)
  /// Another transport failure that fits no case above (kept with its code and text).
  case transportFailure(RequestInfo, code: Int, detail: String)
  /// The status code is not acceptable for the request. `application` holds the failure envelope the
  /// body carried, if it parsed as one.
  case unacceptableStatus(ResponseInfo, application: ApplicationError?)
  /// The backend reported a failure in its envelope (NG, failing `code`), even under HTTP 200.
  case application(ApplicationError, response: ResponseInfo)
  /// A response with no content (204, 205, HEAD, `Content-Length: 0`) where a value was expected.
  case emptyBody(ResponseInfo)
  /// The body could not be decoded into the expected type.
  case decoding(DecodingFailure, response: ResponseInfo)
  /// A 401 led to a token refresh that failed; the original request was not retried. `response` is the
  /// original 401 (with its body), `reason` says why the refresh failed.
  case refreshFailed(response: ResponseInfo, reason: String)
  /// The request could not be built (bad URL, body encoding failed, an adapter refused it).
  case invalidRequest(String)
  /// The call was cancelled (task cancellation or ``CancellableRequest/cancel()``).
  case cancelled

  /// The response that caused the error, for the cases that have one.
  public var response: ResponseInfo? {
    switch self {
    case .unacceptableStatus(let r, _), .application(_, let r), .emptyBody(let r), .decoding(_, let r),
      .refreshFailed(let r, _):
      return r
    default:
      return nil
    }
  }

  /// The request of the failed attempt, when known.
  public var request: RequestInfo? {
    switch self {
    case .timedOut(_, let q), .cannotConnect(let q, _), .connectionReset(let q), .emptyResponse(let q),
      .connectionLost(let q, _), .truncatedBody(let q, _, _, _), .malformedResponse(let q, _),
      .tlsFailure(let q, _), .transportFailure(let q, _, _), .responseTooLarge(let q, _):
      return q
    case .deadlineExceeded(let report):
      return report.request
    case .invalidRequest, .cancelled:
      return nil
    default:
      return response?.request
    }
  }

  /// Why the secure connection failed, for ``tlsFailure(_:_:)``; nil for every other case.
  public var trustFailure: TLSTrustFailure? {
    if case .tlsFailure(_, let failure) = self { return failure }
    return nil
  }

  /// The HTTP status code of the response, when there was one.
  public var statusCode: Int? {
    if case .truncatedBody(_, let status, _, _) = self { return status }
    return response?.statusCode
  }

  /// The application error from an envelope: from ``application(_:response:)``, or from a failure
  /// envelope carried by an unacceptable status.
  public var applicationError: ApplicationError? {
    switch self {
    case .application(let e, _): return e
    case .unacceptableStatus(_, let e): return e
    default: return nil
    }
  }

  /// True for 401 and for a failed token refresh after a 401.
  public var isUnauthorized: Bool {
    if case .refreshFailed = self { return true }
    return unacceptableCode == 401
  }
  /// True for an unacceptable 403.
  public var isForbidden: Bool { unacceptableCode == 403 }
  /// True for an unacceptable 404.
  public var isNotFound: Bool { unacceptableCode == 404 }
  /// True for an unacceptable 429 (RFC 6585 §4); see ``retryAfter``.
  public var isRateLimited: Bool { unacceptableCode == 429 }
  /// True for an unacceptable 5xx.
  public var isServerError: Bool { (500..<600).contains(unacceptableCode ?? 0) }
  /// True when the failure happened below HTTP (connect, reset, lost, truncated, timeout, TLS).
  public var isTransportFailure: Bool {
    switch self {
    case .timedOut, .deadlineExceeded, .cannotConnect, .connectionReset, .emptyResponse, .connectionLost,
      .truncatedBody, .malformedResponse, .tlsFailure, .transportFailure, .responseTooLarge:
      return true
    default:
      return false
    }
  }

  /// The server's `Retry-After` for an unacceptable status, as a duration from now, or nil.
  public var retryAfter: Duration? {
    if case .unacceptableStatus(let r, _) = self { return r.retryAfter }
    return nil
  }

  /// How the app should present this error: the envelope's hint for application errors, `.none` when
  /// cancelled, `.toast` for transient network failures, `.alert` otherwise.
  public var presentation: PresentationHint {
    switch self {
    case .application(let e, _): return e.presentation
    case .unacceptableStatus(_, let e?): return e.presentation
    case .cancelled: return .none
    case .timedOut, .deadlineExceeded, .cannotConnect, .connectionReset, .emptyResponse, .connectionLost,
      .truncatedBody:
      return .toast
    default: return .alert
    }
  }

  private var unacceptableCode: Int? {
    if case .unacceptableStatus(let r, _) = self { return r.statusCode }
    return nil
  }
}

/// What happened to a call that ran out of time: see ``APIError/deadlineExceeded(_:)``.
public struct TimeoutReport: Sendable, Hashable, CustomStringConvertible {
  /// The overall deadline of the call (all attempts and the waits between them).
  public var totalLimit: Duration
  /// The deadline of one attempt.
  public var attemptLimit: Duration
  /// Attempts sent (1 when the first attempt used up the whole deadline).
  public var attempts: Int
  /// Time from the call to the failure.
  public var elapsed: Duration
  /// The last attempt's request, when one was built.
  public var request: RequestInfo?
  /// The last attempt's failure in words, when there was one other than the deadline itself.
  public var lastFailure: String?

  /// Creates a report.
  public init(
    totalLimit: Duration, attemptLimit: Duration, attempts: Int, elapsed: Duration,
    request: RequestInfo?, lastFailure: String? = nil
  ) {
    self.totalLimit = totalLimit
    self.attemptLimit = attemptLimit
    self.attempts = attempts
    self.elapsed = elapsed
    self.request = request
    self.lastFailure = lastFailure
  }

  /// E.g. `no response after 3 attempts in 2.31 s (limit 2 s overall, 700 ms per attempt)`.
  public var description: String {
    let noun = attempts == 1 ? "attempt" : "attempts"
    var text =
      "no response after \(attempts) \(noun) in \(APIError.formatElapsed(elapsed)) (limit "
      + "\(APIError.format(totalLimit)) overall, \(APIError.format(attemptLimit)) per attempt)"
    if let lastFailure { text += "; last failure: \(lastFailure)" }
    return text
  }
}
