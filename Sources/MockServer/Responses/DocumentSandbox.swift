import HTTPCore

/// Keeps pages the mock serves away from the admin API (docs/admin-api.md, "Pages the mock serves").
///
/// A stub, a proxied upstream page or a body file is served on the admin API's own origin: without
/// `--admin-token`, an HTML page there (a templated stub that echoes a query parameter, a page relayed by
/// `--proxy-all`) could create stubs and read the journal, other clients' `Authorization` fields included.
/// So, while the admin API is open, every answer a browser could run as a document (any type but the inert
/// ones of ``isDocument(_:hasContent:)``, or content without a `Content-Type`, which browsers sniff)
/// carries ``policy``: a CSP `sandbox` directive
/// without `allow-same-origin` (W3C CSP Level 3 §6.3.1; HTML's sandboxing flags), so the browser gives the
/// page an opaque origin. Scripts, forms, pop-ups and dialogs still work; the page's requests to the
/// admin API carry `Origin: null`, which the admin API refuses (``AdminAPI/browserRefusal(_:context:)``).
/// A stub opts out with `"x-sandbox": false`.
enum DocumentSandbox {
  /// The field's value: everything a page usually needs except its origin.
  static let policy = "sandbox allow-scripts allow-forms allow-popups allow-modals allow-downloads"

  /// True unless a browser would never run this answer as a document: every media type in every
  /// `Content-Type` field (a list, as WHATWG Fetch's "extract a MIME type" reads it: the browser uses the
  /// last valid one) must be one of ``inertTypes`` (or an image, audio, video or font type other than SVG,
  /// or a `+json` type). Anything else is a document: HTML, XML, SVG, a type that does not parse
  /// (`text / html`), the sniffed ones (`unknown/unknown`, `application/unknown`, `*/*`), or no
  /// `Content-Type` at all when there is content (browsers sniff it).
  static func isDocument(_ headers: HTTPHeaders, hasContent: Bool) -> Bool {
    var sawType = false
    for value in headers.values("Content-Type") {
      for element in value.split(separator: ",") {
        let type =
          element.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first
          .map { $0.trimmingOWS().lowercasedASCII() } ?? ""
        if type.isEmpty, !element.contains(";") { continue }
        guard isInert(type) else { return true }
        sawType = true
      }
    }
    return !sawType && hasContent
  }

  /// Media types a browser shows as data, downloads or hands to a plugin, and never runs as a page.
  static let inertTypes: Set<String> = [
    "application/json", "text/plain", "text/css", "text/csv", "text/javascript", "application/javascript",
    "application/ecmascript", "text/event-stream", "application/x-ndjson", "application/octet-stream",
    "application/pdf", "application/zip", "application/gzip", "application/wasm", "application/grpc",
    "application/protobuf", "application/x-protobuf", "application/x-www-form-urlencoded",
    "multipart/form-data", "text/markdown", "application/yaml", "text/yaml", "application/x-yaml",
    "application/cbor", "application/msgpack", "text/calendar", "application/jwt",
  ]

  /// True for a well-formed `type/subtype` (RFC 9110 tokens) a browser never renders as a document.
  static func isInert(_ type: String) -> Bool {
    let parts = type.split(separator: "/", omittingEmptySubsequences: false)
    guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty,
      parts.allSatisfy({ $0.utf8.allSatisfy(isTokenByte) })
    else { return false }
    if inertTypes.contains(type) || parts[1].hasSuffix("+json") { return true }
    switch parts[0] {
    case "image": return parts[1] != "svg+xml"
    case "audio", "video", "font": return true
    default: return false
    }
  }

  /// RFC 9110 §5.6.2 `tchar`.
  static func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default: return "!#$%&'*+-.^_`|~".utf8.contains(b)
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
      case .streamedResponse(var head, let framing, let source):
        DocumentSandbox.apply(to: &head, hasContent: framing != .length(0))
        return .streamedResponse(head, framing: framing, source: source)
      case .awaiting:
        return step.mapAwaitedPlan { $0.sandboxingDocuments() }
      default:
        return step
      }
    }
    return plan
  }
}
