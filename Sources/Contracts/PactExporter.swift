import Foundation
import HTTPCore
import Mappings
import MockJSON
import PactMatching

/// A concrete request: what `verify` sends and what a Pact interaction describes.
package struct ExampleRequest: Sendable, Hashable {
  /// `GET`, `POST`, …
  package var method: String
  /// Path and query, e.g. `/users/42?page=1`.
  package var url: String
  /// Header fields in order.
  package var headers: [(String, String)]
  /// Body text, or nil.
  package var body: String?

  /// Creates a request.
  package init(method: String, url: String, headers: [(String, String)] = [], body: String? = nil) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
  }

  /// Equality of all fields.
  package static func == (a: ExampleRequest, b: ExampleRequest) -> Bool {
    a.method == b.method && a.url == b.url && a.headers.elementsEqual(b.headers, by: ==) && a.body == b.body
  }

  /// Hash of method and URL.
  package func hash(into hasher: inout Hasher) {
    hasher.combine(method)
    hasher.combine(url)
  }

  /// The path without the query.
  package var path: String {
    String(url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0])
  }

  /// The query text after `?`, or empty.
  package var query: String {
    let parts = url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    return parts.count > 1 ? String(parts[1]) : ""
  }

  /// The request a stub stands for: its `metadata.x-example-request`, else one built from literal parts of
  /// its pattern (`url`/`urlPath`, `equalTo` query parameters, headers and body, `equalToJson` body,
  /// `equalTo` path parameters in a template). Nil, with the reason, when a part has no literal value.
  package static func from(_ stub: StubMapping) -> Result<ExampleRequest, ExampleRequestError> {
    if let example = stub.metadata?["x-example-request"], let method = example["method"]?.stringValue,
      let url = example["url"]?.stringValue
    {
      let headers =
        example["headers"]?.objectValue?.members.compactMap { m in m.value.stringValue.map { (m.key, $0) } }
        ?? []
      return .success(
        ExampleRequest(method: method, url: url, headers: headers, body: example["body"]?.stringValue))
    }
    let source = stub.source["request"] ?? .null
    // A stub for any method stands for GET.
    let method = stub.request.method?.rawValue ?? "GET"
    var url: String
    switch stub.request.url {
    case .url(let s), .urlPath(let s): url = s
    case .urlPathTemplate(let t):
      url = t.template
      for p in stub.request.pathParameters {
        guard let v = literal(source["pathParameters"]?[p.name]) else {
          return .failure(.init(reason: "path parameter \(p.name) has no literal value"))
        }
        url = url.split(separator: "{\(p.name)}", omittingEmptySubsequences: false).joined(separator: v)
      }
      // A variable without a matcher takes any segment: the example is 1 (the pact's path rule says so).
      while let open = url.firstIndex(of: "{"), let close = url[open...].firstIndex(of: "}") {
        url.replaceSubrange(open...close, with: "1")
      }
    case .urlPattern(let r), .urlPathPattern(let r):
      guard let example = RegexExample.generate(r.pattern), example.hasPrefix("/") else {
        return .failure(.init(reason: "the URL is a regular expression (\(stub.request.url.description))"))
      }
      url = example
    case .any: url = "/"
    }
    var query: [String] = []
    for q in source["queryParameters"]?.objectValue ?? JSONObject() {
      if q.value["absent"] != nil { continue }
      guard let v = literal(q.value) else {
        return .failure(.init(reason: "query parameter \(q.key) has no literal value"))
      }
      query.append(PercentEncoding.pathSegment(q.key) + "=" + PercentEncoding.pathSegment(v))
    }
    if !query.isEmpty { url += (url.contains("?") ? "&" : "?") + query.joined(separator: "&") }
    var headers: [(String, String)] = []
    for h in source["headers"]?.objectValue ?? JSONObject() {
      if h.value["absent"] != nil { continue }
      guard let v = literal(h.value) else {
        return .failure(.init(reason: "header \(h.key) has no literal value"))
      }
      headers.append((h.key, v))
    }
    if let credentials = stub.request.basicAuthCredentials {
      headers.append(
        (
          "Authorization",
          "Basic " + Base64Text.encode(Array("\(credentials.username):\(credentials.password)".utf8))
        ))
    }
    var body: String?
    for pattern in source["bodyPatterns"]?.arrayValue ?? [] {
      if let json = pattern["equalToJson"] {
        let document = json.stringValue.flatMap { try? JSONValue.parse($0) } ?? json
        body = (PactExporter.placeholders(document, ["$"]).example ?? document).serialized()
        if !headers.contains(where: { $0.0.lowercased() == "content-type" }) {
          headers.append(("Content-Type", "application/json"))
        }
      } else if let text = pattern["equalTo"]?.stringValue {
        body = text
      } else {
        return .failure(.init(reason: "a body pattern has no literal value"))
      }
    }
    return .success(ExampleRequest(method: method, url: url, headers: headers, body: body))
  }
}

