import Foundation
import JSONSchema
import MockJSON

/// Why a Pact file could not be imported.
public struct PactImportError: Error, Sendable, Hashable, CustomStringConvertible {
  /// JSON path in the pact file.
  public var path: String
  /// `expected …, found …`.
  public var message: String
  /// `$.interactions[2].request.method: expected a string, found null`.
  public var description: String { "\(path): \(message)" }
}

/// Turns Pact files (specification v2, v3 and v4 HTTP interactions) into WireMock stub mappings.
///
/// - Request: method, path (`urlPath`, or `urlPathPattern` with a `regex` rule), query and headers (each
///   an `equalTo`, or the closest matcher for its matching rule), body (`equalToJson` without rules, else one
///   `matchesJsonPath` per rule and per literal leaf).
/// - Rules → matchers: `regex` → `matches`, `integer`/`decimal`/`number` → `matches` of that number form,
///   `type` → present (any value), `date`/`time`/`timestamp` → `matches` of the format's shape,
///   `include` → `contains`, `equality` → `equalTo`, `values` → present; `min`/`max` on arrays →
///   `matchesJsonPath` with `size()`.
/// - Response: status, headers, body (`jsonBody`, `body` or `base64Body`).
/// - Provider states: in `metadata.pact.providerStates`; each interaction with a state is also served by a
///   stub in the scenario `pact:<provider>` that matches only in that state (select it with
///   `PUT /__admin/scenarios/pact:<provider>/state {"state": "…"}`), while the stateless copy answers by
///   default (the first interaction of a given request wins).
public enum PactImporter {
  /// Stub mappings for every HTTP interaction of `pact`; non-HTTP (message) interactions are skipped and
  /// counted in `skipped`.
  /// - Throws: ``PactImportError`` when the file is not a pact or an interaction lacks method or path.
  public static func mappings(from pact: JSONValue, file: String = "pact") throws(PactImportError) -> (
    mappings: [JSONValue], skipped: Int
  ) {
    guard let interactions = pact["interactions"]?.arrayValue else {
      throw PactImportError(
        path: "$.interactions",
        message:
          "expected an array of interactions, found \(pact["interactions"]?.kindDescription ?? "nothing")")
    }
    let version = specificationVersion(pact)
    let consumer = pact["consumer"]?["name"]?.stringValue ?? "consumer"
    let provider = pact["provider"]?["name"]?.stringValue ?? "provider"
    var out: [JSONValue] = []
    var skipped = 0
    for (k, interaction) in interactions.enumerated() {
      let base = "$.interactions[\(k)]"
      if let type = interaction["type"]?.stringValue, type != "Synchronous/HTTP" {
        skipped += 1
        continue
      }
      guard let request = interaction["request"]?.objectValue,
        let response = interaction["response"]?.objectValue
      else {
        throw PactImportError(
          path: base, message: "expected request and response objects, found \(interaction.kindDescription)")
      }
      guard let method = request["method"]?.stringValue?.uppercased() else {
        throw PactImportError(
          path: base + ".request.method",
          message: "expected a string, found \(request["method"]?.kindDescription ?? "nothing")")
      }
      guard let path = request["path"]?.stringValue else {
        throw PactImportError(
          path: base + ".request.path",
          message: "expected a string, found \(request["path"]?.kindDescription ?? "nothing")")
      }
      let description = interaction["description"]?.stringValue ?? "\(method) \(path)"
      var states: [JSONValue] = []
      if let s = interaction["providerState"]?.stringValue {
        states.append(.object(JSONObject(pairs: [("name", .string(s))])))
      }
      states += interaction["providerStates"]?.arrayValue ?? []
      let requestRules = Rules(request["matchingRules"], version: version)
      let responseRules = Rules(response["matchingRules"], version: version)

      var pattern: [(String, JSONValue)] = [("method", .string(method))]
      if let regex = requestRules.rules(for: "path", "").first(where: { $0["match"]?.stringValue == "regex" }
      )?["regex"]?.stringValue {
        pattern.append(("urlPathPattern", .string(regex)))
      } else {
        pattern.append(("urlPath", .string(path)))
      }
      let query = queryValues(request["query"])
      if !query.isEmpty {
        pattern.append(
          (
            "queryParameters",
            .object(
              JSONObject(
                pairs: query.map { name, values in
                  (name, matcher(values.first ?? "", requestRules.rules(for: "query", name)))
                }))
          ))
      }
      let headers = headerValues(request["headers"])
      if !headers.isEmpty {
        pattern.append(
          (
            "headers",
            .object(
              JSONObject(
                pairs: headers.map { name, value in
                  (name, matcher(value, requestRules.rules(for: "header", name)))
                }))
          ))
      }
      let (requestBody, _) = body(request["body"])
      if let requestBody {
        let bodyRules = requestRules.bodyRules()
        if case .string(let text) = requestBody, bodyRules.isEmpty {
          pattern.append(("bodyPatterns", .array([.object(JSONObject(pairs: [("equalTo", .string(text))]))])))
        } else if bodyRules.isEmpty {
          pattern.append(
            ("bodyPatterns", .array([.object(JSONObject(pairs: [("equalToJson", requestBody)]))])))
        } else {
          pattern.append(("bodyPatterns", .array(jsonPathPatterns(requestBody, bodyRules))))
        }
      }

      var responseFields: [(String, JSONValue)] = [
        ("status", .number(response["status"]?.numberValue ?? JSONNumber(200)))
      ]
      let responseHeaders = headerValues(response["headers"])
      let (responseBody, bodyType) = body(response["body"])
      var headerPairs = responseHeaders.map { ($0.0, JSONValue.string($0.1)) }
      if let bodyType, !responseHeaders.contains(where: { $0.0.lowercased() == "content-type" }) {
        headerPairs.append(("Content-Type", .string(bodyType)))
      }
      if !headerPairs.isEmpty { responseFields.append(("headers", .object(JSONObject(pairs: headerPairs)))) }
      if let responseBody {
        if case .string(let s) = responseBody,
          !MediaTypeName(bodyType ?? contentType(responseHeaders) ?? "").isJSON
        {
          if response["body"]?["encoded"]?.stringValue == "base64"
            || response["body"]?["encoded"] == .bool(true)
          {
            responseFields.append(("base64Body", .string(s)))
          } else {
            responseFields.append(("body", .string(s)))
          }
        } else {
          responseFields.append(("jsonBody", responseBody))
        }
      }
      var meta: [(String, JSONValue)] = [
        ("consumer", .string(consumer)), ("provider", .string(provider)),
        ("description", .string(description)),
        ("file", .string(file)), ("interaction", .number(JSONNumber(k))),
      ]
      if !states.isEmpty { meta.append(("providerStates", .array(states))) }
      if !responseRules.bodyRules().isEmpty {
        meta.append(
          (
            "responseMatchingRules",
            .object(JSONObject(pairs: responseRules.bodyRules().map { ($0.0, .array($0.1)) }))
          ))
      }
      // The interaction's own request, for `export pact` and `verify`.
      var exampleURL = path
      if !query.isEmpty {
        exampleURL +=
          "?"
          + query.flatMap { name, values in
            values.map { PercentEncoding.pathSegment(name) + "=" + PercentEncoding.pathSegment($0) }
          }.joined(separator: "&")
      }
      var example: [(String, JSONValue)] = [("method", .string(method)), ("url", .string(exampleURL))]
      if !headers.isEmpty {
        example.append(("headers", .object(JSONObject(pairs: headers.map { ($0.0, .string($0.1)) }))))
      }
      if let requestBody {
        example.append(("body", .string(requestBody.stringValue ?? requestBody.serialized())))
      }
      let stubBase: [(String, JSONValue)] = [
        ("request", .object(JSONObject(pairs: pattern))),
        ("response", .object(JSONObject(pairs: responseFields))),
        (
          "metadata",
          .object(
            JSONObject(pairs: [
              ("pact", .object(JSONObject(pairs: meta))),
              ("x-example-request", .object(JSONObject(pairs: example))),
            ]))
        ),
      ]
      // Earlier interactions win ties: WireMock prefers the stub added last, so lower the later ones.
      out.append(
        .object(
          JSONObject(
            pairs: [("name", .string(description)), ("priority", .number(JSONNumber(5)))] + stubBase)))
      for state in states {
        guard let name = state["name"]?.stringValue else { continue }
        out.append(
          .object(
            JSONObject(
              pairs: [
                ("name", .string("\(description) (given \(name))")), ("priority", .number(JSONNumber(1))),
                ("scenarioName", .string("pact:\(provider)")), ("requiredScenarioState", .string(name)),
              ] + stubBase)))
      }
    }
    // Among equal requests the first interaction answers by default: later copies get a lower priority.
    var seen: Set<JSONValue> = []
    for k in out.indices where out[k]["scenarioName"] == nil {
      guard let request = out[k]["request"] else { continue }
      if !seen.insert(request).inserted, case .object(var o) = out[k] {
        o.members = o.members.map {
          $0.key == "priority" ? .init(key: "priority", value: .number(JSONNumber(6))) : $0
        }
        out[k] = .object(o)
      }
    }
    return (out, skipped)
  }

