import RegularExpressions

/// A compiled JSONPath expression in WireMock's dialect (Jayway JsonPath), the one implementation behind
/// `matchesJsonPath` and templating's `jsonPath` helper.
///
/// Supported:
/// - `$`, `.name`, `['name']` / `["name"]` (also after a dot, `.['name']`, as Jayway reads it), `[n]`
///   (negative counts from the end), `[*]` and `.*`;
/// - deep scan `..name`, `..*`, `..[n]`, `..[?(…)]`;
/// - slices `[start:end]` (`[:2]`, `[-1:]`, optional `:step`), unions `[0,1]` and `['a','b']` (as the
///   last step, a name union yields one object holding the named members, as Jayway does);
/// - filters `[?(…)]` with `&&`, `||`, `!`, parentheses, `==`, `!=`, `<`, `<=`, `>`, `>=`, `=~ /re/flags`
///   (`i` for case-insensitive; the whole value must match), `in`, `nin`, `subsetof`, `anyof`, `noneof`,
///   `size`, `empty`, `contains`, with operands `@…` (relative), `$…` (from the root), string, number,
///   `true`/`false`/`null` and JSON array/object literals (single quotes allowed: `['ADMIN']`);
///   `[?(@.x)]` tests existence;
/// - functions as the last step: `length()`, `size()`, `min()`, `max()`, `avg()`, `sum()`, `stddev()`,
///   `keys()`, `first()`, `last()`.
///
/// A filter applied to an array tests each element; applied to an object, the object itself.
public struct JSONPath: Sendable, Hashable, CustomStringConvertible {
  /// One step of the path.
  package indirect enum Segment: Sendable, Hashable {
    case name(String)
    case index(Int)
    case wildcard
    case names([String])
    case indexes([Int])
    case slice(start: Int?, end: Int?, step: Int)
    case deep(Segment)
    case filter(FilterExpression)
  }

  /// A path with an optional trailing function (`$.items.length()`).
  package struct Steps: Sendable, Hashable {
    var segments: [Segment]
    var function: String?
    var fromRoot: Bool
  }

  /// One operand of a filter comparison.
  package indirect enum Operand: Sendable, Hashable {
    case path(Steps)
    case literal(JSONValue)
    case regex(CompiledRegex)
  }

  /// A filter predicate.
  package indirect enum FilterExpression: Sendable, Hashable {
    case exists(Steps)
    case compare(Operand, String, Operand)
    case not(FilterExpression)
    case and(FilterExpression, FilterExpression)
    case or(FilterExpression, FilterExpression)
  }

  /// The functions a path may end with.
  package static let functions: Set<String> = [
    "length", "size", "min", "max", "avg", "sum", "stddev", "keys", "first", "last",
  ]

  /// The expression as written.
  public let expression: String
  package let steps: Steps

  /// The expression as written.
  public var description: String { expression }

  /// True when the path selects at most one node (names and single indexes only, or a function). A
  /// union of names as the last step (`$['a','b']`) is definite too, as in Jayway: it selects one object
  /// of the members found.
  public var isDefinite: Bool {
    if steps.function != nil { return true }
    return steps.segments.enumerated().allSatisfy { k, segment in
      if case .name = segment { return true }
      if case .index = segment { return true }
      if case .names = segment, k == steps.segments.count - 1 { return true }
      return false
    }
  }

  /// Compiles `expression`.
  /// - Throws: ``JSONPathError`` describing the first unsupported or malformed part.
  public init(_ expression: String) throws(JSONPathError) {
    self.expression = expression
    var p = JSONPathScanner(Array(expression.utf8), expression: expression)
    self.steps = try p.parseRoot()
  }

  /// The nodes selected in `root`, in document order (a function's result is the one node).
  public func evaluate(_ root: JSONValue) -> [JSONValue] {
    JSONPath.run(steps, node: root, root: root)
  }

