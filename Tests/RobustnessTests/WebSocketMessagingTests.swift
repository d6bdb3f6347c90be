import Foundation
import MockJSON
import MockServerTesting
import TestSupport
import Testing

/// WireMock 4's messaging, supported as it is (docs/streaming.md, "WireMock 4 messaging"), against the
/// binary with Python's `websockets` package as the client (Tests/WebSocket/messaging_peer.py). The cases
/// restate WireMock's own acceptance tests (wiremock/wiremock, src/test/java/…/wiremock/):
/// `MessageMappingsLoaderAcceptanceTest` (a `message-mappings/` file with one mapping or a
/// `messageMappings` list, channel patterns), `WebsocketHttpTriggerAcceptanceTest` (`http-request`
/// triggers fire whether or not a stub answers, `http-stub` triggers fire for that stub, a broadcast reaches
/// every matching channel), `WebsocketMessageJournalAcceptanceTest` (received and sent events, unmatched
/// messages, count / find / remove / remove-by-metadata, wait and wait-for-count with their partial answer
/// at the deadline, get and remove by id, the journal reset, the channel list, the admin push) — plus ours:
/// hot reload, lint, 404 for a path nothing names unless `--websocket-any-path`.
@Suite("WireMock 4 messaging against a real client", .serialized)
struct WebSocketMessagingTests {
  static var enabled: Bool { WebSocketTests.websocketsInstalled || WebSocketTests.required }

  /// Runs one scenario of messaging_peer.py; its JSON answer.
  static func peer(_ port: Int, _ scenario: String) throws -> JSONObject {
    let run = try runProcess(
      "python3", [WebSocketTests.tests.path + "/WebSocket/messaging_peer.py", String(port), scenario])
    #expect(run.status == 0, "\(scenario): \(run.stdout) \(run.stderr)")
    return try JSONValue.parse(run.stdout.trimmingCharacters(in: .whitespacesAndNewlines)).objectValue
      ?? JSONObject()
  }

  /// Writes `files` (path relative to the fixtures folder, text) into `fixtures`.
  static func write(_ files: [(String, String)], into fixtures: String) throws {
    for (path, text) in files {
      let url = URL(fileURLWithPath: fixtures + "/" + path)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(text.utf8).write(to: url)
    }
  }

