import Foundation

/// Percent-encoding of URL parts and form fields (RFC 3986 §2, WHATWG URL §5.2), done on UTF-8 bytes.
enum PercentEncoding {
  private static let hex: [UInt8] = Array("0123456789ABCDEF".utf8)

  private static func isUnreserved(_ b: UInt8) -> Bool {
    (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || (b >= 0x30 && b <= 0x39) || b == 0x2D
      || b == 0x2E || b == 0x5F || b == 0x7E
  }

  private static func encode(_ text: String, keep: (UInt8) -> Bool, spaceAsPlus: Bool = false) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(text.utf8.count)
    for b in text.utf8 {
      if keep(b) {
        out.append(b)
      } else if spaceAsPlus && b == 0x20 {
        out.append(0x2B)
      } else {
        out.append(0x25)
        out.append(hex[Int(b >> 4)])
        out.append(hex[Int(b & 0x0F)])
      }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// A query name or value: only unreserved characters stay literal, so `+`, `&`, `=` and `;` are always
  /// escaped and reach the server as written.
  static func queryComponent(_ text: String) -> String {
    encode(text, keep: isUnreserved)
  }

  /// A form field name or value (`application/x-www-form-urlencoded`): space becomes `+`.
  static func formComponent(_ text: String) -> String {
    encode(text, keep: { isUnreserved($0) && $0 != 0x7E || $0 == 0x2A }, spaceAsPlus: true)
  }

  /// A path: unreserved characters, sub-delims, `:`, `@` and `/` stay literal (RFC 3986 §3.3); `%`,
  /// space, `?`, `#` and non-ASCII are escaped.
  static func path(_ text: String) -> String {
    encode(text) { b in
      isUnreserved(b) || b == 0x2F || b == 0x3A || b == 0x40 || b == 0x21 || b == 0x24 || b == 0x26
        || b == 0x27 || b == 0x28 || b == 0x29 || b == 0x2A || b == 0x2B || b == 0x2C || b == 0x3B
        || b == 0x3D
    }
  }

  /// Joins a base path and a relative path with exactly one `/` whatever slashes either side has.
  static func join(basePath: String, _ path: String) -> String {
    var base = Substring(basePath)
    while base.hasSuffix("/") { base = base.dropLast() }
    var rel = Substring(path)
    while rel.hasPrefix("/") { rel = rel.dropFirst() }
    if rel.isEmpty { return base.isEmpty ? "/" : String(base) + (path.hasSuffix("/") ? "/" : "") }
    return String(base) + "/" + String(rel)
  }

  /// The query string for `items` in order, each name and value encoded with ``queryComponent(_:)``; an
  /// item with a nil value is sent as its bare name.
  static func query(_ items: [URLQueryItem]) -> String {
    items.map { item in
      let name = queryComponent(item.name)
      guard let value = item.value else { return name }
      return name + "=" + queryComponent(value)
    }.joined(separator: "&")
  }
}
