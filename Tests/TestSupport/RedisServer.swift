import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// Debian's `redis-server` on a free loopback port, without persistence, for the shared-state tests
/// (`make test` installs it: Tests/setup.sh). Started and ready (it answered `PING`) when `init` returns;
/// stopped by ``stop()`` and started again on the same port by ``restart()`` (a store that goes away and
/// comes back empty).
package final class RedisServer: @unchecked Sendable {
  package let port: Int
  private var process: Process?

  /// True when `redis-server` is on the PATH.
  package static var installed: Bool {
    let paths = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":") ?? ["/usr/bin"]
    return paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/redis-server") }
  }

  package init() throws {
    port = freePort()
    try start()
  }

  deinit { stop() }

  /// `redis://127.0.0.1:PORT`.
  package var url: String { "redis://127.0.0.1:\(port)" }

  package func start() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "redis-server", "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
      "--protected-mode", "no",
    ]
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    self.process = process
    guard eventually(timeout: 30, { self.answersPing }) else {
      stop()
      throw RedisServerError(description: "redis-server on port \(port) did not answer PING")
    }
  }

  /// Stops the server and waits for it to exit. SIGKILL: a child of the test process inherits its
  /// blocked signals (SIGTERM among them), and nothing is persisted anyway.
  package func stop() {
    guard let process else { return }
    self.process = nil
    guard process.isRunning else { return }
    kill(process.processIdentifier, SIGKILL)
    _ = eventually(timeout: 30) { !process.isRunning }
  }

  package func restart() throws {
    stop()
    try start()
  }

  /// True when a `PING` on a new connection gets `+PONG`.
  package var answersPing: Bool {
    guard let client = try? RawClient(port: port) else { return false }
    _ = client.send("PING\r\n")
    let reply = client.read(timeout: 2) { $0.contains(10) }.bytes
    return reply.starts(with: Array("+PONG".utf8))
  }
}

package struct RedisServerError: Error, CustomStringConvertible {
  package let description: String
}
