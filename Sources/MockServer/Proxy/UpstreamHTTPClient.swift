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

/// A blocking HTTP/1.1 client for upstream exchanges (proxy stubs, recording, `mockserver verify`), built
/// on the server's own socket layer (``SocketOps``, ``PlainByteStream``, ``TLSByteStream`` in connect
/// state over an ``UpstreamTLSContext``) and HTTPCore's serializer and response parser (content lengths
/// and chunked responses, RFC 9112 §6–7).
///
/// With a ``pool`` the connections are persistent (RFC 9112 §9.3): a response read to its end on a
/// connection that can carry another goes back to the pool, and the next exchange with the same origin
/// takes it; without one, each exchange has its own connection and sends `Connection: close`.
///
/// Call it off the event loop: it blocks its thread in `poll(2)` for at most ``timeoutMilliseconds`` at
/// a time (connect, each write, each read), so a slow but progressing upstream is not cut off while a
/// silent one is. ``send(_:to:)`` reads bodies whole, up to ``maxBodyBytes``; ``open(_:to:)`` returns
/// after the head and hands the content over piece by piece.
package struct UpstreamHTTPClient: Sendable {
  /// Longest wait without progress, in ms (`--proxy-timeout-ms`).
  package var timeoutMilliseconds: Int
  /// Largest response content ``send(_:to:)`` accepts, in bytes.
  package var maxBodyBytes: Int
  /// The TLS context for `https` upstreams.
  package var tls: UpstreamTLSContext?
  /// Idle persistent connections to reuse, or nil for one connection per exchange.
  package var pool: UpstreamConnectionPool?
  /// Bytes read from the upstream at a time.
  static let readBufferBytes = 16 << 10

  /// Creates a client.
  package init(
    timeoutMilliseconds: Int = 30_000, maxBodyBytes: Int = 64 << 20, tls: UpstreamTLSContext?,
    pool: UpstreamConnectionPool? = nil
  ) {
    self.timeoutMilliseconds = max(1, timeoutMilliseconds)
    self.maxBodyBytes = max(0, maxBodyBytes)
    self.tls = tls
    self.pool = pool
  }

  /// Sends `request` (its target in origin form, its `Host` field set) to `upstream` and reads the
  /// response whole. The caller removes hop-by-hop fields first. Blocks the calling thread.
  package func send(_ request: HTTPRequest, to upstream: UpstreamURL) -> Result<HTTPResponse, UpstreamError> {
    open(request, to: upstream).flatMap { $0.readToEnd(maxBytes: maxBodyBytes) }
  }

  /// Sends `request` to `upstream` and reads the response head (skipping interim 1xx responses); the
  /// content is read with ``UpstreamResponse/nextContent(wait:)``. The `Content-Length` is set from the
  /// body; without a pool `Connection: close` is added. A pooled connection that turns out closed by the
  /// upstream before any byte of the response is retried once on a new connection when the method is
  /// idempotent (RFC 9110 §9.2.2; RFC 9112 §9.3.1). Blocks the calling thread.
  package func open(_ request: HTTPRequest, to upstream: UpstreamURL) -> Result<
    UpstreamResponse, UpstreamError
  > {
    var head = request.head
    head.version = .http1_1
    head.headers.remove(name: "Content-Length")
    head.headers.remove(name: "Transfer-Encoding")
    head.headers.remove(name: "Connection")
    if !request.body.isEmpty || [.post, .put, .patch].contains(head.method) {
      head.headers.add(name: "Content-Length", value: String(request.body.count))
    }
    if pool == nil { head.headers.add(name: "Connection", value: "close") }
    var bytes = HTTPSerializer.requestHead(head)
    bytes.append(contentsOf: request.body)
    let key = upstream.origin
    if let pool, let stream = pool.checkout(key) {
      switch exchange(bytes, method: head.method, on: stream, key: key) {
      case .success(let response): return .success(response)
      case .failure(let failure):
        stream.close(reset: false)
        guard failure.beforeResponse, head.method.isIdempotent else { return .failure(failure.error) }
      }
    }
    let stream: any ByteStream
    switch connect(upstream) {
    case .failure(let e): return .failure(e)
    case .success(let s): stream = s
    }
    switch exchange(bytes, method: head.method, on: stream, key: key) {
    case .success(let response): return .success(response)
    case .failure(let failure):
      stream.close(reset: false)
      return .failure(failure.error)
    }
  }

  /// A failed exchange; `beforeResponse` when the upstream closed or reset the connection before a byte
  /// of the response (a stale pooled connection).
  private struct ExchangeFailure: Error {
    var error: UpstreamError
    var beforeResponse: Bool
  }

  private func exchange(_ bytes: [UInt8], method: HTTPMethod, on stream: any ByteStream, key: String)
    -> Result<
      UpstreamResponse, ExchangeFailure
    >
  {
    let io = UpstreamIO(timeoutMilliseconds: timeoutMilliseconds)
    if let e = io.write(bytes, to: stream) {
      return .failure(
        ExchangeFailure(error: tlsReason(e, stream), beforeResponse: e == .reset || e == .closed))
    }
    var parser = HTTPParser(
      mode: .response,
      limits: ParserLimits(maxHeaderSectionBytes: 256 << 10, maxHeaderCount: 1000, maxBodyBytes: 1 << 61))
    parser.expectResponse(to: method)
    // 16 KiB, a TLS record's most content: the buffer is allocated and zeroed per exchange, and a 64 KiB
    // one cost a 64 KiB `memset` for answers of a few hundred bytes (3 % of a proxied request's CPU).
    var buffer = [UInt8](repeating: 0, count: UpstreamHTTPClient.readBufferBytes)
    var sawBytes = false
    while true {
      while true {
        let event: HTTPParserEvent?
        do {
          event = try parser.next()
        } catch {
          return .failure(ExchangeFailure(error: .invalidResponse(error.description), beforeResponse: false))
        }
        guard let event else { break }
        switch event {
        case .responseHead(let h):
          if h.status.code < 200 {
            parser.expectResponse(to: method)  // an interim response: the final one follows
            continue
          }
          return .success(
            UpstreamResponse(
              head: h, method: method, parser: parser, buffer: buffer, stream: stream, io: io,
              pool: pool, key: key))
        case .end:
          continue  // the end of an interim response
        case .body, .requestHead:
          return .failure(
            ExchangeFailure(error: .invalidResponse("content before a head"), beforeResponse: false))
        }
      }
      switch io.read(from: stream, into: &buffer, waitingFor: "waiting for the response") {
      case .failure(let e):
        return .failure(
          ExchangeFailure(error: tlsReason(e, stream), beforeResponse: !sawBytes && e == .reset))
      case .success(0):
        let e: UpstreamError
        do {
          _ = try parser.finish()
          e = .closed
        } catch {
          e = sawBytes ? .invalidResponse(error.description) : .closed
        }
        return .failure(ExchangeFailure(error: e, beforeResponse: !sawBytes))
      case .success(let n):
        sawBytes = true
        buffer.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      }
    }
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
    hints.ai_socktype = PlatformSocket.streamType
    var list: UnsafeMutablePointer<addrinfo>?
    let rc = getaddrinfo(upstream.host, String(upstream.port), &hints, &list)
    guard rc == 0, let first = list else {
      return .failure(
        .unresolved(host: upstream.host, reason: rc == 0 ? "no address" : String(cString: gai_strerror(rc))))
    }
    defer { freeaddrinfo(list) }
    let io = UpstreamIO(timeoutMilliseconds: timeoutMilliseconds)
    var lastError = UpstreamError.refused
    var cursor: UnsafeMutablePointer<addrinfo>? = first
    while let info = cursor {
      cursor = info.pointee.ai_next
      let fd = PlatformSocket.makeStreamSocket(family: info.pointee.ai_family, nonBlocking: true)
      if fd < 0 {
        lastError = .io(IOError("socket", errno: errno).description)
        continue
      }
      var error: UpstreamError?
      if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) != 0 {
        let e = errno
        if e == EINPROGRESS {
          if !io.wait(fd, events: Int16(POLLOUT)) {
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
}

/// Blocking reads and writes on a non-blocking stream, each waiting in `poll(2)` at most the timeout.
struct UpstreamIO: Sendable {
  var timeoutMilliseconds: Int

  /// Waits up to the timeout for `events` on `fd`; false on timeout.
  func wait(_ fd: Int32, events: Int16) -> Bool {
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

  func write(_ bytes: [UInt8], to stream: any ByteStream) -> UpstreamError? {
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

  /// Reads what is available into `buffer`, waiting up to the timeout when `wait` (else returning nil
  /// when nothing is there now): the byte count, 0 at the end of the stream.
  func read(
    from stream: any ByteStream, into buffer: inout [UInt8], waitingFor phase: String, wait shouldWait: Bool
  ) -> Result<Int, UpstreamError>? {
    while true {
      let result = buffer.withUnsafeMutableBytes { stream.read(into: $0) }
      switch result {
      case .bytes(let n): return .success(n)
      case .eof: return .success(0)
      case .failed(let e): return .failure(failure(e))
      case .wouldBlock(let wantsWrite):
        if !shouldWait && !wantsWrite { return nil }
        if !wait(stream.fd, events: Int16(wantsWrite ? POLLOUT : POLLIN)) {
          return .failure(.timedOut(phase: phase, milliseconds: timeoutMilliseconds))
        }
      }
    }
  }

  /// Reads, waiting up to the timeout.
  func read(from stream: any ByteStream, into buffer: inout [UInt8], waitingFor phase: String) -> Result<
    Int, UpstreamError
  > {
    read(from: stream, into: &buffer, waitingFor: phase, wait: true) ?? .success(0)
  }

  func failure(_ e: IOError) -> UpstreamError {
    switch e.errno {
    case ECONNRESET, EPIPE: return .reset
    case EPROTO: return .tls(e.operation)
    default: return .io(e.description)
    }
  }
}

/// An upstream response whose head has been read: its content is read piece by piece
/// (``nextContent(wait:)``) or whole (``readToEnd(maxBytes:)``). Used by one thread at a time. The
/// connection goes back to the pool when the content was read to its end and the connection can carry
/// another exchange (HTTP/1.1, no `Connection: close`, content framed by length or chunks, nothing read
/// past the end); otherwise it is closed by ``release()`` (or when the value goes away).
package final class UpstreamResponse {
  /// The final response's head as received (hop-by-hop fields included).
  package let head: HTTPResponseHead
  /// The content's length when the upstream framed it with `Content-Length`, 0 when the response has
  /// none (HEAD, 204, 304), nil when it is chunked or ends with the connection.
  package let contentLength: Int?
  private var parser: HTTPParser
  private var buffer: [UInt8]
  private let stream: any ByteStream
  private let io: UpstreamIO
  private let pool: UpstreamConnectionPool?
  private let key: String
  private var reusable: Bool
  private var ended = false
  private var released = false
  private var sawContentBytes = false
  /// Trailer fields of a chunked response, once ended.
  package private(set) var trailers = HTTPHeaders()

  init(
    head: HTTPResponseHead, method: HTTPMethod, parser: HTTPParser, buffer: [UInt8], stream: any ByteStream,
    io: UpstreamIO, pool: UpstreamConnectionPool?, key: String
  ) {
    self.head = head
    self.parser = parser
    self.buffer = buffer
    self.stream = stream
    self.io = io
    self.pool = pool
    self.key = key
    let noContent = !HTTPSerializer.sendsContent(status: head.status, requestMethod: method)
    let chunked =
      head.headers.listElements("Transfer-Encoding").last?.equalsIgnoringASCIICase("chunked") ?? false
    let length =
      head.headers.contains("Transfer-Encoding")
      ? nil
      : head.headers.first("Content-Length").flatMap { Int($0.trimmingOWS()) }.flatMap { $0 >= 0 ? $0 : nil }
    contentLength = noContent ? 0 : length
    let closes = head.headers.listElements("Connection").contains { $0.equalsIgnoringASCIICase("close") }
    reusable = pool != nil && head.version == .http1_1 && !closes && (noContent || chunked || length != nil)
  }

  deinit { release() }

  /// One step of the content.
  package enum Piece {
    /// Content bytes (the transfer coding removed).
    case bytes([UInt8])
    /// The content is complete.
    case end
    /// Nothing more has arrived yet (only when not waiting).
    case pending
  }

  /// The next content bytes, or the end; waits up to the timeout for them unless `wait` is false.
  package func nextContent(wait: Bool = true) -> Result<Piece, UpstreamError> {
    while !ended {
      let event: HTTPParserEvent?
      do {
        event = try parser.next()
      } catch {
        reusable = false
        return .failure(.invalidResponse(error.description))
      }
      if let event {
        switch event {
        case .body(let bytes):
          sawContentBytes = true
          return .success(.bytes(bytes))
        case .end(let t):
          ended = true
          trailers = t
          return .success(.end)
        case .responseHead, .requestHead:
          reusable = false
          return .failure(.invalidResponse("a second head inside the content"))
        }
      }
      switch io.read(from: stream, into: &buffer, waitingFor: "reading the response body", wait: wait) {
      case nil: return .success(.pending)
      case .failure(let e):
        reusable = false
        return .failure(e)
      case .success(0):
        reusable = false
        do {
          if case .end(let t) = try parser.finish() {
            ended = true
            trailers = t
            return .success(.end)
          }
          return .failure(.closed)
        } catch {
          return .failure(sawContentBytes ? .invalidResponse(error.description) : .closed)
        }
      case .success(let n):
        buffer.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
      }
    }
    return .success(.end)
  }

  /// Reads the rest of the content and releases the connection: the whole response, or
  /// ``UpstreamError/invalidResponse(_:)`` when the content is over `maxBytes`.
  package func readToEnd(maxBytes: Int) -> Result<HTTPResponse, UpstreamError> {
    defer { release() }
    var body: [UInt8] = []
    while true {
      switch nextContent() {
      case .failure(let e): return .failure(e)
      case .success(.bytes(let bytes)):
        guard body.count + bytes.count <= maxBytes else {
          reusable = false
          return .failure(.invalidResponse(HTTPParserError.bodyTooLarge(limit: maxBytes).description))
        }
        if body.isEmpty { body = bytes } else { body.append(contentsOf: bytes) }
      case .success(.end): return .success(HTTPResponse(head: head, body: body, trailers: trailers))
      case .success(.pending): continue
      }
    }
  }

  /// Gives the connection back to the pool when the content was read to its end and the connection can
  /// carry another exchange; closes it otherwise (a response abandoned part way). Idempotent.
  package func release() {
    guard !released else { return }
    released = true
    if let pool, reusable, ended, parser.isIdle {
      pool.checkin(stream, key: key)
    } else {
      stream.close(reset: false)
    }
  }
}