/// A value a matcher accepts: `equalTo`, `contains`, a string its `matches` regex matches, the first
/// of `or`/`and`; nil when none can be made.
func literal(_ matcher: JSONValue?) -> String? {
  guard let matcher else { return nil }
  if let v = matcher.stringValue { return v }
  if let v = matcher["equalTo"]?.stringValue ?? matcher["contains"]?.stringValue { return v }
  if let r = matcher["matches"]?.stringValue { return RegexExample.generate(r) }
  if let list = matcher["and"]?.arrayValue ?? matcher["or"]?.arrayValue {
    for m in list { if let v = literal(m) { return v } }
  }
  return nil
}

/// Why a stub has no concrete request (add `metadata.x-example-request` to give one).
package struct ExampleRequestError: Error, Sendable, Hashable, CustomStringConvertible {
  /// E.g. `the URL is a regular expression`.
  package var reason: String
  /// The reason.
  package var description: String { reason }
}

/// How `export pact` writes: the specification, and the header and query names whose values are secrets.
package struct PactExportOptions: Sendable, Hashable {
  /// 3 or 4 (the default: V4, `--spec v3` for older brokers).
  package var specification: Int
  /// Header and query parameter names (any case) whose values are never written, beside `Authorization`,
  /// `Proxy-Authorization` and `Cookie`.
  package var redactedNames: Set<String>
  /// The tool and version named in the pact's metadata.
  package var generator: String

  /// Creates options.
  package init(specification: Int = 4, redactedNames: Set<String> = [], generator: String = "mockserver") {
    self.specification = specification
    self.redactedNames = Set(redactedNames.map { $0.lowercased() })
    self.generator = generator
  }

  /// Headers whose values are always secrets.
  static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie"]

  func isSecret(_ name: String) -> Bool {
    PactExportOptions.secretHeaders.contains(name.lowercased()) || redactedNames.contains(name.lowercased())
  }
}

