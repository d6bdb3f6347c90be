#if CLIENTKIT_NATIVE
  /// Picks a transport per request: ``SocketTransport`` for `http` URLs; for `https`,
  /// ``URLSessionTransport`` by default, or ``SocketTransport`` when ``plain`` has a custom TLS
  /// configuration (a ``TrustConfiguration`` other than ``TrustConfiguration/system``, or a client
  /// identity). This is ``APIClient``'s default on Linux.
  ///
  /// Why: swift-corelibs-foundation's URLSession never delivers server-trust challenges, so it cannot trust
  /// an extra CA, check pins or present a client certificate; ``SocketTransport`` can, on every platform,
  /// with the same typed ``APIError/tlsFailure(_:_:)`` reasons. Trust lives on the transport:
  ///
  /// ```swift
  /// let transport = AutomaticTransport(trust: .onlyCertificates(mockServerCertificatePEM))
  /// let client = APIClient(baseURL: URL(string: "https://127.0.0.1:8443")!, transport: transport)
  /// ```
  public final class AutomaticTransport: Transport {
    /// The transport for `http` URLs, and for `https` when it has a custom TLS configuration.
    public let plain: SocketTransport
    /// The transport for `https` URLs when ``plain`` has no custom TLS configuration.
    public let secure: URLSessionTransport

    /// Creates the pair.
    /// - Parameters:
    ///   - plain: transport for `http` (default a new ``SocketTransport``); also for `https` when its
    ///     ``SocketTransport/hasCustomTLSConfiguration`` is true.
    ///   - secure: transport for the other `https` requests (default a new ``URLSessionTransport``).
    public init(
      plain: SocketTransport = SocketTransport(), secure: URLSessionTransport = URLSessionTransport()
    ) {
      self.plain = plain
      self.secure = secure
    }

    /// Creates a pair whose `https` requests accept the servers `trust` accepts, presenting
    /// `clientIdentity` when asked: both go through a ``SocketTransport`` unless `trust` is
    /// ``TrustConfiguration/system`` and there is no identity.
    /// - Parameters:
    ///   - trust: which server certificates to accept.
    ///   - clientIdentity: the client certificate for mutual TLS, or nil.
    public convenience init(trust: TrustConfiguration, clientIdentity: TLSClientIdentity? = nil) {
      self.init(plain: SocketTransport(trust: trust, clientIdentity: clientIdentity))
    }

    /// True when `https` requests go through ``plain`` (``SocketTransport``).
    public var sendsHTTPSThroughSockets: Bool { plain.hasCustomTLSConfiguration }

    /// Sends with ``plain`` or ``secure`` depending on the URL scheme and the TLS configuration.
    /// - Throws: whatever the chosen transport throws.
    public func send(_ request: TransportRequest, progress: ProgressHandler?) async throws(APIError)
      -> TransportResponse
    {
      let scheme = request.url.scheme?.lowercased()
      if scheme == "http" || (scheme == "https" && sendsHTTPSThroughSockets) {
        return try await plain.send(request, progress: progress)
      }
      return try await secure.send(request, progress: progress)
    }

    /// As ``send(_:progress:)`` with ``TransferOptions``, through the same choice of transport.
    /// - Throws: whatever the chosen transport throws.
    public func send(_ request: TransportRequest, options: TransferOptions) async throws(APIError)
      -> TransportResponse
    {
      let scheme = request.url.scheme?.lowercased()
      if scheme == "http" || (scheme == "https" && sendsHTTPSThroughSockets) {
        return try await plain.send(request, options: options)
      }
      return try await secure.send(request, options: options)
    }

    /// Streams through ``plain`` or ``secure`` by the same rule as ``send(_:progress:)``.
    /// - Throws: what the chosen transport throws.
    public func stream(_ request: TransportRequest) async throws(APIError) -> StreamingResponse {
      let scheme = request.url.scheme?.lowercased()
      if scheme == "http" || (scheme == "https" && sendsHTTPSThroughSockets) {
        return try await plain.stream(request)
      }
      return try await secure.stream(request)
    }
  }
#endif