  /// `2`, `3` or `4` from `metadata.pactSpecification.version` (or `pact-specification`); 2 when absent.
  package static func specificationVersion(_ pact: JSONValue) -> Int {
    let meta = pact["metadata"]
    let text =
      meta?["pactSpecification"]?["version"]?.stringValue ?? meta?["pact-specification"]?["version"]?
      .stringValue
      ?? meta?["pactSpecificationVersion"]?.stringValue ?? "2"
    return Int(text.prefix(while: \.isNumber)) ?? 2
  }

  /// Query parameters of v2 (`a=1&b=2`) and v3/v4 (`{"a": ["1"]}`) pacts, in order.
  static func queryValues(_ value: JSONValue?) -> [(String, [String])] {
    switch value {
    case .string(let s):
      var out: [(String, [String])] = []
      for pair in s.split(separator: "&") {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
        let v =
          parts.count > 1
          ? (String(parts[1]).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? "") : ""
        if let k = out.firstIndex(where: { $0.0 == name }) {
          out[k].1.append(v)
        } else {
          out.append((name, [v]))
        }
      }
      return out
    case .object(let o):
      return o.members.map { m in
        (
          m.key,
          m.value.arrayValue?.compactMap(\.stringValue) ?? [m.value.stringValue ?? m.value.serialized()]
        )
      }
    default: return []
    }
  }

