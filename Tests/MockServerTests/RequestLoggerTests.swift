import Foundation
import TestSupport
import Testing

@testable import MockServer

#if canImport(Glibc)
  import Glibc
#endif

/// The logger flushes a batch once, some time after its first line, and retries while standard error is
/// full; nothing is scheduled while no line is written. Deadlines here are 10 s: only a flush that never
/// happens misses them.
@Suite("Request logger: batches flushed on demand, retried while the pipe is full")
struct RequestLoggerTests {
  /// Reads from `fd` until `done` holds for what was read or 10 s pass; returns the bytes read.
  static func read(_ fd: Int32, until done: (String) -> Bool) -> String {
    var text = ""
    let deadline = Date().addingTimeInterval(10)
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while !done(text), Date() < deadline {
      var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&p, 1, 100) > 0 else { continue }
      let n = Glibc.read(fd, &chunk, chunk.count)
      if n <= 0 { break }
      text += String(decoding: chunk[0..<n], as: UTF8.self)
    }
    return text
  }

  @Test func linesReachTheOutputWithoutARepeatingTimer() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer { close(ends[0]) }
    do {
      let logger = RequestLogger(level: .normal, output: ends[1])
      logger.line("one")
      #expect(Self.read(ends[0]) { $0.hasSuffix("one\n") } == "one\n")
      logger.line("two")
      logger.line("three")
      #expect(Self.read(ends[0]) { $0.hasSuffix("three\n") } == "two\nthree\n")
      #expect(logger.pendingBytes == 0)
    }
    close(ends[1])
  }

  /// A pipe of one page nobody reads for a while: lines past the buffer are dropped; once the reader
  /// drains it, every kept line arrives, then the line that says how many were lost (the retry runs
  /// without a new line being written).
  @Test func aFullPipeIsRetriedUntilItDrains() throws {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    defer { close(ends[0]) }
    _ = fcntl(ends[1], 1031, 4096)  // F_SETPIPE_SZ (Linux), not imported by Glibc
    _ = fcntl(ends[1], F_SETFL, fcntl(ends[1], F_GETFL) | O_NONBLOCK)
    do {
      let logger = RequestLogger(level: .normal, bufferLimit: 4096, output: ends[1])
      // 32 lines of 128 bytes fill the buffer and the pipe; the report of the dropped ones does not fit.
      let line = String(repeating: "x", count: 127)
      for _ in 0..<400 { logger.line(line) }
      #expect(eventually { logger.fullFlushes >= 1 }, "no flush found the pipe full")
      let text = Self.read(ends[0]) { $0.contains("dropped") }
      #expect(text.contains("log line(s) dropped: standard error was not being read"))
      let kept = text.split(separator: "\n").filter { $0 == line }.count
      #expect(kept > 0 && kept + logger.droppedLines == 400, "kept \(kept), dropped \(logger.droppedLines)")
      #expect(logger.pendingBytes == 0)
    }
    close(ends[1])
  }
}
