import MockJSON

/// A value a template works with: request fields, literals, helper results, JSON and dates.
///
/// Values render as WireMock (Handlebars.java) renders the Java object behind them: lists as `[a, b]`,
/// maps as `{a=1, b=2}`, JSON nodes as Jackson writes them, dates as ISO 8601.
public enum TemplateValue: Sendable, Hashable {
  /// `null` / undefined: renders as nothing.
  case null
  /// A Boolean.
  case bool(Bool)
  /// An integer.
  case int(Int)
  /// A decimal number.
  case double(Double)
  /// Text.
  case string(String)
  /// A list (Java `List`): renders as `[a, b]`.
  case list([TemplateValue])
  /// Request values that may repeat (WireMock's `ListOrSingle`): renders as the first value, as WireMock's
  /// `toString()` does; `.first`, `.last` and `.[n]` (negative counts from the end) select one.
  case multi([String])
  /// An ordered map (Java `Map`): renders as `{a=1, b=2}`; `caseInsensitive` keys for headers.
  case map(TemplateMap)
  /// A JSON node (from `jsonPath` or `parseJson`): scalars render as text, containers as Jackson's pretty JSON.
  case json(JSONValue)
  /// A date (`now`, `parseDate`): renders with its format or as ISO 8601.
  case date(TemplateDate)
  /// Text with children: renders as `text`, member lookups go to `children` (`request.path`, whose
  /// `.[n]` are segments and whose names are path-template parameters).
  indirect case described(String, TemplateValue)
}

/// An ordered map of template values.
public struct TemplateMap: Sendable, Hashable {
  /// Entries in order.
  public var entries: [(key: String, value: TemplateValue)]
  /// Keys compare without regard to ASCII case (request headers).
  public var caseInsensitive: Bool

  /// Creates a map.
  public init(_ entries: [(key: String, value: TemplateValue)] = [], caseInsensitive: Bool = false) {
    self.entries = entries
    self.caseInsensitive = caseInsensitive
  }

  /// The value for `key`, or nil.
  public subscript(key: String) -> TemplateValue? {
    if caseInsensitive {
      let k = key.lowercased()
      return entries.first(where: { $0.key.lowercased() == k })?.value
    }
    return entries.first(where: { $0.key == key })?.value
  }

  /// Sets `key` (replacing an existing entry in place).
  public mutating func set(_ key: String, _ value: TemplateValue) {
    if let i = entries.firstIndex(where: { $0.key == key }) {
      entries[i].value = value
    } else {
      entries.append((key, value))
    }
  }

  /// Equal when entries are equal in order.
  public static func == (a: TemplateMap, b: TemplateMap) -> Bool {
    a.caseInsensitive == b.caseInsensitive && a.entries.count == b.entries.count
      && zip(a.entries, b.entries).allSatisfy { $0.key == $1.key && $0.value == $1.value }
  }

  /// Hash of keys and values.
  public func hash(into hasher: inout Hasher) {
    for e in entries {
      hasher.combine(e.key)
      hasher.combine(e.value)
    }
  }
}

extension TemplateValue {
  /// The text `{{value}}` inserts.
  public var rendered: String {
    switch self {
    case .null: return ""
    case .bool(let b): return b ? "true" : "false"
    case .int(let i): return String(i)
    case .double(let d): return TemplateValue.javaDouble(d)
    case .string(let s): return s
    case .list(let items): return "[" + items.map(\.nested).joined(separator: ", ") + "]"
    // WireMock's `ListOrSingle.toString()`: the first value (`.[n]`, `.last` and `{{#each}}` reach the rest).
    case .multi(let values): return values.first ?? ""
    case .map(let m):
      return "{" + m.entries.map { $0.key + "=" + $0.value.nested }.joined(separator: ", ") + "}"
    case .json(let j):
      switch j {
      case .string(let s): return s
      case .null: return ""
      case .array, .object: return JacksonPrinter.pretty(j)
      case .number(let n): return TemplateValue.javaNumber(n)
      default: return j.serialized()
      }
    case .date(let d): return d.rendered
    case .described(let text, _): return text
    }
  }

  /// Text of a value inside a list or map (Java `toString`: null is `null`).
  var nested: String {
    switch self {
    case .null: return "null"
    case .json(let j):
      switch j {
      case .string(let s): return s
      case .object(let o):
        return "{"
          + o.members.map { $0.key + "=" + TemplateValue.json($0.value).nested }.joined(separator: ", ") + "}"
      case .array(let a): return "[" + a.map { TemplateValue.json($0).nested }.joined(separator: ", ") + "]"
      case .number(let n): return TemplateValue.javaNumber(n)
      default: return j.serialized()
      }
    default: return rendered
    }
  }

