/// A compiled JSONPath expression (the subset WireMock fixtures commonly use).
///
/// Supported: `$`, `.name`, `['name']` / `["name"]`, `[n]` (negative counts from the end), `[*]` and `.*`,
/// `..name` and `..*` (deep scan), and filters `[?(@.x == 'v')]`, `[?(@.x != 1)]`, `[?(@.x > 1)]` (also
/// `<`, `<=`, `>=`) and `[?(@.x)]` (existence), where `@.x` may be any relative path of names and indexes.
/// A filter applied to an object tests the object itself; applied to an array, each element.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
  /// One step of the path.
  package enum Segment: Sendable, Hashable {
    case name(String)
    case index(Int)
    case wildcard
    case deepName(String)
    case deepWildcard
    case filter(Filter)
  }

  /// A filter predicate `@path op literal` or `@path`.
  package struct Filter: Sendable, Hashable {
    var path: [Segment]
    var op: String?
    var literal: JSONValue?
  }

  /// The expression as written.
  public let expression: String
  package let segments: [Segment]

  /// The expression as written.
  public var description: String { expression }

  /// True when the path selects at most one node (no wildcard, deep scan or filter).
  public var isDefinite: Bool {
    segments.allSatisfy {
      if case .name = $0 { return true }
      if case .index = $0 { return true }
      return false
    }
  }

  /// Compiles `expression`.
  /// - Throws: ``JSONPathError`` describing the first unsupported or malformed part.
  public init(_ expression: String) throws(JSONPathError) {
    self.expression = expression
    var p = JSONPathScanner(Array(expression.utf8), expression: expression)
    self.segments = try p.parseRoot()
  }

  /// The nodes selected in `root`, in document order.
  public func evaluate(_ root: JSONValue) -> [JSONValue] {
    JSONPath.apply(segments, to: [root])
  }

  package static func apply(_ segments: [Segment], to start: [JSONValue]) -> [JSONValue] {
    var current = start
    for seg in segments {
      var next: [JSONValue] = []
      for node in current {
        switch seg {
        case .name(let n):
          if let v = node[n] { next.append(v) }
        case .index(let k):
          if case .array(let a) = node {
            let idx = k < 0 ? a.count + k : k
            if idx >= 0 && idx < a.count { next.append(a[idx]) }
          }
        case .wildcard:
          next.append(contentsOf: children(node))
        case .deepName(let n):
          deepScan(node) { if let v = $0[n] { next.append(v) } }
        case .deepWildcard:
          deepScan(node) { next.append(contentsOf: children($0)) }
        case .filter(let f):
          switch node {
          case .array(let a): next.append(contentsOf: a.filter { f.test($0) })
          case .object: if f.test(node) { next.append(node) }
          default: break
          }
        }
      }
      current = next
    }
    return current
  }

  package static func children(_ node: JSONValue) -> [JSONValue] {
    switch node {
    case .array(let a): return a
    case .object(let o): return o.members.map(\.value)
    default: return []
    }
  }

  package static func deepScan(_ node: JSONValue, _ visit: (JSONValue) -> Void) {
    visit(node)
    for c in children(node) { deepScan(c, visit) }
  }
}

extension JSONPath.Filter {
  package func test(_ node: JSONValue) -> Bool {
    let found = JSONPath.apply(path, to: [node])
    guard let op, let literal else { return !found.isEmpty }
    guard let v = found.first else { return false }
    switch op {
    case "==": return v == literal
    case "!=": return v != literal
    default:
      let ordered: Bool?
      switch (v, literal) {
      case (.number(let a), .number(let b)):
        ordered = op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b
      case (.string(let a), .string(let b)):
        ordered = op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b
      default: ordered = nil
      }
      return ordered ?? false
    }
  }
}

/// A JSONPath expression that could not be compiled.
public struct JSONPathError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The expression.
  public var expression: String
  /// 0-based byte offset of the problem.
  public var offset: Int
  /// What was expected there.
  public var expected: String
  /// `expected X at offset N of "$.a["`.
  public var description: String {
    "\(expected) at offset \(offset) of \(JSONValue.quoted(expression))"
  }
}

