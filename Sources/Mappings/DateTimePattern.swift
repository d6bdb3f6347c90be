import HTTPCore
import Templating

/// WireMock's date-time matchers `before`, `after` and `equalToDateTime`.
///
/// The expected value is an instant (`2021-06-24T00:00:00Z`, a local date-time read as UTC, a date alone)
/// or `now` with an optional offset (`now +3 days`, `now -1 months`), optionally moved by
/// `expectedOffset`/`expectedOffsetUnit` and truncated by `truncateExpected`. The actual value is read as
/// ISO 8601, an RFC 1123 HTTP date, or with `actualFormat` (a Java `DateTimeFormatter` pattern such as
/// `dd/MM/yyyy`, or `epoch`/`unix`), then truncated by `truncateActual`. A value that cannot be read
/// does not match.
public struct DateTimePattern: Sendable, Hashable {
  /// The comparison.
  public enum Comparison: String, Sendable, Hashable {
    /// `before`: actual < expected.
    case before
    /// `after`: actual > expected.
    case after
    /// `equalToDateTime`: actual == expected.
    case equalToDateTime
  }

  /// The comparison.
  public var comparison: Comparison
  /// The expected value as written.
  public var expected: String
  /// `actualFormat`.
  public var actualFormat: String?
  /// `truncateExpected`, e.g. `first day of month`.
  public var truncateExpected: String?
  /// `truncateActual`.
  public var truncateActual: String?
  /// `expectedOffset` with its unit (`expectedOffsetUnit`), as `"3 days"`.
  public var expectedOffset: String?

  /// The truncation units WireMock defines.
  public static let truncations: [String] = [
    "first minute of hour", "first hour of day", "first day of month", "first day of next month",
    "last day of month", "first day of year", "first day of next year", "last day of year",
  ]

  /// The offset units WireMock defines (`expectedOffsetUnit`, and the unit after `now +N`).
  public static let offsetUnits: [String] = [
    "seconds", "minutes", "hours", "days", "weeks", "months", "years",
  ]

  /// Epoch milliseconds of the expected value at `now` (epoch milliseconds), or nil when it cannot be read.
  func expectedMilliseconds(now: Int64) -> Int64? {
    var date: TemplateDate
    var offsets: [String] = []
    let text = expected.trimmingOWS()
    if text.lowercased().hasPrefix("now") {
      date = TemplateDate(epochMilliseconds: now)
      let offset = String(text.dropFirst(3)).trimmingOWS()
      if !offset.isEmpty { offsets.append(offset) }
    } else {
      guard let d = TemplateDate.parse(text, format: nil) else { return nil }
      date = d
    }
    // WireMock truncates first, then shifts by the offsets.
    if let truncateExpected {
      guard let t = date.truncated(truncateExpected) else { return nil }
      date = t
    }
    if let expectedOffset { offsets.append(expectedOffset) }
    for offset in offsets {
      guard let moved = date.adding(offset: offset) else { return nil }
      date = moved
    }
    return date.epochMilliseconds
  }

  /// Epoch milliseconds of an actual value, or nil when it cannot be read.
  func actualMilliseconds(_ value: String) -> Int64? {
    guard var date = TemplateDate.parse(value.trimmingOWS(), format: actualFormat) else { return nil }
    if let truncateActual {
      guard let t = date.truncated(truncateActual) else { return nil }
      date = t
    }
    return date.epochMilliseconds
  }

  /// True when `value` compares as required with the expected value at this moment.
  public func match(_ value: String) -> Bool {
    guard let a = actualMilliseconds(value), let e = expectedMilliseconds(now: TemplateDate.nowMilliseconds())
    else { return false }
    switch comparison {
    case .before: return a < e
    case .after: return a > e
    case .equalToDateTime: return a == e
    }
  }

  /// How far `value` is from matching, 0...1: 1 when unreadable, else growing with the time between them
  /// (a day away ≈ 0.5).
  func missDistance(_ value: String) -> Double {
    guard let a = actualMilliseconds(value), let e = expectedMilliseconds(now: TemplateDate.nowMilliseconds())
    else { return 1 }
    let gap = Double(a > e ? a - e : e - a) / 86_400_000
    return min(1, max(MatchResult.minimumMiss, gap / (gap + 1)))
  }

  /// WireMock JSON members (`before`/`after`/`equalToDateTime` with its modifiers).
  var jsonPairs: [(String, String)] {
    var pairs = [(comparison.rawValue, expected)]
    if let actualFormat { pairs.append(("actualFormat", actualFormat)) }
    if let truncateExpected { pairs.append(("truncateExpected", truncateExpected)) }
    if let truncateActual { pairs.append(("truncateActual", truncateActual)) }
    if let expectedOffset {
      let parts = expectedOffset.split(separator: " ")
      if parts.count == 2 {
        pairs.append(("expectedOffset", String(parts[0])))
        pairs.append(("expectedOffsetUnit", String(parts[1])))
      }
    }
    return pairs
  }
}
