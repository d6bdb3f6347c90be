import Foundation

/// How ``APIClient`` authenticates requests whose ``Request/requiresAuthentication`` is true.
public enum Authentication: Sendable {
  /// No credentials.
  case none
  /// `Authorization: Bearer <token>` from the authenticator, which also refreshes the token after a 401
  /// (once for all concurrent requests) so that each request is retried once. Same as
  /// `.token(authenticator, .bearer)`.
  case bearer(BearerTokenAuthenticator)
  /// The authenticator's token in the header `scheme` says (`Authorization: Bearer t`,
  /// `X-Auth-Token: t`, `Authorization: Token t`…), with the same 401 refresh as ``bearer(_:)``.
  case token(BearerTokenAuthenticator, TokenScheme)
  /// `Authorization: Basic base64(username:password)` (RFC 7617), UTF-8.
  case basic(username: String, password: String)

  /// The `Authorization` value for `basic` credentials.
  static func basicValue(username: String, password: String) -> String {
    "Basic " + Data("\(username):\(password)".utf8).base64EncodedString()
  }

  /// The token authenticator, for ``bearer(_:)`` and ``token(_:_:)``.
  public var authenticator: BearerTokenAuthenticator? {
    switch self {
    case .bearer(let a), .token(let a, _): return a
    case .none, .basic: return nil
    }
  }

  /// The token scheme, for ``bearer(_:)`` and ``token(_:_:)``.
  public var tokenScheme: TokenScheme? {
    switch self {
    case .bearer: return .bearer
    case .token(_, let scheme): return scheme
    case .none, .basic: return nil
    }
  }

  /// Adds the credentials to `headers` (replacing a field of the same name); a token scheme without a
  /// token yet adds nothing.
  func apply(to headers: inout HTTPHeaders) {
    switch self {
    case .none:
      return
    case .basic(let username, let password):
      headers.replaceOrAdd(
        name: "Authorization", value: Self.basicValue(username: username, password: password))
    case .bearer(let authenticator), .token(let authenticator, _):
      guard let token = authenticator.token, let scheme = tokenScheme else { return }
      headers.replaceOrAdd(name: scheme.headerName, value: scheme.value(for: token))
    }
  }
}

/// Where and how a token is sent.
public enum TokenScheme: Sendable, Hashable {
  /// `Authorization: Bearer <token>` (RFC 6750 §2.1).
  case bearer
  /// The raw token as the value of the named header, e.g. `X-Auth-Token: <token>`.
  case header(String)
  /// `Authorization: <prefix> <token>`, e.g. `.authorization(prefix: "Token")` for `Token abc`.
  case authorization(prefix: String)

  /// The header field name.
  public var headerName: String {
    switch self {
    case .bearer, .authorization: return "Authorization"
    case .header(let name): return name
    }
  }

  /// The header field value for `token`.
  public func value(for token: String) -> String {
    switch self {
    case .bearer: return "Bearer \(token)"
    case .header: return token
    case .authorization(let prefix): return prefix.isEmpty ? token : "\(prefix) \(token)"
    }
  }

  /// The token a request carried in `headers` under this scheme (the inverse of ``value(for:)``), or nil
  /// when the field is absent or does not have the scheme's prefix (compared without regard to case,
  /// RFC 9110 §11.1).
  public func token(in headers: HTTPHeaders) -> String? {
    guard let value = headers.first(headerName) else { return nil }
    let prefix: String
    switch self {
    case .bearer: prefix = "Bearer"
    case .header: return value
    case .authorization(let p): prefix = p
    }
    if prefix.isEmpty { return value }
    guard value.count > prefix.count, value.lowercased().hasPrefix(prefix.lowercased() + " ") else {
      return nil
    }
    return String(value.dropFirst(prefix.count + 1))
  }
}
