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
    let lower = text.lowercasedASCII()
    var rest: Substring
    if lower.hasPrefix("http://") {
      isTLS = false
      rest = text.dropFirst(7)
    } else if lower.hasPrefix("https://") {
      isTLS = true
      rest = text.dropFirst(8)
    } else {
      return nil
    }
    if rest.contains("?") || rest.contains("#") { return nil }
    let authority = rest.prefix { $0 != "/" }
    rest = rest.dropFirst(authority.count)
    guard !authority.isEmpty, !authority.contains("@") else { return nil }
    port = isTLS ? 443 : 80
    if authority.hasPrefix("[") {
      guard let close = authority.firstIndex(of: "]") else { return nil }
      host = String(authority[authority.index(after: authority.startIndex)..<close])
      let after = authority[authority.index(after: close)...]
      if !after.isEmpty {
        guard after.hasPrefix(":"), let n = Int(after.dropFirst()), (1...65535).contains(n) else {
          return nil
        }
        port = n
      }
    } else if let colon = authority.firstIndex(of: ":") {
      host = String(authority[..<colon])
      guard let n = Int(authority[authority.index(after: colon)...]), (1...65535).contains(n) else {
        return nil
      }
      port = n
    } else {
      host = String(authority)
    }
    guard !host.isEmpty else { return nil }
    basePath = rest.hasSuffix("/") ? String(rest.dropLast()) : String(rest)
  }

  /// The `Host` field value (RFC 9110 §7.2): the host, bracketed when IPv6, and the port unless it is the
  /// scheme's default.
  package var hostField: String {
    let name = host.contains(":") ? "[\(host)]" : host
    return port == (isTLS ? 443 : 80) ? name : "\(name):\(port)"
  }

  /// `https://host[:port]` without the base path.
  package var origin: String { (isTLS ? "https://" : "http://") + hostField }

  /// The URL as given (normalized): origin and base path.
  package var description: String { origin + basePath }
}
