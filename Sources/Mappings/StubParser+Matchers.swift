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

    /// The operand as a regular expression, compiled as WireMock's `AbstractRegexPattern` does
    /// (`Pattern.DOTALL`: `.` matches line breaks, so `.*x.*` finds `x` in a multi-line body).
    func regex(_ d: inout Diagnostics) -> CompiledRegex? {
      guard let s = string(&d) else { return nil }
      do {
        return try CompiledRegex(s, dotMatchesLineSeparators: true)
      } catch {
        d.error(
          operandPath, expected: "a valid regular expression",
          found: "\(FixtureProblem.excerpt(s)) (\(error.message))")
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
    ("anything", { _, _ in .anything }),
    ("matchesJsonSchema", parseMatchesJsonSchema),
    ("before", parseDateTime),
    ("after", parseDateTime),
    ("equalToDateTime", parseDateTime),
  ]
  package static let matcherOperators = matcherParsers.map(\.0)
  static let matcherParserByOperator = Dictionary(uniqueKeysWithValues: matcherParsers)
  /// Keys that modify an operator rather than name one.
  static let matcherModifiers: Set<String> = Set([
    "caseInsensitive", "ignoreArrayOrder", "ignoreExtraElements", "schemaVersion", "actualFormat",
    "truncateExpected", "truncateActual", "expectedOffset", "expectedOffsetUnit",
  ]).union(xmlMatcherModifiers)
  /// Each modifier and the operators it belongs to. Beside another operator WireMock's reader ignores
  /// it, so it loads here too, with a warning saying it has no effect.
  static let modifierOwners: [(String, Set<String>)] = [
    ("caseInsensitive", ["equalTo"]),
    ("ignoreArrayOrder", ["equalToJson"]),
    ("ignoreExtraElements", ["equalToJson"]),
    ("schemaVersion", ["matchesJsonSchema"]),
    ("actualFormat", dateOperators),
    ("truncateExpected", dateOperators),
    ("truncateActual", dateOperators),
    ("expectedOffset", dateOperators),
    ("expectedOffsetUnit", dateOperators),
    ("enablePlaceholders", ["equalToXml"]),
    ("placeholderOpeningDelimiterRegex", ["equalToXml"]),
    ("placeholderClosingDelimiterRegex", ["equalToXml"]),
    ("exemptedComparisons", ["equalToXml"]),
    ("namespaceAwareness", ["equalToXml"]),
    ("xPathNamespaces", ["matchesXPath"]),
  ]
  static let dateOperators: Set<String> = ["before", "after", "equalToDateTime"]

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
    // A modifier beside an operator it does not belong to has no effect (as in WireMock): a warning.
    for (name, owners) in modifierOwners where o[name] != nil && !owners.contains(op) {
      d.warning(
        JSONPathText.child(path, name),
        "\(name) has no effect with \(op) (only with \(owners.sorted().joined(separator: " or "))); it is ignored"
      )
    }
    return parse(operand, &d)
  }

  /// Reports keys that are neither an operator nor a modifier.
  static func checkMatcherKeys(_ o: JSONObject, _ path: String, _ d: inout Diagnostics) {
    let hasOperator = o.keys.contains { matcherParserByOperator[$0] != nil }
    for key in o.keys where matcherParserByOperator[key] == nil && !matcherModifiers.contains(key) {
      let p = JSONPathText.child(path, key)
      if hasOperator && !unsupportedMatchers.contains(key) {
        // WireMock's reader picks the operator and ignores other members.
        d.warning(p, "\(JSONValue.quoted(key)) is not a matcher modifier; it has no effect and is ignored")
        continue
      }
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
    checkPlaceholders(expected, m.operandPath, &d)
    return .equalToJson(expected, ignoreArrayOrder: order, ignoreExtraElements: extra)
  }

  /// Reports JsonUnit placeholders that cannot work: a `${json-unit.regex}` that does not compile (error),
  /// a custom `${json-unit.matches:…}` or an unknown `${json-unit.…}` (warnings: they never match, or are
  /// compared as text).
  static func checkPlaceholders(_ v: JSONValue, _ path: String, _ d: inout Diagnostics, depth: Int = 0) {
    guard depth < 64 else { return }
    switch v {
    case .string(let s) where s.hasPrefix("${json-unit.") || s.hasPrefix("#{json-unit."):
      switch JSONComparison.Placeholder(s) {
      case .regex(let pattern)?:
        do {
          _ = try CompiledRegex(pattern)
        } catch {
          d.error(path, expected: "a valid regular expression after ${json-unit.regex}", found: error.message)
        }
      case .custom(let name)?:
        d.warning(
          path,
          "no custom JsonUnit matcher \(JSONValue.quoted(name)) is registered, so this value never matches")
      case nil:
        d.warning(path, "\(JSONValue.quoted(s)) is not a JsonUnit placeholder; it is compared as text")
      default: break
      }
    case .object(let o):
      for m in o.members { checkPlaceholders(m.value, JSONPathText.child(path, m.key), &d, depth: depth + 1) }
    case .array(let a):
      for (k, item) in a.enumerated() {
        checkPlaceholders(item, JSONPathText.index(path, k), &d, depth: depth + 1)
      }
    default: break
    }
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

  /// `matchesJsonSchema`: the schema inline or as a string holding JSON, `schemaVersion` one of WireMock's
  /// names (V4, V6, V7, V201909, V202012; all validated with the one validator).
  static func parseMatchesJsonSchema(_ m: MatcherOperand, _ d: inout Diagnostics) -> StringValuePattern? {
    var schema = m.value
    if case .string(let s) = m.value {
      guard let parsed = try? JSONValue.parse(s) else {
        d.error(
          m.operandPath, expected: "a JSON Schema (inline, or a string holding JSON)",
          found: "text that is not JSON")
        return nil
      }
      schema = parsed
    }
    switch schema {
    case .object, .bool: break
    default:
      d.error(m.operandPath, expected: "a JSON Schema object", found: schema)
      return nil
    }
    var version: String?
    if let v = m.object["schemaVersion"] {
      let known = ["V4", "V6", "V7", "V201909", "V202012"]
      if let s = v.stringValue, known.contains(s.uppercased()) {
        version = s
      } else {
        d.error(
          JSONPathText.child(m.path, "schemaVersion"), expected: known.joined(separator: ", "), found: v)
      }
    }
    return .matchesJsonSchema(schema, schemaVersion: version)
  }

  /// `before`, `after`, `equalToDateTime` with `actualFormat`, `truncateExpected`, `truncateActual`,
  /// `expectedOffset` and `expectedOffsetUnit`.
  static func parseDateTime(_ m: MatcherOperand, _ d: inout Diagnostics) -> StringValuePattern? {
    guard let expected = m.string(&d), let comparison = DateTimePattern.Comparison(rawValue: m.op) else {
      return nil
    }
    var pattern = DateTimePattern(comparison: comparison, expected: expected)
    func text(_ key: String) -> String? {
      guard let v = m.object[key] else { return nil }
      guard let s = v.stringValue else {
        d.error(JSONPathText.child(m.path, key), expected: "a string", found: v)
        return nil
      }
      return s
    }
    pattern.actualFormat = text("actualFormat")
    for key in ["truncateExpected", "truncateActual"] {
      guard let t = text(key) else { continue }
      let unit = t.lowercased().replacingAll("_", with: " ")
      guard DateTimePattern.truncations.contains(unit) else {
        d.error(
          JSONPathText.child(m.path, key), expected: DateTimePattern.truncations.joined(separator: ", "),
          found: JSONValue.quoted(t))
        continue
      }
      if key == "truncateExpected" { pattern.truncateExpected = unit } else { pattern.truncateActual = unit }
    }
    if let amount = m.object["expectedOffset"] {
      let unit = text("expectedOffsetUnit")?.lowercased() ?? "days"
      if let n = amount.numberValue?.intValue ?? amount.stringValue.flatMap({ Int($0) }),
        abs(n) <= 1_000_000, DateTimePattern.offsetUnits.contains(unit)
      {
        pattern.expectedOffset = "\(n) \(unit)"
      } else {
        d.error(
          JSONPathText.child(m.path, "expectedOffset"),
          expected:
            "a whole number with expectedOffsetUnit one of \(DateTimePattern.offsetUnits.joined(separator: ", "))",
          found: amount)
      }
    }
    if pattern.expectedMilliseconds(now: 0) == nil {
      d.error(
        m.operandPath,
        expected: "a date-time (2021-06-24T00:00:00Z, a local date-time or date) or now with an offset "
          + "such as \"now +3 days\"",
        found: JSONValue.quoted(expected))
      return nil
    }
    return .dateTime(pattern)
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
