import Foundation
import HTTPCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// The engine all calls go through: base URL, defaults, authentication, adapters, retries, cache and
/// transport, configured once in `let`s.
///
/// ```swift
/// let client = APIClient(
///   baseURL: URL(string: "https://api.example.com/v1")!,
///   defaultQueryItems: { [URLQueryItem(name: "ts", value: "\(Int(Date().timeIntervalSince1970))")] },
///   envelope: StatusResultEnvelope(),
///   authentication: .bearer(BearerTokenAuthenticator(token: "t", refresh: { _ in try await renew() })))
/// let user = try await client.send(GetUser(id: 1))
/// ```
public struct APIClient: Sendable {
  /// The URL request paths are relative to; its path is a prefix of every request path.
  public let baseURL: URL
  /// Header fields sent with every request; a request's own field of the same name replaces them.
  public let defaultHeaders: HTTPHeaders
  /// Query items sent with every request before the request's own, evaluated per attempt (so that a
  /// timestamp is fresh).
  public let defaultQueryItems: @Sendable () -> [URLQueryItem]
  /// Encoder for ``RequestBody/json(_:)`` bodies.
  public let encoder: JSONEncoder
  /// Decoder for responses whose request has no decoder of its own.
  public let decoder: JSONDecoder
  /// Envelope for requests that do not name one, or nil for none.
  public let envelope: (any ResponseEnvelope)?
  /// Credentials.
  public let authentication: Authentication
  /// The interceptor that applies ``authentication`` and refreshes a token after a 401: the first adapter
  /// of every attempt and the first retrier asked after a failure.
  public let authenticationInterceptor: AuthenticationInterceptor
  /// Interceptors (adapter and retrier in one) run in order after ``authenticationInterceptor``: as
  /// adapters before ``adapters``, as retriers before ``retrier``.
  public let interceptors: [any RequestInterceptor]
  /// Adapters run in order on every attempt, after defaults, authentication and ``interceptors``.
  public let adapters: [any RequestAdapter]
  /// The built-in retrier's settings (used when no custom ``retrier`` is given).
  public let retryPolicy: RetryPolicy
  /// Decides on retries: ``retryPolicy`` unless a custom ``Retrier`` was given.
  public let retrier: any Retrier
  /// Observers of every call (e.g. ``CurlLogger``), called in order.
  public let monitors: [any EventMonitor]
  /// Sends the requests.
  public let transport: any Transport
  /// The response cache, or nil for none.
  public let cache: ResponseCache?
  /// Deadline of one attempt when the request has none. Default 20 s.
  public let timeout: Duration
  /// Overall deadline of a call (every attempt and the waits between them) when the request has none, or
  /// nil for the default: the per-attempt timeout when the retry policy retries at all (so a 20 s timeout
  /// means 20 s, however many retries fit in it), no overall limit when it never retries.
  public let totalTimeout: Duration?
  /// Waits between retries; replaceable in tests. Throws when the task is cancelled.
  public let sleep: @Sendable (Duration) async throws -> Void

