import Foundation
import JSONSchema
import MockJSON
import PactMatching

/// Why a Pact file could not be imported.
package struct PactImportError: Error, Sendable, Hashable, CustomStringConvertible {
  /// JSON path in the pact file.
  package var path: String
  /// `expected …, found …`.
  package var message: String
  /// `$.interactions[2].request.method: expected a string, found null`.
  package var description: String { "\(path): \(message)" }
}

/// Turns Pact files (specification v2, v3 and v4 HTTP interactions) into WireMock stub mappings.
///
/// - Request: the interaction's request and its matching rules, kept whole in a `customMatcher` named
///   `pact` (``PactMatching``) that compares requests exactly as Pact's mock server does (every rule of
///   specifications V1–V4; docs/contracts.md has the table); `method` and, without a path rule, `urlPath`
///   beside it so the stub table finds the stub fast. Its method is the contract's: a `GET` interaction does
///   not answer `HEAD`.
/// - A rule, body encoding or response generator this server cannot honour fails the import with the file,
///   the interaction and the rule's JSON path; `lenient` drops it and returns a warning for it instead.
/// - Response: status, headers, body (`jsonBody`, `body` or `base64Body`).
/// - Provider states: in `metadata.pact.providerStates`; each interaction with a state is also served by a
///   stub in the scenario `pact:<provider>` that matches only in that state (select it with
///   `PUT /__admin/scenarios/pact:<provider>/state {"state": "…"}`), while the stateless copy answers by
///   default (the first interaction of a given request wins).
package enum PactImporter {
  /// Stub mappings for every HTTP interaction of `pact`; non-HTTP (message) interactions are skipped and
  /// counted in `skipped`.
  /// - Returns: the stub mappings, the count of skipped message interactions, and the warnings of a lenient
  ///   import (one per dropped rule or generator).
  /// - Throws: ``PactImportError`` when the file is not a pact, an interaction lacks method or path, or (not
  ///   `lenient`) a rule or generator cannot be honoured.
  package static func mappings(from pact: JSONValue, file: String = "pact", lenient: Bool = false)
    throws(PactImportError) -> (
      mappings: [JSONValue], skipped: Int, warnings: [String]
    )
  {
    var warnings: [String] = []
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
      let label = "interaction \(JSONValue.quoted(description))"
      var requestJSON = JSONValue.object(request)
      if lenient {
        let (cleaned, dropped) = lenientRules(request["matchingRules"], base + ".request.matchingRules")
        warnings += dropped.map { "\(file): \(label): \($0) (dropped: --lenient)" }
        if var o = requestJSON.objectValue {
          o.members = o.members.map {
            $0.key == "matchingRules" ? .init(key: $0.key, value: cleaned ?? .null) : $0
          }
          requestJSON = .object(o)
        }
      }
      let expectation: PactRequestExpectation
      do {
        expectation = try PactRequestExpectation(
          request: requestJSON.objectValue ?? request, version: version, jsonPath: base + ".request")
      } catch {
        throw PactImportError(path: error.path, message: "\(label): \(error.message)")
      }
      do {
        _ = try PactMatchingRules(json: response["matchingRules"], jsonPath: base + ".response.matchingRules")
      } catch {
        if !lenient { throw PactImportError(path: error.path, message: "\(label): \(error.message)") }
        warnings.append("\(file): \(label): \(error) (response rule ignored by verify: --lenient)")
      }
      if let generators = response["generators"]?.objectValue, !generators.members.isEmpty {
        let message =
          "expected no response generators (MockServer serves the interaction's example values), found "
          + generators.keys.joined(separator: ", ")
        if !lenient {
          throw PactImportError(path: base + ".response.generators", message: "\(label): \(message)")
        }
        warnings.append(
          "\(file): \(label): \(base).response.generators: \(message) (example values served: --lenient)")
      }

      var pattern: [(String, JSONValue)] = [("method", .string(method))]
      if requestRules.rules(for: "path", "").isEmpty, !path.contains("%") {
        pattern.append(("urlPath", .string(path)))
      }
      pattern.append(
        (
          "customMatcher",
          .object(
            JSONObject(pairs: [
              ("name", .string("pact")),
              (
                "parameters",
                .object(
                  JSONObject(pairs: [
                    ("specification", .number(JSONNumber(min(max(version, 1), 4)))), ("request", requestJSON),
                  ]))
              ),
            ]))
        ))
      let query = expectation.query ?? []
      let headers = headerValues(request["headers"])
      let requestBody = expectation.body

      var responseFields: [(String, JSONValue)] = [
        ("status", .number(response["status"]?.numberValue ?? JSONNumber(200)))
      ]
      let responseHeaders = headerValues(response["headers"])
      let parsedHeaders = responseHeaders.map { ($0.0, [$0.1]) }
      let responseBody: PactBody
      do {
        responseBody = try PactBody(
          part: response, headers: parsedHeaders, version: version, jsonPath: base + ".response")
      } catch {
        throw PactImportError(path: error.path, message: "\(label): \(error.message)")
      }
      var headerPairs = responseHeaders.map { ($0.0, JSONValue.string($0.1)) }
      if case .present(_, let type?) = responseBody,
        !responseHeaders.contains(where: { $0.0.lowercased() == "content-type" })
      {
        headerPairs.append(("Content-Type", .string(type.description)))
      }
      if !headerPairs.isEmpty { responseFields.append(("headers", .object(JSONObject(pairs: headerPairs)))) }
      if case .present(let bytes, let type) = responseBody {
        if type?.isJSON == true, let json = try? JSONValue.parse(bytes: bytes) {
          responseFields.append(("jsonBody", json))
        } else if type?.isText == true || type == nil, let text = String(validating: bytes, as: UTF8.self) {
          responseFields.append(("body", .string(text)))
        } else {
          responseFields.append(("base64Body", .string(Data(bytes).base64EncodedString())))
        }
      }
      var meta: [(String, JSONValue)] = [
        ("consumer", .string(consumer)), ("provider", .string(provider)),
        ("description", .string(description)),
        ("file", .string(file)), ("interaction", .number(JSONNumber(k))),
      ]
      if !states.isEmpty { meta.append(("providerStates", .array(states))) }
      // V4's own fields, kept so that an export writes them back.
      for key in ["pending", "comments", "key"] {
        if let v = interaction[key] { meta.append((key, v)) }
      }
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
      _ = responseRules
      if case .present(let bytes, _) = requestBody {
        if let text = String(validating: bytes, as: UTF8.self) {
          example.append(("body", .string(text)))
        } else {
          example.append(("base64Body", .string(Data(bytes).base64EncodedString())))
        }
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
    return (out, skipped, warnings)
  }

  /// The rules with every rule this matcher cannot honour removed, and a line for each removed one.
  static func lenientRules(_ rules: JSONValue?, _ jsonPath: String) -> (JSONValue?, [String]) {
    guard let rules, case .object(let o) = rules else { return (rules, []) }
    var dropped: [String] = []
    func keep(_ rule: JSONValue, _ p: String) -> Bool {
      do {
        _ = try PactMatchingRule.parse(rule, jsonPath: p)
        return true
      } catch {
        dropped.append(error.description)
        return false
      }
    }
    func cleanList(_ v: JSONValue, _ p: String) -> JSONValue {
      guard case .object(var list) = v, let matchers = list["matchers"]?.arrayValue else {
        return keep(v, p) ? v : .object(JSONObject(pairs: [("matchers", .array([]))]))
      }
      let kept = matchers.enumerated().filter { keep($0.element, p + ".matchers[\($0.offset)]") }.map(
        \.element)
      list.members = list.members.map {
        $0.key == "matchers" ? .init(key: "matchers", value: .array(kept)) : $0
      }
      return .object(list)
    }
    var out = JSONObject()
    for m in o {
      if m.key.hasPrefix("$") {
        if keep(m.value, jsonPath + "['\(m.key)']") { out.members.append(m) }
      } else if m.key == "path" {
        out.members.append(.init(key: m.key, value: cleanList(m.value, jsonPath + ".path")))
      } else if case .object(let inner) = m.value, inner["matchers"] == nil {
        var cleaned = JSONObject()
        for e in inner {
          cleaned.members.append(
            .init(key: e.key, value: cleanList(e.value, jsonPath + ".\(m.key)['\(e.key)']")))
        }
        out.members.append(.init(key: m.key, value: .object(cleaned)))
      } else {
        out.members.append(.init(key: m.key, value: cleanList(m.value, jsonPath + ".\(m.key)")))
      }
    }
    return (.object(out), dropped)
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
