import Foundation
import HTTPCore
import JSONSchema
import MockJSON

/// One answer of ``OpenAPIMock``: status, header fields and content, and the note the request log shows.
package struct OpenAPIMockAnswer: Sendable {
  package var status: Int
  package var headers: [(String, String)]
  package var body: [UInt8]
  /// `openapi listPets 200 application/json`, `contract violation: …`.
  package var note: String
  /// What the request and the answer break, as Prism's `sl-violations` header lists them: locations start
  /// with `request` or `response` (``OpenAPIMock/finish(_:)`` turns them into the header).
  package var violations: [OpenAPIRequestProblem] = []
}

/// One way a request (or an answer) breaks the document, as Prism reports it in its `validation` array:
/// where (`["query", "limit"]`, `["body", "id"]`, `["header"]`), the JSON Schema keyword (`type`,
/// `required`, …) and a message; `status` says which kind it is (401 security, 415 media type, 422 the
/// rest). A warning (a deprecated parameter sent) does not make a request invalid.
package struct OpenAPIRequestProblem: Sendable {
  package var location: [String]
  package var keyword: String?
  package var message: String
  package var status: Int
  /// `WWW-Authenticate` challenges of the security schemes that were not satisfied.
  package var challenges: [String] = []
  /// True for Prism's `Warning` severity (`deprecated`); false for `Error`.
  package var isWarning = false

  /// The entry of a `validation` array: `location`, `severity`, `code` (the keyword, else the status as
  /// a number, as Prism's `401`; none for a warning without keyword), `message`.
  var json: JSONValue {
    var fields: [(String, JSONValue)] = [("location", .array(location.map(JSONValue.string)))]
    fields.append(("severity", .string(isWarning ? "Warning" : "Error")))
    if let keyword {
      fields.append(("code", .string(keyword)))
    } else if !isWarning {
      fields.append(("code", .number(JSONNumber(status))))
    }
    fields.append(("message", .string(message)))
    return .object(JSONObject(pairs: fields))
  }

  /// The same problem with `side` (`request`, `response`) before its location.
  /// A security problem's location is already `["request"]` (the request as a whole).
  func on(_ side: String) -> OpenAPIRequestProblem {
    guard location.first != side else { return self }
    var copy = self
    copy.location.insert(side, at: 0)
    return copy
  }
}