  package static func run(_ steps: Steps, node: JSONValue, root: JSONValue) -> [JSONValue] {
    let found = apply(steps.segments, to: [steps.fromRoot ? root : node], root: root)
    guard let function = steps.function else { return found }
    let definite = steps.segments.allSatisfy {
      if case .name = $0 { return true }
      if case .index = $0 { return true }
      return false
    }
    let input: JSONValue
    if definite {
      guard let first = found.first else { return [] }
      input = first
    } else {
      input = .array(found)
    }
    return call(function, input).map { [$0] } ?? []
  }

  /// Applies a trailing function as Jayway does: to the array (or object, for `length`/`keys`) selected.
  package static func call(_ function: String, _ input: JSONValue) -> JSONValue? {
    switch (function, input) {
    case ("length", .array(let a)), ("size", .array(let a)): return .number(JSONNumber(a.count))
    case ("length", .object(let o)), ("size", .object(let o)): return .number(JSONNumber(o.effective.count))
    case ("length", .string(let s)), ("size", .string(let s)): return .number(JSONNumber(s.count))
    case ("keys", .object(let o)):
      var seen = Set<String>()
      return .array(o.members.compactMap { seen.insert($0.key).inserted ? .string($0.key) : nil })
    case ("first", .array(let a)): return a.first
    case ("last", .array(let a)): return a.last
    case (_, .array(let a)):
      let numbers = a.compactMap { $0.numberValue?.doubleValue }
      guard !numbers.isEmpty else { return nil }
      let value: Double
      switch function {
      case "min": value = numbers.min() ?? 0
      case "max": value = numbers.max() ?? 0
      case "sum": value = numbers.reduce(0, +)
      case "avg": value = numbers.reduce(0, +) / Double(numbers.count)
      case "stddev":
        let mean = numbers.reduce(0, +) / Double(numbers.count)
        value = (numbers.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(numbers.count))
          .squareRoot()
      default: return nil
      }
      guard value.isFinite else { return nil }
      // Jayway returns a Double for these: `10.0`, as Java prints it.
      if value == value.rounded(), abs(value) < 1e7 {
        return JSONNumber(text: "\(Int(value)).0").map { .number($0) }
      }
      return JSONNumber(text: String(value)).map { .number($0) }
    default: return nil
    }
  }

  package static func apply(_ segments: [Segment], to start: [JSONValue], root: JSONValue) -> [JSONValue] {
    var current = start
    for (k, seg) in segments.enumerated() {
      var next: [JSONValue] = []
      let isLast = k == segments.count - 1
      for node in current { step(seg, node, root: root, isLast: isLast, into: &next) }
      current = next
    }
    return current
  }

  package static func step(
    _ seg: Segment, _ node: JSONValue, root: JSONValue, isLast: Bool, into next: inout [JSONValue]
  ) {
    switch seg {
    case .name(let n):
      if let v = node[n] { next.append(v) }
    case .index(let k):
      if case .array(let a) = node, let i = resolve(k, a.count) { next.append(a[i]) }
    case .indexes(let ks):
      if case .array(let a) = node {
        for k in ks { if let i = resolve(k, a.count) { next.append(a[i]) } }
      }
    case .names(let ns):
      guard case .object = node else { return }
      if isLast {
        let pairs = ns.compactMap { n in node[n].map { (n, $0) } }
        next.append(.object(JSONObject(pairs: pairs)))
      } else {
        for n in ns { if let v = node[n] { next.append(v) } }
      }
    case .slice(let s, let e, let st):
      guard case .array(let a) = node else { return }
      let n = a.count
      func clamp(_ v: Int?, _ fallback: Int) -> Int {
        guard let v else { return fallback }
        return v < 0 ? max(0, n + v) : min(v, n)
      }
      var i = clamp(s, 0)
      let end = clamp(e, n)
      while i < end {
        next.append(a[i])
        i += st
      }
    case .wildcard:
      next.append(contentsOf: children(node))
    case .deep(let inner):
      deepScan(node) { v in
        if case .wildcard = inner {
          next.append(contentsOf: children(v))
        } else if case .filter = inner {
          // Jayway: a deep-scan filter tests the elements of every array below.
          if case .array = v { step(inner, v, root: root, isLast: isLast, into: &next) }
        } else {
          step(inner, v, root: root, isLast: isLast, into: &next)
        }
      }
    case .filter(let f):
      switch node {
      case .array(let a): next.append(contentsOf: a.filter { f.test($0, root: root) })
      case .object: if f.test(node, root: root) { next.append(node) }
      default: break
      }
    }
  }

