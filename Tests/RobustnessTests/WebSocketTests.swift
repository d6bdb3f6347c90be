import Foundation
import MockJSON
import MockServerTesting
import TestSupport
import Testing

/// WebSocket stubs (`x-websocket`, docs/streaming.md) against the binary, with Python's `websockets`
/// package (PyPI) as an independent RFC 6455 client and hand-written frames for the violations it will not
/// send (Tests/WebSocket/ws_peer.py). What is asserted restates RFC 6455: the opening handshake (§4.2:
/// 400, 426 with `Sec-WebSocket-Version`, `Sec-WebSocket-Accept` from §1.3's example key), masking (§5.1:
/// an unmasked client frame closes with 1002), fragmentation with a control frame between fragments
/// (§5.4), ping/pong (§5.5.2–3), UTF-8 (§8.1: 1007), the size limit (1009), the closing handshake both
/// ways (§7); and WireMock 4's messaging: message mappings with content-pattern triggers and priorities,
/// templated `send` actions over `message.body` and `request`, binary entities.
@Suite("WebSocket stubs against a real client", .serialized)
struct WebSocketTests {
  /// The Tests folder.
  static let tests = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  static let websocketsInstalled =
    (try? runProcess("python3", ["-c", "import websockets"]).status == 0) ?? false
  static let required = ProcessInfo.processInfo.environment["MOCKSERVER_REQUIRE_WEBSOCKETS"] == "1"

