#if CLIENTKIT_NATIVE
  import Foundation
  import HTTPCore
  import Synchronization

  /// A ``Transport`` that speaks HTTP/1.1 over its own TCP sockets with HTTPCore's parser: the default on
  /// Linux, and the transport for timing and fault tests everywhere.
  ///
  /// - **Exact deadlines.** ``TransportRequest/timeout`` bounds connect, write, waiting for the head and
  ///   reading the body together, to the millisecond; the connection is then closed, never reused, so a
  ///   late answer cannot be read as the answer to a later request.
  /// - **Faults reported as such.** Refused → ``APIError/cannotConnect(_:reason:)``; RST →
  ///   ``APIError/connectionReset(_:)``; close before any byte → ``APIError/emptyResponse(_:)``; close
  ///   inside the head → ``APIError/connectionLost(_:receivedBytes:)``; close or RST inside the body →
  ///   ``APIError/truncatedBody(_:statusCode:expected:received:)``; unparseable bytes →
  ///   ``APIError/malformedResponse(_:detail:)``.
  /// - **TLS** for `https` (default port 443) with OpenSSL: SNI, ALPN `http/1.1`, TLS 1.2+, the server's
  ///   chain checked against ``trust`` (system roots by default; extra CAs such as mockserver's, public-key
  ///   pins) before the request is sent, and ``clientIdentity`` presented when the server asks (mutual
  ///   TLS). A rejected certificate or failed handshake is ``APIError/tlsFailure(_:_:)`` with the exact
  ///   ``TLSTrustFailure`` (`.expired`, `.hostnameMismatch`, `.untrustedRoot`, `.pinMismatch`…). The
  ///   handshake is inside the same deadline as the rest of the exchange.
  /// - **Keep-alive pool** keyed by scheme, host and port (one trust configuration per transport, so TLS
  ///   connections made under another trust are never shared). An idle connection is checked with a
  ///   non-blocking `MSG_PEEK` before use; on TLS, records waiting on an idle connection (TLS 1.3 session
  ///   tickets) are consumed and the connection stays reusable unless they carry data or a close. If a reused connection still fails before any response byte (the server
  ///   closed it in the meantime), the request is sent again on a new connection **only when it is
  ///   idempotent**; a non-idempotent request reports the error instead of being re-sent silently.
  /// - **Headers exactly as received**: order, spelling and repeated fields are kept.
  /// - `gzip`/`deflate` content codings are decoded (`Accept-Encoding: gzip` is sent unless disabled).
  ///
  /// Other schemes are rejected with ``APIError/invalidRequest(_:)``. Each exchange runs on a thread of its
  /// own, blocked in `poll(2)`: never a Swift concurrency thread, never a Dispatch worker.
  public final class SocketTransport: Transport {
    /// Which server certificates `https` requests accept.
    public let trust: TrustConfiguration
    /// The client certificate presented when a server asks for one (mutual TLS), or nil.
    public let clientIdentity: TLSClientIdentity?
    let pool: ConnectionPool
    let limits: ParserLimits
    private let acceptsGzip: Bool
    /// Whether `3xx` responses with a `Location` are followed (see ``send(_:progress:)``).
    public let followsRedirects: Bool
    /// Most redirects followed for one request.
    public let maxRedirects: Int
    /// The TLS context, built on the first `https` request (building it reads the system roots).
    private let tlsContext = Mutex<Result<TLSClientContext, TLSTrustFailure>?>(nil)

    /// Creates a transport.
    /// - Parameters:
    ///   - maxIdleConnectionsPerHost: idle keep-alive connections kept per scheme, host and port (0 disables reuse).
    ///   - idleTimeout: an idle connection older than this is closed instead of reused (default 30 s).
    ///   - limits: bounds for parsing responses (head size, body size in bytes).
    ///   - acceptsGzip: send `Accept-Encoding: gzip` when the request has no `Accept-Encoding`.
    ///   - trust: which server certificates `https` requests accept (default: the system roots).
    ///   - clientIdentity: a client certificate and key for servers that require one (mutual TLS). An
    ///     unreadable identity fails each `https` request with ``APIError/tlsFailure(_:_:)``
    ///     (``TLSTrustFailure/invalidCertificate(_:)``).
    ///   - followsRedirects: follow `301`/`302`/`303`/`307`/`308` (default true, like URLSession).
    ///   - maxRedirects: most redirects followed for one request (default 10).
    public init(
      maxIdleConnectionsPerHost: Int = 8, idleTimeout: Duration = .seconds(30),
      limits: ParserLimits = ParserLimits(), acceptsGzip: Bool = true, trust: TrustConfiguration = .system,
      clientIdentity: TLSClientIdentity? = nil, followsRedirects: Bool = true, maxRedirects: Int = 10
    ) {
      self.followsRedirects = followsRedirects
      self.maxRedirects = max(0, maxRedirects)
      self.trust = trust
      self.clientIdentity = clientIdentity
      self.pool = ConnectionPool(maxIdlePerHost: maxIdleConnectionsPerHost, idleTimeout: idleTimeout)
      self.limits = limits
      self.acceptsGzip = acceptsGzip
    }

    deinit { pool.closeAll() }

    /// Closes every idle keep-alive connection.
    public func closeIdleConnections() { pool.closeAll() }

    /// Number of idle keep-alive connections to `host:port` for `scheme` (`http` or `https`).
    public func idleConnectionCount(host: String, port: Int, scheme: String = "http") -> Int {
      pool.idleCount(Self.poolKey(secure: scheme.lowercased() == "https", host: host, port: port))
    }

    /// True when `https` requests use something other than the system roots alone: extra trusted
    /// certificates, no system roots, pins, or a client identity.
    public var hasCustomTLSConfiguration: Bool { trust != .system || clientIdentity != nil }

    static func poolKey(secure: Bool, host: String, port: Int) -> String {
      "\(secure ? "https" : "http")://\(host):\(port)"
    }

    private func context() -> Result<TLSClientContext, TLSTrustFailure> {
      tlsContext.withLock { cached in
        if let cached { return cached }
        let made: Result<TLSClientContext, TLSTrustFailure>
        do throws(TLSClientError) {
          made = .success(try TLSClientContext(trust: trust, identity: clientIdentity))
        } catch {
          switch error {
          case .trust(let failure): made = .failure(failure)
          default: made = .failure(.handshakeFailed(error.description))
          }
        }
        cached = made
        return made
      }
    }

    /// The TLS context for an `https` request, nil for `http`.
    /// - Throws: ``APIError/tlsFailure(_:_:)`` when the trust configuration or identity cannot be loaded.
    func tlsContext(for request: TransportRequest) throws(APIError) -> TLSClientContext? {
      guard request.url.scheme?.lowercased() == "https" else { return nil }
      switch context() {
      case .success(let context): return context
      case .failure(let failure): throw .tlsFailure(request.info, failure)
      }
    }

    /// Sends the request over a pooled or new connection, following redirects when ``followsRedirects``.
    ///
    /// Redirects (RFC 9110 §15.4): `301`, `302`, `303`, `307` and `308` with a `Location` are followed up to
    /// ``maxRedirects`` times, all within the request's one deadline. `303` becomes `GET` (HEAD stays HEAD);
    /// `301`/`302` turn a `POST` into a `GET`, as browsers and URLSession do; `307`/`308` repeat the method
    /// and content. `Authorization` and `Cookie` are dropped when the redirect leaves the origin. After too
    /// many redirects the last `3xx` response is returned as it is.
    /// - Throws: the transport cases of ``APIError`` (see the type's documentation), ``APIError/cancelled``.
    public func send(_ request: TransportRequest, progress: ProgressHandler?) async throws(APIError)
      -> TransportResponse
    {
      try await send(request, options: TransferOptions(downloadProgress: progress))
    }

    /// As ``send(_:progress:)``, with upload progress (reported as the request is written, in 64 KiB
    /// steps) and, with ``TransferOptions/bodyFile``, the body streamed to that file with no size limit
    /// (`Accept-Encoding: gzip` is then not sent).
    /// - Throws: as ``send(_:progress:)``.
    public func send(_ request: TransportRequest, options: TransferOptions) async throws(APIError)
      -> TransportResponse
    {
      let clock = ContinuousClock()
      let started = clock.now
      var current = request
      var response = try await exchange(current, options: options)
      var hops = 0
      while followsRedirects, hops < maxRedirects, let next = Self.redirect(from: current, response: response)
      {
        hops += 1
        let remaining = request.timeout - (clock.now - started)
        guard remaining > .zero else { throw .timedOut(limit: request.timeout, request: request.info) }
        current = next
        current.timeout = remaining
        response = try await exchange(current, options: options)
      }
      return response
    }

    /// The request a redirect response asks for, or nil when `response` is not a redirect to follow.
    static func redirect(from request: TransportRequest, response: TransportResponse) -> TransportRequest? {
      guard [301, 302, 303, 307, 308].contains(response.statusCode),
        let location = response.headers.first("Location"),
        let url = URL(string: location, relativeTo: request.url)?.absoluteURL,
        let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https"
      else { return nil }
      var next = request
      next.url = url
      let becomesGet =
        (response.statusCode == 303 && request.method != .head)
        || ((response.statusCode == 301 || response.statusCode == 302) && request.method == .post)
      if becomesGet {
        next.method = .get
        next.body = Data()
        next.isIdempotent = true
        for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
          next.headers.remove(name: name)
        }
      }
      let sameOrigin =
        url.scheme?.lowercased() == request.url.scheme?.lowercased()
        && url.host?.lowercased() == request.url.host?.lowercased() && url.port == request.url.port
      if !sameOrigin {
        next.headers.remove(name: "Authorization")
        next.headers.remove(name: "Cookie")
        next.headers.remove(name: "Host")
      }
      return next
    }

    /// The host, port and TLS context `request` goes to, for ``exchange(_:options:)`` and ``stream(_:)``.
    /// - Throws: ``APIError/invalidRequest(_:)`` for a scheme other than http/https or a URL without a
    ///   host, ``APIError/cancelled`` when the calling task is cancelled, and what the TLS set-up throws.
    func origin(of request: TransportRequest) throws(APIError) -> (
      host: String, port: Int, tls: TLSClientContext?
    ) {
      let scheme = request.url.scheme?.lowercased()
      guard scheme == "http" || scheme == "https" else {
        throw .invalidRequest("SocketTransport speaks http and https only, not \(request.url.scheme ?? "?")")
      }
      guard let host = request.url.host, !host.isEmpty else {
        throw .invalidRequest("the URL \(request.url) has no host")
      }
      if Task.isCancelled { throw .cancelled }
      let tls = try tlsContext(for: request)
      return (host, request.url.port ?? (tls == nil ? 80 : 443), tls)
    }

    /// One request and its response, over a pooled or new connection.
    private func exchange(_ request: TransportRequest, options: TransferOptions) async throws(APIError)
      -> TransportResponse
    {
      let (host, port, tls) = try origin(of: request)
      let control = ExchangeControl()
      let (pool, limits, acceptsGzip) = (self.pool, self.limits, self.acceptsGzip)
      let result = await withTaskCancellationHandler {
        await withCheckedContinuation {
          (continuation: CheckedContinuation<Result<TransportResponse, APIError>, Never>) in
          // One thread per exchange: it blocks in poll(2) for as long as the server takes. Dispatch's
          // non-overcommit pool (what a concurrent queue targets) grows by about one thread per second on
          // Linux when its workers block, so 30 concurrent slow calls took seconds and starved everything
          // else queued on Dispatch, URLSession's callbacks included.
          let thread = Thread {
            let exchange = SocketExchange(
              request: request, host: host, port: port, tls: tls, control: control, pool: pool,
              limits: limits,
              acceptsGzip: acceptsGzip, options: options)
            continuation.resume(returning: exchange.run())
          }
          thread.name = "ClientKit.SocketTransport"
          thread.stackSize = 512 * 1024
          thread.start()
        }
      } onCancel: {
        control.cancel()
      }
      return try result.get()
    }
  }
#endif
