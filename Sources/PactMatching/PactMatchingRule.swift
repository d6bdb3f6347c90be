import MockJSON
import RegularExpressions

/// One matching rule of the Pact specification (V2–V4), as pact_models reads it from a pact file.
package indirect enum PactMatchingRule: Sendable, Hashable {
  case equality
  /// A regular expression the whole value must match (as Pact's mock server applies it: `\d{1,4}` does not
  /// match `9999X`).
  case regex(CompiledRegex)
  case type
  case minType(Int)
  case maxType(Int)
  case minMaxType(Int, Int)
  /// A timestamp in a Java `DateTimeFormatter` pattern (default `yyyy-MM-dd'T'HH:mm:ssXXX`).
  case timestamp(PactDateFormat)
  /// A time (default `HH:mm:ss`).
  case time(PactDateFormat)
  /// A date (default `yyyy-MM-dd`).
  case date(PactDateFormat)
  case include(String)
  case number
  case integer
  case decimal
  case null
  case boolean
  /// A media type detected from the value's bytes.
  case contentType(String)
  case values
  case notEmpty
  case semver
  case eachKey([PactMatchingRule])
  case eachValue([PactMatchingRule])
  /// Variants by index into the expected array, each with its own body rules.
  case arrayContains([ArrayContainsVariant])
  /// `statusCode`: only meaningful for response statuses.
  case statusCode(StatusClass)

  /// One `arrayContains` variant.
  package struct ArrayContainsVariant: Sendable, Hashable {
    package var index: Int
    package var rules: PactRuleCategory
  }

  /// `statusCode`'s value.
  package enum StatusClass: Sendable, Hashable {
    case information, success, redirect, clientError, serverError, nonError, error
    case codes([Int])

    package func contains(_ code: Int) -> Bool {
      switch self {
      case .information: return (100...199).contains(code)
      case .success: return (200...299).contains(code)
      case .redirect: return (300...399).contains(code)
      case .clientError: return (400...499).contains(code)
      case .serverError: return (500...599).contains(code)
      case .nonError: return code < 400
      case .error: return code >= 400
      case .codes(let list): return list.contains(code)
      }
    }
  }

  /// `false` for `values`, `eachKey` and `eachValue`: they apply to their own value only.
  package var canCascade: Bool {
    switch self {
    case .values, .eachKey, .eachValue: return false
    default: return true
    }
  }

  /// `values`, `eachValue` and `arrayContains` compare a collection's values, not its keys.
  package var isValuesMatcher: Bool {
    switch self {
    case .values, .eachValue, .arrayContains: return true
    default: return false
    }
  }

  package var isTypeMatcher: Bool {
    switch self {
    case .type, .minType, .maxType, .minMaxType: return true
    default: return false
    }
  }

  /// The name pact files use (`match`).
  package var name: String {
    switch self {
    case .equality: return "equality"
    case .regex: return "regex"
    case .type, .minType, .maxType, .minMaxType: return "type"
    case .timestamp: return "timestamp"
    case .time: return "time"
    case .date: return "date"
    case .include: return "include"
    case .number: return "number"
    case .integer: return "integer"
    case .decimal: return "decimal"
    case .null: return "null"
    case .boolean: return "boolean"
    case .contentType: return "contentType"
    case .values: return "values"
    case .notEmpty: return "notEmpty"
    case .semver: return "semver"
    case .eachKey: return "eachKey"
    case .eachValue: return "eachValue"
    case .arrayContains: return "arrayContains"
    case .statusCode: return "statusCode"
    }
  }

  /// The rule as a pact file writes it (V3/V4 form).
  package var json: JSONValue {
    var pairs: [(String, JSONValue)] = [("match", .string(name))]
    switch self {
    case .regex(let r): pairs.append(("regex", .string(r.pattern)))
    case .minType(let n): pairs.append(("min", .number(JSONNumber(n))))
    case .maxType(let n): pairs.append(("max", .number(JSONNumber(n))))
    case .minMaxType(let a, let b):
      pairs.append(("min", .number(JSONNumber(a))))
      pairs.append(("max", .number(JSONNumber(b))))
    case .timestamp(let f), .time(let f), .date(let f): pairs.append(("format", .string(f.pattern)))
    case .include(let v), .contentType(let v): pairs.append(("value", .string(v)))
    case .eachKey(let rules), .eachValue(let rules): pairs.append(("rules", .array(rules.map(\.json))))
    case .arrayContains(let variants):
      pairs.append(
        (
          "variants",
          .array(
            variants.map {
              .object(
                JSONObject(pairs: [("index", .number(JSONNumber($0.index))), ("rules", $0.rules.v3JSON)]))
            })
        ))
    default: break
    }
    return .object(JSONObject(pairs: pairs))
  }
}

