/// The one date code of the project: HTTP dates (RFC 9110 §5.6.7: IMF-fixdate is sent; IMF-fixdate, the
/// obsolete RFC 850 form and asctime's form are accepted) and the RFC 3339 / ISO 8601 timestamps of the
/// admin API and journal, on the proleptic Gregorian calendar in UTC.
public enum HTTPDate {
  private static let months = [
    "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
  ]
  private static let weekdays = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"]

  /// Parses an HTTP date into seconds since 1970-01-01T00:00:00Z, or nil if it is not one of the three
  /// forms (e.g. `Sun, 06 Nov 1994 08:49:37 GMT`, `Sunday, 06-Nov-94 08:49:37 GMT`,
  /// `Sun Nov  6 08:49:37 1994`).
  public static func parse(_ text: String) -> Int64? {
    let tokens = text.split(whereSeparator: { $0 == " " || $0 == "," || $0 == "-" }).map(String.init)
    var day: Int?
    var month: Int?
    var year: Int?
    var time: (Int, Int, Int)?
    for token in tokens {
      if token.contains(":") {
        let parts = token.split(separator: ":").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        time = (parts[0], parts[1], parts[2])
      } else if let m = months.firstIndex(of: token.lowercasedASCII()) {
        month = m + 1
      } else if let n = Int(token) {
        if token.count == 4 {
          year = n
        } else if day == nil {
          day = n
        } else {
          year = n < 70 ? 2000 + n : 1900 + n
        }
      }
    }
    guard let day, let month, let year, let (h, mi, s) = time, (1...31).contains(day), h < 24, mi < 60, s < 61
    else { return nil }
    return daysFromCivil(year: year, month: month, day: day) * 86400 + Int64(h * 3600 + mi * 60 + s)
  }

  /// Formats seconds since 1970 as IMF-fixdate, e.g. `Sun, 06 Nov 1994 08:49:37 GMT`.
  public static func format(_ seconds: Int64) -> String {
    let days = seconds >= 0 ? seconds / 86400 : (seconds - 86399) / 86400
    let secondsOfDay = Int(seconds - days * 86400)
    let (y, m, d) = civilFromDays(days)
    let weekday = weekdays[Int(((days % 7) + 7) % 7)]
    func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
    let monthName = months[m - 1].prefix(1).uppercased() + months[m - 1].dropFirst()
    return
      "\(weekday), \(two(d)) \(monthName) \(y) \(two(secondsOfDay / 3600)):\(two(secondsOfDay / 60 % 60)):\(two(secondsOfDay % 60)) GMT"
  }

  /// Formats seconds since 1970 as RFC 3339 UTC with milliseconds, e.g. `2024-05-01T12:00:00.123Z`
  /// (fractions of a millisecond are dropped).
  public static func iso8601(_ seconds: Double) -> String {
    guard seconds.isFinite, abs(seconds) < 1e13 else { return "1970-01-01T00:00:00.000Z" }
    let totalMillis = Int64((seconds * 1000).rounded(.down))
    let days = totalMillis >= 0 ? totalMillis / 86_400_000 : (totalMillis - 86_399_999) / 86_400_000
    let millisOfDay = Int(totalMillis - days * 86_400_000)
    let (y, m, d) = civilFromDays(days)
    func pad(_ v: Int, _ n: Int) -> String {
      let s = String(v)
      return String(repeating: "0", count: max(0, n - s.count)) + s
    }
    let time =
      "\(pad(millisOfDay / 3_600_000, 2)):\(pad(millisOfDay / 60_000 % 60, 2)):\(pad(millisOfDay / 1000 % 60, 2))"
    return "\(pad(y, 4))-\(pad(m, 2))-\(pad(d, 2))T\(time).\(pad(millisOfDay % 1000, 3))Z"
  }

  /// Parses an RFC 3339 timestamp (`2024-05-01T12:00:00Z`, `2024-05-01T12:00:00.25+02:00`; `t`, `z` and a
  /// space separator accepted) into seconds since 1970, or nil.
  public static func parseISO8601(_ text: String) -> Double? {
    let b = Array(text.utf8)
    func number(_ from: Int, _ count: Int) -> Int? {
      guard from + count <= b.count else { return nil }
      var n = 0
      for c in b[from..<(from + count)] {
        guard c >= 48, c <= 57 else { return nil }
        n = n * 10 + Int(c - 48)
      }
      return n
    }
    guard b.count >= 19, b[4] == 45, b[7] == 45, [84, 116, 32].contains(b[10]), b[13] == 58, b[16] == 58,
      let year = number(0, 4), let month = number(5, 2), let day = number(8, 2), let h = number(11, 2),
      let mi = number(14, 2), let s = number(17, 2), (1...12).contains(month), (1...31).contains(day), h < 24,
      mi < 60, s < 61
    else { return nil }
    var i = 19
    var fraction = 0.0
    if i < b.count, b[i] == 46 {
      i += 1
      var scale = 0.1
      let start = i
      while i < b.count, b[i] >= 48, b[i] <= 57 {
        fraction += Double(b[i] - 48) * scale
        scale /= 10
        i += 1
      }
      guard i > start else { return nil }
    }
    var offset = 0
    guard i < b.count else { return nil }
    switch b[i] {
    case 90, 122: i += 1
    case 43, 45:
      guard let oh = number(i + 1, 2), b.count > i + 3, b[i + 3] == 58, let om = number(i + 4, 2), oh < 24,
        om < 60
      else { return nil }
      offset = (oh * 3600 + om * 60) * (b[i] == 45 ? -1 : 1)
      i += 6
    default: return nil
    }
    guard i == b.count else { return nil }
    let seconds = daysFromCivil(year: year, month: month, day: day) * 86400 + Int64(h * 3600 + mi * 60 + s)
    return Double(seconds - Int64(offset)) + fraction
  }

  // Howard Hinnant's days_from_civil / civil_from_days.
  private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
    let y = Int64(month <= 2 ? year - 1 : year)
    let era = (y >= 0 ? y : y - 399) / 400
    let yoe = y - era * 400
    let mp = Int64((month + 9) % 12)
    let doy = (153 * mp + 2) / 5 + Int64(day) - 1
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
    return era * 146097 + doe - 719468
  }

  private static func civilFromDays(_ z: Int64) -> (Int, Int, Int) {
    let z = z + 719468
    let era = (z >= 0 ? z : z - 146096) / 146097
    let doe = z - era * 146097
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
    let y = yoe + era * 400
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
    let mp = (5 * doy + 2) / 153
    let d = doy - (153 * mp + 2) / 5 + 1
    let m = mp < 10 ? mp + 3 : mp - 9
    return (Int(m <= 2 ? y + 1 : y), Int(m), Int(d))
  }
}
