#if CLIENTKIT_NATIVE
  import COpenSSL
  import Foundation
  import NativeSupport

  #if canImport(Glibc)
    import Glibc
  #elseif canImport(Darwin)
    import Darwin
  #endif

  /// A client certificate and its key (PEM), presented when a server asks for one (mutual TLS).
  public struct TLSClientIdentity: Sendable, Hashable {
    /// The client certificate, then any intermediates.
    public var certificatePEM: String
    /// The certificate's private key (unencrypted PEM).
    public var privateKeyPEM: String

    /// Creates an identity from PEM text.
    public init(certificatePEM: String, privateKeyPEM: String) {
      self.certificatePEM = certificatePEM
      self.privateKeyPEM = privateKeyPEM
    }
  }

  /// Why a ``TLSClientStream`` operation failed.
  public enum TLSClientError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The server's certificate was rejected, or the handshake failed.
    case trust(TLSTrustFailure)
    /// The deadline passed.
    case deadline
    /// The peer reset the connection (ECONNRESET, EPIPE).
    case reset
    /// Another socket error: errno and its text.
    case io(Int32, String)
    /// The stream was already closed.
    case closed

    /// The underlying reason as a sentence.
    public var description: String {
      switch self {
      case .trust(let failure): return failure.description
      case .deadline: return "deadline passed"
      case .reset: return "connection reset by peer"
      case .io(let code, let text): return "\(text) (errno \(code))"
      case .closed: return "stream closed"
      }
    }
  }

  /// Shared client-side TLS settings: an OpenSSL `SSL_CTX` (TLS 1.2+, ALPN `http/1.1`, optional client
  /// identity) and the trust store built from a ``TrustConfiguration``. Make one per configuration and
  /// reuse it for every connection; building the store reads the system roots.
  ///
  /// Invariant (`@unchecked Sendable`): the context and store are configured in `init` and only read
  /// afterwards (OpenSSL allows concurrent `SSL_new` and verification then). Freed once in `deinit`.
  public final class TLSClientContext: @unchecked Sendable {
    let ctx: OpaquePointer
    let trust: TrustStore

    /// Creates the context.
    /// - Parameters:
    ///   - trust: which server certificates to accept.
    ///   - identity: a client certificate to present when asked (mutual TLS), or nil.
    /// - Throws: ``TLSClientError/trust(_:)`` with ``TLSTrustFailure/invalidCertificate(_:)`` for an
    ///   unreadable identity, or ``TLSTrustFailure/handshakeFailed(_:)`` when OpenSSL cannot set up.
    public init(trust: TrustConfiguration, identity: TLSClientIdentity? = nil) throws(TLSClientError) {
      if let problem = OpenSSLLibrary.loadProblem { throw .trust(.handshakeFailed(problem)) }
      ERR_clear_error()
      guard let ctx = SSL_CTX_new(TLS_client_method()) else {
        throw .trust(.handshakeFailed("SSL_CTX_new: \(OpenSSLErrors.drain())"))
      }
      self.ctx = ctx
      self.trust = TrustStore(trust)
      // Verification runs after the handshake (``TrustStore``), to report a typed reason; no application
      // byte is sent before it passes.
      SSL_CTX_set_verify(ctx, SSL_VERIFY_NONE, nil)
      _ = cossl_ctx_set_default_options(ctx)
      _ = cossl_ctx_set_nonblocking_modes(ctx)
      guard cossl_set_min_proto(ctx, TLS1_2_VERSION) == 1 else {
        throw .trust(.handshakeFailed("minimum TLS version: \(OpenSSLErrors.drain())"))
      }
      let alpn: [UInt8] = [8] + Array("http/1.1".utf8)
      _ = SSL_CTX_set_alpn_protos(ctx, alpn, UInt32(alpn.count))
      if let identity {
        let chain: [OwnedCertificate]
        do {
          chain = try OwnedCertificate.parsePEM(identity.certificatePEM)
        } catch {
          throw .trust(error)
        }
        guard let first = chain.first, SSL_CTX_use_certificate(ctx, first.pointer) == 1 else {
          throw .trust(.invalidCertificate("client certificate: \(OpenSSLErrors.drain())"))
        }
        for link in chain.dropFirst() { _ = cossl_ctx_add1_chain_cert(ctx, link.pointer) }
        guard let bio = BIO_new(BIO_s_mem()) else { throw .trust(.invalidCertificate("out of memory")) }
        defer { BIO_free(bio) }
        let bytes = Array(identity.privateKeyPEM.utf8)
        _ = bytes.withUnsafeBytes { BIO_write(bio, $0.baseAddress, Int32(clamping: $0.count)) }
        guard let key = PEM_read_bio_PrivateKey(bio, nil, nil, nil) else {
          throw .trust(.invalidCertificate("client key: \(OpenSSLErrors.drain())"))
        }
        defer { EVP_PKEY_free(key) }
        guard SSL_CTX_use_PrivateKey(ctx, key) == 1, SSL_CTX_check_private_key(ctx) == 1 else {
          throw .trust(.invalidCertificate("client key does not match: \(OpenSSLErrors.drain())"))
        }
      }
      ERR_clear_error()
    }

    deinit { SSL_CTX_free(ctx) }
  }

  /// The client side of one TLS connection over a connected socket (blocking or non-blocking): SNI and
  /// ALPN `http/1.1`, then the server's chain is checked against the context's ``TrustConfiguration``
  /// before any application byte is sent.
  ///
  /// Two ways to use it: the `…Step` methods never wait (they say whether the socket must become readable
  /// or writable, for an event loop), and the deadline methods wait with `poll(2)` until a monotonic
  /// deadline (for a blocking exchange like ClientKit's `SocketConnection`).
  ///
  /// Invariant (`@unchecked Sendable`): used by one thread at a time (its owner), like the socket; the
  /// `SSL` object is freed exactly once, in ``close()`` or `deinit`. The descriptor is never closed here:
  /// its owner closes it after ``close()``.
  public final class TLSClientStream: @unchecked Sendable {
    /// What a non-blocking step needs before it can go on.
    public enum Progress: Sendable, Equatable {
      /// Done (handshake complete, or `bytes` transferred).
      case done
      /// Call again when the socket is readable.
      case wantsRead
      /// Call again when the socket is writable.
      case wantsWrite
    }

    /// The socket.
    public let fd: Int32
    /// The host name or IP literal checked against the certificate.
    public let host: String
    private let context: TLSClientContext
    private var ssl: OpaquePointer?
    private var verified = false
    private var fatal = false

    /// Prepares a TLS session over `fd` (already connected) for `host`.
    /// - Parameters:
    ///   - fd: the connected socket; stays owned by the caller.
    ///   - host: host name (sent as SNI) or IP literal, as in the URL (`[::1]` brackets allowed).
    ///   - context: shared settings and trust.
    /// - Throws: ``TLSClientError/trust(_:)`` with ``TLSTrustFailure/handshakeFailed(_:)`` when OpenSSL
    ///   cannot create the session.
    public init(fd: Int32, host: String, context: TLSClientContext) throws(TLSClientError) {
      self.fd = fd
      self.host = host
      self.context = context
      ERR_clear_error()
      guard let ssl = SSL_new(context.ctx) else {
        throw .trust(.handshakeFailed("SSL_new: \(OpenSSLErrors.drain())"))
      }
      guard let method = NoSignalBIOMethod.shared.pointer, cossl_ssl_set_socket(ssl, fd, method) == 1
      else {
        SSL_free(ssl)
        throw .trust(.handshakeFailed("cannot attach the socket: \(OpenSSLErrors.drain())"))
      }
      var name = host
      if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
      if !TrustStore.isIPAddress(name), !name.isEmpty, !name.utf8.contains(0) {
        _ = cossl_set_tlsext_host_name(ssl, name)  // SNI is for names only (RFC 6066 §3)
      }
      SSL_set_connect_state(ssl)
      self.ssl = ssl
    }

    deinit {
      if let ssl { SSL_free(ssl) }
    }

    /// The negotiated protocol version, e.g. `TLSv1.3` (empty before the handshake).
    public var protocolVersion: String {
      guard let ssl, let text = SSL_get_version(ssl) else { return "" }
      return String(cString: text)
    }

    /// The certificates the server sent, DER, leaf first (empty before the handshake).
    public var peerCertificateChainDER: [[UInt8]] {
      guard let ssl, let chain = SSL_get_peer_cert_chain(ssl) else { return [] }
      return (0..<cossl_sk_x509_num(chain)).compactMap { index in
        cossl_sk_x509_value(chain, index).map { OwnedCertificate(retaining: $0).der }
      }
    }

    // MARK: Non-blocking steps

    /// Advances the handshake without waiting; on completion checks the server's certificate.
    /// - Returns: ``Progress/done`` when the session is ready, else what to wait for.
    /// - Throws: ``TLSClientError`` (``TLSClientError/trust(_:)`` for certificate and handshake failures).
    public func handshakeStep() throws(TLSClientError) -> Progress {
      guard let ssl, !fatal else { throw .closed }
      if verified { return .done }
      ERR_clear_error()
      let rc = SSL_do_handshake(ssl)
      if rc != 1 {
        switch try classify(rc, during: "handshake") {
        case .wantsRead: return .wantsRead
        case .wantsWrite: return .wantsWrite
        case .done, nil: throw fail(.trust(.handshakeFailed("connection closed during the handshake")))
        }
      }
      var chain: [OwnedCertificate] = []
      if let peer = SSL_get_peer_cert_chain(ssl) {
        for index in 0..<cossl_sk_x509_num(peer) {
          if let cert = cossl_sk_x509_value(peer, index) { chain.append(OwnedCertificate(retaining: cert)) }
        }
      }
      do {
        try context.trust.evaluate(chain: chain, host: host, at: nil)
      } catch {
        throw fail(.trust(error))
      }
      verified = true
      return .done
    }

    /// Reads decrypted bytes without waiting (completing the handshake first if needed).
    /// - Returns: `(count, .done)` with count > 0, `(0, .done)` at end of stream, or `(0, want)`.
    /// - Throws: ``TLSClientError``.
    public func readStep(into buffer: UnsafeMutableRawBufferPointer) throws(TLSClientError) -> (Int, Progress)
    {
      let handshake = try handshakeStep()
      guard handshake == .done else { return (0, handshake) }
      guard let ssl else { throw .closed }
      ERR_clear_error()
      let n = SSL_read(ssl, buffer.baseAddress, Int32(clamping: buffer.count))
      if n > 0 { return (Int(n), .done) }
      guard let want = try classify(n, during: "read") else { return (0, .done) }
      return (0, want)
    }

    /// Writes some of `bytes` without waiting (completing the handshake first if needed). Retry with the
    /// same bytes after a want.
    /// - Returns: `(count, .done)` with count > 0, or `(0, want)`.
    /// - Throws: ``TLSClientError``.
    public func writeStep(_ bytes: UnsafeRawBufferPointer) throws(TLSClientError) -> (Int, Progress) {
      let handshake = try handshakeStep()
      guard handshake == .done else { return (0, handshake) }
      guard let ssl else { throw .closed }
      guard !bytes.isEmpty else { return (0, .done) }
      ERR_clear_error()
      let n = SSL_write(ssl, bytes.baseAddress, Int32(clamping: bytes.count))
      if n > 0 { return (Int(n), .done) }
      guard let want = try classify(n, during: "write") else { throw fail(.reset) }
      return (0, want)
    }

    // MARK: Deadline-bounded

    /// Completes the handshake and the certificate check before `deadline` (monotonic ns, as
    /// `clock_gettime(CLOCK_MONOTONIC)`).
    /// - Throws: ``TLSClientError`` (``TLSClientError/deadline`` when time runs out).
    public func handshake(until deadline: UInt64) throws(TLSClientError) {
      while true {
        let progress = try handshakeStep()
        if progress == .done { return }
        try wait(progress, until: deadline)
      }
    }

    /// Writes all of `bytes` before `deadline`.
    /// - Throws: ``TLSClientError``.
    public func writeAll(_ bytes: [UInt8], until deadline: UInt64) throws(TLSClientError) {
      var offset = 0
      while offset < bytes.count {
        let result = bytes.withUnsafeBytes { buffer in
          Result { () throws(TLSClientError) in
            try writeStep(UnsafeRawBufferPointer(rebasing: buffer[offset...]))
          }
        }
        let (n, progress) = try result.get()
        offset += n
        if n == 0 { try wait(progress, until: deadline) }
      }
    }

    /// Reads what is available into `buffer`, waiting until `deadline`.
    /// - Returns: the number of bytes read; 0 at end of stream.
    /// - Throws: ``TLSClientError``.
    public func read(into buffer: inout [UInt8], until deadline: UInt64) throws(TLSClientError) -> Int {
      while true {
        let result = buffer.withUnsafeMutableBytes { raw in
          Result { () throws(TLSClientError) in try readStep(into: raw) }
        }
        let (n, progress) = try result.get()
        if n > 0 || progress == .done { return n }
        try wait(progress, until: deadline)
      }
    }

    /// Sends close_notify (best effort, without waiting) and frees the session. The socket stays open
    /// for its owner to close. Safe to call more than once.
    public func close() {
      guard let ssl else { return }
      if !fatal, SSL_is_init_finished(ssl) != 0 {
        ERR_clear_error()
        _ = SSL_shutdown(ssl)
      }
      ERR_clear_error()
      SSL_free(ssl)
      self.ssl = nil
    }

    // MARK: Helpers

    /// Maps a failed SSL call: a want, nil for a clean end of stream, or a thrown error.
    private func classify(_ rc: Int32, during operation: String) throws(TLSClientError) -> Progress? {
      guard let ssl else { throw .closed }
      let code = SSL_get_error(ssl, rc)
      switch code {
      case SSL_ERROR_WANT_READ: return .wantsRead
      case SSL_ERROR_WANT_WRITE: return .wantsWrite
      case SSL_ERROR_ZERO_RETURN: return nil
      case SSL_ERROR_SYSCALL:
        let e = errno
        let text = OpenSSLErrors.drain()
        if e == 0 {
          if SSL_is_init_finished(ssl) == 0 {
            throw fail(.trust(.handshakeFailed(text.isEmpty ? "connection closed by the server" : text)))
          }
          fatal = true
          return nil
        }
        if e == ECONNRESET || e == EPIPE { throw fail(.reset) }
        throw fail(.io(e, String(cString: strerror(e))))
      default:
        let text = OpenSSLErrors.drain()
        throw fail(.trust(.handshakeFailed("\(operation): \(text.isEmpty ? "protocol error" : text)")))
      }
    }

    private func fail(_ error: TLSClientError) -> TLSClientError {
      fatal = true
      return error
    }

    private func wait(_ progress: Progress, until deadline: UInt64) throws(TLSClientError) {
      let events = Int16(progress == .wantsWrite ? POLLOUT : POLLIN)
      while true {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let now = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        guard now < deadline else { throw .deadline }
        let remaining = Int32(min(UInt64(Int32.max), (deadline - now + 999_999) / 1_000_000))
        var pfd = pollfd(fd: fd, events: events, revents: 0)
        let rc = poll(&pfd, 1, remaining)
        if rc > 0 { return }
        if rc == 0 { continue }
        if errno == EINTR { continue }
        throw .io(errno, String(cString: strerror(errno)))
      }
    }
  }
#endif
