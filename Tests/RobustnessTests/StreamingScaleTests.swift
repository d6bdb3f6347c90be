import Foundation
import MockServerTesting
import TestSupport
import Testing

/// Issue 45: thousands of open streams on one event loop. The binary runs with one loop (`--threads 1`);
/// Tests/Streaming/many_streams.py opens 2,000 WebSocket connections with Python's `websockets` (an
/// independent RFC 6455 client) and 2,000 event streams at once, checks each got its first message or
/// event, reads the server's RSS per connection, then stops the server with SIGTERM and checks every
/// WebSocket was closed with 1001 and every event stream ended with its last chunk.
@Suite("Streaming at scale", .serialized)
struct StreamingScaleTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  @Test func twoThousandWebSocketsAndTwoThousandEventStreamsOnOneLoop() throws {
    let fixtures = try TemporaryFixtures([
      (
        "ws.json",
        #"{"request":{"method":"GET","url":"/many/ws"},"response":{"x-websocket":{"messages":[{"text":"hi"}]}}}"#
      ),
      (
        "sse.json",
        #"{"request":{"method":"GET","url":"/many/sse"},"response":{"x-sse":{"events":[{"data":"tick"}],"#
          + #""closeConnection":false,"heartbeatMilliseconds":0}}}"#
      ),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--threads", "1", "--no-journal", "--quiet",
      "--max-hold-ms", "600000",
    ])
    defer { _ = server.stop() }
    let run = try runProcess(
      "python3",
      [
        StreamingScaleTests.root.path + "/Tests/Streaming/many_streams.py", String(server.port),
        String(server.processIdentifier),
      ])
    #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
    let result = try JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] ?? [:]
    #expect(result["websockets"] as? Int == 2000 && result["streams"] as? Int == 2000, "\(run.stdout)")
    #expect(result["closedWith1001"] as? Int == 2000, "\(run.stdout)")
    #expect(result["streamsEnded"] as? Int == 2000, "\(run.stdout)")
    // The server stopped by itself after SIGTERM (its graceful shutdown closed every stream).
    #expect(server.waitForExit(timeout: 60) == 0, "\(run.stdout)")
    print(
      "StreamingScaleTests: RSS per WebSocket \(result["rssPerWebSocketBytes"] ?? "?") B, per event stream "
        + "\(result["rssPerStreamBytes"] ?? "?") B")
  }
}
