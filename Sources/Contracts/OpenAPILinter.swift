import HTTPCore
import JSONSchema
import Mappings
import MockJSON

/// Checks stubs against an OpenAPI document (`mockserver lint --openapi SPEC`): for each stub whose
/// request matches an operation, the response status must be declared, its `Content-Type` declared for
/// that status, and a JSON body must conform to the schema. Every finding names the fixture file, the JSON
/// path in the stub and the schema path:
/// `mappings/users.json: $.response.jsonBody.data.email: expected a string of format email
/// (#/components/schemas/User/properties/email), found 42`.
package struct OpenAPILinter: Sendable {
  /// The document.
  package let document: OpenAPIDocument

  /// Creates a linter.
  package init(document: OpenAPIDocument) { self.document = document }

  /// The operation a stub's request pattern addresses, or nil (regex URLs, no URL, or nothing declared).
  package func operation(for stub: StubMapping) -> OpenAPIOperation? {
    guard let method = stub.request.method?.rawValue else { return nil }
    switch stub.request.url {
    case .url(let s), .urlPath(let s):
      let path = String(s.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
      return document.operation(method: method, path: path)?.0
    case .urlPathTemplate(let t):
      return document.operation(method: method, template: t.template)
    case .urlPattern, .urlPathPattern, .any:
      // A concrete example request (x-example-request) tells which operation a regex stub stands for.
      if let url = stub.metadata?["x-example-request"]?["url"]?.stringValue {
        let path = String(
          url.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? "")
        return document.operation(method: method, path: path)?.0
      }
      return nil
    }
  }

  /// Every finding for `stubs` (errors; a stub that addresses no operation is a warning).
  package func check(_ stubs: [StubMapping]) -> [FixtureProblem] {
    stubs.flatMap(check).map {
      // A Swagger 2.0 document's pointers name the user's file, not its OpenAPI 3 form.
      var problem = $0
      problem.message = document.originalPointers(in: problem.message)
      return problem
    }
  }

  /// The findings for one stub.
  package func check(_ stub: StubMapping) -> [FixtureProblem] {
    let file = stub.file ?? "(admin stub \(stub.id))"
    let base = stub.location
    guard let op = operation(for: stub) else {
      let what =
        stub.request.method.map { "\($0.rawValue) \(stub.request.url.value)" } ?? stub.request.url.description
      return [
        FixtureProblem(
          severity: .warning, file: file, path: base + ".request",
          message: "no operation of \(document.title) matches \(what); not checked")
      ]
    }
    var problems: [FixtureProblem] = []
    let response = stub.response
    guard response.fault == nil else { return [] }
    guard let declared = op.response(for: response.status) else {
      let statuses = op.responses.map(\.status).joined(separator: ", ")
      problems.append(
        .error(
          file: file, path: base + ".response.status",
          expected:
            "a status declared for \(op.method) \(op.path) (\(statuses)) (\(op.location.appending("responses")))",
          found: String(response.status)))
      return problems
    }
    for violation in OpenAPILinter.responseViolations(response, declared, document: document) {
      problems.append(
        FixtureProblem(
          severity: .error, file: file, path: path(for: violation, stub), message: violation.message))
    }
    return problems
  }

  /// Where a body violation is in the stub file: under `jsonBody` when the stub has one (and no envelope),
  /// else after `response.body`.
  func path(for violation: SchemaViolation, _ stub: StubMapping) -> String {
    let base = stub.location
    if violation.instancePath.hasPrefix("$.response.") || violation.instancePath == "$.response" {
      return base + violation.instancePath.dropFirst()
    }
    switch stub.response.bodySource {
    case .json: return base + ".response.jsonBody" + violation.instancePath.dropFirst()
    case .file(let name): return base + ".response.bodyFileName (\(name) " + violation.instancePath + ")"
    case .envelope: return base + ".response (with its envelope: " + violation.instancePath + ")"
    default: return base + ".response.body (" + violation.instancePath + ")"
    }
  }

  /// Violations of one response against its declared response: the content type (instance path
  /// `$.response.headers.Content-Type`) and the body (instance paths inside the body, `$…`).
  package static func responseViolations(
    _ response: ResponseDefinition, _ declared: OpenAPIResponse, document: OpenAPIDocument
  ) -> [SchemaViolation] {
    responseViolations(
      status: response.status, headers: response.headers, body: response.body, declared, document: document)
  }

  /// Violations of an HTTP answer against a declared response (see the other overload).
  package static func responseViolations(
    status: Int, headers: HTTPHeaders, body: [UInt8], _ declared: OpenAPIResponse, document: OpenAPIDocument
  ) -> [SchemaViolation] {
    let contentLocation = declared.location.appending("content")
    if declared.content.isEmpty {
      if !body.isEmpty {
        return [
          SchemaViolation(
            instancePath: "$.response.body", schemaPath: contentLocation.description,
            expected: "no content (none declared for \(declared.status))", found: "\(body.count) bytes")
        ]
      }
      return []
    }
    guard let contentType = headers.first("Content-Type") else {
      if body.isEmpty { return [] }
      return [
        SchemaViolation(
          instancePath: "$.response.headers.Content-Type", schemaPath: contentLocation.description,
          expected: "a Content-Type of " + declared.content.map(\.name).joined(separator: ", "),
          found: "nothing")
      ]
    }
    guard let media = declared.mediaType(for: contentType) else {
      return [
        SchemaViolation(
          instancePath: "$.response.headers.Content-Type", schemaPath: contentLocation.description,
          expected: "a Content-Type of " + declared.content.map(\.name).joined(separator: ", "),
          found: JSONValue.quoted(contentType))
      ]
    }
    guard let schemaLocation = media.schemaLocation, MediaTypeName(contentType).isJSON else { return [] }
    let value: JSONValue
    do {
      value = try JSONValue.parse(bytes: body)
    } catch {
      return [
        SchemaViolation(
          instancePath: "$", schemaPath: schemaLocation.description, expected: "a JSON body",
          found: body.isEmpty ? "an empty body" : "invalid JSON (\(error.description))")
      ]
    }
    return document.validator.validate(value, at: schemaLocation)
  }
}
