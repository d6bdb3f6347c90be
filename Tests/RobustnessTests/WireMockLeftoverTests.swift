import Foundation
import MockJSON
import MockServerTesting
import TestSupport
import Testing

/// WireMock compatibility that the case files (Tests/Compatibility/cases) cannot show: refusals, near
/// misses and logs, over real sockets against the binary.
@Suite("WireMock compatibility: refusals, near misses and logs", .serialized)
struct WireMockLeftoverTests {
  /// `"method": {"oneOf": [...]}` and `{"noneOf": [...]}`: a near miss names the set, a malformed set is
  /// refused with its JSON path.
  @Test func methodSetsAreMatchedAndMalformedOnesRefused() throws {
    let fixtures = try TemporaryFixtures([
      ("one.json", #"{"request":{"method":{"oneOf":["GET","PUT"]},"url":"/m"},"response":{"status":200}}"#)
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { server.stop() }
    #expect(status(try KnownDefectTests.send(server.port, "PUT", "/m")) == 200)
    let miss = try KnownDefectTests.send(server.port, "POST", "/m")
    #expect(status(miss) == 404 && miss.contains("oneOf [GET, PUT]"), "\(miss)")
    for (bad, path) in [
      (#"{"oneOf":"GET"}"#, "$.request.method.oneOf"), (#"{"oneOf":[]}"#, "$.request.method.oneOf"),
      (#"{"someOf":["GET"]}"#, "$.request.method"), (#"{"noneOf":["ANY"]}"#, "$.request.method.noneOf[0]"),
    ] {
      let answer = try KnownDefectTests.send(
        server.port, "POST", "/__admin/mappings", ["Content-Type: application/json"],
        body: Array(#"{"request":{"method":\#(bad),"url":"/x"},"response":{"status":200}}"#.utf8))
      #expect(status(answer) == 422 && answer.contains(path), "\(bad): \(answer)")
    }
  }
}

extension WireMockLeftoverTests {
  /// WireMock's switches in their `--name value` form, as WireMock's own start lines write them; the
  /// unknown-command message lists every command.
  @Test func wireMockSwitchesTakeTrueOrFalse() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--root-dir", fixtures.fixtures, "--no-watch", "--disable-banner", "true", "--async-response-enabled",
      "true", "--enable-stub-cors", "false", "--global-response-templating", "true", "--verbose", "true",
    ])
    defer { server.stop() }
    #expect(status(get(server.port, "/fast")) == 200)
    // --enable-stub-cors false: no CORS headers on a stub's answer.
    let socket = try RawClient(port: server.port)
    socket.send("GET /fast HTTP/1.1\r\nHost: localhost\r\nOrigin: http://app.example\r\n\r\n")
    #expect(!socket.readResponse().text.lowercased().contains("access-control-allow-origin"))
    #expect(eventually { server.standardErrorText.contains("--async-response-enabled has no effect") })
    let (code, output) = try runBinary(["--disable-banner=maybe"])
    #expect(code == 2 && output.contains("--disable-banner expects true or false, got 'maybe'"), "\(output)")
    let (unknown, message) = try runBinary(["frobnicate"])
    #expect(unknown == 2)
    for command in ["serve", "lint", "record", "cert", "import", "export", "verify"] {
      #expect(message.contains(command), "\(message)")
    }
  }
}

extension WireMockLeftoverTests {
  /// A `--root-dir` folder without `mappings/` starts with no stubs and says so, as WireMock does
  /// (it was an error without `--allow-empty`); `--allow-empty` stays accepted.
  @Test func folderWithoutMappingsStartsEmptyAndSaysSo() throws {
    let folder = NSTemporaryDirectory() + "mockserver-nomappings-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder + "/__files", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for extra in [[], ["--allow-empty"]] {
      let server = try MockServerProcess.launch(arguments: ["--root-dir", folder, "--no-watch"] + extra)
      defer { server.stop() }
      #expect(status(get(server.port, "/anything")) == 404)
      #expect(
        eventually {
          server.standardErrorText.contains("no mappings/ folder in \(folder): starting with no stubs")
        },
        "\(server.standardErrorText)")
    }
  }
}

extension WireMockLeftoverTests {
  /// `POST /__admin/mappings/remove` by request pattern compares patterns, not JSON text, as WireMock
  /// 2.35.1 does (checked by hand: both stubs below are removed there).
  @Test func removeByRequestPatternComparesPatterns() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { server.stop() }
    let json = ["Content-Type: application/json"]
    func post(_ path: String, _ body: String) throws -> String {
      try KnownDefectTests.send(server.port, "POST", path, json, body: Array(body.utf8))
    }
    #expect(
      status(try post("/__admin/mappings", #"{"request":{"url":"/x2"},"response":{"status":200}}"#)) == 201)
    #expect(
      status(
        try post(
          "/__admin/mappings",
          #"{"request":{"urlPath":"/x3","method":"GET","headers":{"A":{"equalTo":"1"}}},"response":{"status":200}}"#
        )) == 201)
    #expect(status(try post("/__admin/mappings/remove", #"{"request":{"url":"/x2","method":"ANY"}}"#)) == 200)
    #expect(
      status(
        try post(
          "/__admin/mappings/remove",
          #"{"request":{"method":"GET","headers":{"A":{"equalTo":"1","caseInsensitive":false}},"urlPath":"/x3"}}"#
        )) == 200)
    #expect(status(get(server.port, "/x2")) == 404)
    let socket = try RawClient(port: server.port)
    socket.send("GET /x3 HTTP/1.1\r\nHost: localhost\r\nA: 1\r\n\r\n")
    #expect(status(socket.readResponse().text) == 404)
    let invalid = try post("/__admin/mappings/remove", #"{"request":{"url":5}}"#)
    #expect(status(invalid) == 400, "\(invalid)")
  }
}

extension WireMockLeftoverTests {
  /// Journal entries carry `cookies` in WireMock 2.35.1's shape (checked against the jar:
  /// `Cookie: s=a%20b; t=1; t=2` is logged as `{"s": "a%20b", "t": ["1", "2"]}`).
  @Test func journalEntriesCarryCookies() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { server.stop() }
    let socket = try RawClient(port: server.port)
    socket.send("GET /c HTTP/1.1\r\nHost: localhost\r\nCookie: s=a%20b; t=1; t=2\r\n\r\n")
    #expect(status(socket.readResponse().text) == 404)
    let journal = get(server.port, "/__admin/requests")
    let body = String(journal[journal.range(of: "\r\n\r\n")!.upperBound...])
    let request = try JSONValue.parse(body).objectValue?["requests"]?.arrayValue?.first?.objectValue?[
      "request"]
    let cookies = request?.objectValue?["cookies"]
    #expect(cookies == (try JSONValue.parse(#"{"s": "a%20b", "t": ["1", "2"]}"#)), "\(body)")
  }
}

extension WireMockLeftoverTests {
  /// Templating: `list.[-1]` counts from the end (path segments answered nothing), and a `bodyFileName`
  /// chosen by a template works under `--global-response-templating` for a file stub (lint called it a
  /// missing file and the server refused to start).
  @Test func negativeIndexesAndTemplatedBodyFileNames() throws {
    let fixtures = try TemporaryFixtures([
      (
        "last.json",
        #"{"request":{"urlPathPattern":"/t/.*"},"response":{"status":200,"#
          + #""body":"[{{request.pathSegments.[-1]}}|{{request.path.[-2]}}|{{request.pathSegments.[-9]}}]"}}"#
      ),
      (
        "file.json",
        #"{"request":{"urlPathPattern":"/f/.*"},"response":{"status":200,"#
          + #""bodyFileName":"{{request.pathSegments.[1]}}.json"}}"#
      ),
    ])
    defer { fixtures.remove() }
    try FileManager.default.createDirectory(
      atPath: fixtures.fixtures + "/__files", withIntermediateDirectories: true)
    try #"{"file":"a"}"#.write(
      toFile: fixtures.fixtures + "/__files/a.json", atomically: true, encoding: .utf8)
    let (lintCode, lintOutput) = try runBinary(["lint", fixtures.fixtures])
    #expect(lintCode == 0, "\(lintOutput)")
    #expect(
      lintOutput.contains("mappings/file.json: $.response.bodyFileName: warning: a template"), "\(lintOutput)"
    )
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--global-response-templating",
    ])
    defer { server.stop() }
    #expect(get(server.port, "/t/a/b/c").hasSuffix("[c|b|]"))
    #expect(get(server.port, "/f/a").hasSuffix(#"{"file":"a"}"#))
  }
}
