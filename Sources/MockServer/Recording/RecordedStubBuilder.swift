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

/// What ``RecordedStubBuilder/stubs(from:spec:makeID:)`` makes of a recording.
package struct RecordedStubs: Sendable {
  /// The stubs, in the order their requests were first seen.
  package var stubs: [RecordedStub]
  /// One line per redaction made: `Authorization header of GET /me request (matched as Bearer .+)`.
  package var redactions: [String]
  /// One line per scenario created and per endpoint told apart by a credential header, saying why.
  package var notes: [String]
}

/// Turns recorded exchanges into stubs as WireMock's recorder does: the request as `url` (path and query)
/// and `method`, the captured headers with `equalTo`, the body with `equalToJson`/`equalTo`/
/// `binaryEqualTo`; the response's status, headers (without `Date`, framing and hop-by-hop fields) and
/// content, decoded when the upstream compressed it (`jsonBody` when re-serializing gives the very same
/// bytes, else `body`, `base64Body` for binary).
///
/// Requests that match alike but got different answers (status, content type or content; other headers
/// such as `X-Request-Id` or `ETag` do not count) are told apart first by a credential header present in
/// some and absent in others (`Authorization`, `Cookie`, `Proxy-Authorization`, redacted names): their stubs
/// then match that header by its form (`Bearer .+`) or its absence, so a client with a token never gets
/// the answer recorded without one. What remains alike becomes a scenario that replays the answers in order
/// (`repeatsAsScenarios`; without it the first answer is kept). Each split and scenario is explained in
/// ``RecordedStubs/notes``.
///
/// Redaction replaces named header values and JSON member values by ``RecordingSpec/placeholder``, and
/// every credential value seen in a redacted header (a bearer token, a cookie's value) wherever it appears
/// again in a text body or another header; each is reported.
package enum RecordedStubBuilder {
  /// The stubs for `exchanges` (those the spec's filters accept), the redactions made, as lines such as
  /// `Set-Cookie header of GET /login response`, and the notes on scenarios and credential splits.
  package static func stubs(
    from exchanges: [RecordedExchange], spec: RecordingSpec, makeID: () -> String
  ) -> RecordedStubs {
    var redactions: [String] = []
    var notes: [String] = []
    let accepted = exchanges.filter { spec.accepts($0) }
    let secrets = secretValues(accepted, spec: spec)
    let responses = accepted.map {
      responseDefinition($0, spec: spec, secrets: secrets, redactions: &redactions)
    }
    // The requests as matched: exchanges whose request patterns are the same JSON replay through one stub.
    func grouped(_ members: [Int], _ spec: RecordingSpec) -> [(request: JSONObject, members: [Int])] {
      var order: [String] = []
      var groups: [String: (request: JSONObject, members: [Int])] = [:]
      for i in members {
        let request = requestPattern(
          accepted[i].request, spec: spec, secrets: secrets, redactions: &redactions)
        let key = JSONValue.object(request).serialized()
        if groups[key] == nil {
          order.append(key)
          groups[key] = (request, [i])
        } else {
          groups[key]?.members.append(i)
        }
      }
      return order.compactMap { groups[$0] }
    }
    var final: [(request: JSONObject, members: [Int])] = []
    for group in grouped(Array(accepted.indices), spec) {
      let first = responses[group.members[0]]
      let differ = group.members.contains { !responses[$0].sameAnswer(as: first) }
      let names =
        differ ? credentialNamesTellingApart(group.members.map { accepted[$0].request }, spec: spec) : []
      guard !names.isEmpty else {
        final.append(group)
        continue
      }
      var split = spec
      split.captureHeaders += names.map { ($0, false) }
      // Matched by form (`Bearer .+`), never by the secret itself, whether or not the spec redacts.
      split.redactedHeaders.formUnion(names.map { $0.lowercasedASCII() })
      let parts = grouped(group.members, split)
      let request = accepted[group.members[0]].request
      let answers = parts.map { part in
        let present = names.filter { accepted[part.members[0]].request.headers.first($0) != nil }
        let status = responses[part.members[0]].status
        return present.isEmpty
          ? "\(status) without \(names.joined(separator: ", "))"
          : "\(status) with \(present.joined(separator: ", "))"
      }
      notes.append(
        "\(request.method.rawValue) \(request.head.rawPath) answered \(answers.joined(separator: " and ")): "
          + "its stubs match \(names.joined(separator: ", ")) by form when present and require it absent otherwise"
      )
      final += parts
    }
    var stubs: [RecordedStub] = []
    var scenarioCount = 0
    for group in final {
      let request = accepted[group.members[0]].request
      let name = slug(method: request.method.rawValue, path: request.head.rawPath)
      let endpoint = "\(request.method.rawValue) \(request.head.rawPath)"
      var answers: [Response] = []
      for i in group.members where !answers.contains(where: { responses[i].sameAnswer(as: $0) }) {
        answers.append(responses[i])
      }
      let distinct = answers.count
      var ordered = group.members.map { responses[$0] }
      if distinct == 1 || !spec.repeatsAsScenarios { ordered = [ordered[0]] }
      let scenario: String?
      if ordered.count > 1 {
        scenarioCount += 1
        let named = "scenario-\(scenarioCount)-\(name)"
        scenario = named
        notes.append(
          "scenario \"\(named)\": \(endpoint) got \(distinct) different answers to the same request "
            + "(\(ordered.map { String($0.status) }.joined(separator: ", "))); replayed in that order, the last "
            + "repeating (--no-scenarios or repeatsAsScenarios false keeps the first answer only)")
      } else {
        scenario = nil
        if distinct > 1 {
          notes.append(
            "\(endpoint) got \(distinct) different answers to the same request; the first is kept "
              + "(scenarios are off)")
        }
      }
      for (i, response) in ordered.enumerated() {
        var members: [(String, JSONValue)] = [
          ("id", .string(makeID())), ("name", .string(name)), ("request", .object(group.request)),
          ("response", .object(response.json)),
        ]
        if spec.persist { members.append(("persistent", .bool(true))) }
        if let cut = response.truncation {
          members.append(
            (
              "metadata",
              .object(
                JSONObject(pairs: [
                  (
                    "mockserver",
                    .object(
                      JSONObject(pairs: [
                        ("bodyTruncated", .bool(true)), ("recordedBytes", .number(JSONNumber(cut.kept))),
                        ("upstreamBytes", .number(JSONNumber(cut.total))),
                      ]))
                  )
                ]))
            ))
        }
        if let scenario {
          members.append(("scenarioName", .string(scenario)))
          members.append(("requiredScenarioState", .string(i == 0 ? "Started" : "\(scenario)-\(i + 1)")))
          if i + 1 < ordered.count { members.append(("newScenarioState", .string("\(scenario)-\(i + 2)"))) }
        }
        stubs.append(
          RecordedStub(
            json: JSONObject(pairs: members), name: name, endpoint: endpoint, body: response.body,
            isBinary: response.isBinary, fileExtension: response.fileExtension))
      }
    }
    return RecordedStubs(stubs: stubs, redactions: redactions, notes: notes)
  }

  /// The credential headers (as the requests spell them, sorted) present in some of `requests` and absent
  /// in others, among `Authorization`, `Cookie`, `Proxy-Authorization` and the spec's redacted headers,
  /// leaving out those the spec already matches on.
  static func credentialNamesTellingApart(_ requests: [HTTPRequest], spec: RecordingSpec) -> [String] {
    let captured = Set(spec.captureHeaders.map { $0.name.lowercasedASCII() })
    let candidates = RecordingSpec.defaultRedactedHeaders.union(spec.redactedHeaders).subtracting(
      captured.union(["set-cookie"]))
    var names: [String] = []
    for candidate in candidates.sorted() {
      let having = requests.compactMap { request in
        request.headers.fields.first { $0.name.lowercasedASCII() == candidate }?.name
      }
      if let spelled = having.first, having.count < requests.count { names.append(spelled) }
    }
    return names
  }

  /// A response part with its content kept aside.
  struct Response {
    var json: JSONObject
    var body: [UInt8]?
    var isBinary: Bool
    var fileExtension: String
    /// The bytes kept and the content's whole length, when it was recorded cut.
    var truncation: (kept: Int, total: Int)? = nil
    /// The status code.
    var status = 200
    /// The `Content-Type` field as recorded.
    var contentType: String? = nil

    /// The same status, content type and content: headers such as `X-Request-Id`, `ETag` or `Date` that
    /// change on every answer do not make two answers different.
    func sameAnswer(as other: Response) -> Bool {
      status == other.status && contentType == other.contentType && body == other.body
    }
  }

  // MARK: Requests

  static func requestPattern(
    _ request: HTTPRequest, spec: RecordingSpec, secrets: [Secret] = [], redactions: inout [String]
  ) -> JSONObject {
    var members: [(String, JSONValue)]
    if let query = queryRedacted(request, spec: spec, redactions: &redactions) {
      members = [
        ("urlPath", .string(request.head.rawPath)), ("method", .string(request.method.rawValue)),
        ("queryParameters", .object(query)),
      ]
    } else {
      members = [("url", .string(request.head.originForm)), ("method", .string(request.method.rawValue))]
    }
    var headers: [(String, JSONValue)] = []
    for (name, caseInsensitive) in spec.captureHeaders {
      // A request without a header the recording matches on is matched as lacking it: the stub recorded
      // for it does not also answer the clients that send it (an unauthenticated 401 does not shadow 200).
      guard let value = request.headers.first(name) else {
        headers.append((name, .object(JSONObject(pairs: [("absent", .bool(true))]))))
        continue
      }
      if spec.redactedHeaders.contains(name.lowercasedASCII()) {
        // Matched by its form, never by its secret value: `Bearer .+` for `Bearer <token>`.
        var pattern = ".+"
        if let space = value.firstIndex(of: " "), value[..<space].allSatisfy({ $0.isLetter || $0 == "-" }),
          !value[..<space].isEmpty
        {
          pattern = String(value[..<space]) + " .+"
        }
        note(
          &redactions,
          "\(name) header of \(request.method.rawValue) \(request.head.rawPath) request (matched as \(pattern))"
        )
        headers.append((name, .object(JSONObject(pairs: [("matches", .string(pattern))]))))
      } else {
        var matcher: [(String, JSONValue)] = [("equalTo", .string(value))]
        if caseInsensitive { matcher.append(("caseInsensitive", .bool(true))) }
        headers.append((name, .object(JSONObject(pairs: matcher))))
      }
    }
    if !headers.isEmpty { members.append(("headers", .object(JSONObject(pairs: headers)))) }
    if !request.body.isEmpty,
      let pattern = bodyPattern(request, spec: spec, secrets: secrets, redactions: &redactions)
    {
      members.append(("bodyPatterns", .array([.object(pattern)])))
    }
    return JSONObject(pairs: members)
  }

  static func bodyPattern(
    _ request: HTTPRequest, spec: RecordingSpec, secrets: [Secret] = [], redactions: inout [String]
  ) -> JSONObject? {
    var bytes = request.body
    if !secrets.isEmpty, String(validating: bytes, as: UTF8.self).map(isText) == true {
      scrub(
        &bytes, secrets, in: "\(request.method.rawValue) \(request.head.rawPath) request body", &redactions)
    }
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
        if let pattern = formPattern(text, request: request, spec: spec, redactions: &redactions) {
          return pattern
        }
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
    _ exchange: RecordedExchange, spec: RecordingSpec, secrets: [Secret] = [], redactions: inout [String]
  ) -> Response {
    var built = responseContent(exchange, spec: spec, secrets: secrets, redactions: &redactions)
    built.status = exchange.response.status.code
    built.contentType = exchange.response.headers.first("Content-Type")
    if let total = exchange.truncatedFrom { built.truncation = (exchange.response.body.count, total) }
    return built
  }

  /// One line per exchange whose response content was recorded cut (over the recording limit): `GET /big
  /// response body recorded cut: first 100000 of 300000 bytes`; the stub says so in
  /// `metadata.mockserver`.
  package static func truncationNotes(_ exchanges: [RecordedExchange], spec: RecordingSpec) -> [String] {
    exchanges.compactMap { exchange in
      guard let total = exchange.truncatedFrom, spec.accepts(exchange) else { return nil }
      return
        "\(exchange.request.method.rawValue) \(exchange.request.head.rawPath) response body recorded cut: "
        + "first \(exchange.response.body.count) of \(total) bytes (over --max-body-bytes; see metadata.mockserver)"
    }
  }

  static func responseContent(
    _ exchange: RecordedExchange, spec: RecordingSpec, secrets: [Secret] = [], redactions: inout [String]
  ) -> Response {
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
        || HTTPHeaders.hopByHopNames.contains(lower)
      {
        continue
      }
      var value = field.value
      if spec.redactedHeaders.contains(lower) {
        value = RecordingSpec.placeholder
        note(&redactions, "\(field.name) header of \(what)")
      } else if !secrets.isEmpty {
        var bytes = Array(value.utf8)
        if scrub(&bytes, secrets, in: "\(field.name) header of \(what)", &redactions) {
          value = String(decoding: bytes, as: UTF8.self)
        }
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
    if !secrets.isEmpty, String(validating: body, as: UTF8.self).map(isText) == true {
      scrub(&body, secrets, in: "\(what) body", &redactions)
    }
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
    if var text {
      if !spec.redactedFields.isEmpty {
        let found = redactText(&text, spec.redactedFields)
        if !found.isEmpty {
          note(
            &redactions,
            "\(found.count == 1 ? "field" : "fields") \(found.sorted().joined(separator: ", ")) of \(what) body"
          )
          body = Array(text.utf8)
        }
      }
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

  // MARK: Redacting text and queries

  /// The `queryParameters` of a request whose query has a parameter named in the spec's redacted fields:
  /// `equalTo` on each value as received (decoded), `{"matches": ".*"}` for the redacted ones (any value
  /// matches, as for a redacted header). Nil when no parameter is redacted (the stub keeps its exact
  /// `url`).
  static func queryRedacted(_ request: HTTPRequest, spec: RecordingSpec, redactions: inout [String])
    -> JSONObject?
  {
    guard !spec.redactedFields.isEmpty, let query = request.head.rawQuery else { return nil }
    let names = Set(spec.redactedFields.map { $0.lowercased() })
    var parameters: [(name: String, value: String)] = []
    for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
      let name = pair.prefix { $0 != "=" }
      let value = pair.dropFirst(name.count + (name.count < pair.count ? 1 : 0))
      guard let n = try? PercentDecoding.decode(name, component: "query", plusAsSpace: true),
        let v = try? PercentDecoding.decode(value, component: "query", plusAsSpace: true)
      else { return nil }
      parameters.append((n, v))
    }
    let redacted = Set(parameters.map(\.name).filter { names.contains($0.lowercased()) })
    guard !redacted.isEmpty else { return nil }
    var members: [(String, JSONValue)] = []
    for (name, value) in parameters where !members.contains(where: { $0.0 == name }) {
      let matcher: (String, JSONValue) =
        redacted.contains(name) ? ("matches", .string(".*")) : ("equalTo", .string(value))
      members.append((name, .object(JSONObject(pairs: [matcher]))))
    }
    note(
      &redactions,
      "query \(redacted.count == 1 ? "parameter" : "parameters") \(redacted.sorted().joined(separator: ", ")) of "
        + "\(request.method.rawValue) \(request.head.rawPath) request (matched as present)")
    return JSONObject(pairs: members)
  }

  /// A form-encoded (`a=1&b=2`) request body with a field named in the spec's redacted fields: a
  /// `matches` pattern with the other fields as received and any value for the redacted ones. Nil when
  /// the body is not such a form or has no redacted field.
  static func formPattern(
    _ text: String, request: HTTPRequest, spec: RecordingSpec, redactions: inout [String]
  ) -> JSONObject? {
    guard !spec.redactedFields.isEmpty, text.contains("="), !text.contains(where: { $0.isWhitespace }) else {
      return nil
    }
    let names = Set(spec.redactedFields.map { $0.lowercased() })
    var found: Set<String> = []
    var parts: [String] = []
    for pair in text.split(separator: "&", omittingEmptySubsequences: false) {
      let name = pair.prefix { $0 != "=" }
      let decoded = (try? PercentDecoding.decode(name, component: "query", plusAsSpace: true)) ?? String(name)
      if name.count < pair.count, names.contains(decoded.lowercased()) {
        found.insert(decoded)
        parts.append(regexEscaped(String(name)) + "=[^&]*")
      } else {
        parts.append(regexEscaped(String(pair)))
      }
    }
    guard !found.isEmpty else { return nil }
    note(
      &redactions,
      "form \(found.count == 1 ? "field" : "fields") \(found.sorted().joined(separator: ", ")) of "
        + "\(request.method.rawValue) \(request.head.rawPath) request body (any value matches)")
    return JSONObject(pairs: [("matches", .string(parts.joined(separator: "&")))])
  }

  /// `text` with regular-expression metacharacters escaped.
  static func regexEscaped(_ text: String) -> String {
    var out = ""
    for c in text {
      if "\\^$.|?*+()[]{}/".contains(c) { out.append("\\") }
      out.append(c)
    }
    return out
  }

  /// Replaces, in text that is not JSON, the values of `name=value` pairs (form and query style, the
  /// value ending at `&`, `;`, `,`, a quote or white space) and of `<name>value</name>` elements whose
  /// name is in `names` (compared without case) by the placeholder; returns the names found.
  static func redactText(_ text: inout String, _ names: Set<String>) -> Set<String> {
    let wanted = Set(names.map { $0.lowercased() })
    var found: Set<String> = []
    var bytes = Array(text.utf8)
    let placeholder = Array(RecordingSpec.placeholder.utf8)
    let nameByte = { (b: UInt8) -> Bool in
      (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x5F
        || b == 0x2D
        || b == 0x2E || b >= 0x80
    }
    var i = 0
    while i < bytes.count {
      // A name starts at a byte that follows no name byte.
      guard nameByte(bytes[i]), i == 0 || !nameByte(bytes[i - 1]) else {
        i += 1
        continue
      }
      var end = i
      while end < bytes.count, nameByte(bytes[end]) { end += 1 }
      let name = String(decoding: bytes[i..<end], as: UTF8.self)
      guard wanted.contains(name.lowercased()) else {
        i = end
        continue
      }
      let isElement = i > 0 && bytes[i - 1] == 0x3C && end < bytes.count && bytes[end] == 0x3E  // <name>
      if end < bytes.count, bytes[end] == 0x3D, !isElement {  // name=value
        var valueEnd = end + 1
        while valueEnd < bytes.count,
          ![0x26, 0x3B, 0x2C, 0x22, 0x27, 0x20, 0x09, 0x0A, 0x0D].contains(bytes[valueEnd])
        {
          valueEnd += 1
        }
        bytes.replaceSubrange((end + 1)..<valueEnd, with: placeholder)
        found.insert(name)
        i = end + 1 + placeholder.count
      } else if isElement {
        let close = Array("</\(name)>".utf8)
        var j = end + 1
        var closeAt: Int?
        while j + close.count <= bytes.count {
          if bytes[j] == 0x3C, Array(bytes[j..<(j + close.count)]) == close {
            closeAt = j
            break
          }
          j += 1
        }
        if let closeAt {
          bytes.replaceSubrange((end + 1)..<closeAt, with: placeholder)
          found.insert(name)
          i = end + 1 + placeholder.count + close.count
        } else {
          i = end
        }
      } else {
        i = end
      }
    }
    if !found.isEmpty { text = String(decoding: bytes, as: UTF8.self) }
    return found
  }

  // MARK: Credential values

  /// A credential value seen in a redacted header, and where it was seen (for the redaction lines).
  package struct Secret: Sendable, Hashable {
    /// The value: a whole field value, the credentials after its scheme (`Bearer <token>`), or a
    /// cookie's value.
    package var value: String
    /// `Authorization header`.
    package var origin: String
  }

  /// Values shorter than this are not looked for elsewhere (they would match ordinary text).
  static let shortestSecret = 6

  /// Every credential value in the redacted headers of `exchanges` (requests and responses), longest
  /// first: whole values, the credentials after an auth scheme, and each cookie's value (`Cookie`,
  /// `Set-Cookie`).
  package static func secretValues(_ exchanges: [RecordedExchange], spec: RecordingSpec) -> [Secret] {
    let names = RecordingSpec.defaultRedactedHeaders.union(spec.redactedHeaders)
    var seen: Set<String> = []
    var out: [Secret] = []
    func add(_ value: Substring, _ origin: String) {
      let v = value.trimmingCharacters(in: .whitespaces)
      guard v.count >= shortestSecret, v != RecordingSpec.placeholder, isText(v), !seen.contains(v) else {
        return
      }
      seen.insert(v)
      out.append(Secret(value: v, origin: origin))
    }
    func collect(_ headers: HTTPHeaders) {
      for field in headers.fields {
        let lower = field.name.lowercasedASCII()
        guard names.contains(lower) else { continue }
        let origin = "\(field.name) header"
        switch lower {
        case "cookie":
          for pair in field.value.split(separator: ";") {
            if let eq = pair.firstIndex(of: "=") { add(pair[pair.index(after: eq)...], origin) }
          }
        case "set-cookie":
          let first = field.value.prefix { $0 != ";" }
          if let eq = first.firstIndex(of: "=") { add(first[first.index(after: eq)...], origin) }
        default:
          add(field.value[...], origin)
          if let space = field.value.firstIndex(of: " ") {
            add(field.value[field.value.index(after: space)...], origin)
          }
        }
      }
    }
    for exchange in exchanges {
      collect(exchange.request.headers)
      collect(exchange.response.headers)
    }
    return out.sorted { $0.value.utf8.count > $1.value.utf8.count }
  }

  /// Replaces every occurrence of a secret in `bytes` by the placeholder and notes each kind replaced
  /// (`value of the Authorization header in GET /headers response body`); true when anything changed.
  @discardableResult
  static func scrub(
    _ bytes: inout [UInt8], _ secrets: [Secret], in place: String, _ redactions: inout [String]
  )
    -> Bool
  {
    guard !secrets.isEmpty, !bytes.isEmpty else { return false }
    var changed = false
    let placeholder = Array(RecordingSpec.placeholder.utf8)
    for secret in secrets {
      let needle = Array(secret.value.utf8)
      guard needle.count <= bytes.count else { continue }
      var out: [UInt8] = []
      var i = 0
      var found = false
      while i < bytes.count {
        if bytes[i] == needle[0], i + needle.count <= bytes.count,
          bytes[i..<(i + needle.count)].elementsEqual(needle)
        {
          out += placeholder
          i += needle.count
          found = true
        } else {
          out.append(bytes[i])
          i += 1
        }
      }
      if found {
        bytes = out
        changed = true
        note(&redactions, "value of the \(secret.origin) in \(place)")
      }
    }
    return changed
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