  /// Handlebars truthiness: null, false, empty text, empty collections and zero are false.
  public var isTruthy: Bool {
    switch self {
    case .null: return false
    case .bool(let b): return b
    case .int(let i): return i != 0
    case .double(let d): return d != 0
    case .string(let s): return !s.isEmpty
    case .list(let l): return !l.isEmpty
    case .multi(let m): return !m.isEmpty
    case .map(let m): return !m.entries.isEmpty
    case .json(let j):
      switch j {
      case .null: return false
      case .bool(let b): return b
      case .string(let s): return !s.isEmpty
      case .array(let a): return !a.isEmpty
      case .object(let o): return !o.members.isEmpty
      case .number(let n): return Double(n.text) != 0
      }
    case .date: return true
    case .described(let s, _): return !s.isEmpty
    }
  }

  /// True for `.null` and JSON null.
  public var isNull: Bool {
    if case .null = self { return true }
    if case .json(.null) = self { return true }
    return false
  }

  /// A member by name or `[n]` index, as a template path step reads it.
  func member(_ name: String) -> TemplateValue? {
    switch self {
    case .map(let m):
      if let v = m[name] { return v }
      // `request.pathSegments.[-1]`: a negative index counts from the end of a map's index keys (path
      // segments are a map keyed `0`, `1`, … beside the path parameters' names).
      guard let n = Int(name), n < 0 else { return nil }
      let count = m.entries.count { Int($0.key) != nil }
      return count + n >= 0 ? m[String(count + n)] : nil
    case .described(_, let children):
      if let v = children.member(name) { return v }
      // A list of one (an xPath node) also has the members of its element.
      if case .list(let items) = children, items.count == 1 { return items[0].member(name) }
      return nil
    case .list(let items):
      if name == "first" { return items.first }
      if name == "last" { return items.last }
      if name == "length" || name == "size" { return .int(items.count) }
      guard let i = TemplateValue.index(name, count: items.count) else { return nil }
      return items[i]
    case .multi(let values):
      if name == "first" { return values.first.map(TemplateValue.string) }
      if name == "last" { return values.last.map(TemplateValue.string) }
      guard let i = TemplateValue.index(name, count: values.count) else { return nil }
      return .string(values[i])
    case .json(let j):
      switch j {
      case .object(let o): return o[name].map(TemplateValue.json)
      case .array(let a):
        if name == "length" || name == "size" { return .int(a.count) }
        guard let i = TemplateValue.index(name, count: a.count) else { return nil }
        return .json(a[i])
      default: return nil
      }
    case .string(let s):
      if name == "length" { return .int(s.count) }
      return nil
    default: return nil
    }
  }

  static func index(_ name: String, count: Int) -> Int? {
    guard let n = Int(name) else { return nil }
    let i = n < 0 ? count + n : n
    return i >= 0 && i < count ? i : nil
  }

  /// Elements when iterated by `#each`: (key, value) pairs; keys are nil for lists.
  var iterationItems: [(key: String?, value: TemplateValue)]? {
    switch self {
    case .list(let items): return items.map { (nil, $0) }
    case .multi(let values): return values.map { (nil, .string($0)) }
    case .map(let m): return m.entries.map { ($0.key, $0.value) }
    case .json(.array(let a)): return a.map { (nil, .json($0)) }
    case .json(.object(let o)): return o.members.map { ($0.key, .json($0.value)) }
    case .described(_, let c): return c.iterationItems
    default: return nil
    }
  }

  /// The value as a list, when it is one (lists, repeated values, JSON arrays).
  var listItems: [TemplateValue]? {
    switch self {
    case .list(let items): return items
    case .multi(let values): return values.map(TemplateValue.string)
    case .json(.array(let a)): return a.map(TemplateValue.json)
    case .described(_, .list(let items)): return items
    default: return nil
    }
  }

  /// The value as a number: numbers, numeric text, JSON numbers, dates (epoch milliseconds).
  var number: Double? {
    switch self {
    case .int(let i): return Double(i)
    case .double(let d): return d
    case .string(let s): return Double(s.trimmingCharacters(in: [" "]))
    case .json(.number(let n)): return Double(n.text)
    case .json(.string(let s)): return Double(s)
    case .multi(let v) where v.count == 1: return Double(v[0])
    case .date(let d): return Double(d.epochMilliseconds)
    case .described(let s, .list): return Double(s.trimmingCharacters(in: [" "]))
    default: return nil
    }
  }