  /// Header values (v4 lists joined with `, `).
  static func headerValues(_ value: JSONValue?) -> [(String, String)] {
    guard let o = value?.objectValue else { return [] }
    return o.members.map { m in
      (
        m.key,
        m.value.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? m.value.stringValue
          ?? m.value.serialized()
      )
    }
  }

  static func contentType(_ headers: [(String, String)]) -> String? {
    headers.first { $0.0.lowercased() == "content-type" }?.1
  }

  /// The body value and, for v4 bodies, their declared content type.
  static func body(_ value: JSONValue?) -> (JSONValue?, String?) {
    guard let value else { return (nil, nil) }
    if case .object(let o) = value, o["content"] != nil, o["contentType"] != nil || o["encoded"] != nil {
      let type = o["contentType"]?.stringValue
      if let content = o["content"], case .string(let text) = content, MediaTypeName(type ?? "").isJSON,
        o["encoded"] == .bool(false) || o["encoded"] == nil, let parsed = try? JSONValue.parse(text)
      {
        return (parsed, type)
      }
      return (o["content"], type)
    }
    return (value, nil)
  }

  /// The closest WireMock matcher for a value and its rules.
  static func matcher(_ example: String, _ rules: [JSONValue]) -> JSONValue {
    guard let rule = rules.first else { return .object(JSONObject(pairs: [("equalTo", .string(example))])) }
    if let regex = matchesPattern(rule) { return .object(JSONObject(pairs: [("matches", .string(regex))])) }
    switch rule["match"]?.stringValue {
    case "include":
      return .object(JSONObject(pairs: [("contains", .string(rule["value"]?.stringValue ?? example))]))
    case "type", "values": return .object(JSONObject(pairs: [("matches", .string("(?s).*"))]))
    default: return .object(JSONObject(pairs: [("equalTo", .string(example))]))
    }
  }