/// Rules of one path, applied together (`combine`: AND by default, or OR).
package struct PactRuleList: Sendable, Hashable {
  package var rules: [PactMatchingRule]
  package var isOr: Bool
  /// Set when the list was chosen for a value below its own path.
  package var cascaded: Bool

  package init(rules: [PactMatchingRule], isOr: Bool = false, cascaded: Bool = false) {
    self.rules = rules
    self.isOr = isOr
    self.cascaded = cascaded
  }

  package var isEmpty: Bool { rules.isEmpty }
  package var json: JSONValue {
    var pairs: [(String, JSONValue)] = [("matchers", .array(rules.map(\.json)))]
    if isOr { pairs.append(("combine", .string("OR"))) }
    return .object(JSONObject(pairs: pairs))
  }
}

/// The rules of one category (`path`, `query`, `header`, `body`), by path.
package struct PactRuleCategory: Sendable, Hashable {
  package enum Kind: String, Sendable, Hashable {
    case path, query, header, body
  }

  package var kind: Kind
  package var entries: [(path: PactDocPath, list: PactRuleList)]

  package init(kind: Kind, entries: [(path: PactDocPath, list: PactRuleList)] = []) {
    self.kind = kind
    self.entries = entries
  }

  package var isEmpty: Bool { entries.isEmpty }

  package mutating func add(_ rule: PactMatchingRule, at path: PactDocPath, isOr: Bool) {
    if let k = entries.firstIndex(where: { $0.path == path }) {
      entries[k].list.rules.append(rule)
      if isOr { entries[k].list.isOr = true }
    } else {
      entries.append((path, PactRuleList(rules: [rule], isOr: isOr)))
    }
  }

  /// True when a rule applies at `path` (its own, or one of an ancestor's).
  package func isDefined(_ path: [String]) -> Bool {
    if kind == .path { return !entries.isEmpty }
    return entries.contains { $0.path.weight(for: path).weight > 0 }
  }

  /// True when a type rule applies at `path`.
  package func typeRuleDefined(_ path: [String]) -> Bool {
    entries.contains { $0.path.weight(for: path).weight > 0 && $0.list.rules.contains { $0.isTypeMatcher } }
  }

  /// Rules whose path is exactly `path`.
  package func exact(_ path: [String]) -> PactRuleList? {
    entries.first { $0.path.fragments == path }?.list
  }

  /// The rules that decide `path`: for bodies the heaviest path (cascaded when shorter than `path`), for the
  /// other categories the first that applies.
  package func best(_ path: [String]) -> PactRuleList {
    if kind == .path { return entries.first?.list ?? PactRuleList(rules: []) }
    if kind != .body {
      return entries.first { $0.path.weight(for: path).weight > 0 }?.list ?? PactRuleList(rules: [])
    }
    var best: (score: Int, list: PactRuleList, length: Int)?
    for entry in entries {
      let (w, t) = entry.path.weight(for: path)
      guard w > 0 else { continue }
      // pact-reference's max_by_key keeps the last of equal maxima.
      if best == nil || w * t >= best!.score { best = (w * t, entry.list, t) }
    }
    guard var chosen = best else { return PactRuleList(rules: []) }
    chosen.list.cascaded = chosen.length != path.count
    return chosen.list
  }

  /// V3/V4 JSON (`{"$.a": {"matchers": [...]}}`; header and query by name).
  package var v3JSON: JSONValue {
    if kind == .path { return entries.first?.list.json ?? .object(JSONObject()) }
    return .object(
      JSONObject(
        pairs: entries.map { entry in
          let key: String
          if kind == .header || kind == .query, entry.path.tokens.count == 2,
            case .field(let name) = entry.path.tokens[1]
          {
            key = name
          } else {
            key = entry.path.description
          }
          return (key, entry.list.json)
        }))
  }

  package static func == (a: PactRuleCategory, b: PactRuleCategory) -> Bool {
    a.kind == b.kind && a.entries.count == b.entries.count
      && zip(a.entries, b.entries).allSatisfy { $0.path == $1.path && $0.list == $1.list }
  }

  package func hash(into hasher: inout Hasher) {
    hasher.combine(kind)
    hasher.combine(entries.count)
  }
}

