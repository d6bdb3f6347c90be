import HTTPCore
import JSONSchema
import MockJSON

/// Turns an OpenAPI document into WireMock stub mappings, one file's worth per operation.
///
/// For every operation and declared response status, one stub per example (`examples` by name, else
/// `example`, else the schema's example, else a value generated from the schema with the seed). Path
/// parameters become `urlPathTemplate`. Selection follows Prism:
/// - no `Prefer` header: the lowest 2xx status (else the first declared) with its first example;
/// - `Prefer: code=404`: that status, first example;
/// - `Prefer: example=name`: that named example of the default status;
/// - `Prefer: code=404, example=name`: both.
///
/// Each stub's `metadata` carries `x-openapi` (operation, status, media type, example name) and
/// `x-example-request` (a concrete request for `mockserver verify`).
package struct OpenAPIStubGenerator {
  /// The document.
  package let document: OpenAPIDocument
  /// Seed for generated values.
  package var seed: UInt64

  /// Creates a generator.
  package init(document: OpenAPIDocument, seed: UInt64 = 1) {
    self.document = document
    self.seed = seed
  }

  /// The stubs of one operation.
  package struct OperationStubs: Sendable {
    /// The operation's file-name-safe name (`operationId`).
    package var name: String
    /// Stub mapping JSON objects.
    package var mappings: [JSONValue]

    /// `{"mappings": [...]}`.
    package var file: JSONValue { .object(JSONObject(pairs: [("mappings", .array(mappings))])) }
  }

  /// Stubs for every operation, in document order.
  package func generate() -> [OperationStubs] {
    var sampler = SchemaSampler(document: document, seed: seed)
    var usedNames: [String: Int] = [:]
    return document.operations.map { op in
      var name = FixtureFileName.make(op.name)
      if let n = usedNames[name] {
        usedNames[name] = n + 1
        name += "-\(n + 1)"
      } else {
        usedNames[name] = 1
      }
      return OperationStubs(name: name, mappings: stubs(for: op, &sampler))
    }
  }

  /// Every generated stub, flattened.
  package func allMappings() -> [JSONValue] { generate().flatMap(\.mappings) }

  /// The status served without a `Prefer` header: lowest 2xx, else the first declared.
  package static func defaultResponse(_ op: OpenAPIOperation) -> OpenAPIResponse? {
    let success = op.responses.filter { $0.status.hasPrefix("2") }.sorted { $0.status < $1.status }
    return success.first ?? op.responses.first
  }

  func stubs(for op: OpenAPIOperation, _ sampler: inout SchemaSampler) -> [JSONValue] {
    var out: [JSONValue] = []
    let defaultStatus = OpenAPIStubGenerator.defaultResponse(op)?.status
    let exampleRequest = exampleRequest(op, &sampler)
    for response in op.responses {
      let status = OpenAPIStubGenerator.statusCode(response.status)
      let isDefault = response.status == defaultStatus
      let media = response.content.first(where: \.isJSON) ?? response.content.first
      var examples: [(name: String?, value: JSONValue?, generated: Bool)] = []
      if let media {
        for (name, value) in media.examples { examples.append((name, value, false)) }
        if examples.isEmpty, let e = media.example { examples.append((nil, e, false)) }
        if examples.isEmpty, let location = media.schemaLocation {
          let value = sampler.sample(at: location)
          let fromSchema = document.schema(at: location).map { document.dereference($0, at: location).0 }
          let declared = fromSchema?["example"] != nil
          examples.append((nil, value, !declared))
        }
        if examples.isEmpty { examples.append((nil, nil, false)) }
      } else {
        examples.append((nil, nil, false))
      }
      for (k, example) in examples.enumerated() {
        func stub(prefer: [String], priority: Int) -> JSONValue {
          makeStub(
            op, response, status: status, media: media, example: example, prefer: prefer, priority: priority,
            exampleRequest: exampleRequest)
        }
        let code = "code=\(status)"
        if k == 0 {
          if isDefault { out.append(stub(prefer: [], priority: 5)) }
          out.append(stub(prefer: [code], priority: 3))
        }
        if let name = example.name {
          let exampleToken = "example=\(name)"
          if isDefault { out.append(stub(prefer: [exampleToken], priority: 2)) }
          out.append(stub(prefer: [code, exampleToken], priority: 1))
        }
      }
    }
    return out
  }

  /// `200` for `200`, `2XX` → 200, `default` → 500.
  static func statusCode(_ status: String) -> Int {
    if let n = Int(status) { return n }
    if status.uppercased().hasSuffix("XX"), let first = status.first?.wholeNumberValue { return first * 100 }
    return 500
  }

  func makeStub(
    _ op: OpenAPIOperation, _ response: OpenAPIResponse, status: Int, media: OpenAPIMediaType?,
    example: (name: String?, value: JSONValue?, generated: Bool), prefer: [String], priority: Int,
    exampleRequest: JSONValue
  ) -> JSONValue {
    var request: [(String, JSONValue)] = [("method", .string(op.method))]
    if op.path.contains("{") {
      if PathTemplateMatcher.isWholeSegmentTemplate(op.path) {
        request.append(("urlPathTemplate", .string(op.path)))
      } else {
        request.append(("urlPathPattern", .string(PathTemplateMatcher.regex(op.path))))
      }
    } else {
      request.append(("urlPath", .string(op.path)))
    }
    if !prefer.isEmpty {
      let pattern =
        prefer.map { token in
          "(?=(?:.*[\\s,;])?\(OpenAPIStubGenerator.regexEscape(token))(?:[\\s,;].*)?$)"
        }.joined() + ".*"
      request.append(
        (
          "headers",
          .object(
            JSONObject(pairs: [("Prefer", .object(JSONObject(pairs: [("matches", .string(pattern))])))]))
        ))
    }
    var responseFields: [(String, JSONValue)] = [("status", .number(JSONNumber(status)))]
    if let media, let value = example.value {
      let contentType = media.name.contains("*") ? "application/json" : media.name
      responseFields.append(
        ("headers", .object(JSONObject(pairs: [("Content-Type", .string(contentType))]))))
      if media.isJSON || media.name.contains("*") {
        responseFields.append(("jsonBody", value))
      } else {
        responseFields.append(("body", .string(value.stringValue ?? value.serialized())))
      }
    }
    var meta: [(String, JSONValue)] = [
      ("operation", .string(op.name)), ("method", .string(op.method)), ("path", .string(op.path)),
      ("status", .string(response.status)),
    ]
    if let media { meta.append(("mediaType", .string(media.name))) }
    if let name = example.name { meta.append(("example", .string(name))) }
    if example.generated { meta.append(("generated", .bool(true))) }
    if !prefer.isEmpty { meta.append(("prefer", .string(prefer.joined(separator: ", ")))) }
    let name =
      ([op.method, op.path, String(status)] + (example.name.map { [$0] } ?? [])
      + (prefer.isEmpty ? [] : ["(Prefer: \(prefer.joined(separator: ", ")))"]))
      .joined(separator: " ")
    return .object(
      JSONObject(pairs: [
        ("id", .string(OpenAPIStubGenerator.stableID(name))),
        ("name", .string(name)),
        ("priority", .number(JSONNumber(priority))),
        ("request", .object(JSONObject(pairs: request))),
        ("response", .object(JSONObject(pairs: responseFields))),
        (
          "metadata",
          .object(
            JSONObject(pairs: [
              ("x-openapi", .object(JSONObject(pairs: meta))),
              ("x-example-request", exampleRequest),
            ]))
        ),
      ]))
  }

  /// A concrete request for the operation: path parameters and required query parameters filled from
  /// their examples or schemas.
  func exampleRequest(_ op: OpenAPIOperation, _ sampler: inout SchemaSampler) -> JSONValue {
    var path = op.path
    var query: [String] = []
    for p in op.parameters where p.location == "path" || (p.location == "query" && p.required) {
      var value = p.example ?? p.schemaLocation.flatMap { sampler.sample(at: $0) } ?? .string("1")
      if case .array(let items) = value { value = items.first ?? .string("1") }
      let text = value.stringValue ?? value.serialized()
      if p.location == "path" {
        path = path.split(separator: "{" + p.name + "}", omittingEmptySubsequences: false).joined(
          separator: PercentEncoding.pathSegment(text))
      } else {
        query.append(PercentEncoding.pathSegment(p.name) + "=" + PercentEncoding.pathSegment(text))
      }
    }
    var fields: [(String, JSONValue)] = [
      ("method", .string(op.method)),
      ("url", .string(path + (query.isEmpty ? "" : "?" + query.joined(separator: "&")))),
    ]
    if let body = op.requestBody.first(where: \.isJSON) {
      let value =
        body.examples.first?.1 ?? body.example ?? body.schemaLocation.flatMap { sampler.sample(at: $0) }
      if let value {
        fields.append(("headers", .object(JSONObject(pairs: [("Content-Type", .string(body.name))]))))
        fields.append(("body", .string(value.serialized())))
      }
    }
    return .object(JSONObject(pairs: fields))
  }

  static func regexEscape(_ s: String) -> String {
    var out = ""
    for c in s {
      if "\\^$.|?*+()[]{}".contains(c) { out.append("\\") }
      out.append(c)
    }
    return out
  }

  /// A UUID-shaped id derived from `text`, so regenerating gives the same ids.
  static func stableID(_ text: String) -> String { SplitMix64.stableUUIDString(text) }
}

