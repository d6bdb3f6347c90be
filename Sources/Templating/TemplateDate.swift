import Foundation
import HTTPCore

/// A date as `now`, `date` and `parseDate` produce it: an instant with the format and time zone it renders in.
public struct TemplateDate: Sendable, Hashable {
  /// Milliseconds since 1970-01-01T00:00:00Z.
  public var epochMilliseconds: Int64
  /// Java-style pattern, `epoch` (milliseconds), `unix` (seconds), or nil for ISO 8601.
  public var format: String?
  /// Time zone identifier (`Australia/Sydney`, `UTC`), or nil for UTC.
  public var timezone: String?

  /// The instants a template or a date matcher handles: ±2^53 ms since 1970 (about ±285,000 years),
  /// exact as a `Double`. A value from input outside it is not a date (no overflow trap on the way).
  public static let representableMilliseconds: ClosedRange<Int64> = -(1 << 53)...(1 << 53)

  /// Creates a date; `epochMilliseconds` is clamped to ``representableMilliseconds``.
  public init(epochMilliseconds: Int64, format: String? = nil, timezone: String? = nil) {
    self.epochMilliseconds = min(
      max(epochMilliseconds, Self.representableMilliseconds.lowerBound),
      Self.representableMilliseconds.upperBound)
    self.format = format
    self.timezone = timezone
  }

  /// Milliseconds since 1970 of an ISO 8601 date or date-time (`2024-01-02T03:04:05Z`, an offset instead
  /// of `Z`, no zone meaning UTC), or nil (for `--fixed-time`).
  public static func epochMilliseconds(iso8601 text: String) -> Int64? { parseISO(text)?.epochMilliseconds }

