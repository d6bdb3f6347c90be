/// Which side of a WebSocket connection an endpoint plays (RFC 6455 §5.1: a client masks every frame it
/// sends, a server masks none).
public enum WebSocketRole: Sendable {
  case server
  case client
}

/// A frame's opcode (RFC 6455 §5.2, §11.8). The reserved values 0x3–0x7 and 0xB–0xF have no case: a frame
/// carrying one is a protocol error.
public enum WebSocketOpcode: UInt8, Sendable {
  case continuation = 0x0
  case text = 0x1
  case binary = 0x2
  case close = 0x8
  case ping = 0x9
  case pong = 0xA

  /// Close, ping and pong (RFC 6455 §5.5): at most 125 bytes of payload, never fragmented.
  public var isControl: Bool { rawValue & 0x8 != 0 }
}

/// One WebSocket frame (RFC 6455 §5.2): the FIN bit, the opcode and the unmasked payload. The reserved
/// bits are always 0 (no extension is negotiated).
public struct WebSocketFrame: Sendable, Equatable {
  /// The final fragment of a message (always true for control frames).
  public var fin: Bool
  /// What the payload is.
  public var opcode: WebSocketOpcode
  /// The application data, unmasked.
  public var payload: [UInt8]

  /// A frame; `fin` defaults to an unfragmented message.
  public init(fin: Bool = true, opcode: WebSocketOpcode, payload: [UInt8]) {
    self.fin = fin
    self.opcode = opcode
    self.payload = payload
  }

  /// The frame's bytes; masked with `maskingKey` (a client's frames) or unmasked when nil (a server's).
  /// The payload length takes the shortest of the 7-, 16- and 64-bit forms (RFC 6455 §5.2).
  public func serialized(maskingKey: UInt32?) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(payload.count + 14)
    Self.appendFrame(fin: fin, opcode: opcode, payload: payload, maskingKey: maskingKey, to: &out)
    return out
  }

  /// Appends a frame's bytes to `out` (the endpoint's output buffer), without an intermediate array.
  static func appendFrame(
    fin: Bool, opcode: WebSocketOpcode, payload: some Collection<UInt8>, maskingKey: UInt32?,
    to out: inout [UInt8]
  ) {
    out.append((fin ? 0x80 : 0) | opcode.rawValue)
    let maskBit: UInt8 = maskingKey == nil ? 0 : 0x80
    let count = payload.count
    if count < 126 {
      out.append(maskBit | UInt8(count))
    } else if count <= 0xFFFF {
      out.append(maskBit | 126)
      out.append(UInt8(truncatingIfNeeded: count >> 8))
      out.append(UInt8(truncatingIfNeeded: count))
    } else {
      out.append(maskBit | 127)
      let length = UInt64(count)
      for shift in stride(from: 56, through: 0, by: -8) {
        out.append(UInt8(truncatingIfNeeded: length >> UInt64(shift)))
      }
    }
    if let maskingKey {
      let key: [UInt8] = [
        UInt8(truncatingIfNeeded: maskingKey >> 24), UInt8(truncatingIfNeeded: maskingKey >> 16),
        UInt8(truncatingIfNeeded: maskingKey >> 8), UInt8(truncatingIfNeeded: maskingKey),
      ]
      out.append(contentsOf: key)
      var index = 0
      for byte in payload {
        out.append(byte ^ key[index & 3])
        index += 1
      }
    } else {
      out.append(contentsOf: payload)
    }
  }
}

/// A complete (reassembled) data message.
public enum WebSocketMessage: Sendable, Equatable {
  /// A text message: valid UTF-8 (RFC 6455 §5.6).
  case text(String)
  /// A binary message.
  case binary([UInt8])
}

/// What `WebSocketEndpoint.receive` found in the received bytes, in order.
public enum WebSocketEvent: Sendable, Equatable {
  /// A complete data message (fragments already assembled).
  case message(WebSocketMessage)
  /// A ping; already answered with a pong in the output.
  case ping([UInt8])
  /// A pong (solicited or not).
  case pong([UInt8])
  /// The closing handshake finished or the peer closed: code nil when the peer's close frame had none.
  /// When the endpoint itself failed the connection (a protocol violation, an oversized message), `code`
  /// and `reason` are those of the close frame it queued (1002, 1007 or 1009).
  case closed(code: UInt16?, reason: String)
}
