import COpenSSL
import NativeSupport

#if canImport(Glibc)
  import Glibc
#endif

/// One TLS connection: the server side of over an accepted non-blocking socket: an `SSL` object in accept
/// state whose handshake is driven implicitly by ``read(into:)`` and ``write(_:)``. `SSL_ERROR_WANT_READ`
/// becomes `.wouldBlock(wantsWrite: false)` and `SSL_ERROR_WANT_WRITE` `.wouldBlock(wantsWrite: true)`,
/// so the connection waits for the right readiness instead of blocking its event loop.
///
/// Invariant: used only on its connection's event-loop thread (like every ``ByteStream``); the `SSL`
/// pointer is owned by this object and freed exactly once, in ``close(reset:)`` or `deinit`, whichever
/// comes first. The shared `SSL_CTX` is retained through ``context``.
final class TLSByteStream: ByteStream {
  let fd: Int32
  /// The `SSL_CTX` owner (``TLSServerContext`` or ``UpstreamTLSContext``), retained while the `SSL` lives.
  private let context: AnyObject
  private var ssl: OpaquePointer?
  /// Set after a fatal TLS or socket error: OpenSSL forbids `SSL_shutdown` then.
  private var fatal = false
  private var cachedSubject: String??
  /// The reason of the last fatal error, for logs and tests.
  private(set) var lastError: String?
  /// The first bytes have been looked at (a TLS record, or a plain HTTP request).
  private var checkedForPlainHTTP = false

  /// nginx's answer to plain HTTP on an HTTPS port.
  static let plainHTTPAnswer: [UInt8] = {
    let body = "The plain HTTP request was sent to HTTPS port\n"
    return Array(
      ("HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: \(body.utf8.count)\r\n"
        + "Connection: close\r\n\r\n" + body).utf8)
  }()