  static func currentMilliseconds() -> Int64 { Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)) }

  /// The clock's milliseconds since 1970 (date matchers compare with `now`).
  package static func nowMilliseconds() -> Int64 { currentMilliseconds() }

  var zone: TimeZone {
    guard let timezone else { return TimeZone(identifier: "UTC")! }
    return TimeZone(identifier: timezone) ?? TimeZone(abbreviation: timezone) ?? TimeZone(identifier: "UTC")!
  }

  /// The text the date renders as.
  public var rendered: String {
    switch format {
    case "epoch": return String(epochMilliseconds)
    case "unix": return String(floorDiv(epochMilliseconds, 1000))
    case let pattern?:
      let f = DateFormatter()
      f.locale = Locale(identifier: "en_US_POSIX")
      f.timeZone = zone
      f.dateFormat = pattern
      return f.string(from: Date(timeIntervalSince1970: Double(epochMilliseconds) / 1000))
    case nil: return iso8601
    }
  }

  /// Handlebars.java's `dateFormat`: a `full`, `long`, `medium` or `short` date in `locale`, or a
  /// Java-style pattern.
  func formatted(pattern: String, locale: String) -> String {
    let f = DateFormatter()
    f.locale = Locale(identifier: locale.replacingOccurrences(of: "-", with: "_"))
    f.timeZone = zone
    let styles: [String: DateFormatter.Style] = [
      "full": .full, "long": .long, "medium": .medium, "short": .short,
    ]
    if let style = styles[pattern] {
      f.dateStyle = style
      f.timeStyle = .none
    } else {
      f.dateFormat = pattern
    }
    return f.string(from: Date(timeIntervalSince1970: Double(epochMilliseconds) / 1000))
  }

  /// ISO 8601 to the second: `2018-05-04T10:11:12Z`, or with the zone's offset `2023-10-10T00:00:00+11:00`.
  var iso8601: String {
    let seconds = floorDiv(epochMilliseconds, 1000)
    let offset = timezone == nil ? 0 : zone.secondsFromGMT(for: Date(timeIntervalSince1970: Double(seconds)))
    let local = seconds + Int64(offset)
    let days = floorDiv(local, 86400)
    let sod = Int(local - days * 86400)
    let (y, m, d) = TemplateDate.civil(days)
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    var s = "\(y)-\(two(m))-\(two(d))T\(two(sod / 3600)):\(two(sod / 60 % 60)):\(two(sod % 60))"
    if offset == 0 {
      s += "Z"
    } else {
      let a = abs(offset)
      s += (offset < 0 ? "-" : "+") + two(a / 3600) + ":" + two(a / 60 % 60)
    }
    return s
  }

  func floorDiv(_ a: Int64, _ b: Int64) -> Int64 { a >= 0 ? a / b : (a - b + 1) / b }

  static func civil(_ days: Int64) -> (Int, Int, Int) { HTTPDate.civilFromDays(days) }

  /// The date moved by an offset such as `3 days`, `-24 hours`, `1 months`; nil when the text is not one.
  package func adding(offset: String) -> TemplateDate? {
    let parts = offset.split(separator: " ", omittingEmptySubsequences: true)
    guard parts.count == 2, let amount = Int(parts[0].hasPrefix("+") ? parts[0].dropFirst() : parts[0]) else {
      return nil
    }
    var unit = parts[1].lowercased()
    if unit.hasSuffix("s") { unit.removeLast() }
    var copy = self
    let ms: Int64
    switch unit {
    case "millisecond": ms = 1
    case "second": ms = 1000
    case "minute": ms = 60_000
    case "hour": ms = 3_600_000
    case "day": ms = 86_400_000
    case "week": ms = 604_800_000
    case "month", "year":
      guard abs(amount) <= 1_000_000 else { return nil }
      var calendar = Calendar(identifier: .gregorian)
      calendar.timeZone = zone
      let date = Date(timeIntervalSince1970: Double(epochMilliseconds) / 1000)
      guard let moved = calendar.date(byAdding: unit == "month" ? .month : .year, value: amount, to: date)
      else {
        return nil
      }
      guard let movedDate = TemplateDate.representable(moved.timeIntervalSince1970 * 1000) else { return nil }
      copy.epochMilliseconds = movedDate.epochMilliseconds
      return copy
    default: return nil
    }
    // An offset from input may be any size: out of range is not an offset (no overflow trap).
    let (delta, o1) = Int64(amount).multipliedReportingOverflow(by: ms)
    let (sum, o2) = copy.epochMilliseconds.addingReportingOverflow(delta)
    guard !o1, !o2, TemplateDate.representableMilliseconds.contains(sum) else { return nil }
    copy.epochMilliseconds = sum
    return copy
  }

  /// Parses `text`: with `format` (a Java-style pattern, `epoch` or `unix`), else RFC 3339 (HTTPDate's
  /// parser), the shorter ISO 8601 forms WireMock also reads (a date alone, no zone meaning UTC), or an
  /// HTTP date (RFC 1123).
  package static func parse(_ text: String, format: String?) -> TemplateDate? {
    switch format {
    case "epoch": return Int64(text).flatMap(representable)
    case "unix":
      guard let seconds = Int64(text) else { return nil }
      let (ms, overflow) = seconds.multipliedReportingOverflow(by: 1000)
      return overflow ? nil : representable(ms)
    case let pattern?:
      let f = DateFormatter()
      f.locale = Locale(identifier: "en_US_POSIX")
      f.timeZone = TimeZone(identifier: "UTC")
      f.dateFormat = pattern
      guard let d = f.date(from: text) else { return nil }
      return representable(d.timeIntervalSince1970 * 1000)
    case nil:
      if let seconds = HTTPDate.parseISO8601(text) {
        return TemplateDate(epochMilliseconds: Int64((seconds * 1000).rounded(.down)))
      }
      if let d = parseISO(text) { return d }
      if let s = HTTPDate.parse(text) { return TemplateDate(epochMilliseconds: s * 1000) }
      return nil
    }
  }

  /// The date at `milliseconds` since 1970, or nil outside ``representableMilliseconds``.
  static func representable(_ milliseconds: Int64) -> TemplateDate? {
    representableMilliseconds.contains(milliseconds) ? TemplateDate(epochMilliseconds: milliseconds) : nil
  }

  /// The date at `milliseconds` (rounded) since 1970, or nil when not finite or not representable.
  static func representable(_ milliseconds: Double) -> TemplateDate? {
    let rounded = milliseconds.rounded()
    guard rounded.isFinite, abs(rounded) <= Double(representableMilliseconds.upperBound) else { return nil }
    return TemplateDate(epochMilliseconds: Int64(rounded))
  }

  static func parseISO(_ text: String) -> TemplateDate? {
    let b = Array(text.utf8)
    var i = 0
    func num(_ n: Int) -> Int? {
      guard i + n <= b.count else { return nil }
      var v = 0
      for k in i..<(i + n) {
        guard b[k] >= 48, b[k] <= 57 else { return nil }
        v = v * 10 + Int(b[k] - 48)
      }
      i += n
      return v
    }
    func expect(_ c: Character) -> Bool {
      guard i < b.count, b[i] == c.asciiValue! else { return false }
      i += 1
      return true
    }
    guard let y = num(4), expect("-"), let mo = num(2), expect("-"), let d = num(2), (1...12).contains(mo),
      (1...31).contains(d)
    else { return nil }
    var seconds = days(y, mo, d) * 86400
    var millis: Int64 = 0
    if i < b.count, b[i] == UInt8(ascii: "T") || b[i] == UInt8(ascii: " ") {
      i += 1
      guard let h = num(2), expect(":"), let mi = num(2) else { return nil }
      var s = 0
      if expect(":") {
        guard let ss = num(2) else { return nil }
        s = ss
        if expect(".") || expect(",") {
          var digits = 0
          var frac = 0
          while i < b.count, b[i] >= 48, b[i] <= 57 {
            if digits < 3 { frac = frac * 10 + Int(b[i] - 48) }
            digits += 1
            i += 1
          }
          while digits < 3 {
            frac *= 10
            digits += 1
          }
          millis = Int64(frac)
        }
      }
      seconds += Int64(h * 3600 + mi * 60 + s)
      if expect("Z") {
      } else if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
        let sign: Int64 = b[i] == UInt8(ascii: "-") ? -1 : 1
        i += 1
        guard let oh = num(2) else { return nil }
        _ = expect(":")
        let om = num(2) ?? 0
        seconds -= sign * Int64(oh * 3600 + om * 60)
      }
    }
    guard i == b.count else { return nil }
    return TemplateDate(epochMilliseconds: seconds * 1000 + millis)
  }

  static func days(_ year: Int, _ month: Int, _ day: Int) -> Int64 {
    HTTPDate.daysFromCivil(year: year, month: month, day: day)
  }

  /// WireMock's `truncateDate` units (`first day of month`, …), in UTC; nil for an unknown unit.
  package func truncated(_ unit: String) -> TemplateDate? {
    let seconds = floorDiv(epochMilliseconds, 1000)
    let day = floorDiv(seconds, 86400)
    let (y, m, _) = TemplateDate.civil(day)
    func at(_ days: Int64) -> TemplateDate {
      var c = self
      c.epochMilliseconds = days * 86_400_000
      return c
    }
    let nextMonth = m == 12 ? (y + 1, 1) : (y, m + 1)
    switch unit {
    case "first second of minute": return at(0).withMillis(seconds / 60 * 60_000)
    case "first minute of hour": return at(0).withMillis(seconds / 3600 * 3_600_000)
    case "first hour of day": return at(day)
    case "first hour of tomorrow": return at(day + 1)
    case "first hour of yesterday": return at(day - 1)
    case "first day of month": return at(TemplateDate.days(y, m, 1))
    case "first day of next month": return at(TemplateDate.days(nextMonth.0, nextMonth.1, 1))
    case "last day of month": return at(TemplateDate.days(nextMonth.0, nextMonth.1, 1) - 1)
    case "first day of year": return at(TemplateDate.days(y, 1, 1))
    case "first day of next year": return at(TemplateDate.days(y + 1, 1, 1))
    case "last day of year": return at(TemplateDate.days(y + 1, 1, 1) - 1)
    default: return nil
    }
  }

  func withMillis(_ ms: Int64) -> TemplateDate {
    var c = self
    c.epochMilliseconds = ms
    return c
  }
}
