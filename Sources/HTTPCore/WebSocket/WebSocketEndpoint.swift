/// One side of a WebSocket connection after the opening handshake (RFC 6455 §5–§7): feed it received bytes,
/// take bytes to send. No I/O, no clock: the caller owns the socket and the timers (the closing handshake's
/// timeout, pings), and reads `state` after each call.
public struct WebSocketEndpoint: Sendable {
  /// Where the connection is in its life (RFC 6455 §7).
  public enum State: Sendable {
    /// Messages flow both ways.
    case open
    /// A close frame sent, waiting for the peer's.
    case closing
    /// Both close frames exchanged, or the connection failed: the caller closes TCP after flushing the output.
    case closed
  }

  /// The GUID of RFC 6455 §1.3, appended to the client's key for `Sec-WebSocket-Accept`.
  public static let acceptGUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

  /// The side this endpoint plays.
  public let role: WebSocketRole
  /// The largest message (assembled from its fragments) accepted; a larger one closes with 1009.
  public let maxMessageBytes: Int
  private let maskingKeys: @Sendable () -> UInt32

  /// Where the connection is.
  public private(set) var state: State = .open
  private var input: [UInt8] = []
  private var output: [UInt8] = []
  /// The data opcode (text or binary) of the fragmented message being assembled, nil between messages.
  private var fragmentOpcode: WebSocketOpcode?
  private var fragments: [UInt8] = []

  /// An endpoint in the open state. `maxMessageBytes` is clamped to 1…2³¹; `maskingKeys` supplies the
  /// masking key of each frame a client sends (RFC 6455 §5.3 asks for a strong source; tests pass a fixed one).
  public init(
    role: WebSocketRole, maxMessageBytes: Int,
    maskingKeys: @escaping @Sendable () -> UInt32 = { .random(in: .min ... .max) }
  ) {
    self.role = role
    self.maxMessageBytes = min(max(maxMessageBytes, 1), 1 << 31)
    self.maskingKeys = maskingKeys
  }

  /// Parses what arrived; returns the events in order. Protocol violations queue the close frame RFC 6455
  /// asks for (1002: an unmasked client frame or a masked server frame, reserved bits, a reserved opcode, a
  /// fragmented or over-125-byte control frame, a continuation without a start, a new data frame inside a
  /// fragmented message, a 64-bit length with its top bit set, a close payload of 1 byte or a close code
  /// that may not be sent; 1007: invalid UTF-8 in a text message or a close reason; 1009: a
  /// message over `maxMessageBytes`), report `.closed` with that code, and move to `.closed` (the caller
  /// then closes TCP after flushing). A received ping queues a pong with the same payload. A received close
  /// (when open) queues a close frame echoing its code (1000 when it had none) and reports `.closed`; when
  /// `.closing` (we closed first), it just reports `.closed`. After `.closed`, bytes are ignored.
  public mutating func receive(_ bytes: UnsafeRawBufferPointer) -> [WebSocketEvent] {
    guard state != .closed else { return [] }
    input.append(contentsOf: bytes)
    var events: [WebSocketEvent] = []
    var offset = 0
    while state != .closed {
      guard let consumed = parseFrame(at: offset, events: &events) else { break }
      offset += consumed
    }
    if state == .closed {
      input = []
    } else if offset > 0 {
      input.removeFirst(offset)
    }
    return events
  }

  /// Queues a data message as one unfragmented frame; ignored unless the connection is open.
  public mutating func send(_ message: WebSocketMessage) {
    guard state == .open else { return }
    let key = role == .client ? maskingKeys() : nil
    switch message {
    case .text(let text):
      WebSocketFrame.appendFrame(fin: true, opcode: .text, payload: text.utf8, maskingKey: key, to: &output)
    case .binary(let bytes):
      WebSocketFrame.appendFrame(fin: true, opcode: .binary, payload: bytes, maskingKey: key, to: &output)
    }
  }

  /// Queues a ping (its payload cut to the 125 bytes a control frame may carry); ignored unless open.
  public mutating func ping(_ payload: [UInt8] = []) {
    guard state == .open else { return }
    queueControl(.ping, payload: payload.prefix(125))
  }

