import Foundation
import HTTPCore

@testable import MockServer

/// Answers `tls=BOOL subject=SUBJECT path=PATH` (subject `-` without a client certificate); `/big/N`
/// sends N bytes.
struct TLSInfoResponder: HTTPResponder {
  func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    let path = request.head.rawPath
    let parts = path.split(separator: "/")
    if parts.first == "big", parts.count == 2, let n = Int(parts[1]) {
      return .respond(status: .ok, body: [UInt8](repeating: 97, count: n))
    }
    let text = "tls=\(context.isTLS) subject=\(context.clientCertificateSubject ?? "-") path=\(path)"
    return .respond(status: .ok, body: Array(text.utf8))
  }
}

/// A temporary directory removed at deinit.
final class TemporaryDirectory {
  let path: String
  init() throws {
    path = (NSTemporaryDirectory() as NSString).appendingPathComponent("tls-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }
  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// Writes `text` to `name` in the directory and returns the path.
  func write(_ name: String, _ text: String) throws -> String {
    let file = (path as NSString).appendingPathComponent(name)
    try text.write(toFile: file, atomically: true, encoding: .utf8)
    return file
  }
}

/// The outcome of a child process.
struct ProcessResult {
  var status: Int32
  var stdout: String
  var stderr: String
}

/// Runs `arguments` (first = program, looked up in PATH) and returns its status and output.
func runProcess(_ arguments: [String]) throws -> ProcessResult {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
  process.arguments = arguments
  let out = Pipe()
  let err = Pipe()
  process.standardOutput = out
  process.standardError = err
  try process.run()
  // Read stderr concurrently so neither pipe fills up and blocks the child.
  let errData = LockedData()
  let reader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
  reader.start()
  let outData = out.fileHandleForReading.readDataToEndOfFile()
  process.waitUntilExit()
  while !errData.isSet { usleep(1000) }
  return ProcessResult(
    status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
    stderr: String(decoding: errData.value, as: UTF8.self))
}

/// Data handed from a reader thread.
final class LockedData: @unchecked Sendable {
  private let lock = NSLock()
  private var data: Data?
  func set(_ d: Data) { lock.withLock { data = d } }
  var isSet: Bool { lock.withLock { data != nil } }
  var value: Data { lock.withLock { data ?? Data() } }
}

/// `curl -sS --max-time 10 ARGS URL`.
func curl(_ arguments: [String]) throws -> ProcessResult {
  try runProcess(["curl", "-sS", "--max-time", "10"] + arguments)
}

/// Starts a server with the plain listener and an HTTPS listener using `tls`, for one test.
func withHTTPSServer<T>(
  tls: TLSServerContext, configure: (inout ServerConfiguration) -> Void = { _ in },
  responder: HTTPResponder = TLSInfoResponder(), _ body: (HTTPServer, Int) async throws -> T
) async throws -> T {
  try await withServer(configure: configure, responder: responder) { server in
    let port = try server.addHTTPSListener(port: 0, context: tls)
    return try await body(server, port)
  }
}

/// A self-signed localhost certificate, its context, and the certificate written to a file.
struct LocalhostTLS {
  let directory: TemporaryDirectory
  let root: CertificateAndKey
  let context: TLSServerContext
  let certificatePath: String

  init() throws {
    directory = try TemporaryDirectory()
    root = try CertificateFactory.makeSelfSigned()
    context = try TLSServerContext(
      certificateChainPEM: root.certificatePEM, privateKeyPEM: root.privateKeyPEM)
    certificatePath = try directory.write("localhost.pem", root.certificatePEM)
  }
}
