import Contracts
import HTTPCore
import Mappings
import MockJSON
import MockServer

/// `--validate-requests`: answers a request that breaks the OpenAPI document with `400` and a JSON report
/// (Prism's behaviour) before any stub is consulted; other requests, `/__admin` ones and requests no
/// operation addresses go to the mock service unchanged.
package struct RequestValidatingResponder: HTTPResponder {
  /// The mock service behind.
  package let inner: MockService
  /// The document's request checks.
  package let validator: OpenAPIRequestValidator

  package init(inner: MockService, validator: OpenAPIRequestValidator) {
    self.inner = inner
    self.validator = validator
  }

  package func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan? {
    inner.respondBeforeContent(to: head, context: context)
  }

  package func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    let target = request.head.originForm
    if !request.head.rawPath.hasPrefix("/__admin"),
      let violations = validator.violations(
        method: request.method.rawValue, target: target, headers: request.headers, body: request.body),
      !violations.isEmpty
    {
      if inner.logger.level != .quiet {
        inner.logger.line(
          "\(request.method.rawValue) \(target) 400 contract violation: "
            + violations.map(\.description).joined(separator: "; "))
      }
      let report = OpenAPIRequestValidator.report(violations, method: request.method.rawValue, target: target)
      return .json(status: .badRequest, report.serialized())
    }
    return inner.respond(to: request, context: context)
  }

  package func didReject(head: HTTPRequestHead?, error: HTTPParserError, context: RequestContext) {
    inner.didReject(head: head, error: error, context: context)
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
