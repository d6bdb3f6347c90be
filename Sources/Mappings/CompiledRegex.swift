import Synchronization
internal import _FoundationICU

/// A regular expression compiled once at load time and matched against a whole value, as Java's
/// `Matcher.matches()` does for WireMock (`matches`, `doesNotMatch`, `urlPattern`, `urlPathPattern`).
///
/// The engine is ICU's, called through its C API (`uregex_open`, `uregex_matches`) in the toolchain's
/// `_FoundationICU`: the same ICU that `NSRegularExpression` wraps on Linux, so the syntax is unchanged.
/// `NSRegularExpression(pattern:)` itself is not used: swift-corelibs-foundation's
/// `_CFRegularExpressionCreate` copies a pattern longer than 256 UTF-16 units into a `malloc`ed buffer
/// and frees it only when compiling fails, so every such pattern that compiles leaks its copy (found by
/// `make fuzz`; its input is kept as `Fuzz/stub-corpus/regex-longer-than-256-units`).
public struct CompiledRegex: Sendable, Hashable, CustomStringConvertible {
  /// The pattern as written in the fixture.
  public let pattern: String
  let regex: ICURegex

  /// Compiles `pattern`.
  /// - Throws: ``RegexError`` with ICU's error name and offset when the pattern is invalid.
  public init(_ pattern: String) throws(RegexError) {
    self.pattern = pattern
    regex = try ICURegex(pattern)
  }

  /// True when the whole of `value` matches.
  public func matches(_ value: String) -> Bool { regex.matches(value) }

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

/// One ICU `URegularExpression`, owned: closed when the last ``CompiledRegex`` holding it goes away.
/// ICU keeps the text being matched inside the object, so matches take turns under a lock.
final class ICURegex: Sendable {
  private let expression: Mutex<OpaquePointer>

  init(_ pattern: String) throws(RegexError) {
    // ICU rejects an empty pattern; `(?:)` is the same expression.
    let units = Array((pattern.isEmpty ? "(?:)" : pattern).utf16)
    guard units.count < Int32.max else {
      throw RegexError(pattern: pattern, message: "the pattern is too long")
    }
    var status = U_ZERO_ERROR
    var parseError = UParseError()
    let opened = swift_uregex_open(units, Int32(units.count), 0, &parseError, &status)
    guard let opened, status.rawValue <= U_ZERO_ERROR.rawValue else {
      if let opened { swift_uregex_close(opened) }
      let name = String(cString: swift_u_errorName(status))
      throw RegexError(pattern: pattern, message: "\(name) at offset \(parseError.offset)")
    }
    expression = Mutex(opened)
  }

  deinit { expression.withLock { swift_uregex_close($0) } }

  /// True when the whole of `value` matches (`uregex_matches` over the whole text).
  func matches(_ value: String) -> Bool {
    // A terminating zero, so that the buffer has an address even for an empty value.
    var units = Array(value.utf16)
    guard units.count < Int32.max else { return false }
    units.append(0)
    return expression.withLock { regex in
      units.withUnsafeBufferPointer { text in
        var status = U_ZERO_ERROR
        swift_uregex_setText(regex, text.baseAddress, Int32(text.count - 1), &status)
        let matched = swift_uregex_matches(regex, -1, &status)
        return status.rawValue <= U_ZERO_ERROR.rawValue && matched != 0
      }
    }
  }
}
