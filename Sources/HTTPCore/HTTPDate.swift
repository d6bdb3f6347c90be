/// HTTP dates (RFC 9110 §5.6.7): IMF-fixdate is sent; IMF-fixdate, the obsolete RFC 850 form and
/// asctime's form are accepted.
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
