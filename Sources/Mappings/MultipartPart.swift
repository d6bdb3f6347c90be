import HTTPCore
import MockJSON

/// One part of a `multipart/form-data` (RFC 7578) or other `multipart/*` body (RFC 2046 §5.1).
public struct MultipartPart: Sendable, Hashable {
  /// The part's header fields.
  public var headers: HTTPHeaders
  /// The part's body bytes.
  public var body: [UInt8]

  /// Creates a part.
  public init(headers: HTTPHeaders, body: [UInt8]) {
    self.headers = headers
    self.body = body
  }

  /// Most parts read from one body.
  package static let maximumParts = 1_000

  /// The `name` parameter of the part's `Content-Disposition` (RFC 7578 §4.2), nil without one.
  public var name: String? { Self.parameter("name", of: headers.first("Content-Disposition")) }

  /// The `filename` parameter of the part's `Content-Disposition`, nil without one.
  public var fileName: String? { Self.parameter("filename", of: headers.first("Content-Disposition")) }

  /// A parameter of a header field value (`form-data; name="x"`), unquoted.
  package static func parameter(_ name: String, of value: String?) -> String? {
    guard let value else { return nil }
    var rest = Substring(value)
    // Skip the first token (the disposition type or media type).
    guard let semicolon = rest.firstIndex(of: ";") else { return nil }
    rest = rest[rest.index(after: semicolon)...]
    while !rest.isEmpty {
      while rest.first == " " || rest.first == "\t" || rest.first == ";" { rest = rest.dropFirst() }
      guard let eq = rest.firstIndex(of: "=") else { return nil }
      let key = rest[..<eq].trimmingOWS()
      rest = rest[rest.index(after: eq)...]
      var v = ""
      if rest.first == "\"" {
        rest = rest.dropFirst()
        var escaped = false
        while let c = rest.first {
          rest = rest.dropFirst()
          if escaped {
            v.append(c)
            escaped = false
          } else if c == "\\" {
            escaped = true
          } else if c == "\"" {
            break
          } else {
            v.append(c)
          }
        }
        if let semi = rest.firstIndex(of: ";") { rest = rest[semi...] } else { rest = "" }
      } else {
        let end = rest.firstIndex(of: ";") ?? rest.endIndex
        v = rest[..<end].trimmingOWS()
        rest = rest[end...]
      }
      if key.lowercased() == name.lowercased() { return v }
    }
    return nil
  }

  /// The parts of `body` when `contentType` is `multipart/*` with a boundary; empty otherwise (also for
  /// a body without a closing delimiter's parts before it being kept: a truncated body keeps the parts
  /// that were complete).
  package static func parse(_ body: [UInt8], contentType: String?) -> [MultipartPart] {
    guard let contentType, contentType.lowercased().hasPrefix("multipart/"),
      let boundary = parameter("boundary", of: contentType), !boundary.isEmpty, boundary.utf8.count <= 200
    else { return [] }
    let delimiter = Array("--\(boundary)".utf8)
    var parts: [MultipartPart] = []
    // Positions of each delimiter at the start of the body or after CRLF (or LF).
    var starts: [Int] = []
    var i = 0
    while let k = find(delimiter, in: body, from: i) {
      let atLineStart = k == 0 || body[k - 1] == 0x0A
      if atLineStart { starts.append(k) }
      i = k + delimiter.count
      if starts.count > maximumParts + 1 { break }
    }
    guard starts.count >= 2 else { return [] }
    for n in 0..<(starts.count - 1) {
      var p = starts[n] + delimiter.count
      // "--" after the delimiter closes the body.
      if p + 1 < body.count, body[p] == 0x2D, body[p + 1] == 0x2D { break }
      // Transport padding, then the line break.
      while p < body.count, body[p] == 0x20 || body[p] == 0x09 { p += 1 }
      if p < body.count, body[p] == 0x0D { p += 1 }
      if p < body.count, body[p] == 0x0A { p += 1 }
      var end = starts[n + 1]
      // The line break before the next delimiter belongs to it.
      if end > p, body[end - 1] == 0x0A { end -= 1 }
      if end > p, body[end - 1] == 0x0D { end -= 1 }
      guard end >= p else { continue }
      parts.append(part(Array(body[p..<end])))
    }
    return parts
  }

  private static func part(_ bytes: [UInt8]) -> MultipartPart {
    var headers = HTTPHeaders()
    var i = 0
    while i < bytes.count {
      var lineEnd = i
      while lineEnd < bytes.count, bytes[lineEnd] != 0x0A { lineEnd += 1 }
      var line = bytes[i..<lineEnd]
      if line.last == 0x0D { line = line.dropLast() }
      i = min(lineEnd + 1, bytes.count)
      if line.isEmpty { return MultipartPart(headers: headers, body: Array(bytes[i...])) }
      let text = String(decoding: line, as: UTF8.self)
      if let colon = text.firstIndex(of: ":") {
        headers.add(
          name: String(text[..<colon]).trimmingOWS(),
          value: String(text[text.index(after: colon)...]).trimmingOWS())
      }
    }
    // No blank line: a part with headers only.
    return MultipartPart(headers: headers, body: [])
  }

