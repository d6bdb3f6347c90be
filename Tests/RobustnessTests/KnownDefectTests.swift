import Foundation
import HTTPCore
import MockJSON
import MockServerTesting
import NativeSupport
import TestSupport
import Testing

/// Defects once found and fixed stay fixed, each over real sockets against the binary.
@Suite("Fixed defects stay fixed", .serialized)
struct KnownDefectTests {
  /// Sends one request with the given header lines and body; returns the response text.
  static func send(
    _ port: Int, _ method: String, _ path: String, _ headers: [String] = [], body: [UInt8] = []
  ) throws -> String {
    let socket = try RawClient(port: port)
    var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n"
    for line in headers { text += line + "\r\n" }
    text += "Content-Length: \(body.count)\r\n\r\n"
    socket.send(Array(text.utf8) + body)
    return socket.readResponse().text
  }

  /// A `Content-Encoding: gzip` body that does not decode was answered 400 before any stub was tried.
  /// Now it is matched on the bytes as received: no body pattern and `binaryEqualTo` match, a text
  /// matcher does not and its near miss says why.
  @Test func undecodableGzipBodyIsMatchedOnTheBytesAsReceived() throws {
    let fixtures = try TemporaryFixtures([
      ("any.json", #"{"request":{"method":"POST","url":"/any"},"response":{"status":200,"body":"any"}}"#),
      (
        "bytes.json",
        #"{"request":{"method":"POST","url":"/bytes","bodyPatterns":[{"binaryEqualTo":"bm90IGd6aXA="}]},"#
          + #""response":{"status":200,"body":"bytes"}}"#
      ),
      (
        "text.json",
        #"{"request":{"method":"POST","url":"/text","bodyPatterns":[{"equalTo":"not gzip"}]},"#
          + #""response":{"status":200,"body":"text"}}"#
      ),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { server.stop() }
    let gzip = ["Content-Encoding: gzip"]
    let raw = Array("not gzip".utf8)
    let any = try Self.send(server.port, "POST", "/any", gzip, body: raw)
    #expect(status(any) == 200 && any.hasSuffix("any"), "\(any)")
    let empty = try Self.send(server.port, "POST", "/any", gzip)
    #expect(status(empty) == 200, "\(empty)")
    let bytes = try Self.send(server.port, "POST", "/bytes", gzip, body: raw)
    #expect(status(bytes) == 200 && bytes.hasSuffix("bytes"), "\(bytes)")
    let text = try Self.send(server.port, "POST", "/text", gzip, body: raw)
    #expect(status(text) == 404, "\(text)")
    #expect(text.contains("content that does not decode: Content-Encoding gzip"), "\(text)")
    // A body that decodes still matches the text matcher.
    let decoded = try Self.send(
      server.port, "POST", "/text", gzip, body: Zlib.compress(Array("not gzip".utf8), format: .gzip))
    #expect(status(decoded) == 200 && decoded.hasSuffix("text"), "\(decoded)")
  }
}

extension KnownDefectTests {
  /// `--openapi` with `--fixtures` turned hot reload of the folder off without a word. Now a file added
  /// to the folder is served, and the document's stubs stay.
  @Test func openAPIWithFixturesKeepsHotReload() throws {
    let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("ContractsTests/Documents/users.yaml").path
    let fixtures = try TemporaryFixtures([("first.json", stubJSON("/first", body: "first"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--openapi", document, "--fixtures", fixtures.fixtures,
    ])
    defer { server.stop() }
    #expect(status(get(server.port, "/users/1")) == 200)
    #expect(get(server.port, "/first").hasSuffix("first"))
    try stubJSON("/second", body: "second").write(
      toFile: fixtures.fixtures + "/mappings/second.json", atomically: true, encoding: .utf8)
    #expect(
      eventually { get(server.port, "/second").hasSuffix("second") },
      "the added file was not served: \(server.standardErrorText)")
    #expect(status(get(server.port, "/users/1")) == 200, "the document's stubs were dropped by the reload")
    #expect(get(server.port, "/first").hasSuffix("first"))
  }
}

extension KnownDefectTests {
  /// `import openapi` overwrote hand-edited mappings without a word. Now a changed file is kept and
  /// named (exit 1) unless `--force`; unchanged ones are written again.
  @Test func importOpenAPIKeepsChangedFilesUnlessForced() throws {
    let document = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("ContractsTests/Documents/users.yaml").path
    let out = NSTemporaryDirectory() + "mockserver-import-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: out) }
    let (first, firstOutput) = try runBinary(["import", "openapi", document, "--out", out])
    #expect(first == 0, "\(firstOutput)")
    let edited = out + "/mappings/getUser.json"
    let original = try String(contentsOfFile: edited, encoding: .utf8)
    try (original + " ").write(toFile: edited, atomically: true, encoding: .utf8)
    let (again, againOutput) = try runBinary(["import", "openapi", document, "--out", out])
    #expect(again == 1)
    #expect(againOutput.contains("\(edited) differs from what import would write"), "\(againOutput)")
    #expect(againOutput.contains("pass --force"))
    #expect(try String(contentsOfFile: edited, encoding: .utf8) == original + " ")
    let (forced, forcedOutput) = try runBinary(["import", "openapi", document, "--out", out, "--force"])
    #expect(forced == 0, "\(forcedOutput)")
    #expect(try String(contentsOfFile: edited, encoding: .utf8) == original)
  }
}

extension KnownDefectTests {
  /// `--log-format json` mixed plain-text lines (start-up warnings, reloads, shutdown) into the JSON
  /// stream, had no timestamps, and logged an unnamed runtime stub with an empty name.
  @Test func jsonLogFormatWritesOnlyTimestampedJSONLines() throws {
    // A warning at start (a lower-case method) and a runtime stub posted with an empty name.
    let fixtures = try TemporaryFixtures([
      ("warn.json", #"{"request":{"url":"/w","method":"get"},"response":{"status":200}}"#)
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--log-format", "json",
    ])
    let created = try Self.send(
      server.port, "POST", "/__admin/mappings", ["Content-Type: application/json"],
      body: Array(
        #"{"id":"6d6f636b-0000-4000-8000-000000000042","name":"","request":{"url":"/r"},"response":{"status":200}}"#
          .utf8))
    #expect(status(created) == 201, "\(created)")
    #expect(status(get(server.port, "/r")) == 200)
    #expect(status(get(server.port, "/none")) == 404)
    #expect(eventually { server.standardErrorText.contains("/none") })
    #expect(server.stop() == 0)
    let lines = server.standardErrorText.split(separator: "\n")
    #expect(lines.count >= 4, "\(lines)")
    for line in lines {
      let object = try? JSONValue.parse(String(line)).objectValue
      let time = object?["time"]?.stringValue ?? ""
      #expect(
        object != nil && HTTPDate.parseISO8601(time) != nil && time.hasSuffix("Z"),
        "not a JSON line with a time: \(line)")
    }
    let served = lines.first { $0.contains(#""url":"/r""#) } ?? ""
    #expect(served.contains(#""stub":"6d6f636b-0000-4000-8000-000000000042""#), "\(served)")
    #expect(lines.contains { $0.contains("methods are case-sensitive") }, "the start-up warning is missing")
    #expect(lines.contains { $0.contains("shutting down") })
  }
}

extension KnownDefectTests {
  /// An unknown helper under global templating (`{{random 'Name.first_name'}}`, a WireMock extension's)
  /// was served as literal text without a word. Now lint and the start-up report name it with its file
  /// and JSON path, and serving (still the text as written) logs it once per stub.
  @Test func unknownHelpersUnderGlobalTemplatingAreNamed() throws {
    let fixtures = try TemporaryFixtures([
      (
        "random.json",
        #"{"request":{"url":"/name"},"response":{"status":200,"body":"{{random 'Name.first_name'}}"}}"#
      )
    ])
    defer { fixtures.remove() }
    let (code, lint) = try runBinary(["lint", fixtures.fixtures])
    #expect(code == 0, "\(lint)")
    #expect(
      lint.contains("mappings/random.json: $.response.body: warning: 1:3: unknown helper 'random'"), "\(lint)"
    )
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--global-response-templating",
    ])
    defer { server.stop() }
    #expect(
      eventually {
        server.standardErrorText.contains("$.response.body: warning: 1:3: unknown helper 'random'")
      })
    for _ in 0..<3 { #expect(get(server.port, "/name").hasSuffix("{{random 'Name.first_name'}}")) }
    #expect(eventually { server.standardErrorText.contains("served as written") })
    let logged = server.standardErrorText.components(separatedBy: "served as written").count - 1
    #expect(logged == 1, "\(server.standardErrorText)")
  }
}
