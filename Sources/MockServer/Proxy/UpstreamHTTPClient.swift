import CLinuxShims
import COpenSSL
import HTTPCore
import NativeSupport

#if canImport(Glibc)
  import Glibc
#endif

/// Why an upstream exchange gave no response; ``status`` is the gateway status to answer with
/// (RFC 9110 §15.6.3 502, §15.6.5 504).
package enum UpstreamError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The host name did not resolve.
  case unresolved(host: String, reason: String)
  /// Every address refused the connection (ECONNREFUSED).
  case refused
  /// The upstream reset the connection (ECONNRESET, EPIPE).
  case reset
  /// Nothing happened for the timeout: while connecting, sending or waiting for the response.
  case timedOut(phase: String, milliseconds: Int)
  /// The TLS handshake failed or the certificate was refused.
  case tls(String)
  /// The upstream's bytes are not an HTTP/1.1 response (or it is too large).
  case invalidResponse(String)
  /// The upstream closed the connection before a complete response.
  case closed
  /// Another socket error.
  case io(String)

  /// 504 for a timeout, 502 for everything else.
  package var status: Int {
    if case .timedOut = self { return 504 }
    return 502
  }

  /// The reason as a phrase (`connection refused`, `timed out after 500 ms waiting for the response`…).
  package var description: String {
    switch self {
    case .unresolved(let host, let reason): return "cannot resolve \(host): \(reason)"
    case .refused: return "connection refused"
    case .reset: return "connection reset by peer"
    case .timedOut(let phase, let ms): return "timed out after \(ms) ms \(phase)"
    case .tls(let reason): return "TLS failure: \(reason)"
    case .invalidResponse(let reason): return "invalid response: \(reason)"
    case .closed: return "connection closed before a complete response"
    case .io(let reason): return reason
    }
  }
}

