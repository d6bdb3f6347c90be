/// A JSON syntax error with its position (1-based line and column, columns counted in bytes).
public struct JSONParseError: Error, Sendable, Hashable, CustomStringConvertible {
  /// 1-based line of the offending byte.
  public var line: Int
  /// 1-based column (byte) of the offending byte.
  public var column: Int
  /// What the grammar allowed at this position, e.g. "',' or '}'".
  public var expected: String
  /// What was there instead, e.g. "'x'" or "end of input".
  public var found: String

  /// `line 3, column 5: expected ',' or '}', found 'x'`.
  public var description: String { "line \(line), column \(column): expected \(expected), found \(found)" }
}

extension JSONValue {
  /// Parses JSON text (RFC 8259), keeping number spelling and member order.
  /// - Parameter text: the document; surrounding whitespace allowed, nothing else after the value.
  /// - Returns: the value.
  /// - Throws: ``JSONParseError`` with line and column for any syntax error, invalid UTF-8, a lone
  ///   surrogate escape, or nesting deeper than 512 levels.
  public static func parse(_ text: String) throws(JSONParseError) -> JSONValue {
    try parse(bytes: Array(text.utf8))
  }

  /// Parses JSON from UTF-8 bytes; see ``parse(_:)-(String)``.
  /// - Parameter allowComments: accept `//` line comments and `/* */` block comments wherever whitespace
  ///   may stand, as WireMock's reader does for mapping files (fixture files only; off for request bodies).
  public static func parse(bytes: [UInt8], allowComments: Bool = false) throws(JSONParseError) -> JSONValue {
    var parser = JSONParser(bytes: bytes)
    parser.allowComments = allowComments
    return try parser.parseDocument()
  }
}

