extension JSONValue {
  /// JSON text for this value, numbers spelled exactly as parsed, members in stored order.
  /// - Parameter pretty: when true, two-space indentation and one member or element per line.
  /// - Returns: the text; non-ASCII characters are written as UTF-8, control characters escaped.
  public func serialized(pretty: Bool = false) -> String {
    var out = ""
    write(to: &out, pretty: pretty, indent: 0)
    return out
  }

  /// The serialized text as UTF-8 bytes.
  public func serializedBytes(pretty: Bool = false) -> [UInt8] { Array(serialized(pretty: pretty).utf8) }

  package func write(to out: inout String, pretty: Bool, indent: Int) {
    switch self {
    case .null: out += "null"
    case .bool(let b): out += b ? "true" : "false"
    case .number(let n): out += n.text
    case .string(let s): JSONValue.writeString(s, to: &out)
    case .array(let items):
      if items.isEmpty {
        out += "[]"
        return
      }
      out += "["
      for (k, item) in items.enumerated() {
        if k > 0 { out += "," }
        if pretty { out += "\n" + String(repeating: " ", count: indent + 2) }
        item.write(to: &out, pretty: pretty, indent: indent + 2)
      }
      if pretty { out += "\n" + String(repeating: " ", count: indent) }
      out += "]"
    case .object(let o):
      if o.members.isEmpty {
        out += "{}"
        return
      }
      out += "{"
      for (k, m) in o.members.enumerated() {
        if k > 0 { out += "," }
        if pretty { out += "\n" + String(repeating: " ", count: indent + 2) }
        JSONValue.writeString(m.key, to: &out)
        out += pretty ? ": " : ":"
        m.value.write(to: &out, pretty: pretty, indent: indent + 2)
      }
      if pretty { out += "\n" + String(repeating: " ", count: indent) }
      out += "}"
    }
  }

  /// Writes `s` as a JSON string literal.
  package static func writeString(_ s: String, to out: inout String) {
    out += "\""
    for u in s.unicodeScalars {
      switch u {
      case "\"": out += "\\\""
      case "\\": out += "\\\\"
      case "\n": out += "\\n"
      case "\r": out += "\\r"
      case "\t": out += "\\t"
      case "\u{08}": out += "\\b"
      case "\u{0C}": out += "\\f"
      default:
        if u.value < 0x20 {
          let h = String(u.value, radix: 16, uppercase: true)
          out += "\\u" + String(repeating: "0", count: 4 - h.count) + h
        } else {
          out.unicodeScalars.append(u)
        }
      }
    }
    out += "\""
  }

  /// JSON string literal for `s`, e.g. for messages.
  package static func quoted(_ s: String) -> String {
    var out = ""
    writeString(s, to: &out)
    return out
  }
}
