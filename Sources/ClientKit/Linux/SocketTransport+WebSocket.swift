#if CLIENTKIT_NATIVE
  import Foundation
  import HTTPCore
  import Synchronization

  extension SocketTransport {
    /// Opens a WebSocket connection (RFC 6455) on a connection of its own: the opening handshake within
    /// ``TransportRequest/timeout`` (over TLS for `https`, with this transport's trust configuration and
    /// identity, as for any request), then frames through HTTPCore's ``WebSocketEndpoint``; a thread reads
    /// and answers pings and close frames, sends write from the caller. Every read and write of the
    /// connection is made under one lock, so a TLS session is never used by two threads at once.
    /// - Throws: ``APIError/invalidRequest(_:)`` for a scheme other than http/https, the transport cases of
    ///   ``APIError`` (``APIError/tlsFailure(_:_:)`` among them),
    ///   ``APIError/unacceptableStatus(_:application:)`` when the server does not answer `101`,
    ///   ``APIError/malformedResponse(_:detail:)`` for a wrong handshake answer.
    func webSocket(
      _ request: TransportRequest, subprotocols: [String], maxMessageBytes: Int, closeTimeout: Duration,
      encoder: JSONEncoder, decoder: JSONDecoder
    ) async throws(APIError) -> WebSocketConnection {
      let (host, port, tls) = try origin(of: request)
      let handshake = WebSocketHandshake(subprotocols: subprotocols)
      var upgrade = request
      upgrade.method = .get
      upgrade.body = Data()
      upgrade.headers = handshake.headers(adding: request.headers)
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
              request: prepared, host: host, port: port, tls: tls, control: control, pool: pool,
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
        connection: connection, control: control, maxMessageBytes: maxMessageBytes,
        closeTimeout: closeTimeout, info: upgrade.info)
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
      let budget = request.timeout.nanosecondsOrZero
      let deadline = monotonicNanoseconds() + budget
      let key = SocketTransport.poolKey(secure: tls != nil, host: host, port: port)
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
        if let tls { try connection.startTLS(host: host, context: tls, until: deadline) }
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

  /// A WebSocket over a ``SocketConnection``: the endpoint's state under one lock; every read and write
  /// of the connection under another (``ioLock``), so frames never interleave and a TLS session is used by
  /// one thread at a time; a thread that reads without waiting under that lock and waits for the socket
  /// outside it.
  final class SocketWebSocketBackend: WebSocketBackend {
    private let connection: SocketConnection
    private let control: ExchangeControl
    private let endpoint: Mutex<WebSocketEndpoint>
    /// Held while the connection is read, written or closed; true once the reader closed it (a closed
    /// descriptor's number may already belong to another socket, so nothing may touch it after that).
    private let ioLock = Mutex(false)
    private let info: RequestInfo
    /// How long the client waits for the server's close frame after sending its own (monotonic ns).
    private let closeTimeoutNanoseconds: UInt64
    /// Set when the client sent its close frame: the monotonic time after which the reader closes TCP
    /// without the server's answer.
    private let closeDeadline = Mutex<UInt64?>(nil)

    init(
      connection: SocketConnection, control: ExchangeControl, maxMessageBytes: Int, closeTimeout: Duration,
      info: RequestInfo
    ) {
      self.connection = connection
      self.control = control
      self.endpoint = Mutex(WebSocketEndpoint(role: .client, maxMessageBytes: maxMessageBytes))
      self.info = info
      self.closeTimeoutNanoseconds = min(closeTimeout, .seconds(3600)).nanosecondsOrZero
    }

    /// Applies `change` to the endpoint and writes what it queued, before `deadline`.
    private func update(until deadline: UInt64 = .max, _ change: (inout WebSocketEndpoint) -> Void)
      throws(APIError)
    {
      try ioLock.withLock { isClosed throws(APIError) in
        guard !isClosed else { throw .invalidRequest("the WebSocket connection is closed") }
        let bytes = endpoint.withLock { e -> [UInt8] in
          change(&e)
          return e.takeOutput()
        }
        guard !bytes.isEmpty else { return }
        do throws(SocketFailure) {
          try connection.writeAll(bytes, until: deadline)
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

    /// Sends the close frame and starts the close timeout: the reader closes TCP when the server has not
    /// answered by then (RFC 6455 §7.1.1 leaves the wait to the endpoint).
    func close(code: UInt16, reason: String) {
      guard isOpen else { return }
      let deadline = monotonicNanoseconds() + closeTimeoutNanoseconds
      closeDeadline.withLock { $0 = $0 ?? deadline }
      try? update(until: deadline) { $0.close(code: code, reason: reason) }
    }

    /// Closes the TCP connection at once (the messages' consumer went away).
    func abort() {
      control.cancel()
    }

    /// How long the reader waits for the socket at a time: it looks at the close deadline (set by another
    /// thread) at least this often.
    private static let waitSliceNanoseconds: UInt64 = 200_000_000

    /// Starts the reading thread; `leftover` are bytes that came with the handshake's head.
    func startReading(
      leftover: [UInt8], socket: WebSocketConnection,
      continuation: AsyncThrowingStream<WebSocketMessage, any Error>.Continuation
    ) {
      let thread = Thread { [self] in
        defer {
          ioLock.withLock { isClosed in
            isClosed = true
            control.detachAndClose(connection)
          }
        }
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
                return
              }
            }
          }
          let step: SocketConnection.ReadStep
          do throws(SocketFailure) {
            step = try ioLock.withLock { _ throws(SocketFailure) in try connection.readNow(into: &buffer) }
          } catch {
            socket.closed(code: nil, reason: "")
            if control.isCancelled || closeDeadline.withLock({ $0 != nil }) {
              continuation.finish()
            } else {
              continuation.finish(
                throwing: error == .reset
                  ? APIError.connectionReset(info) : .connectionLost(info, receivedBytes: 0))
            }
            return
          }
          switch step {
          case .read(0):
            socket.closed(code: nil, reason: "")
            // After our close, a peer that ends TCP without its close frame still ends the stream cleanly.
            if control.isCancelled || closeDeadline.withLock({ $0 != nil }) {
              continuation.finish()
            } else {
              continuation.finish(throwing: APIError.connectionLost(info, receivedBytes: 0))
            }
            return
          case .read(let n):
            pending = Array(buffer[0..<n])
          case .wait(let events):
            let now = monotonicNanoseconds()
            var until = now + Self.waitSliceNanoseconds
            if let deadline = closeDeadline.withLock({ $0 }) {
              guard now < deadline else {
                // The server never answered our close: close TCP; no close frame was received.
                socket.closed(code: nil, reason: "")
                continuation.finish()
                return
              }
              until = min(until, deadline)
            }
            do throws(SocketFailure) {
              try connection.wait(for: events, until: until)
            } catch {
              guard error == .deadline else {
                socket.closed(code: nil, reason: "")
                continuation.finish(throwing: APIError.connectionLost(info, receivedBytes: 0))
                return
              }
            }
          }
        }
      }
      thread.name = "ClientKit.WebSocket"
      thread.stackSize = 512 * 1024
      thread.start()
    }
  }
#endif
