import Synchronization

#if canImport(_FoundationICU)
  internal import _FoundationICU
#else
  import Foundation
#endif

/// A regular expression compiled once and matched many times: the one regex engine of the package, used
/// by WireMock's string matchers (`matches`, `doesNotMatch`, `urlPattern`, `urlPathPattern`, whole-value
/// matching as Java's `Matcher.matches()`), by JSONPath filters (`=~`), by templating's `regexExtract`
/// and by JSON Schema's `pattern` (an unanchored search).
///
/// The syntax is Java's `java.util.regex` (WireMock's) or ECMA-262's (JSON Schema's), run by ICU after
/// ``RegexDialect``'s rewriting of what ICU reads differently. On Linux the engine is
/// ICU's C API (`uregex_open`, `uregex_matches`, `uregex_find`) in the toolchain's `_FoundationICU`, the
/// same ICU that `NSRegularExpression` wraps there. `NSRegularExpression(pattern:)` itself is not used on
/// Linux: swift-corelibs-foundation's `_CFRegularExpressionCreate` copies a pattern longer than 256 UTF-16
/// units into a `malloc`ed buffer and frees it only when compiling fails, so every such pattern that
/// compiles leaks its copy (found by `make fuzz`; its input is kept as
/// `Fuzz/stub-corpus/regex-longer-than-256-units`). On Apple platforms, where `_FoundationICU` is not a
/// module, `NSRegularExpression` (the same ICU engine, without that leak) is used.
public struct CompiledRegex: Sendable, Hashable, CustomStringConvertible {
  /// The pattern as written.
  public let pattern: String
  /// True when letters match regardless of case (ICU's `UREGEX_CASE_INSENSITIVE`, like `(?i)`).
  public let caseInsensitive: Bool
  /// True when `.` also matches line terminators (ICU's `UREGEX_DOTALL`, Java's `Pattern.DOTALL`, like
  /// `(?s)`).
  public let dotMatchesLineSeparators: Bool
  /// The dialect the pattern is written in.
  public let dialect: RegexDialect
  let engine: RegexEngine

  /// Compiles `pattern`.
  /// - Parameters:
  ///   - pattern: a pattern in `dialect`'s syntax (``RegexDialect``); the empty pattern matches the empty
  ///     string. Where Java's reading and ICU's differ, the pattern is rewritten in ICU's syntax to mean
  ///     what Java means, or refused with the difference named.
  ///   - dialect: Java's (the default: WireMock, JSONPath, templating) or ECMA-262's (JSON Schema).
  ///   - caseInsensitive: match letters regardless of case (as the `i` flag of `=~ /re/i`).
  ///   - dotMatchesLineSeparators: let `.` match `\n` and `\r` too, as WireMock's string matchers
  ///     (`matches`, `doesNotMatch`, `urlPattern`, `urlPathPattern`) compile with `Pattern.DOTALL`.
  /// - Throws: ``RegexError`` with the engine's error name and offset when the pattern is invalid, or the
  ///   difference between Java's dialect and ICU's that the pattern depends on.
  public init(
    _ pattern: String, dialect: RegexDialect = .java, caseInsensitive: Bool = false,
    dotMatchesLineSeparators: Bool = false
  ) throws(RegexError) {
    self.pattern = pattern
    self.dialect = dialect
    self.caseInsensitive = caseInsensitive
    self.dotMatchesLineSeparators = dotMatchesLineSeparators
    var translation = RegexTranslation(pattern, dialect: dialect, caseInsensitive: caseInsensitive)
    let icuPattern = try translation.translate()
    engine = try RegexEngine(
      icuPattern, caseInsensitive: caseInsensitive, dotMatchesLineSeparators: dotMatchesLineSeparators)
  }

  /// Compiles a pattern written in the source, known to compile: a failure is a programming error.
  package init(constant pattern: String) {
    do {
      try self.init(pattern)
    } catch {
      preconditionFailure("the constant pattern \(pattern) does not compile: \(error.message)")
    }
  }

  /// True when the whole of `value` matches (Java's `Matcher.matches()`).
  public func matches(_ value: String) -> Bool { engine.matches(value) }

  /// True when some part of `value` matches (Java's `Matcher.find()`, ECMA-262's `RegExp.test`).
  public func containsMatch(in value: String) -> Bool { engine.firstMatch(in: value) != nil }