  /// Starts the closing handshake (state → `.closing`): queues a close frame with `code` (1000 when
  /// `isSendableCloseCode` refuses it) and `reason` (cut to 123 bytes at a character boundary). Ignored
  /// unless open.
  public mutating func close(code: UInt16, reason: String) {
    guard state == .open else { return }
    queueClose(code: Self.isSendableCloseCode(code) ? code : 1000, reason: reason)
    state = .closing
  }

  /// Bytes to write, taken (the output is emptied).
  public mutating func takeOutput() -> [UInt8] {
    defer { output = [] }
    return output
  }

  /// Whether bytes wait to be written.
  public var hasOutput: Bool { !output.isEmpty }

  /// How many bytes wait to be written (whole frames: ``takeOutput()`` takes them all).
  public var pendingOutputBytes: Int { output.count }

  /// 1000–1003, 1007–1014, 3000–4999: the codes an endpoint may put in a close frame (RFC 6455 §7.4.1 and
  /// the IANA registry; 1004–1006 and 1015 are reserved for reporting, never sent).
  public static func isSendableCloseCode(_ code: UInt16) -> Bool {
    (1000...1003).contains(code) || (1007...1014).contains(code) || (3000...4999).contains(code)
  }

  /// The `Sec-WebSocket-Accept` value's input: key + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11" (SHA-1 and
  /// base64 are done by the caller, with libcrypto on Linux / CryptoKit `Insecure.SHA1` on Apple).
  public static func acceptInput(key: String) -> String { key + acceptGUID }

  // MARK: - Parsing

  /// Parses one frame at `offset` of the input; returns the bytes it took, or nil when the frame is not
  /// complete yet or the connection failed.
  private mutating func parseFrame(at offset: Int, events: inout [WebSocketEvent]) -> Int? {
    let available = input.count - offset
    guard available >= 2 else { return nil }
    let first = input[offset]
    let second = input[offset + 1]
    let fin = first & 0x80 != 0
    if first & 0x70 != 0 {
      fail(1002, "reserved bits set without a negotiated extension", &events)
      return nil
    }
    guard let opcode = WebSocketOpcode(rawValue: first & 0x0F) else {
      fail(1002, "reserved opcode \(first & 0x0F)", &events)
      return nil
    }
    let masked = second & 0x80 != 0
    if masked != (role == .server) {
      fail(1002, role == .server ? "a client frame was not masked" : "a server frame was masked", &events)
      return nil
    }
    var headerLength = 2
    var length = UInt64(second & 0x7F)
    if length == 126 {
      guard available >= 4 else { return nil }
      length = UInt64(input[offset + 2]) << 8 | UInt64(input[offset + 3])
      headerLength = 4
    } else if length == 127 {
      guard available >= 10 else { return nil }
      length = 0
      for index in 0..<8 { length = length << 8 | UInt64(input[offset + 2 + index]) }
      if length >> 63 != 0 {
        fail(1002, "a 64-bit payload length with its most significant bit set", &events)
        return nil
      }
      headerLength = 10
    }
    if opcode.isControl {
      if !fin {
        fail(1002, "a fragmented control frame", &events)
        return nil
      }
      if length > 125 {
        fail(1002, "a control frame longer than 125 bytes", &events)
        return nil
      }
    } else {
      if opcode == .continuation, fragmentOpcode == nil {
        fail(1002, "a continuation frame without a message to continue", &events)
        return nil
      }
      if opcode != .continuation, fragmentOpcode != nil {
        fail(1002, "a new data frame inside a fragmented message", &events)
        return nil
      }
      if length > UInt64(maxMessageBytes - fragments.count) {
        fail(1009, "message larger than \(maxMessageBytes) bytes", &events)
        return nil
      }
    }
    let payloadLength = Int(length)
    let maskStart = offset + headerLength
    let payloadStart = maskStart + (masked ? 4 : 0)
    guard input.count - payloadStart >= payloadLength else { return nil }
    var payload = Array(input[payloadStart..<(payloadStart + payloadLength)])
    if masked {
      let key = (input[maskStart], input[maskStart + 1], input[maskStart + 2], input[maskStart + 3])
      payload.withUnsafeMutableBufferPointer { buffer in
        for index in buffer.indices {
          switch index & 3 {
          case 0: buffer[index] ^= key.0
          case 1: buffer[index] ^= key.1
          case 2: buffer[index] ^= key.2
          default: buffer[index] ^= key.3
          }
        }
      }
    }
    handle(fin: fin, opcode: opcode, payload: payload, events: &events)
    return payloadStart + payloadLength - offset
  }

