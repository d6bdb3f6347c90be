import Contracts
import HTTPCore
import Mappings
import MockJSON
import MockServer

/// `--openapi`: the document answers what no fixture stub matches (``OpenAPIMock``: Prism's response
/// selection and content negotiation), and with `--validate-requests` judges every request it addresses
/// first (Prism's 401/415/422 or the document's own response for them). The document's answers carry
/// Prism's CORS headers and it answers preflights (``OpenAPICORS``) unless `--openapi-cors false`.
package enum OpenAPIServing {
  /// Sets the service's `unmatchedAnswer` (and `requestCheck` with `--validate-requests`) for `document`
  /// as `options` ask (`--validate-requests`, `--invalid-request-status`, `--validate-responses`,
  /// `--errors`, `--openapi-cors`, `--seed`).
  package static func configure(
    _ configuration: inout MockServiceConfiguration, document: OpenAPIDocument, options: CommandLineOptions
  ) {
    configure(
      &configuration, document: document, seed: options.seed ?? 1, validateRequests: options.validateRequests,
      invalidRequestStatus: options.invalidRequestStatus, validateResponses: options.validateResponses,
      errors: options.answerViolationsAreErrors, cors: options.openAPICORS)
  }

  /// Sets the service's `unmatchedAnswer` (and `requestCheck` with `validateRequests`) for `document`.
  /// `invalidRequestStatus` 400 keeps the check of before (400 and a report, no security).
  package static func configure(
    _ configuration: inout MockServiceConfiguration, document: OpenAPIDocument, seed: UInt64,
    validateRequests: Bool, invalidRequestStatus: Int = 422, validateResponses: Bool = false,
    errors: Bool = false, cors: Bool = false
  ) {
    var mock = OpenAPIMock(document: document, seed: seed)
    mock.checksAnswers = validateResponses || errors
    mock.answerViolationsAreErrors = errors
    mock.reportsRequestWarnings = validateRequests && invalidRequestStatus != 400
    let answerMock = mock
    configuration.unmatchedAnswer = { request in
      if cors, let preflight = OpenAPICORS.preflight(request) {
        return (preflight, "openapi CORS preflight")
      }
      let answer = answerMock.respond(
        method: request.method.rawValue, target: request.head.originForm, headers: request.headers,
        body: request.body)
      var sent = response(answer)
      if cors { OpenAPICORS.add(to: &sent, for: request) }
      return (sent, answer.note)
    }
    guard validateRequests else { return }
    if invalidRequestStatus == 400 {
      let check = RequestValidation.check(OpenAPIRequestValidator(document: document))
      configuration.requestCheck = { request in
        if cors, OpenAPICORS.isPreflight(request) { return nil }
        guard let (checked, note) = check(request) else { return nil }
        var sent = checked
        if cors { OpenAPICORS.add(to: &sent, for: request) }
        return (sent, note)
      }
      return
    }
    configuration.requestCheck = { request in
      // A preflight is answered by the CORS rules (after the stubs), never judged as a request.
      if cors, OpenAPICORS.isPreflight(request) { return nil }
      guard
        let answer = answerMock.check(
          method: request.method.rawValue, target: request.head.originForm, headers: request.headers,
          body: request.body)
      else { return nil }
      var sent = response(answer)
      if cors { OpenAPICORS.add(to: &sent, for: request) }
      return (sent, answer.note)
    }
  }

  static func response(_ answer: OpenAPIMockAnswer) -> HTTPResponse {
    var headers = HTTPHeaders()
    for (name, value) in answer.headers { headers.add(name: name, value: value) }
    return HTTPResponse(
      head: HTTPResponseHead(status: HTTPStatus(code: answer.status), headers: headers), body: answer.body)
  }
}

/// Prism's CORS under `--openapi` (on unless `--openapi-cors false`): every answer of the document
/// carries `Access-Control-Allow-Origin` (the request's `Origin`, else `*`), `-Allow-Headers` (the
/// requested headers, else `*`), `-Allow-Credentials: true` and `-Expose-Headers` (`*`); a preflight
/// (`OPTIONS` with `Origin` and `Access-Control-Request-Method`) that no stub answers gets 204 with them,
/// `-Allow-Methods` (the requested method) and `Vary: Origin`, before any `options` operation of the
/// document. Fixture stubs keep their own CORS rules (`x-cors`, `--enable-stub-cors`); the admin API
/// never passes here.
package enum OpenAPICORS {
  /// True for a CORS preflight.
  static func isPreflight(_ request: HTTPRequest) -> Bool {
    guard request.method == .options, let origin = request.headers.first("Origin"), !origin.isEmpty,
      let method = request.headers.first("Access-Control-Request-Method"), !method.isEmpty
    else { return false }
    return true
  }

  /// The headers every answer carries (Prism's `setCommonCORSHeaders`).
  static func common(_ request: HTTPRequest) -> [(String, String)] {
    func asked(_ name: String) -> String? {
      request.headers.first(name).map { $0.trimmingCharacters(in: .whitespaces) }.flatMap {
        $0.isEmpty ? nil : $0
      }
    }
    return [
      ("Access-Control-Allow-Origin", asked("Origin") ?? "*"),
      ("Access-Control-Allow-Headers", asked("Access-Control-Request-Headers") ?? "*"),
      ("Access-Control-Allow-Credentials", "true"),
      ("Access-Control-Expose-Headers", asked("Access-Control-Expose-Headers") ?? "*"),
    ]
  }

  /// The 204 answer to a preflight, or nil when `request` is none.
  static func preflight(_ request: HTTPRequest) -> HTTPResponse? {
    guard isPreflight(request) else { return nil }
    var headers = HTTPHeaders()
    for (name, value) in common(request) { headers.add(name: name, value: value) }
    headers.add(
      name: "Access-Control-Allow-Methods",
      value: request.headers.first("Access-Control-Request-Method")?.trimmingCharacters(in: .whitespaces)
        ?? "")
    headers.add(name: "Vary", value: "Origin")
    headers.add(name: "Content-Length", value: "0")
    return HTTPResponse(head: HTTPResponseHead(status: HTTPStatus(code: 204), headers: headers), body: [])
  }

  /// Adds the common headers the answer does not set itself (the document's own headers win, as Prism's).
  static func add(to response: inout HTTPResponse, for request: HTTPRequest) {
    for (name, value) in common(request) where !response.head.headers.contains(name) {
      response.head.headers.add(name: name, value: value)
    }
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