  /// The first match in `value`, or nil: element 0 is the whole match, then one element per capturing
  /// group in pattern order (nil for a group that took no part in the match).
  public func firstMatch(in value: String) -> [String?]? { engine.firstMatch(in: value) }

  /// Every non-overlapping match in `value`, left to right, at most `limit` of them (each as
  /// ``firstMatch(in:)`` describes).
  public func allMatches(in value: String, limit: Int = 10_000) -> [[String?]] {
    engine.allMatches(in: value, limit: max(0, limit))
  }

  /// The pattern.
  public var description: String { pattern }

  /// Equal when the patterns and flags are equal.
  public static func == (a: CompiledRegex, b: CompiledRegex) -> Bool {
    a.pattern == b.pattern && a.dialect == b.dialect && a.caseInsensitive == b.caseInsensitive
      && a.dotMatchesLineSeparators == b.dotMatchesLineSeparators
  }
  /// Hash of the pattern and flags.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(pattern)
    hasher.combine(dialect)
    hasher.combine(caseInsensitive)
    hasher.combine(dotMatchesLineSeparators)
  }
}

/// A pattern that is not a valid regular expression.
public struct RegexError: Error, Sendable, Hashable {
  /// The pattern.
  public var pattern: String
  /// The engine's message (for ICU: the error name and the offset in the pattern).
  public var message: String
}

#if canImport(_FoundationICU)
  /// One ICU `URegularExpression`, owned: closed when the last ``CompiledRegex`` holding it goes away.
  /// ICU keeps the text being matched inside the object, so matches take turns under a lock.
  final class RegexEngine: Sendable {
    private let expression: Mutex<OpaquePointer>

    init(_ pattern: String, caseInsensitive: Bool, dotMatchesLineSeparators: Bool) throws(RegexError) {
      // ICU rejects an empty pattern; `(?:)` is the same expression.
      let units = Array((pattern.isEmpty ? "(?:)" : pattern).utf16)
      guard units.count < Int32.max else {
        throw RegexError(pattern: pattern, message: "the pattern is too long")
      }
      var status = U_ZERO_ERROR
      var parseError = UParseError()
      let flags: UInt32 =
        (caseInsensitive ? UInt32(UREGEX_CASE_INSENSITIVE.rawValue) : 0)
        | (dotMatchesLineSeparators ? UInt32(UREGEX_DOTALL.rawValue) : 0)
      let opened = swift_uregex_open(units, Int32(units.count), flags, &parseError, &status)
      guard let opened, status.rawValue <= U_ZERO_ERROR.rawValue else {
        if let opened { swift_uregex_close(opened) }
        let name = String(cString: swift_u_errorName(status))
        throw RegexError(pattern: pattern, message: "\(name) at offset \(parseError.offset)")
      }
      expression = Mutex(opened)
    }

    /// ICU's match time limit for a text of `length` UTF-16 units, in ICU's units of 10,000 engine steps
    /// (about a millisecond each): 300 plus one per 2,000 units of text. A pattern such as `(a+)+$`
    /// backtracks exponentially on some texts; such a match fails (no match) after about 0.3 s instead
    /// of holding an event loop for seconds, while a linear scan of a large body (`.*needle.*` over 8 MB)
    /// still has the time it needs.
    static func timeLimit(length: Int32) -> Int32 { 300 + length / 2_000 }

    deinit { expression.withLock { swift_uregex_close($0) } }

    /// True when the whole of `value` matches (`uregex_matches` over the whole text).
    func matches(_ value: String) -> Bool {
      let units = Self.units(value)
      return expression.withLock { regex in
        units.withUnsafeBufferPointer { buffer in
          _ = Self.setText(regex, buffer)
          var status = U_ZERO_ERROR
          let matched = swift_uregex_matches(regex, -1, &status)
          return status.rawValue <= U_ZERO_ERROR.rawValue && matched != 0
        }
      }
    }

    func firstMatch(in value: String) -> [String?]? {
      let units = Self.units(value)
      return expression.withLock { regex in
        units.withUnsafeBufferPointer { buffer -> [String?]? in
          let text = Self.setText(regex, buffer)
          var status = U_ZERO_ERROR
          guard swift_uregex_find(regex, 0, &status) != 0, status.rawValue <= U_ZERO_ERROR.rawValue else {
            return nil
          }
          return Self.groups(regex, text)
        }
      }
    }

    func allMatches(in value: String, limit: Int) -> [[String?]] {
      let units = Self.units(value)
      return expression.withLock { regex in
        units.withUnsafeBufferPointer { buffer in
          let text = Self.setText(regex, buffer)
          var found: [[String?]] = []
          var status = U_ZERO_ERROR
          while found.count < limit, swift_uregex_findNext(regex, &status) != 0,
            status.rawValue <= U_ZERO_ERROR.rawValue
          {
            found.append(Self.groups(regex, text))
          }
          return found
        }
      }
    }

    /// `value` in UTF-16 with a terminating zero, so that the buffer has an address even when empty.
    private static func units(_ value: String) -> [UInt16] {
      var units = Array(value.utf16)
      units.append(0)
      return units
    }

    /// Makes `buffer` (without its terminating zero) the text of `regex`; returns that text. The buffer
    /// must outlive every use of the expression until the next call.
    private static func setText(
      _ regex: OpaquePointer, _ buffer: UnsafeBufferPointer<UInt16>
    ) -> UnsafeBufferPointer<UInt16> {
      var status = U_ZERO_ERROR
      let length = Int32(clamping: buffer.count - 1)
      swift_uregex_setText(regex, buffer.baseAddress, length, &status)
      swift_uregex_setTimeLimit(regex, timeLimit(length: length), &status)
      return UnsafeBufferPointer(rebasing: buffer[0..<Int(length)])
    }

    /// The whole match and each group of the current match, as text.
    private static func groups(_ regex: OpaquePointer, _ text: UnsafeBufferPointer<UInt16>) -> [String?] {
      var status = U_ZERO_ERROR
      let count = max(0, Int(swift_uregex_groupCount(regex, &status)))
      var result: [String?] = []
      result.reserveCapacity(count + 1)
      for group in 0...count {
        var status = U_ZERO_ERROR
        let start = Int(swift_uregex_start(regex, Int32(group), &status))
        let end = Int(swift_uregex_end(regex, Int32(group), &status))
        guard status.rawValue <= U_ZERO_ERROR.rawValue, start >= 0, end >= start, end <= text.count else {
          result.append(nil)
          continue
        }
        result.append(String(decoding: UnsafeBufferPointer(rebasing: text[start..<end]), as: UTF16.self))
      }
      return result
    }
  }
