import Foundation

/// How ``APIClient`` authenticates requests whose ``Request/requiresAuthentication`` is true.
public enum Authentication: Sendable {
  /// No credentials.
  case none
  /// `Authorization: Bearer <token>` from the authenticator, which also refreshes the token after a 401
  /// (once for all concurrent requests) so that each request is retried once.
  case bearer(BearerTokenAuthenticator)
  /// `Authorization: Basic base64(username:password)` (RFC 7617), UTF-8.
  case basic(username: String, password: String)

  /// The `Authorization` value for `basic` credentials.
  static func basicValue(username: String, password: String) -> String {
    "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
  }
}
