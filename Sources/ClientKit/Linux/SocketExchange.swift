#if CLIENTKIT_NATIVE
  import Foundation
  import HTTPCore
  import NativeSupport

  /// One request/response exchange over a socket, run synchronously on a Dispatch worker thread.
  struct SocketExchange {
    let request: TransportRequest
    let host: String
    let port: Int
    /// The TLS settings for `https`, nil for plain `http`.
    let tls: TLSClientContext?
    let control: ExchangeControl
    let pool: ConnectionPool
    let limits: ParserLimits
    let acceptsGzip: Bool
    let options: TransferOptions
    var progress: ProgressHandler? { options.downloadProgress }

    /// A failed attempt: the error, and whether it happened on a reused connection before any response
    /// byte arrived (the stale keep-alive race, the only case where a new connection may be tried).
    private struct AttemptFailure: Error {
      var error: APIError
      var beforeAnyResponseByte: Bool
    }

    func run() -> Result<TransportResponse, APIError> {
      let info = request.info
      let budget = request.timeout.nanosecondsOrZero
      let deadline = monotonicNanoseconds() + budget
      let key = SocketTransport.poolKey(secure: tls != nil, host: host, port: port)
      let bytes = requestBytes()
      var allowPooled = true
      while true {
        if control.isCancelled { return .failure(.cancelled) }
        let connection: SocketConnection
        var reused = false
        if allowPooled, let pooled = pool.checkout(key) {
          guard control.attach(pooled) else {
            pooled.close()
            return .failure(.cancelled)
          }
          connection = pooled
          reused = true
        } else {
          do {
            connection = try SocketConnection.connect(
              host: host, port: port, key: key, deadline: deadline, control: control)
          } catch {
            return .failure(map(error, info: info, cannotConnect: true))
          }
          if let tls {
            do {
              try connection.startTLS(host: host, context: tls, until: deadline)
            } catch {
              control.detachAndClose(connection)
              if control.isCancelled { return .failure(.cancelled) }
              return .failure(map(error, info: info))
            }
          }
        }
        do {
          let (response, keepAlive) = try exchange(on: connection, bytes: bytes, deadline: deadline)
          if keepAlive {
            control.detach(connection)
            connection.useCount += 1
            pool.checkin(connection)
          } else {
            control.detachAndClose(connection)
          }
          return .success(response)
        } catch {
          control.detachAndClose(connection)
          if control.isCancelled { return .failure(.cancelled) }
          if reused, error.beforeAnyResponseByte, request.isIdempotent {
            allowPooled = false
            continue
          }
          return .failure(error.error)
        }
      }
    }

    func requestBytes() -> [UInt8] {
      var headers = HTTPHeaders()
      if !request.headers.contains("Host") {
        let literal = host.contains(":") ? "[\(host)]" : host
        let defaultPort = tls == nil ? 80 : 443
        headers.add(name: "Host", value: port == defaultPort ? literal : "\(literal):\(port)")
      }
      for field in request.headers
      where !field.name.equalsIgnoringASCIICase("Content-Length")
        && !field.name.equalsIgnoringASCIICase("Transfer-Encoding")
      {
        headers.add(name: field.name, value: field.value)
      }
      if !request.body.isEmpty || [.post, .put, .patch].contains(request.method) {
        headers.add(name: "Content-Length", value: String(request.body.count))
      }
      if acceptsGzip, options.bodyFile == nil, !headers.contains("Accept-Encoding") {
        headers.add(name: "Accept-Encoding", value: "gzip")
      }
      let head = HTTPRequestHead(method: request.method, target: request.target, headers: headers)
      var bytes = HTTPSerializer.requestHead(head)
      bytes.append(contentsOf: request.body)
      return bytes
    }

    private func exchange(on connection: SocketConnection, bytes: [UInt8], deadline: UInt64)
      throws(AttemptFailure)
      -> (TransportResponse, keepAlive: Bool)
    {
      let info = request.info
      do {
        if let upload = options.uploadProgress {
          // The head and body in 64 KiB writes, reporting the body bytes written after each.
          let total = Int64(request.body.count)
          let headCount = bytes.count - request.body.count
          var offset = 0
          while offset < bytes.count {
            let end = min(bytes.count, offset + 64 * 1024)
            try connection.writeAll(Array(bytes[offset..<end]), until: deadline)
            offset = end
            upload(DownloadProgress(receivedBytes: Int64(max(0, offset - headCount)), expectedBytes: total))
          }
        } else {
          try connection.writeAll(bytes, until: deadline)
        }
      } catch {
        throw AttemptFailure(error: map(error, info: info), beforeAnyResponseByte: error == .reset)
      }

      var fileLimits = limits
      var file: DownloadFile?
      if let url = options.bodyFile {
        fileLimits.maxBodyBytes = Int.max
        do {
          file = try DownloadFile(url: url, resumeOffset: options.bodyFileOffset)
        } catch {
          throw AttemptFailure(error: error, beforeAnyResponseByte: false)
        }
      }
      defer { file?.close() }
      var fileBytes: Int { file?.written ?? 0 }
      var parser = HTTPParser(mode: .response, limits: fileLimits)
      parser.expectResponse(to: request.method)
      var head: HTTPResponseHead?
      var body: [UInt8] = []
      var totalBytes = 0
      var finished = false
      var sawEOF = false
      var buffer = [UInt8](repeating: 0, count: 16 * 1024)
      var expected: Int? { head.flatMap { $0.headers.first("Content-Length").flatMap { Int($0) } } }

      func handle(_ event: HTTPParserEvent) {
        switch event {
        case .responseHead(let h):
          if !h.status.isInformational {
            head = h
            file?.begin(statusCode: h.status.code)
            options.responseHead?(h.status.code, h.headers)
          }
        case .body(let part):
          if file != nil {
            file?.write(Data(part))
          } else {
            body.append(contentsOf: part)
          }
          if let file {
            progress?(file.progress(contentLength: expected.map(Int64.init)))
          } else {
            progress?(
              DownloadProgress(receivedBytes: Int64(body.count), expectedBytes: expected.map(Int64.init)))
          }
        case .end:
          if head != nil { finished = true }
        case .requestHead:
          break
        }
      }

      while !finished {
        let n: Int
        do {
          n = try connection.read(into: &buffer, until: deadline)
        } catch {
          if control.isCancelled { throw AttemptFailure(error: .cancelled, beforeAnyResponseByte: false) }
          switch error {
          case .reset where totalBytes == 0:
            throw AttemptFailure(error: .connectionReset(info), beforeAnyResponseByte: true)
          case .reset where head != nil:
            throw AttemptFailure(
              error: .truncatedBody(
                info, statusCode: head?.status.code ?? 0, expected: expected,
                received: file == nil ? body.count : fileBytes),
              beforeAnyResponseByte: false)
          case .reset:
            throw AttemptFailure(
              error: .connectionLost(info, receivedBytes: totalBytes), beforeAnyResponseByte: false)
          default:
            throw AttemptFailure(error: map(error, info: info), beforeAnyResponseByte: false)
          }
        }
        if control.isCancelled { throw AttemptFailure(error: .cancelled, beforeAnyResponseByte: false) }
        if n == 0 {
          sawEOF = true
          if totalBytes == 0 {
            throw AttemptFailure(error: .emptyResponse(info), beforeAnyResponseByte: true)
          }
          do {
            while !finished, let event = try parser.finish() { handle(event) }
          } catch {
            if case .incompleteMessage(let expectedBytes, let received) = error, let head {
              throw AttemptFailure(
                error: .truncatedBody(
                  info, statusCode: head.status.code, expected: expectedBytes, received: received),
                beforeAnyResponseByte: false)
            }
            if case .incompleteMessage = error {
              throw AttemptFailure(
                error: .connectionLost(info, receivedBytes: totalBytes), beforeAnyResponseByte: false)
            }
            throw AttemptFailure(
              error: .malformedResponse(info, detail: error.description), beforeAnyResponseByte: false)
          }
          if !finished {
            throw AttemptFailure(
              error: .connectionLost(info, receivedBytes: totalBytes), beforeAnyResponseByte: false)
          }
          break
        }
        // Every response starts with "HTTP/": bytes that do not are not HTTP at all (a server answering garbage), which
        // is reported at once as malformed, not as a connection lost at EOF or a timeout without EOF.
        if totalBytes < Self.responsePrefix.count {
          let seen = min(n, Self.responsePrefix.count - totalBytes)
          if !buffer[0..<seen].elementsEqual(Self.responsePrefix[totalBytes..<totalBytes + seen]) {
            throw AttemptFailure(
              error: .malformedResponse(info, detail: "the server sent bytes that are not an HTTP response"),
              beforeAnyResponseByte: false)
          }
        }
        totalBytes += n
        buffer.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        do {
          while !finished, let event = try parser.next() { handle(event) }
        } catch {
          if case .bodyTooLarge(let limit) = error {
            throw AttemptFailure(error: .responseTooLarge(info, limit: limit), beforeAnyResponseByte: false)
          }
          throw AttemptFailure(
            error: .malformedResponse(info, detail: error.description), beforeAnyResponseByte: false)
        }
      }

      guard let head else {
        throw AttemptFailure(
          error: .connectionLost(info, receivedBytes: totalBytes), beforeAnyResponseByte: false)
      }
      var headers = head.headers
      var content = body
      let coding = headers.first("Content-Encoding")?.trimmingOWS().lowercasedASCII() ?? ""
      if (coding == "gzip" || coding == "x-gzip" || coding == "deflate") && !content.isEmpty {
        // gzip or zlib by their headers; raw deflate, as some servers send for "deflate", otherwise.
        let decoded: [UInt8]?
        do throws(Zlib.Failure) {
          decoded = try Zlib.decompress(content, format: .automatic, limit: limits.maxBodyBytes)
        } catch {
          if case .tooLarge(let limit) = error {
            throw AttemptFailure(error: .responseTooLarge(info, limit: limit), beforeAnyResponseByte: false)
          }
          decoded = try? Zlib.decompress(content, format: .raw, limit: limits.maxBodyBytes)
        }
        guard let decoded else {
          throw AttemptFailure(
            error: .malformedResponse(info, detail: "the \(coding) content could not be decoded"),
            beforeAnyResponseByte: false)
        }
        content = decoded
        headers.remove(name: "Content-Encoding")
        headers.replaceOrAdd(name: "Content-Length", value: String(content.count))
      }
      let keepAlive =
        !sawEOF && parser.isIdle && head.version == .http1_1
        && !head.headers.hasToken("close", in: "Connection")
        && !request.headers.hasToken("close", in: "Connection")
      if let failure = file?.writeFailure {
        throw AttemptFailure(error: .invalidRequest(failure), beforeAnyResponseByte: false)
      }
      if let url = options.bodyFile {
        return (
          TransportResponse(
            statusCode: head.status.code, headers: headers, bodyFile: url, bodyByteCount: fileBytes),
          keepAlive
        )
      }
      return (
        TransportResponse(statusCode: head.status.code, headers: headers, body: Data(content)), keepAlive
      )
    }

    /// The first bytes of every HTTP/1.x response.
    private static let responsePrefix: [UInt8] = Array("HTTP/".utf8)

    func map(_ failure: SocketFailure, info: RequestInfo, cannotConnect: Bool = false) -> APIError {
      switch failure {
      case .deadline: return .timedOut(limit: request.timeout, request: info)
      case .connect(let reason): return .cannotConnect(info, reason: reason)
      case .reset:
        return cannotConnect ? .cannotConnect(info, reason: "connection reset") : .connectionReset(info)
      case .cancelled: return .cancelled
      case .trust(let failure): return .tlsFailure(info, failure)
      case .closed: return .connectionLost(info, receivedBytes: 0)
      case .other(let code, let text):
        return cannotConnect
          ? .cannotConnect(info, reason: text) : .transportFailure(info, code: Int(code), detail: text)
      }
    }
  }

  extension Duration {
    /// The duration in whole nanoseconds, 0 for a negative one (timeouts, deadlines).
    var nanosecondsOrZero: UInt64 {
      let (seconds, atto) = components
      return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, atto) / 1_000_000_000)
    }
  }
#endif
