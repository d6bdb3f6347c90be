import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 18, against the real binary: WireMock's start flags, what the start and the shutdown say, and
/// log lines a person can read (file labels, structured near misses, binary bodies).
@Suite("WireMock start flags and logs (binary)", .serialized)
struct WireMockFlagTests {
  static func send(_ port: Int, _ text: String) -> String {
    guard let socket = try? RawClient(port: port) else { return "" }
    socket.send(text)
    return socket.readResponse(timeout: 10).text
  }

  @Test func wireMockFlagsLogsAndTheShutdownCount() throws {
    let big = String(repeating: "gzip me ", count: 100)
    let fixtures = try TemporaryFixtures([
      ("log.json", #"{"request":{"method":"GET","url":"/log"},"response":{"status":200,"body":"ok"}}"#),
      ("big.json", stubJSON("/big", body: big)),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--root-dir", fixtures.fixtures, "--bind-address", "127.0.0.1", "--enable-stub-cors",
      "--log-format", "json", "--async-response-enabled", "--disable-banner", "--max-request-journal-entries",
      "3", "--disable-gzip",
      "--no-watch",
    ])
    #expect(status(get(server.port, "/log")) == 200)
    let preflight = WireMockFlagTests.send(
      server.port,
      "OPTIONS /log HTTP/1.1\r\nHost: localhost\r\nOrigin: http://a.test\r\nAccess-Control-Request-Method: GET\r\n\r\n"
    )
    #expect(status(preflight) == 200)
    #expect(preflight.contains("Access-Control-Allow-Origin: http://a.test"))
    let unserved = WireMockFlagTests.send(
      server.port,
      "OPTIONS /nothing HTTP/1.1\r\nHost: localhost\r\nOrigin: http://a.test\r\nAccess-Control-Request-Method: POST\r\n\r\n"
    )
    #expect(status(unserved) == 404)
    let gzip = WireMockFlagTests.send(
      server.port, "GET /big HTTP/1.1\r\nHost: localhost\r\nAccept-Encoding: gzip\r\n\r\n")
    #expect(status(gzip) == 200)
    #expect(!gzip.lowercased().contains("content-encoding"))
    for _ in 0..<3 { _ = get(server.port, "/log") }
    let journal = get(server.port, "/__admin/requests")
    let total = journal.replacingOccurrences(of: " ", with: "").replacingOccurrences(of: "\n", with: "")
    #expect(total.contains(#""meta":{"total":3}"#), "\(journal)")
    let created = WireMockFlagTests.send(
      server.port,
      "POST /__admin/mappings HTTP/1.1\r\nHost: localhost\r\nContent-Length: 55\r\n\r\n"
        + #"{"request":{"url":"/rt"},"response":{"status":200}}    "#)
    #expect(status(created) == 201)
    // No wait for the log's 100 ms flush: the server flushes its log when it stops.
    #expect(server.stop() == 0)
    let log = server.standardErrorText
    #expect(log.components(separatedBy: "--async-response-enabled has no effect").count == 2, "\(log)")
    // The unnamed file stub is labelled by its file.
    #expect(log.contains(#""stub":"mappings/log.json""#), "\(log)")
    // The unserved preflight: a note and the near misses as JSON, not a text blob.
    let line = log.split(separator: "\n").first { $0.contains(#""url":"/nothing""#) }.map(String.init) ?? ""
    #expect(line.contains(#""note":"CORS preflight: no stub"#), "\(line)")
    #expect(line.contains(#""nearMisses":[{"#), "\(line)")
    #expect(log.contains("1 runtime stub(s) and 0 runtime edit(s) of file stubs were not saved"), "\(log)")
  }

  @Test func verboseLogShowsBinaryBodiesAsLengthAndExcerpt() throws {
    let fixtures = try TemporaryFixtures([
      (
        "bin.json",
        #"{"name":"bin","request":{"method":"GET","url":"/bin"},"response":{"status":200,"base64Body":"AAECAwT/"}}"#
      )
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "-v", "--no-watch",
    ])
    #expect(status(get(server.port, "/bin")) == 200)
    #expect(server.stop() == 0)  // flushes the log
    let log = server.standardErrorText
    #expect(log.contains("<6 bytes binary: hex 0001020304ff base64 AAECAwT/>"), "\(log)")
  }

  @Test func startsWithoutAFixturesFolderAndSaysSo() throws {
    let empty = NSTemporaryDirectory() + "mockserver-nofixtures-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: empty) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: MockServerProcess.defaultBinary())
    process.arguments = ["--port", "0", "--no-watch"]
    process.currentDirectoryURL = URL(fileURLWithPath: empty)
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let firstLine = String(decoding: out.fileHandleForReading.availableData, as: UTF8.self)
    #expect(firstLine.hasPrefix("listening on http://"), "\(firstLine)")
    kill(process.processIdentifier, SIGTERM)
    process.waitUntilExit()
    let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(process.terminationStatus == 0)
    #expect(stderr.contains("no Fixtures/ folder"), "\(stderr)")
    #expect(stderr.contains("starting with no stubs"))
  }

  @Test func aMissingBinaryIsNamedWithHowToBuildIt() {
    do {
      _ = try MockServerProcess.launch(binary: "/nonexistent/mockserver")
      Issue.record("launch of a missing binary succeeded")
    } catch {
      #expect("\(error)".contains("swift build --product mockserver"))
    }
  }
}