  /// The regular expression a rule amounts to for a text value, or nil.
  static func matchesPattern(_ rule: JSONValue) -> String? {
    switch rule["match"]?.stringValue {
    case "regex": return rule["regex"]?.stringValue
    case "integer": return "-?[0-9]+"
    case "decimal": return "-?[0-9]+\\.[0-9]+"
    case "number": return "-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?"
    case "boolean": return "true|false"
    case "date", "time", "timestamp", "datetime":
      let format = (rule["format"] ?? rule[rule["match"]?.stringValue ?? ""])?.stringValue
      return format.map(dateRegex) ?? ".+"
    default: return nil
    }
  }

  /// A regex of the shape of a Java date format (`yyyy-MM-dd'T'HH:mm:ss` → `[0-9]{4}-[0-9]{2}-…`).
  static func dateRegex(_ format: String) -> String {
    var out = ""
    var chars = Array(format)[...]
    while let c = chars.popFirst() {
      if c == "'" {
        while let q = chars.popFirst(), q != "'" { out += NSRegularExpression.escapedPattern(for: String(q)) }
        continue
      }
      if c.isLetter {
        var n = 1
        while chars.first == c {
          n += 1
          chars.removeFirst()
        }
        switch c {
        case "y", "u": out += n == 2 ? "[0-9]{2}" : "[0-9]{4}"
        case "S": out += "[0-9]{\(n)}"
        case "X", "Z", "x": out += "(Z|[-+][0-9]{2}:?[0-9]{2})"
        case "a": out += "(AM|PM|am|pm)"
        case "M" where n >= 3, "E": out += "[A-Za-z]+"
        default: out += n == 1 ? "[0-9]{1,2}" : "[0-9]{\(n)}"
        }
      } else {
        out += NSRegularExpression.escapedPattern(for: String(c))
      }
    }
    return out
  }

  /// One `matchesJsonPath` per rule and per leaf not under a rule.
  static func jsonPathPatterns(_ body: JSONValue, _ rules: [(String, [JSONValue])]) -> [JSONValue] {
    var out: [JSONValue] = []
    for (path, list) in rules {
      let rule = list.first ?? .null
      let expression = path
      if let min = rule["min"]?.numberValue?.intValue {
        out.append(
          .object(JSONObject(pairs: [("matchesJsonPath", .string("\(expression)[\(max(min - 1, 0))]"))])))
      } else if let regex = matchesPattern(rule) {
        out.append(
          .object(
            JSONObject(pairs: [
              (
                "matchesJsonPath",
                .object(
                  JSONObject(pairs: [("expression", .string(expression)), ("matches", .string(regex))]))
              )
            ])))
      } else if rule["match"]?.stringValue == "include", let v = rule["value"]?.stringValue {
        out.append(
          .object(
            JSONObject(pairs: [
              (
                "matchesJsonPath",
                .object(JSONObject(pairs: [("expression", .string(expression)), ("contains", .string(v))]))
              )
            ])))
      } else {
        out.append(.object(JSONObject(pairs: [("matchesJsonPath", .string(expression))])))
      }
    }
    for (path, value) in leaves(body, "$") where !rules.contains(where: { covers($0.0, path) }) {
      let sub: JSONValue =
        value == .null
        ? .object(JSONObject(pairs: [("absent", .bool(true))]))
        : .object(JSONObject(pairs: [("equalTo", .string(value.stringValue ?? value.serialized()))]))
      out.append(
        .object(
          JSONObject(pairs: [
            (
              "matchesJsonPath",
              .object(
                JSONObject(
                  pairs: [("expression", .string(path))]
                    + (sub.objectValue?.members.map { ($0.key, $0.value) } ?? [])))
            )
          ])))
    }
    return out
  }

