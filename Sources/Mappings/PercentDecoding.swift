import MockJSON

/// A request-target (or fixture URL) whose percent-encoding is invalid.
///
/// The server answers such a request with 400 and this diagnostic; it is never matched on a replacement
/// character (RFC 3986 §2.1, §2.5).
public struct URLDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
  /// Which part held the problem: "path" or "query".
  public var component: String
  /// The raw text of that part.
  public var raw: String
  /// What is wrong, e.g. "%ZZ is not a percent sign followed by two hex digits".
  public var reason: String

  /// True when the escapes were well-formed but decode to bytes that are not UTF-8.
  public var isNotUTF8: Bool { reason.hasPrefix(URLDecodingError.notUTF8Reason) }

  static let notUTF8Reason = "the decoded bytes are not valid UTF-8"

  /// `invalid percent-encoding in query "q=%ZZ": %ZZ is not …`.
  public var description: String {
    "invalid percent-encoding in \(component) \(JSONValue.quoted(raw)): \(reason)"
  }
}

/// Percent-decoding done once, on bytes, then validated as UTF-8 (RFC 3986 §2.1, §2.5).
package enum PercentDecoding {
  /// Bytes whose escapes stay encoded in a canonical path: `/`, `?`, `#`, `%` (they would change the
  /// structure of the path if decoded).
  package static let pathReserved: Set<UInt8> = [0x2F, 0x3F, 0x23, 0x25]
  /// Bytes whose escapes stay encoded in a canonical query: the path ones plus `&`, `=`, `+`.
  package static let queryReserved: Set<UInt8> = [0x2F, 0x3F, 0x23, 0x25, 0x26, 0x3D, 0x2B]

  /// Decodes `%XX` escapes (hex digits in either case) and validates the result as UTF-8.
  /// - Parameters:
  ///   - text: the encoded text.
  ///   - component: "path" or "query", for the diagnostic.
  ///   - plusAsSpace: decode `+` as a space (query names and values, as WireMock does).
  ///   - keepEncoded: bytes whose escapes are kept, re-spelled with upper-case hex (canonical form).
  /// - Returns: the decoded text.
  /// - Throws: ``URLDecodingError`` for `%` not followed by two hex digits, or bytes that are not UTF-8.
  package static func decode(
    _ text: some StringProtocol, component: String, plusAsSpace: Bool = false,
    keepEncoded: Set<UInt8> = []
  ) throws(URLDecodingError) -> String {
    // Fast path: nothing to decode (no copy of the bytes).
    if !text.utf8.contains(0x25) && !(plusAsSpace && text.utf8.contains(0x2B)) { return String(text) }
    let b = Array(text.utf8)
    var out: [UInt8] = []
    out.reserveCapacity(b.count)
    var i = 0
    while i < b.count {
      let c = b[i]
      if c == 0x25 {
        guard i + 2 < b.count + 0, let h = hex(b[i + 1]), let l = hex(b[i + 2]) else {
          let end = min(i + 3, b.count)
          let bad = String(decoding: b[i..<end], as: UTF8.self)
          throw URLDecodingError(
            component: component, raw: String(text),
            reason: "\(bad) is not a percent sign followed by two hex digits")
        }
        let byte = h << 4 | l
        if keepEncoded.contains(byte) {
          out.append(0x25)
          out.append(upperHex(byte >> 4))
          out.append(upperHex(byte & 0xF))
        } else {
          out.append(byte)
        }
        i += 3
      } else if c == 0x2B && plusAsSpace {
        out.append(0x20)
        i += 1
      } else {
        out.append(c)
        i += 1
      }
    }
    guard let s = String(validating: out, as: UTF8.self) else {
      throw URLDecodingError(
        component: component, raw: String(text),
        reason: URLDecodingError.notUTF8Reason + " (a truncated or invalid multi-byte sequence)")
    }
    return s
  }

  /// The canonical form of a path: escapes decoded except those of `/ ? # %`, UTF-8 validated; an empty
  /// path becomes `/`.
  package static func canonicalPath(_ raw: some StringProtocol) throws(URLDecodingError) -> String {
    if raw.isEmpty { return "/" }
    return try decode(raw, component: "path", keepEncoded: pathReserved)
  }

  /// The canonical form of a query string: escapes decoded except those of `/ ? # % & = +`; `+` kept.
  package static func canonicalQuery(_ raw: some StringProtocol) throws(URLDecodingError) -> String {
    try decode(raw, component: "query", keepEncoded: queryReserved)
  }

  /// Splits a raw query on `&` and the first `=`, decoding names and values fully (`+` as space).
  /// An empty element (`a=1&&b=2`) is skipped; `flag` without `=` has the value "".
  package static func queryParameters(_ raw: String) throws(URLDecodingError) -> [(String, String)] {
    var result: [(String, String)] = []
    for part in raw.split(separator: "&", omittingEmptySubsequences: true) {
      let name: Substring
      let value: Substring
      if let eq = part.firstIndex(of: "=") {
        name = part[..<eq]
        value = part[part.index(after: eq)...]
      } else {
        name = part
        value = ""
      }
      result.append(
        (
          try decode(name, component: "query", plusAsSpace: true),
          try decode(value, component: "query", plusAsSpace: true)
        ))
    }
    return result
  }

  @inline(__always) static func hex(_ c: UInt8) -> UInt8? {
    switch c {
    case 48...57: return c - 48
    case 65...70: return c - 55
    case 97...102: return c - 87
    default: return nil
    }
  }

  @inline(__always) static func upperHex(_ v: UInt8) -> UInt8 { v < 10 ? 48 + v : 55 + v }
}

