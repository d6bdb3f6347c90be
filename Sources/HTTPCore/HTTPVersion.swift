/// An HTTP protocol version (RFC 9112 §2.3), such as 1.1.
public struct HTTPVersion: Hashable, Sendable, CustomStringConvertible {
  /// Major version digit.
  public var major: Int
  /// Minor version digit.
  public var minor: Int
  /// Creates a version.
  public init(major: Int, minor: Int) {
    self.major = major
    self.minor = minor
  }
  /// HTTP/1.0.
  public static let http1_0 = HTTPVersion(major: 1, minor: 0)
  /// HTTP/1.1.
  public static let http1_1 = HTTPVersion(major: 1, minor: 1)
  /// `HTTP/1.1` form.
  public var description: String { "HTTP/\(major).\(minor)" }
}
