import Foundation
import MockServer
import MockServerCLI
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// The real `mockserver` binary run as a child process on a free port, for tests that exercise the
/// shipped program (command line, fixtures loading, logging) rather than the in-process library.
///
/// ```swift
/// let server = try MockServerProcess.launch(arguments: ["--fixtures", "Fixtures"])
/// defer { server.stop() }
/// // … client against server.baseURL …
/// ```
public final class MockServerProcess: @unchecked Sendable {
  // @unchecked: `process` and the pipes are set in init and only read afterwards; Process is
  // thread-safe for terminate/waitUntilExit; what changes later sits behind `Mutex`es.
  private let process: Process
  private let errorPipe: Pipe?
  private let errorOutput = Mutex<[UInt8]>([])
  /// The readers of standard output (drained, so the child never blocks on a full pipe) and standard
  /// error (kept, the newest ``errorOutputLimit`` bytes), once the `listening on` line was read.
  private let readers = Mutex<[PipeReader]>([])
  private let killed = Mutex(false)
  /// Most bytes of standard error kept (the newest).
  static let errorOutputLimit = 1 << 20
  /// `http://HOST:PORT` parsed from the `listening on` line.
  public let baseURL: URL
  /// The port parsed from the `listening on` line.
  public let port: Int

  private init(process: Process, errorPipe: Pipe?, baseURL: URL, port: Int) {
    self.process = process
    self.errorPipe = errorPipe
    self.baseURL = baseURL
    self.port = port
  }

  /// The child's process id (for `/proc/PID` measurements and signals).
  public var processIdentifier: Int32 { process.processIdentifier }

  /// What the process wrote to standard error so far (the last MiB), when it was captured (the default).
  public var standardErrorText: String { String(decoding: errorOutput.withLock { $0 }, as: UTF8.self) }

  /// True when ``stop(timeout:)`` had to send `SIGKILL` because the process did not exit in time.
  public var wasKilled: Bool { killed.withLock { $0 } }

  /// The binary the tests use: `$MOCKSERVER_BINARY`, else `.build/debug/mockserver` or
  /// `.build/release/mockserver` under the current directory, whichever exists (debug first).
  public static func defaultBinary() -> String {
    if let path = ProcessInfo.processInfo.environment["MOCKSERVER_BINARY"] { return path }
    let cwd = FileManager.default.currentDirectoryPath
    for candidate in [".build/debug/mockserver", ".build/release/mockserver"] {
      let path = cwd + "/" + candidate
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return cwd + "/.build/debug/mockserver"
  }

  /// Starts `binary` with `--port 0` (unless `arguments` has a port) plus `arguments`, and waits for its
  /// `listening on http://HOST:PORT` line.
  /// - Parameters:
  ///   - binary: path to the executable (default ``defaultBinary()``).
  ///   - arguments: e.g. `["--fixtures", "Fixtures", "--quiet"]`.
  ///   - timeout: seconds to wait for the line (default 10).
  ///   - standardError: where the child's standard error goes; nil (the default) captures it, readable
  ///     as ``standardErrorText``.
  /// - Throws: ``TestMockServerError/launchFailed(_:)`` when the binary is missing (saying how to build
  ///   it), or with what the process printed when it exits or stays silent.
  public static func launch(
    binary: String = defaultBinary(), arguments: [String] = [], timeout: Double = 10,
    standardError: FileHandle? = nil
  ) throws -> MockServerProcess {
    guard FileManager.default.isExecutableFile(atPath: binary) else {
      throw TestMockServerError.launchFailed(
        "no mockserver binary at \(binary). Build it first with `swift build --product mockserver` "
          + "(it works from a package that depends on MockServer too), or set MOCKSERVER_BINARY to its path")
    }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    var args = arguments
    if !args.contains("--port") && !args.contains("-p") { args += ["--port", "0"] }
    process.arguments = args
    // The server checks every admin answer against its /__admin/openapi.json (docs/admin-api.md).
    var environment = ProcessInfo.processInfo.environment
    environment[AdminResponseCheck.environmentVariable] = "1"
    process.environment = environment
    let out = Pipe()
    let err: Pipe? = standardError == nil ? Pipe() : nil
    process.standardOutput = out
    process.standardError = err ?? standardError
    do {
      try process.run()
    } catch {
      throw TestMockServerError.launchFailed("\(binary): \(error)")
    }
    let deadline = Date().addingTimeInterval(timeout)
    var collected = ""
    let fd = out.fileHandleForReading.fileDescriptor
    while Date() < deadline {
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&pfd, 1, 100) > 0 else {
        if !process.isRunning { break }
        continue
      }
      var buffer = [UInt8](repeating: 0, count: 4096)
      let n = read(fd, &buffer, buffer.count)
      if n <= 0 { break }
      collected += String(decoding: buffer[0..<n], as: UTF8.self)
      if let line = collected.split(separator: "\n").first(where: { $0.hasPrefix("listening on http://") }),
        let url = URL(string: String(line.dropFirst("listening on ".count))), let port = url.port
      {
        // Keep draining stdout in the background so the child never blocks on a full pipe, and keep
        // the newest MiB of standard error.
        let server = MockServerProcess(process: process, errorPipe: err, baseURL: url, port: port)
        var readers = [PipeReader(out.fileHandleForReading) { _ in }]
        if let err {
          readers.append(
            PipeReader(err.fileHandleForReading) { [weak server] data in
              server?.errorOutput.withLock { buffer in
                buffer.append(contentsOf: data)
                if buffer.count > errorOutputLimit { buffer.removeFirst(buffer.count - errorOutputLimit) }
              }
            })
        }
        server.readers.withLock { $0 = readers }
        return server
      }
    }
    _ = terminate(process, timeout: 5)
    var stderr = ""
    if let err {
      // Only what is there now: a grandchild holding the pipe open must not make this wait.
      let fd = err.fileHandleForReading.fileDescriptor
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      var buffer = [UInt8](repeating: 0, count: 65536)
      while poll(&pfd, 1, 0) > 0, case let n = read(fd, &buffer, buffer.count), n > 0 {
        stderr += String(decoding: buffer[0..<n], as: UTF8.self)
      }
    }
    throw TestMockServerError.launchFailed(
      "no 'listening on' line within \(timeout) s; exit status \(process.terminationStatus); output: \(collected) \(stderr)"
    )
  }