/// Writes Pact specification V4 (or V3) files from stubs or from a request journal: no secret value (an
/// `Authorization`, `Cookie` or `--redact` value becomes a `regex` rule with an example value), no
/// volatile response header as an exact value, binary bodies byte-exact.
package enum PactExporter {
  /// A pact for `stubs`: one interaction per stub with a concrete request (see ``ExampleRequest/from(_:)``),
  /// skipping faults and the per-state copies made by ``PactImporter``.
  /// - Returns: the pact and the skipped stubs with reasons.
  package static func pact(
    consumer: String, provider: String, stubs: [StubMapping], options: PactExportOptions = PactExportOptions()
  ) -> (
    pact: JSONValue, skipped: [(String, String)]
  ) {
    var interactions: [JSONValue] = []
    var skipped: [(String, String)] = []
    var descriptions: Set<String> = []
    for stub in stubs {
      let label = stub.name ?? stub.file.map { "\($0) \(stub.location)" } ?? stub.id
      if stub.response.fault != nil {
        skipped.append((label, "it answers with a fault"))
        continue
      }
      if stub.scenarioName?.hasPrefix("pact:") == true { continue }
      let request: ExampleRequest
      switch ExampleRequest.from(stub) {
      case .success(let r): request = r
      case .failure(let e):
        skipped.append((label, e.reason))
        continue
      }
      var description =
        stub.metadata?["pact"]?["description"]?.stringValue ?? stub.name ?? "\(request.method) \(request.url)"
      if !descriptions.insert(description).inserted {
        description += " (\(stub.response.status))"
        descriptions.insert(description)
      }
      var states = stub.metadata?["pact"]?["providerStates"]?.arrayValue ?? []
      if states.isEmpty, let state = stub.requiredScenarioState, state != StubMapping.scenarioStarted {
        states = [
          .object(JSONObject(pairs: [("name", .string("\(stub.scenarioName ?? "scenario") is \(state)"))]))
        ]
      }
      let responseHeaders = stub.response.headers.map { ($0.name, $0.value) }
      var made = interaction(
        description: description, states: states, request: request, requestRules: requestRules(stub),
        status: stub.response.status, headers: responseHeaders, body: stub.response.body,
        bodyRules: responseBodyRules(stub.metadata), options: options)
      // An imported V4 interaction's pending flag, comments and key are written back.
      if options.specification >= 4, case .object(var o) = made {
        for key in ["pending", "comments", "key"] {
          if let v = stub.metadata?["pact"]?[key] { o.members.append(.init(key: key, value: v)) }
        }
        made = .object(o)
      }
      interactions.append(made)
    }
    return (document(consumer: consumer, provider: provider, interactions, options), skipped)
  }

  /// A pact from journal serve events (`GET /__admin/requests`): each matched request once (same method,
  /// URL and body), with the headers its stub required and the stub's response.
  package static func pact(
    consumer: String, provider: String, journal: JSONValue, options: PactExportOptions = PactExportOptions()
  ) -> JSONValue {
    var interactions: [JSONValue] = []
    var seen: Set<String> = []
    let events = (journal["requests"]?.arrayValue ?? []).reversed()
    for event in events where event["wasMatched"]?.boolValue == true {
      guard let request = event["request"], let method = request["method"]?.stringValue,
        let url = request["url"]?.stringValue, let stub = event["stubMapping"],
        let response = stub["response"]
      else { continue }
      let body = request["body"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
      guard seen.insert("\(method) \(url) \(body ?? "")").inserted else { continue }
      // The headers its stub required: its own matchers', or an imported interaction's.
      let pactHeaders = stub["request"]?["customMatcher"]?["parameters"]?["request"]?["headers"]?.objectValue?
        .keys
      let wanted = Set(
        ((stub["request"]?["headers"]?.objectValue?.keys ?? []) + (pactHeaders ?? [])).map { $0.lowercased() }
          + ["content-type"])
      let requestHeaders = (request["headers"]?.objectValue ?? JSONObject()).members.compactMap {
        m -> (String, String)? in
        guard wanted.contains(m.key.lowercased()) else { return nil }
        return (
          m.key,
          m.value.stringValue ?? m.value.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""
        )
      }
      let headers = (response["headers"]?.objectValue ?? JSONObject()).members.map { m in
        (
          m.key,
          m.value.stringValue ?? m.value.arrayValue?.compactMap(\.stringValue).joined(separator: ", ") ?? ""
        )
      }
      var bodyBytes: [UInt8] = []
      if let json = response["jsonBody"] {
        bodyBytes = Array(json.serialized().utf8)
      } else if let text = response["body"]?.stringValue {
        bodyBytes = Array(text.utf8)
      } else if let b64 = response["base64Body"]?.stringValue, let data = Data(base64Encoded: b64) {
        bodyBytes = [UInt8](data)
      }
      let name = stub["name"]?.stringValue ?? "\(method) \(url)"
      let states = stub["metadata"]?["pact"]?["providerStates"]?.arrayValue ?? []
      interactions.append(
        interaction(
          description: name
            + (interactions.contains { $0["description"]?.stringValue == name } ? " (\(url))" : ""),
          states: states,
          request: ExampleRequest(method: method, url: url, headers: requestHeaders, body: body),
          requestRules: pactRules(stub), status: response["status"]?.numberValue?.intValue ?? 200,
          headers: headers, body: bodyBytes, bodyRules: responseBodyRules(stub["metadata"]), options: options)
      )
    }
    return document(consumer: consumer, provider: provider, interactions, options)
  }

  static func document(
    consumer: String, provider: String, _ interactions: [JSONValue], _ options: PactExportOptions
  ) -> JSONValue {
    .object(
      JSONObject(pairs: [
        ("consumer", .object(JSONObject(pairs: [("name", .string(consumer))]))),
        ("provider", .object(JSONObject(pairs: [("name", .string(provider))]))),
        ("interactions", .array(interactions)),
        (
          "metadata",
          .object(
            JSONObject(pairs: [
              (
                "pactSpecification",
                .object(
                  JSONObject(pairs: [("version", .string(options.specification >= 4 ? "4.0" : "3.0.0"))]))
              ),
              (
                "mockserver",
                .object(
                  JSONObject(pairs: [
                    ("exportedBy", .string("mockserver export pact")),
                    ("version", .string(options.generator)),
                  ]))
              ),
            ]))
        ),
      ]))
  }

  /// Request matching rules from the stub's non-literal matchers (regex headers and query parameters).
  static func requestRules(_ stub: StubMapping) -> JSONValue? {
    // An imported interaction keeps the pact's own rules (V3/V4 form), unloosened.
    if let pact = stub.request.pact { return pact.rules.isEmpty ? nil : pact.rules.v3JSON }
    var pathRule: JSONValue?
    switch stub.request.url {
    case .urlPathTemplate(let t):
      // Each variable one segment (or what its path parameter matcher accepts, when that is a regex).
      var regex = ""
      var rest = Substring(t.template)
      while let open = rest.firstIndex(of: "{"), let close = rest[open...].firstIndex(of: "}") {
        regex += regexLiteral(String(rest[..<open]))
        let name = String(rest[rest.index(after: open)..<close])
        regex +=
          stub.source["request"]?["pathParameters"]?[name]?["matches"]?.stringValue.map { "(\($0))" }
          ?? "[^/]+"
        rest = rest[rest.index(after: close)...]
      }
      pathRule = regexRule(regex + regexLiteral(String(rest)))
    case .urlPathPattern(let r):
      pathRule = regexRule(r.pattern)
    default:
      break
    }
    var top = headerAndQueryRules(stub)?.objectValue ?? JSONObject()
    if let pathRule { top.members.insert(.init(key: "path", value: pathRule), at: 0) }
    // JsonUnit placeholders of an equalToJson body become the Pact rules that stand for them.
    for pattern in stub.source["request"]?["bodyPatterns"]?.arrayValue ?? [] {
      guard let json = pattern["equalToJson"] else { continue }
      let document = json.stringValue.flatMap { try? JSONValue.parse($0) } ?? json
      let rules = placeholders(document, ["$"]).rules
      if !rules.isEmpty { top.members.append(.init(key: "body", value: .object(JSONObject(pairs: rules)))) }
    }
    return top.members.isEmpty ? nil : .object(top)
  }

  /// An `equalToJson` document's JsonUnit placeholders (`${json-unit.any-string}`, `…any-number}`,
  /// `…any-boolean}`, `…regex}PATTERN`, `…ignore}`): the document with example values in their place, and a
  /// Pact rule for each (`type`, `number`, `boolean`, `regex`; `ignore` as `type`, the closest Pact has).
  /// `ignore-element` members are left out of the example.
  static func placeholders(_ value: JSONValue, _ path: [String]) -> (
    example: JSONValue?, rules: [(String, JSONValue)]
  ) {
    func rule(_ r: JSONValue) -> (String, JSONValue) {
      (PactDocPath(fragments: path).description, .object(JSONObject(pairs: [("matchers", .array([r]))])))
    }
    func match(_ name: String) -> JSONValue { .object(JSONObject(pairs: [("match", .string(name))])) }
    switch value {
    case .string(let s):
      guard let placeholder = JSONComparison.Placeholder(s) else { return (value, []) }
      switch placeholder {
      case .anyString, .ignore, .custom: return (.string("example"), [rule(match("type"))])
      case .anyNumber: return (.number(JSONNumber(1)), [rule(match("number"))])
      case .anyBoolean: return (.bool(true), [rule(match("boolean"))])
      case .ignoreElement: return (nil, [])
      case .regex(let pattern):
        return (
          .string(RegexExample.generate(pattern) ?? ""),
          [rule(.object(JSONObject(pairs: [("match", .string("regex")), ("regex", .string(pattern))])))]
        )
      }
    case .object(let o):
      var members: [JSONObject.Member] = []
      var rules: [(String, JSONValue)] = []
      for m in o {
        let (example, inner) = placeholders(m.value, path + [m.key])
        if let example { members.append(.init(key: m.key, value: example)) }
        rules += inner
      }
      return (.object(JSONObject(members)), rules)
    case .array(let items):
      var out: [JSONValue] = []
      var rules: [(String, JSONValue)] = []
      for (i, item) in items.enumerated() {
        let (example, inner) = placeholders(item, path + [String(i)])
        if let example { out.append(example) }
        rules += inner
      }
      return (.array(out), rules)
    default:
      return (value, [])
    }
  }

  /// `matches` headers and query parameters as `regex` rules.
  static func headerAndQueryRules(_ stub: StubMapping) -> JSONValue? {
    var header: [(String, JSONValue)] = []
    var query: [(String, JSONValue)] = []
    let source = stub.source["request"] ?? .null
    func rule(_ matcher: JSONValue) -> JSONValue? {
      guard let regex = matcher["matches"]?.stringValue, regex != "(?s).*" else { return nil }
      return .object(
        JSONObject(pairs: [
          (
            "matchers",
            .array([.object(JSONObject(pairs: [("match", .string("regex")), ("regex", .string(regex))]))])
          )
        ]))
    }
    for h in source["headers"]?.objectValue ?? JSONObject() {
      if let r = rule(h.value) { header.append((h.key, r)) }
    }
    for q in source["queryParameters"]?.objectValue ?? JSONObject() {
      if let r = rule(q.value) { query.append((q.key, r)) }
    }
    var pairs: [(String, JSONValue)] = []
    if !header.isEmpty { pairs.append(("header", .object(JSONObject(pairs: header)))) }
    if !query.isEmpty { pairs.append(("query", .object(JSONObject(pairs: query)))) }
    return pairs.isEmpty ? nil : .object(JSONObject(pairs: pairs))
  }

  /// Response headers a provider cannot repeat: left out of the pact.
  static let volatileResponseHeaders: Set<String> = [
    "content-length", "transfer-encoding", "date", "connection", "keep-alive", "etag", "last-modified",
    "set-cookie", "age", "expires", "server", "x-request-id", "x-correlation-id", "x-trace-id", "request-id",
    "traceparent", "tracestate", "x-amzn-requestid", "x-amzn-trace-id", "cf-ray", "x-runtime",
    "matched-stub-id",
    "matched-stub-name", "x-response-time",
  ]

  /// A secret's example value and the `regex` rule that stands for it.
  static func secretExample(_ name: String, _ value: String) -> (example: String, regex: String) {
    switch name.lowercased() {
    case "authorization", "proxy-authorization":
      if let space = value.firstIndex(of: " "), !value[..<space].isEmpty {
        let scheme = String(value[..<space])
        let example = scheme.lowercased() == "basic" ? "RVhBTVBMRQ==" : "EXAMPLE"
        return ("\(scheme) \(example)", "\(regexLiteral(scheme)) .+")
      }
      return ("EXAMPLE", ".+")
    case "cookie":
      let names = value.split(separator: ";").compactMap {
        $0.split(separator: "=", maxSplits: 1).first.map { $0.trimmingCharacters(in: .whitespaces) }
      }.filter { !$0.isEmpty }
      if names.isEmpty { return ("session=EXAMPLE", ".+") }
      return (names.map { "\($0)=EXAMPLE" }.joined(separator: "; "), ".+")
    default:
      return ("EXAMPLE", ".+")
    }
  }

  /// A regex for a `Location` whose last segment is an id (digits or a UUID), nil for other values.
  static func locationPattern(_ value: String) -> String? {
    let idPattern = try? NSRegularExpression(
      pattern: "[0-9]+|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
    guard let idPattern else { return nil }
    let range = NSRange(value.startIndex..., in: value)
    let matches = idPattern.matches(in: value, range: range)
    guard !matches.isEmpty else { return nil }
    var out = ""
    var last = value.startIndex
    for m in matches {
      guard let r = Range(m.range, in: value) else { continue }
      out += regexLiteral(String(value[last..<r.lowerBound]))
      out += value[r].contains("-") ? "[0-9a-fA-F-]{36}" : "[0-9]+"
      last = r.upperBound
    }
    return out + regexLiteral(String(value[last...]))
  }

  /// An imported interaction's own request rules (V3/V4 form), from its stub's JSON.
  static func pactRules(_ stub: JSONValue) -> JSONValue? {
    guard let matcher = stub["request"]?["customMatcher"], matcher["name"] == .string("pact"),
      let rules = try? PactMatchingRules(
        json: matcher["parameters"]?["request"]?["matchingRules"], jsonPath: "$"),
      !rules.isEmpty
    else { return nil }
    return rules.v3JSON
  }

  static func existingRule(_ rules: JSONValue?, _ category: String, _ name: String) -> JSONValue? {
    rules?[category]?.objectValue?.members.first { $0.key.lowercased() == name.lowercased() }?.value
  }

  /// `text` as a regular expression that matches only it (metacharacters escaped, `/` left alone).
  static func regexLiteral(_ text: String) -> String {
    var out = ""
    for c in text {
      if "\\^$.|?*+()[]{}".contains(c) { out.append("\\") }
      out.append(c)
    }
    return out
  }

  static func regexRule(_ regex: String) -> JSONValue {
    .object(
      JSONObject(pairs: [
        (
          "matchers",
          .array([.object(JSONObject(pairs: [("match", .string("regex")), ("regex", .string(regex))]))])
        )
      ]))
  }

  /// `rules` with `extra` added to its `category` (by name).
  static func adding(_ extra: [(String, JSONValue)], to category: String, in rules: JSONValue?) -> JSONValue?
  {
    guard !extra.isEmpty else { return rules }
    var top = rules?.objectValue ?? JSONObject()
    var inner = top[category]?.objectValue ?? JSONObject()
    for (name, rule) in extra {
      inner.members.removeAll { $0.key.lowercased() == name.lowercased() }
      inner.members.append(.init(key: name, value: rule))
    }
    top.members.removeAll { $0.key == category }
    top.members.append(.init(key: category, value: .object(inner)))
    return .object(top)
  }

  /// A body as the specification writes it: JSON as JSON, text as text, anything else base64 (V4:
  /// `{"content", "contentType", "encoded"}`; V3: the base64 text, as pact-reference writes binary bodies).
  static func bodyJSON(_ bytes: [UInt8], contentType: String?, _ options: PactExportOptions) -> JSONValue {
    let type = contentType.flatMap(PactContentType.init)
    let text = String(validating: bytes, as: UTF8.self)
    if type?.isJSON ?? false, let json = try? JSONValue.parse(bytes: bytes) {
      guard options.specification >= 4 else { return json }
      return .object(
        JSONObject(pairs: [
          ("content", json), ("contentType", .string(contentType ?? "application/json")),
          ("encoded", .bool(false)),
        ]))
    }
    let isText = (type.map { !$0.isBinary } ?? true) && text != nil
    if options.specification >= 4 {
      return .object(
        JSONObject(pairs: [
          ("content", .string(isText ? (text ?? "") : Data(bytes).base64EncodedString())),
          ("contentType", .string(contentType ?? (isText ? "text/plain" : "application/octet-stream"))),
          ("encoded", isText ? .bool(false) : .string("base64")),
        ]))
    }
    return .string(isText ? (text ?? "") : Data(bytes).base64EncodedString())
  }

  static func headersJSON(_ headers: [(String, String)], _ options: PactExportOptions) -> JSONValue {
    .object(
      JSONObject(
        pairs: headers.map {
          ($0.0, options.specification >= 4 ? .array([.string($0.1)]) : .string($0.1))
        }))
  }

  /// How a stub's response body is matched in the pact: an imported interaction's own body rules
  /// (`metadata.pact.responseMatchingRules`, its values exact elsewhere, as the pact said); else by type
  /// from the root (`$`), as `verify` judges a fixture (its values are examples: an id or a date the provider
  /// makes anew each time is no mismatch, a missing field or a changed type is), unless the stub asks for
  /// its values to be compared (`metadata.x-verify.values`).
  enum ResponseBodyRules {
    /// Pact paths and their matchers.
    case rules([(String, JSONValue)])
    /// `$` by type.
    case byType
    /// Exact values.
    case exact
  }

  static func responseBodyRules(_ metadata: JSONValue?) -> ResponseBodyRules {
    if let pact = metadata?["pact"] {
      guard let rules = pact["responseMatchingRules"]?.objectValue else { return .exact }
      return .rules(
        rules.members.map { m in
          (
            m.key,
            .object(JSONObject(pairs: [("matchers", m.value.arrayValue.map(JSONValue.array) ?? m.value)]))
          )
        })
    }
    return metadata?["x-verify"]?["values"]?.boolValue == true ? .exact : .byType
  }

  static func interaction(
    description: String, states: [JSONValue], request: ExampleRequest, requestRules: JSONValue?, status: Int,
    headers: [(String, String)], body: [UInt8], bodyRules: ResponseBodyRules = .exact,
    options: PactExportOptions
  ) -> JSONValue {
    var req: [(String, JSONValue)] = [("method", .string(request.method)), ("path", .string(request.path))]
    var requestRules = requestRules
    if !request.query.isEmpty {
      var secretQuery: [(String, JSONValue)] = []
      let query = PactImporter.queryValues(.string(request.query)).map { name, values in
        guard options.isSecret(name) || values.contains("REDACTED") else { return (name, values) }
        secretQuery.append((name, regexRule(".+")))
        return (name, values.map { _ in "EXAMPLE" })
      }
      req.append(
        ("query", .object(JSONObject(pairs: query.map { ($0.0, .array($0.1.map(JSONValue.string))) }))))
      requestRules = adding(secretQuery, to: "query", in: requestRules)
    }
    if !request.headers.isEmpty {
      var secretHeaders: [(String, JSONValue)] = []
      let written = request.headers.map { name, value -> (String, String) in
        guard options.isSecret(name) || value == "REDACTED" || value.hasSuffix(" REDACTED") else {
          return (name, value)
        }
        // A rule the stub already has for it (an imported pact's) is kept, with an example it accepts.
        if let rule = existingRule(requestRules, "header", name),
          let regex = rule["matchers"]?.arrayValue?.first?["regex"]?.stringValue,
          let example = RegexExample.generate(regex)
        {
          return (name, example)
        }
        let (example, regex) = secretExample(name, value)
        secretHeaders.append((name, regexRule(regex)))
        return (name, example)
      }
      req.append(("headers", headersJSON(written, options)))
      requestRules = adding(secretHeaders, to: "header", in: requestRules)
    }
    if let body = request.body {
      let contentType = request.headers.first { $0.0.lowercased() == "content-type" }?.1
      req.append(("body", bodyJSON(Array(body.utf8), contentType: contentType, options)))
    }
    if let requestRules { req.append(("matchingRules", requestRules)) }
    var res: [(String, JSONValue)] = [("status", .number(JSONNumber(status)))]
    var responseRules: [(String, JSONValue)] = []
    var kept: [(String, String)] = []
    for (name, value) in headers where !volatileResponseHeaders.contains(name.lowercased()) {
      if options.isSecret(name) || value == "REDACTED" { continue }
      if name.lowercased() == "location", let pattern = locationPattern(value) {
        responseRules.append((name, regexRule(pattern)))
      }
      kept.append((name, value))
    }
    if !kept.isEmpty { res.append(("headers", headersJSON(kept, options))) }
    var rules = adding(responseRules, to: "header", in: nil)
    if !body.isEmpty {
      let contentType = kept.first { $0.0.lowercased() == "content-type" }?.1
      let written = bodyJSON(body, contentType: contentType, options)
      res.append(("body", written))
      let isJSON = contentType.flatMap(PactContentType.init)?.isJSON ?? false
      switch bodyRules {
      case .rules(let list) where !list.isEmpty: rules = adding(list, to: "body", in: rules)
      case .byType where isJSON && (try? JSONValue.parse(bytes: body)) != nil:
        rules = adding(
          [
            (
              "$",
              .object(
                JSONObject(pairs: [
                  ("matchers", .array([.object(JSONObject(pairs: [("match", .string("type"))]))]))
                ]))
            )
          ],
          to: "body", in: rules)
      default: break
      }
    }
    if let rules { res.append(("matchingRules", rules)) }
    var pairs: [(String, JSONValue)] = []
    if options.specification >= 4 { pairs.append(("type", .string("Synchronous/HTTP"))) }
    pairs.append(("description", .string(description)))
    if !states.isEmpty { pairs.append(("providerStates", .array(states))) }
    pairs.append(("request", .object(JSONObject(pairs: req))))
    pairs.append(("response", .object(JSONObject(pairs: res))))
    return .object(JSONObject(pairs: pairs))
  }
}

/// Base64 (RFC 4648) for Basic credentials.
enum Base64Text {
  static func encode(_ bytes: [UInt8]) -> String {
    let table = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    var out = ""
    var i = 0
    while i < bytes.count {
      let b0 = bytes[i]
      let b1 = i + 1 < bytes.count ? bytes[i + 1] : 0
      let b2 = i + 2 < bytes.count ? bytes[i + 2] : 0
      out.append(table[Int(b0 >> 2)])
      out.append(table[Int((b0 & 3) << 4 | b1 >> 4)])
      out.append(i + 1 < bytes.count ? table[Int((b1 & 15) << 2 | b2 >> 6)] : "=")
      out.append(i + 2 < bytes.count ? table[Int(b2 & 63)] : "=")
      i += 3
    }
    return out
  }
}