  static func resolve(_ k: Int, _ count: Int) -> Int? {
    let i = k < 0 ? count + k : k
    return i >= 0 && i < count ? i : nil
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

extension JSONPath.FilterExpression {
  /// True when `node` (the filter's `@`) satisfies the predicate; `root` is `$`.
  package func test(_ node: JSONValue, root: JSONValue) -> Bool {
    switch self {
    case .exists(let steps): return !JSONPath.run(steps, node: node, root: root).isEmpty
    case .not(let e): return !e.test(node, root: root)
    case .and(let a, let b): return a.test(node, root: root) && b.test(node, root: root)
    case .or(let a, let b): return a.test(node, root: root) || b.test(node, root: root)
    case .compare(let l, let op, let r):
      let left = l.value(node, root: root)
      if case .regex(let re) = r {
        guard let left else { return false }
        switch left {
        case .string(let s): return re.matches(s)
        case .array(let a): return a.contains { if case .string(let s) = $0 { re.matches(s) } else { false } }
        default: return re.matches(left.serialized())
        }
      }
      guard let left, let right = r.value(node, root: root) else { return false }
      return JSONPath.FilterExpression.compare(left, op, right)
    }
  }

  static func compare(_ left: JSONValue, _ op: String, _ right: JSONValue) -> Bool {
    switch op {
    case "==": return loosely(left, right)
    case "!=": return !loosely(left, right)
    case "<", "<=", ">", ">=":
      switch (left, right) {
      case (.number(let a), .number(let b)):
        return op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b
      case (.string(let a), .string(let b)):
        return op == "<" ? a < b : op == "<=" ? a <= b : op == ">" ? a > b : a >= b
      default: return false
      }
    case "in": return right.arrayValue?.contains { loosely(left, $0) } ?? false
    case "nin": return !(right.arrayValue?.contains { loosely(left, $0) } ?? false)
    case "subsetof":
      guard let l = left.arrayValue, let r = right.arrayValue else { return false }
      return l.allSatisfy { x in r.contains { loosely(x, $0) } }
    case "anyof":
      guard let l = left.arrayValue, let r = right.arrayValue else { return false }
      return l.contains { x in r.contains { loosely(x, $0) } }
    case "noneof":
      guard let l = left.arrayValue, let r = right.arrayValue else { return false }
      return !l.contains { x in r.contains { loosely(x, $0) } }
    case "size":
      guard let n = right.numberValue?.intValue else { return false }
      switch left {
      case .array(let a): return a.count == n
      case .string(let s): return s.count == n
      default: return false
      }
    case "empty":
      guard let want = right.boolValue else { return false }
      switch left {
      case .array(let a): return a.isEmpty == want
      case .string(let s): return s.isEmpty == want
      default: return false
      }
    case "contains":
      switch left {
      case .array(let a): return a.contains { loosely($0, right) }
      case .string(let s):
        guard case .string(let t) = right else { return false }
        return s.contains(t)
      default: return false
      }
    default: return false
    }
  }

  /// Jayway's equality: numbers by value, a number and its decimal text equal, containers structurally.
  static func loosely(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.number(let x), .string(let s)), (.string(let s), .number(let x)):
      return JSONNumber(text: s).map { $0 == x } ?? false
    default: return a == b
    }
  }
}

