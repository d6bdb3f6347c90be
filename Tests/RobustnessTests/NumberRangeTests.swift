import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Numbers from fixtures, the admin API and sampling are range-checked where they
/// enter, so no arithmetic on them traps (the server died with SIGILL on the first request).
@Suite("Robustness: number ranges", .serialized)
struct NumberRangeTests {
  static let hugeDelay = stubJSON("/huge", extra: #","fixedDelayMilliseconds":20000000000000"#)

  /// The admin API refuses an out-of-range delay with a located error, and the server lives on.
  @Test func adminAPIRefusesOutOfRangeDelays() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let bodies = [
      NumberRangeTests.hugeDelay,
      stubJSON("/huge", extra: #","chunkedDribbleDelay":{"numberOfChunks":2,"totalDuration":1e300}"#),
      stubJSON("/huge", extra: #","delayDistribution":{"type":"uniform","lower":0,"upper":1e19}"#),
      stubJSON("/huge", extra: #","delayDistribution":{"type":"lognormal","median":10,"sigma":1000}"#),
    ]
    for body in bodies {
      let socket = try RawClient(port: server.port)
      socket.send(
        "POST /__admin/mappings HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
          + "Content-Length: \(body.utf8.count)\r\n\r\n\(body)")
      let response = socket.readResponse().text
      #expect(status(response) == 422, "\(body) -> \(response)")
      #expect(response.contains("\"pointer\"") && response.contains("/response/"), "not located: \(response)")
      #expect(status(get(server.port, "/huge")) == 404)
    }
    #expect(status(get(server.port, "/fast")) == 200)
    #expect(server.isRunning)
  }

  /// `mockserver lint` reports the file and JSON path of an out-of-range delay (it passed it).
  @Test func lintRefusesOutOfRangeDelays() throws {
    let fixtures = try TemporaryFixtures([("huge.json", NumberRangeTests.hugeDelay)])
    defer { fixtures.remove() }
    let lint = try runProcess(MockServerProcess.defaultBinary(), ["lint", fixtures.fixtures])
    let output = lint.stderr
    #expect(lint.status == 1)
    #expect(
      output.contains(
        "mappings/huge.json: $.response.fixedDelayMilliseconds: expected a whole number in 0...86400000"),
      "\(output)")
  }

  /// A lognormal distribution with the largest sigma allowed samples delays of any size: they are
  /// clamped, so a hundred requests in flight do not kill the server (about one in eight overflowed).
  @Test func sampledDelaysAreClamped() throws {
    let fixtures = try TemporaryFixtures([
      ("fast.json", stubJSON("/fast")),
      (
        "wild.json",
        stubJSON("/wild", extra: #","delayDistribution":{"type":"lognormal","median":1000,"sigma":20}"#)
      ),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop(timeout: 5) }
    var waiting: [RawClient] = []
    for _ in 0..<100 {
      let socket = try RawClient(port: server.port)
      socket.send("GET /wild HTTP/1.1\r\nHost: localhost\r\n\r\n")
      waiting.append(socket)
    }
    #expect(eventually(timeout: 10) { status(get(server.port, "/fast", timeout: 2)) == 200 })
    usleep(300_000)
    #expect(server.isRunning)
    #expect(status(get(server.port, "/fast")) == 200)
    waiting.removeAll()
  }
}