  /// Peeks at the first byte: a TLS connection starts with a handshake record (0x16), an HTTP/1.x request
  /// with a method token's letter. For the latter, answers 400 in plain text (as nginx does), logs a line
  /// and ends the stream; nil when the bytes are TLS (or have not arrived yet).
  private func answerPlainHTTP() -> IOResult? {
    var first: UInt8 = 0
    let n = recv(fd, &first, 1, Int32(MSG_PEEK))
    if n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return nil }
    checkedForPlainHTTP = true
    guard n == 1, first >= UInt8(ascii: "A"), first <= UInt8(ascii: "Z") else { return nil }
    fatal = true
    lastError = "plain HTTP request on the HTTPS port"
    // Consume what arrived (unread input would turn the close into a reset that can destroy the answer).
    SocketOps.discardAvailable(fd)
    _ = TLSByteStream.plainHTTPAnswer.withUnsafeBytes { SocketOps.send(fd, $0) }
    SocketOps.shutdownWrite(fd)
    _ = StandardError.line(
      "tls: a plain HTTP request arrived on the HTTPS port: answered 400 and closed", waitMilliseconds: 0)
    return .eof
  }

  /// Wraps `fd` (non-blocking, connected) in a new `SSL` from `context`; nil when OpenSSL refuses.
  init?(fd: Int32, context: TLSServerContext) {
    guard let ssl = SSL_new(context.ctx) else {
      OpenSSLErrors.clear()
      return nil
    }
    guard let method = NoSignalBIOMethod.shared.pointer, cossl_ssl_set_socket(ssl, fd, method) == 1 else {
      SSL_free(ssl)
      OpenSSLErrors.clear()
      return nil
    }
    SSL_set_accept_state(ssl)
    self.fd = fd
    self.context = context
    self.ssl = ssl
  }

  /// The client side: wraps `fd` (non-blocking, connected) in an `SSL` in connect state from `context`,
  /// sending `serverName` as SNI (RFC 6066 §3; not for IP literals) and checking the server certificate
  /// names it (RFC 6125). Nil when OpenSSL refuses.
  init?(fd: Int32, upstream context: UpstreamTLSContext, serverName: String) {
    guard let ssl = SSL_new(context.ctx) else {
      OpenSSLErrors.clear()
      return nil
    }
    guard let method = NoSignalBIOMethod.shared.pointer, cossl_ssl_set_socket(ssl, fd, method) == 1 else {
      SSL_free(ssl)
      OpenSSLErrors.clear()
      return nil
    }
    if !context.verifiesPeer {
      // --proxy-insecure: no chain or name check.
    } else if UpstreamTLSContext.isIPAddress(serverName) {
      _ = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), serverName)
    } else {
      _ = SSL_set1_host(ssl, serverName)
    }
    if !UpstreamTLSContext.isIPAddress(serverName) { _ = cossl_set_tlsext_host_name(ssl, serverName) }
    SSL_set_connect_state(ssl)
    self.fd = fd
    self.context = context
    self.ssl = ssl
  }

  deinit {
    if let ssl { SSL_free(ssl) }
  }

  /// True until the handshake has completed (no request can have started yet).
  var isHandshaking: Bool {
    guard let ssl else { return false }
    return SSL_is_init_finished(ssl) == 0
  }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
    guard let ssl, !fatal else { return .eof }
    if !checkedForPlainHTTP, let answered = answerPlainHTTP() { return answered }
    let count = Int32(clamping: buffer.count)
    OpenSSLErrors.clear()
    let n = SSL_read(ssl, buffer.baseAddress, count)
    if n > 0 { return .bytes(Int(n)) }
    return failure(SSL_get_error(ssl, n), operation: "TLS read")
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> IOResult {
    guard let ssl, !fatal else { return .failed(IOError("TLS write", errno: EPIPE)) }
    guard !bytes.isEmpty else { return .bytes(0) }
    let count = Int32(clamping: bytes.count)
    OpenSSLErrors.clear()
    let n = SSL_write(ssl, bytes.baseAddress, count)
    if n > 0 { return .bytes(Int(n)) }
    let result = failure(SSL_get_error(ssl, n), operation: "TLS write")
    if case .eof = result { return .failed(IOError("TLS write", errno: EPIPE)) }
    return result
  }

  /// Maps an `SSL_get_error` code to an ``IOResult``.
  private func failure(_ code: Int32, operation: String) -> IOResult {
    switch code {
    case SSL_ERROR_WANT_READ:
      return .wouldBlock(wantsWrite: false)
    case SSL_ERROR_WANT_WRITE:
      return .wouldBlock(wantsWrite: true)
    case SSL_ERROR_ZERO_RETURN:
      return .eof
    case SSL_ERROR_SYSCALL:
      let e = errno
      fatal = true
      lastError = OpenSSLErrors.drain()
      // errno 0: the peer closed the socket without close_notify.
      return e == 0 ? .eof : .failed(IOError(operation, errno: e))
    default:
      // SSL_ERROR_SSL: a protocol error (garbage, failed handshake, bad certificate).
      fatal = true
      lastError = OpenSSLErrors.drain()
      return .failed(IOError("\(operation): \(lastError ?? "protocol error")", errno: EPROTO))
    }
  }

  /// Client side: why the server certificate was refused (`certificate has expired`, `hostname
  /// mismatch`…), or nil when it was not.
  var verificationFailure: String? {
    guard let ssl else { return nil }
    let code = SSL_get_verify_result(ssl)
    return code == Int(X509_V_OK) ? nil : String(cString: X509_verify_cert_error_string(code))
  }

  var hasBufferedInput: Bool {
    guard let ssl, !fatal else { return false }
    return SSL_pending(ssl) > 0
  }

  /// Sends close_notify (best effort, non-blocking), then a TCP FIN.
  func shutdownWrite() {
    sendCloseNotify()
    SocketOps.shutdownWrite(fd)
  }

  /// The verified client certificate's subject in one-line RFC 2253 form (`CN=alice,O=Example`), or
  /// nil without mutual TLS or before the handshake finished.
  var peerDescription: String? {
    if let cachedSubject { return cachedSubject }
    guard let ssl, SSL_is_init_finished(ssl) != 0 else { return nil }
    var subject: String?
    if let peer = SSL_get1_peer_certificate(ssl) {
      if SSL_get_verify_result(ssl) == Int(X509_V_OK) {
        subject = X509Text.rfc2253(X509_get_subject_name(peer))
      }
      X509_free(peer)
    }
    cachedSubject = .some(subject)
    return subject
  }

  func close(reset: Bool, inputDrained: Bool) {
    if reset {
      SocketOps.setLingerZero(fd)
    } else {
      sendCloseNotify()
      // The peer may answer close_notify with its own: always drained for TLS.
      SocketOps.discardAvailable(fd)
    }
    if let ssl {
      SSL_free(ssl)
      self.ssl = nil
    }
    SocketOps.close(fd)
  }

  private func sendCloseNotify() {
    guard let ssl, !fatal, SSL_is_init_finished(ssl) != 0 else { return }
    OpenSSLErrors.clear()
    _ = SSL_shutdown(ssl)
    OpenSSLErrors.clear()
  }
}
