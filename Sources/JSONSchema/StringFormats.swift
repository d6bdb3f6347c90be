/// The string `format`s the validator checks (RFC 3339 dates and times, RFC 4122 UUIDs, e-mail addresses,
/// URIs, host names, IP addresses, OpenAPI's base64 `byte`); other formats are annotations and always pass.
package enum StringFormats {
  /// True or false for a known format, nil for a format that is only an annotation.
  package static func check(_ format: String, _ s: String) -> Bool? {
    switch format {
    case "date-time": return isDateTime(s)
    case "date": return isDate(Array(s.utf8)[...])
    case "time": return isTime(Array(s.utf8)[...])
    case "uuid": return isUUID(s)
    case "email", "idn-email": return isEmail(s)
    case "uri", "iri": return isURI(s)
    case "uri-reference", "iri-reference": return !s.contains(where: { $0 == " " || $0.isNewline })
    case "hostname", "idn-hostname": return isHostname(s)
    case "ipv4": return isIPv4(s)
    case "ipv6": return isIPv6(s)
    case "byte": return isBase64(s)
    default: return nil
    }
  }

  /// The formats `check` knows.
  package static let known: Set<String> = [
    "date-time", "date", "time", "uuid", "email", "idn-email", "uri", "iri", "uri-reference", "iri-reference",
    "hostname", "idn-hostname", "ipv4", "ipv6",
  ]

  static func digits(_ b: ArraySlice<UInt8>, _ count: Int) -> Int? {
    guard b.count == count, b.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
    return b.reduce(0) { $0 * 10 + Int($1 - 48) }
  }

  /// `2024-02-29`: RFC 3339 full-date with a real day of that month.
  static func isDate(_ b: ArraySlice<UInt8>) -> Bool {
    guard b.count == 10 else { return false }
    let s = b.startIndex
    guard b[s + 4] == UInt8(ascii: "-"), b[s + 7] == UInt8(ascii: "-"),
      let y = digits(b[s..<s + 4], 4), let m = digits(b[s + 5..<s + 7], 2),
      let d = digits(b[s + 8..<s + 10], 2),
      (1...12).contains(m), d >= 1
    else { return false }
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
    let days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1]
    return d <= days
  }

  /// `10:20:30`, `10:20:30.5Z`, `10:20:30+02:00`: RFC 3339 full-time (offset required, as RFC 3339 says).
  static func isTime(_ b: ArraySlice<UInt8>) -> Bool {
    guard b.count >= 9 else { return false }
    let s = b.startIndex
    guard b[s + 2] == UInt8(ascii: ":"), b[s + 5] == UInt8(ascii: ":"),
      let h = digits(b[s..<s + 2], 2), let m = digits(b[s + 3..<s + 5], 2),
      let sec = digits(b[s + 6..<s + 8], 2),
      h < 24, m < 60, sec <= 60
    else { return false }
    var i = s + 8
    if i < b.endIndex, b[i] == UInt8(ascii: ".") {
      i += 1
      let start = i
      while i < b.endIndex, b[i] >= 48, b[i] <= 57 { i += 1 }
      guard i > start else { return false }
    }
    guard i < b.endIndex else { return false }
    if b[i] == UInt8(ascii: "Z") || b[i] == UInt8(ascii: "z") { return i + 1 == b.endIndex }
    guard b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-"), b.endIndex - i == 6,
      b[i + 3] == UInt8(ascii: ":"), let oh = digits(b[i + 1..<i + 3], 2),
      let om = digits(b[i + 4..<i + 6], 2)
    else { return false }
    return oh < 24 && om < 60
  }

  /// `2024-01-02T10:20:30Z`: RFC 3339 date-time.
  static func isDateTime(_ s: String) -> Bool {
    let b = Array(s.utf8)
    guard b.count > 11, b[10] == UInt8(ascii: "T") || b[10] == UInt8(ascii: "t") else { return false }
    return isDate(b[0..<10]) && isTime(b[11...])
  }

  /// `123e4567-e89b-12d3-a456-426614174000` (any version, hex in either case).
  /// OpenAPI's `byte`: base64 text (RFC 4648 §4), padded to a multiple of 4.
  static func isBase64(_ s: String) -> Bool {
    let b = Array(s.utf8)
    guard b.count % 4 == 0 else { return false }
    let padding = b.reversed().prefix(while: { $0 == UInt8(ascii: "=") }).count
    guard padding <= 2 else { return false }
    return b.dropLast(padding).allSatisfy { c in
      (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || c == 43 || c == 47
    }
  }

  static func isUUID(_ s: String) -> Bool {
    let b = Array(s.utf8)
    guard b.count == 36 else { return false }
    for (k, c) in b.enumerated() {
      if [8, 13, 18, 23].contains(k) {
        if c != UInt8(ascii: "-") { return false }
      } else if !((c >= 48 && c <= 57) || (c >= 65 && c <= 70) || (c >= 97 && c <= 102)) {
        return false
      }
    }
    return true
  }

  /// `local@domain`: one `@`, a local part without spaces, a host name or `[address]` literal.
  static func isEmail(_ s: String) -> Bool {
    let parts = s.split(separator: "@", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, parts[0].count <= 64,
      !parts[0].contains(where: { $0 == " " || $0.isNewline || $0 == "\t" }),
      !parts[0].hasPrefix("."), !parts[0].hasSuffix("."), !parts[0].contains("..")
    else { return false }
    let domain = String(parts[1])
    if domain.hasPrefix("[") && domain.hasSuffix("]") {
      let inner = String(domain.dropFirst().dropLast())
      return isIPv4(inner) || (inner.hasPrefix("IPv6:") && isIPv6(String(inner.dropFirst(5))))
    }
    return isHostname(domain)
  }

  /// `scheme:rest` (RFC 3986 absolute URI), no spaces.
  static func isURI(_ s: String) -> Bool {
    guard let colon = s.firstIndex(of: ":"), colon != s.startIndex else { return false }
    let scheme = s[..<colon]
    guard let first = scheme.unicodeScalars.first, first.isASCIILetter,
      scheme.unicodeScalars.allSatisfy({
        $0.isASCIILetter || ("0"..."9").contains($0) || "+-.".unicodeScalars.contains($0)
      })
    else { return false }
    return !s.contains(where: { $0 == " " || $0.isNewline || $0 == "\\" || $0 == "<" || $0 == ">" })
  }

  /// RFC 1123 host name: labels of letters, digits and hyphens, 63 bytes each, 253 in all.
  static func isHostname(_ s: String) -> Bool {
    let name = s.hasSuffix(".") ? String(s.dropLast()) : s
    guard !name.isEmpty, name.utf8.count <= 253 else { return false }
    for label in name.split(separator: ".", omittingEmptySubsequences: false) {
      guard !label.isEmpty, label.utf8.count <= 63, !label.hasPrefix("-"), !label.hasSuffix("-"),
        label.unicodeScalars.allSatisfy({
          $0.isASCIILetter || ("0"..."9").contains($0) || $0 == "-" || $0.value > 127
        })
      else { return false }
    }
    return true
  }

  /// Dotted quad, no leading zeros.
  static func isIPv4(_ s: String) -> Bool {
    let parts = s.split(separator: ".", omittingEmptySubsequences: false)
    guard parts.count == 4 else { return false }
    return parts.allSatisfy { p in
      guard !p.isEmpty, p.count <= 3, p.allSatisfy(\.isASCIIDigit), let v = Int(p), v <= 255 else {
        return false
      }
      return p == "0" || !p.hasPrefix("0")
    }
  }

  /// RFC 4291 text form, with `::` and an optional trailing dotted quad.
  static func isIPv6(_ s: String) -> Bool {
    guard !s.isEmpty, s.utf8.count <= 45 else { return false }
    var text = Substring(s)
    var groupsNeeded = 8
    if let lastColon = text.lastIndex(of: ":"), text[text.index(after: lastColon)...].contains(".") {
      guard isIPv4(String(text[text.index(after: lastColon)...])) else { return false }
      text = text[...lastColon]
      if !text.hasSuffix("::") { text = text.dropLast() }
      groupsNeeded = 6
    }
    let halves = text.split(separator: "::", omittingEmptySubsequences: false).map(String.init)
    guard halves.count <= 2 else { return false }
    func groups(_ h: String) -> [Substring]? {
      if h.isEmpty { return [] }
      let g = h.split(separator: ":", omittingEmptySubsequences: false)
      guard g.allSatisfy({ !$0.isEmpty && $0.count <= 4 && $0.allSatisfy(\.isHexDigit) }) else { return nil }
      return g
    }
    guard let a = groups(halves[0]) else { return false }
    if halves.count == 1 { return a.count == groupsNeeded }
    guard let b = groups(halves[1]) else { return false }
    return a.count + b.count < groupsNeeded
  }
}

extension Unicode.Scalar {
  fileprivate var isASCIILetter: Bool { ("a"..."z").contains(self) || ("A"..."Z").contains(self) }
}

extension Character {
  fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
