import Contracts
import HTTPCore
import Mappings
import MockJSON
import MockServer

/// `--openapi`: the document answers what no fixture stub matches (``OpenAPIMock``: Prism's response
/// selection and content negotiation), and with `--validate-requests` judges every request it addresses
/// first (Prism's 401/415/422 or the document's own response for them).
package enum OpenAPIServing {
  /// Sets the service's `unmatchedAnswer` (and `requestCheck` with `validateRequests`) for `document`.
  /// `invalidRequestStatus` 400 keeps the check of before (400 and a report, no security).
  package static func configure(
    _ configuration: inout MockServiceConfiguration, document: OpenAPIDocument, seed: UInt64,
    validateRequests: Bool, invalidRequestStatus: Int = 422
  ) {
    let mock = OpenAPIMock(document: document, seed: seed)
    configuration.unmatchedAnswer = { request in
      let answer = mock.respond(
        method: request.method.rawValue, target: request.head.originForm, headers: request.headers,
        body: request.body)
      return (response(answer), answer.note)
    }
    guard validateRequests else { return }
    if invalidRequestStatus == 400 {
      configuration.requestCheck = RequestValidation.check(OpenAPIRequestValidator(document: document))
      return
    }
    configuration.requestCheck = { request in
      guard
        let answer = mock.check(
          method: request.method.rawValue, target: request.head.originForm, headers: request.headers,
          body: request.body)
      else { return nil }
      return (response(answer), answer.note)
    }
  }

  static func response(_ answer: OpenAPIMockAnswer) -> HTTPResponse {
    var headers = HTTPHeaders()
    for (name, value) in answer.headers { headers.add(name: name, value: value) }
    return HTTPResponse(
      head: HTTPResponseHead(status: HTTPStatus(code: answer.status), headers: headers), body: answer.body)
  }
}

/// `--validate-requests --invalid-request-status 400`: the request check of before. A request that breaks
/// the OpenAPI document is answered with `400` and a JSON report before any stub is consulted; requests no
/// operation addresses go on to the stubs. `/__admin` requests never reach the check.
package enum RequestValidation {
  /// The check for `MockServiceConfiguration.requestCheck`.
  package static func check(_ validator: OpenAPIRequestValidator)
    -> @Sendable (HTTPRequest) -> (
      response: HTTPResponse, note: String
    )?
  {
    { request in
      let target = request.head.originForm
      guard
        let violations = validator.violations(
          method: request.method.rawValue, target: target, headers: request.headers, body: request.body),
        !violations.isEmpty
      else { return nil }
      let report = OpenAPIRequestValidator.report(violations, method: request.method.rawValue, target: target)
      let response = HTTPResponse(
        head: HTTPResponseHead(status: .badRequest, headers: ["Content-Type": "application/json"]),
        body: Array(report.serialized().utf8))
      return (response, "contract violation: " + violations.map(\.description).joined(separator: "; "))
    }
  }
}

/// `--validate-responses`: stub answers are fixed when loaded, so each stub is checked once against the
/// document; a stub whose answer breaks it is logged (every finding, in the lint format) and answers
/// with an `x-contract-violation` header naming the first finding and the count.
package enum ResponseValidation {
  /// The stubs with the header added where they violate the document, and the findings.
  package static func flag(_ stubs: [StubMapping], document: OpenAPIDocument) -> (
    [StubMapping], [FixtureProblem]
  ) {
    let linter = OpenAPILinter(document: document)
    var findings: [FixtureProblem] = []
    let flagged = stubs.map { stub -> StubMapping in
      let problems = linter.check(stub).filter(\.isError)
      guard let first = problems.first else { return stub }
      findings += problems
      var copy = stub
      var response = copy.response
      let more = problems.count > 1 ? " (+\(problems.count - 1) more)" : ""
      response.headers.add(name: "x-contract-violation", value: "\(first.path): \(first.message)\(more)")
      copy.response = response
      return copy
    }
    return (flagged, findings)
  }
}
