import Dispatch
import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// Forwards requests upstream for proxy stubs (`proxyBaseUrl`), `--proxy-all` and recording sessions, on a
/// thread of its own per exchange (never the event loop), and hands every exchange to the
/// ``ProxyRecorder``.
///
/// Request (RFC 9110 §7.6.1): hop-by-hop fields (`Connection`, `Keep-Alive`, `Proxy-Connection`, `TE`,
/// `Transfer-Encoding`, `Upgrade`, `Trailer`, `Proxy-Authorization`, `Proxy-Authenticate`) and every field
/// named in `Connection` are not forwarded; `Host` is the upstream's; `removeProxyRequestHeaders` are
/// dropped and `additionalProxyRequestHeaders` set. Response: the same hop-by-hop fields are dropped and
/// the connection frames the content itself.
package final class ProxyForwarder: Sendable {
  /// The recording state (sessions of the admin API, `--record-mappings`) and recent exchanges.
  package let recorder: ProxyRecorder
  /// The stubs `--proxy-all` and recording sessions are journaled under (WireMock's catch-all proxy stub).
  package let catchAllStubs = CatchAllProxyStubs()
  let configuration: ProxyConfiguration
  /// The TLS context, made on the first `https` exchange (loading the system trust store costs time and
  /// memory a server that never proxies to HTTPS should not pay).
  private let tls = Mutex<Result<UpstreamTLSContext, TLSError>?>(nil)
  private let inFlight = Atomic<Int>(0)

  init(configuration: ProxyConfiguration) {
    self.configuration = configuration
    recorder = ProxyRecorder(recording: configuration.recordFromStart)
  }

  /// A client for `url`: with the (shared, lazily made) TLS context for `https`.
  private func client(for url: UpstreamURL) -> Result<UpstreamHTTPClient, TLSError> {
    var context: UpstreamTLSContext?
    if url.isTLS {
      let made = tls.withLock { stored in
        if let stored { return stored }
        let result = Result { () throws(TLSError) in
          try UpstreamTLSContext(caFile: configuration.caFile, insecure: configuration.insecure)
        }
        stored = result
        return result
      }
      switch made {
      case .failure(let e): return .failure(e)
      case .success(let c): context = c
      }
    }
    return .success(
      UpstreamHTTPClient(
        timeoutMilliseconds: configuration.timeoutMilliseconds, maxBodyBytes: configuration.maxBodyBytes,
        tls: context))
  }

  /// Hop-by-hop fields, lowercased (RFC 9110 §7.6.1, and the proxy authentication fields of §11.7).
  package static let hopByHop: Set<String> = [
    "connection", "keep-alive", "proxy-connection", "te", "transfer-encoding", "upgrade", "trailer",
    "proxy-authorization", "proxy-authenticate",
  ]

  /// `headers` without hop-by-hop fields and those named in its `Connection` field.
  package static func endToEnd(_ headers: HTTPHeaders) -> HTTPHeaders {
    var named = hopByHop
    for token in headers.listElements("Connection") { named.insert(token.lowercasedASCII()) }
    return HTTPHeaders(
      headers.fields.filter { !named.contains($0.name.lowercasedASCII()) }.map { ($0.name, $0.value) })
  }

  /// The request to send upstream for `request` matched by `proxy`, or nil when the base URL is unusable.
  package static func upstreamRequest(_ request: HTTPRequest, proxy: ProxyDefinition) -> (
    HTTPRequest, UpstreamURL
  )? {
    guard let url = UpstreamURL(proxy.baseURL) else { return nil }
    var path = request.head.rawPath
    if let prefix = proxy.urlPrefixToRemove, !prefix.isEmpty, path.hasPrefix(prefix) {
      path = String(path.dropFirst(prefix.count))
    }
    if !path.hasPrefix("/") { path = "/" + path }
    var target = url.basePath + path
    if let query = request.head.rawQuery { target += "?" + query }
    var headers = endToEnd(request.headers)
    headers.remove(name: "Host")
    headers.remove(name: "Content-Length")
    for name in proxy.removedRequestHeaders { headers.remove(name: name) }
    for field in proxy.additionalRequestHeaders { headers.remove(name: field.name) }
    for field in proxy.additionalRequestHeaders { headers.add(name: field.name, value: field.value) }
    var fields = [("Host", url.hostField)]
    fields += headers.fields.map { ($0.name, $0.value) }
    let head = HTTPRequestHead(method: request.method, target: target, headers: HTTPHeaders(fields))
    return (HTTPRequest(head: head, body: request.body), url)
  }

  /// What happened upstream, handed to the completion.
  package struct Outcome: Sendable {
    /// The response relayed (the gateway error when the exchange failed).
    package var response: HTTPResponse
    /// The failure, or nil when the upstream answered.
    package var failure: UpstreamError?
    /// The upstream's `Content-Length` (for relaying an answer to HEAD), or nil.
    package var announcedLength: Int? = nil
  }

  /// Forwards `request` as `proxy` says on a thread of its own and calls `completion` there with the
  /// response to relay (a 502/503/504 JSON error when the upstream gave none). `journalID` ties the
  /// exchange to its journal entry for snapshots.
  package func forward(
    _ request: HTTPRequest, proxy: ProxyDefinition, journalID: String,
    completion: @escaping @Sendable (Outcome) -> Void
  ) {
    guard inFlight.add(1, ordering: .relaxed).newValue <= configuration.maxConcurrentExchanges else {
      inFlight.subtract(1, ordering: .relaxed)
      completion(
        Outcome(
          response: Self.gatewayError(
            status: 503, upstream: proxy.baseURL,
            reason: "more than \(configuration.maxConcurrentExchanges) upstream exchanges in flight"),
          failure: .io("too many exchanges")))
      return
    }
    // A serial queue of its own runs on an overcommitting worker: a blocked exchange never holds up
    // another one or the loop.
    DispatchQueue(label: "mockserver.proxy").async { [self] in
      let outcome = exchange(request, proxy: proxy, journalID: journalID)
      inFlight.subtract(1, ordering: .relaxed)
      completion(outcome)
    }
  }

  /// The blocking exchange.
  func exchange(_ request: HTTPRequest, proxy: ProxyDefinition, journalID: String) -> Outcome {
    guard let (upstreamRequest, url) = Self.upstreamRequest(request, proxy: proxy) else {
      let failure = UpstreamError.io("proxyBaseUrl is not an http:// or https:// URL")
      return Outcome(
        response: Self.gatewayError(status: 502, upstream: proxy.baseURL, reason: failure.description),
        failure: failure)
    }
    let sent: Result<HTTPResponse, UpstreamError>
    switch client(for: url) {
    case .failure(let e): sent = .failure(.tls("cannot set up TLS: \(e)"))
    case .success(let c): sent = c.send(upstreamRequest, to: url)
    }
    switch sent {
    case .failure(let failure):
      return Outcome(
        response: Self.gatewayError(
          status: failure.status, upstream: url.description, reason: failure.description),
        failure: failure)
    case .success(var response):
      let announced = response.headers.first("Content-Length").flatMap { Int($0.trimmingOWS()) }
      response.head.headers = Self.endToEnd(response.headers)
      response.head.headers.remove(name: "Content-Length")
      recorder.observe(
        RecordedExchange(
          journalID: journalID, request: request, response: response, upstream: url.description))
      return Outcome(response: response, failure: nil, announcedLength: announced)
    }
  }

  /// The 502/503/504 answer: `{"error": …, "upstream": …, "reason": …, "status": …}`.
  package static func gatewayError(status: Int, upstream: String, reason: String) -> HTTPResponse {
    let body = JSONValue.object(
      JSONObject(pairs: [
        ("error", .string("proxy to \(upstream) failed: \(reason)")),
        ("upstream", .string(upstream)),
        ("reason", .string(reason)),
        ("status", .number(JSONNumber(status))),
      ]))
    return HTTPResponse(
      head: HTTPResponseHead(status: HTTPStatus(code: status), headers: ["Content-Type": "application/json"]),
      body: body.serializedBytes())
  }

  /// The plan that relays `response` to a request with `method`: HEAD keeps the upstream's
  /// `Content-Length` announcement without content.
  static func plan(relaying response: HTTPResponse, method: HTTPMethod, announcedLength: Int?) -> ResponsePlan
  {
    if method == .head, let announcedLength {
      return ResponsePlan(steps: [.responseHead(response.head, contentLength: announcedLength)])
    }
    return ResponsePlan(steps: [.response(response.head, body: response.body)])
  }
}