extension JSONPath.Operand {
  func value(_ node: JSONValue, root: JSONValue) -> JSONValue? {
    switch self {
    case .literal(let v): return v
    case .regex: return nil
    case .path(let steps):
      let found = JSONPath.run(steps, node: node, root: root)
      let definite =
        steps.function != nil
        || steps.segments.allSatisfy {
          if case .name = $0 { return true }
          if case .index = $0 { return true }
          return false
        }
      return definite ? found.first : .array(found)
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
  /// Filter nesting, bounded so hostile input cannot exhaust the stack.
  var depth = 0
  /// Comparisons read in this expression's filters: `a && b && …` is a tree as deep as its terms, which
  /// evaluation walks recursively, so their number is bounded too (``maximumFilterTerms``).
  var filterTerms = 0
  /// The most comparisons one expression's filters may hold.
  package static let maximumFilterTerms = 256

  package init(_ b: [UInt8], expression: String) {
    self.b = b
    self.expression = expression
  }

  package func fail(_ expected: String) -> JSONPathError {
    JSONPathError(expression: expression, offset: i, expected: expected)
  }

  func at(_ s: String) -> Bool {
    let o = Array(s.utf8)
    return i + o.count <= b.count && Array(b[i..<(i + o.count)]) == o
  }

  var current: UInt8? { i < b.count ? b[i] : nil }

  package mutating func parseRoot() throws(JSONPathError) -> JSONPath.Steps {
    skipSpaces()
    guard current == UInt8(ascii: "$") else { throw fail("expected '$'") }
    i += 1
    let steps = try parseSteps(fromRoot: true, inFilter: false)
    skipSpaces()
    if i < b.count { throw fail("expected '.', '..' or '['") }
    return steps
  }

  package static func isNameByte(_ c: UInt8) -> Bool {
    (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c == 45
      || c == 36 || c == 58 || c >= 0x80
  }

  package mutating func name() -> String? {
    let start = i
    while i < b.count, JSONPathScanner.isNameByte(b[i]) { i += 1 }
    return i > start ? String(decoding: b[start..<i], as: UTF8.self) : nil
  }

  package mutating func skipSpaces() { while let c = current, c == 0x20 || c == 0x09 { i += 1 } }

  /// Parses steps until the end or, inside a filter, until a byte that cannot continue a path.
  mutating func parseSteps(fromRoot: Bool, inFilter: Bool) throws(JSONPathError) -> JSONPath.Steps {
    var segs: [JSONPath.Segment] = []
    var function: String?
    while let c = current {
      if c == UInt8(ascii: ".") {
        i += 1
        if current == UInt8(ascii: ".") {
          i += 1
          if current == UInt8(ascii: "*") {
            i += 1
            segs.append(.deep(.wildcard))
          } else if current == UInt8(ascii: "[") {
            i += 1
            segs.append(.deep(try bracketBody()))
          } else if let n = name() {
            segs.append(.deep(.name(n)))
          } else {
            throw fail("expected a name, '*' or '[' after '..'")
          }
        } else if current == UInt8(ascii: "*") {
          i += 1
          segs.append(.wildcard)
        } else if current == UInt8(ascii: "[") {
          // `.['name']`, `.[0]`: Jayway reads a bracket right after a dot as the bracket alone.
          i += 1
          segs.append(try bracketBody())
        } else if let n = name() {
          if current == UInt8(ascii: "("), JSONPath.functions.contains(n) {
            i += 1
            skipSpaces()
            guard current == UInt8(ascii: ")") else { throw fail("expected ')': functions take no argument") }
            i += 1
            function = n
            break
          }
          segs.append(.name(n))
        } else {
          throw fail("expected a name, '*' or '[' after '.'")
        }
      } else if c == UInt8(ascii: "[") {
        i += 1
        segs.append(try bracketBody())
      } else if inFilter {
        break
      } else {
        throw fail("expected '.', '..' or '['")
      }
    }
    return JSONPath.Steps(segments: segs, function: function, fromRoot: fromRoot)
  }

  /// Everything after `[` up to and including `]`.
  mutating func bracketBody() throws(JSONPathError) -> JSONPath.Segment {
    skipSpaces()
    let seg = try bracket()
    skipSpaces()
    guard current == UInt8(ascii: "]") else { throw fail("expected ']'") }
    i += 1
    return seg
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

  mutating func integer() throws(JSONPathError) -> Int? {
    let start = i
    if current == UInt8(ascii: "-") { i += 1 }
    while let c = current, JSONNumber.isDigit(c) { i += 1 }
    if i == start { return nil }
    guard i - start <= 18, let n = Int(String(decoding: b[start..<i], as: UTF8.self)) else {
      i = start
      throw fail("expected an array index")
    }
    return n
  }

  package mutating func bracket() throws(JSONPathError) -> JSONPath.Segment {
    guard let c = current else { throw fail("expected an index, a quoted name, '*' or a filter") }
    if c == UInt8(ascii: "*") {
      i += 1
      return .wildcard
    }
    if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") {
      var names = [try quoted()]
      skipSpaces()
      while current == UInt8(ascii: ",") {
        i += 1
        skipSpaces()
        guard let q = current, q == UInt8(ascii: "'") || q == UInt8(ascii: "\"") else {
          throw fail("expected a quoted name")
        }
        names.append(try quoted())
        skipSpaces()
      }
      return names.count == 1 ? .name(names[0]) : .names(names)
    }
    if c == UInt8(ascii: "?") {
      i += 1
      skipSpaces()
      guard current == UInt8(ascii: "(") else { throw fail("expected '(' after '?'") }
      i += 1
      let e = try orExpression()
      skipSpaces()
      guard current == UInt8(ascii: ")") else { throw fail("expected ')' closing the filter") }
      i += 1
      return .filter(e)
    }
    if c == UInt8(ascii: ":") || c == UInt8(ascii: "-") || JSONNumber.isDigit(c) {
      let first = try integer()
      skipSpaces()
      if current == UInt8(ascii: ":") {
        i += 1
        skipSpaces()
        let end = try integer()
        skipSpaces()
        var step = 1
        if current == UInt8(ascii: ":") {
          i += 1
          skipSpaces()
          guard let s = try integer(), s >= 1 else { throw fail("expected a positive slice step") }
          step = s
        }
        return .slice(start: first, end: end, step: step)
      }
      guard let first else { throw fail("expected an array index") }
      var list = [first]
      while current == UInt8(ascii: ",") {
        i += 1
        skipSpaces()
        guard let n = try integer() else { throw fail("expected an array index") }
        list.append(n)
        skipSpaces()
      }
      return list.count == 1 ? .index(first) : .indexes(list)
    }
    throw fail("expected an index, a quoted name, '*' or a filter")
  }

  // MARK: - Filters

  mutating func orExpression() throws(JSONPathError) -> JSONPath.FilterExpression {
    depth += 1
    defer { depth -= 1 }
    guard depth <= 32 else { throw fail("filters nested less than 32 deep") }
    var e = try andExpression()
    skipSpaces()
    while at("||") {
      i += 2
      e = .or(e, try andExpression())
      skipSpaces()
    }
    return e
  }

  mutating func andExpression() throws(JSONPathError) -> JSONPath.FilterExpression {
    var e = try unary()
    skipSpaces()
    while at("&&") {
      i += 2
      e = .and(e, try unary())
      skipSpaces()
    }
    return e
  }

  mutating func unary() throws(JSONPathError) -> JSONPath.FilterExpression {
    skipSpaces()
    if current == UInt8(ascii: "!"), !at("!=") {
      i += 1
      depth += 1
      defer { depth -= 1 }
      guard depth <= 32 else { throw fail("filters nested less than 32 deep") }
      return .not(try unary())
    }
    if current == UInt8(ascii: "(") {
      i += 1
      let e = try orExpression()
      skipSpaces()
      guard current == UInt8(ascii: ")") else { throw fail("expected ')'") }
      i += 1
      return e
    }
    return try comparison()
  }

  static let wordOperators = ["subsetof", "contains", "noneof", "anyof", "empty", "size", "nin", "in"]
  static let symbolOperators = ["==", "!=", "<=", ">=", "=~", "<", ">"]

  mutating func comparison() throws(JSONPathError) -> JSONPath.FilterExpression {
    filterTerms += 1
    guard filterTerms <= JSONPathScanner.maximumFilterTerms else {
      throw fail("at most \(JSONPathScanner.maximumFilterTerms) comparisons in the filters")
    }
    let left = try operand()
    skipSpaces()
    var op: String?
    for o in JSONPathScanner.symbolOperators where at(o) {
      op = o
      i += o.utf8.count
      break
    }
    if op == nil {
      for o in JSONPathScanner.wordOperators where at(o) {
        let after = i + o.utf8.count
        if after < b.count, JSONPathScanner.isNameByte(b[after]) { continue }
        op = o
        i = after
        break
      }
    }
    guard let op else {
      if case .path(let steps) = left { return .exists(steps) }
      throw fail("expected a comparison operator (==, !=, <, <=, >, >=, =~, in, nin, …)")
    }
    skipSpaces()
    if op == "=~" {
      guard current == UInt8(ascii: "/") else { throw fail("expected /regex/ after =~") }
      return .compare(left, op, try regexLiteral())
    }
    return .compare(left, op, try operand())
  }

  mutating func regexLiteral() throws(JSONPathError) -> JSONPath.Operand {
    i += 1
    var out: [UInt8] = []
    while let c = current, c != UInt8(ascii: "/") {
      if c == UInt8(ascii: "\\"), i + 1 < b.count, b[i + 1] == UInt8(ascii: "/") {
        i += 1
      } else if c == UInt8(ascii: "\\"), i + 1 < b.count {
        out.append(c)
        i += 1
      }
      out.append(b[i])
      i += 1
    }
    guard current == UInt8(ascii: "/") else { throw fail("expected '/' closing the regular expression") }
    i += 1
    var caseInsensitive = false
    while let c = current, (c >= 97 && c <= 122) {
      if c == UInt8(ascii: "i") { caseInsensitive = true }
      i += 1
    }
    let pattern = String(decoding: out, as: UTF8.self)
    do {
      return .regex(try CompiledRegex(pattern, caseInsensitive: caseInsensitive))
    } catch {
      throw fail("a valid regular expression (\(error.message))")
    }
  }

  mutating func operand() throws(JSONPathError) -> JSONPath.Operand {
    skipSpaces()
    guard let c = current else { throw fail("expected a value") }
    if c == UInt8(ascii: "@") || c == UInt8(ascii: "$") {
      i += 1
      return .path(try parseSteps(fromRoot: c == UInt8(ascii: "$"), inFilter: true))
    }
    if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") { return .literal(.string(try quoted())) }
    if c == UInt8(ascii: "[") || c == UInt8(ascii: "{") { return .literal(try containerLiteral()) }
    let start = i
    while let d = current, d != UInt8(ascii: ")"), d != 0x20, d != UInt8(ascii: "&"), d != UInt8(ascii: "|") {
      i += 1
    }
    let word = String(decoding: b[start..<i], as: UTF8.self)
    switch word {
    case "true": return .literal(.bool(true))
    case "false": return .literal(.bool(false))
    case "null": return .literal(.null)
    default:
      if let n = JSONNumber(text: word) { return .literal(.number(n)) }
      i = start
      throw fail("expected a quoted string, a number, true, false, null, an array, '@' or '$'")
    }
  }

  /// `[…]` or `{…}` written as JSON, single-quoted strings allowed (Jayway's literals).
  mutating func containerLiteral() throws(JSONPathError) -> JSONValue {
    let start = i
    var level = 0
    var out: [UInt8] = []
    while let c = current {
      if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") {
        let s = try quoted()
        out += Array(JSONValue.quoted(s).utf8)
        continue
      }
      if c == UInt8(ascii: "[") || c == UInt8(ascii: "{") { level += 1 }
      if c == UInt8(ascii: "]") || c == UInt8(ascii: "}") { level -= 1 }
      out.append(c)
      i += 1
      if level == 0 { break }
    }
    guard level == 0, let v = try? JSONValue.parse(bytes: out) else {
      i = start
      throw fail("expected a JSON array or object literal")
    }
    return v
  }
}