  private static func find(_ needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
    guard let first = needle.first, haystack.count >= needle.count else { return nil }
    var i = from
    let last = haystack.count - needle.count
    while i <= last {
      if haystack[i] == first {
        var k = 1
        while k < needle.count && haystack[i + k] == needle[k] { k += 1 }
        if k == needle.count { return i }
      }
      i += 1
    }
    return nil
  }
}

/// `application/x-www-form-urlencoded` bodies as WHATWG's URL standard decodes them (§5.1): fields split
/// on `&`, name and value on the first `=`, `+` is a space, percent-escapes decoded (invalid ones kept),
/// then UTF-8 with invalid sequences replaced.
package enum FormDecoding {
  /// The fields of `body` when `contentType` is `application/x-www-form-urlencoded`; empty otherwise.
  package static func fields(_ body: [UInt8], contentType: String?) -> [(name: String, value: String)] {
    guard let contentType,
      contentType.split(separator: ";").first?.trimmingOWS().lowercased()
        == "application/x-www-form-urlencoded"
    else { return [] }
    var out: [(name: String, value: String)] = []
    for field in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
      let eq = field.firstIndex(of: UInt8(ascii: "="))
      let name = eq.map { field[..<$0] } ?? field[...]
      let value = eq.map { field[field.index(after: $0)...] } ?? []
      out.append((decode(name), decode(value)))
    }
    return out
  }

  /// WHATWG percent-decoding with `+` as space.
  package static func decode(_ bytes: ArraySlice<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var i = bytes.startIndex
    while i < bytes.endIndex {
      let c = bytes[i]
      if c == 0x25, i + 2 < bytes.endIndex, let h = PercentDecoding.hex(bytes[i + 1]),
        let l = PercentDecoding.hex(bytes[i + 2])
      {
        out.append(h << 4 | l)
        i += 3
      } else {
        out.append(c == 0x2B ? 0x20 : c)
        i += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// One entry of `multipartPatterns`: header and body matchers that one part (`ANY`) or every part (`ALL`)
/// of a `multipart/*` body must satisfy.
public struct MultipartPattern: Sendable, Hashable, CustomStringConvertible {
  /// `matchingType`.
  public enum MatchingType: String, Sendable, Hashable {
    /// At least one part matches (WireMock's default).
    case any = "ANY"
    /// Every part matches.
    case all = "ALL"
  }

  /// `matchingType`.
  public var matchingType: MatchingType
  /// `name`: the part's `Content-Disposition` name, when given.
  public var name: String?
  /// `headers` of the part (names case-insensitive).
  public var headers: [RequestPattern.NamedMulti]
  /// `bodyPatterns` applied to the part's body (its `Content-Type` charset decides the text).
  public var bodyPatterns: [StringValuePattern]

  /// Creates a pattern.
  public init(
    matchingType: MatchingType = .any, name: String? = nil, headers: [RequestPattern.NamedMulti] = [],
    bodyPatterns: [StringValuePattern] = []
  ) {
    self.matchingType = matchingType
    self.name = name
    self.headers = headers
    self.bodyPatterns = bodyPatterns
  }

  /// 0 when `parts` satisfy the pattern, otherwise how far they are (0 < d ≤ 1).
  public func distance(_ parts: [MultipartPart]) -> Double {
    guard !parts.isEmpty else { return 1 }
    let each = parts.map(partDistance)
    switch matchingType {
    case .any: return each.min() ?? 1
    case .all:
      return each.allSatisfy { $0 == 0 }
        ? 0 : max(MatchResult.minimumMiss, each.reduce(0, +) / Double(each.count))
    }
  }

  /// Share of this pattern's matchers the part fails (0 = the part matches).
  private func partDistance(_ part: MultipartPart) -> Double {
    var total = 0
    var failed = 0
    if let name {
      total += 1
      if part.name != name { failed += 1 }
    }
    for h in headers {
      total += 1
      if !h.pattern.match(part.headers.values(h.name)) { failed += 1 }
    }
    if !bodyPatterns.isEmpty {
      let view = RequestView(part: part)
      for b in bodyPatterns {
        total += 1
        if !b.matchBody(view) { failed += 1 }
      }
    }
    guard failed > 0 else { return 0 }
    return max(MatchResult.minimumMiss, Double(failed) / Double(max(total, 1)))
  }

  /// WireMock JSON form.
  public var json: JSONValue {
    var pairs: [(String, JSONValue)] = [("matchingType", .string(matchingType.rawValue))]
    if let name { pairs.append(("name", .string(name))) }
    if !headers.isEmpty {
      pairs.append(("headers", .object(JSONObject(pairs: headers.map { ($0.name, $0.pattern.json) }))))
    }
    if !bodyPatterns.isEmpty { pairs.append(("bodyPatterns", .array(bodyPatterns.map(\.json)))) }
    return .object(JSONObject(pairs: pairs))
  }

  /// Compact JSON form.
  public var description: String { json.serialized() }
}