  private mutating func handle(
    fin: Bool, opcode: WebSocketOpcode, payload: [UInt8], events: inout [WebSocketEvent]
  ) {
    switch opcode {
    case .ping:
      if state == .open { queueControl(.pong, payload: payload) }
      events.append(.ping(payload))
    case .pong:
      events.append(.pong(payload))
    case .close:
      receiveClose(payload, events: &events)
    case .text, .binary:
      if fin {
        deliver(opcode, payload, events: &events)
      } else {
        fragmentOpcode = opcode
        fragments = payload
      }
    case .continuation:
      fragments.append(contentsOf: payload)
      if fin, let messageOpcode = fragmentOpcode {
        let message = fragments
        fragmentOpcode = nil
        fragments = []
        deliver(messageOpcode, message, events: &events)
      }
    }
  }

  private mutating func deliver(_ opcode: WebSocketOpcode, _ payload: [UInt8], events: inout [WebSocketEvent])
  {
    if opcode == .binary {
      events.append(.message(.binary(payload)))
    } else if let text = String(validating: payload, as: UTF8.self) {
      events.append(.message(.text(text)))
    } else {
      fail(1007, "a text message that is not UTF-8", &events)
    }
  }

  private mutating func receiveClose(_ payload: [UInt8], events: inout [WebSocketEvent]) {
    var code: UInt16?
    var reason = ""
    if payload.count == 1 {
      fail(1002, "a close frame with a 1-byte payload", &events)
      return
    }
    if payload.count >= 2 {
      let received = UInt16(payload[0]) << 8 | UInt16(payload[1])
      guard Self.isSendableCloseCode(received) else {
        fail(1002, "close code \(received) may not be sent", &events)
        return
      }
      guard let text = String(validating: payload[2...], as: UTF8.self) else {
        fail(1007, "a close reason that is not UTF-8", &events)
        return
      }
      code = received
      reason = text
    }
    if state == .open { queueClose(code: code ?? 1000, reason: "") }
    state = .closed
    events.append(.closed(code: code, reason: reason))
  }

  /// Fails the connection (RFC 6455 §7.1.7): the close frame with `code` when none was sent yet, then closed.
  private mutating func fail(_ code: UInt16, _ reason: String, _ events: inout [WebSocketEvent]) {
    if state == .open { queueClose(code: code, reason: reason) }
    state = .closed
    fragmentOpcode = nil
    fragments = []
    events.append(.closed(code: code, reason: reason))
  }

  // MARK: - Output

  private mutating func queueControl(_ opcode: WebSocketOpcode, payload: some Collection<UInt8>) {
    let key = role == .client ? maskingKeys() : nil
    WebSocketFrame.appendFrame(fin: true, opcode: opcode, payload: payload, maskingKey: key, to: &output)
  }

  private mutating func queueClose(code: UInt16, reason: String) {
    var payload: [UInt8] = [UInt8(truncatingIfNeeded: code >> 8), UInt8(truncatingIfNeeded: code)]
    payload.append(contentsOf: Self.truncatedReason(reason))
    queueControl(.close, payload: payload)
  }

  /// `reason`'s UTF-8, cut to 123 bytes at a character boundary (RFC 6455 §5.5: 125 bytes with the code).
  package static func truncatedReason(_ reason: String) -> [UInt8] {
    var bytes: [UInt8] = []
    for character in reason {
      let utf8 = Array(String(character).utf8)
      if bytes.count + utf8.count > 123 { break }
      bytes.append(contentsOf: utf8)
    }
    return bytes
  }
}
