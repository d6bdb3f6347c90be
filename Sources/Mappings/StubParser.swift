import HTTPCore
import MockJSON

/// What the stub parser needs from its surroundings.
public struct StubParsingContext: Sendable {
  /// A `bodyFileName` that could not be read.
  public enum BodyFileError: Error, Sendable {
    /// The path leaves `__files/` (absolute, `..`, or a symbolic link pointing outside).
    case escapes
    /// No such file (or not a regular file).
    case notFound
  }

  /// Envelope templates.
  public var envelopes: EnvelopeSet
  /// Reads a body file by its path relative to `__files/`.
  public var readBodyFile: @Sendable (String) -> Result<[UInt8], BodyFileError>
  /// Generates an id for a stub without `id`/`uuid`.
  public var makeID: @Sendable () -> String

  /// Creates a context.
  public init(
    envelopes: EnvelopeSet = EnvelopeSet(),
    readBodyFile: @escaping @Sendable (String) -> Result<[UInt8], BodyFileError> = { _ in .failure(.notFound)
    },
    makeID: @escaping @Sendable () -> String
  ) {
    self.envelopes = envelopes
    self.readBodyFile = readBodyFile
    self.makeID = makeID
  }
}

/// Turns WireMock stub mapping JSON into typed ``StubMapping``s, reporting every problem with its JSON path.
public enum StubParser {
  package static let stubFields: Set<String> = [
    "id", "uuid", "name", "priority", "request", "response", "scenarioName", "requiredScenarioState",
    "newScenarioState", "metadata", "persistent", "insertionIndex", "x-responseSequence",
    "postServeActions", "serveEventListeners",
  ]
  package static let requestFields: Set<String> = [
    "method", "url", "urlPath", "urlPattern", "urlPathPattern", "urlPathTemplate", "pathParameters",
    "queryParameters", "headers", "cookies", "basicAuthCredentials", "bodyPatterns",
  ]
  package static let unsupportedRequestFields: Set<String> = [
    "formParameters", "multipartPatterns", "host", "port", "scheme", "customMatcher", "clientIp",
  ]
  package static let responseFields: Set<String> = [
    "status", "statusMessage", "headers", "body", "jsonBody", "base64Body", "bodyFileName",
    "fixedDelayMilliseconds", "delayDistribution", "chunkedDribbleDelay", "fault", "x-envelope",
    "transformers", "transformerParameters", "x-compression", "x-conditional", "x-respondBeforeBody",
  ]
  package static let matcherOperators = [
    "equalTo", "contains", "doesNotContain", "matches", "doesNotMatch", "absent", "equalToJson",
    "matchesJsonPath", "binaryEqualTo", "and", "or", "not",
  ]
  package static let unsupportedMatchers: Set<String> = [
    "equalToXml", "matchesXPath", "before", "after", "equalToDateTime", "hasExactly", "includes",
  ]

  /// Parses one stub mapping.
  /// - Parameters:
  ///   - json: the stub object.
  ///   - file: file for problems and `StubMapping.file` (relative to the fixtures directory).
  ///   - location: JSON path of the stub in its file (`$` or `$.mappings[k]`).
  ///   - context: envelopes, body-file reader, id generator.
  /// - Returns: the stub (nil when it has errors) and every problem found.
  public static func parse(
    _ json: JSONValue, file: String, location: String = "$", context: StubParsingContext
  ) -> (StubMapping?, [FixtureProblem]) {
    var d = Diagnostics(file: file)
    let stub = parse(json, location: location, context: context, diagnostics: &d)
    return (d.errorCount == 0 ? stub : nil, d.problems)
  }

