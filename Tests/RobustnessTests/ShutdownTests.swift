import Foundation
import MockServerTesting
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Graceful shutdown on every loop, signals from the first moment, and a
/// process harness that never waits forever.
@Suite("Robustness: shutdown and signals", .serialized)
struct ShutdownTests {
  static let stubs = [
    ("fast.json", stubJSON("/fast")),
    ("slow.json", stubJSON("/slow", body: "slow", extra: #","fixedDelayMilliseconds":2000"#)),
    ("slower.json", stubJSON("/slower", body: "slower", extra: #","fixedDelayMilliseconds":8000"#)),
  ]

  /// `--threads 2`: a delayed response in flight on one loop finishes although the other loop has
  /// only idle connections (that loop was counted as drained twice, so the server stopped at once and
  /// cut the response: 8 of 8 trials).
  @Test func sigtermWithTwoLoopsFinishesEveryResponseInFlight() throws {
    let fixtures = try TemporaryFixtures(ShutdownTests.stubs)
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(
      arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--threads", "2"])
    defer { server.stop() }
    // Idle keep-alive connections: with 8 of them, each loop almost surely holds some.
    var idle: [RawClient] = []
    for _ in 0..<8 {
      let socket = try RawClient(port: server.port)
      socket.send("GET /fast HTTP/1.1\r\nHost: localhost\r\n\r\n")
      #expect(status(socket.readResponse().text) == 200)
      idle.append(socket)
    }
    let slow = try RawClient(port: server.port)
    slow.send("GET /slow HTTP/1.1\r\nHost: localhost\r\n\r\n")
    try awaitInFlight("/slow", port: server.port)
    kill(server.processIdentifier, SIGTERM)
    let response = slow.readResponse(timeout: 20).text
    #expect(status(response) == 200, "the delayed response was cut: \(response.debugDescription)")
    #expect(response.hasSuffix("slow"))
    #expect(server.waitForExit(timeout: 30) == 0)
    #expect(!server.standardErrorText.contains("still busy"))
    withExtendedLifetime(idle) {}
  }

  /// A response longer than the grace is cut, the exit status is still 0, and the log says how many.
  @Test func responsesBeyondTheGraceAreCutAndCounted() throws {
    let fixtures = try TemporaryFixtures(ShutdownTests.stubs)
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(
      arguments: [
        "--fixtures", fixtures.fixtures, "--no-watch", "--threads", "2", "--shutdown-grace-ms", "300",
      ])
    defer { server.stop() }
    let slower = try RawClient(port: server.port)
    slower.send("GET /slower HTTP/1.1\r\nHost: localhost\r\n\r\n")
    try awaitInFlight("/slower", port: server.port)
    kill(server.processIdentifier, SIGTERM)
    #expect(server.waitForExit(timeout: 30) == 0)
    #expect(
      server.standardErrorText.contains("1 connection(s) still busy after the 300 ms grace were closed"),
      "\(server.standardErrorText)")
  }

  /// Waits until the journal lists a request for `path`: the server has read it and is in its delay
  /// (a fixed sleep lost the race on a loaded machine: the signal came before the request was read).
  private func awaitInFlight(_ path: String, port: Int) throws {
    let listed = eventually(timeout: 30) { get(port, "/__admin/requests").contains("\"url\": \"\(path)\"") }
    if !listed { throw RobustnessError("the server never journalled \(path)") }
  }

  /// SIGTERM sent right after the `listening on` line stops the server every time (once 5 in 30
  /// were ignored, the line came before the handlers; later still 1–2 in 300, Dispatch signal sources
  /// registering asynchronously). 300 starts, two at a time; a start fails the test only by not
  /// exiting (the bound below is for a hung process, not a speed requirement).
  @Test func sigtermRightAfterReadinessIsNeverLost() throws {
    try Self.signalTrials(afterOneRequest: false)
  }

  /// The same after one request was served (the first request starts the loop's lazily made parts).
  @Test func sigtermAfterTheFirstRequestIsNeverLost() throws {
    try Self.signalTrials(afterOneRequest: true)
  }

  /// SIGINT right after readiness too (Ctrl-C), fewer times: it takes the same path as SIGTERM.
  @Test func sigintRightAfterReadinessIsNeverLost() throws {
    try Self.signalTrials(afterOneRequest: false, signal: SIGINT, trials: 20)
  }

  static func signalTrials(afterOneRequest: Bool, signal: Int32 = SIGTERM, trials: Int = 300) throws {
    let fixtures = try TemporaryFixtures(ShutdownTests.stubs)
    defer { fixtures.remove() }
    let lost = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: 2) { lane in
      for trial in stride(from: lane, to: trials, by: 2) {
        do {
          let server = try MockServerProcess.launch(
            arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--quiet"], timeout: 60)
          if afterOneRequest, status(get(server.port, "/fast", timeout: 60)) != 200 {
            lost.withLock { $0.append("trial \(trial): /fast was not answered") }
          }
          kill(server.processIdentifier, signal)
          if server.waitForExit(timeout: 60) != 0 {
            lost.withLock {
              $0.append("trial \(trial): no exit after the signal: \(server.standardErrorText)")
            }
            server.stop(timeout: 5)
          }
        } catch {
          lost.withLock { $0.append("trial \(trial): \(error)") }
        }
      }
    }
    let failures = lost.withLock { $0 }
    #expect(failures.isEmpty, "\(failures.count) of \(trials): \(failures.prefix(5).joined(separator: "\n"))")
  }

  /// `stop()` never waits forever: a process that does not obey SIGTERM (here: stopped) gets SIGKILL
  /// after the bound, and the harness says so.
  @Test func stopEscalatesToSIGKILL() throws {
    let fixtures = try TemporaryFixtures(ShutdownTests.stubs)
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    kill(server.processIdentifier, SIGSTOP)
    let status = server.stop(timeout: 1)
    #expect(server.wasKilled)
    #expect(status == SIGKILL)
    #expect(!server.isRunning)
  }
}
