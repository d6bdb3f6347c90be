import Dispatch
import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// Forwards requests upstream for proxy stubs (`proxyBaseUrl`), `--proxy-all` and recording sessions, on a
/// thread of its own per exchange (never the event loop), over persistent connections kept in one
/// ``UpstreamConnectionPool``, and hands every exchange to the ``ProxyRecorder``.
///
/// The answer is relayed as it arrives: a response complete in the bytes read with its head goes back
/// whole; otherwise the head goes back at once and the content follows through a ``StreamedBody``
/// (`Content-Length` passed on when the upstream gave one, chunked otherwise), the exchange thread
/// reading the upstream only while the client takes the bytes. What the recorder keeps of a content is
/// capped (``ProxyRecorder/captureLimit(bufferBytes:)``); a longer one is recorded cut, and says so.
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
  /// Idle persistent connections to upstreams.
  package let pool = UpstreamConnectionPool()
  /// Content read with the head up to this many bytes is relayed whole when it is complete.
  static let wholeRelayBytes = 256 << 10

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
        tls: context, pool: pool))
  }

  /// This process's pseudonym in `Via` (RFC 9110 §7.6.3): `mockserver-` and 8 hex digits chosen at
  /// start, so that a request that comes back through this server is recognised as a loop.
  package static let viaPseudonym = "mockserver-" + String(UInt32.random(in: .min ... .max), radix: 16)

  /// True when `request` already passed through this process (its Via names ``viaPseudonym``): a proxy
  /// stub whose base URL leads back here.
  package static func isLoop(_ request: HTTPRequest) -> Bool { hopsThroughThisServer(request) > 0 }

  /// How many `Via` entries of `request` name ``viaPseudonym`` (proxies and webhooks of this process).
  package static func hopsThroughThisServer(_ request: HTTPRequest) -> Int {
    request.headers.listElements("Via").filter { entry in
      entry.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.map(String.init)
        == viaPseudonym
    }.count
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
    var headers = request.headers.endToEnd
    headers.remove(name: "Host")
    headers.remove(name: "Content-Length")
    for name in proxy.removedRequestHeaders { headers.remove(name: name) }
    for field in proxy.additionalRequestHeaders { headers.remove(name: field.name) }
    for field in proxy.additionalRequestHeaders { headers.add(name: field.name, value: field.value) }
    var fields = [("Host", url.hostField)]
    fields += headers.fields.map { ($0.name, $0.value) }
    // RFC 9110 §7.6.3: a proxy adds its own entry to Via (after those received), with the protocol the
    // request came in on.
    let version = request.head.version
    fields.append(("Via", "\(version.major).\(version.minor) \(viaPseudonym)"))
    let head = HTTPRequestHead(method: request.method, target: target, headers: HTTPHeaders(fields))
    return (HTTPRequest(head: head, body: request.body), url)
  }

  /// What happened upstream, handed to the completion.
  package struct Outcome: Sendable {
    /// The response relayed (the gateway error when the exchange failed); only its head when
    /// ``streamed`` is set.
    package var response: HTTPResponse
    /// The failure, or nil when the upstream answered.
    package var failure: UpstreamError?
    /// The upstream's `Content-Length` (for relaying an answer to HEAD, or a streamed content), or nil.
    package var announcedLength: Int? = nil
    /// The content still arriving, written by the exchange's thread, when the answer is relayed as it
    /// comes; nil when ``response`` is whole.
    package var streamed: StreamedBody? = nil
  }

  /// Forwards `request` as `proxy` says on a thread of its own and calls `completion` there, once, with
  /// the response to relay (a 502/503/504 JSON error when the upstream gave none) as soon as its head is
  /// known; a streamed content is then written on that thread. `journalID` ties the exchange to its
  /// journal entry for snapshots.
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
      exchange(request, proxy: proxy, journalID: journalID, deliver: completion)
      inFlight.subtract(1, ordering: .relaxed)
    }
  }

  /// The blocking exchange: `deliver` gets the outcome once the head is known, then a streamed content is
  /// written before this returns.
  func exchange(
    _ request: HTTPRequest, proxy: ProxyDefinition, journalID: String, deliver: (Outcome) -> Void
  ) {
    if Self.isLoop(request) {
      let failure = UpstreamError.io(
        "the request came back through this server (its Via names \(Self.viaPseudonym))")
      deliver(
        Outcome(
          response: Self.gatewayError(status: 508, upstream: proxy.baseURL, reason: failure.description),
          failure: failure))
      return
    }
    guard let (upstreamRequest, url) = Self.upstreamRequest(request, proxy: proxy) else {
      let failure = UpstreamError.io("proxyBaseUrl is not an http:// or https:// URL")
      deliver(
        Outcome(
          response: Self.gatewayError(status: 502, upstream: proxy.baseURL, reason: failure.description),
          failure: failure))
      return
    }
    func failed(_ failure: UpstreamError) {
      deliver(
        Outcome(
          response: Self.gatewayError(
            status: failure.status, upstream: url.description, reason: failure.description),
          failure: failure))
    }
    let opened: Result<UpstreamResponse, UpstreamError>
    switch client(for: url) {
    case .failure(let e): opened = .failure(.tls("cannot set up TLS: \(e)"))
    case .success(let c): opened = c.open(upstreamRequest, to: url)
    }
    let upstream: UpstreamResponse
    switch opened {
    case .failure(let failure): return failed(failure)
    case .success(let r): upstream = r
    }
    defer { upstream.release() }
    var head = upstream.head
    head.headers = head.headers.endToEnd
    head.headers.remove(name: "Content-Length")
    // The content already read with the head: a response complete in it is relayed whole.
    var early: [UInt8] = []
    var complete = false
    reading: while early.count <= Self.wholeRelayBytes {
      switch upstream.nextContent(wait: false) {
      case .failure(let failure): return failed(failure)
      case .success(.bytes(let bytes)): early.append(contentsOf: bytes)
      case .success(.end): complete = true
      case .success(.pending): break reading
      }
      if complete { break }
    }
    func observe(_ content: [UInt8], _ upstreamBytes: Int?) {
      recorder.observe(
        RecordedExchange(
          journalID: journalID, request: request,
          response: HTTPResponse(head: head, body: content, trailers: upstream.trailers),
          upstream: url.description, truncatedFrom: upstreamBytes))
    }
    let limit = recorder.captureLimit(bufferBytes: configuration.maxBodyBytes)
    if complete {
      upstream.release()
      let announced = upstream.head.headers.first("Content-Length").flatMap { Int($0.trimmingOWS()) }
      if early.count > limit {
        observe(Array(early.prefix(limit)), early.count)
      } else {
        observe(early, nil)
      }
      deliver(
        Outcome(
          response: HTTPResponse(head: head, body: early, trailers: upstream.trailers), failure: nil,
          announcedLength: announced))
      return
    }
    // Streamed: the head now, the content as it comes (and only as fast as the client takes it).
    let body = StreamedBody()
    deliver(
      Outcome(
        response: HTTPResponse(head: head), failure: nil, announcedLength: upstream.contentLength,
        streamed: body))
    var total = early.count
    var captured = early.count <= limit ? early : Array(early.prefix(limit))
    // Recorded before the client can see the end, so that a request the client sends after this answer
    // (the next one of a repeated request, or a recording stop) finds this exchange recorded first. With
    // a Content-Length the client sees the end with the last byte, so that is when it is recorded.
    var observed = false
    func observeIfLast() {
      guard !observed, let length = upstream.contentLength, total >= length else { return }
      observed = true
      observe(captured, total > captured.count ? total : nil)
    }
    observeIfLast()
    var wanted = body.write(early, timeoutMilliseconds: configuration.timeoutMilliseconds)
    while wanted {
      switch upstream.nextContent() {
      case .failure:
        body.fail()
        return
      case .success(.bytes(let bytes)):
        total += bytes.count
        if captured.count < limit { captured.append(contentsOf: bytes.prefix(limit - captured.count)) }
        observeIfLast()
        wanted = body.write(bytes, timeoutMilliseconds: configuration.timeoutMilliseconds)
      case .success(.end):
        upstream.release()
        if !observed { observe(captured, total > captured.count ? total : nil) }
        body.finish()
        return
      case .success(.pending):
        continue
      }
    }
    // The client went away (or stopped reading for the timeout): the upstream connection is closed.
    body.fail()
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

  /// The plan that relays `outcome` to a request with `method`: a streamed content as it comes; HEAD
  /// keeps the upstream's `Content-Length` announcement without content.
  static func plan(relaying outcome: Outcome, method: HTTPMethod) -> ResponsePlan {
    let response = outcome.response
    if let body = outcome.streamed {
      return ResponsePlan(steps: [
        .streamedResponse(
          response.head, framing: outcome.announcedLength.map { .length($0) } ?? .chunked, source: body)
      ])
    }
    if method == .head, let announcedLength = outcome.announcedLength {
      return ResponsePlan(steps: [.responseHead(response.head, contentLength: announcedLength)])
    }
    return ResponsePlan(steps: [.response(response.head, body: response.body)])
  }
}
