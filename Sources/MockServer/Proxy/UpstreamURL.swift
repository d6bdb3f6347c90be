/// An upstream's base URL split for connecting: `http` or `https`, host, port and base path
/// (`https://api.example.com:8443/v1` → https, api.example.com, 8443, `/v1`).
package struct UpstreamURL: Sendable, Hashable, CustomStringConvertible {
  /// True for `https`.
  package var isTLS: Bool
  /// Host name or IP literal (IPv6 without brackets).
  package var host: String
  /// TCP port (default 80 or 443).
  package var port: Int
  /// Path prefix without a trailing slash, or empty.
  package var basePath: String

  /// Parses `http(s)://host[:port][/path]`; nil for anything else (query, fragment, user information,
  /// other schemes, ports outside 1...65535).
  package init?(_ text: String) {
    // Over the UTF-8 bytes (every delimiter is ASCII): this runs for every proxied request, and the
    // `Substring` walk with Foundation's `contains` it replaces was a sixth of a proxied request's
    // instructions.
    var copy = text
    guard let parsed = copy.withUTF8({ Self.parse($0) }) else { return nil }
    (isTLS, host, port, basePath) = parsed
  }

  private static func parse(_ b: UnsafeBufferPointer<UInt8>) -> (Bool, String, Int, String)? {
    func hasScheme(_ scheme: String) -> Bool {
      // ASCII case-insensitive (`HTTPS://` is the same scheme, RFC 3986 §3.1).
      guard b.count >= scheme.utf8.count else { return false }
      return zip(b, scheme.utf8).allSatisfy { c, s in (c >= 65 && c <= 90 ? c + 32 : c) == s }
    }
    func text(_ range: Range<Int>) -> String {
      String(decoding: UnsafeBufferPointer(rebasing: b[range]), as: UTF8.self)
    }
    let isTLS: Bool
    var i: Int
    if hasScheme("http://") {
      (isTLS, i) = (false, 7)
    } else if hasScheme("https://") {
      (isTLS, i) = (true, 8)
    } else {
      return nil
    }
    if b[i...].contains(UInt8(ascii: "?")) || b[i...].contains(UInt8(ascii: "#")) { return nil }
    let authorityStart = i
    while i < b.count, b[i] != UInt8(ascii: "/") { i += 1 }
    let authority = authorityStart..<i
    guard !authority.isEmpty, !b[authority].contains(UInt8(ascii: "@")) else { return nil }
    var port = isTLS ? 443 : 80
    func parsePort(_ digits: Range<Int>) -> Int? {
      guard let n = Int(text(digits)), (1...65535).contains(n) else { return nil }
      return n
    }
    let host: String
    if b[authority.lowerBound] == UInt8(ascii: "[") {
      guard let close = b[authority].firstIndex(of: UInt8(ascii: "]")) else { return nil }
      host = text((authority.lowerBound + 1)..<close)
      let after = (close + 1)..<authority.upperBound
      if !after.isEmpty {
        guard b[after.lowerBound] == UInt8(ascii: ":"),
          let n = parsePort((after.lowerBound + 1)..<after.upperBound)
        else { return nil }
        port = n
      }
    } else if let colon = b[authority].firstIndex(of: UInt8(ascii: ":")) {
      host = text(authority.lowerBound..<colon)
      guard let n = parsePort((colon + 1)..<authority.upperBound) else { return nil }
      port = n
    } else {
      host = text(authority)
    }
    guard !host.isEmpty else { return nil }
    var pathEnd = b.count
    if pathEnd > i, b[pathEnd - 1] == UInt8(ascii: "/") { pathEnd -= 1 }
    return (isTLS, host, port, text(i..<pathEnd))
  }

  /// The `Host` field value (RFC 9110 §7.2): the host, bracketed when IPv6, and the port unless it is the
  /// scheme's default.
  package var hostField: String {
    let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
    return port == (isTLS ? 443 : 80) ? name : "\(name):\(port)"
  }

  /// `https://host[:port]` without the base path.
  package var origin: String { (isTLS ? "https://" : "http://") + hostField }

  /// The URL as given (normalized): origin and base path.
  package var description: String { origin + basePath }
}