  static let chatStub = #"""
    {
      "name": "chat socket",
      "request": { "method": "GET", "urlPath": "/ws/chat" },
      "response": {
        "headers": { "X-Chat-Server": "mock" },
        "x-websocket": {
          "subprotocol": "chat.v1",
          "messages": [
            { "text": "welcome to {{request.query.room}}" },
            { "binary": "AAEC/w==" },
            { "text": "{\"type\":\"ready\"}", "delay": { "timeUnit": "MILLISECONDS", "value": 100 } }
          ],
          "messageMappings": [
            { "name": "echo", "trigger": { "type": "message" },
              "actions": [ { "type": "send", "message": { "body": "echo: {{message.body}}" } } ] },
            { "name": "ping", "priority": 1,
              "trigger": { "type": "message", "message": { "body": { "equalTo": "ping" } } },
              "actions": [ { "type": "send", "message": { "body": "pong" } } ] },
            { "name": "join", "priority": 1,
              "trigger": { "type": "message",
                "message": { "body": { "matchesJsonPath": { "expression": "$.op", "equalTo": "join" } } } },
              "actions": [ { "type": "send",
                "message": { "body": { "data": "{\"joined\":\"{{jsonPath message.body '$.user'}}\"}" } } } ] },
            { "name": "upload", "priority": 1,
              "trigger": { "type": "message", "message": { "body": { "binaryEqualTo": "AAEC/w==" } } },
              "actions": [ { "type": "send", "message": { "body": { "base64Data": "3q2+7w==" } } } ] },
            { "name": "bye", "priority": 1,
              "trigger": { "type": "message", "message": { "body": { "equalTo": "bye" } } },
              "actions": [ { "type": "send", "message": { "body": "see you" } },
                           { "type": "x-close", "code": 4000, "reason": "bye" } ] }
          ]
        }
      }
    }
    """#
  static let plainStub = #"""
    { "priority": 10, "request": { "method": "GET", "urlPath": "/ws/chat" },
      "response": { "status": 200, "body": "plain page" } }
    """#
  static let closingStub = #"""
    { "request": { "urlPath": "/ws/closing" },
      "response": { "x-websocket": {
        "messages": [ { "text": "one" }, { "text": "two", "delay": { "timeUnit": "MILLISECONDS", "value": 50 } } ],
        "closeConnection": true, "closeStatus": { "code": 4002, "reason": "that is all" } } } }
    """#

  /// Runs one scenario of ws_peer.py; its JSON answer.
  static func peer(_ port: Int, _ scenario: String) throws -> JSONObject {
    let run = try runProcess(
      "python3", [tests.path + "/WebSocket/ws_peer.py", String(port), scenario])
    #expect(run.status == 0, "\(scenario): \(run.stdout) \(run.stderr)")
    return try JSONValue.parse(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).objectValue
      ?? JSONObject()
  }

  static func withServer(_ body: (Int) throws -> Void) throws {
    let fixtures = try TemporaryFixtures([
      ("chat.json", chatStub), ("plain.json", plainStub), ("closing.json", closingStub),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--max-websocket-message-bytes", "1024",
    ])
    defer { _ = server.stop() }
    try body(server.port)
  }

  @Test(.enabled(if: websocketsInstalled || required, "python3 -m pip install websockets"))
  func chatStubAnswersAsTheFormatSays() throws {
    try Self.withServer { port in
      let chat = try Self.peer(port, "chat")
      #expect(chat["subprotocol"] == .string("chat.v1"))
      #expect(chat["headers"]?["X-Chat-Server"] == .string("mock"))
      #expect(
        chat["open"]
          == .array([.string("welcome to lobby"), .string("AAEC/w=="), .string(#"{"type":"ready"}"#)]))
      // Priorities: "ping" and "bye" beat the catch-all echo; templated replies; a binary entity; a
      // fragmented message (a ping between its fragments) assembled before matching.
      #expect(
        chat["replies"]
          == .array([
            .string("echo: hello"), .string("pong"), .string(#"{"joined":"ann"}"#), .string("3q2+7w=="),
            .string("echo: fragmented"), .string("see you"),
          ]))
      #expect(chat["pong"] == .bool(true))
      #expect(chat["close"] == .array([.number(JSONNumber(4000)), .string("bye")]))
      // The subprotocol is sent only when offered (RFC 6455 §4.2.2).
      #expect(try Self.peer(port, "no-subprotocol")["subprotocol"] == .null)
    }
  }

  @Test(.enabled(if: websocketsInstalled || required, "python3 -m pip install websockets"))
  func handshakeAndPlainRequests() throws {
    try Self.withServer { port in
      // RFC 6455 §1.3's example: key dGhlIHNhbXBsZSBub25jZQ== → s3pPLMBiTxaQ9kYGzzhZRbK+xOo=.
      let head = try Self.peer(port, "accept")["head"]?.stringValue ?? ""
      #expect(head.hasPrefix("HTTP/1.1 101 Switching Protocols\r\n"))
      #expect(head.contains("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"))
      #expect(head.contains("Upgrade: websocket\r\n") && head.contains("Connection: Upgrade\r\n"))
      // A plain GET to the same URL goes to the other stub.
      let plain = try KnownDefectTests.send(port, "GET", "/ws/chat")
      #expect(plain.hasPrefix("HTTP/1.1 200") && plain.hasSuffix("plain page"))
      let upgrade = ["Upgrade: websocket", "Connection: Upgrade"]
      let key = "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="
      let wrongVersion = try KnownDefectTests.send(
        port, "GET", "/ws/chat", upgrade + [key, "Sec-WebSocket-Version: 8"])
      #expect(wrongVersion.hasPrefix("HTTP/1.1 426"))
      #expect(wrongVersion.contains("Sec-WebSocket-Version: 13\r\n"))
      let noKey = try KnownDefectTests.send(port, "GET", "/ws/chat", upgrade + ["Sec-WebSocket-Version: 13"])
      #expect(noKey.hasPrefix("HTTP/1.1 400"))
      let shortKey = try KnownDefectTests.send(
        port, "GET", "/ws/chat", upgrade + ["Sec-WebSocket-Key: AAAA", "Sec-WebSocket-Version: 13"])
      #expect(shortKey.hasPrefix("HTTP/1.1 400"))
      // The journal has the handshake as a 101.
      #expect(
        try eventually {
          try KnownDefectTests.send(port, "GET", "/__admin/requests").replacingOccurrences(of: " ", with: "")
            .contains(#""status":101"#)
        })
    }
  }

  @Test(.enabled(if: websocketsInstalled || required, "python3 -m pip install websockets"))
  func violationsAndClosingHandshakes() throws {
    try Self.withServer { port in
      for (scenario, code) in [("unmasked", 1002), ("utf8", 1007), ("too-large", 1009)] {
        let answer = try Self.peer(port, scenario)
        #expect(answer["close"] == .number(JSONNumber(code)), "\(scenario): \(answer)")
        #expect(answer["eof"] == .bool(true), "\(scenario): TCP closes after the close frame")
        // Server frames are never masked (RFC 6455 §5.1).
        #expect(answer["masked"]?.arrayValue?.allSatisfy { $0 == .bool(false) } == true)
      }
      let clientClose = try Self.peer(port, "client-close")
      #expect(clientClose["received"] == .array([.number(JSONNumber(4001))]))
      let serverClose = try Self.peer(port, "server-close")
      #expect(serverClose["messages"] == .array([.string("one"), .string("two")]))
      #expect(serverClose["close"] == .array([.number(JSONNumber(4002)), .string("that is all")]))
    }
  }
}
