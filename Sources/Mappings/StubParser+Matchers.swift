import MockJSON
import RegularExpressions

/// String value matchers (`equalTo`, `matches`, `equalToJson`, …): one parse function per operator in
/// ``StubParser/matcherParsers``; adding a matcher is one entry there and one case of
/// ``StringValuePattern``.
extension StubParser {
  /// One matcher object being parsed: its operator, operand and modifiers, with the diagnostics helpers
  /// every operator's parse function uses.
  package struct MatcherOperand {
    /// The whole matcher object.
    let object: JSONObject
    /// The operator key, e.g. `equalTo`.
    let op: String
    /// The operator's value.
    let value: JSONValue
    /// JSON path of the matcher object.
    let path: String
    /// JSON path of the operand.
    var operandPath: String { JSONPathText.child(path, op) }

    /// The operand as a string.
    func string(_ d: inout Diagnostics) -> String? {
      guard let s = value.stringValue else {
        d.error(operandPath, expected: "a string", found: value)
        return nil
      }
      return s
    }

    /// The operand as a regular expression.
    func regex(_ d: inout Diagnostics) -> CompiledRegex? {
      guard let s = string(&d) else { return nil }
      do {
        return try CompiledRegex(s)
      } catch {
        d.error(
          operandPath, expected: "a valid regular expression",
          found: "\(JSONValue.quoted(s)) (\(error.message))")
        return nil
      }
    }

    /// The operand as a non-empty array of matchers (`and`, `or`).
    func list(_ d: inout Diagnostics) -> [StringValuePattern]? {
      guard let items = value.arrayValue, !items.isEmpty else {
        d.error(operandPath, expected: "a non-empty array of matchers", found: value)
        return nil
      }
      let out = items.enumerated().compactMap { k, item in
        StubParser.parseMatcher(item, JSONPathText.index(operandPath, k), &d)
      }
      return out.count == items.count ? out : nil
    }

    /// A boolean modifier such as `caseInsensitive`, which only some operators accept.
    func flag(_ name: String, allowedWith operators: Set<String>, _ d: inout Diagnostics) -> Bool {
      guard let f = object[name] else { return false }
      let fp = JSONPathText.child(path, name)
      guard operators.contains(op) else {
        d.error(
          fp, expected: "\(name) only with \(operators.sorted().joined(separator: " or "))",
          found: "it with \(op)")
        return false
      }
      guard let b = f.boolValue else {
        d.error(fp, expected: "true or false", found: f)
        return false
      }
      return b
    }
  }

  /// Parses the operand of one operator.
  package typealias MatcherParse = @Sendable (MatcherOperand, inout Diagnostics) -> StringValuePattern?

  /// Every supported operator and its parse function (in the order lint lists them).
  package static let matcherParsers: [(String, MatcherParse)] = [
    (
      "equalTo",
      { m, d in
        m.string(&d).map {
          .equalTo($0, caseInsensitive: m.flag("caseInsensitive", allowedWith: ["equalTo"], &d))
        }
      }
    ),
    ("contains", { m, d in m.string(&d).map { .contains($0) } }),
    ("doesNotContain", { m, d in m.string(&d).map { .doesNotContain($0) } }),
    ("matches", { m, d in m.regex(&d).map { .matches($0) } }),
    ("doesNotMatch", { m, d in m.regex(&d).map { .doesNotMatch($0) } }),
    ("absent", parseAbsent),
    ("equalToJson", parseEqualToJson),
    ("matchesJsonPath", parseMatchesJsonPath),
    ("binaryEqualTo", parseBinaryEqualTo),
    ("equalToXml", parseEqualToXml),
    ("matchesXPath", parseMatchesXPath),
    ("and", { m, d in m.list(&d).map { .and($0) } }),
    ("or", { m, d in m.list(&d).map { .or($0) } }),
    ("not", { m, d in StubParser.parseMatcher(m.value, m.operandPath, &d).map { .not($0) } }),
  ]
  package static let matcherOperators = matcherParsers.map(\.0)
  static let matcherParserByOperator = Dictionary(uniqueKeysWithValues: matcherParsers)
  /// Keys that modify an operator rather than name one.
  static let matcherModifiers = Set(["caseInsensitive", "ignoreArrayOrder", "ignoreExtraElements"])
    .union(xmlMatcherModifiers)