/// A request's or response's matching rules by category.
package struct PactMatchingRules: Sendable, Hashable {
  package var path = PactRuleCategory(kind: .path)
  package var query = PactRuleCategory(kind: .query)
  package var header = PactRuleCategory(kind: .header)
  package var body = PactRuleCategory(kind: .body)
  /// Categories other than these four (`status`, `metadata`), kept as read.
  package var others: [String: JSONValue] = [:]

  package init() {}

  package var isEmpty: Bool { path.isEmpty && query.isEmpty && header.isEmpty && body.isEmpty }

  /// Reads `matchingRules` in the V2 layout (`{"$.body.a": {...}}`) or the V3/V4 one
  /// (`{"body": {"$.a": {"matchers": [...]}}}`).
  /// - Parameters:
  ///   - value: the `matchingRules` object.
  ///   - jsonPath: where it is in the file, for errors.
  /// - Throws: ``PactRuleError`` naming the rule's JSON path and what is wrong (an unknown or plugin rule,
  ///   a missing attribute, a bad path expression or regular expression).
  package init(json value: JSONValue?, jsonPath: String) throws(PactRuleError) {
    guard let value, value != .null else { return }
    guard let o = value.objectValue else {
      throw PactRuleError(
        path: jsonPath, message: "expected an object of matching rules, found \(value.kindDescription)")
    }
    if o.members.first?.key.hasPrefix("$") == true {
      for m in o {
        try addV2(key: m.key, rule: m.value, jsonPath: jsonPath + "['\(m.key)']")
      }
      return
    }
    for m in o {
      let p = jsonPath + "." + m.key
      switch m.key {
      case "path":
        if let matchers = m.value["matchers"] {
          try addList(
            into: &path, at: PactDocPath(tokens: []), matchers: matchers, combine: m.value["combine"],
            jsonPath: p)
        } else if let inner = m.value.objectValue {
          for e in inner {
            try addList(
              into: &path, at: PactDocPath(tokens: []), entry: e.value, jsonPath: p + "['\(e.key)']")
          }
        }
      case "query", "header", "headers", "body":
        var category: PactRuleCategory
        switch m.key {
        case "query": category = query
        case "body": category = body
        default: category = header
        }
        guard let inner = m.value.objectValue else {
          throw PactRuleError(
            path: p, message: "expected an object of rules by name or path, found \(m.value.kindDescription)")
        }
        if inner["matchers"] != nil {
          try addList(
            into: &category, at: m.key == "body" ? .root : PactDocPath(tokens: []), entry: m.value,
            jsonPath: p)
        } else {
          for e in inner {
            let at: PactDocPath
            if category.kind == .body {
              do { at = try PactDocPath(e.key) } catch {
                throw PactRuleError(path: p + "['\(e.key)']", message: error.description)
              }
            } else {
              at = .named(category.kind == .header ? e.key.lowercased() : e.key)
            }
            try addList(into: &category, at: at, entry: e.value, jsonPath: p + "['\(e.key)']")
          }
        }
        switch m.key {
        case "query": query = category
        case "body": body = category
        default: header = category
        }
      default:
        others[m.key] = m.value
      }
    }
  }

  private mutating func addV2(key: String, rule: JSONValue, jsonPath: String) throws(PactRuleError) {
    if key == "$.path" {
      path.add(try PactMatchingRule.parse(rule, jsonPath: jsonPath), at: PactDocPath(tokens: []), isOr: false)
    } else if key == "$.body" || key.hasPrefix("$.body.") || key.hasPrefix("$.body[") {
      let at: PactDocPath
      do { at = try PactDocPath("$" + key.dropFirst(6)) } catch {
        throw PactRuleError(path: jsonPath, message: error.description)
      }
      body.add(try PactMatchingRule.parse(rule, jsonPath: jsonPath), at: at, isOr: false)
    } else if key.hasPrefix("$.header") || key.hasPrefix("$.query") {
      let parsed: PactDocPath
      do { parsed = try PactDocPath(key) } catch {
        throw PactRuleError(path: jsonPath, message: error.description)
      }
      let names = parsed.tokens.compactMap { token -> String? in
        if case .field(let n) = token { return n }
        return nil
      }
      guard names.count >= 2 else {
        throw PactRuleError(
          path: jsonPath,
          message: "expected a rule path naming a header or query parameter, found \(JSONValue.quoted(key))")
      }
      let rule = try PactMatchingRule.parse(rule, jsonPath: jsonPath)
      if names[0].hasPrefix("header") {
        header.add(rule, at: .named(names[1].lowercased()), isOr: false)
      } else {
        query.add(rule, at: .named(names[1]), isOr: false)
      }
    } else {
      throw PactRuleError(
        path: jsonPath,
        message:
          "expected a rule path under $.path, $.query, $.headers or $.body, found \(JSONValue.quoted(key))")
    }
  }

  private func addList(
    into category: inout PactRuleCategory, at path: PactDocPath, entry: JSONValue, jsonPath: String
  ) throws(PactRuleError) {
    if let matchers = entry["matchers"] {
      try addList(
        into: &category, at: path, matchers: matchers, combine: entry["combine"], jsonPath: jsonPath)
    } else {
      // A bare rule (as some writers emit).
      category.add(try PactMatchingRule.parse(entry, jsonPath: jsonPath), at: path, isOr: false)
    }
  }

  private func addList(
    into category: inout PactRuleCategory, at path: PactDocPath, matchers: JSONValue, combine: JSONValue?,
    jsonPath: String
  ) throws(PactRuleError) {
    guard let list = matchers.arrayValue else {
      throw PactRuleError(
        path: jsonPath + ".matchers", message: "expected an array of rules, found \(matchers.kindDescription)"
      )
    }
    let isOr: Bool
    switch combine {
    case nil, .null: isOr = false
    case .string(let s) where s.uppercased() == "OR": isOr = true
    case .string(let s) where s.uppercased() == "AND": isOr = false
    case let other?:
      throw PactRuleError(
        path: jsonPath + ".combine", message: "expected \"AND\" or \"OR\", found \(other.serialized())")
    }
    if list.isEmpty, isOr { return }
    for (k, rule) in list.enumerated() {
      category.add(
        try PactMatchingRule.parse(rule, jsonPath: jsonPath + ".matchers[\(k)]"), at: path, isOr: isOr)
    }
  }

  /// V3/V4 JSON of the non-empty categories.
  package var v3JSON: JSONValue {
    var pairs: [(String, JSONValue)] = []
    if !path.isEmpty { pairs.append(("path", path.v3JSON)) }
    if !query.isEmpty { pairs.append(("query", query.v3JSON)) }
    if !header.isEmpty { pairs.append(("header", header.v3JSON)) }
    if !body.isEmpty { pairs.append(("body", body.v3JSON)) }
    for (k, v) in others.sorted(by: { $0.key < $1.key }) { pairs.append((k, v)) }
    return .object(JSONObject(pairs: pairs))
  }
}

