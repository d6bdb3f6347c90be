import Foundation
import HTTPCore
import Synchronization

/// What carries a ``WebSocketConnection``'s frames: the socket transport's connection (Linux) or a
/// `URLSessionWebSocketTask`.
protocol WebSocketBackend: Sendable {
  /// Sends one message.
  func send(_ message: WebSocketMessage) async throws(APIError)
  /// Sends a ping with `payload`.
  func ping(_ payload: [UInt8]) async throws(APIError)
  /// Starts the closing handshake (or closes at once when that is all the backend can do).
  func close(code: UInt16, reason: String)
}

/// An open WebSocket connection (RFC 6455) made by ``APIClient/webSocket(for:subprotocols:maxMessageBytes:)``:
/// send text, binary or `Encodable` values, read the messages as they arrive, close with a code.
///
/// ```swift
/// let socket = try await client.webSocket(for: Endpoint<EmptyResponse>(.get, "/ws/chat"), subprotocols: ["chat.v1"])
/// try await socket.send(Join(user: "aiko"))              // JSON, as a text message
/// for try await reply in socket.decoded(as: ChatEvent.self) { print(reply) }
/// socket.close()
/// ```
public final class WebSocketConnection: Sendable {
  /// The subprotocol the server chose from those offered (`Sec-WebSocket-Protocol`), or nil.
  public let subprotocol: String?
  /// The messages as they arrive (fragments assembled). It finishes when the connection closes with a
  /// close frame (see ``closeCode``) and throws an ``APIError`` when the connection is lost without one.
  /// Pings are answered by the connection itself.
  public let messages: AsyncThrowingStream<WebSocketMessage, any Error>
  private let backend: any WebSocketBackend
  private let closeState = Mutex<(code: UInt16?, reason: String, closed: Bool)>((nil, "", false))
  private let encoder: JSONEncoder
  private let decoder: JSONDecoder
  /// The opening handshake's request, named by decoding errors.
  let request: RequestInfo

  init(
    request: RequestInfo, subprotocol: String?, messages: AsyncThrowingStream<WebSocketMessage, any Error>,
    backend: any WebSocketBackend,
    encoder: JSONEncoder, decoder: JSONDecoder
  ) {
    self.request = request
    self.subprotocol = subprotocol
    self.messages = messages
    self.backend = backend
    self.encoder = encoder
    self.decoder = decoder
  }

  /// The code of the close frame that ended the connection (the peer's, or the echo of ours), nil while
  /// open or when the close frame had none.
  public var closeCode: UInt16? { closeState.withLock { $0.code } }
  /// The reason of the close frame that ended the connection, empty while open.
  public var closeReason: String { closeState.withLock { $0.reason } }
  /// Whether the connection has closed.
  public var isClosed: Bool { closeState.withLock { $0.closed } }

  /// Records the close that ended the connection (called by the backend).
  func closed(code: UInt16?, reason: String) {
    closeState.withLock { $0 = (code, reason, true) }
  }

  /// Sends a text message.
  /// - Throws: ``APIError/invalidRequest(_:)`` after the connection closed; a transport failure.
  public func send(text: String) async throws(APIError) {
    try await backend.send(.text(text))
  }

  /// Sends a binary message.
  /// - Throws: as ``send(text:)``.
  public func send(data: Data) async throws(APIError) {
    try await backend.send(.binary([UInt8](data)))
  }

  /// Sends `value` encoded with the client's `JSONEncoder` as a text message.
  /// - Throws: ``APIError/invalidRequest(_:)`` when it cannot be encoded; as ``send(text:)``.
  public func send(_ value: some Encodable) async throws(APIError) {
    let data: Data
    do {
      data = try encoder.encode(value)
    } catch {
      throw .invalidRequest("the message could not be encoded as JSON: \(error)")
    }
    try await backend.send(.text(String(decoding: data, as: UTF8.self)))
  }

  /// Sends a ping (the pong is answered by the peer; this checks the connection is alive end to end).
  /// - Throws: as ``send(text:)``.
  public func ping(_ payload: Data = Data()) async throws(APIError) {
    try await backend.ping([UInt8](payload.prefix(125)))
  }

  /// Starts the closing handshake with `code` (1000 normal closure by default; 1000–1003, 1007–1014 or
  /// 3000–4999, anything else becomes 1000) and `reason` (cut to fit a control frame). ``messages``
  /// finishes when the peer answers.
  public func close(code: UInt16 = 1000, reason: String = "") {
    let sendable = WebSocketEndpoint.isSendableCloseCode(code) ? code : 1000
    var bytes = Array(reason.utf8.prefix(123))
    while String(validating: bytes, as: UTF8.self) == nil { bytes.removeLast() }
    backend.close(code: sendable, reason: String(decoding: bytes, as: UTF8.self))
  }

  /// The messages decoded from JSON as `T` (text and binary messages alike), with the client's
  /// `JSONDecoder`. A message that does not decode ends the stream with ``APIError/decoding(_:response:)``.
  public func decoded<T: Decodable & Sendable>(as type: T.Type = T.self) -> AsyncThrowingStream<T, any Error>
  {
    let messages = self.messages
    let decoder = self.decoder
    let request = self.request
    return AsyncThrowingStream { continuation in
      let task = Task {
        do {
          for try await message in messages {
            let data: Data
            switch message {
            case .text(let text): data = Data(text.utf8)
            case .binary(let bytes): data = Data(bytes)
            }
            do {
              continuation.yield(try decoder.decode(T.self, from: data))
            } catch {
              let info = ResponseInfo(request: request, statusCode: 101, body: data)
              throw APIError.decoding(DecodingFailure(error), response: info)
            }
          }
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }
}
