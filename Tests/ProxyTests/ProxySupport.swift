import Foundation
import HTTPCore
import MockServer
import MockServerTesting
import Synchronization
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The Python `http.server` upstream of this folder (`upstream.py`), started on a free port.
enum PythonUpstream {
  static var script: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("upstream.py").path
  }

  static func launch() throws -> MockServerProcess {
    try MockServerProcess.launch(binary: "/usr/bin/env", arguments: ["python3", script, "--port", "0"])
  }
}

struct ProxyTestError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}

/// One HTTP exchange with a server on 127.0.0.1 (a fresh connection, 60 s without progress at most).
func exchange(
  _ port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
) throws -> HTTPResponse {
  guard let url = UpstreamURL("http://127.0.0.1:\(port)") else { throw ProxyTestError("bad port \(port)") }
  var fields = HTTPHeaders([("Host", url.hostField)])
  for (name, value) in headers { fields.add(name: name, value: value) }
  let request = HTTPRequest(
    head: HTTPRequestHead(method: HTTPMethod(rawValue: method), target: target, headers: fields), body: body)
  switch UpstreamHTTPClient(timeoutMilliseconds: 60_000, maxBodyBytes: 64 << 20, tls: nil).send(
    request, to: url)
  {
  case .success(let response): return response
  case .failure(let error): throw ProxyTestError("\(method) \(target) on port \(port): \(error)")
  }
}

/// Runs `mockserver ARGS` to the end and returns its exit status and standard output.
func runMockserver(_ arguments: [String]) throws -> (Int32, String) {
  try runToEnd(MockServerProcess.defaultBinary(), arguments)
}

/// Runs the executable at `path` with `arguments` to the end: its exit status and combined output.
func runToEnd(_ path: String, _ arguments: [String]) throws -> (Int32, String) {
  let result = try runProcess(path, arguments, mergingErrors: true)
  return (result.status, result.stdout)
}

/// A stub mapping file's text.
func proxyStub(_ urlPattern: String, to base: String, priority: Int = 5, extra: String = "") -> String {
  #"{"priority":\#(priority),"request":{"urlPattern":"\#(urlPattern)"},"response":{"proxyBaseUrl":"\#(base)"\#(extra)}}"#
}

/// `mockserver record …` (or any serve run) whose whole standard output and error is kept, for the summary
/// printed on exit.
final class RecordingRun: @unchecked Sendable {
  // @unchecked: `process` and `pipe` are set in init and only read afterwards; the output is behind a Mutex.
  private let process: Process
  private let pipe: Pipe
  private let output = OutputBuffer()
  private let reader: PipeReader
  let port: Int

  init(_ arguments: [String]) throws {
    process = Process()
    process.executableURL = URL(fileURLWithPath: MockServerProcess.defaultBinary())
    process.arguments = arguments + ["--port", "0"]
    pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let output = self.output
    reader = PipeReader(pipe.fileHandleForReading) { data in
      output.bytes.withLock { $0.append(contentsOf: data) }
    }
    let deadline = Date().addingTimeInterval(20)
    var found: Int?
    while Date() < deadline, found == nil, process.isRunning {
      let text = String(decoding: output.bytes.withLock { $0 }, as: UTF8.self)
      if let line = text.split(separator: "\n").first(where: { $0.hasPrefix("listening on http://") }),
        let colon = line.lastIndex(of: ":")
      {
        found = Int(line[line.index(after: colon)...])
      } else {
        Thread.sleep(forTimeInterval: 0.05)
      }
    }
    guard let found else {
      process.terminate()
      throw ProxyTestError(
        "no listening line: \(String(decoding: output.bytes.withLock { $0 }, as: UTF8.self))")
    }
    port = found
  }

  /// Everything printed so far.
  var outputText: String { String(decoding: output.bytes.withLock { $0 }, as: UTF8.self) }

  /// SIGINT (Ctrl-C), then waits for the exit: its status and everything printed.
  func interrupt() -> (Int32, String) {
    kill(process.processIdentifier, SIGINT)
    process.waitUntilExit()
    reader.waitForEnd(timeout: 30)
    return (process.terminationStatus, String(decoding: output.bytes.withLock { $0 }, as: UTF8.self))
  }

  /// Waits until the output contains `text` or the process ended (the wait is for an event; its 60 s are a
  /// hang guard, not a bound the test asserts).
  func waitFor(_ text: String) -> Bool {
    let deadline = Date().addingTimeInterval(60)
    while Date() < deadline, process.isRunning {
      if outputText.contains(text) { return true }
      Thread.sleep(forTimeInterval: 0.02)
    }
    return outputText.contains(text)
  }

  /// Sends `signal` and waits for the exit: its status (or the signal number when killed) and the output.
  func stop(with signal: Int32) -> (Int32, String) {
    kill(process.processIdentifier, signal)
    process.waitUntilExit()
    reader.waitForEnd(timeout: 30)
    return (process.terminationStatus, outputText)
  }

  deinit { if process.isRunning { process.terminate() } }
}

/// Bytes appended from a pipe's handler thread.
final class OutputBuffer: Sendable {
  let bytes = Mutex<[UInt8]>([])
}

/// Sends `request` as written on a fresh connection to 127.0.0.1:`port` and reads until the server closes
/// (the request should say `Connection: close`), at most 30 s.
func rawExchange(_ port: Int, _ request: String) throws -> String {
  String(decoding: try RawClient.exchange(port: port, Array(request.utf8), timeout: 30), as: UTF8.self)
}