/// Minimal base64 (RFC 4648 §4) without Foundation, for Basic credentials and `base64Body`.
package enum Base64 {
  package static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  /// Decodes standard base64 (padding optional, ASCII whitespace ignored); nil for any other byte.
  package static func decode(_ text: String) -> [UInt8]? {
    var values: [UInt8] = []
    values.reserveCapacity(text.utf8.count)
    var padding = 0
    for c in text.utf8 {
      switch c {
      case 65...90: values.append(c - 65)
      case 97...122: values.append(c - 71)
      case 48...57: values.append(c + 4)
      case 0x2B: values.append(62)
      case 0x2F: values.append(63)
      case 0x3D: padding += 1
      case 0x20, 0x0A, 0x0D, 0x09: continue
      default: return nil
      }
      if padding > 0 && c != 0x3D { return nil }
    }
    if padding > 2 || values.count % 4 == 1 { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(values.count * 3 / 4)
    var k = 0
    while k + 4 <= values.count {
      out.append(values[k] << 2 | values[k + 1] >> 4)
      out.append(values[k + 1] << 4 | values[k + 2] >> 2)
      out.append(values[k + 2] << 6 | values[k + 3])
      k += 4
    }
    let rest = values.count - k
    if rest >= 2 { out.append(values[k] << 2 | values[k + 1] >> 4) }
    if rest == 3 { out.append(values[k + 1] << 4 | values[k + 2] >> 2) }
    return out
  }

  /// Encodes bytes as standard padded base64.
  package static func encode(_ bytes: [UInt8]) -> String {
    var out: [UInt8] = []
    encode(bytes, into: &out)
    return String(decoding: out, as: UTF8.self)
  }

  /// Appends the standard padded base64 of `bytes` to `out`.
  package static func encode(_ bytes: [UInt8], into out: inout [UInt8]) {
    var k = 0
    while k < bytes.count {
      let b0 = bytes[k]
      let b1 = k + 1 < bytes.count ? bytes[k + 1] : 0
      let b2 = k + 2 < bytes.count ? bytes[k + 2] : 0
      out.append(alphabet[Int(b0 >> 2)])
      out.append(alphabet[Int((b0 & 3) << 4 | b1 >> 4)])
      out.append(k + 1 < bytes.count ? alphabet[Int((b1 & 0xF) << 2 | b2 >> 6)] : 0x3D)
      out.append(k + 2 < bytes.count ? alphabet[Int(b2 & 0x3F)] : 0x3D)
      k += 3
    }
  }
}
