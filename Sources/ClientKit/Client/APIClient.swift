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
  /// Adapters run in order on every attempt, after defaults and authentication.
  public let adapters: [any RequestAdapter]
  /// The retrier.
  public let retryPolicy: RetryPolicy
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
  ///   - adapters: run in order on each attempt (put ``SigningAdapter`` last).
  ///   - retryPolicy: default ``RetryPolicy/default``.
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
    adapters: [any RequestAdapter] = [],
    retryPolicy: RetryPolicy = .default,
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
    self.adapters = adapters
    self.retryPolicy = retryPolicy
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

  /// Sends `request` and returns the value with its status, headers, body and duration.
  /// - Parameters:
  ///   - request: the request.
  ///   - progress: receives download progress of each attempt, or nil.
  /// - Returns: the value and its response.
  /// - Throws: any ``APIError`` case; ``APIError/cancelled`` when the task is cancelled.
  public func response<R: Request>(_ request: R, progress: ProgressHandler? = nil) async throws(APIError)
    -> APIResponse<R.Response>
  {
    let clock = ContinuousClock()
    let start = clock.now
    var retries = 0
    var refreshedAfter401 = false
    var attempts = 0
    let cacheKey = cacheKey(for: request)
    let attemptLimit = request.timeout ?? timeout
    let totalLimit = self.totalLimit(for: request)
    let deadline = totalLimit.map { start + $0 }
    var lastRequest: RequestInfo?
    func report(_ lastFailure: String?) -> APIError {
      .deadlineExceeded(
        TimeoutReport(
          totalLimit: totalLimit ?? attemptLimit, attemptLimit: attemptLimit, attempts: attempts,
          elapsed: clock.now - start, request: lastRequest, lastFailure: lastFailure))
    }
    while true {
      if Task.isCancelled { throw .cancelled }
      var clippedByDeadline = false
      do throws(APIError) {
        let (built, sentToken) = try await makeTransportRequest(request)
        var outgoing = built
        if let deadline {
          let remaining = deadline - clock.now
          guard remaining > .zero else { throw report(nil) }
          if remaining < outgoing.timeout {
            // Cut short by the overall deadline by more than clock noise (the first attempt under the
            // default, total = per-attempt, is not).
            clippedByDeadline = remaining + .milliseconds(1) < outgoing.timeout
            outgoing.timeout = remaining
          }
        }
        let cached = cacheKey.flatMap { cache?.lookup($0) }
        if let cached {
          if let etag = cached.etag, !outgoing.headers.contains("If-None-Match") {
            outgoing.headers.add(name: "If-None-Match", value: etag)
          }
          if let date = cached.lastModified, !outgoing.headers.contains("If-Modified-Since") {
            outgoing.headers.add(name: "If-Modified-Since", value: date)
          }
        }
        attempts += 1
        lastRequest = outgoing.info
        let raw = try await transport.send(outgoing, progress: progress)
        var info = ResponseInfo(
          request: outgoing.info, statusCode: raw.statusCode, headers: raw.headers, body: raw.body)
        var source = APIResponse<R.Response>.Source.network

        if raw.statusCode == 304, cached != nil, let cacheKey,
          let updated = cache?.revalidated(cacheKey, with: raw.headers)
        {
          info = ResponseInfo(
            request: outgoing.info, statusCode: updated.statusCode, headers: updated.headers,
            body: updated.body)
          source = .revalidated
        }

        if info.statusCode == 401, !refreshedAfter401, case .bearer(let authenticator) = authentication,
          authenticator.canRefresh, request.requiresAuthentication, !BearerTokenAuthenticator.isRefreshing
        {
          refreshedAfter401 = true
          do {
            _ = try await authenticator.token(replacing: sentToken)
          } catch {
            throw APIError.refreshFailed(response: info, reason: error.reason)
          }
          continue
        }

        guard request.acceptableStatusCodes.contains(info.statusCode) else {
          let failure = (request.envelope ?? envelope).flatMap {
            ResponseDecoding.applicationError(in: info.body, envelope: $0)
          }
          throw APIError.unacceptableStatus(info, application: failure)
        }

        if source == .network, let cacheKey, let cache, request.method == .get {
          if !cache.store(
            CachedResponse(statusCode: info.statusCode, headers: info.headers, body: info.body), for: cacheKey
          ) {
            cache.remove(cacheKey)
          }
        }

        let value = try request.parseResponse(
          info, decoder: request.decoder ?? decoder, envelope: request.envelope ?? envelope)
        return APIResponse(
          value: value, statusCode: info.statusCode, headers: info.headers, body: info.body,
          duration: clock.now - start, attempts: attempts, source: source, request: info.request)
      } catch {
        if case .cancelled = error { throw error }
        if Task.isCancelled { throw .cancelled }
        if case .deadlineExceeded = error { throw error }
        let timedOut: Bool
        if case .timedOut = error { timedOut = true } else { timedOut = false }
        // The attempt ran into the overall deadline, not its own limit.
        if timedOut, clippedByDeadline { throw report(nil) }
        guard
          case .retry(let delay) = retryPolicy.decision(
            for: error, isIdempotent: request.isIdempotent, retryCount: retries)
        else {
          // Retries ran out on a timeout: say how many attempts there were, not only the last limit.
          if timedOut, attempts > 1 { throw report(nil) }
          throw error
        }
        if let deadline, clock.now + delay >= deadline {
          // The wait alone would pass the overall deadline: stop now with what the last attempt got.
          if timedOut { throw report(nil) }
          throw error
        }
        retries += 1
        do {
          try await sleep(delay)
        } catch {
          throw .cancelled
        }
      }
    }
  }

  /// The overall deadline of `request`: its own ``Request/totalTimeout``, else ``totalTimeout``, else the
  /// per-attempt timeout when the retry policy retries at all, else none.
  func totalLimit<R: Request>(for request: R) -> Duration? {
    if let limit = request.totalTimeout ?? totalTimeout { return limit }
    return retryPolicy.maxRetries > 0 ? (request.timeout ?? timeout) : nil
  }

  // MARK: - Building

  /// Builds the request exactly as the next attempt would send it: URL from base URL, path and query
  /// (defaults first), headers (defaults replaced by the request's), body, authentication, then adapters.
  /// - Returns: the request and the bearer token it carries (nil when none).
  /// - Throws: ``APIError/invalidRequest(_:)`` when the URL cannot be formed, the body cannot be encoded
  ///   or an adapter fails with a non-``APIError``; an adapter's own ``APIError``.
  public func makeTransportRequest<R: Request>(_ request: R) async throws(APIError) -> (
    TransportRequest, bearerToken: String?
  ) {
    let url = try makeURL(path: request.path, query: defaultQueryItems() + request.queryItems)
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

    var bearerToken: String?
    if request.requiresAuthentication {
      switch authentication {
      case .none:
        break
      case .bearer(let authenticator):
        if let token = authenticator.token {
          bearerToken = token
          headers.replaceOrAdd(name: "Authorization", value: "Bearer \(token)")
        }
      case .basic(let username, let password):
        headers.replaceOrAdd(
          name: "Authorization", value: Authentication.basicValue(username: username, password: password))
      }
    }

    var built = TransportRequest(
      method: request.method, url: url, headers: headers, body: body,
      timeout: request.timeout ?? timeout, isIdempotent: request.isIdempotent)
    for adapter in adapters {
      do {
        built = try await adapter.adapt(built)
      } catch let error as APIError {
        throw error
      } catch {
        throw .invalidRequest("adapter \(type(of: adapter)) failed: \(error)")
      }
    }
    return (built, bearerToken)
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
      let url = try? makeURL(path: request.path, query: request.queryItems)
    else { return nil }
    return "GET " + url.absoluteString
  }
}
