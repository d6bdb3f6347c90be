#if CLIENTKIT_NATIVE
  import Foundation
  import HTTPCore
  import Synchronization

  extension SocketTransport {
    /// Opens a WebSocket connection (RFC 6455) on a connection of its own: the opening handshake within
    /// ``TransportRequest/timeout``, then frames through HTTPCore's ``WebSocketEndpoint``; a thread reads and
    /// answers pings and close frames, sends write from the caller. `wss` (TLS) is not supported yet:
    /// OpenSSL's connection may not be read and written from two threads at once.
    /// - Throws: ``APIError/invalidRequest(_:)`` for `https`/`wss`, the transport cases of ``APIError``,
    ///   ``APIError/unacceptableStatus(_:application:)`` when the server does not answer `101`,
    ///   ``APIError/malformedResponse(_:detail:)`` for a wrong handshake answer.
    func webSocket(
      _ request: TransportRequest, subprotocols: [String], maxMessageBytes: Int, encoder: JSONEncoder,
      decoder: JSONDecoder
    ) async throws(APIError) -> WebSocketConnection {
      guard request.url.scheme?.lowercased() == "http" else {
        throw .invalidRequest(
          "SocketTransport opens ws:// (http) WebSocket connections only, not \(request.url)")
      }
      guard let host = request.url.host, !host.isEmpty else {
        throw .invalidRequest("the URL \(request.url) has no host")
      }
      if Task.isCancelled { throw .cancelled }
      let handshake = WebSocketHandshake(subprotocols: subprotocols)
      var upgrade = request
      upgrade.method = .get
      upgrade.body = Data()
      upgrade.headers = handshake.headers(adding: request.headers)
      let port = request.url.port ?? 80
      let control = ExchangeControl()
      let pool = self.pool
      let limits = self.limits
      let prepared = upgrade
      let opened = await withTaskCancellationHandler {
        await withCheckedContinuation {
          (
            continuation: CheckedContinuation<
              Result<(SocketConnection, Int, HTTPHeaders, [UInt8]), APIError>, Never
            >
          ) in
          let thread = Thread {
            let exchange = SocketExchange(
              request: prepared, host: host, port: port, tls: nil, control: control, pool: pool,
              limits: limits,
              acceptsGzip: false, options: TransferOptions())
            continuation.resume(returning: exchange.openUpgrade())
          }
          thread.name = "ClientKit.SocketTransport.webSocket"
          thread.stackSize = 512 * 1024
          thread.start()
        }
      } onCancel: {
        control.cancel()
      }
      let (connection, status, headers, leftover) = try opened.get()
      let subprotocol: String?
      do {
        subprotocol = try handshake.validate(statusCode: status, headers: headers, request: upgrade.info)
      } catch {
        control.detachAndClose(connection)
        throw error
      }
      let backend = SocketWebSocketBackend(
        connection: connection, control: control, maxMessageBytes: maxMessageBytes, info: upgrade.info)
      let (messages, continuation) = AsyncThrowingStream<WebSocketMessage, any Error>.makeStream()
      let socket = WebSocketConnection(
        request: upgrade.info, subprotocol: subprotocol, messages: messages, backend: backend,
        encoder: encoder,
        decoder: decoder)
      continuation.onTermination = { _ in backend.abort() }
      backend.startReading(leftover: leftover, socket: socket, continuation: continuation)
      return socket
    }
  }

  extension SocketExchange {
    /// Connects, writes the handshake and reads the response head; returns the connection (still attached
    /// to ``control``), the status, the header fields and the bytes read after the head.
    func openUpgrade() -> Result<(SocketConnection, Int, HTTPHeaders, [UInt8]), APIError> {
      let info = request.info
      let (seconds, atto) = request.timeout.components
      let budget = UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, atto) / 1_000_000_000)
      let deadline = monotonicNanoseconds() + budget
      let key = SocketTransport.poolKey(secure: false, host: host, port: port)
      let connection: SocketConnection
      do {
        connection = try SocketConnection.connect(
          host: host, port: port, key: key, deadline: deadline, control: control)
      } catch {
        return .failure(map(error, info: info, cannotConnect: true))
      }
      var received: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 16 * 1024)
      do {
        try connection.writeAll(requestBytes(), until: deadline)
        while true {
          if let end = Self.headEnd(in: received) {
            guard let (status, headers) = Self.parseHead(received[..<end]) else {
              control.detachAndClose(connection)
              return .failure(
                .malformedResponse(info, detail: "the handshake response's head is not HTTP/1.1"))
            }
            return .success((connection, status, headers, Array(received[(end + 4)...])))
          }
          guard received.count < limits.maxHeaderSectionBytes else {
            control.detachAndClose(connection)
            return .failure(.malformedResponse(info, detail: "the handshake response's head is too large"))
          }
          let n = try connection.read(into: &buffer, until: deadline)
          if n == 0 {
            control.detachAndClose(connection)
            return .failure(
              received.isEmpty ? .emptyResponse(info) : .connectionLost(info, receivedBytes: received.count))
          }
          received.append(contentsOf: buffer[0..<n])
        }
      } catch {
        control.detachAndClose(connection)
        return .failure(control.isCancelled ? .cancelled : map(error, info: info))
      }
    }

    static func headEnd(in bytes: [UInt8]) -> Int? {
      guard bytes.count >= 4 else { return nil }
      for i in 0...(bytes.count - 4)
      where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
        return i
      }
      return nil
    }

    /// The status code and header fields of an HTTP/1.x response head (without the final CRLF CRLF).
    static func parseHead(_ bytes: ArraySlice<UInt8>) -> (Int, HTTPHeaders)? {
      let lines = String(decoding: bytes, as: UTF8.self).components(separatedBy: "\r\n")
      guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.") else { return nil }
      let parts = statusLine.split(separator: " ", maxSplits: 2)
      guard parts.count >= 2, parts[1].count == 3, let status = Int(parts[1]), (100...599).contains(status)
      else {
        return nil
      }
      var headers = HTTPHeaders()
      for line in lines.dropFirst() {
        guard let colon = line.firstIndex(of: ":") else { return nil }
        headers.add(
          name: String(line[..<colon]), value: String(line[line.index(after: colon)...]).trimmingOWS())
      }
      return (status, headers)
    }
  }

  /// A WebSocket over a ``SocketConnection``: the endpoint's state under one lock, writes serialized
  /// under another, a thread that reads.
  final class SocketWebSocketBackend: WebSocketBackend {
    private let connection: SocketConnection
    private let control: ExchangeControl
    private let endpoint: Mutex<WebSocketEndpoint>
    /// Held while bytes are written, so frames never interleave.
    private let writeLock = Mutex(())
    private let info: RequestInfo

    init(connection: SocketConnection, control: ExchangeControl, maxMessageBytes: Int, info: RequestInfo) {
      self.connection = connection
      self.control = control
      self.endpoint = Mutex(WebSocketEndpoint(role: .client, maxMessageBytes: maxMessageBytes))
      self.info = info
    }

    /// Applies `change` to the endpoint and writes what it queued.
    private func update(_ change: (inout WebSocketEndpoint) -> Void) throws(APIError) {
      try writeLock.withLock { _ throws(APIError) in
        let bytes = endpoint.withLock { e -> [UInt8] in
          change(&e)
          return e.takeOutput()
        }
        guard !bytes.isEmpty else { return }
        do throws(SocketFailure) {
          try connection.writeAll(bytes, until: .max)
        } catch {
          throw error == .reset ? .connectionReset(info) : .connectionLost(info, receivedBytes: 0)
        }
      }
    }

    private var isOpen: Bool { endpoint.withLock { $0.state == .open } }

    func send(_ message: WebSocketMessage) async throws(APIError) {
      guard isOpen else { throw .invalidRequest("the WebSocket connection is closed") }
      try update { $0.send(message) }
    }

    func ping(_ payload: [UInt8]) async throws(APIError) {
      guard isOpen else { throw .invalidRequest("the WebSocket connection is closed") }
      try update { $0.ping(payload) }
    }

    func close(code: UInt16, reason: String) {
      guard isOpen else { return }
      try? update { $0.close(code: code, reason: reason) }
    }

    /// Closes the TCP connection at once (the messages' consumer went away).
    func abort() {
      control.cancel()
    }

    /// Starts the reading thread; `leftover` are bytes that came with the handshake's head.
    func startReading(
      leftover: [UInt8], socket: WebSocketConnection,
      continuation: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    ) {
      let thread = Thread { [self] in
        var pending = leftover
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
          if !pending.isEmpty {
            var events: [WebSocketEvent] = []
            let received = pending
            pending = []
            try? update { e in events = received.withUnsafeBytes { e.receive($0) } }
            for event in events {
              switch event {
              case .message(let message): continuation.yield(message)
              case .ping, .pong: break
              case .closed(let code, let reason):
                socket.closed(code: code, reason: reason)
                continuation.finish()
                control.detachAndClose(connection)
                return
              }
            }
          }
          let n: Int
          do throws(SocketFailure) {
            n = try connection.read(into: &buffer, until: .max)
          } catch {
            socket.closed(code: nil, reason: "")
            if control.isCancelled {
              continuation.finish()
            } else {
              continuation.finish(
                throwing: error == .reset
                  ? APIError.connectionReset(info) : .connectionLost(info, receivedBytes: 0))
            }
            control.detachAndClose(connection)
            return
          }
          if n == 0 {
            socket.closed(code: nil, reason: "")
            continuation.finish(throwing: APIError.connectionLost(info, receivedBytes: 0))
            control.detachAndClose(connection)
            return
          }
          pending = Array(buffer[0..<n])
        }
      }
      thread.name = "ClientKit.WebSocket"
      thread.stackSize = 512 * 1024
      thread.start()
    }
  }
#endif
