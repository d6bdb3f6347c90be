import Foundation
import HTTPCore
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension APIClient {
  /// Opens a WebSocket connection (RFC 6455) to the request's URL and returns it once the server accepted
  /// the handshake.
  ///
  /// ```swift
  /// struct Join: Codable { let user: String }
  /// let socket = try await client.webSocket(for: Endpoint<EmptyResponse>(.get, "/ws/chat"), subprotocols: ["chat.v1"])
  /// try await socket.send(Join(user: "aiko"))
  /// for try await message in socket.messages { print(message) }
  /// ```
  ///
  /// The handshake is built like any request (base URL with `http`/`https`, default headers and query,
  /// authentication, adapters) and sent as `GET` with `Upgrade: websocket`, a random 16-byte
  /// `Sec-WebSocket-Key` and `Sec-WebSocket-Version: 13`; the answer must be `101` with the matching
  /// `Sec-WebSocket-Accept` and, when the server names one, a subprotocol that was offered. The request's
  /// `timeout` bounds the handshake.
  ///
  /// Which implementation: ``SocketTransport`` (and ``AutomaticTransport``, through its ``AutomaticTransport/plain``
  /// transport) on Linux frame the connection themselves with HTTPCore's `WebSocketEndpoint`, `ws` and `wss`
  /// (TLS with the transport's trust configuration and client identity); ``URLSessionTransport`` uses
  /// `URLSessionWebSocketTask` (on Apple platforms; on Linux it needs a libcurl built with WebSocket
  /// support). Other transports throw ``APIError/invalidRequest(_:)``.
  ///
  /// After ``WebSocketConnection/close(code:reason:)`` the client waits at most `closeTimeout` for the
  /// server's close frame, then closes TCP and ``WebSocketConnection/messages`` finishes
  /// (``WebSocketConnection/closeCode`` stays nil: no close frame came back).
  /// - Parameters:
  ///   - request: the request; its method, body and `Response` type are not used.
  ///   - subprotocols: offered in `Sec-WebSocket-Protocol`, in order of preference.
  ///   - maxMessageBytes: the largest message accepted (default 16 MiB, at most 2 GiB); a larger one
  ///     closes the connection with 1009.
  ///   - closeTimeout: how long to wait for the server's close frame after sending ours (default 5 s,
  ///     0 to 1 hour). `URLSessionWebSocketTask` keeps its own.
  /// - Throws: ``APIError/unacceptableStatus(_:application:)`` when the server answers other than `101`,
  ///   ``APIError/malformedResponse(_:detail:)`` for a wrong handshake answer, the transport cases.
  public func webSocket<R: Request>(
    for request: R, subprotocols: [String] = [], maxMessageBytes: Int = 16 << 20,
    closeTimeout: Duration = .seconds(5)
  ) async throws(APIError) -> WebSocketConnection {
    let (built, _) = try await makeTransportRequest(request)
    let limit = min(max(maxMessageBytes, 1), 1 << 31)
    let wait = min(max(closeTimeout, .zero), .seconds(3600))
    #if CLIENTKIT_NATIVE
      // AutomaticTransport's plain transport does wss itself (with the system roots unless configured
      // otherwise): swift-corelibs-foundation's URLSessionWebSocketTask depends on how libcurl was built.
      let native = (transport as? SocketTransport) ?? (transport as? AutomaticTransport)?.plain
      if let native {
        return try await native.webSocket(
          built, subprotocols: subprotocols, maxMessageBytes: limit, closeTimeout: wait, encoder: encoder,
          decoder: decoder)
      }
    #endif
    if let session = transport as? URLSessionTransport {
      return try await URLSessionWebSocketBackend.open(
        built, session: session.session, subprotocols: subprotocols, maxMessageBytes: limit, encoder: encoder,
        decoder: decoder)
    }
    throw .invalidRequest("the client's transport \(type(of: transport)) cannot open WebSocket connections")
  }
}

/// A WebSocket on `URLSessionWebSocketTask` (Apple platforms; swift-corelibs-foundation has it too, over
/// libcurl).
final class URLSessionWebSocketBackend: WebSocketBackend {
  let task: URLSessionWebSocketTask
  let info: RequestInfo

  init(task: URLSessionWebSocketTask, info: RequestInfo) {
    self.task = task
    self.info = info
  }

  /// Starts the task and waits for the first message or the close to know the handshake's outcome is
  /// past; URLSession reports a refused handshake as the first receive's error.
  static func open(
    _ request: TransportRequest, session: URLSession, subprotocols: [String], maxMessageBytes: Int,
    encoder: JSONEncoder, decoder: JSONDecoder
  ) async throws(APIError) -> WebSocketConnection {
    var components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
    switch components?.scheme?.lowercased() {
    case "http": components?.scheme = "ws"
    case "https": components?.scheme = "wss"
    default: break
    }
    guard let url = components?.url else {
      throw .invalidRequest("the URL \(request.url) cannot be a WebSocket URL")
    }
    var urlRequest = URLRequest(url: url)
    for field in request.headers { urlRequest.addValue(field.value, forHTTPHeaderField: field.name) }
    if !subprotocols.isEmpty {
      urlRequest.setValue(subprotocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol")
    }
    urlRequest.timeoutInterval = max(1, Double(request.timeout.components.seconds))
    let task = session.webSocketTask(with: urlRequest)
    task.maximumMessageSize = maxMessageBytes
    let backend = URLSessionWebSocketBackend(task: task, info: request.info)
    let (messages, continuation) = AsyncThrowingStream<WebSocketMessage, any Error>.makeStream()
    let socket = WebSocketConnection(
      request: request.info, subprotocol: nil, messages: messages, backend: backend, encoder: encoder,
      decoder: decoder)
    continuation.onTermination = { _ in task.cancel(with: .goingAway, reason: nil) }
    task.resume()
    let reader = Task {
      var receivedAny = false
      while true {
        do {
          switch try await task.receive() {
          case .string(let text): continuation.yield(.text(text))
          case .data(let data): continuation.yield(.binary([UInt8](data)))
          @unknown default: break
          }
          receivedAny = true
        } catch {
          let code = task.closeCode
          if code != .invalid {
            socket.closed(
              code: UInt16(clamping: code.rawValue),
              reason: task.closeReason.map { String(decoding: $0, as: UTF8.self) } ?? "")
            continuation.finish()
          } else {
            socket.closed(code: nil, reason: "")
            // Before any message, the error is the handshake's (refused, TLS, or a libcurl without
            // WebSocket support on Linux, "unsupported URL"): mapped like any request's.
            let code = (error as NSError).code
            continuation.finish(
              throwing: receivedAny || code == 0
                ? APIError.connectionLost(request.info, receivedBytes: 0)
                : Exchange.map(
                  code: code, error: error, info: request.info, limit: request.timeout))
          }
          return
        }
      }
    }
    _ = reader
    return socket
  }

  func send(_ message: WebSocketMessage) async throws(APIError) {
    do {
      switch message {
      case .text(let text): try await task.send(.string(text))
      case .binary(let bytes): try await task.send(.data(Data(bytes)))
      }
    } catch {
      throw .connectionLost(info, receivedBytes: 0)
    }
  }

  func ping(_ payload: [UInt8]) async throws(APIError) {
    let result = await withCheckedContinuation { (continuation: CheckedContinuation<(any Error)?, Never>) in
      task.sendPing { error in continuation.resume(returning: error) }
    }
    if result != nil { throw .connectionLost(info, receivedBytes: 0) }
  }

  func close(code: UInt16, reason: String) {
    let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure
    task.cancel(with: closeCode, reason: Data(reason.utf8))
  }
}
