import Foundation

/// A regular expression compiled once at load time and matched against a whole value, as Java's
/// `Matcher.matches()` does for WireMock (`matches`, `doesNotMatch`, `urlPattern`, `urlPathPattern`).
///
/// `NSRegularExpression` is immutable after creation and documented as safe to use from several
/// threads, which is the invariant behind `@unchecked Sendable`.
public struct CompiledRegex: @unchecked Sendable, Hashable, CustomStringConvertible {
  /// The pattern as written in the fixture.
  public let pattern: String
  package let regex: NSRegularExpression

  /// Compiles `pattern`, anchored to the whole input (`\A(?:pattern)\z`).
  /// - Throws: ``RegexError`` with the engine's message when the pattern is invalid.
  public init(_ pattern: String) throws(RegexError) {
    self.pattern = pattern
    do {
      regex = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: [])
    } catch {
      throw RegexError(pattern: pattern, message: "\(error.localizedDescription)")
    }
  }

  /// True when the whole of `value` matches.
  public func matches(_ value: String) -> Bool {
    let ns = value as NSString
    return regex.firstMatch(in: value, options: [], range: NSRange(location: 0, length: ns.length)) != nil
  }

  /// The pattern.
  public var description: String { pattern }

  /// Equal when the patterns are equal.
  public static func == (a: CompiledRegex, b: CompiledRegex) -> Bool { a.pattern == b.pattern }
  /// Hash of the pattern.
  public func hash(into hasher: inout Hasher) { hasher.combine(pattern) }
}

/// A pattern that is not a valid regular expression.
public struct RegexError: Error, Sendable, Hashable {
  /// The pattern.
  public var pattern: String
  /// The engine's message.
  public var message: String
}