/// Serves an OpenAPI document as Prism's mock does (docs/contracts.md, "Serve a document directly"):
/// routing, request validation and security, response selection (`Prefer` and `__code`/`__example`),
/// content negotiation, bodies from examples or schemas (JSON, XML, text) and declared response headers.
///
/// Immutable after `init`; every request is answered from the document alone, so one value serves all
/// connections.
package struct OpenAPIMock: Sendable {
  package let document: OpenAPIDocument
  let seed: UInt64
  /// `--validate-responses` or `--errors`: each answer is checked against its own schema; what it breaks
  /// is listed in `sl-violations` (and in the log note).
  package var checksAnswers = false
  /// `--errors`: an answer that breaks its own schema becomes Prism's 500 `VIOLATIONS` problem.
  package var answerViolationsAreErrors = false
  /// `--validate-requests`: warnings about a request that is served anyway (a deprecated parameter sent)
  /// are listed in `sl-violations`.
  package var reportsRequestWarnings = false

  package init(document: OpenAPIDocument, seed: UInt64 = 1) {
    self.document = document
    self.seed = seed
  }

  // MARK: - The request

  /// A request as the mock reads it.
  struct Request {
    var method: String
    var path: String
    /// Query pairs, decoded (`+` is a space), in order.
    var query: [(String, String)]
    /// Query pairs as sent (for `allowReserved` and delimited styles).
    var rawQuery: [(String, String)]
    var headers: HTTPHeaders
    var body: [UInt8]

    init(method: String, target: String, headers: HTTPHeaders, body: [UInt8]) {
      self.method = method.uppercased()
      let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
      path = String(parts[0])
      query = []
      rawQuery = []
      if parts.count > 1 {
        for pair in parts[1].split(separator: "&") {
          let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
          let value = kv.count > 1 ? String(kv[1]) : ""
          rawQuery.append((String(kv[0]), value))
          query.append((OpenAPIMock.formDecode(String(kv[0])), OpenAPIMock.formDecode(value)))
        }
      }
      self.headers = headers
      self.body = body
    }

    func queryValues(_ name: String) -> [String] { query.filter { $0.0 == name }.map(\.1) }
  }

  static func formDecode(_ s: String) -> String {
    s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? s
  }

  /// What the client asked for with `Prefer: code=…, example=…` or `?__code=…&__example=…`.
  struct Preference {
    var code: Int?
    var example: String?

    init(_ request: Request) {
      for value in request.headers.values("Prefer") {
        for token in value.split(whereSeparator: { $0 == "," || $0 == ";" }) {
          let kv = token.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
          guard kv.count == 2 else { continue }
          let v = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
          if kv[0].lowercased() == "code" { code = Int(v) }
          if kv[0].lowercased() == "example" { example = v }
        }
      }
      if code == nil, let c = request.queryValues("__code").first { code = Int(c) }
      if example == nil, let e = request.queryValues("__example").first { example = e }
      if let c = code, !(100...599).contains(c) { code = nil }
    }
  }

  // MARK: - Routing

  enum Route {
    case operation(OpenAPIOperation, [String: String])
    case noPath
    case noMethod([String])
  }

  func route(_ request: Request) -> Route {
    var candidates = [request.path]
    for base in document.serverBasePaths where request.path.hasPrefix(base + "/") || request.path == base {
      candidates.append(String(request.path.dropFirst(base.count)))
    }
    for raw in candidates {
      let decoded = raw.split(separator: "/", omittingEmptySubsequences: false)
        .map { String($0).removingPercentEncoding ?? String($0) }
      var best: (OpenAPIOperation, [String: String], Int, Int)?
      var methods: [String] = []
      let method = request.method
      for op in document.operations {
        guard let params = OpenAPIMock.match(template: op.path, segments: decoded) else { continue }
        methods.append(op.method)
        // As Prism: HEAD is answered by a `head` operation only (no GET fallback).
        guard op.method == method else { continue }
        let literals = op.path.split(separator: "/").filter { !$0.contains("{") }.count
        let literalCharacters = PathTemplateMatcher.shape(op.path).count
        // More literal segments win, then more literal characters.
        let score = literals * 1000 + literalCharacters
        if best == nil || score > best!.3 { best = (op, params, literals, score) }
      }
      if let best { return .operation(best.0, best.1) }
      if !methods.isEmpty { return .noMethod(methods) }
    }
    return .noPath
  }

  /// Path parameters when the decoded `segments` fit `template`; a parameter that is a whole segment may be
  /// empty (`/path//foo`), so the validation can say it is missing.
  static func match(template: String, segments: [String]) -> [String: String]? {
    let t = template.split(separator: "/", omittingEmptySubsequences: false)
    guard t.count == segments.count else { return nil }
    var params: [String: String] = [:]
    for (ts, ps) in zip(t, segments) {
      if ts.hasPrefix("{"), ts.hasSuffix("}"), ts.dropFirst().firstIndex(of: "{") == nil {
        params[String(ts.dropFirst().dropLast())] = ps
        continue
      }
      guard PathTemplateMatcher.matchSegment(Substring(ts), Substring(ps), &params) else { return nil }
    }
    return params
  }

  // MARK: - Answering

  /// The problems of a request to an operation (empty when it conforms), or nil when no operation of
  /// the document addresses it.
  package func problems(method: String, target: String, headers: HTTPHeaders, body: [UInt8])
    -> [OpenAPIRequestProblem]?
  {
    let request = Request(method: method, target: target, headers: headers, body: body)
    guard case .operation(let op, let pathValues) = route(request) else { return nil }
    return problems(request, op, pathValues)
  }

  /// `--validate-requests`: the answer to a request that breaks the document (Prism's: the document's own
  /// 401 for security, else its 415/422/400 response, else a problem+json listing every violation), or
  /// nil when the request conforms or no operation addresses it.
  package func check(method: String, target: String, headers: HTTPHeaders, body: [UInt8])
    -> OpenAPIMockAnswer?
  {
    let request = Request(method: method, target: target, headers: headers, body: body)
    guard case .operation(let op, let pathValues) = route(request) else { return nil }
    var found = problems(request, op, pathValues)
    guard found.contains(where: { !$0.isWarning }) else { return nil }
    if reportsRequestWarnings { found += deprecationWarnings(request, op) }
    return finish(invalidRequestAnswer(request, op, found.map(originalPointers)))
  }

  /// The document's answer to a request (no validation): the selected response, or 404/405/406 and the
  /// other problem+json answers.
  package func respond(method: String, target: String, headers: HTTPHeaders, body: [UInt8])
    -> OpenAPIMockAnswer
  {
    let request = Request(method: method, target: target, headers: headers, body: body)
    switch route(request) {
    case .noPath:
      let paths = document.operations.map(\.path).reduce(into: [String]()) {
        if !$0.contains($1) { $0.append($1) }
      }
      return problem(
        404, "no-path", "No operation has this path",
        "No path of \(document.title) matches \(request.path) (paths: \(paths.prefix(20).joined(separator: ", "))"
          + "\(paths.count > 20 ? ", …" : ""))")
    case .noMethod(let methods):
      var answer = problem(
        405, "no-method", "The path has no operation for this method",
        "\(request.path) has no \(request.method) operation (it has \(methods.joined(separator: ", ")))")
      answer.headers.append(("Allow", methods.joined(separator: ", ")))
      return answer
    case .operation(let op, _):
      var answer = answer(request, op, preference: Preference(request))
      if reportsRequestWarnings {
        let warnings = deprecationWarnings(request, op) + securityProblems(request, op).filter(\.isWarning)
        answer.violations.insert(contentsOf: warnings.map { $0.on("request") }, at: 0)
      }
      answer.violations = answer.violations.map(originalPointers)
      return finish(answer)
    }
  }

  /// Prism's warnings for a request it serves: each `deprecated` parameter that was sent.
  func deprecationWarnings(_ request: Request, _ op: OpenAPIOperation) -> [OpenAPIRequestProblem] {
    op.parameters.compactMap { p in
      guard p.raw["deprecated"]?.boolValue == true else { return nil }
      let sent: Bool
      switch p.location {
      case "query": sent = request.query.contains { $0.0 == p.name }
      case "header": sent = request.headers.contains(p.name)
      case "cookie":
        sent = request.headers.values("Cookie").contains { cookie in
          cookie.split(separator: ";").contains {
            $0.split(separator: "=", maxSplits: 1).first?.trimmingCharacters(in: .whitespaces) == p.name
          }
        }
      default: sent = false
      }
      guard sent else { return nil }
      let kind = p.location.prefix(1).uppercased() + p.location.dropFirst()
      return OpenAPIRequestProblem(
        location: [p.location, p.name], keyword: "deprecated",
        message: "\(kind) param \(p.name) is deprecated",
        status: 200, isWarning: true)
    }
  }

  /// Most bytes of an `sl-violations` value (Prism's: 8 KiB less some); a longer list is cut and marked.
  static let violationsHeaderLimit = 8 * 1024 - 100

  /// The answer as sent: with `--errors`, one that breaks its own schema becomes Prism's 500 `VIOLATIONS`
  /// problem; any violation (request or answer) is listed in `sl-violations` and in the log note.
  /// `problem` with its message's pointers naming a Swagger 2.0 document's own file (translated once).
  func originalPointers(_ problem: OpenAPIRequestProblem) -> OpenAPIRequestProblem {
    var copy = problem
    copy.message = document.originalPointers(in: problem.message)
    return copy
  }

  package func finish(_ answer: OpenAPIMockAnswer) -> OpenAPIMockAnswer {
    guard !answer.violations.isEmpty else { return answer }
    var out = answer
    let answerErrors = answer.violations.filter { $0.location.first == "response" && !$0.isWarning }
    if answerViolationsAreErrors, !answerErrors.isEmpty {
      out = problem(
        500, "violations", "Request/Response not valid",
        "The answer breaks its own schema in the document and --errors is set: "
          + answerErrors.map(\.message).joined(separator: "; "),
        extra: [("validation", .array(answerErrors.map(\.json)))])
      out.violations = answer.violations
      out.note = answer.note + ", replaced by 500 (--errors)"
    }
    var value = OpenAPIMock.asciiJSON(JSONValue.array(answer.violations.map(\.json)).serialized())
    if value.utf8.count > OpenAPIMock.violationsHeaderLimit {
      // ASCII (asciiJSON), so characters are bytes.
      value = "Too many violations! " + String(value.prefix(OpenAPIMock.violationsHeaderLimit))
    }
    out.headers.append(("sl-violations", value))
    let listed = answer.violations.map {
      ($0.isWarning ? "warning " : "") + $0.location.joined(separator: " ") + ": " + $0.message
    }
    out.note += "; violations: " + listed.joined(separator: "; ")
    return out
  }

  /// JSON text with every character past ASCII written as `\uXXXX` (a header value stays ASCII).
  static func asciiJSON(_ text: String) -> String {
    guard text.utf8.contains(where: { $0 >= 0x80 }) else { return text }
    var out = ""
    for unit in text.utf16 {
      if unit < 0x80 {
        out.unicodeScalars.append(Unicode.Scalar(UInt8(unit)))
      } else {
        out +=
          "\\u" + String(repeating: "0", count: 4 - String(unit, radix: 16).count) + String(unit, radix: 16)
      }
    }
    return out
  }

  func answer(_ request: Request, _ op: OpenAPIOperation, preference: Preference) -> OpenAPIMockAnswer {
    guard !op.responses.isEmpty else {
      return problem(
        500, "no-response", "No response defined", "\(op.method) \(op.path) declares no responses")
    }
    var chosen: (OpenAPIResponse, Int)
    if let code = preference.code {
      guard let found = OpenAPIMock.response(op, code: code) else {
        return problem(
          404, "not-found", "The requested status is not declared",
          "Requested status code \(code) is not declared by \(op.method) \(op.path) (declared: "
            + op.responses.map(\.status).joined(separator: ", ") + ")")
      }
      chosen = (found, code)
    } else {
      chosen = OpenAPIMock.defaultResponse(op)
    }
    let (response, status) = chosen
    let accept = request.headers.values("Accept").joined(separator: ",")
    let hasAccept = request.headers.contains("Accept") && !accept.trimmingCharacters(in: .whitespaces).isEmpty
    let media: OpenAPIMediaType?
    if request.method == "HEAD" {
      media = nil
    } else if !hasAccept {
      media =
        response.content.first { $0.name == "*/*" }
        ?? MediaNegotiation.best(accept: "application/json, */*", offered: response.content.map(\.name))
        .flatMap {
          name in response.content.first { $0.name == name }
        }
    } else if let name = MediaNegotiation.best(accept: accept, offered: response.content.map(\.name)) {
      media = response.content.first { $0.name == name }
    } else {
      media = nil
      if !response.content.isEmpty && status != 204 && !accept.contains("*/*") {
        return problem(
          406, "not-acceptable", "The server cannot produce a representation for your Accept header",
          "Unable to find content for \(accept); \(op.method) \(op.path) \(response.status) has "
            + response.content.map(\.name).joined(separator: ", "))
      }
    }
    return render(op, response, status: status, media: media, example: preference.example)
  }

  /// Prism's choice without a requested code: the lowest 2xx (a `2XX` range as 200), else `default` as
  /// 200, else the first declared.
  static func defaultResponse(_ op: OpenAPIOperation) -> (OpenAPIResponse, Int) {
    let success = op.responses.filter { $0.status.count == 3 && $0.status.hasPrefix("2") }
      .filter { Int($0.status) != nil || $0.status.uppercased() == "2XX" }
      .sorted { $0.status < $1.status }
    if let first = success.first { return (first, Int(first.status) ?? 200) }
    if let d = op.responses.first(where: { $0.status == "default" }) { return (d, 200) }
    let first = op.responses[0]
    return (first, Int(first.status) ?? ((first.status.first?.wholeNumberValue ?? 5) * 100))
  }

  /// The declared response for `code`: exact, then its `NXX` range, then `default`.
  static func response(_ op: OpenAPIOperation, code: Int) -> OpenAPIResponse? {
    op.responses.first { $0.status == String(code) }
      ?? op.responses.first { $0.status.uppercased() == "\(code / 100)XX" }
      ?? op.responses.first { $0.status == "default" }
  }

  /// The body, headers and status for `response` in `media` (nil: no content).
  func render(
    _ op: OpenAPIOperation, _ response: OpenAPIResponse, status: Int, media: OpenAPIMediaType?,
    example: String?
  ) -> OpenAPIMockAnswer {
    var headers: [(String, String)] = []
    for h in response.headers where h.name.lowercased() != "content-type" {
      var value = h.example
      if value == nil, let location = h.schemaLocation { value = sample(at: location) }
      guard let value else { continue }
      headers.append((h.name, OpenAPIMock.headerText(value)))
    }
    let note = "openapi \(op.name) \(response.status)"
    guard let media else {
      return OpenAPIMockAnswer(status: status, headers: headers, body: [], note: note)
    }
    var value: JSONValue?
    if let example {
      guard let found = media.examples.first(where: { $0.0 == example }) else {
        return exampleNotFound(op, response, media: media.name, example: example)
      }
      value = found.1
    } else {
      value = media.examples.first?.1 ?? media.example
      if value == nil, let location = media.schemaLocation { value = sample(at: location) }
    }
    let contentType = media.name == "*/*" ? "text/plain" : media.name
    guard let value else {
      return OpenAPIMockAnswer(status: status, headers: headers, body: [], note: note + " " + contentType)
    }
    let name = MediaTypeName(contentType)
    var violations: [OpenAPIRequestProblem] = []
    if checksAnswers, name.isJSON, let location = media.schemaLocation {
      violations = document.validator.validate(value, at: location).map { v in
        OpenAPIRequestProblem(
          location: ["response", "body"] + OpenAPIMock.components(v), keyword: v.keyword,
          message: "Response body" + (v.instancePath == "$" ? "" : " " + v.instancePath) + ": " + v.message,
          status: 500)
      }
    }
    let body: [UInt8]
    if name.isJSON {
      body = Array(value.serialized().utf8)
    } else if name.isXML {
      if case .string(let text) = value {
        body = Array(text.utf8)
      } else {
        body = Array(XMLRenderer(document: document).render(value, schemaAt: media.schemaLocation).utf8)
      }
    } else {
      switch value {
      case .string(let text): body = Array(text.utf8)
      case .number(let n): body = Array(n.text.utf8)
      case .bool(let b): body = Array((b ? "true" : "false").utf8)
      case .null: body = []
      case .array, .object:
        return problem(
          500, "no-complex-object-text", "Cannot serialise complex objects as text",
          "The \(contentType) answer of \(op.method) \(op.path) \(response.status) is \(value.kindDescription), "
            + "which has no \(contentType) form")
      }
    }
    headers.insert(("Content-Type", contentType), at: 0)
    return OpenAPIMockAnswer(
      status: status, headers: headers, body: body, note: note + " " + contentType, violations: violations)
  }

  func exampleNotFound(_ op: OpenAPIOperation, _ response: OpenAPIResponse, media: String, example: String)
    -> OpenAPIMockAnswer
  {
    let names = response.content.flatMap { m in m.examples.map { "\(m.name): \($0.0)" } }
    return problem(
      404, "not-found", "The requested example does not exist",
      "Response for contentType: \(media) and exampleKey: \(example) does not exist in \(op.method) \(op.path) "
        + "\(response.status) (examples: \(names.isEmpty ? "none" : names.joined(separator: ", ")))")
  }

  /// A value for the schema at `location`: Prism's static value when it conforms, else a generated one.
  package func sample(at location: SchemaLocation) -> JSONValue? {
    guard let value = StaticSampler(document: document).sample(at: location) else { return nil }
    if document.validator.validate(value, at: location).isEmpty { return value }
    var sampler = SchemaSampler(document: document, seed: seed)
    return sampler.sample(at: location) ?? value
  }

  static func headerText(_ value: JSONValue) -> String {
    switch value {
    case .string(let s): return s
    case .array(let a): return a.map(headerText).joined(separator: ",")
    case .object(let o): return o.members.map { "\($0.key),\(headerText($0.value))" }.joined(separator: ",")
    default: return value.serialized()
    }
  }

  // MARK: - Invalid requests

  func invalidRequestAnswer(_ request: Request, _ op: OpenAPIOperation, _ found: [OpenAPIRequestProblem])
    -> OpenAPIMockAnswer
  {
    let codes: [Int]
    if found.contains(where: { $0.status == 401 }) {
      codes = [401]
    } else if found.contains(where: { $0.status == 415 }) {
      codes = [415, 422, 400]
    } else {
      codes = [422, 400]
    }
    let note =
      "contract violation: "
      + found.map { $0.location.joined(separator: " ") + ": " + $0.message }.joined(separator: "; ")
    let preference = Preference(request)
    var declared: (OpenAPIResponse, Int)?
    for code in codes {
      if let r = op.responses.first(where: {
        $0.status == String(code) || $0.status.uppercased() == "\(code / 100)XX"
      }) {
        declared = (r, code)
        break
      }
    }
    if declared == nil, let d = op.responses.first(where: { $0.status == "default" }) {
      declared = (d, codes[0])
    }
    if let (response, status) = declared {
      let exampleKey = preference.code.map(codes.contains) == true ? preference.example : nil
      let media =
        response.content.first { !$0.examples.isEmpty || $0.example != nil }
        ?? response.content.first { $0.schemaLocation != nil }
      var answer = render(
        op, response, status: status, media: request.method == "HEAD" ? nil : media, example: exampleKey)
      answer.note = note
      // As Prism: the document's own answer to an invalid request lists what was wrong in sl-violations.
      answer.violations.insert(contentsOf: found.map { $0.on("request") }, at: 0)
      return answer
    }
    var answer: OpenAPIMockAnswer
    if let unauthorized = found.first(where: { $0.status == 401 }) {
      answer = problem(
        401, "unauthorized", "Invalid security scheme used",
        "\(request.method) \(request.path): \(unauthorized.message); the document declares no 401 response")
      let challenges = found.filter { $0.status == 401 }.flatMap(\.challenges)
      if !challenges.isEmpty {
        answer.headers.append(("WWW-Authenticate", challenges.joined(separator: ",")))
      }
    } else if let media = found.first(where: { $0.status == 415 }) {
      answer = problem(415, "unsupported-media-type", "Invalid content type", media.message)
    } else {
      answer = problem(
        422, "unprocessable-entity", "Invalid request",
        "\(request.method) \(request.path): \(found.count) violation\(found.count == 1 ? "" : "s") of "
          + "\(document.title); the document declares no 422 or 400 response",
        extra: [("validation", .array(found.filter { !$0.isWarning }.map(\.json)))])
    }
    answer.note = note
    return answer
  }

  /// A problem+json answer (RFC 9457).
  func problem(
    _ status: Int, _ kind: String, _ title: String, _ detail: String, extra: [(String, JSONValue)] = []
  )
    -> OpenAPIMockAnswer
  {
    let body = JSONValue.object(
      JSONObject(
        pairs: [
          ("type", .string("https://mockserver.dev/problems/\(kind)")), ("title", .string(title)),
          ("status", .number(JSONNumber(status))), ("detail", .string(detail)),
        ] + extra))
    return OpenAPIMockAnswer(
      status: status, headers: [("Content-Type", "application/problem+json")],
      body: Array(body.serialized().utf8),
      note: "openapi \(status): \(detail)")
  }
}

extension MediaTypeName {
  /// True for `application/xml`, `text/xml` and `+xml` types.
  var isXML: Bool { essence.hasSuffix("/xml") || essence.hasSuffix("+xml") }
}