extension PathTemplateMatcher {
  /// True when every `{name}` is a whole path segment (WireMock's `urlPathTemplate` form).
  package static func isWholeSegmentTemplate(_ template: String) -> Bool {
    template.split(separator: "/").allSatisfy { seg in
      !seg.contains("{") || (seg.hasPrefix("{") && seg.hasSuffix("}") && seg.filter { $0 == "{" }.count == 1)
    }
  }

  /// An anchored-by-the-matcher regex for a template with parameters inside segments
  /// (`/files/{name}.json` → `/files/[^/]+\.json`).
  package static func regex(_ template: String) -> String {
    var out = ""
    var inside = false
    for c in template {
      if c == "{" {
        inside = true
        out += "[^/]+"
      } else if c == "}" {
        inside = false
      } else if !inside {
        out += OpenAPIStubGenerator.regexEscape(String(c))
      }
    }
    return out
  }
}

/// Percent-encoding for concrete request paths and queries built from examples.
enum PercentEncoding {
  static func pathSegment(_ s: String) -> String {
    var out = ""
    for byte in s.utf8 {
      let c = Character(Unicode.Scalar(byte))
      if (byte >= 48 && byte <= 57) || (byte >= 65 && byte <= 90) || (byte >= 97 && byte <= 122)
        || "-._~".contains(c)
      {
        out.append(c)
      } else {
        out += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
      }
    }
    return out
  }
}