  /// Creates a client.
  /// - Parameters:
  ///   - baseURL: scheme, host, port and optional path prefix.
  ///   - defaultHeaders: default `Accept: application/json`.
  ///   - defaultQueryItems: evaluated for every attempt; default none.
  ///   - encoder: JSON encoder for bodies.
  ///   - decoder: JSON decoder for responses.
  ///   - envelope: default envelope, nil for none.
  ///   - authentication: default `.none`.
  ///   - interceptors: adapters and retriers in one, run after authentication (adapting) and asked
  ///     after it and before `retrier` (retrying); default none.
  ///   - adapters: run in order on each attempt (put ``SigningAdapter`` last).
  ///   - retryPolicy: default ``RetryPolicy/default``.
  ///   - retrier: a custom ``Retrier`` replacing `retryPolicy`, or nil.
  ///   - monitors: ``EventMonitor``s, e.g. `[CurlLogger()]`; default none.
  ///   - transport: nil for ``platformDefaultTransport()``: ``URLSessionTransport`` on Apple platforms,
  ///     ``AutomaticTransport`` elsewhere (``SocketTransport`` for `http`; see docs/clientkit.md).
  ///   - cache: response cache, nil for none.
  ///   - timeout: default deadline of one attempt (20 s).
  ///   - totalTimeout: default overall deadline of a call, retries included; nil: the per-attempt timeout
  ///     when retries are on (see ``totalTimeout``).
  ///   - sleep: the wait between retries.
  public init(
    baseURL: URL,
    defaultHeaders: HTTPHeaders = ["Accept": "application/json"],
    defaultQueryItems: @escaping @Sendable () -> [URLQueryItem] = { [] },
    encoder: JSONEncoder = JSONEncoder(),
    decoder: JSONDecoder = JSONDecoder(),
    envelope: (any ResponseEnvelope)? = nil,
    authentication: Authentication = .none,
    interceptors: [any RequestInterceptor] = [],
    adapters: [any RequestAdapter] = [],
    retryPolicy: RetryPolicy = .default,
    retrier: (any Retrier)? = nil,
    monitors: [any EventMonitor] = [],
    transport: (any Transport)? = nil,
    cache: ResponseCache? = nil,
    timeout: Duration = .seconds(20),
    totalTimeout: Duration? = nil,
    sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }
  ) {
    self.baseURL = baseURL
    self.defaultHeaders = defaultHeaders
    self.defaultQueryItems = defaultQueryItems
    self.encoder = encoder
    self.decoder = decoder
    self.envelope = envelope
    self.authentication = authentication
    self.authenticationInterceptor = AuthenticationInterceptor(authentication)
    self.interceptors = interceptors
    self.adapters = adapters
    self.retryPolicy = retryPolicy
    self.retrier = retrier ?? retryPolicy
    self.monitors = monitors
    self.transport = transport ?? Self.platformDefaultTransport()
    self.cache = cache
    self.timeout = timeout
    self.totalTimeout = totalTimeout
    self.sleep = sleep
  }

  /// The transport used when none is given: ``URLSessionTransport`` on Apple platforms; on Linux and
  /// other platforms ``AutomaticTransport``: ``SocketTransport`` for `http`, ``URLSessionTransport`` for
  /// `https` (Linux URLSession rounds timeouts down to whole seconds and may re-send requests on reused
  /// connections; ``SocketTransport`` does neither). To trust another CA, pin keys or present a client
  /// certificate, pass a transport made with a trust configuration, e.g.
  /// `AutomaticTransport(trust:clientIdentity:)` (trust lives on the transport, see docs/clientkit.md).
  public static func platformDefaultTransport() -> any Transport {
    #if CLIENTKIT_NATIVE
      return AutomaticTransport()
    #else
      return URLSessionTransport()
    #endif
  }

  // MARK: - Sending

  /// Sends `request` and returns its decoded response.
  /// - Returns: the value.
  /// - Throws: any ``APIError`` case; ``APIError/cancelled`` when the task is cancelled.
  public func send<R: Request>(_ request: R) async throws(APIError) -> R.Response {
    try await response(request).value
  }

  /// Sends `request` and returns the value with its status, headers, body, duration and metrics.
  /// - Parameters:
  ///   - request: the request.
  ///   - progress: receives download progress of each attempt, or nil.
  ///   - uploadProgress: receives upload progress (request body bytes written) of each attempt, or nil.
  /// - Returns: the value and its response.
  /// - Throws: any ``APIError`` case; ``APIError/cancelled`` when the task is cancelled.
  public func response<R: Request>(
    _ request: R, progress: ProgressHandler? = nil, uploadProgress: ProgressHandler? = nil
  ) async throws(APIError) -> APIResponse<R.Response> {
    try await decodedResponse(
      request, options: TransferOptions(downloadProgress: progress, uploadProgress: uploadProgress),
      forceNetwork: false)
  }

  /// ``response(_:progress:uploadProgress:)``; `forceNetwork` skips answering from a fresh cache entry
  /// (the second delivery of "cached, then fresh").
  func decodedResponse<R: Request>(_ request: R, options: TransferOptions, forceNetwork: Bool)
    async throws(APIError) -> APIResponse<R.Response>
  {
    let call = CallID.next()
    let outcome = try await perform(request, call: call, options: options, forceNetwork: forceNetwork)
    do throws(APIError) {
      let value = try request.parseResponse(
        outcome.info, decoder: request.decoder ?? decoder, envelope: request.envelope ?? envelope)
      let metrics = outcome.metrics(clock: outcome.clock)
      for monitor in monitors { monitor.requestDecoded(call, response: outcome.info, metrics: metrics) }
      return APIResponse(
        value: value, statusCode: outcome.info.statusCode, headers: outcome.info.headers,
        body: outcome.info.body, duration: metrics.totalDuration, attempts: outcome.attempts.count,
        source: outcome.source, request: outcome.info.request, metrics: metrics)
    } catch {
      let metrics = outcome.metrics(clock: outcome.clock)
      for monitor in monitors { monitor.requestFailed(call, error: error, metrics: metrics) }
      throw error
    }
  }

  /// The overall deadline of `request`: its own ``Request/totalTimeout``, else ``totalTimeout``, else the
  /// per-attempt timeout when the retry policy retries at all, else none.
  func totalLimit<R: Request>(for request: R) -> Duration? {
    if let limit = request.totalTimeout ?? totalTimeout { return limit }
    let retries = retrier is RetryPolicy ? retryPolicy.maxRetries > 0 : true
    return retries ? (request.timeout ?? timeout) : nil
  }

  // MARK: - Building

  /// Builds the request exactly as the next attempt would send it: URL from base URL, path and query
  /// (defaults first), headers (defaults replaced by the request's), body, then the adapters: the
  /// ``authenticationInterceptor``, the ``interceptors``, the ``adapters``.
  /// - Returns: the request and the bearer token it carries (nil when none).
  /// - Throws: ``APIError/invalidRequest(_:)`` when the URL cannot be formed, the body cannot be encoded
  ///   or an adapter fails with a non-``APIError``; an adapter's own ``APIError``.
  public func makeTransportRequest<R: Request>(_ request: R) async throws(APIError) -> (
    TransportRequest, bearerToken: String?
  ) {
    try await makeTransportRequest(request, created: nil)
  }

  /// As ``makeTransportRequest(_:)``; reports ``EventMonitor/requestCreated(_:request:)`` for `created`.
  func makeTransportRequest<R: Request>(_ request: R, created: CallID?) async throws(APIError) -> (
    TransportRequest, bearerToken: String?
  ) {
    let url: URL
    if let absolute = request as? any AbsoluteURLRequest {
      url = absolute.absoluteURL
    } else {
      url = try makeURL(path: request.path, query: defaultQueryItems() + request.queryItems)
    }
    var headers = defaultHeaders
    for field in request.headers { headers.remove(name: field.name) }
    for field in request.headers { headers.add(name: field.name, value: field.value) }

    var body = Data()
    if let requestBody = request.body {
      let (data, contentType) = try requestBody.encoded(with: encoder)
      body = data
      if let contentType, !request.headers.contains("Content-Type") {
        headers.replaceOrAdd(name: "Content-Type", value: contentType)
      }
    }

    var built = TransportRequest(
      method: request.method, url: url, headers: headers, body: body,
      timeout: request.timeout ?? timeout, isIdempotent: request.isIdempotent)
    if let created {
      for monitor in monitors { monitor.requestCreated(created, request: built) }
    }
    let context = AdaptContext(requiresAuthentication: request.requiresAuthentication)
    built = try await adapt(built, with: authenticationInterceptor, context: context)
    let bearerToken =
      request.requiresAuthentication
      ? authentication.tokenScheme?.token(in: built.headers) : nil
    for adapter in interceptors as [any RequestAdapter] + adapters {
      built = try await adapt(built, with: adapter, context: context)
    }
    return (built, bearerToken)
  }

  /// Runs one adapter; an error that is not an ``APIError`` becomes ``APIError/invalidRequest(_:)``.
  private func adapt(_ request: TransportRequest, with adapter: any RequestAdapter, context: AdaptContext)
    async throws(APIError) -> TransportRequest
  {
    do {
      return try await adapter.adapt(request, context: context)
    } catch let error as APIError {
      throw error
    } catch {
      throw .invalidRequest("adapter \(type(of: adapter)) failed: \(error)")
    }
  }

  /// The absolute URL for `path` (joined to the base path with exactly one `/`) and `query`.
  /// - Throws: ``APIError/invalidRequest(_:)`` when the base URL has no scheme or host.
  func makeURL(path: String, query: [URLQueryItem]) throws(APIError) -> URL {
    guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
      components.scheme != nil, let host = components.host, !host.isEmpty
    else { throw .invalidRequest("the base URL \(baseURL) has no scheme or host") }
    components.percentEncodedPath = PercentEncoding.join(
      basePath: components.percentEncodedPath, PercentEncoding.path(path))
    let base = components.percentEncodedQuery.map { [$0] } ?? []
    let all = base + (query.isEmpty ? [] : [PercentEncoding.query(query)])
    components.percentEncodedQuery = all.isEmpty ? nil : all.joined(separator: "&")
    components.fragment = nil
    guard let url = components.url else {
      throw .invalidRequest("no valid URL for path \"\(path)\"")
    }
    return url
  }

  /// The cache key of `request`, or nil when it is not cacheable (no cache, not `GET`, policy off).
  func cacheKey<R: Request>(for request: R) -> String? {
    guard cache != nil, request.method == .get, request.cachePolicy == .useProtocol,
      !(request is any AbsoluteURLRequest),
      let url = try? makeURL(path: request.path, query: request.queryItems)
    else { return nil }
    return "GET " + url.absoluteString
  }
}