/// Recursive-descent JSON parser over UTF-8 bytes.
package struct JSONParser {
  package let b: [UInt8]
  package var i = 0
  package var depth = 0
  package static let maxDepth = 512
  /// `//` and `/* */` comments count as whitespace.
  package var allowComments = false

  package init(bytes: [UInt8]) {
    // Skip a UTF-8 byte order mark.
    if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF {
      b = Array(bytes[3...])
    } else {
      b = bytes
    }
  }

  package mutating func parseDocument() throws(JSONParseError) -> JSONValue {
    skipWhitespace()
    let v = try parseValue()
    skipWhitespace()
    if i < b.count { throw error(expected: "end of input") }
    return v
  }

  package func position(_ offset: Int) -> (Int, Int) {
    var line = 1
    var col = 1
    var k = 0
    while k < offset, k < b.count {
      if b[k] == 0x0A {
        line += 1
        col = 1
      } else if b[k] & 0xC0 != 0x80 {
        col += 1
      }
      k += 1
    }
    return (line, col)
  }

  package func foundDescription(_ offset: Int) -> String {
    guard offset < b.count else { return "end of input" }
    let c = b[offset]
    if c >= 0x20 && c < 0x7F { return "'\(Character(Unicode.Scalar(c)))'" }
    if c == 0x0A { return "a line break" }
    return "byte 0x" + String(c, radix: 16, uppercase: true)
  }

  package func error(expected: String, at offset: Int? = nil, found: String? = nil) -> JSONParseError {
    let at = offset ?? i
    let (l, c) = position(at)
    return JSONParseError(line: l, column: c, expected: expected, found: found ?? foundDescription(at))
  }

  package mutating func skipWhitespace() {
    while i < b.count {
      if b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 {
        i += 1
      } else if allowComments, b[i] == UInt8(ascii: "/"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "/") {
        while i < b.count, b[i] != 0x0A { i += 1 }
      } else if allowComments, b[i] == UInt8(ascii: "/"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "*") {
        var k = i + 2
        while k + 1 < b.count, !(b[k] == UInt8(ascii: "*") && b[k + 1] == UInt8(ascii: "/")) { k += 1 }
        // An unclosed comment leaves `i` on it: the caller reports what it expected there.
        guard k + 1 < b.count else { return }
        i = k + 2
      } else {
        return
      }
    }
  }

  package mutating func parseValue() throws(JSONParseError) -> JSONValue {
    guard i < b.count else { throw error(expected: "a value") }
    switch b[i] {
    case UInt8(ascii: "{"): return try parseObject()
    case UInt8(ascii: "["): return try parseArray()
    case UInt8(ascii: "\""): return .string(try parseString())
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
    default: throw error(expected: "a value")
    }
  }

  package mutating func literal(_ word: String, _ value: JSONValue) throws(JSONParseError) -> JSONValue {
    let w = Array(word.utf8)
    guard i + w.count <= b.count, Array(b[i..<(i + w.count)]) == w else {
      throw error(expected: "a value")
    }
    i += w.count
    return value
  }

  package mutating func enter() throws(JSONParseError) {
    depth += 1
    if depth > JSONParser.maxDepth {
      throw error(expected: "at most \(JSONParser.maxDepth) levels of nesting", found: "deeper nesting")
    }
  }

  package mutating func parseObject() throws(JSONParseError) -> JSONValue {
    try enter()
    i += 1
    var members: [JSONObject.Member] = []
    skipWhitespace()
    if i < b.count, b[i] == UInt8(ascii: "}") {
      i += 1
      depth -= 1
      return .object(JSONObject(members))
    }
    while true {
      skipWhitespace()
      guard i < b.count, b[i] == UInt8(ascii: "\"") else {
        throw error(expected: "a member name in double quotes")
      }
      let key = try parseString()
      skipWhitespace()
      guard i < b.count, b[i] == UInt8(ascii: ":") else { throw error(expected: "':'") }
      i += 1
      skipWhitespace()
      let value = try parseValue()
      members.append(JSONObject.Member(key: key, value: value))
      skipWhitespace()
      guard i < b.count else { throw error(expected: "',' or '}'") }
      if b[i] == UInt8(ascii: ",") {
        i += 1
        continue
      }
      if b[i] == UInt8(ascii: "}") {
        i += 1
        depth -= 1
        return .object(JSONObject(members))
      }
      throw error(expected: "',' or '}'")
    }
  }

  package mutating func parseArray() throws(JSONParseError) -> JSONValue {
    try enter()
    i += 1
    var items: [JSONValue] = []
    skipWhitespace()
    if i < b.count, b[i] == UInt8(ascii: "]") {
      i += 1
      depth -= 1
      return .array(items)
    }
    while true {
      skipWhitespace()
      items.append(try parseValue())
      skipWhitespace()
      guard i < b.count else { throw error(expected: "',' or ']'") }
      if b[i] == UInt8(ascii: ",") {
        i += 1
        continue
      }
      if b[i] == UInt8(ascii: "]") {
        i += 1
        depth -= 1
        return .array(items)
      }
      throw error(expected: "',' or ']'")
    }
  }

  package mutating func parseNumber() throws(JSONParseError) -> JSONValue {
    let start = i
    while i < b.count {
      let c = b[i]
      if JSONNumber.isDigit(c) || c == UInt8(ascii: "-") || c == UInt8(ascii: "+") || c == UInt8(ascii: ".")
        || c == UInt8(ascii: "e") || c == UInt8(ascii: "E")
      {
        i += 1
      } else {
        break
      }
    }
    let text = String(decoding: b[start..<i], as: UTF8.self)
    guard let n = JSONNumber(text: text) else {
      throw error(
        expected: "a number such as 12, -3.5 or 1e9", at: start, found: "'\(text)'")
    }
    return .number(n)
  }

  package func hexValue(_ c: UInt8) -> UInt32? {
    switch c {
    case 48...57: return UInt32(c - 48)
    case 65...70: return UInt32(c - 55)
    case 97...102: return UInt32(c - 87)
    default: return nil
    }
  }

  package mutating func hex4() throws(JSONParseError) -> UInt32 {
    guard i + 4 <= b.count else { throw error(expected: "four hex digits after \\u") }
    var v: UInt32 = 0
    for k in 0..<4 {
      guard let h = hexValue(b[i + k]) else {
        throw error(expected: "four hex digits after \\u", at: i + k)
      }
      v = v << 4 | h
    }
    i += 4
    return v
  }

  package mutating func parseString() throws(JSONParseError) -> String {
    // Most strings have no escape: one pass over the buffer finds the closing quote and whether the text
    // is ASCII, and the string is made from the bytes in place (indexing the array byte by byte, with
    // its bounds checks, was most of the parse of a mapping file).
    let open = i
    let run = b.withUnsafeBufferPointer { buffer -> (end: Int, ascii: Bool)? in
      var k = open + 1
      var ascii = true
      while k < buffer.count {
        let c = buffer[k]
        if c == UInt8(ascii: "\"") { return (k, ascii) }
        if c == UInt8(ascii: "\\") || c < 0x20 { return nil }
        if c >= 0x80 { ascii = false }
        k += 1
      }
      return nil
    }
    if let (end, ascii) = run {
      let text = b.withUnsafeBufferPointer { buffer -> String? in
        let bytes = UnsafeBufferPointer(rebasing: buffer[(open + 1)..<end])
        return ascii ? String(decoding: bytes, as: UTF8.self) : String(validating: bytes, as: UTF8.self)
      }
      guard let text else {
        throw error(expected: "valid UTF-8 text in the string", at: open, found: "invalid UTF-8")
      }
      i = end + 1
      return text
    }
    // Escapes, control characters (an error) and unclosed strings, byte by byte.
    i += 1
    var out: [UInt8] = []
    var runStart = i
    while true {
      guard i < b.count else {
        throw error(expected: "'\"' closing the string opened at \(describe(open))")
      }
      let c = b[i]
      if c == UInt8(ascii: "\"") {
        if runStart == open + 1 {
          // No escape (most strings): the text straight from the input, no intermediate array.
          let run = b[runStart..<i]
          i += 1
          guard let s = Self.text(run) else {
            throw error(expected: "valid UTF-8 text in the string", at: open, found: "invalid UTF-8")
          }
          return s
        }
        append(runStart..<i, to: &out)
        i += 1
        break
      }
      if c < 0x20 {
        throw error(expected: "a string character (control characters must be escaped)")
      }
      if c == UInt8(ascii: "\\") {
        append(runStart..<i, to: &out)
        i += 1
        guard i < b.count else { throw error(expected: "an escape character") }
        let e = b[i]
        i += 1
        switch e {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5C)
        case UInt8(ascii: "/"): out.append(0x2F)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0C)
        case UInt8(ascii: "n"): out.append(0x0A)
        case UInt8(ascii: "r"): out.append(0x0D)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
          var scalar = try hex4()
          if scalar >= 0xD800 && scalar < 0xDC00 {
            guard i + 2 <= b.count, b[i] == UInt8(ascii: "\\"), b[i + 1] == UInt8(ascii: "u") else {
              throw error(expected: "a low surrogate \\uDC00-\\uDFFF after a high surrogate")
            }
            i += 2
            let low = try hex4()
            guard low >= 0xDC00 && low < 0xE000 else {
              throw error(expected: "a low surrogate \\uDC00-\\uDFFF after a high surrogate", at: i - 6)
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
          } else if scalar >= 0xDC00 && scalar < 0xE000 {
            throw error(expected: "a high surrogate before a low surrogate", at: i - 6)
          }
          guard let u = Unicode.Scalar(scalar) else { throw error(expected: "a valid \\u escape") }
          out.append(contentsOf: Array(String(Character(u)).utf8))
        default:
          throw error(expected: "one of \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX", at: i - 2)
        }
        runStart = i
        continue
      }
      i += 1
    }
    guard let s = Self.text(out[...]) else {
      throw error(expected: "valid UTF-8 text in the string", at: open, found: "invalid UTF-8")
    }
    return s
  }

  /// Appends the input bytes at `range` to `out` (a generic append of an `ArraySlice` cost about 270
  /// instructions a call).
  func append(_ range: Range<Int>, to out: inout [UInt8]) {
    b.withUnsafeBufferPointer { out.append(contentsOf: UnsafeBufferPointer(rebasing: $0[range])) }
  }

  /// `bytes` as text, or nil when they are not valid UTF-8. ASCII (most JSON strings) is checked with a
  /// byte loop and copied without the generic validator (which looked up type metadata on every string).
  static func text(_ bytes: ArraySlice<UInt8>) -> String? {
    bytes.withUnsafeBufferPointer { buffer in
      var ascii = true
      for c in buffer where c >= 0x80 {
        ascii = false
        break
      }
      return ascii ? String(decoding: buffer, as: UTF8.self) : String(validating: buffer, as: UTF8.self)
    }
  }

  package func describe(_ offset: Int) -> String {
    let (l, c) = position(offset)
    return "line \(l), column \(c)"
  }
}