  /// True while the process runs.
  public var isRunning: Bool { process.isRunning }

  /// Sends SIGTERM and waits for the process to exit (graceful shutdown). When it has not exited after
  /// `timeout` seconds, sends SIGKILL, says so on standard error and sets ``wasKilled``. Returns its exit
  /// status (for a killed process, the signal number, 9).
  /// - Parameter timeout: seconds to wait after SIGTERM (default 15: the server's own grace is 5 s).
  @discardableResult
  public func stop(timeout: Double = 15) -> Int32 {
    if !MockServerProcess.terminate(process, timeout: timeout) {
      killed.withLock { $0 = true }
      StandardError.line(
        "MockServerProcess: pid \(process.processIdentifier) did not exit \(timeout) s after SIGTERM; sent SIGKILL"
      )
    }
    detachPipes()
    return process.terminationStatus
  }

  /// Waits up to `timeout` seconds for the process to exit on its own (no signal sent). Returns its exit
  /// status, or nil when it is still running.
  public func waitForExit(timeout: Double) -> Int32? {
    guard MockServerProcess.waitForExit(process, timeout: timeout) else { return nil }
    detachPipes()
    return process.terminationStatus
  }

  /// Sends `SIGTERM`, waits up to `timeout` seconds, then sends `SIGKILL` and waits for the exit (a
  /// killed process exits at once; the wait is bounded all the same). Returns false when it had to kill.
  static func terminate(_ process: Process, timeout: Double) -> Bool {
    guard process.isRunning else { return true }
    process.terminate()
    if waitForExit(process, timeout: timeout) { return true }
    kill(process.processIdentifier, SIGKILL)
    _ = waitForExit(process, timeout: 10)
    return false
  }

  /// Polls until `process` has exited (true) or `timeout` seconds passed (false). `Process` has no
  /// wait with a timeout; this is one.
  static func waitForExit(_ process: Process, timeout: Double) -> Bool {
    let deadline = Date().addingTimeInterval(timeout)
    while process.isRunning {
      if Date() >= deadline { return false }
      usleep(10_000)
    }
    // isRunning turns false when the termination is recorded; this returns at once then.
    process.waitUntilExit()
    return true
  }

  /// Waits for the readers to reach the end of the pipes (the process has exited), so that what it
  /// wrote last (such as the log a stopping server flushes) is in ``standardErrorText``. The wait is a
  /// hang guard: a grandchild holding a pipe open must not keep the caller waiting.
  private func detachPipes() {
    for reader in readers.withLock({ $0 }) { reader.waitForEnd(timeout: 5) }
  }

  deinit {
    _ = MockServerProcess.terminate(process, timeout: 15)
  }
}
