extension JSONValue {
  /// JSON text for this value, numbers spelled exactly as parsed, members in stored order.
  /// - Parameter pretty: when true, two-space indentation and one member or element per line.
  /// - Returns: the text; non-ASCII characters are written as UTF-8, control characters escaped.
  public func serialized(pretty: Bool = false) -> String {
    String(decoding: serializedBytes(pretty: pretty), as: UTF8.self)
  }

  /// The serialized text as UTF-8 bytes.
  public func serializedBytes(pretty: Bool = false) -> [UInt8] {
    var out: [UInt8] = []
    write(to: &out, pretty: pretty, indent: 0)
    return out
  }

  package func write(to out: inout [UInt8], pretty: Bool, indent: Int) {
    switch self {
    case .null: JSONValue.literal("null", &out)
    case .bool(let b): JSONValue.literal(b ? "true" : "false", &out)
    case .number(let n):
      var text = n.text
      text.withUTF8 { out.append(contentsOf: $0) }
    case .string(let s): JSONValue.writeString(s, to: &out)
    case .array(let items):
      if items.isEmpty {
        JSONValue.literal("[]", &out)
        return
      }
      out.append(UInt8(ascii: "["))
      for (k, item) in items.enumerated() {
        if k > 0 { out.append(UInt8(ascii: ",")) }
        if pretty { JSONValue.newline(indent + 2, &out) }
        item.write(to: &out, pretty: pretty, indent: indent + 2)
      }
      if pretty { JSONValue.newline(indent, &out) }
      out.append(UInt8(ascii: "]"))
    case .object(let o):
      if o.members.isEmpty {
        JSONValue.literal("{}", &out)
        return
      }
      out.append(UInt8(ascii: "{"))
      for (k, m) in o.members.enumerated() {
        if k > 0 { out.append(UInt8(ascii: ",")) }
        if pretty { JSONValue.newline(indent + 2, &out) }
        JSONValue.writeString(m.key, to: &out)
        JSONValue.literal(pretty ? ": " : ":", &out)
        m.value.write(to: &out, pretty: pretty, indent: indent + 2)
      }
      if pretty { JSONValue.newline(indent, &out) }
      out.append(UInt8(ascii: "}"))
    }
  }

  /// Appends a literal's bytes (a `String`'s UTF-8 view is appended through a generic copy).
  private static func literal(_ text: StaticString, _ out: inout [UInt8]) {
    text.withUTF8Buffer { out.append(contentsOf: $0) }
  }

  private static func newline(_ indent: Int, _ out: inout [UInt8]) {
    out.append(UInt8(ascii: "\n"))
    out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
  }

  /// Writes `s` as a JSON string literal (UTF-8): the project's one JSON string escaper. `"`, `\\` and
  /// the control characters are escaped (`\n`, `\r`, `\t`, `\b`, `\f`, else `\u00XX`); every other
  /// character is written as its UTF-8 bytes, copied in runs (a UTF-8 byte below 0x80 is always a whole
  /// character, so escaping bytes is escaping characters).
  package static func writeString(_ s: String, to out: inout [UInt8]) {
    var s = s
    s.withUTF8 { escape(validUTF8: $0, to: &out) }
  }

  /// ``writeString(_:to:)`` for text given as bytes (received field values): bytes that are not ASCII
  /// are read as `String(decoding:as:)` reads them (each invalid UTF-8 sequence as U+FFFD), so the
  /// literal is what the `String` of those bytes would give.
  package static func writeString(utf8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
    if bytes.contains(where: { $0 >= 0x80 }) {
      writeString(String(decoding: bytes, as: UTF8.self), to: &out)
    } else {
      escape(validUTF8: bytes, to: &out)
    }
  }

  private static func escape(validUTF8 bytes: UnsafeBufferPointer<UInt8>, to out: inout [UInt8]) {
    out.append(UInt8(ascii: "\""))
    var run = 0
    for i in 0..<bytes.count {
      let c = bytes[i]
      guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
      if run < i { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<i])) }
      run = i + 1
      out.append(UInt8(ascii: "\\"))
      switch c {
      case UInt8(ascii: "\""), UInt8(ascii: "\\"): out.append(c)
      case UInt8(ascii: "\n"): out.append(UInt8(ascii: "n"))
      case UInt8(ascii: "\r"): out.append(UInt8(ascii: "r"))
      case UInt8(ascii: "\t"): out.append(UInt8(ascii: "t"))
      case 0x08: out.append(UInt8(ascii: "b"))
      case 0x0C: out.append(UInt8(ascii: "f"))
      default:
        literal("u00", &out)
        out.append(c < 0x10 ? UInt8(ascii: "0") : UInt8(ascii: "1"))
        let low = c & 0xF
        out.append(low < 10 ? 48 + low : 55 + low)
      }
    }
    if run < bytes.count { out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...])) }
    out.append(UInt8(ascii: "\""))
  }

  /// JSON string literal for `s`, e.g. for messages.
  package static func quoted(_ s: String) -> String {
    var out: [UInt8] = []
    writeString(s, to: &out)
    return String(decoding: out, as: UTF8.self)
  }
}