  package static func parse(
    _ json: JSONValue, location: String, context: StubParsingContext, diagnostics d: inout Diagnostics
  ) -> StubMapping? {
    guard case .object(let o) = json else {
      d.error(location, expected: "a stub mapping object {\"request\": …, \"response\": …}", found: json)
      return nil
    }
    for m in o where !stubFields.contains(m.key) {
      d.error(
        JSONPathText.child(location, m.key),
        expected: "a stub mapping field (request, response, priority, id, name, scenarioName, …)",
        found: "unknown field \(JSONValue.quoted(m.key))")
    }
    for key in ["postServeActions", "serveEventListeners"] where o[key] != nil {
      d.warning(JSONPathText.child(location, key), "\(key) is not supported and is ignored")
    }
    let id = string(o, "id", location, &d)
    let uuid = string(o, "uuid", location, &d)
    if let id, let uuid, id != uuid {
      d.error(
        JSONPathText.child(location, "uuid"), expected: "the same value as id", found: JSONValue.quoted(uuid))
    }
    let name = string(o, "name", location, &d)
    var priority = 5
    if let p = o["priority"] {
      if let n = p.numberValue?.intValue, n >= 1 {
        priority = n
      } else {
        d.error(
          JSONPathText.child(location, "priority"), expected: "an integer of 1 or more (1 is highest)",
          found: p)
      }
    }
    let scenarioName = string(o, "scenarioName", location, &d)
    let required = string(o, "requiredScenarioState", location, &d)
    let newState = string(o, "newScenarioState", location, &d)
    if scenarioName == nil {
      for key in ["requiredScenarioState", "newScenarioState"] where o[key] != nil {
        d.error(
          JSONPathText.child(location, key), expected: "scenarioName alongside \(key)",
          found: "no scenarioName")
      }
    }
    if let p = o["persistent"], p.boolValue == nil {
      d.error(JSONPathText.child(location, "persistent"), expected: "true or false", found: p)
    }
    if let m = o["metadata"], m.objectValue == nil {
      d.error(JSONPathText.child(location, "metadata"), expected: "an object", found: m)
    }

    var request = RequestPattern()
    if let r = o["request"] {
      request = parseRequest(r, JSONPathText.child(location, "request"), &d)
    } else {
      d.error(JSONPathText.child(location, "request"), expected: "a request pattern object", found: "nothing")
    }

    var response = ResponseDefinition()
    var sequence: ResponseSequence?
    let sequencePath = JSONPathText.child(location, "x-responseSequence")
    switch (o["response"], o["x-responseSequence"]) {
    case (let r?, nil):
      response = parseResponse(r, JSONPathText.child(location, "response"), context, &d)
    case (nil, let s?):
      sequence = parseSequence(s, sequencePath, context, &d)
      if let first = sequence?.responses.first { response = first }
    case (.some, .some):
      d.error(sequencePath, expected: "either response or x-responseSequence", found: "both")
    case (nil, nil):
      d.error(JSONPathText.child(location, "response"), expected: "a response object", found: "nothing")
    }

    return StubMapping(
      id: id ?? uuid ?? context.makeID(), name: name, priority: priority, request: request,
      response: response, responseSequence: sequence, scenarioName: scenarioName,
      requiredScenarioState: required, newScenarioState: newState, metadata: o["metadata"], source: json,
      file: d.file, location: location)
  }

  // MARK: - Typed field helpers

  package static func string(_ o: JSONObject, _ key: String, _ base: String, _ d: inout Diagnostics)
    -> String?
  {
    guard let v = o[key] else { return nil }
    guard let s = v.stringValue else {
      d.error(JSONPathText.child(base, key), expected: "a string", found: v)
      return nil
    }
    return s
  }

  package static func object(_ v: JSONValue, _ path: String, _ expected: String, _ d: inout Diagnostics)
    -> JSONObject?
  {
    guard let o = v.objectValue else {
      d.error(path, expected: expected, found: v)
      return nil
    }
    return o
  }

  // MARK: - Request

