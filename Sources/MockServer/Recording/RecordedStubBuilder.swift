import HTTPCore
import Mappings
import MockJSON

/// A stub made from recorded exchanges, with what the file writer needs to move its body to `__files/`.
package struct RecordedStub: Sendable {
  /// The stub mapping (WireMock JSON).
  package var json: JSONObject
  /// `get-api-users`: from method and path, for file names.
  package var name: String
  /// `GET /api/users`: stubs of one endpoint go to one mapping file.
  package var endpoint: String
  /// The response content as stored (decoded, redacted), or nil without content.
  package var body: [UInt8]?
  /// True when the content is not UTF-8 text.
  package var isBinary = false
  /// File extension for the content (`json`, `txt`, `bin`…).
  package var fileExtension = "bin"
}

/// Turns recorded exchanges into stubs as WireMock's recorder does: the request as `url` (path and query)
/// and `method`, the captured headers with `equalTo`, the body with `equalToJson`/`equalTo`/
/// `binaryEqualTo`; the response's status, headers (without `Date`, framing and hop-by-hop fields) and
/// content, decoded when the upstream compressed it (`jsonBody` when re-serializing gives the very same
/// bytes, else `body`, `base64Body` for binary). Identical requests with different answers become a
/// scenario that replays them in order (`repeatsAsScenarios`). Redaction replaces named header values and
/// JSON member values by ``RecordingSpec/placeholder`` and reports each.
package enum RecordedStubBuilder {
  /// The stubs for `exchanges` (those the spec's filters accept) and the redactions made, as lines such
  /// as `Set-Cookie header of GET /login response`.
  package static func stubs(
    from exchanges: [RecordedExchange], spec: RecordingSpec, makeID: () -> String
  ) -> (stubs: [RecordedStub], redactions: [String]) {
    var redactions: [String] = []
    var order: [String] = []
    var groups: [String: (request: JSONObject, exchange: RecordedExchange, responses: [Response])] = [:]
    for exchange in exchanges where spec.accepts(exchange) {
      let request = requestPattern(exchange.request, spec: spec, redactions: &redactions)
      let key = JSONValue.object(request).serialized()
      let response = responseDefinition(exchange, spec: spec, redactions: &redactions)
      if groups[key] == nil {
        order.append(key)
        groups[key] = (request, exchange, [response])
      } else {
        groups[key]?.responses.append(response)
      }
    }
    var stubs: [RecordedStub] = []
    var scenarioCount = 0
    for key in order {
      guard let group = groups[key] else { continue }
      let request = group.exchange.request
      let name = slug(method: request.method.rawValue, path: request.head.rawPath)
      let endpoint = "\(request.method.rawValue) \(request.head.rawPath)"
      var responses = group.responses
      let allSame = responses.allSatisfy { $0.json == responses[0].json }
      if allSame || !spec.repeatsAsScenarios { responses = [responses[0]] }
      let scenario: String?
      if responses.count > 1 {
        scenarioCount += 1
        scenario = "scenario-\(scenarioCount)-\(name)"
      } else {
        scenario = nil
      }
      for (i, response) in responses.enumerated() {
        var members: [(String, JSONValue)] = [
          ("id", .string(makeID())), ("name", .string(name)), ("request", .object(group.request)),
          ("response", .object(response.json)),
        ]
        if spec.persist { members.append(("persistent", .bool(true))) }
        if let scenario {
          members.append(("scenarioName", .string(scenario)))
          members.append(("requiredScenarioState", .string(i == 0 ? "Started" : "\(scenario)-\(i + 1)")))
          if i + 1 < responses.count { members.append(("newScenarioState", .string("\(scenario)-\(i + 2)"))) }
        }
        stubs.append(
          RecordedStub(
            json: JSONObject(pairs: members), name: name, endpoint: endpoint, body: response.body,
            isBinary: response.isBinary, fileExtension: response.fileExtension))
      }
    }
    return (stubs, redactions)
  }

  /// A response part with its content kept aside.
  struct Response {
    var json: JSONObject
    var body: [UInt8]?
    var isBinary: Bool
    var fileExtension: String
  }

  // MARK: Requests

  static func requestPattern(_ request: HTTPRequest, spec: RecordingSpec, redactions: inout [String])
    -> JSONObject
  {
    var members: [(String, JSONValue)] = [
      ("url", .string(request.head.originForm)), ("method", .string(request.method.rawValue)),
    ]
    var headers: [(String, JSONValue)] = []
    for (name, caseInsensitive) in spec.captureHeaders {
      guard let value = request.headers.first(name) else { continue }
      if spec.redactedHeaders.contains(name.lowercasedASCII()) {
        note(
          &redactions,
          "\(name) header of \(request.method.rawValue) \(request.head.rawPath) request (matched as present)")
        headers.append((name, .object(JSONObject(pairs: [("matches", .string(".*"))]))))
      } else {
        var matcher: [(String, JSONValue)] = [("equalTo", .string(value))]
        if caseInsensitive { matcher.append(("caseInsensitive", .bool(true))) }
        headers.append((name, .object(JSONObject(pairs: matcher))))
      }
    }
    if !headers.isEmpty { members.append(("headers", .object(JSONObject(pairs: headers)))) }
    if !request.body.isEmpty, let pattern = bodyPattern(request, spec: spec, redactions: &redactions) {
      members.append(("bodyPatterns", .array([.object(pattern)])))
    }
    return JSONObject(pairs: members)
  }

  static func bodyPattern(_ request: HTTPRequest, spec: RecordingSpec, redactions: inout [String])
    -> JSONObject?
  {
    let bytes = request.body
    let text = String(validating: bytes, as: UTF8.self).flatMap { isText($0) ? $0 : nil }
    var json: JSONValue?
    if text != nil, let value = try? JSONValue.parse(bytes: bytes),
      value.objectValue != nil || value.arrayValue != nil
    {
      json = value
    }
    switch spec.bodyPattern {
    case .auto(let order, let extra, let ci):
      if var json {
        let found = spec.redactedFields.isEmpty ? [] : redactFields(&json, spec.redactedFields, remove: true)
        if !found.isEmpty {
          note(
            &redactions,
            "\(fieldsText(found)) of \(request.method.rawValue) \(request.head.rawPath) request body (left out of equalToJson)"
          )
          return JSONObject(pairs: [
            ("equalToJson", json), ("ignoreArrayOrder", .bool(order)), ("ignoreExtraElements", .bool(true)),
          ])
        }
        return JSONObject(pairs: [
          ("equalToJson", json), ("ignoreArrayOrder", .bool(order)), ("ignoreExtraElements", .bool(extra)),
        ])
      }
      if let text {
        var pairs: [(String, JSONValue)] = [("equalTo", .string(text))]
        if ci { pairs.append(("caseInsensitive", .bool(true))) }
        return JSONObject(pairs: pairs)
      }
      return JSONObject(pairs: [("binaryEqualTo", .string(Base64.encode(bytes)))])
    case .equalTo(let ci):
      guard let text else { return JSONObject(pairs: [("binaryEqualTo", .string(Base64.encode(bytes)))]) }
      var pairs: [(String, JSONValue)] = [("equalTo", .string(text))]
      if ci { pairs.append(("caseInsensitive", .bool(true))) }
      return JSONObject(pairs: pairs)
    case .equalToJson(let order, let extra):
      if var json {
        let removed =
          !spec.redactedFields.isEmpty && !redactFields(&json, spec.redactedFields, remove: true).isEmpty
        return JSONObject(pairs: [
          ("equalToJson", json), ("ignoreArrayOrder", .bool(order)),
          ("ignoreExtraElements", .bool(extra || removed)),
        ])
      }
      guard let text else { return JSONObject(pairs: [("binaryEqualTo", .string(Base64.encode(bytes)))]) }
      return JSONObject(pairs: [("equalTo", .string(text))])
    }
  }

  // MARK: Responses

  static func responseDefinition(
    _ exchange: RecordedExchange, spec: RecordingSpec, redactions: inout [String]
  )
    -> Response
  {
    let response = exchange.response
    let what = "\(exchange.request.method.rawValue) \(exchange.request.head.rawPath) response"
    var body = response.body
    var headers = response.headers
    // Content stored decoded (served back, the server compresses again when the client asks).
    if !body.isEmpty, let coding = headers.first("Content-Encoding").flatMap(ContentCoding.init(fieldValue:)),
      coding != .identity, let decoded = try? coding.decode(body)
    {
      body = decoded
      headers.remove(name: "Content-Encoding")
    }
    var members: [(String, JSONValue)] = [("status", .number(JSONNumber(response.status.code)))]
    let reason = response.status.reasonPhrase
    if !reason.isEmpty, reason != HTTPStatus(code: response.status.code).reasonPhrase {
      members.append(("statusMessage", .string(reason)))
    }
    var headerMembers: [(String, [String])] = []
    for field in headers.fields {
      let lower = field.name.lowercasedASCII()
      if ["date", "content-length", "transfer-encoding"].contains(lower)
        || ProxyForwarder.hopByHop.contains(lower)
      {
        continue
      }
      var value = field.value
      if spec.redactedHeaders.contains(lower) {
        value = RecordingSpec.placeholder
        note(&redactions, "\(field.name) header of \(what)")
      }
      if let i = headerMembers.firstIndex(where: { $0.0.lowercasedASCII() == lower }) {
        headerMembers[i].1.append(value)
      } else {
        headerMembers.append((field.name, [value]))
      }
    }
    if !headerMembers.isEmpty {
      members.append(
        (
          "headers",
          .object(
            JSONObject(
              pairs: headerMembers.map { name, values in
                (name, values.count == 1 ? .string(values[0]) : .array(values.map { .string($0) }))
              }))
        ))
    }
    guard !body.isEmpty else {
      return Response(json: JSONObject(pairs: members), body: nil, isBinary: false, fileExtension: "bin")
    }
    let contentType = headers.first("Content-Type")?.lowercasedASCII() ?? ""
    let text = String(validating: body, as: UTF8.self).flatMap { isText($0) ? $0 : nil }
    if text != nil,
      contentType.contains("json") || contentType.isEmpty || body.first == UInt8(ascii: "{")
        || body.first == UInt8(ascii: "["), var json = try? JSONValue.parse(bytes: body)
    {
      var redacted = false
      let found = spec.redactedFields.isEmpty ? [] : redactFields(&json, spec.redactedFields)
      if !found.isEmpty {
        redacted = true
        note(&redactions, "\(fieldsText(found)) of \(what) body")
      }
      let compact = json.serializedBytes()
      if redacted || compact == body {
        members.append(("jsonBody", json))
        return Response(
          json: JSONObject(pairs: members), body: compact, isBinary: false, fileExtension: "json")
      }
    }
    if let text {
      members.append(("body", .string(text)))
      let ext =
        contentType.contains("json")
        ? "json"
        : contentType.contains("html")
          ? "html"
          : contentType.contains("xml") ? "xml" : "txt"
      return Response(json: JSONObject(pairs: members), body: body, isBinary: false, fileExtension: ext)
    }
    members.append(("base64Body", .string(Base64.encode(body))))
    let ext =
      contentType.contains("png")
      ? "png"
      : contentType.contains("jpeg")
        ? "jpg"
        : contentType.contains("gif") ? "gif" : contentType.contains("pdf") ? "pdf" : "bin"
    return Response(json: JSONObject(pairs: members), body: body, isBinary: true, fileExtension: ext)
  }

  // MARK: Helpers

  /// UTF-8 text without control characters other than tab, CR and LF.
  static func isText(_ s: String) -> Bool {
    !s.unicodeScalars.contains {
      ($0.value < 32 && $0.value != 9 && $0.value != 10 && $0.value != 13) || $0.value == 127
    }
  }

  /// Replaces the values of members named in `names` (at any depth) by the placeholder (or, with
  /// `remove`, removes the members); returns the names found.
  static func redactFields(_ value: inout JSONValue, _ names: Set<String>, remove: Bool = false) -> Set<
    String
  > {
    var found: Set<String> = []
    switch value {
    case .object(var o):
      for i in o.members.indices {
        if names.contains(o.members[i].key) {
          found.insert(o.members[i].key)
          o.members[i].value = .string(RecordingSpec.placeholder)
        } else {
          found.formUnion(redactFields(&o.members[i].value, names, remove: remove))
        }
      }
      if remove { o.members.removeAll { names.contains($0.key) } }
      value = .object(o)
    case .array(var a):
      for i in a.indices { found.formUnion(redactFields(&a[i], names, remove: remove)) }
      value = .array(a)
    default:
      break
    }
    return found
  }

  /// `JSON field token` or `JSON fields a, b`.
  static func fieldsText(_ names: Set<String>) -> String {
    (names.count == 1 ? "JSON field " : "JSON fields ") + names.sorted().joined(separator: ", ")
  }

  static func note(_ redactions: inout [String], _ line: String) {
    if !redactions.contains(line) { redactions.append(line) }
  }

  /// `GET /api/users/42` → `get-api-users-42`; `/` → `get-root`. At most 80 characters.
  package static func slug(method: String, path: String) -> String {
    var out = method.lowercased()
    var dash = true
    for scalar in path.unicodeScalars {
      let c = Character(scalar)
      if scalar.isASCII, c.isLetter || c.isNumber {
        if dash { out.append("-") }
        out.append(c.lowercased())
        dash = false
      } else {
        dash = true
      }
      if out.count >= 80 { break }
    }
    return out.contains("-") ? out : out + "-root"
  }
}
