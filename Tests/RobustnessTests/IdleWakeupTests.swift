import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// An idle server sleeps: no timer wakes it while it has no connection and logs nothing (it woke 14 times
/// a second: a 100 ms log-flush timer and a 250 ms connection sweep that ran with no connection open).
@Suite("Robustness: an idle server is not woken", .serialized)
struct IdleWakeupTests {
  /// Voluntary context switches of every thread of `pid` (each wait that ended: a wakeup).
  static func wakeups(_ pid: Int32) -> Int {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    return tasks.reduce(0) { total, task in
      guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
      else { return total }
      let line = status.split(separator: "\n").first { $0.hasPrefix("voluntary_ctxt_switches:") }
      return total
        + (line.flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0)
    }
  }

  @Test func noWakeupsAfterTheLastConnectionCloses() throws {
    let fixtures = try TemporaryFixtures([
      ("idle.json", #"{"request":{"method":"GET","url":"/idle"},"response":{"status":200,"body":"ok"}}"#)
    ])
    defer { fixtures.remove() }
    // The default log level: every request writes a line, so the log flush is exercised too.
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { server.stop() }
    do {
      let socket = try RawClient(port: server.port)
      for _ in 0..<3 {
        socket.send(Array("GET /idle HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        #expect(socket.countResponses(1) == 1)
      }
    }
    // The connection's close, its last sweep and the log flush happen within a second of the last
    // request; then the process must stay asleep. The timers it had would have woken it 28 times in the
    // 2 s measured; 4 leaves room for a thread of the runtime ending.
    usleep(1_000_000)
    let before = Self.wakeups(server.processIdentifier)
    usleep(2_000_000)
    let after = Self.wakeups(server.processIdentifier)
    #expect(before > 0, "no thread statistics read from /proc")
    #expect(after - before <= 4, "\(after - before) wakeups in 2 s of idleness")
    #expect(server.isRunning)
  }
}
