import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Writing the log never kills or blocks the server.
@Suite("Robustness: logging", .serialized)
struct LoggingTests {
  static let stub = #"{"request":{"method":"ANY","url":"/log"},"response":{"status":200,"body":"ok"}}"#

  /// Standard error is a pipe whose reader is gone (`2> >(head -c 1)`): every write gets EPIPE. The
  /// server keeps answering (it trapped in `FileHandle.write` on the first flush) and stops with 0.
  @Test func brokenStandardErrorDoesNotKillTheServer() throws {
    let fixtures = try TemporaryFixtures([("log.json", LoggingTests.stub)])
    defer { fixtures.remove() }
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    close(ends[0])
    let writeEnd = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
    let server = try MockServerProcess.launch(
      arguments: ["--fixtures", fixtures.fixtures, "--no-watch"], standardError: writeEnd)
    try writeEnd.close()
    #expect(status(get(server.port, "/log")) == 200)
    // The logger's flush met the broken pipe (its lines are counted as dropped, not a trap).
    #expect(eventually { droppedLogLines(server.port) > 0 })
    for _ in 0..<5 { #expect(status(get(server.port, "/log")) == 200) }
    #expect(server.isRunning)
    #expect(server.stop() == 0)
    #expect(!server.wasKilled)
  }

  /// Standard error is a pipe nobody reads: lines are dropped and counted, memory stays bounded (it
  /// grew by every line logged: 1,500 verbose lines of 64 KiB made about +96 MB), requests are still
  /// answered and the server still stops.
  @Test func unreadStandardErrorKeepsMemoryBounded() throws {
    let fixtures = try TemporaryFixtures([("log.json", LoggingTests.stub)])
    defer { fixtures.remove() }
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer { close(ends[0]) }
    let writeEnd = FileHandle(fileDescriptor: ends[1], closeOnDealloc: true)
    let server = try MockServerProcess.launch(
      arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--no-journal", "--verbose"],
      standardError: writeEnd)
    try writeEnd.close()
    defer { server.stop() }
    let pid = server.processIdentifier
    let body = String(repeating: "x", count: 65536)
    let request = Array("POST /log HTTP/1.1\r\nHost: localhost\r\nContent-Length: 65536\r\n\r\n\(body)".utf8)
    let socket = try RawClient(port: server.port)
    // Warm up, then measure.
    for _ in 0..<50 {
      socket.send(request)
      #expect(socket.countResponses(1) == 1)
    }
    // The pipe is full and lines are being dropped: the buffer is at its bound before measuring.
    #expect(eventually { droppedLogLines(server.port) > 0 })
    let droppedBefore = droppedLogLines(server.port)
    let before = ProcStat.residentBytes(pid)
    var answered = 0
    for _ in 0..<1500 {
      socket.send(request)
      answered += socket.countResponses(1)
    }
    // A flush after the last request has run (it dropped more lines) before measuring.
    #expect(eventually { droppedLogLines(server.port) > droppedBefore })
    let after = ProcStat.residentBytes(pid)
    #expect(answered == 1500)
    let growth = after - before
    #expect(growth < 48 << 20, "RSS grew by \(growth >> 20) MiB with standard error unread")
    #expect(server.stop() == 0)
    #expect(!server.wasKilled)
  }
}

/// `droppedLogLines` of `GET /__admin/health`, or -1 when it cannot be read.
private func droppedLogLines(_ port: Int) -> Int {
  let response = get(port, "/__admin/health")
  guard let start = response.range(of: "\r\n\r\n"),
    let object = try? JSONSerialization.jsonObject(with: Data(response[start.upperBound...].utf8))
      as? [String: Any],
    let dropped = object["droppedLogLines"] as? Int
  else { return -1 }
  return dropped
}
