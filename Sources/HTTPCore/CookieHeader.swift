/// The `Cookie` request field (RFC 6265 §4.2.1, `cookie-string = cookie-pair *( ";" SP cookie-pair )`),
/// read as servlet containers read it for WireMock: leniently.
public enum CookieHeader {
  /// The name/value pairs of one `Cookie` field value, in order: split on `;`, the name and the value each
  /// trimmed of optional whitespace (so `a = 1` is `a`/`1`), a value in double quotes unquoted (RFC 6265
  /// §4.1.1 allows `cookie-value = DQUOTE *cookie-octet DQUOTE`), a pair without `=` a name with an empty
  /// value, empty pairs skipped. Values are not percent-decoded.
  public static func pairs(_ line: String) -> [(name: String, value: String)] {
    var out: [(name: String, value: String)] = []
    for pair in line.split(separator: ";") {
      let trimmed = pair.trimmingOWS()
      guard !trimmed.isEmpty else { continue }
      guard let eq = trimmed.firstIndex(of: "=") else {
        out.append((trimmed, ""))
        continue
      }
      let name = String(trimmed[..<eq]).trimmingOWS()
      var value = String(trimmed[trimmed.index(after: eq)...]).trimmingOWS()
      if value.utf8.count >= 2, value.utf8.first == UInt8(ascii: "\""), value.utf8.last == UInt8(ascii: "\"")
      {
        value = String(value.dropFirst().dropLast())
      }
      out.append((name, value))
    }
    return out
  }
}
