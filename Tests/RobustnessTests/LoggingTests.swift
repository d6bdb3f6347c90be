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
    for _ in 0..<5 {
      #expect(status(get(server.port, "/log")) == 200)
      usleep(150_000)  // past the logger's 100 ms flush
    }
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
    usleep(300_000)
    let before = ProcStat.residentBytes(pid)
    var answered = 0
    for _ in 0..<1500 {
      socket.send(request)
      answered += socket.countResponses(1)
    }
    usleep(300_000)
    let after = ProcStat.residentBytes(pid)
    #expect(answered == 1500)
    let growth = after - before
    #expect(growth < 48 << 20, "RSS grew by \(growth >> 20) MiB with standard error unread")
    #expect(server.stop() == 0)
    #expect(!server.wasKilled)
  }
}