/// A blocking HTTP/1.1 client for upstream exchanges (proxy stubs, recording, `mockserver verify`): one
/// connection per exchange, built on the server's own socket layer (``SocketOps``, ``PlainByteStream``,
/// ``TLSByteStream`` in connect state over an ``UpstreamTLSContext``) and HTTPCore's serializer and
/// response parser (content lengths and chunked responses, RFC 9112 §6–7).
///
/// Call it off the event loop: it blocks its thread in `poll(2)` for at most ``timeoutMilliseconds`` at
/// a time (connect, each write, each read), so a slow but progressing upstream is not cut off while a
/// silent one is. Bodies are read whole, up to ``maxBodyBytes``.
package struct UpstreamHTTPClient: Sendable {
  /// Longest wait without progress, in ms (`--proxy-timeout-ms`).
  package var timeoutMilliseconds: Int
  /// Largest response content accepted, in bytes.
  package var maxBodyBytes: Int
  /// The TLS context for `https` upstreams.
  package var tls: UpstreamTLSContext?

  /// Creates a client.
  package init(timeoutMilliseconds: Int = 30_000, maxBodyBytes: Int = 64 << 20, tls: UpstreamTLSContext?) {
    self.timeoutMilliseconds = max(1, timeoutMilliseconds)
    self.maxBodyBytes = max(0, maxBodyBytes)
    self.tls = tls
  }

  /// Sends `request` (its target in origin form, its `Host` field set) to `upstream` and reads the
  /// response. The `Content-Length` is set from the body and `Connection: close` is added; the caller
  /// removes hop-by-hop fields first. Blocks the calling thread.
  package func send(_ request: HTTPRequest, to upstream: UpstreamURL) -> Result<HTTPResponse, UpstreamError> {
    let stream: any ByteStream
    switch connect(upstream) {
    case .failure(let e): return .failure(e)
    case .success(let s): stream = s
    }
    defer { stream.close(reset: false) }
    var head = request.head
    head.version = .http1_1
    head.headers.remove(name: "Content-Length")
    head.headers.remove(name: "Transfer-Encoding")
    head.headers.remove(name: "Connection")
    if !request.body.isEmpty || [.post, .put, .patch].contains(head.method) {
      head.headers.add(name: "Content-Length", value: String(request.body.count))
    }
    head.headers.add(name: "Connection", value: "close")
    var bytes = HTTPSerializer.requestHead(head)
    bytes.append(contentsOf: request.body)
    if let e = write(bytes, to: stream) { return .failure(tlsReason(e, stream)) }
    return readResponse(from: stream, method: head.method).mapError { tlsReason($0, stream) }
  }

  /// A TLS failure names the certificate problem when verification refused it.
  private func tlsReason(_ e: UpstreamError, _ stream: any ByteStream) -> UpstreamError {
    guard let tlsStream = stream as? TLSByteStream else { return e }
    if let failure = tlsStream.verificationFailure { return .tls("certificate refused: \(failure)") }
    return e
  }

  // MARK: Connecting

  private func connect(_ upstream: UpstreamURL) -> Result<any ByteStream, UpstreamError> {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    let rc = getaddrinfo(upstream.host, String(upstream.port), &hints, &list)
    guard rc == 0, let first = list else {
      return .failure(
        .unresolved(host: upstream.host, reason: rc == 0 ? "no address" : String(cString: gai_strerror(rc))))
    }
    defer { freeaddrinfo(list) }
    var lastError = UpstreamError.refused
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let info = cursor {
      cursor = info.pointee.ai_next
      let fd = socket(
        info.pointee.ai_family,
        Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
      if fd < 0 {
        lastError = .io(IOError("socket", errno: errno).description)
        continue
      }
      var error: UpstreamError?
      if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
        let e = errno
        if e == EINPROGRESS {
          if !wait(fd, events: Int16(POLLOUT)) {
            error = .timedOut(phase: "connecting to \(upstream.hostField)", milliseconds: timeoutMilliseconds)
          } else {
            var soError: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &soError, &length)
            if soError != 0 { error = connectError(soError) }
          }
        } else {
          error = connectError(e)
        }
      }
      if let error {
        SocketOps.close(fd)
        lastError = error
        continue
      }
      SocketOps.setNoDelay(fd)
      if upstream.isTLS {
        guard let tls, let stream = TLSByteStream(fd: fd, upstream: tls, serverName: upstream.host) else {
          SocketOps.close(fd)
          return .failure(.tls("cannot set up a TLS client: \(OpenSSLErrors.drain())"))
        }
        return .success(stream)
      }
      return .success(PlainByteStream(fd: fd))
    }
    return .failure(lastError)
  }

  private func connectError(_ e: Int32) -> UpstreamError {
    switch e {
    case ECONNREFUSED: return .refused
    case ECONNRESET, EPIPE: return .reset
    case ETIMEDOUT: return .timedOut(phase: "connecting", milliseconds: timeoutMilliseconds)
    default: return .io(IOError("connect", errno: e).description)
    }
  }

  /// Waits up to the timeout for `events` on `fd`; false on timeout.
  private func wait(_ fd: Int32, events: Int16) -> Bool {
    var descriptor = pollfd(fd: fd, events: events, revents: 0)
    let deadline = SocketOps.monotonicNanos() + UInt64(timeoutMilliseconds) * 1_000_000
    while true {
      let now = SocketOps.monotonicNanos()
      if now >= deadline { return false }
      let left = Int32(clamping: (deadline - now + 999_999) / 1_000_000)
      let rc = poll(&descriptor, 1, left)
      if rc > 0 { return true }
      if rc == 0 { return false }
      if errno != EINTR { return true }  // let the next read or write report the error
    }
  }

  // MARK: Exchanging

  private func write(_ bytes: [UInt8], to stream: any ByteStream) -> UpstreamError? {
    var offset = 0
    while offset < bytes.count {
      let result = bytes.withUnsafeBytes { stream.write(UnsafeRawBufferPointer(rebasing: $0[offset...])) }
      switch result {
      case .bytes(let n): offset += n
      case .wouldBlock(let wantsWrite):
        if !wait(stream.fd, events: Int16(wantsWrite ? POLLOUT : POLLIN)) {
          return .timedOut(phase: "sending the request", milliseconds: timeoutMilliseconds)
        }
      case .eof: return .closed
      case .failed(let e): return failure(e)
      }
    }
    return nil
  }

  private func failure(_ e: IOError) -> UpstreamError {
    switch e.errno {
    case ECONNRESET, EPIPE: return .reset
    case EPROTO: return .tls(e.operation)
    default: return .io(e.description)
    }
  }

  private func readResponse(from stream: any ByteStream, method: HTTPMethod) -> Result<
    HTTPResponse, UpstreamError
  > {
    var parser = HTTPParser(
      mode: .response,
      limits: ParserLimits(maxHeaderSectionBytes: 256 << 10, maxHeaderCount: 1000, maxBodyBytes: maxBodyBytes)
    )
    parser.expectResponse(to: method)
    var head: HTTPResponseHead?
    var body: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 64 << 10)
    var sawBytes = false
    while true {
      // Drain parsed events first.
      while true {
        let event: HTTPParserEvent?
        do {
          event = try parser.next()
        } catch {
          return .failure(.invalidResponse(error.description))
        }
        guard let event else { break }
        switch event {
        case .responseHead(let h):
          if h.status.code < 200 {
            parser.expectResponse(to: method)  // an interim response: the final one follows
          } else {
            head = h
          }
        case .body(let bytes):
          if body.isEmpty { body = bytes } else { body.append(contentsOf: bytes) }
        case .end(let trailers):
          if let head { return .success(HTTPResponse(head: head, body: body, trailers: trailers)) }
        case .requestHead:
          return .failure(.invalidResponse("a request instead of a response"))
        }
      }
      let result = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
      switch result {
      case .bytes(let n):
        sawBytes = true
        buffer.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      case .wouldBlock(let wantsWrite):
        if !wait(stream.fd, events: Int16(wantsWrite ? POLLOUT : POLLIN)) {
          return .failure(
            .timedOut(
              phase: head == nil ? "waiting for the response" : "reading the response body",
              milliseconds: timeoutMilliseconds))
        }
      case .eof:
        do {
          if case .end(let trailers) = try parser.finish(), let head {
            return .success(HTTPResponse(head: head, body: body, trailers: trailers))
          }
        } catch {
          return .failure(sawBytes ? .invalidResponse(error.description) : .closed)
        }
        return .failure(.closed)
      case .failed(let e):
        return .failure(failure(e))
      }
    }
  }
}
