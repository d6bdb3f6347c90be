import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A client that does not read cannot make the server hold memory without bound.
@Suite("Robustness: back-pressure and slow readers", .serialized)
struct BackPressureTests {
  /// A client pipelines requests and never reads: the server stops reading it once its unsent output or
  /// unparsed input passes a bound (memory grew by about 1 MB per MB sent: +324 MB for 300 MB).
  @Test func pipeliningWithoutReadingIsBounded() throws {
    let fixtures = try TemporaryFixtures([
      ("fast.json", stubJSON("/fast", body: String(repeating: "f", count: 512)))
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(
      arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--no-journal"])
    defer { server.stop() }
    let pid = server.processIdentifier
    let before = ProcStat.residentBytes(pid)
    let socket = try RawClient(port: server.port)
    // 1 KiB requests: the kernel alone may buffer 32 MB of input (tcp_rmem), and each request is then
    // answered by a debug build; 39-byte requests made that 800,000 answers and over a minute of reading.
    let head = "GET /fast HTTP/1.1\r\nHost: localhost\r\nX-Padding: "
    let request = head + String(repeating: "p", count: 1024 - head.utf8.count - 4) + "\r\n\r\n"
    let requestSize = request.utf8.count
    let batch = [UInt8](String(repeating: request, count: 256).utf8)
    var sent = 0
    var lastProgress = Date()
    // Up to 256 MB, until the server has taken nothing for 2 s.
    var offset = 0  // within the batch: a partial send goes on where it stopped
    while sent < 256 << 20, Date().timeIntervalSince(lastProgress) < 2 {
      let n = socket.sendNow(Array(batch[offset...]))
      offset = (offset + n) % batch.count
      if n > 0 {
        sent += n
        lastProgress = Date()
      } else {
        usleep(10_000)
      }
    }
    usleep(300_000)
    let growth = ProcStat.residentBytes(pid) - before
    #expect(growth < 64 << 20, "RSS grew by \(growth >> 20) MiB after \(sent >> 20) MiB pipelined and unread")
    #expect(sent < 256 << 20, "the server read all \(sent >> 20) MiB without answers being read")
    // The client reads now: everything it sent is answered. No overall deadline (answering hundreds of
    // thousands of requests in a debug build on a loaded machine took over 60 s): the reading stops when
    // the server sends nothing for 30 s, which only a stalled connection does.
    let requests = sent / requestSize
    var reader = IdenticalResponseCounter()
    while reader.count < requests {
      let (bytes, end) = socket.read(timeout: 30) { !$0.isEmpty }
      reader.consume(bytes)
      if end.closed || bytes.isEmpty { break }
    }
    #expect(
      reader.malformed == 0, "\(reader.malformed) answer(s) were not 200 responses of the first one's size")
    #expect(reader.count == requests)
  }

  /// 20 clients ask for a 4 MB response and never read it: with a 500 ms idle timeout, a write that makes
  /// no progress for that long closes the connection (they were held past five times the timeout, with
  /// their responses' memory).
  @Test func stalledWritesCloseAfterTheIdleTimeout() throws {
    let big = String(repeating: "b", count: 4 << 20)
    let fixtures = try TemporaryFixtures([("big.json", stubJSON("/big", body: big))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(
      arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--idle-timeout-ms", "500"])
    defer { server.stop() }
    let pid = server.processIdentifier
    // Sockets, not all descriptors: Dispatch opens three of its own the first time the server schedules
    // on it, which may be during this test (seen: "3 connection(s) still open" on a loaded machine).
    let baseline = ProcStat.openSockets(pid)
    var clients: [RawClient] = []
    for _ in 0..<20 {
      let socket = try RawClient(port: server.port)
      socket.setReceiveBuffer(4096)
      socket.send("GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n")
      clients.append(socket)
    }
    #expect(eventually(timeout: 10) { ProcStat.openSockets(pid) >= baseline + 20 })
    // Closed by the server (the sweep runs every 250 ms; 30 s is a bound for a loaded machine only).
    #expect(
      eventually(timeout: 30) { ProcStat.openSockets(pid) <= baseline },
      "\(ProcStat.openSockets(pid) - baseline) connection(s) still open")
  }
}

/// Counts answers that are all alike (same stub): learns the size from the first, then checks that each
/// later one starts where expected with the same status line, without making strings per answer.
private struct IdenticalResponseCounter {
  private(set) var count = 0
  private(set) var malformed = 0
  private var size: Int?
  private var statusLine: [UInt8] = []
  private var pending: [UInt8] = []

  mutating func consume(_ bytes: [UInt8]) {
    pending += bytes
    if size == nil {
      guard RawClient.responseCount(pending) >= 1, let end = RawClient.headEnd(pending, from: 0) else {
        return
      }
      let head = String(decoding: pending[..<end], as: UTF8.self).lowercased()
      let length =
        head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
        .flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
      size = end + 4 + length
      statusLine = Array(pending[..<(pending.firstIndex(of: 13) ?? 0)])
      if !head.hasPrefix("http/1.1 200 ") { malformed += 1 }
    }
    guard let size else { return }
    var index = 0
    while pending.count - index >= size {
      if !pending[index..<(index + statusLine.count)].elementsEqual(statusLine) { malformed += 1 }
      count += 1
      index += size
    }
    pending.removeFirst(index)
  }
}
