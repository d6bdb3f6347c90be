import Contracts
import Foundation
import HTTPCore
import JSONSchema
import MockJSON
import MockServer

/// Every admin answer checked against the admin API's own OpenAPI document (`/__admin/openapi.json`,
/// `AdminAPIDocument.text`), when ``MockServiceConfiguration/adminResponseCheck`` is set to it
/// (`MOCKSERVER_VALIDATE_ADMIN_RESPONSES=1`, ``fromEnvironment``): the status must be declared for the
/// operation, and the content type and body must fit the declared response (Contracts'
/// `OpenAPILinter.responseViolations`, the check `mockserver lint --openapi` applies to stubs). A request for
/// a route the document does not list may only get an error answer (400, 401, 403, 404 or 405 in WireMock's
/// error shape). It lives here, not in MockServer, so that the server library does not depend on Contracts
/// (and libyaml) for a test-mode check.
package enum AdminResponseCheck {
  /// The environment variable that turns the check on (`1`).
  package static let environmentVariable = "MOCKSERVER_VALIDATE_ADMIN_RESPONSES"

  /// True when the process environment asks for the check.
  package static var enabledByEnvironment: Bool {
    ProcessResources.environment(environmentVariable) == "1"
  }

  /// ``violation(method:rawPath:status:headers:body:)`` as the value
  /// ``MockServiceConfiguration/adminResponseCheck`` takes.
  package static let check: AdminAnswerCheck = { method, rawPath, status, headers, body in
    violation(method: method, rawPath: rawPath, status: status, headers: headers, body: body)
  }

  /// ``check`` when the environment asks for it, else nil: what
  /// ``MockServiceConfiguration/adminResponseCheck`` is set to by the binary, MockServerTesting's servers
  /// and the test suites' in-process ones.
  package static var fromEnvironment: AdminAnswerCheck? {
    enabledByEnvironment ? check : nil
  }

  /// The served document, parsed once on first use, or why it does not parse.
  static let loaded: (document: OpenAPIDocument?, problem: String) = {
    do {
      return (try OpenAPIDocument.parse(AdminAPIDocument.text, name: "openapi.json"), "")
    } catch {
      return (nil, "\(error)")
    }
  }()

  /// Statuses an undocumented admin route may answer (no such endpoint, refusals, a bad path).
  static let undocumentedStatuses: Set<Int> = [400, 401, 403, 404, 405]

  /// Why an answer to `method rawPath` does not fit the document, or nil when it does.
  package static func violation(
    method: String, rawPath: String, status: Int, headers: HTTPHeaders, body: [UInt8]
  )
    -> String?
  {
    guard let document = loaded.document else {
      return "the admin API's openapi.json does not load: \(loaded.problem)"
    }
    // HEAD is answered as GET; on GET a trailing slash names the same route. Any other empty segment
    // names no route (the router answers 404: an id or name is missing).
    let asked = method == "HEAD" ? "GET" : method
    var path = rawPath
    if asked == "GET", path.count > 1, path.hasSuffix("/") { path.removeLast() }
    let hasEmptySegment = path.count > 1 && (path.hasSuffix("/") || path.contains("//"))
    var operation = hasEmptySegment ? nil : document.operation(method: asked, path: path)?.0
    if operation == nil, path.hasPrefix("/__admin/files/") {
      // File names may have several segments (`a/b.json`).
      operation = document.operation(method: asked, template: "/__admin/files/{name}")
    }
    if method == "HEAD", let found = operation, found.response(for: status) == nil {
      // Most routes answer HEAD as an unknown endpoint (404): checked as an undocumented route.
      operation = nil
    }
    guard let operation else {
      guard undocumentedStatuses.contains(status) else {
        return "\(method) \(rawPath) is not in openapi.json, yet it was answered \(status) (an undocumented "
          + "route may only answer \(undocumentedStatuses.sorted().map { String($0) }.joined(separator: ", ")))"
      }
      return errorShapeViolation(status: status, headers: headers, body: body, document: document)
        .map { "\(method) \(rawPath) (not in openapi.json) answered \(status): \($0)" }
    }
    let name = "\(operation.method) \(operation.path)"
    guard let declared = operation.response(for: status) else {
      let statuses = operation.responses.map(\.status).joined(separator: ", ")
      return "\(name) answered \(status) to \(method) \(rawPath), which openapi.json does not declare "
        + "(declared: \(statuses))"
    }
    let violations = OpenAPILinter.responseViolations(
      status: status, headers: headers, body: body, declared, document: document)
    guard !violations.isEmpty else { return nil }
    let listed = violations.prefix(5).map(\.description).joined(separator: "; ")
    let more = violations.count > 5 ? " (and \(violations.count - 5) more)" : ""
    return "\(name) answered \(status) to \(method) \(rawPath) against openapi.json: \(listed)\(more)"
  }

  /// Why `body` is not a JSON error answer (`#/components/schemas/Errors`), or nil.
  static func errorShapeViolation(status: Int, headers: HTTPHeaders, body: [UInt8], document: OpenAPIDocument)
    -> String?
  {
    guard let type = headers.first("Content-Type"), MediaTypeName(type).isJSON else {
      return "expected a JSON error body, found Content-Type \(headers.first("Content-Type") ?? "none")"
    }
    let value: JSONValue
    do {
      value = try JSONValue.parse(bytes: body)
    } catch {
      return "expected a JSON error body, found invalid JSON (\(error.description))"
    }
    let violations = document.validator.validate(
      value, at: SchemaLocation(tokens: ["components", "schemas", "Errors"]))
    guard !violations.isEmpty else { return nil }
    return violations.prefix(5).map(\.description).joined(separator: "; ")
  }
}
