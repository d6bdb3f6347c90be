import Foundation
import HTTPCore
import Mappings
import MockJSON

/// CORS for stubs (WireMock's `--enable-stub-cors`, and our per-stub `"x-cors": true`), and body files
/// served to unmatched `GET`s.
///
/// A preflight (`OPTIONS` with `Origin` and `Access-Control-Request-Method`, Fetch standard §3.2.2) that no
/// stub answers itself is answered 200 when a stub with CORS on serves that method and URL: the origin,
/// `Access-Control-Allow-Credentials: true`, the requested method and headers, `Access-Control-Max-Age`.
/// Stub responses to requests with `Origin` carry `Access-Control-Allow-Origin` (the origin),
/// `-Allow-Credentials` and `-Expose-Headers` (the response's own header names).
extension MockResponder {
  /// Seconds a browser may cache a preflight answer (`Access-Control-Max-Age`; Jetty's, and so
  /// WireMock's, default).
  static let preflightMaxAgeSeconds = 1800

  /// True when CORS answers apply to `stub`.
  func corsEnabled(for stub: StubMapping) -> Bool {
    stubCORS || stub.extensions.cors
  }

  /// The CORS headers of `stub`'s response to `request`, or nil when CORS is off for it or the request
  /// has no `Origin`.
  func corsHeaders(for stub: StubMapping, request: HTTPRequest) -> [(String, String)]? {
    guard corsEnabled(for: stub), let origin = request.headers.first("Origin")?.trimmingOWS(), !origin.isEmpty
    else { return nil }
    return [("Access-Control-Allow-Origin", origin), ("Access-Control-Allow-Credentials", "true")]
  }

  /// The method a preflight asks about, or nil when `request` is no CORS preflight.
  static func preflightMethod(_ request: HTTPRequest) -> String? {
    guard request.method == .options, request.headers.first("Origin") != nil,
      let method = request.headers.first("Access-Control-Request-Method")?.trimmingOWS(), !method.isEmpty
    else { return nil }
    return method
  }

  /// The 200 answer to a CORS preflight that a stub with CORS on would serve, or nil.
  func corsPreflight(
    _ request: HTTPRequest, table: StubTable, scenarioState: (String) -> String
  ) -> ResponsePlan? {
    guard let method = MockResponder.preflightMethod(request),
      let origin = request.headers.first("Origin")?.trimmingOWS(),
      let view = try? RequestView(request)
    else { return nil }
    let asked = HTTPMethod(rawValue: method)
    // Method and URL only: the preflight carries none of the actual request's headers or content.
    let serving = store.stubs.last { stub in
      guard corsEnabled(for: stub) else { return false }
      if let m = stub.request.method, m != asked { return false }
      if let set = stub.request.methodSet, !set.admits(asked) { return false }
      var parameters: [String: String] = [:]
      return stub.request.url.match(view, parameters: &parameters)
    }
    guard let serving else { return nil }
    var headers: HTTPHeaders = [
      "Access-Control-Allow-Origin": origin,
      "Access-Control-Allow-Credentials": "true",
      "Access-Control-Allow-Methods": method,
      "Access-Control-Max-Age": String(MockResponder.preflightMaxAgeSeconds),
      "Vary": "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
    ]
    if let requested = request.headers.first("Access-Control-Request-Headers")?.trimmingOWS(),
      !requested.isEmpty
    {
      headers.add(name: "Access-Control-Allow-Headers", value: requested)
    }
    headers.add(name: "Content-Length", value: "0")
    if logger.level != .quiet {
      log(request, status: 200, label: "CORS preflight for \(MockResponder.label(serving))")
    }
    return .respond(status: .ok, headers: headers, body: [])
  }

  /// The near-miss log note of a preflight no stub with CORS on serves.
  static func unservedPreflightNote(_ request: HTTPRequest) -> String? {
    guard let method = preflightMethod(request) else { return nil }
    return
      "CORS preflight: no stub with CORS on (--enable-stub-cors or \"x-cors\": true) serves \(method) \(request.head.rawPath)"
  }

  // MARK: Body files

  /// Content types of body files served to unmatched `GET`s, by extension.
  static let bodyFileTypes: [String: String] = [
    "json": "application/json", "html": "text/html", "htm": "text/html", "txt": "text/plain",
    "xml": "application/xml", "css": "text/css", "js": "text/javascript", "png": "image/png",
    "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif", "svg": "image/svg+xml",
    "pdf": "application/pdf", "csv": "text/csv",
  ]

  /// WireMock's fallback: an unmatched `GET` (or `HEAD`) whose path names a file under `__files/` (or a
  /// folder with `index.json`/`index.html`) is answered 200 with it. Links leaving `__files/` are refused.
  /// The journal keeps the request as WireMock does: unmatched (no stub served it; it is listed by
  /// `/__admin/requests/unmatched`), with its `nearMisses`.
  func serveBodyFile(_ request: HTTPRequest, context: RequestContext, nearMisses: [NearMiss]) -> ResponsePlan?
  {
    guard let filesRoot, request.method == .get || request.method == .head else { return nil }
    guard let path = try? PercentDecoding.decode(Substring(request.head.rawPath), component: "path"),
      !path.split(separator: "/").contains(where: { $0 == ".." })
    else { return nil }
    let relative = String(path.drop { $0 == "/" })
    var candidates = [relative]
    if relative.isEmpty || path.hasSuffix("/") {
      candidates = [relative + "index.json", relative + "index.html"]
    }
    for candidate in candidates where !candidate.isEmpty {
      guard case .success(let bytes) = FixtureLoader.readBodyFile(candidate, filesRoot: filesRoot) else {
        continue
      }
      let ext = candidate.split(separator: ".").last.map { String($0).lowercased() } ?? ""
      let type = MockResponder.bodyFileTypes[ext] ?? "application/octet-stream"
      record(request, context: context, stubID: nil, status: 200, served: true, nearMisses: nearMisses)
      log(request, status: 200, label: "__files/\(candidate)")
      let plan = ResponsePlan.respond(status: .ok, headers: ["Content-Type": type], body: bytes)
      return sandboxesDocuments ? plan.sandboxingDocuments() : plan
    }
    return nil
  }
}
