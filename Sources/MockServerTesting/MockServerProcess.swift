import Foundation

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
  // thread-safe for terminate/waitUntilExit.
  private let process: Process
  private let errorPipe: Pipe
  /// `http://HOST:PORT` parsed from the `listening on` line.
  public let baseURL: URL
  /// The port parsed from the `listening on` line.
  public let port: Int

  private init(process: Process, errorPipe: Pipe, baseURL: URL, port: Int) {
    self.process = process
    self.errorPipe = errorPipe
    self.baseURL = baseURL
    self.port = port
  }

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
  /// - Throws: ``TestMockServerError/launchFailed(_:)`` with what the process printed when it exits or
  ///   stays silent.
  public static func launch(
    binary: String = defaultBinary(), arguments: [String] = [], timeout: Double = 10
  ) throws -> MockServerProcess {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: binary)
    var args = arguments
    if !args.contains("--port") && !args.contains("-p") { args += ["--port", "0"] }
    process.arguments = args
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
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
        // Keep draining stdout in the background so the child never blocks on a full pipe.
        out.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
        err.fileHandleForReading.readabilityHandler = { handle in _ = handle.availableData }
        return MockServerProcess(process: process, errorPipe: err, baseURL: url, port: port)
      }
    }
    process.terminate()
    process.waitUntilExit()
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    throw TestMockServerError.launchFailed(
      "no 'listening on' line within \(timeout) s; exit status \(process.terminationStatus); output: \(collected) \(stderr)"
    )
  }

  /// True while the process runs.
  public var isRunning: Bool { process.isRunning }

  /// Sends SIGTERM and waits for the process to exit (graceful shutdown). Returns its exit status.
  @discardableResult
  public func stop() -> Int32 {
    if process.isRunning { process.terminate() }
    process.waitUntilExit()
    detachPipes()
    return process.terminationStatus
  }

  private func detachPipes() {
    (process.standardOutput as? Pipe)?.fileHandleForReading.readabilityHandler = nil
    errorPipe.fileHandleForReading.readabilityHandler = nil
  }

  deinit {
    if process.isRunning {
      process.terminate()
      process.waitUntilExit()
    }
  }
}
