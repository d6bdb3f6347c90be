import Foundation
import MockServer
import MockServerTesting
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// Fetches `url` with URLSession and returns (status, body).
func fetch(_ url: URL, method: String = "GET", headers: [String: String] = [:]) async throws -> (Int, String)
{
  var request = URLRequest(url: url)
  request.httpMethod = method
  for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
  let (data, response) = try await URLSession.shared.data(for: request)
  return ((response as? HTTPURLResponse)?.statusCode ?? 0, String(decoding: data, as: UTF8.self))
}

@Suite("MockServerTesting: in-process server and the real binary")
struct MockServerTestingTests {
  @Test func inProcessStubVerifyReset() async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(
      .get("/api/v1/me").header("Authorization", "Bearer t")
        .willReturn(status: 200, json: #"{"status":"OK","result":{"id":1}}"#))
    let (status, body) = try await fetch(
      server.baseURL.appendingPathComponent("api/v1/me"), headers: ["Authorization": "Bearer t"])
    #expect(status == 200)
    #expect(body == #"{"status":"OK","result":{"id":1}}"#)
    let (missing, _) = try await fetch(server.baseURL.appendingPathComponent("api/v1/me"))
    #expect(missing == 404)
    try server.verify(count: 2, .get("/api/v1/me"))
    try server.verify(count: 1, .get("/api/v1/me").header("Authorization", "Bearer t"))
    #expect(throws: TestMockServerError.self) { try server.verify(count: 5, .get("/api/v1/me")) }
    #expect(server.unmatchedRequests.count == 1)
    server.reset()
    #expect(server.requests.isEmpty)
    let (afterReset, _) = try await fetch(
      server.baseURL.appendingPathComponent("api/v1/me"), headers: ["Authorization": "Bearer t"])
    #expect(afterReset == 404)
  }

  @Test func invalidStubIsRejectedWithTheProblem() throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    #expect(throws: TestMockServerError.self) {
      try server.stub(json: #"{"request":{"method":"GET","urlPath":5}}"#)
    }
  }

  @Test func parallelServersAreIndependent() async throws {
    let a = try TestMockServer.start()
    let b = try TestMockServer.start()
    defer {
      a.stop()
      b.stop()
    }
    #expect(a.port != b.port)
    try a.stub(.get("/x").willReturn(status: 201))
    #expect(try await fetch(a.baseURL.appendingPathComponent("x")).0 == 201)
    #expect(try await fetch(b.baseURL.appendingPathComponent("x")).0 == 404)
  }

  @Test func realBinaryServesTheBundledFixtures() async throws {
    let server = try MockServerProcess.launch(arguments: ["--fixtures", "Fixtures", "--quiet"])
    let (status, body) = try await fetch(
      server.baseURL.appendingPathComponent("api/v1/friends"), headers: ["Authorization": "Bearer demo-token"]
    )
    #expect(status == 200)
    #expect(body.hasPrefix(#"{"status":"OK","result":["#))
    #expect(server.stop() == 0)
    #expect(!server.isRunning)
  }

  @Test func realBinaryRefusesInvalidFixturesWithTheReport() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent("bad-\(UUID())")
    try FileManager.default.createDirectory(
      at: directory.appendingPathComponent("mappings"), withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try Data(#"{"request": {"method": "GET", "urlPath": "/a"}, "response": {"status": "two hundred"}}"#.utf8)
      .write(to: directory.appendingPathComponent("mappings/bad.json"))
    let run = try runProcess(
      MockServerProcess.defaultBinary(), ["--port", "0", "--fixtures", directory.path])
    let report = run.stderr
    #expect(run.status == 1)
    #expect(report.contains("mappings/bad.json: $.response.status: expected"))
  }
}

@Suite("MockServerTesting: asynchronous shutdown")
struct MockServerTestingShutdownTests {
  @Test func shutdownLetsAResponseInFlightFinish() async throws {
    let server = try TestMockServer.start()
    try server.stub(.get("/slow").willReturn(status: 200, json: "{}", delayMilliseconds: 300))
    async let response = fetch(server.baseURL.appendingPathComponent("slow"))
    // In flight: received, its delay running.
    #expect(await eventually(within: .seconds(10)) { server.requests.count == 1 })
    await server.shutdown()
    #expect(try await response.0 == 200)
    await #expect(throws: (any Error).self) {
      _ = try await fetch(server.baseURL.appendingPathComponent("slow"))
    }
  }
}

@Suite("mockserver binary: JSON log lines")
struct BinaryJSONLogTests {
  @Test func everyLogLineIsAJSONObject() async throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: MockServerProcess.defaultBinary())
    process.arguments = ["--port", "0", "--fixtures", "Fixtures", "--log-format", "json", "--no-watch"]
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    var line = ""
    while !line.contains("\n") {
      let data = out.fileHandleForReading.availableData
      if data.isEmpty { break }
      line += String(decoding: data, as: UTF8.self)
    }
    let port = try #require(
      line.split(separator: ":").last.flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) })
    let base = try #require(URL(string: "http://127.0.0.1:\(port)"))
    _ = try await fetch(base.appendingPathComponent("health"))
    _ = try await fetch(base.appendingPathComponent("no/such/stub"))
    // A request the parser rejects.
    let socket = try RawClient(port: port)
    socket.send("GET / HTTP/1.1\r\nHost: a b\r\n\r\n")
    _ = socket.read(timeout: 3)
    // No wait for the log's 100 ms flush: the server flushes its log when it stops, and standard error is
    // read to its end after the exit.
    process.interrupt()
    process.waitUntilExit()
    let lines = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
      .split(separator: "\n").filter {
        $0.hasPrefix("{") || $0.contains("/health") || $0.contains("rejected")
      }
    #expect(lines.count >= 3)
    for l in lines {
      #expect((try? JSONSerialization.jsonObject(with: Data(l.utf8))) is [String: Any], "\(l)")
    }
  }
}