#else
  /// `NSRegularExpression`, immutable after creation and safe to share between threads.
  final class RegexEngine: Sendable {
    private let regex: NSRegularExpression
    /// The pattern anchored at both ends of the text (`\A(?:…)\z`), for whole-value matching.
    private let whole: NSRegularExpression

    init(_ pattern: String, caseInsensitive: Bool, dotMatchesLineSeparators: Bool) throws(RegexError) {
      var options: NSRegularExpression.Options = caseInsensitive ? [.caseInsensitive] : []
      if dotMatchesLineSeparators { options.insert(.dotMatchesLineSeparators) }
      do {
        regex = try NSRegularExpression(pattern: pattern, options: options)
        whole = try NSRegularExpression(pattern: "\\A(?:" + pattern + ")\\z", options: options)
      } catch {
        throw RegexError(pattern: pattern, message: "\(error)")
      }
    }

    func matches(_ value: String) -> Bool {
      let range = NSRange(value.startIndex..<value.endIndex, in: value)
      return whole.firstMatch(in: value, range: range) != nil
    }

    func firstMatch(in value: String) -> [String?]? {
      let whole = NSRange(value.startIndex..<value.endIndex, in: value)
      return regex.firstMatch(in: value, range: whole).map { Self.groups($0, value) }
    }

    func allMatches(in value: String, limit: Int) -> [[String?]] {
      let whole = NSRange(value.startIndex..<value.endIndex, in: value)
      return regex.matches(in: value, range: whole).prefix(limit).map { Self.groups($0, value) }
    }

    private static func groups(_ match: NSTextCheckingResult, _ value: String) -> [String?] {
      (0..<match.numberOfRanges).map { index in
        Range(match.range(at: index), in: value).map { String(value[$0]) }
      }
    }
  }
#endif
