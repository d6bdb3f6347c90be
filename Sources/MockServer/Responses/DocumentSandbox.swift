import HTTPCore

/// Keeps pages the mock serves away from the admin API (docs/admin-api.md, "Pages the mock serves").
///
/// A stub, a proxied upstream page or a body file is served on the admin API's own origin: without
/// `--admin-token`, an HTML page there (a templated stub that echoes a query parameter, a page relayed by
/// `--proxy-all`) could create stubs and read the journal, other clients' `Authorization` fields included.
/// So, while the admin API is open, every answer a browser would run as a document (HTML, XHTML, SVG, XML,
/// or content without a `Content-Type`, which browsers sniff) carries ``policy``: a CSP `sandbox` directive
/// without `allow-same-origin` (W3C CSP Level 3 §6.3.1; HTML's sandboxing flags), so the browser gives the
/// page an opaque origin. Scripts, forms, pop-ups and dialogs still work; the page's requests to the
/// admin API carry `Origin: null`, which the admin API refuses (``AdminAPI/browserRefusal(_:context:)``).
/// A stub opts out with `"x-sandbox": false`.
enum DocumentSandbox {
  /// The field's value: everything a page usually needs except its origin.
  static let policy = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads"

  /// True when a browser would render an answer with these fields and content as a document that can run
  /// script: a `Content-Type` of HTML, XHTML, SVG or XML (`text/xml`, `application/xml`, `text/xsl`,
  /// any `+xml`), `multipart/x-mixed-replace`, or none at all (or an unparsable one) with content.
  static func isDocument(_ headers: HTTPHeaders, hasContent: Bool) -> Bool {
    guard let value = headers.first("Content-Type") else { return hasContent }
    let type =
      value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingOWS().lowercasedASCII() } ?? ""
    guard let slash = type.firstIndex(of: "/"), slash != type.startIndex,
      type.index(after: slash) != type.endIndex
    else { return hasContent }
    switch type {
    case "text/html", "application/xhtml+xml", "image/svg+xml", "text/xml", "application/xml", "text/xsl",
      "multipart/x-mixed-replace":
      return true
    default:
      return type.hasSuffix("+xml")
    }
  }

  /// Adds ``policy`` to `head` when its content is a document (an author's own
  /// `Content-Security-Policy` stays: a browser enforces both).
  static func apply(to head: inout HTTPResponseHead, hasContent: Bool) {
    guard isDocument(head.headers, hasContent: hasContent) else { return }
    head.headers.add(name: "Content-Security-Policy", value: policy)
  }
}

extension ResponsePlan {
  /// This plan with ``DocumentSandbox/policy`` on each response head that sends a document, including
  /// those of deferred and awaited plans (a proxied answer). A prepared response is left as it is: it is
  /// made by ``ResponsePlanBuilder``, which applies the policy itself.
  func sandboxingDocuments() -> ResponsePlan {
    var plan = self
    plan.steps = steps.map { step in
      switch step {
      case .response(var head, let body):
        DocumentSandbox.apply(to: &head, hasContent: !body.isEmpty)
        return .response(head, body: body)
      case .responseHead(var head, let length):
        DocumentSandbox.apply(to: &head, hasContent: length > 0)
        return .responseHead(head, contentLength: length)
      case .streamedResponse(var head, let length, let body):
        DocumentSandbox.apply(to: &head, hasContent: length != 0)
        return .streamedResponse(head, contentLength: length, body: body)
      case .deferred(let make):
        return .deferred { make().sandboxingDocuments() }
      case .awaiting(let start):
        return .awaiting { resume in start { resume($0.sandboxingDocuments()) } }
      default:
        return step
      }
    }
    return plan
  }
}