/// Scanner for JSONPath text.
package struct JSONPathScanner {
  package let b: [UInt8]
  package let expression: String
  package var i = 0

  package init(_ b: [UInt8], expression: String) {
    self.b = b
    self.expression = expression
  }

  package func fail(_ expected: String) -> JSONPathError {
    JSONPathError(expression: expression, offset: i, expected: expected)
  }

  package mutating func parseRoot() throws(JSONPathError) -> [JSONPath.Segment] {
    guard i < b.count, b[i] == UInt8(ascii: "$") else { throw fail("expected '$'") }
    i += 1
    let segs = try parseSegments(stopAt: nil)
    if i < b.count { throw fail("expected '.', '..' or '['") }
    return segs
  }

  package static func isNameByte(_ c: UInt8) -> Bool {
    (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c == 45
      || c == 36 || c >= 0x80
  }

  package mutating func name() -> String? {
    let start = i
    while i < b.count, JSONPathScanner.isNameByte(b[i]) { i += 1 }
    return i > start ? String(decoding: b[start..<i], as: UTF8.self) : nil
  }

  package mutating func skipSpaces() { while i < b.count, b[i] == 0x20 { i += 1 } }

  /// Parses segments until end of input or a byte in `stopAt` (used inside filters).
  package mutating func parseSegments(stopAt: Set<UInt8>?) throws(JSONPathError) -> [JSONPath.Segment] {
    var segs: [JSONPath.Segment] = []
    while i < b.count {
      if let stopAt, stopAt.contains(b[i]) { break }
      let c = b[i]
      if c == UInt8(ascii: ".") {
        i += 1
        if i < b.count, b[i] == UInt8(ascii: ".") {
          i += 1
          if i < b.count, b[i] == UInt8(ascii: "*") {
            i += 1
            segs.append(.deepWildcard)
          } else if let n = name() {
            segs.append(.deepName(n))
          } else {
            throw fail("expected a name or '*' after '..'")
          }
        } else if i < b.count, b[i] == UInt8(ascii: "*") {
          i += 1
          segs.append(.wildcard)
        } else if let n = name() {
          segs.append(.name(n))
        } else {
          throw fail("expected a name or '*' after '.'")
        }
      } else if c == UInt8(ascii: "[") {
        i += 1
        skipSpaces()
        segs.append(try bracket())
        skipSpaces()
        guard i < b.count, b[i] == UInt8(ascii: "]") else { throw fail("expected ']'") }
        i += 1
      } else if stopAt != nil {
        break
      } else {
        throw fail("expected '.', '..' or '['")
      }
    }
    return segs
  }

  package mutating func quoted() throws(JSONPathError) -> String {
    let q = b[i]
    i += 1
    var out: [UInt8] = []
    while i < b.count, b[i] != q {
      if b[i] == UInt8(ascii: "\\"), i + 1 < b.count { i += 1 }
      out.append(b[i])
      i += 1
    }
    guard i < b.count else { throw fail("expected a closing quote") }
    i += 1
    return String(decoding: out, as: UTF8.self)
  }

  package mutating func bracket() throws(JSONPathError) -> JSONPath.Segment {
    guard i < b.count else { throw fail("expected an index, a quoted name, '*' or a filter") }
    let c = b[i]
    if c == UInt8(ascii: "*") {
      i += 1
      return .wildcard
    }
    if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") { return .name(try quoted()) }
    if c == UInt8(ascii: "-") || JSONNumber.isDigit(c) {
      let start = i
      i += 1
      while i < b.count, JSONNumber.isDigit(b[i]) { i += 1 }
      guard let n = Int(String(decoding: b[start..<i], as: UTF8.self)) else {
        throw fail("expected an array index")
      }
      return .index(n)
    }
    if c == UInt8(ascii: "?") {
      i += 1
      skipSpaces()
      guard i < b.count, b[i] == UInt8(ascii: "(") else { throw fail("expected '(' after '?'") }
      i += 1
      skipSpaces()
      guard i < b.count, b[i] == UInt8(ascii: "@") else { throw fail("expected '@' in filter") }
      i += 1
      let path = try parseSegments(stopAt: [
        0x20, UInt8(ascii: ")"), UInt8(ascii: "="),
        UInt8(ascii: "!"), UInt8(ascii: "<"), UInt8(ascii: ">"),
      ])
      skipSpaces()
      var op: String?
      var literal: JSONValue?
      if i < b.count, b[i] != UInt8(ascii: ")") {
        let ops = ["==", "!=", "<=", ">=", "<", ">"]
        for candidate in ops {
          let o = Array(candidate.utf8)
          if i + o.count <= b.count, Array(b[i..<(i + o.count)]) == o {
            op = candidate
            i += o.count
            break
          }
        }
        guard op != nil else { throw fail("expected ==, !=, <, <=, > or >=") }
        skipSpaces()
        literal = try filterLiteral()
        skipSpaces()
      }
      guard i < b.count, b[i] == UInt8(ascii: ")") else { throw fail("expected ')' closing the filter") }
      i += 1
      return .filter(JSONPath.Filter(path: path, op: op, literal: literal))
    }
    throw fail("expected an index, a quoted name, '*' or a filter")
  }

  package mutating func filterLiteral() throws(JSONPathError) -> JSONValue {
    guard i < b.count else { throw fail("expected a literal") }
    let c = b[i]
    if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") { return .string(try quoted()) }
    let start = i
    while i < b.count, b[i] != UInt8(ascii: ")"), b[i] != 0x20 { i += 1 }
    let word = String(decoding: b[start..<i], as: UTF8.self)
    switch word {
    case "true": return .bool(true)
    case "false": return .bool(false)
    case "null": return .null
    default:
      if let n = JSONNumber(text: word) { return .number(n) }
      i = start
      throw fail("expected a quoted string, a number, true, false or null")
    }
  }
}
