import Testing

@testable import HTTPCore

/// RFC 6455's framing rules (§5) and closing handshake (§7) on `WebSocketEndpoint`, byte for byte.
@Suite("WebSocketEndpoint: RFC 6455 frames, messages and the closing handshake")
struct WebSocketEndpointTests {
  static let key: UInt32 = 0x3700_FA21

  /// A client frame (masked with `key`) as a server receives it.
  static func clientFrame(fin: Bool = true, _ opcode: WebSocketOpcode, _ payload: [UInt8]) -> [UInt8] {
    WebSocketFrame(fin: fin, opcode: opcode, payload: payload).serialized(maskingKey: key)
  }

  static func server(max: Int = 1 << 20) -> WebSocketEndpoint {
    WebSocketEndpoint(role: .server, maxMessageBytes: max)
  }

  static func client(max: Int = 1 << 20) -> WebSocketEndpoint {
    WebSocketEndpoint(role: .client, maxMessageBytes: max, maskingKeys: { key })
  }

  static func feed(_ endpoint: inout WebSocketEndpoint, _ bytes: [UInt8]) -> [WebSocketEvent] {
    bytes.withUnsafeBytes { endpoint.receive($0) }
  }

  /// The close frame a server sends with `code` and `reason`.
  static func serverClose(_ code: UInt16, _ reason: String = "") -> [UInt8] {
    WebSocketFrame(opcode: .close, payload: [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(reason.utf8))
      .serialized(maskingKey: nil)
  }

  static func closeCode(_ output: [UInt8]) -> UInt16? {
    guard output.count >= 4, output[0] == 0x88 else { return nil }
    return UInt16(output[2]) << 8 | UInt16(output[3])
  }

  @Test func rfcExamplesSerializeAsTheRFCShowsThem() {
    // RFC 6455 §5.7: a single-frame unmasked text message "Hello" and the masked one.
    let hello = Array("Hello".utf8)
    #expect(
      WebSocketFrame(opcode: .text, payload: hello).serialized(maskingKey: nil)
        == [0x81, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f])
    #expect(
      WebSocketFrame(opcode: .text, payload: hello).serialized(maskingKey: 0x37fa_213d)
        == [0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58])
    // Unmasked ping "Hello".
    #expect(
      WebSocketFrame(opcode: .ping, payload: hello).serialized(maskingKey: nil)
        == [0x89, 0x05, 0x48, 0x65, 0x6c, 0x6c, 0x6f])
  }

  @Test(arguments: [0, 125, 126, 65_535, 65_536, 200_000])
  func lengthsTakeThe7_16Or64BitForm(count: Int) {
    let payload = (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let bytes = WebSocketFrame(opcode: .binary, payload: payload).serialized(maskingKey: nil)
    let header = count < 126 ? 2 : count <= 65_535 ? 4 : 10
    #expect(bytes.count == header + count)
    #expect(bytes[1] == (count < 126 ? UInt8(count) : count <= 65_535 ? 126 : 127))
    var server = Self.server()
    var events = Self.feed(&server, Self.clientFrame(.binary, payload))
    #expect(events == [.message(.binary(payload))])
    // The same frame a byte at a time parses the same.
    server = Self.server()
    events = []
    let masked = Self.clientFrame(.binary, payload)
    if count <= 65_536 {
      for byte in masked { events += Self.feed(&server, [byte]) }
      #expect(events == [.message(.binary(payload))])
    }
    // A client receives the server's unmasked form.
    var client = Self.client()
    #expect(Self.feed(&client, bytes) == [.message(.binary(payload))])
  }

  @Test func serverRefusesAnUnmaskedClientFrameWith1002() {
    var server = Self.server()
    let events = Self.feed(
      &server, WebSocketFrame(opcode: .text, payload: [0x61]).serialized(maskingKey: nil))
    #expect(events.count == 1)
    if case .closed(let code, _) = events.first { #expect(code == 1002) } else { Issue.record("\(events)") }
    #expect(server.state == .closed)
    #expect(Self.closeCode(server.takeOutput()) == 1002)
    // Bytes after the failure are ignored.
    #expect(Self.feed(&server, Self.clientFrame(.text, [0x61])).isEmpty)
  }

  @Test func clientRefusesAMaskedServerFrameWith1002() {
    var client = Self.client()
    let events = Self.feed(&client, WebSocketFrame(opcode: .text, payload: [0x61]).serialized(maskingKey: 7))
    #expect(events.count == 1)
    #expect(client.state == .closed)
    let output = client.takeOutput()
    // The client's close frame is masked: decode it with the fixed key.
    #expect(output[0] == 0x88 && output[1] & 0x80 != 0)
    #expect((output[6] ^ 0x37, output[7] ^ 0x00) == (0x03, 0xEA))
  }

  @Test func clientFramesAreMaskedWithTheSuppliedKey() {
    var client = Self.client()
    client.send(.text("Hi"))
    let bytes = client.takeOutput()
    #expect(bytes == [0x81, 0x82, 0x37, 0x00, 0xFA, 0x21, 0x48 ^ 0x37, 0x69 ^ 0x00])
    #expect(!client.hasOutput)
    var server = Self.server()
    #expect(Self.feed(&server, bytes) == [.message(.text("Hi"))])
  }

  @Test func fragmentsAreAssembledWithControlFramesBetweenThem() {
    var server = Self.server()
    var bytes = Self.clientFrame(fin: false, .text, Array("Hel".utf8))
    bytes += Self.clientFrame(.ping, [1, 2])
    bytes += Self.clientFrame(fin: false, .continuation, Array("lo, ".utf8))
    bytes += Self.clientFrame(.pong, [9])
    bytes += Self.clientFrame(.continuation, Array("wörld".utf8))
    let events = Self.feed(&server, bytes)
    #expect(events == [.ping([1, 2]), .pong([9]), .message(.text("Hello, wörld"))])
    #expect(server.takeOutput() == [0x8A, 0x02, 1, 2])
    // A UTF-8 sequence split across fragments is fine: the check runs on the whole message.
    let euro = Array("€".utf8)
    let split =
      Self.clientFrame(fin: false, .text, [euro[0]]) + Self.clientFrame(.continuation, [euro[1], euro[2]])
    #expect(Self.feed(&server, split) == [.message(.text("€"))])
  }

  @Test func pingIsAnsweredWithAPongCarryingItsPayload() {
    var server = Self.server()
    #expect(Self.feed(&server, Self.clientFrame(.ping, Array("abc".utf8))) == [.ping(Array("abc".utf8))])
    #expect(server.takeOutput() == [0x8A, 0x03, 0x61, 0x62, 0x63])
    server.ping([7])
    #expect(server.takeOutput() == [0x89, 0x01, 7])
  }

  @Test(arguments: [
    ("continuation without a start", [UInt8(0x80), 0x80, 0, 0, 0, 0]),
    ("reserved bit", [0xC1, 0x80, 0, 0, 0, 0]),
    ("reserved opcode", [0x83, 0x80, 0, 0, 0, 0]),
    ("reserved control opcode", [0x8B, 0x80, 0, 0, 0, 0]),
    ("fragmented ping", [0x09, 0x80, 0, 0, 0, 0]),
    ("126-byte ping", [0x89, 0xFE, 0, 126]),
    ("64-bit length with top bit", [0x82, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0]),
    ("1-byte close", [0x88, 0x81, 0, 0, 0, 0, 3]),
  ])
  func protocolViolationsCloseWith1002(name: String, bytes: [UInt8]) {
    var server = Self.server()
    let events = Self.feed(&server, bytes)
    #expect(events.count == 1, "\(name)")
    if case .closed(let code, _) = events.first { #expect(code == 1002, "\(name)") }
    #expect(server.state == .closed)
    #expect(Self.closeCode(server.takeOutput()) == 1002, "\(name)")
  }

  @Test func aNewDataFrameInsideAFragmentedMessageIs1002() {
    var server = Self.server()
    let bytes = Self.clientFrame(fin: false, .text, [0x61]) + Self.clientFrame(.binary, [1])
    _ = Self.feed(&server, bytes)
    #expect(Self.closeCode(server.takeOutput()) == 1002)
  }

  @Test func invalidUTF8InATextMessageIs1007() {
    var server = Self.server()
    let events = Self.feed(&server, Self.clientFrame(.text, [0x61, 0xC3, 0x28]))
    #expect(events == [.closed(code: 1007, reason: "a text message that is not UTF-8")])
    #expect(Self.closeCode(server.takeOutput()) == 1007)
    // Binary messages are not checked.
    var other = Self.server()
    #expect(Self.feed(&other, Self.clientFrame(.binary, [0xC3, 0x28])) == [.message(.binary([0xC3, 0x28]))])
  }

  @Test func invalidUTF8InACloseReasonIs1007() {
    var server = Self.server()
    _ = Self.feed(&server, Self.clientFrame(.close, [0x03, 0xE8, 0xFF]))
    #expect(Self.closeCode(server.takeOutput()) == 1007)
  }

  @Test func aMessageOverTheLimitIs1009EvenWhenFragmented() {
    var server = Self.server(max: 10)
    #expect(Self.feed(&server, Self.clientFrame(.binary, Array(repeating: 1, count: 10))).count == 1)
    var fragmented = Self.server(max: 10)
    let bytes =
      Self.clientFrame(fin: false, .binary, Array(repeating: 1, count: 6))
      + Self.clientFrame(.continuation, Array(repeating: 1, count: 5))
    let events = Self.feed(&fragmented, bytes)
    if case .closed(let code, _) = events.last { #expect(code == 1009) } else { Issue.record("\(events)") }
    #expect(Self.closeCode(fragmented.takeOutput()) == 1009)
    // The limit is seen from the header alone: a 64-bit length is refused before its payload arrives.
    var early = Self.server(max: 10)
    let header: [UInt8] = [0x82, 0xFF, 0, 0, 0, 1, 0, 0, 0, 0]
    #expect(Self.feed(&early, header) == [.closed(code: 1009, reason: "message larger than 10 bytes")])
  }

  @Test func maxMessageBytesIsClamped() {
    #expect(WebSocketEndpoint(role: .server, maxMessageBytes: 0).maxMessageBytes == 1)
    #expect(WebSocketEndpoint(role: .server, maxMessageBytes: .max).maxMessageBytes == 1 << 31)
  }

  @Test func peerCloseIsEchoedThenClosed() {
    var server = Self.server()
    let events = Self.feed(&server, Self.clientFrame(.close, [0x0F, 0xA0] + Array("bye".utf8)))
    #expect(events == [.closed(code: 4000, reason: "bye")])
    #expect(server.state == .closed)
    #expect(server.takeOutput() == Self.serverClose(4000))
    // A close without a code is answered with 1000 and reported with no code.
    var other = Self.server()
    #expect(Self.feed(&other, Self.clientFrame(.close, [])) == [.closed(code: nil, reason: "")])
    #expect(other.takeOutput() == Self.serverClose(1000))
  }

  @Test func ourCloseWaitsForThePeersThenCloses() {
    var server = Self.server()
    server.close(code: 1001, reason: "going away")
    #expect(server.state == .closing)
    #expect(server.takeOutput() == Self.serverClose(1001, "going away"))
    // Sends after close are dropped; a message still arriving is delivered.
    server.send(.text("late"))
    #expect(!server.hasOutput)
    #expect(Self.feed(&server, Self.clientFrame(.text, [0x61])) == [.message(.text("a"))])
    let events = Self.feed(&server, Self.clientFrame(.close, [0x03, 0xE9]))
    #expect(events == [.closed(code: 1001, reason: "")])
    #expect(server.state == .closed)
    #expect(!server.hasOutput)
  }

  @Test(arguments: [UInt16(0), 999, 1004, 1005, 1006, 1015, 1016, 2999, 5000])
  func badReceivedCloseCodesAre1002(code: UInt16) {
    #expect(!WebSocketEndpoint.isSendableCloseCode(code))
    var server = Self.server()
    _ = Self.feed(&server, Self.clientFrame(.close, [UInt8(code >> 8), UInt8(code & 0xFF)]))
    #expect(Self.closeCode(server.takeOutput()) == 1002)
  }

  @Test(arguments: [UInt16(1000), 1003, 1007, 1014, 3000, 4999])
  func sendableCloseCodes(code: UInt16) {
    #expect(WebSocketEndpoint.isSendableCloseCode(code))
    var server = Self.server()
    server.close(code: code, reason: "")
    #expect(Self.closeCode(server.takeOutput()) == code)
  }

  @Test func anUnsendableCodeIsSentAs1000AndALongReasonIsCut() {
    var server = Self.server()
    server.close(code: 1005, reason: String(repeating: "é", count: 100))
    let output = server.takeOutput()
    #expect(Self.closeCode(output) == 1000)
    #expect(output[1] == 2 + 122)  // 61 two-byte characters fit in 123 bytes
  }

  @Test func acceptInputIsTheKeyAndTheGUID() {
    // RFC 6455 §1.3's example key.
    #expect(
      WebSocketEndpoint.acceptInput(key: "dGhlIHNhbXBsZSBub25jZQ==")
        == "dGhlIHNhbXBsZSBub25jZQ==258EAFA5-E914-47DA-95CA-C5AB0DC85B11")
  }
}