  package static func parseMultiMatcher(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> MultiValuePattern?
  {
    guard let o = v.objectValue, o.members.count == 1, let key = o.members.first?.key,
      key == "hasExactly" || key == "includes"
    else { return parseMatcher(v, path, &d).map { .single($0) } }
    let p = JSONPathText.child(path, key)
    guard let list = o[key]?.arrayValue, !list.isEmpty else {
      d.error(p, expected: "a non-empty array of matchers", found: o[key] ?? .null)
      return nil
    }
    let patterns = list.enumerated().compactMap { k, item in parseMatcher(item, JSONPathText.index(p, k), &d)
    }
    guard patterns.count == list.count else { return nil }
    return key == "hasExactly" ? .hasExactly(patterns) : .includes(patterns)
  }

  /// Parses one string value matcher object.
  package static func parseMatcher(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> StringValuePattern?
  {
    guard case .object(let o) = v else {
      d.error(path, expected: "a matcher object such as {\"equalTo\": …}", found: v)
      return nil
    }
    checkMatcherKeys(o, path, &d)
    let operators = o.keys.filter { matcherParserByOperator[$0] != nil }
    guard operators.count == 1, let op = operators.first, let value = o[op],
      let parse = matcherParserByOperator[op]
    else {
      if operators.count > 1 {
        d.error(
          path, expected: "exactly one matcher per object (use and/or to combine)",
          found: operators.joined(separator: " and "))
      } else if o.members.isEmpty {
        d.error(path, expected: "a matcher such as {\"equalTo\": …}", found: "an empty object")
      }
      return nil
    }
    let operand = MatcherOperand(object: o, op: op, value: value, path: path)
    // Modifiers are checked against the operator even when the operator itself ignores them.
    for (name, owner) in [
      ("caseInsensitive", "equalTo"), ("ignoreArrayOrder", "equalToJson"),
      ("ignoreExtraElements", "equalToJson"),
    ]
    where op != owner {
      _ = operand.flag(name, allowedWith: [owner], &d)
    }
    return parse(operand, &d)
  }

  /// Reports keys that are neither an operator nor a modifier.
  static func checkMatcherKeys(_ o: JSONObject, _ path: String, _ d: inout Diagnostics) {
    for key in o.keys where matcherParserByOperator[key] == nil && !matcherModifiers.contains(key) {
      let p = JSONPathText.child(path, key)
      if unsupportedMatchers.contains(key) {
        let why =
          key == "hasExactly" || key == "includes"
          ? "\(key) is only allowed for headers and query parameters"
          : "\(key), which MockServer does not support"
        d.error(p, expected: "a supported matcher (\(matcherOperators.joined(separator: ", ")))", found: why)
      } else {
        d.error(
          p, expected: "a matcher (\(matcherOperators.joined(separator: ", ")))",
          found: "unknown matcher \(JSONValue.quoted(key))")
      }
    }
  }

  static func parseAbsent(_ m: MatcherOperand, _ d: inout Diagnostics) -> StringValuePattern? {
    guard m.value.boolValue == true else {
      d.error(m.operandPath, expected: "true", found: m.value)
      return nil
    }
    return .absent
  }

  /// `equalToJson`: inline JSON or a string holding JSON text, with `ignoreArrayOrder` and
  /// `ignoreExtraElements`.
  static func parseEqualToJson(_ m: MatcherOperand, _ d: inout Diagnostics) -> StringValuePattern? {
    let order = m.flag("ignoreArrayOrder", allowedWith: ["equalToJson"], &d)
    let extra = m.flag("ignoreExtraElements", allowedWith: ["equalToJson"], &d)
    var expected = m.value
    if case .string(let s) = m.value {
      do {
        expected = try JSONValue.parse(s)
      } catch {
        d.error(
          m.operandPath, expected: "JSON (inline, or as a string holding JSON text)",
          found: "a string that is not JSON (\(error))")
        return nil
      }
    }
    return .equalToJson(expected, ignoreArrayOrder: order, ignoreExtraElements: extra)
  }

  /// `matchesJsonPath`: an expression, or `{"expression": …, <matcher>}`.
  static func parseMatchesJsonPath(_ m: MatcherOperand, _ d: inout Diagnostics) -> StringValuePattern? {
    let p = m.operandPath
    if case .string(let s) = m.value { return parseJSONPath(s, p, &d).map { .matchesJsonPath($0, nil) } }
    guard case .object(var sub) = m.value, let e = sub["expression"] else {
      d.error(p, expected: "a JSONPath string or {\"expression\": \"$.x\", \"equalTo\": …}", found: m.value)
      return nil
    }
    guard let es = e.stringValue else {
      d.error(JSONPathText.child(p, "expression"), expected: "a JSONPath string", found: e)
      return nil
    }
    guard let path = parseJSONPath(es, JSONPathText.child(p, "expression"), &d) else { return nil }
    sub.members.removeAll { $0.key == "expression" }
    if sub.members.isEmpty { return .matchesJsonPath(path, nil) }
    return parseMatcher(.object(sub), p, &d).map { .matchesJsonPath(path, $0) }
  }

  static func parseJSONPath(_ s: String, _ path: String, _ d: inout Diagnostics) -> JSONPath? {
    do {
      return try JSONPath(s)
    } catch {
      d.error(path, expected: "a JSONPath expression", found: error.description)
      return nil
    }
  }

  static func parseBinaryEqualTo(_ m: MatcherOperand, _ d: inout Diagnostics) -> StringValuePattern? {
    guard let s = m.string(&d) else { return nil }
    guard let bytes = Base64.decode(s) else {
      d.error(m.operandPath, expected: "base64 text", found: JSONValue.quoted(s))
      return nil
    }
    return .binaryEqualTo(bytes)
  }
}
