/// A request method token (RFC 9110 §9). Methods are case-sensitive: `get` is not `GET`.
public struct HTTPMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible,
  ExpressibleByStringLiteral
{
  /// The method token as sent on the request line.
  public let rawValue: String
  /// Creates a method from its token.
  public init(rawValue: String) { self.rawValue = rawValue }
  /// Creates a method from a string literal.
  public init(stringLiteral value: String) { self.rawValue = value }
  /// The token.
  public var description: String { rawValue }

  /// Equal when the tokens are (RFC 9110 §9.1: case-sensitive). Tokens of different lengths (`GET` and
  /// `HEAD`: the comparison made on every request) differ without a string comparison.
  public static func == (lhs: HTTPMethod, rhs: HTTPMethod) -> Bool {
    lhs.rawValue.utf8.count == rhs.rawValue.utf8.count && lhs.rawValue == rhs.rawValue
  }

  /// Hashes the token (equal methods have equal tokens, so equal hashes).
  public func hash(into hasher: inout Hasher) { hasher.combine(rawValue) }

  /// The `GET` method (RFC 9110 §9.3).
  public static let get = HTTPMethod(rawValue: "GET")
  /// The `HEAD` method (RFC 9110 §9.3).
  public static let head = HTTPMethod(rawValue: "HEAD")
  /// The `POST` method (RFC 9110 §9.3).
  public static let post = HTTPMethod(rawValue: "POST")
  /// The `PUT` method (RFC 9110 §9.3).
  public static let put = HTTPMethod(rawValue: "PUT")
  /// The `DELETE` method (RFC 9110 §9.3).
  public static let delete = HTTPMethod(rawValue: "DELETE")
  /// The `CONNECT` method (RFC 9110 §9.3).
  public static let connect = HTTPMethod(rawValue: "CONNECT")
  /// The `OPTIONS` method (RFC 9110 §9.3).
  public static let options = HTTPMethod(rawValue: "OPTIONS")
  /// The `TRACE` method (RFC 9110 §9.3).
  public static let trace = HTTPMethod(rawValue: "TRACE")
  /// The `PATCH` method (RFC 9110 §9.3).
  public static let patch = HTTPMethod(rawValue: "PATCH")

  /// True for methods defined as idempotent (RFC 9110 §9.2.2): safe ones, PUT and DELETE.
  public var isIdempotent: Bool {
    switch rawValue {
    case "GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE": return true
    default: return false
    }
  }
}