  package static func parseRequest(_ json: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> RequestPattern
  {
    var r = RequestPattern()
    guard let o = object(json, path, "a request pattern object", &d) else { return r }
    for m in o where !requestFields.contains(m.key) {
      let p = JSONPathText.child(path, m.key)
      if unsupportedRequestFields.contains(m.key) {
        d.error(
          p, expected: "a request field this server supports",
          found: "\(m.key), which WireMock supports but MockServer does not yet")
      } else {
        d.error(
          p,
          expected: "a request field (method, url, urlPath, urlPattern, urlPathPattern, urlPathTemplate, "
            + "pathParameters, queryParameters, headers, cookies, basicAuthCredentials, bodyPatterns)",
          found: "unknown field \(JSONValue.quoted(m.key))")
      }
    }
    if let m = string(o, "method", path, &d) {
      if m == "ANY" {
        r.method = nil
      } else if m.isEmpty || !m.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x3A }) {
        d.error(
          JSONPathText.child(path, "method"), expected: "a method token such as GET or ANY",
          found: JSONValue.quoted(m))
      } else {
        if m != m.uppercased() {
          d.warning(
            JSONPathText.child(path, "method"),
            "methods are case-sensitive: \(JSONValue.quoted(m)) matches only requests sent with exactly that token"
          )
        }
        r.method = HTTPMethod(rawValue: m)
      }
    }
    let urlKeys = ["url", "urlPath", "urlPattern", "urlPathPattern", "urlPathTemplate"].filter {
      o[$0] != nil
    }
    if urlKeys.count > 1 {
      d.error(
        JSONPathText.child(path, urlKeys[1]),
        expected: "at most one of url, urlPath, urlPattern, urlPathPattern, "
          + "urlPathTemplate", found: urlKeys.joined(separator: " and "))
    }
    if let key = urlKeys.first, let s = string(o, key, path, &d) {
      r.url = parseURL(key, s, JSONPathText.child(path, key), &d)
    }
    if let pp = o["pathParameters"] {
      let ppPath = JSONPathText.child(path, "pathParameters")
      guard case .urlPathTemplate(let t) = r.url else {
        d.error(ppPath, expected: "pathParameters only with urlPathTemplate", found: "no urlPathTemplate")
        return r
      }
      if let po = object(pp, ppPath, "an object of parameter name → matcher", &d) {
        for m in po {
          let p = JSONPathText.child(ppPath, m.key)
          if !t.variableNames.contains(m.key) {
            d.error(
              p, expected: "a variable of the template (\(t.variableNames.joined(separator: ", ")))",
              found: JSONValue.quoted(m.key))
          }
          if let pattern = parseMatcher(m.value, p, &d) { r.pathParameters.append(.init(m.key, pattern)) }
        }
      }
    }
    for (key, isHeader) in [("queryParameters", false), ("headers", true)] {
      guard let v = o[key] else { continue }
      let p = JSONPathText.child(path, key)
      guard let fields = object(v, p, "an object of name → matcher", &d) else { continue }
      for m in fields {
        guard let pattern = parseMultiMatcher(m.value, JSONPathText.child(p, m.key), &d) else { continue }
        if isHeader {
          r.headers.append(.init(m.key, pattern))
        } else {
          r.queryParameters.append(.init(m.key, pattern))
        }
      }
    }
    if let v = o["cookies"] {
      let p = JSONPathText.child(path, "cookies")
      if let fields = object(v, p, "an object of cookie name → matcher", &d) {
        for m in fields {
          if let pattern = parseMatcher(m.value, JSONPathText.child(p, m.key), &d) {
            r.cookies.append(.init(m.key, pattern))
          }
        }
      }
    }
    if let v = o["basicAuthCredentials"] {
      let p = JSONPathText.child(path, "basicAuthCredentials")
      if let c = object(v, p, "an object {\"username\": …, \"password\": …}", &d) {
        let u = string(c, "username", p, &d)
        let pw = string(c, "password", p, &d)
        if let u, let pw {
          r.basicAuthCredentials = (u, pw)
        } else if u == nil && c["username"] == nil {
          d.error(JSONPathText.child(p, "username"), expected: "a string", found: "nothing")
        } else if pw == nil && c["password"] == nil {
          d.error(JSONPathText.child(p, "password"), expected: "a string", found: "nothing")
        }
      }
    }
    if let v = o["bodyPatterns"] {
      let p = JSONPathText.child(path, "bodyPatterns")
      if let list = v.arrayValue {
        for (k, item) in list.enumerated() {
          if let pattern = parseMatcher(item, JSONPathText.index(p, k), &d) { r.bodyPatterns.append(pattern) }
        }
      } else {
        d.error(p, expected: "an array of matchers such as [{\"equalToJson\": …}]", found: v)
      }
    }
    return r
  }

  package static func parseURL(_ key: String, _ s: String, _ path: String, _ d: inout Diagnostics)
    -> URLMatcher
  {
    switch key {
    case "urlPattern", "urlPathPattern":
      do {
        let r = try CompiledRegex(s)
        return key == "urlPattern" ? .urlPattern(r) : .urlPathPattern(r)
      } catch {
        d.error(
          path, expected: "a valid regular expression", found: "\(JSONValue.quoted(s)) (\(error.message))")
        return .any
      }
    default:
      guard s.hasPrefix("/") else {
        d.error(path, expected: "a path starting with '/'", found: JSONValue.quoted(s))
        return .any
      }
      if s.contains("#") {
        d.error(
          path, expected: "a path without '#' (a fragment is never sent to the server)",
          found: JSONValue.quoted(s))
        return .any
      }
      if key != "url" && s.contains("?") {
        d.error(
          path, expected: "a path without '?': put the query in queryParameters, or use url",
          found: JSONValue.quoted(s))
        return .any
      }
      var rawPath = Substring(s)
      var rawQuery: Substring?
      if let q = s.firstIndex(of: "?") {
        rawPath = s[..<q]
        rawQuery = s[s.index(after: q)...]
      }
      if rawPath.contains("//") {
        d.warning(
          path,
          "the path contains '//'; an empty path segment is significant, so \(JSONValue.quoted(s)) "
            + "does not match the same path with a single '/'")
      }
      do {
        var canonical = try PercentDecoding.canonicalPath(rawPath)
        if let rawQuery { canonical += "?" + (try PercentDecoding.canonicalQuery(rawQuery)) }
        switch key {
        case "url": return .url(canonical)
        case "urlPath": return .urlPath(canonical)
        default:
          do {
            return .urlPathTemplate(try PathTemplate(canonical))
          } catch {
            d.error(path, expected: error.message, found: JSONValue.quoted(s))
            return .any
          }
        }
      } catch {
        d.error(path, expected: "valid percent-encoding (%XX of UTF-8 bytes)", found: error.reason)
        return .any
      }
    }
  }

  // MARK: - Matchers

  package static func parseMultiMatcher(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> MultiValuePattern?
  {
    if let o = v.objectValue, o.members.count == 1, let key = o.members.first?.key,
      key == "hasExactly" || key == "includes"
    {
      let p = JSONPathText.child(path, key)
      guard let list = o[key]?.arrayValue, !list.isEmpty else {
        d.error(p, expected: "a non-empty array of matchers", found: o[key] ?? .null)
        return nil
      }
      var patterns: [StringValuePattern] = []
      for (k, item) in list.enumerated() {
        if let m = parseMatcher(item, JSONPathText.index(p, k), &d) { patterns.append(m) }
      }
      guard patterns.count == list.count else { return nil }
      return key == "hasExactly" ? .hasExactly(patterns) : .includes(patterns)
    }
    return parseMatcher(v, path, &d).map { .single($0) }
  }

  /// Parses one string value matcher object.
  package static func parseMatcher(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> StringValuePattern?
  {
    guard case .object(let o) = v else {
      d.error(path, expected: "a matcher object such as {\"equalTo\": …}", found: v)
      return nil
    }
    let operators = o.keys.filter { matcherOperators.contains($0) }
    let modifiers: Set<String> = ["caseInsensitive", "ignoreArrayOrder", "ignoreExtraElements"]
    for key in o.keys where !matcherOperators.contains(key) && !modifiers.contains(key) {
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
    guard operators.count == 1, let op = operators.first, let value = o[op] else {
      if operators.count > 1 {
        d.error(
          path, expected: "exactly one matcher per object (use and/or to combine)",
          found: operators.joined(separator: " and "))
      } else if o.members.isEmpty {
        d.error(path, expected: "a matcher such as {\"equalTo\": …}", found: "an empty object")
      }
      return nil
    }
    let p = JSONPathText.child(path, op)
    func flag(_ name: String, allowed: Bool) -> Bool {
      guard let f = o[name] else { return false }
      let fp = JSONPathText.child(path, name)
      if !allowed {
        d.error(
          fp, expected: "\(name) only with \(name == "caseInsensitive" ? "equalTo" : "equalToJson")",
          found: "it with \(op)")
        return false
      }
      guard let b = f.boolValue else {
        d.error(fp, expected: "true or false", found: f)
        return false
      }
      return b
    }
    func str() -> String? {
      guard let s = value.stringValue else {
        d.error(p, expected: "a string", found: value)
        return nil
      }
      return s
    }
    func list() -> [StringValuePattern]? {
      guard let items = value.arrayValue, !items.isEmpty else {
        d.error(p, expected: "a non-empty array of matchers", found: value)
        return nil
      }
      var out: [StringValuePattern] = []
      for (k, item) in items.enumerated() {
        if let m = parseMatcher(item, JSONPathText.index(p, k), &d) { out.append(m) }
      }
      return out.count == items.count ? out : nil
    }
    let ci = flag("caseInsensitive", allowed: op == "equalTo")
    let order = flag("ignoreArrayOrder", allowed: op == "equalToJson")
    let extra = flag("ignoreExtraElements", allowed: op == "equalToJson")
    switch op {
    case "equalTo": return str().map { .equalTo($0, caseInsensitive: ci) }
    case "contains": return str().map { .contains($0) }
    case "doesNotContain": return str().map { .doesNotContain($0) }
    case "matches", "doesNotMatch":
      guard let s = str() else { return nil }
      do {
        let r = try CompiledRegex(s)
        return op == "matches" ? .matches(r) : .doesNotMatch(r)
      } catch {
        d.error(p, expected: "a valid regular expression", found: "\(JSONValue.quoted(s)) (\(error.message))")
        return nil
      }
    case "absent":
      guard value.boolValue == true else {
        d.error(p, expected: "true", found: value)
        return nil
      }
      return .absent
    case "equalToJson":
      var expected = value
      if case .string(let s) = value {
        do {
          expected = try JSONValue.parse(s)
        } catch {
          d.error(
            p, expected: "JSON (inline, or as a string holding JSON text)",
            found: "a string that is not JSON (\(error))")
          return nil
        }
      }
      return .equalToJson(expected, ignoreArrayOrder: order, ignoreExtraElements: extra)
    case "matchesJsonPath":
      if case .string(let s) = value {
        do {
          return .matchesJsonPath(try JSONPath(s), nil)
        } catch {
          d.error(p, expected: "a JSONPath expression", found: error.description)
          return nil
        }
      }
      guard case .object(var sub) = value, let e = sub["expression"] else {
        d.error(p, expected: "a JSONPath string or {\"expression\": \"$.x\", \"equalTo\": …}", found: value)
        return nil
      }
      guard let es = e.stringValue else {
        d.error(JSONPathText.child(p, "expression"), expected: "a JSONPath string", found: e)
        return nil
      }
      let path: JSONPath
      do {
        path = try JSONPath(es)
      } catch {
        d.error(
          JSONPathText.child(p, "expression"), expected: "a JSONPath expression", found: error.description)
        return nil
      }
      sub.members.removeAll { $0.key == "expression" }
      if sub.members.isEmpty { return .matchesJsonPath(path, nil) }
      guard let inner = parseMatcher(.object(sub), p, &d) else { return nil }
      return .matchesJsonPath(path, inner)
    case "binaryEqualTo":
      guard let s = str() else { return nil }
      guard let bytes = Base64.decode(s) else {
        d.error(p, expected: "base64 text", found: JSONValue.quoted(s))
        return nil
      }
      return .binaryEqualTo(bytes)
    case "and": return list().map { .and($0) }
    case "or": return list().map { .or($0) }
    case "not": return parseMatcher(value, p, &d).map { .not($0) }
    default: return nil
    }
  }

  // MARK: - Response

  package static func parseSequence(
    _ json: JSONValue, _ path: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> ResponseSequence? {
    guard
      let o = object(
        json, path, "an object {\"responses\": [ … ], \"onEnd\": \"stickOnLast\" | \"loop\"}", &d)
    else { return nil }
    for key in o.keys where key != "responses" && key != "onEnd" {
      d.error(
        JSONPathText.child(path, key), expected: "responses or onEnd",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    var onEnd = ResponseSequence.EndBehavior.stickOnLast
    if let e = o["onEnd"] {
      if let s = e.stringValue, let b = ResponseSequence.EndBehavior(rawValue: s) {
        onEnd = b
      } else {
        d.error(
          JSONPathText.child(path, "onEnd"), expected: "\"stickOnLast\" or \"loop\"",
          found: e.stringValue.map { JSONValue.quoted($0) } ?? e.kindDescription)
      }
    }
    let rp = JSONPathText.child(path, "responses")
    guard let list = o["responses"]?.arrayValue, !list.isEmpty else {
      d.error(
        rp, expected: "a non-empty array of response objects",
        found: o["responses"]?.kindDescription ?? "nothing")
      return nil
    }
    let responses = list.enumerated().map { parseResponse($1, JSONPathText.index(rp, $0), context, &d) }
    return ResponseSequence(responses: responses, onEnd: onEnd)
  }

  package static func nonNegativeInt(_ o: JSONObject, _ key: String, _ path: String, _ d: inout Diagnostics)
    -> Int?
  {
    guard let v = o[key] else { return nil }
    guard let n = v.numberValue?.intValue, n >= 0 else {
      d.error(JSONPathText.child(path, key), expected: "a whole number of 0 or more", found: v)
      return nil
    }
    return n
  }

  package static func nonNegativeNumber(
    _ o: JSONObject, _ key: String, _ path: String, _ d: inout Diagnostics
  )
    -> Double?
  {
    guard let v = o[key] else {
      d.error(JSONPathText.child(path, key), expected: "a number of milliseconds", found: "nothing")
      return nil
    }
    guard let n = v.numberValue, n.doubleValue >= 0 else {
      d.error(JSONPathText.child(path, key), expected: "a number of 0 or more", found: v)
      return nil
    }
    return n.doubleValue
  }

  package static func parseResponse(
    _ json: JSONValue, _ path: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> ResponseDefinition {
    var r = ResponseDefinition()
    guard let o = object(json, path, "a response object such as {\"status\": 200}", &d) else { return r }
    for key in o.keys where !responseFields.contains(key) {
      let p = JSONPathText.child(path, key)
      if key == "proxyBaseUrl" || key.hasPrefix("proxy") || key.hasSuffix("ProxyRequestHeaders") {
        d.error(
          p, expected: "a response field this server supports", found: "\(key) (proxying is not supported)")
      } else {
        d.error(
          p,
          expected:
            "a response field (status, statusMessage, headers, body, jsonBody, base64Body, bodyFileName, "
            + "fixedDelayMilliseconds, delayDistribution, chunkedDribbleDelay, fault, x-envelope, "
            + "x-compression, x-conditional, x-respondBeforeBody)",
          found: "unknown field \(JSONValue.quoted(key))")
      }
    }
    for key in ["transformers", "transformerParameters"] where o[key] != nil {
      d.warning(JSONPathText.child(path, key), "response templating is not supported; \(key) is ignored")
    }
    if let s = o["status"] {
      // 1xx responses are interim (RFC 9110 §15.2): a stub must answer with a final status.
      if let n = s.numberValue?.intValue, (200...599).contains(n) {
        r.status = n
      } else {
        d.error(
          JSONPathText.child(path, "status"), expected: "an integer final status code 200...599", found: s)
      }
    }
    r.statusMessage = string(o, "statusMessage", path, &d)
    if let message = r.statusMessage,
      message.utf8.contains(where: { ($0 < 32 && $0 != 9) || $0 == 127 })
    {
      d.error(
        JSONPathText.child(path, "statusMessage"), expected: "a reason phrase without control characters",
        found: JSONValue.quoted(message))
    }
    if let h = o["headers"] {
      let hp = JSONPathText.child(path, "headers")
      if let fields = object(h, hp, "an object of header name → string or array of strings", &d) {
        for m in fields {
          let p = JSONPathText.child(hp, m.key)
          let values: [String]
          switch m.value {
          case .string(let s): values = [s]
          case .array(let a) where a.allSatisfy({ $0.stringValue != nil }):
            values = a.compactMap(\.stringValue)
          default:
            d.error(p, expected: "a string or an array of strings", found: m.value)
            continue
          }
          if !Self.isToken(m.key) {
            d.error(
              p, expected: "a header name made of token characters (RFC 9110 §5.1)",
              found: JSONValue.quoted(m.key))
            continue
          }
          if let bad = values.first(where: { v in v.utf8.contains { ($0 < 32 && $0 != 9) || $0 == 127 } }) {
            d.error(
              p, expected: "a header value without CR, LF, NUL or other control characters (RFC 9110 §5.5)",
              found: JSONValue.quoted(bad))
            continue
          }
          if m.key.equalsIgnoringASCIICase("Content-Length")
            || m.key.equalsIgnoringASCIICase("Transfer-Encoding")
          {
            d.warning(
              p,
              "\(m.key) is a framing header: the server drops it and sends the true framing for the body "
                + "it actually sends")
            continue
          }
          for v in values { r.headers.add(name: m.key, value: v) }
        }
      }
    }
    let bodyKeys = ["body", "jsonBody", "base64Body", "bodyFileName", "x-envelope"].filter { o[$0] != nil }
    if bodyKeys.count > 1 {
      d.error(
        JSONPathText.child(path, bodyKeys[1]),
        expected: "one body field (body, jsonBody, base64Body, bodyFileName "
          + "or x-envelope)", found: bodyKeys.joined(separator: " and "))
    } else if let key = bodyKeys.first, let v = o[key] {
      let p = JSONPathText.child(path, key)
      switch key {
      case "body":
        if let s = v.stringValue {
          r.body = Array(s.utf8)
          r.bodySource = .text
        } else {
          d.error(p, expected: "a string (use jsonBody for JSON values)", found: v)
        }
      case "jsonBody":
        r.body = v.serializedBytes()
        r.bodySource = .json
      case "base64Body":
        if let s = v.stringValue, let bytes = Base64.decode(s) {
          r.body = bytes
          r.bodySource = .base64
        } else {
          d.error(
            p, expected: "base64 text",
            found: v.stringValue.map { _ in "text that is not base64" } ?? v.kindDescription)
        }
      case "bodyFileName":
        guard let s = v.stringValue else {
          d.error(p, expected: "a path relative to __files/", found: v)
          break
        }
        if let bad = escapingReason(s) {
          d.error(p, expected: "a path inside __files/", found: "\(JSONValue.quoted(s)), \(bad)")
          break
        }
        switch context.readBodyFile(s) {
        case .success(let bytes):
          r.body = bytes
          r.bodySource = .file(s)
        case .failure(.escapes):
          d.error(
            p, expected: "a path inside __files/", found: "\(JSONValue.quoted(s)), which leads outside it")
        case .failure(.notFound):
          d.error(
            p, expected: "an existing file under __files/",
            found: "no file \(JSONValue.quoted("__files/" + s))")
        }
      default:
        if let body = parseEnvelope(v, p, context.envelopes, &d) {
          r.body = body.serializedBytes()
          if let name = v["name"]?.stringValue { r.bodySource = .envelope(name) }
          if !r.headers.contains("Content-Type") {
            r.headers.add(name: "Content-Type", value: "application/json")
          }
        }
      }
    }
    if !r.body.isEmpty, HTTPStatus(code: r.status).forbidsContent || r.status == 205 {
      d.warning(path, "a \(r.status) response has no content, so its body is not sent")
    }
    r.fixedDelayMilliseconds = nonNegativeInt(o, "fixedDelayMilliseconds", path, &d)
    if let v = o["delayDistribution"] {
      r.delayDistribution = parseDistribution(v, JSONPathText.child(path, "delayDistribution"), &d)
    }
    if let v = o["chunkedDribbleDelay"] {
      let p = JSONPathText.child(path, "chunkedDribbleDelay")
      if let c = object(v, p, "an object {\"numberOfChunks\": n, \"totalDuration\": ms}", &d) {
        let n = nonNegativeInt(c, "numberOfChunks", p, &d)
        let t = nonNegativeInt(c, "totalDuration", p, &d)
        if let n, let t, n >= 1 {
          r.chunkedDribbleDelay = ChunkedDribbleDelay(numberOfChunks: n, totalDuration: t)
        } else if c["numberOfChunks"] == nil || c["totalDuration"] == nil {
          d.error(
            p, expected: "both numberOfChunks and totalDuration",
            found: "only \(c.keys.joined(separator: ", "))")
        } else if n == 0 {
          d.error(JSONPathText.child(p, "numberOfChunks"), expected: "at least 1", found: "0")
        }
      }
    }
    if let v = o["fault"] {
      if let s = v.stringValue, let f = Fault(rawValue: s) {
        r.fault = f
      } else {
        d.error(
          JSONPathText.child(path, "fault"),
          expected: "one of \(Fault.allCases.map(\.rawValue).joined(separator: ", "))",
          found: v.stringValue.map { JSONValue.quoted($0) } ?? v.kindDescription)
      }
    }
    if let v = o["x-compression"] {
      if let s = v.stringValue, let mode = CompressionMode(rawValue: s) {
        r.compression = mode
      } else {
        d.error(
          JSONPathText.child(path, "x-compression"), expected: "one of auto, always, never",
          found: v.stringValue.map { JSONValue.quoted($0) } ?? v.kindDescription)
      }
    }
    for key in ["x-conditional", "x-respondBeforeBody"] {
      guard let v = o[key] else { continue }
      guard case .bool(let flag) = v else {
        d.error(JSONPathText.child(path, key), expected: "true or false", found: v.kindDescription)
        continue
      }
      if key == "x-conditional" { r.conditional = flag } else { r.respondBeforeContent = flag }
    }
    return r
  }

  /// True for a non-empty RFC 9110 token (`tchar`s only).
  package static func isToken(_ s: String) -> Bool {
    !s.isEmpty
      && s.utf8.allSatisfy { b in
        switch b {
        case 48...57, 65...90, 97...122: return true
        case 33, 35, 36, 37, 38, 39, 42, 43, 45, 46, 94, 95, 96, 124, 126: return true
        default: return false
        }
      }
  }

  /// Why `path` is not confined to `__files/`, or nil when it looks confined (the loader also checks the
  /// resolved path, symbolic links included).
  package static func escapingReason(_ path: String) -> String? {
    if path.isEmpty { return "an empty path" }
    if path.hasPrefix("/") || path.hasPrefix("\\") || path.dropFirst().hasPrefix(":") {
      return "an absolute path"
    }
    var depth = 0
    for part in path.split(whereSeparator: { $0 == "/" || $0 == "\\" }) {
      if part == ".." {
        depth -= 1
        if depth < 0 { return "which leads outside it through '..'" }
      } else if part != "." {
        depth += 1
      }
    }
    return nil
  }

  package static func parseDistribution(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> DelayDistribution?
  {
    guard let o = object(v, path, "an object with \"type\": fixed, uniform or lognormal", &d) else {
      return nil
    }
    let type = o["type"]?.stringValue
    let allowed: Set<String>
    var result: DelayDistribution?
    switch type {
    case "fixed":
      allowed = ["type", "milliseconds"]
      if let ms = nonNegativeNumber(o, "milliseconds", path, &d) { result = .fixed(milliseconds: ms) }
    case "uniform":
      allowed = ["type", "lower", "upper"]
      let lower = nonNegativeNumber(o, "lower", path, &d)
      let upper = nonNegativeNumber(o, "upper", path, &d)
      if let lower, let upper {
        if lower <= upper {
          result = .uniform(lower: lower, upper: upper)
        } else {
          d.error(
            JSONPathText.child(path, "upper"), expected: "upper ≥ lower (\(o["lower"]?.description ?? ""))",
            found: o["upper"]?.description ?? "")
        }
      }
    case "lognormal":
      allowed = ["type", "median", "sigma", "maxValue"]
      let median = nonNegativeNumber(o, "median", path, &d)
      let sigma = nonNegativeNumber(o, "sigma", path, &d)
      var cap: Double?
      if o["maxValue"] != nil { cap = nonNegativeNumber(o, "maxValue", path, &d) }
      if let median, let sigma, o["maxValue"] == nil || cap != nil {
        result = .lognormal(median: median, sigma: sigma, maxValue: cap)
      }
    default:
      d.error(
        JSONPathText.child(path, "type"), expected: "\"fixed\", \"uniform\" or \"lognormal\"",
        found: o["type"].map { $0.stringValue.map { JSONValue.quoted($0) } ?? $0.kindDescription }
          ?? "nothing")
      return nil
    }
    for key in o.keys where !allowed.contains(key) {
      d.error(
        JSONPathText.child(path, key), expected: "one of \(allowed.sorted().joined(separator: ", "))",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    return result
  }

  package static func parseEnvelope(
    _ v: JSONValue, _ path: String, _ envelopes: EnvelopeSet, _ d: inout Diagnostics
  )
    -> JSONValue?
  {
    guard let o = object(v, path, "an object {\"name\": \"ok\", <slot>: <value>, …}", &d) else { return nil }
    guard let name = o["name"]?.stringValue else {
      d.error(
        JSONPathText.child(path, "name"), expected: "the name of an envelope template (a string)",
        found: o["name"]?.kindDescription ?? "nothing")
      return nil
    }
    guard let slots = envelopes.slots(of: name) else {
      let known = envelopes.templates.keys.sorted()
      d.error(
        JSONPathText.child(path, "name"),
        expected: known.isEmpty
          ? "an envelope template, but envelopes.json defines none"
          : "an envelope template from envelopes.json (\(known.joined(separator: ", ")))",
        found: JSONValue.quoted(name))
      return nil
    }
    var values: [String: JSONValue] = [:]
    var ok = true
    for m in o where m.key != "name" {
      if slots.contains(m.key) {
        values[m.key] = m.value
      } else {
        ok = false
        d.error(
          JSONPathText.child(path, m.key),
          expected: "a slot of envelope \(JSONValue.quoted(name)) (\(slots.joined(separator: ", ")))",
          found: JSONValue.quoted(m.key))
      }
    }
    for s in slots where values[s] == nil {
      ok = false
      d.error(
        JSONPathText.child(path, s),
        expected: "a value for slot \(JSONValue.quoted(s)) of envelope \(JSONValue.quoted(name))",
        found: "nothing")
    }
    return ok ? envelopes.fill(name, values: values) : nil
  }
}
