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
    "postServeActions", "serveEventListeners", "x-cors", "x-verify",
  ]
  package static let requestFields: Set<String> = [
    "method", "url", "urlPath", "urlPattern", "urlPathPattern", "urlPathTemplate", "pathParameters",
    "queryParameters", "headers", "cookies", "basicAuthCredentials", "basicAuth", "bodyPatterns",
    "formParameters", "multipartPatterns", "scheme", "host", "port", "clientIp", "customMatcher",
  ]
  package static let unsupportedRequestFields: Set<String> = []
  package static let responseFields: Set<String> = [
    "status", "statusMessage", "headers", "body", "jsonBody", "base64Body", "bodyFileName",
    "fixedDelayMilliseconds", "delayDistribution", "chunkedDribbleDelay", "fault", "x-envelope",
    "transformers", "transformerParameters", "x-compression", "x-conditional", "x-respondBeforeBody",
    "x-sandbox",
    "x-sse",
    "x-websocket",
  ]
  package static let unsupportedMatchers: Set<String> = [
    "hasExactly", "includes",
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
    let json = coerceNumbers(json, location, &d)
    guard case .object(let o) = json else {
      d.error(location, expected: "a stub mapping object {\"request\": …, \"response\": …}", found: json)
      return nil
    }
    checkStubFields(o, location, &d)
    let id = parseID(o, location, &d)
    let name = string(o, "name", location, &d)
    let priority = parsePriority(o, location, &d)
    let scenario = parseScenario(o, location, &d)
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
    let (response, sequence) = parseResponseOrSequence(o, location, context, &d)
    if response.webSocket != nil {
      // A WebSocket stub answers only upgrade requests: a plain GET to its URL goes to other stubs.
      request.headers.append(.init("Upgrade", .single(.equalTo("websocket", caseInsensitive: true))))
    }
    return StubMapping(
      id: id ?? context.makeID(), name: name, priority: priority, request: request,
      response: response, responseSequence: sequence, scenarioName: scenario.name,
      requiredScenarioState: scenario.required, newScenarioState: scenario.new, metadata: o["metadata"],
      source: json, file: d.file, location: location)
  }

  /// A field that may hold a number written as a string, or an object holding such fields.
  struct CoercibleField: Sendable {
    var key: String
    /// Empty for a number field.
    var fields: [CoercibleField] = []
  }

  /// Numeric fields WireMock's reader also accepts written as strings (Jackson coerces `"400"` to 400):
  /// they load, each with a warning. Nested by object, so a stub costs one lookup per object and field
  /// listed, in this order (the order of the warnings).
  static let coercibleNumbers: [CoercibleField] = [
    .init(key: "priority"),
    .init(
      key: "response",
      fields: [
        .init(key: "status"), .init(key: "fixedDelayMilliseconds"),
        .init(
          key: "chunkedDribbleDelay", fields: [.init(key: "numberOfChunks"), .init(key: "totalDuration")]),
        .init(
          key: "delayDistribution",
          fields: ["median", "sigma", "lower", "upper", "mean", "stddev"].map { CoercibleField(key: $0) }),
      ]),
    .init(key: "request", fields: [.init(key: "port")]),
  ]

  /// The stub with numbers written as strings turned into numbers (see ``coercibleNumbers``).
  static func coerceNumbers(_ json: JSONValue, _ location: String, _ d: inout Diagnostics) -> JSONValue {
    guard mayNeedCoercion(json, coercibleNumbers) else { return json }
    return coerce(json, coercibleNumbers, location, &d) ?? json
  }

  /// False when ``coerce(_:_:_:_:)`` would change nothing: no member named as a number field holds a
  /// string, and no member named as an object field holds such an object. One pass over the members
  /// (a few name comparisons for the common stub) instead of a lookup of every field.
  private static func mayNeedCoercion(_ v: JSONValue, _ fields: [CoercibleField]) -> Bool {
    guard case .object(let o) = v else { return false }
    for m in o.members {
      switch m.value {
      case .string:
        if fields.contains(where: { $0.fields.isEmpty && $0.key == m.key }) { return true }
      case .object:
        for field in fields where !field.fields.isEmpty && field.key == m.key {
          if mayNeedCoercion(m.value, field.fields) { return true }
        }
      default: continue
      }
    }
    return false
  }

  /// `v` with the numbers at `fields` read from their string form, or nil when there is nothing to change
  /// (so the common stub costs a few lookups, no copy, no comparison and no path text: a warning's JSON
  /// path is made only when there is a warning).
  private static func coerce(
    _ v: JSONValue, _ fields: [CoercibleField], _ path: @autoclosure () -> String, _ d: inout Diagnostics
  ) -> JSONValue? {
    guard case .object(let original) = v else { return nil }
    var o: JSONObject?
    for field in fields {
      guard let child = (o ?? original)[field.key] else { continue }
      let replaced: JSONValue
      if field.fields.isEmpty {
        guard case .string(let s) = child, let n = JSONNumber(text: s.trimmingOWS()) else { continue }
        d.warning(
          JSONPathText.child(path(), field.key),
          "a number written as a string (\(JSONValue.quoted(s))); read as \(n.text), as WireMock does")
        replaced = .number(n)
      } else {
        guard let r = coerce(child, field.fields, JSONPathText.child(path(), field.key), &d) else { continue }
        replaced = r
      }
      var changed = o ?? original
      for k in changed.members.indices where changed.members[k].key == field.key {
        changed.members[k].value = replaced
      }
      o = changed
    }
    return o.map { .object($0) }
  }

  static func checkStubFields(_ o: JSONObject, _ location: String, _ d: inout Diagnostics) {
    for m in o where !stubFields.contains(m.key) {
      d.error(
        JSONPathText.child(location, m.key),
        expected: "a stub mapping field (request, response, priority, id, name, scenarioName, …)",
        found: "unknown field \(JSONValue.quoted(m.key))")
    }
    // Webhooks (the listener named "webhook") are sent by the server, and the state extension's
    // `recordState` and `deleteState` run (serveEventListeners only); other listeners are ignored.
    for key in ["postServeActions", "serveEventListeners"] {
      guard let value = o[key] else { continue }
      let path = JSONPathText.child(location, key)
      if let list = value.arrayValue {
        for (i, item) in list.enumerated() {
          let name = item.objectValue?["name"]?.stringValue ?? ""
          if name == "webhook" { continue }
          if key == "serveEventListeners", name == "recordState" || name == "deleteState" {
            _ = parseStateListener(item, "\(path)[\(i)]", &d)
            continue
          }
          d.warning(
            "\(path)[\(i)]",
            "only the listeners named \"webhook\", \"recordState\" and \"deleteState\" are supported; "
              + "this one is ignored")
        }
      } else if let map = value.objectValue {
        for m in map where m.key != "webhook" {
          d.warning(JSONPathText.child(path, m.key), "only \"webhook\" is supported; this one is ignored")
        }
      } else {
        d.error(path, expected: "an array of {\"name\": \"webhook\", \"parameters\": {…}}", found: value)
      }
    }
  }

  /// `id` or `uuid` (which must agree when both are given). An empty one is no id, as Jackson reads an
  /// empty UUID in WireMock: the stub gets a new one, with a warning (an empty id could never be named
  /// in `/__admin/mappings/{id}`).
  static func parseID(_ o: JSONObject, _ location: String, _ d: inout Diagnostics) -> String? {
    func nonEmpty(_ key: String) -> String? {
      guard let value = string(o, key, location, &d) else { return nil }
      if value.isEmpty {
        d.warning(JSONPathText.child(location, key), "an empty \(key) is no id: the stub gets a new one")
        return nil
      }
      // Swift compares strings by canonical equivalence (`é` and `e` + U+0301, `K` and the Kelvin sign
      // are equal), so two different ids replaced each other: ids are ASCII, where that is byte equality.
      guard StubParser.isASCII(value) else {
        d.error(
          JSONPathText.child(location, key), expected: "an ASCII \(key) (printable, no accents)",
          found: JSONValue.quoted(value))
        return nil
      }
      return value
    }
    let id = nonEmpty("id")
    let uuid = nonEmpty("uuid")
    if let id, let uuid, id != uuid {
      d.error(
        JSONPathText.child(location, "uuid"), expected: "the same value as id", found: JSONValue.quoted(uuid))
    }
    return id ?? uuid
  }

  /// True when every byte of `id` is ASCII: stub ids are refused otherwise, and an id asked for that is not
  /// ASCII names no stub (with ASCII, Swift's canonical string equality is byte equality).
  package static func isASCII(_ id: String) -> Bool {
    id.utf8.allSatisfy { $0 < 0x80 }
  }

  /// `priority`: 1 (highest) or more; 5 when absent.
  static func parsePriority(_ o: JSONObject, _ location: String, _ d: inout Diagnostics) -> Int {
    guard let p = o["priority"] else { return 5 }
    if let n = p.numberValue?.intValue, n >= 1 { return n }
    d.error(
      JSONPathText.child(location, "priority"), expected: "an integer of 1 or more (1 is highest)", found: p)
    return 5
  }

  /// `scenarioName`, `requiredScenarioState` and `newScenarioState` (the states need the name).
  static func parseScenario(_ o: JSONObject, _ location: String, _ d: inout Diagnostics)
    -> (name: String?, required: String?, new: String?)
  {
    let name = string(o, "scenarioName", location, &d)
    let required = string(o, "requiredScenarioState", location, &d)
    let new = string(o, "newScenarioState", location, &d)
    if name == nil {
      for key in ["requiredScenarioState", "newScenarioState"] where o[key] != nil {
        d.error(
          JSONPathText.child(location, key), expected: "scenarioName alongside \(key)",
          found: "no scenarioName")
      }
    }
    return (name, required, new)
  }

  /// `response`, or our `x-responseSequence` (whose first response stands for the stub).
  static func parseResponseOrSequence(
    _ o: JSONObject, _ location: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> (ResponseDefinition, ResponseSequence?) {
    let sequencePath = { JSONPathText.child(location, "x-responseSequence") }
    switch (o["response"], o["x-responseSequence"]) {
    case (let r?, nil):
      return (parseResponse(r, JSONPathText.child(location, "response"), context, &d), nil)
    case (nil, let s?):
      let sequence = parseSequence(s, sequencePath(), context, &d)
      return (sequence?.responses.first ?? ResponseDefinition(), sequence)
    case (.some, .some):
      d.error(sequencePath(), expected: "either response or x-responseSequence", found: "both")
    case (nil, nil):
      d.error(JSONPathText.child(location, "response"), expected: "a response object", found: "nothing")
    }
    return (ResponseDefinition(), nil)
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

  /// A whole number in `0...maximum` (delays, durations, counts: every number a stub gives is bounded
  /// where it enters, so no arithmetic on it can overflow later). Out of range is a located error.
  package static func nonNegativeInt(
    _ o: JSONObject, _ key: String, _ path: String, _ d: inout Diagnostics,
    maximum: Int = ResponseDefinition.maxDelayMilliseconds
  ) -> Int? {
    guard let v = o[key] else { return nil }
    guard let n = v.numberValue?.intValue, n >= 0 else {
      d.error(JSONPathText.child(path, key), expected: "a whole number of 0 or more", found: v)
      return nil
    }
    guard n <= maximum else {
      d.error(JSONPathText.child(path, key), expected: "a whole number in 0...\(maximum)", found: v)
      return nil
    }
    return n
  }

  /// A number in `0...maximum` (milliseconds unless said otherwise); out of range is a located error.
  package static func nonNegativeNumber(
    _ o: JSONObject, _ key: String, _ path: String, _ d: inout Diagnostics,
    maximum: Double = Double(ResponseDefinition.maxDelayMilliseconds)
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
    guard n.doubleValue <= maximum else {
      let bound = maximum.rounded() == maximum && maximum < 1e15 ? String(Int(maximum)) : String(maximum)
      d.error(JSONPathText.child(path, key), expected: "a number in 0...\(bound)", found: v)
      return nil
    }
    return n.doubleValue
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
}
