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

  /// The parts of `body` when `contentType` is `multipart/*` with a boundary (at most ``maximumParts``);
  /// empty otherwise. A body cut short keeps the parts that ended with a delimiter.
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