  static func leaves(_ v: JSONValue, _ path: String) -> [(String, JSONValue)] {
    switch v {
    case .object(let o):
      return o.members.flatMap { leaves($0.value, InstancePath.child(path, $0.key)) }
    case .array(let a):
      return a.enumerated().flatMap { leaves($0.element, path + "[\($0.offset)]") }
    default: return [(path, v)]
    }
  }

  /// True when a rule path (`$.result[*].id`, `$.a`) covers a leaf path (`$['result'][0]['id']`).
  static func covers(_ rule: String, _ leaf: String) -> Bool {
    let r = normalize(rule)
    let l = normalize(leaf)
    guard r.count <= l.count else { return false }
    for (a, b) in zip(r, l) where a != "*" && a != b { return false }
    return true
  }

  /// Path tokens: `$.a[0]['b c'].*` → `["a", "0", "b c", "*"]`.
  static func normalize(_ path: String) -> [String] {
    var tokens: [String] = []
    var current = ""
    var i = path.startIndex
    while i < path.endIndex {
      let c = path[i]
      if c == "$" {
      } else if c == "." {
        if !current.isEmpty { tokens.append(current) }
        current = ""
      } else if c == "[" {
        if !current.isEmpty { tokens.append(current) }
        current = ""
        guard let close = path[i...].firstIndex(of: "]") else { break }
        var inner = String(path[path.index(after: i)..<close])
        if inner.hasPrefix("'") && inner.hasSuffix("'") && inner.count >= 2 {
          inner = String(inner.dropFirst().dropLast())
        }
        tokens.append(inner)
        i = close
      } else {
        current.append(c)
      }
      i = path.index(after: i)
    }
    if !current.isEmpty { tokens.append(current) }
    return tokens
  }
}

/// Matching rules of a request or response in either layout: v2 (`{"$.body.a": {...}}`) or v3/v4
/// (`{"body": {"$.a": {"matchers": [...]}}}`).
struct Rules {
  /// category → path (or name) → matchers.
  var byCategory: [String: [(String, [JSONValue])]] = [:]

  init(_ value: JSONValue?, version: Int) {
    guard let o = value?.objectValue else { return }
    if o.members.contains(where: { $0.key.hasPrefix("$.") }) {
      for m in o {
        // $.body.a.b, $.headers.Name, $.query.name, $.path
        let key = m.key.dropFirst(2)
        let category = key.prefix(while: { $0 != "." && $0 != "[" })
        var rest = String(key.dropFirst(category.count))
        let mappedCategory = category == "headers" ? "header" : String(category)
        if mappedCategory == "body" {
          rest = "$" + rest
        } else if rest.hasPrefix(".") {
          rest.removeFirst()
        }
        byCategory[mappedCategory, default: []].append((rest, [m.value]))
      }
      return
    }
    for category in o {
      let name = category.key == "headers" ? "header" : category.key
      if name == "path", let matchers = category.value["matchers"]?.arrayValue {
        byCategory["path", default: []].append(("", matchers))
        continue
      }
      for entry in category.value.objectValue ?? JSONObject() {
        let matchers = entry.value["matchers"]?.arrayValue ?? [entry.value]
        byCategory[name, default: []].append((entry.key, matchers))
      }
    }
  }

  func rules(for category: String, _ name: String) -> [JSONValue] {
    (byCategory[category] ?? []).filter {
      $0.0.lowercased() == name.lowercased() || ($0.0 == "$" + "." + name)
    }
    .flatMap(\.1)
  }

  func bodyRules() -> [(String, [JSONValue])] { byCategory["body"] ?? [] }
}