/// A rule that cannot be read or honoured.
package struct PactRuleError: Error, Sendable, Hashable, CustomStringConvertible {
  /// JSON path of the rule in the pact file.
  package var path: String
  /// What was expected and found.
  package var message: String
  package var description: String { "\(path): \(message)" }
}

extension PactMatchingRule {
  /// The rule names this matcher honours, for messages.
  package static let supportedNames =
    "equality, regex, type (with min/max), include, number, integer, decimal, boolean, null, date, time, "
    + "timestamp/datetime, contentType, values, notEmpty, semver, eachKey, eachValue, arrayContains, statusCode"

  /// Reads one rule object as pact_models' `MatchingRule::from_json` does (`match`, or the V2 shorthand of
  /// `regex`, `min`, `max`, `timestamp`, `time`, `date` alone).
  /// - Throws: ``PactRuleError`` for a rule this matcher cannot honour (plugin rules included), a missing
  ///   attribute or a regular expression that does not compile.
  package static func parse(_ value: JSONValue, jsonPath: String) throws(PactRuleError) -> PactMatchingRule {
    guard let o = value.objectValue else {
      throw PactRuleError(path: jsonPath, message: "expected a rule object, found \(value.kindDescription)")
    }
    let kind: String
    if let m = o["match"] ?? o["pact:matcher:type"] {
      guard let s = m.stringValue else {
        throw PactRuleError(
          path: jsonPath + ".match", message: "expected a rule name, found \(m.kindDescription)")
      }
      kind = s
    } else if o["regex"] != nil {
      kind = "regex"
    } else if o["min"] != nil || o["max"] != nil {
      kind = "type"
    } else if o["timestamp"] != nil {
      kind = "timestamp"
    } else if o["time"] != nil {
      kind = "time"
    } else if o["date"] != nil {
      kind = "date"
    } else {
      throw PactRuleError(
        path: jsonPath, message: "expected a rule with \"match\", found \(value.serialized())")
    }
    func count(_ key: String) throws(PactRuleError) -> Int? {
      guard let v = o[key], v != .null else { return nil }
      let n: Int?
      switch v {
      case .number(let x): n = x.intValue
      case .string(let s): n = Int(s)
      default: n = nil
      }
      guard let n, n >= 0, n <= 1 << 31 else {
        throw PactRuleError(
          path: jsonPath + ".\(key)", message: "expected a count from 0 to 2^31, found \(v.serialized())")
      }
      return n
    }
    func text(_ key: String) throws(PactRuleError) -> String {
      guard let v = o[key], v != .null else {
        throw PactRuleError(path: jsonPath, message: "expected a \"\(key)\" attribute for the \(kind) rule")
      }
      return v.stringValue ?? v.serialized()
    }
    func format(_ key: String, _ fallback: String) throws(PactRuleError) -> PactDateFormat {
      var pattern = (o["format"] ?? o[key]).map { $0.stringValue ?? $0.serialized() } ?? ""
      if pattern.isEmpty { pattern = fallback }
      do { return try PactDateFormat(pattern) } catch {
        throw PactRuleError(path: jsonPath + ".format", message: error.description)
      }
    }
    func subRules() throws(PactRuleError) -> [PactMatchingRule] {
      guard let rules = o["rules"], rules != .null else { return [] }
      guard let list = rules.arrayValue else {
        throw PactRuleError(
          path: jsonPath + ".rules", message: "expected an array of rules, found \(rules.kindDescription)")
      }
      var out: [PactMatchingRule] = []
      for (k, r) in list.enumerated() { out.append(try parse(r, jsonPath: jsonPath + ".rules[\(k)]")) }
      return out
    }
    switch kind {
    case "regex":
      let pattern = try text("regex")
      do {
        return .regex(try CompiledRegex(pattern))
      } catch {
        throw PactRuleError(
          path: jsonPath + ".regex",
          message: "expected a regular expression, found \(JSONValue.quoted(pattern)) (\(error.message))")
      }
    case "equality": return .equality
    case "include": return .include(try text("value"))
    case "type", "min-type", "max-type", "min", "max":
      let min = try count("min")
      let max = try count("max")
      switch (min, max) {
      case (let a?, let b?): return .minMaxType(a, b)
      case (let a?, nil): return .minType(a)
      case (nil, let b?): return .maxType(b)
      default:
        if kind != "type" {
          throw PactRuleError(path: jsonPath, message: "expected a \"min\" or \"max\" for the \(kind) rule")
        }
        return .type
      }
    case "number": return .number
    case "integer": return .integer
    case "decimal", "real": return .decimal
    case "boolean": return .boolean
    case "null": return .null
    case "timestamp", "datetime": return .timestamp(try format(kind, "yyyy-MM-dd'T'HH:mm:ssXXX"))
    case "date": return .date(try format("date", "yyyy-MM-dd"))
    case "time": return .time(try format("time", "HH:mm:ss"))
    case "contentType", "content-type": return .contentType(try text("value"))
    case "values": return .values
    case "notEmpty", "not-empty": return .notEmpty
    case "semver": return .semver
    case "eachKey", "each-key": return .eachKey(try subRules())
    case "eachValue", "each-value": return .eachValue(try subRules())
    case "arrayContains", "array-contains":
      guard let variants = o["variants"]?.arrayValue else {
        throw PactRuleError(path: jsonPath + ".variants", message: "expected an array of variants")
      }
      var out: [ArrayContainsVariant] = []
      for (k, v) in variants.enumerated() {
        let vp = jsonPath + ".variants[\(k)]"
        let index: Int
        switch v["index"] {
        case .number(let n)?: index = n.intValue ?? -1
        case nil: index = 0
        default: index = -1
        }
        guard index >= 0, index <= 1 << 31 else {
          throw PactRuleError(path: vp + ".index", message: "expected an index into the expected array")
        }
        var category = PactRuleCategory(kind: .body)
        if let rules = v["rules"]?.objectValue {
          for r in rules {
            let at: PactDocPath
            do { at = try PactDocPath(r.key) } catch {
              throw PactRuleError(path: vp + ".rules['\(r.key)']", message: error.description)
            }
            let wrapped = PactMatchingRules.singleCategory(r.value)
            for (j, rule) in wrapped.rules.enumerated() {
              category.add(
                try parse(rule, jsonPath: vp + ".rules['\(r.key)'].matchers[\(j)]"), at: at,
                isOr: wrapped.isOr)
            }
          }
        } else {
          category.add(.equality, at: PactDocPath(tokens: []), isOr: false)
        }
        out.append(ArrayContainsVariant(index: index, rules: category))
      }
      return .arrayContains(out)
    case "statusCode", "status-code":
      switch o["status"] {
      case nil, .null?: return .statusCode(.success)
      case .string(let s)?:
        let classes: [String: StatusClass] = [
          "info": .information, "success": .success, "redirect": .redirect, "clientError": .clientError,
          "serverError": .serverError, "nonError": .nonError, "error": .error,
        ]
        guard let c = classes[s] else {
          throw PactRuleError(
            path: jsonPath + ".status", message: "expected a status class, found \(JSONValue.quoted(s))")
        }
        return .statusCode(c)
      case .array(let codes)?:
        return .statusCode(.codes(codes.compactMap { $0.numberValue?.intValue }))
      case let other?:
        throw PactRuleError(
          path: jsonPath + ".status", message: "expected a status class or codes, found \(other.serialized())"
        )
      }
    default:
      throw PactRuleError(
        path: jsonPath,
        message:
          "expected a matching rule MockServer honours (\(supportedNames)), found \(JSONValue.quoted(kind))"
          + " (a rule from a Pact plugin or a newer specification)")
    }
  }

  /// The rule list form `{"matchers": [...], "combine": ...}` or a bare rule.
  fileprivate static func listOrRule(_ value: JSONValue) -> (rules: [JSONValue], isOr: Bool) {
    if let list = value["matchers"]?.arrayValue {
      return (list, value["combine"]?.stringValue?.uppercased() == "OR")
    }
    return ([value], false)
  }
}

extension PactMatchingRules {
  fileprivate static func singleCategory(_ value: JSONValue) -> (rules: [JSONValue], isOr: Bool) {
    PactMatchingRule.listOrRule(value)
  }
}
