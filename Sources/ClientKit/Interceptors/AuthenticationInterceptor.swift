/// Authentication as an interceptor (Alamofire's `AuthenticationInterceptor`): as an adapter it puts the
/// credential on every request that wants one; as a retrier it answers a 401 by refreshing the credential
/// and sending the request again.
///
/// ``APIClient`` makes one from its ``APIClient/authentication`` and runs it first, before the other
/// interceptors and adapters, and asks it first after a failed attempt. It holds no state of its own: the
/// credential and the single-flight refresh live in the ``BearerTokenAuthenticator``, shared by every
/// request of the client.
///
/// After a 401 (an ``APIError/unacceptableStatus(_:application:)`` with status 401) on a request that
/// ``Request/requiresAuthentication``, with a token scheme whose authenticator can refresh, outside a
/// refresh closure:
/// - the token the rejected request carried is read back from its header (``TokenScheme/token(in:)``);
/// - ``BearerTokenAuthenticator/token(replacing:)`` refreshes at most once for that token, however many
///   requests were rejected with it, or returns the token that has already replaced it;
/// - the request is sent again at once (``RetryDecision/retry(after:)`` with no delay), **once** per call:
///   a second 401 is reported as it is;
/// - a failed refresh ends the call with ``APIError/refreshFailed(response:reason:)`` (the original 401
///   attached), never retried by the retry policy.
public struct AuthenticationInterceptor: RequestInterceptor {
  /// The credentials applied and refreshed.
  public let authentication: Authentication

  /// Creates the interceptor for `authentication`.
  public init(_ authentication: Authentication) {
    self.authentication = authentication
  }

  /// Adds the credentials (as for a request that requires authentication).
  public func adapt(_ request: TransportRequest) async throws -> TransportRequest {
    try await adapt(request, context: AdaptContext(requiresAuthentication: true))
  }

  /// Adds the credentials when `context.requiresAuthentication`, replacing a header field of the same
  /// name; leaves the request as it is otherwise, or when there is no token yet. A token about to expire
  /// (``BearerTokenAuthenticator/requiresRefresh``) is refreshed first, once for all concurrent requests.
  public func adapt(_ request: TransportRequest, context: AdaptContext) async throws -> TransportRequest {
    guard context.requiresAuthentication else { return request }
    if let authenticator = authentication.authenticator, authenticator.requiresRefresh {
      _ = await authenticator.validToken()
    }
    var adapted = request
    authentication.apply(to: &adapted.headers)
    return adapted
  }

  /// After a 401: refresh once (shared with every concurrent request rejected with the same token) and
  /// retry at once; ``RetryDecision/doNotRetryWithError(_:)`` with ``APIError/refreshFailed(response:reason:)``
  /// when the refresh fails; ``RetryDecision/doNotRetry`` for every other error, for a request that does
  /// not require authentication, inside a refresh closure, without a refresh closure, and after the one
  /// retry this call gets.
  public func retry(_ error: APIError, context: RetryContext) async -> RetryDecision {
    guard case .unacceptableStatus(let response, _) = error, response.statusCode == 401,
      context.retryCount == 0, context.requiresAuthentication, !BearerTokenAuthenticator.isRefreshing,
      let authenticator = authentication.authenticator, authenticator.canRefresh,
      let scheme = authentication.tokenScheme
    else { return .doNotRetry }
    do {
      _ = try await authenticator.token(replacing: scheme.token(in: response.request.headers))
      return .retry(after: .zero)
    } catch {
      return .doNotRetryWithError(.refreshFailed(response: response, reason: error.reason))
    }
  }
}