  /// WireMock's loader test's shape: a list with channel patterns (one mapping without an id).
  static let multi = #"""
    { "messageMappings": [
      { "name": "Multi message stub 1", "id": "22222222-2222-2222-2222-222222222222",
        "trigger": { "type": "message",
          "channel": { "type": "websocket", "initiatingRequestPattern": { "urlPath": "/ws/multi/1" } },
          "message": { "body": { "equalTo": "Hello multi stub 1" } } },
        "actions": [ { "type": "send", "channelTarget": { "type": "originating" },
          "message": { "body": { "data": "Hello from multi stub 1" } } } ] },
      { "name": "Multi message stub 2",
        "trigger": { "type": "message",
          "channel": { "type": "websocket", "initiatingRequestPattern": { "urlPath": "/ws/multi/2" } },
          "message": { "body": { "equalTo": "Hello multi stub 2" } } },
        "actions": [ { "type": "send", "message": { "body": "Hello from multi stub 2" } } ] } ] }
    """#
  static let httpTriggers = #"""
    { "messageMappings": [
      { "name": "notify", "trigger": { "type": "http-request",
          "requestPattern": { "urlPathPattern": "/api/notify/.*" } },
        "actions": [ { "type": "send", "message": { "body": "notification received" },
          "channelTarget": { "type": "request-initiated", "requestPattern": { "urlPath": "/ws-notifications" } } } ] },
      { "name": "no stub", "trigger": { "type": "http-request", "requestPattern": { "urlPath": "/api/no-stub" } },
        "actions": [ { "type": "send", "message": { "body": "request received" },
          "channelTarget": { "type": "request-initiated", "requestPattern": { "urlPath": "/ws-notifications" } } } ] },
      { "name": "broadcast", "trigger": { "type": "http-stub", "stubId": "22222222-3333-4444-5555-666666666666" },
        "actions": [ { "type": "send", "message": { "body": "broadcast message" },
          "channelTarget": { "type": "request-initiated",
            "requestPattern": { "urlPathPattern": "/ws-broadcast.*" } } } ] } ] }
    """#
  static let httpStubs: [(String, String)] = [
    (
      "mappings/broadcast.json",
      #"{ "id": "22222222-3333-4444-5555-666666666666", "request": { "method": "POST", "urlPath": "/api/broadcast" }, "response": { "status": 200, "body": "Broadcast sent" } }"#
    ),
    (
      "mappings/notify.json",
      #"{ "request": { "method": "GET", "urlPathPattern": "/api/notify/.*" }, "response": { "status": 200, "body": "Notified" } }"#
    ),
  ]

  @Test(.enabled(if: enabled, "python3 -m pip install websockets"))
  func aFolderWrittenForWireMock4RunsUnchanged() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    try Self.write(
      Self.httpStubs + [
        ("message-mappings/multi.json", Self.multi),
        ("message-mappings/triggers/http.json", Self.httpTriggers),
      ], into: fixtures.fixtures)
    let (lintStatus, lint) = try runBinary(["lint", fixtures.fixtures])
    #expect(lintStatus == 0, "\(lint)")
    #expect(lint.contains("5 message stub mappings valid"), "\(lint)")
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { _ = server.stop() }
    let out = try Self.peer(server.port, "wiremock-folder")
    #expect(out["one"] == .string("Hello from multi stub 1"))
    #expect(out["two"] == .string("Hello from multi stub 2"))
    // The same text on the other channel matched nothing there: one matched, one unmatched event.
    #expect(out["matched"] == .array([.bool(false), .bool(true)]))
    #expect(out["notifyStatus"] == .number(JSONNumber(200)))
    #expect(out["notified"] == .string("notification received"))
    #expect(out["broadcastStatus"] == .number(JSONNumber(200)))
    #expect(out["broadcast"] == .array([.string("broadcast message"), .string("broadcast message")]))
    #expect(out["noStubStatus"] == .number(JSONNumber(404)))
    #expect(out["noStub"] == .string("request received"))
    #expect(out["plainGetUnnamed"] == .number(JSONNumber(404)))
    // An upgrade to a path no stub and no mapping names is a 404, never a 101.
    let upgrade = [
      "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
      "Sec-WebSocket-Version: 13",
    ]
    #expect(try KnownDefectTests.send(server.port, "GET", "/ws-unnamed", upgrade).hasPrefix("HTTP/1.1 404"))
    // The ids: as given, or stable ones made from the file and JSON path.
    let listed = try KnownDefectTests.send(server.port, "GET", "/__admin/message-mappings")
    #expect(listed.contains("22222222-2222-2222-2222-222222222222"))
    let body = listed.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    #expect(try JSONValue.parse(body)["meta"]?["total"] == .number(JSONNumber(5)), "\(listed)")
  }

  @Test(.enabled(if: enabled, "python3 -m pip install websockets"))
  func anyPathIsUpgradedWithTheOption() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--websocket-any-path",
    ])
    defer { _ = server.stop() }
    let client = try RawClient(port: server.port)
    _ = client.send(
      "GET /anything/at/all HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
        + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n")
    let read = client.read(timeout: 30) { $0.count >= 4 && Array($0.suffix(4)) == Array("\r\n\r\n".utf8) }
    let head = String(decoding: read.bytes, as: UTF8.self)
    #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
    // A plain GET there is still an ordinary unmatched request.
    #expect(try KnownDefectTests.send(server.port, "GET", "/anything/at/all").hasPrefix("HTTP/1.1 404"))
  }

  @Test(.enabled(if: enabled, "python3 -m pip install websockets"))
  func adminAPIOverLiveChannels() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { _ = server.stop() }
    let out = try Self.peer(server.port, "admin")
    let n = { (k: Int) in JSONValue.number(JSONNumber(k)) }
    #expect(out["created"] == n(201))
    #expect(out["listed"] == .array([.string("admin echo")]))
    #expect(out["foundByMetadata"] == n(1))
    #expect(out["channels"] == n(2))
    #expect(out["channelUrls"] == .array([.string("/live/a"), .string("/live/b")]))
    #expect(out["reply"] == .string("got wait-1 on /live/a"))
    #expect(out["waited"] == .string("wait-1"))
    #expect(out["waitedCount"] == n(2))
    #expect(out["waitedNone"] == .object(JSONObject()))
    #expect(out["partial"] == n(2))
    #expect(out["countOnA"] == n(2))
    #expect(out["eventTypes"] == .array([.string("received"), .string("sent")]))
    #expect(out["receivedMapping"] == .array([.bool(true), .bool(true)]))
    #expect(out["single"] == .array([n(200), .string("wait-1")]))
    #expect(out["unmatched"] == .bool(false))
    #expect(out["removed"] == n(1))
    #expect(out["afterRemove"] == n(0))
    #expect(out["push"] == .array([n(200), n(1), .string("pushed to /live/b")]))
    #expect(out["badPush"]?.arrayValue?.first == n(400))
    #expect(out["badPush"]?.arrayValue?.last?.stringValue?.contains("$.message.body") == true)
    #expect(out["deleteStatus"] == n(200))
    #expect(out["closedWith"] == n(1001))
    #expect(out["deletedChannel"] == n(404))
    #expect(out["removedByMetadata"] == n(2))
    #expect(out["afterReset"] == n(0))
    #expect(out["mappingsAfterReset"] == n(0))
    #expect(out["openAfterReset"] == .bool(true))
    #expect(out["deleteGone"] == n(404))
    #expect(out["badMapping"]?.arrayValue?.first == n(422))
    #expect(out["badMapping"]?.arrayValue?.last?.stringValue?.contains("$.actions[0].channelTarget") == true)
  }

  @Test(.enabled(if: enabled, "python3 -m pip install websockets"))
  func messageMappingsAreHotReloadedAndLinted() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let mapping = { (reply: String) in
      #"{ "trigger": { "type": "message", "channel": { "initiatingRequestPattern": { "urlPath": "/reload/ws" } } }, "actions": [ { "type": "send", "message": { "body": "\#(reply)" } } ] }"#
    }
    try Self.write([("message-mappings/reload.json", mapping("v1"))], into: fixtures.fixtures)
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures])
    defer { _ = server.stop() }
    #expect(try Self.peer(server.port, "reply")["reply"] == .string("v1"))
    try Self.write([("message-mappings/reload.json", mapping("v2"))], into: fixtures.fixtures)
    #expect(
      try eventually {
        try KnownDefectTests.send(server.port, "GET", "/__admin/message-mappings").contains(#""v2""#)
      })
    #expect(try Self.peer(server.port, "reply")["reply"] == .string("v2"))
    // A broken file: the reload fails, the last good mappings keep serving, lint names file and path.
    try Self.write(
      [
        (
          "message-mappings/broken.json",
          #"{ "trigger": { "type": "message" }, "actions": [ { "type": "shout" } ] }"#
        )
      ], into: fixtures.fixtures)
    let (status, lint) = try runBinary(["lint", fixtures.fixtures])
    #expect(status == 1)
    #expect(
      lint.contains(#"message-mappings/broken.json: $.actions[0].type: expected "send" or "x-close""#),
      "\(lint)")
    // The watcher reports the failed reload (the dashboard's state has the last one) and keeps serving.
    #expect(
      try eventually {
        let state = try KnownDefectTests.send(server.port, "GET", "/__admin/dashboard/state")
        return state.contains("message-mappings/broken.json")
      })
    #expect(try Self.peer(server.port, "reply")["reply"] == .string("v2"))
  }

  @Test(.enabled(if: enabled, "python3 -m pip install websockets"))
  func delayedActionsAreBoundedPerConnection() throws {
    let stub = #"""
      { "request": { "urlPath": "/pile" }, "response": { "x-websocket": { "messageMappings": [
        { "actions": [ { "type": "send", "message": { "body": "late" },
          "x-delay": { "timeUnit": "HOURS", "value": 24 } } ] } ] } } }
      """#
    let fixtures = try TemporaryFixtures([("pile.json", stub)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { _ = server.stop() }
    let out = try Self.peer(server.port, "pile-up")
    #expect(out["closed"] == .number(JSONNumber(1013)), "\(out)")
    #expect(out["reason"]?.stringValue?.contains("delayed actions waiting") == true, "\(out)")
    // The server goes on serving.
    #expect(try KnownDefectTests.send(server.port, "GET", "/__admin/health").hasPrefix("HTTP/1.1 200"))
  }

  @Test(.enabled(if: enabled, "python3 -m pip install websockets"))
  func aClientThatDoesNotReadIsClosedNotBuffered() throws {
    let stub = #"{ "request": { "urlPath": "/slow" }, "response": { "x-websocket": {} } }"#
    let fixtures = try TemporaryFixtures([("slow.json", stub)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { _ = server.stop() }
    let out = try Self.peer(server.port, "slow-reader")
    #expect(out["before"] == .number(JSONNumber(1)), "\(out)")
    // Pushed to it while it was open; then the server ended it (more than 16 MiB waited), not buffered 48 MiB.
    #expect((out["messaged"]?.numberValue?.intValue ?? 0) >= 17, "\(out)")
    #expect(out["after"] == .number(JSONNumber(0)), "\(out)")
    #expect(try KnownDefectTests.send(server.port, "GET", "/__admin/health").hasPrefix("HTTP/1.1 200"))
  }

  @Test(.enabled(if: enabled, "python3 -m pip install websockets"))
  func aStubsOwnMappingsWinTiesOverGlobalOnes() throws {
    let stub = #"""
      { "request": { "urlPath": "/reload/ws" }, "response": { "x-websocket": { "messageMappings": [
        { "actions": [ { "type": "send", "message": { "body": "inline {{message.body}}" } } ] } ] } } }
      """#
    let fixtures = try TemporaryFixtures([("inline.json", stub)])
    defer { fixtures.remove() }
    try Self.write(
      [
        (
          "message-mappings/catch.json",
          #"{ "trigger": { "type": "message" }, "actions": [ { "type": "send", "message": { "body": "global" } } ] }"#
        )
      ], into: fixtures.fixtures)
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { _ = server.stop() }
    #expect(try Self.peer(server.port, "reply")["reply"] == .string("inline hi"))
    // RFC 6455 §11.3.1: Sec-WebSocket-Key appears once.
    let upgrade = [
      "Upgrade: websocket", "Connection: Upgrade", "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
      "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version: 13",
    ]
    #expect(try KnownDefectTests.send(server.port, "GET", "/reload/ws", upgrade).hasPrefix("HTTP/1.1 400"))
  }
}