  /// The value as an integer when it has one exactly.
  var integer: Int? {
    switch self {
    case .int(let i): return i
    case .double(let d): return d == d.rounded() && abs(d) < 9e18 ? Int(d) : nil
    case .string(let s): return Int(s.trimmingCharacters(in: [" "]))
    case .json(.number(let n)): return Int(n.text)
    case .json(.string(let s)): return Int(s)
    case .multi(let v) where v.count == 1: return Int(v[0])
    case .described(let s, .list): return Int(s.trimmingCharacters(in: [" "]))
    default: return nil
    }
  }

  /// The value as JSON (for `toJson` and `jsonPath` on non-text values).
  var asJSON: JSONValue {
    switch self {
    case .null: return .null
    case .bool(let b): return .bool(b)
    case .int(let i): return .number(JSONNumber(i))
    case .double(let d): return JSONNumber(text: TemplateValue.javaDouble(d)).map(JSONValue.number) ?? .null
    case .string(let s): return .string(s)
    case .list(let items): return .array(items.map(\.asJSON))
    case .multi(let v): return v.count == 1 ? .string(v[0]) : .array(v.map(JSONValue.string))
    case .map(let m): return .object(JSONObject(pairs: m.entries.map { ($0.key, $0.value.asJSON) }))
    case .json(let j): return j
    case .date(let d): return .string(d.rendered)
    case .described(let s, _): return .string(s)
    }
  }

  /// Converts JSON to a template value.
  static func from(_ j: JSONValue) -> TemplateValue { .json(j) }

  /// A JSON number as WireMock writes one it read (json-smart and Jackson hold a fraction or an exponent
  /// as a `Double`): `1.50` is `1.5`, `1e3` is `1000.0`; an integer keeps its digits.
  static func javaNumber(_ n: JSONNumber) -> String {
    let text = n.text
    guard
      text.utf8.contains(where: {
        $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E")
      }),
      let d = Double(text)
    else { return text }
    return javaDouble(d)
  }

  /// Java's `Double.toString` for ordinary magnitudes: `3.5`, `4.0`, `0.59`.
  static func javaDouble(_ d: Double) -> String {
    if d.isNaN { return "NaN" }
    if d.isInfinite { return d < 0 ? "-Infinity" : "Infinity" }
    if d == d.rounded(), abs(d) < 1e7 { return String(Int(d)) + ".0" }
    let s = "\(d)"
    if s.contains("e") {
      // Swift writes 1e+20; Java writes 1.0E20.
      let parts = s.split(separator: "e")
      var mantissa = String(parts[0])
      if !mantissa.contains(".") { mantissa += ".0" }
      var exponent = String(parts[1])
      if exponent.hasPrefix("+") { exponent.removeFirst() }
      return mantissa + "E" + exponent
    }
    return s
  }
}

extension String {
  fileprivate func trimmingCharacters(in set: Set<Character>) -> Substring {
    var s = Substring(self)
    while let f = s.first, set.contains(f) { s.removeFirst() }
    while let l = s.last, set.contains(l) { s.removeLast() }
    return s
  }
}

/// Jackson's default pretty printer, which WireMock uses for JSON it writes into templates:
/// objects one member per line indented by two spaces with `"key" : value`, arrays on one line `[ 1, 2 ]`.
package enum JacksonPrinter {
  /// Pretty JSON text.
  package static func pretty(_ value: JSONValue) -> String {
    var out = ""
    write(value, to: &out, indent: 0)
    return out
  }

  static func write(_ value: JSONValue, to out: inout String, indent: Int) {
    switch value {
    case .array(let items):
      if items.isEmpty {
        out += "[ ]"
        return
      }
      out += "[ "
      for (k, item) in items.enumerated() {
        if k > 0 { out += ", " }
        write(item, to: &out, indent: indent)
      }
      out += " ]"
    case .object(let o):
      if o.members.isEmpty {
        out += "{ }"
        return
      }
      out += "{"
      for (k, m) in o.members.enumerated() {
        if k > 0 { out += "," }
        out += "\n" + String(repeating: " ", count: indent + 2)
        out += JSONValue.quoted(m.key) + " : "
        write(m.value, to: &out, indent: indent + 2)
      }
      out += "\n" + String(repeating: " ", count: indent) + "}"
    case .number(let n):
      out += TemplateValue.javaNumber(n)
    default:
      out += value.serialized()
    }
  }
}
