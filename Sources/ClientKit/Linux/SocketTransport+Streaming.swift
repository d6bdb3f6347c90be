#if CLIENTKIT_NATIVE
  import Foundation
  import HTTPCore

  /// What a streaming exchange reports, in order: the head once, body chunks, then the end.
  enum StreamingPart: Sendable {
    case head(statusCode: Int, headers: HTTPHeaders)
    case body([UInt8])
    /// The exchange is over: nil when the response ended normally, else why it failed.
    case end(APIError?)
  }

  extension SocketTransport {
    /// Sends the request on a new connection (never pooled: it stays busy for as long as the body runs)
    /// and returns when the head arrived; the body is read on the exchange's thread as it arrives
    /// (`Content-Length`, chunked or close-delimited) and yielded chunk by chunk. ``TransportRequest/timeout``
    /// bounds connecting, writing and waiting for the head; the body has no deadline. No
    /// `Accept-Encoding` is added, redirects are not followed, and no body size limit applies.
    /// Cancelling the calling task before the head, or ending the body's iteration, closes the connection.
    /// - Throws: the transport cases of ``APIError`` (see ``SocketTransport``), ``APIError/cancelled``.
    public func stream(_ request: TransportRequest) async throws(APIError) -> StreamingResponse {
      let (host, port, tls) = try origin(of: request)
      let control = ExchangeControl()
      var unlimited = self.limits
      unlimited.maxBodyBytes = Int.max
      let limits = unlimited
      let pool = self.pool
      let (body, bodyContinuation) = AsyncThrowingStream<Data, any Error>.makeStream()
      bodyContinuation.onTermination = { _ in control.cancel() }
      let head = await withTaskCancellationHandler {
        await withCheckedContinuation {
          (continuation: CheckedContinuation<Result<(Int, HTTPHeaders), APIError>, Never>) in
          let thread = Thread {
            let exchange = SocketExchange(
              request: request, host: host, port: port, tls: tls, control: control, pool: pool,
              limits: limits, acceptsGzip: false, options: TransferOptions())
            var headDelivered = false
            exchange.runStreaming { part in
              switch part {
              case .head(let status, let headers):
                headDelivered = true
                continuation.resume(returning: .success((status, headers)))
              case .body(let bytes):
                bodyContinuation.yield(Data(bytes))
              case .end(let error):
                if !headDelivered {
                  continuation.resume(returning: .failure(error ?? .emptyResponse(request.info)))
                } else if let error {
                  bodyContinuation.finish(throwing: error)
                } else {
                  bodyContinuation.finish()
                }
              }
            }
          }
          thread.name = "ClientKit.SocketTransport.stream"
          thread.stackSize = 512 * 1024
          thread.start()
        }
      } onCancel: {
        control.cancel()
      }
      switch head {
      case .success(let (status, headers)):
        return StreamingResponse(statusCode: status, headers: headers, body: body)
      case .failure(let error):
        bodyContinuation.finish()
        throw error
      }
    }
  }

  extension SocketExchange {
    /// The streaming exchange (see ``SocketTransport/stream(_:)``), run on its own thread; `deliver`
    /// receives the head, the body chunks and exactly one `.end`.
    func runStreaming(_ deliver: (StreamingPart) -> Void) {
      let info = request.info
      let budget = request.timeout.nanosecondsOrZero
      let headDeadline = monotonicNanoseconds() + budget
      let key = SocketTransport.poolKey(secure: tls != nil, host: host, port: port)
      let connection: SocketConnection
      do {
        connection = try SocketConnection.connect(
          host: host, port: port, key: key, deadline: headDeadline, control: control)
      } catch {
        deliver(.end(map(error, info: info, cannotConnect: true)))
        return
      }
      defer { control.detachAndClose(connection) }
      do {
        if let tls { try connection.startTLS(host: host, context: tls, until: headDeadline) }
        try connection.writeAll(requestBytes(), until: headDeadline)
      } catch {
        deliver(.end(control.isCancelled ? .cancelled : map(error, info: info)))
        return
      }
      var parser = HTTPParser(mode: .response, limits: limits)
      parser.expectResponse(to: request.method)
      var statusCode: Int?
      var received = 0
      var totalBytes = 0
      var finished = false
      var buffer = [UInt8](repeating: 0, count: 16 * 1024)

      func handle(_ event: HTTPParserEvent) {
        switch event {
        case .responseHead(let head):
          guard !head.status.isInformational else { return }
          statusCode = head.status.code
          deliver(.head(statusCode: head.status.code, headers: head.headers))
        case .body(let part):
          received += part.count
          deliver(.body(Array(part)))
        case .end:
          if statusCode != nil { finished = true }
        case .requestHead:
          break
        }
      }
      func failure(_ error: SocketFailure) -> APIError {
        if control.isCancelled { return .cancelled }
        guard let statusCode else {
          if error == .reset {
            return totalBytes == 0 ? .connectionReset(info) : .connectionLost(info, receivedBytes: totalBytes)
          }
          return map(error, info: info)
        }
        if error == .reset {
          return .truncatedBody(info, statusCode: statusCode, expected: nil, received: received)
        }
        return map(error, info: info)
      }

      while !finished {
        let n: Int
        do {
          n = try connection.read(into: &buffer, until: statusCode == nil ? headDeadline : .max)
        } catch {
          deliver(.end(failure(error)))
          return
        }
        if control.isCancelled {
          deliver(.end(.cancelled))
          return
        }
        if n == 0 {
          if totalBytes == 0 {
            deliver(.end(.emptyResponse(info)))
            return
          }
          do {
            while !finished, let event = try parser.finish() { handle(event) }
          } catch {
            if case .incompleteMessage(let expected, let got) = error, let statusCode {
              deliver(.end(.truncatedBody(info, statusCode: statusCode, expected: expected, received: got)))
            } else if case .incompleteMessage = error {
              deliver(.end(.connectionLost(info, receivedBytes: totalBytes)))
            } else {
              deliver(.end(.malformedResponse(info, detail: error.description)))
            }
            return
          }
          deliver(.end(finished ? nil : .connectionLost(info, receivedBytes: totalBytes)))
          return
        }
        totalBytes += n
        buffer.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
        do {
          while !finished, let event = try parser.next() { handle(event) }
        } catch {
          deliver(.end(.malformedResponse(info, detail: error.description)))
          return
        }
      }
      deliver(.end(nil))
    }
  }
#endif
