import ClientKit
import Foundation

/// Builds the one ``APIClient`` the app uses for the friends API, and turns its errors into what the
/// user sees.
public enum FriendsAPI {
  /// A client for the friends backend.
  /// - Parameters:
  ///   - baseURL: scheme, host and port (`https://api.example.com`, or a mock server's base URL).
  ///   - token: the bearer token of the signed-in user, or nil when signed out.
  ///   - refresh: fetches a new token after a 401 (once for all concurrent calls), or nil.
  ///   - appVersion: sent as the `app_version` query item on every call.
  ///   - build: sent as the `build` query item on every call.
  ///   - transport: nil for ClientKit's platform default.
  ///   - retryPolicy: when failed calls are sent again (default: twice for idempotent calls).
  ///   - timeout: the deadline of one attempt.
  ///   - totalTimeout: the deadline of a call with its retries (nil: `timeout`, ClientKit's default).
  ///   - logger: logs every request as a curl command (Authorization redacted) and every outcome with
  ///     its metrics; nil for silence. Default: ``CurlLogger`` printing to standard output.
  /// - Returns: the client.
  public static func makeClient(
    baseURL: URL, token: String?, refresh: BearerTokenAuthenticator.Refresh? = nil,
    appVersion: String = "1.0", build: String = "1", transport: (any Transport)? = nil,
    retryPolicy: RetryPolicy = .default, timeout: Duration = .seconds(20), totalTimeout: Duration? = nil,
    logger: CurlLogger? = CurlLogger()
  ) -> APIClient {
    APIClient(
      baseURL: baseURL,
      defaultHeaders: ["Accept": "application/json"],
      defaultQueryItems: {
        [URLQueryItem(name: "app_version", value: appVersion), URLQueryItem(name: "build", value: build)]
      },
      envelope: StatusResultEnvelope(),
      authentication: .bearer(BearerTokenAuthenticator(token: token, refresh: refresh)),
      retryPolicy: retryPolicy,
      monitors: logger.map { [$0] } ?? [],
      transport: transport,
      timeout: timeout,
      totalTimeout: totalTimeout)
  }

  /// The text to show for a failed call: the backend's own message when it sent one (NG envelope),
  /// otherwise a message chosen by the kind of failure.
  /// - Parameter error: the failure.
  /// - Returns: a user-facing message, or nil when nothing should be shown (cancelled).
  public static func message(for error: APIError) -> String? {
    if let message = error.applicationError?.message { return message }
    if case .cancelled = error { return nil }
    if error.isUnauthorized { return "Please sign in again." }
    if error.isRateLimited { return "Too many requests. Try again in a moment." }
    if error.isServerError { return "The service is unavailable. Try again later." }
    if case .timedOut = error { return "The server is taking too long to answer." }
    if case .deadlineExceeded = error { return "The server is taking too long to answer." }
    if error.isTransportFailure { return "Check your connection and try again." }
    return "Something went wrong."
  }
}
