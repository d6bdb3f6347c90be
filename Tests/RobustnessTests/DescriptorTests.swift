import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Out of file descriptors, the server neither spins nor leaves clients hanging.
@Suite("Robustness: file descriptors", .serialized)
struct DescriptorTests {
  /// Runs the binary under `ulimit -n LIMIT` (soft and hard, so the server cannot raise it).
  static func launchLimited(_ limit: Int, _ arguments: [String]) throws -> MockServerProcess {
    try MockServerProcess.launch(
      binary: "/bin/sh",
      arguments: ["-c", "ulimit -n \(limit) && exec \"$0\" \"$@\"", MockServerProcess.defaultBinary()]
        + arguments)
  }

  /// `ulimit -n 64` and 100 connections: `accept` fails with EMFILE. The loop spun at 92 % CPU while new
  /// clients hung; now a client past the limit gets 503 at once, the process stays idle, and once
  /// connections close new ones are served again.
  @Test func descriptorExhaustionRefusesWithoutSpinning() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try DescriptorTests.launchLimited(
      64, ["--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--max-connections", "1000"])
    defer { server.stop() }
    let pid = server.processIdentifier
    #expect(
      eventually(timeout: 10) {
        server.standardErrorText.contains("--max-connections 1000 is above the open-file limit (64)")
      })
    var held: [RawClient] = []
    for _ in 0..<100 { held.append(try RawClient(port: server.port)) }
    // A client past the limit is answered (it hung until a descriptor came free).
    let extra = try RawClient(port: server.port)
    extra.send("GET /fast HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let refused = extra.readResponse(timeout: 10).text
    #expect(status(refused) == 503, "past the descriptor limit: \(refused.debugDescription)")
    // With connections still queued or arriving, the process does not spin.
    for _ in 0..<20 { held.append(try RawClient(port: server.port)) }
    usleep(200_000)
    let before = ProcStat.cpuSeconds(pid)
    usleep(3_000_000)
    let used = ProcStat.cpuSeconds(pid) - before
    #expect(used < 0.4, "the server used \(used) s of CPU in 3 s while out of descriptors")
    held.removeAll()
    #expect(eventually { status(get(server.port, "/fast", timeout: 2)) == 200 })
  }
}
