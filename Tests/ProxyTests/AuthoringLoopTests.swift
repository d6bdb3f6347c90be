import Foundation
import HTTPCore
import MockJSON
import MockServer
import MockServerTesting
import TestSupport
import Testing

/// The fixture-authoring loop of docs/recording.md, end to end against the binary and a small JSON API
/// (`authoring_upstream.py`: pagination, an item by id, a create with `Location`, PUT, DELETE, a bearer-protected
/// endpoint, a 404, gzip, a PNG, volatile headers, text, XML and a slow endpoint): record a scripted traffic,
/// lint, replay it three times, verify against the unchanged provider and a drifted one, export a pact and
/// have Pact's own verifier (pact-python) judge it against both; no file written anywhere holds the token or
/// a cookie value.
@Suite("Fixture authoring loop", .serialized)
struct AuthoringLoopTests {
  static let token = "Bearer tok-7f9c2e1a5b3d4c6e8f0a"
  static let otherToken = "Bearer tok-other-0b1c2d3e4f"
  static let cookie = "session=ck-91b2c3d4e5f6a7b8"

  /// The scripted traffic: 25 requests, authenticated and not.
  static let traffic: [(String, String, [(String, String)], [UInt8])] = [
    ("GET", "/api/items?page=1&per_page=2", [("Accept", "application/json")], []),
    ("GET", "/api/items?page=2&per_page=2", [("Accept", "application/json")], []),
    ("GET", "/api/items?page=3&per_page=2", [("Accept", "application/json")], []),
    ("GET", "/api/items/1", [], []),
    ("GET", "/api/items/2", [("Authorization", token)], []),
    ("GET", "/api/items/999", [], []),
    (
      "POST", "/api/items", [("Content-Type", "application/json")],
      Array(#"{"name":"Thingamajig","price":4.5,"tags":["new"]}"#.utf8)
    ),
    (
      "PUT", "/api/items/2", [("Content-Type", "application/json")],
      Array(#"{"name":"Gadget 2","price":13}"#.utf8)
    ),
    ("DELETE", "/api/items/3", [], []),
    ("GET", "/api/me", [("Authorization", token)], []),
    ("GET", "/api/me", [], []),
    ("GET", "/api/me", [("Authorization", token), ("Cookie", cookie)], []),
    ("GET", "/api/stats", [("Accept-Encoding", "gzip")], []),
    ("GET", "/api/avatar.png", [], []),
    ("GET", "/api/notes.txt", [], []),
    ("GET", "/api/feed.xml", [("Accept", "application/xml")], []),
    ("GET", "/api/slow", [], []),
    ("GET", "/api/search?q=g", [], []),
    ("GET", "/api/search?q=zzz", [], []),
    ("GET", "/api/items?page=1&per_page=2", [("Accept", "application/json")], []),
    ("GET", "/api/items/1", [("Cookie", cookie)], []),
    ("GET", "/api/me", [("Authorization", otherToken)], []),
    ("GET", "/api/me", [], []),
    ("GET", "/api/items/4", [], []),
    ("GET", "/api/stats", [], []),
  ]

  static var upstreamScript: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
      "authoring_upstream.py"
    )
    .path
  }

  static var pactVerifier: String {
    URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .appendingPathComponent("ContractsTests/Pact/verify.py").path
  }

  static func upstream(drift: String = "") throws -> MockServerProcess {
    try MockServerProcess.launch(
      binary: "/usr/bin/env", arguments: ["python3", upstreamScript, "--port", "0", "--drift", drift])
  }

  /// Status, content type (its media type) and the decoded content.
  static func answer(_ r: HTTPResponse) -> (Int, String, [UInt8]) {
    var body = r.body
    if let coding = r.headers.first("Content-Encoding").flatMap(ContentCoding.init(fieldValue:)),
      coding != .identity, let decoded = try? coding.decode(body)
    {
      body = decoded
    }
    let type = r.headers.first("Content-Type").map { String($0.prefix { $0 != ";" }).lowercased() } ?? ""
    return (r.status.code, type, body)
  }

  /// The methods and paths the upstream received since the last call (which forgets them).
  static func seen(_ upstream: MockServerProcess) throws -> [String] {
    let reply = try exchange(upstream.port, "GET", "/__seen?clear=1")
    return try JSONValue.parse(bytes: reply.body).arrayValue?.compactMap(\.stringValue) ?? []
  }

  @Test func recordLintReplayVerifyAndExportAgainstTheProvider() throws {
    let provider = try Self.upstream()
    defer { provider.stop() }
    let out = try TemporaryFolder()
    defer { out.remove() }
    try FileManager.default.removeItem(atPath: out.path + "/mappings")
    let reports = try TemporaryFolder()
    defer { reports.remove() }

    // 1. Record.
    let recorder = try RecordingRun([
      "record", "--upstream", "http://127.0.0.1:\(provider.port)", "--out", out.path,
    ])
    var recorded: [HTTPResponse] = []
    var cookieValues: [String] = [String(Self.cookie.split(separator: "=")[1])]
    for (method, target, headers, body) in Self.traffic {
      let response = try exchange(recorder.port, method, target, headers: headers, body: body)
      recorded.append(response)
      for value in response.headers.values("Set-Cookie") {
        let pair = value.prefix { $0 != ";" }
        if let eq = pair.firstIndex(of: "=") { cookieValues.append(String(pair[pair.index(after: eq)...])) }
      }
    }
    let (status, output) = recorder.interrupt()
    #expect(status == 0, "\(output)")
    #expect(output.contains("recorded \(Self.traffic.count) request(s)"), "\(output)")
    // The real answers were what the test expects of the provider.
    #expect(recorded.map(\.status.code).filter { $0 == 401 }.count == 2)
    #expect(recorded[12].headers.first("Content-Encoding") == "gzip")
    #expect(recorded[6].status.code == 201 && recorded[6].headers.first("Location") != nil)
    // The bearer endpoint is told apart by the token's presence, not made a scenario, and the summary
    // says so; the redaction summary was checked on the files.
    #expect(
      output.contains("GET /api/me answered 200 with Authorization and 401 without Authorization"),
      "\(output)")
    #expect(!output.contains("scenario \""), "\(output)")
    #expect(output.contains("appear in none of the"), "\(output)")

    // 2. Lint.
    let (lintStatus, lintOutput) = try runMockserver(["lint", out.path])
    #expect(lintStatus == 0, "\(lintOutput)")
    #expect(lintOutput.contains("0 errors"), "\(lintOutput)")

    // 3. Replay the same traffic three times: the same status, content type and content bytes.
    let replay = try MockServerProcess.launch(arguments: ["--fixtures", out.path, "--no-watch", "--quiet"])
    for pass in 1...3 {
      for (i, (method, target, headers, body)) in Self.traffic.enumerated() {
        let again = Self.answer(try exchange(replay.port, method, target, headers: headers, body: body))
        let before = Self.answer(recorded[i])
        #expect(
          again.0 == before.0,
          "pass \(pass), \(method) \(target) \(headers): status \(before.0) then \(again.0)")
        #expect(again.1 == before.1, "pass \(pass), \(method) \(target): type \(before.1) then \(again.1)")
        #expect(
          again.2 == before.2,
          "pass \(pass), \(method) \(target): \(before.2.count) bytes then \(again.2.count)")
      }
    }
    replay.stop()

    // 4. Verify against the unchanged provider: no drift, and only safe methods reach it.
    _ = try Self.seen(provider)
    let junit = reports.path + "/verify.xml"
    let (verifyStatus, verifyOutput) = try runMockserver([
      "verify", "--upstream", "http://127.0.0.1:\(provider.port)", "--fixtures", out.path,
      "--header", "Authorization: \(Self.token)", "--junit", junit,
    ])
    #expect(verifyStatus == 0, "\(verifyOutput)")
    let sent = try Self.seen(provider)
    #expect(!sent.isEmpty)
    #expect(
      sent.allSatisfy { $0.hasPrefix("GET ") || $0.hasPrefix("HEAD ") || $0.hasPrefix("OPTIONS ") }, "\(sent)"
    )
    #expect(sent.contains("GET /api/me"), "\(sent)")
    for method in ["POST", "PUT", "DELETE"] {
      #expect(verifyOutput.contains("\(method) changes the provider's data"), "\(verifyOutput)")
    }

    // 5. Export a pact; Pact's verifier accepts it against the provider.
    let pact = reports.path + "/pact.json"
    let (exportStatus, exportOutput) = try runMockserver([
      "export", "pact", "--consumer", "ItemsApp", "--provider", "ItemsAPI", "--fixtures", out.path, "--out",
      pact,
    ])
    #expect(exportStatus == 0, "\(exportOutput)")
    let (pactStatus, pactOutput) = try runToEnd(
      "/usr/bin/env", ["python3", Self.pactVerifier, "ItemsAPI", "http://127.0.0.1:\(provider.port)", pact])
    #expect(pactStatus == 0, "\(pactOutput)")

    // 6. A field added by the provider is no drift.
    let added = try Self.upstream(drift: "add")
    let (addedStatus, addedOutput) = try runMockserver([
      "verify", "--upstream", "http://127.0.0.1:\(added.port)", "--fixtures", out.path,
      "--header", "Authorization: \(Self.token)",
    ])
    added.stop()
    #expect(addedStatus == 0, "\(addedOutput)")

    // 7. A renamed field and a changed status are drift, named; Pact's verifier refuses the pact too.
    let drifted = try Self.upstream(drift: "rename,status")
    defer { drifted.stop() }
    let (driftStatus, driftOutput) = try runMockserver([
      "verify", "--upstream", "http://127.0.0.1:\(drifted.port)", "--fixtures", out.path,
      "--header", "Authorization: \(Self.token)",
    ])
    #expect(driftStatus == 1, "\(driftOutput)")
    #expect(
      driftOutput.contains("$.name: in the fixture, missing from the provider's answer"), "\(driftOutput)")
    #expect(driftOutput.contains("found 410"), "\(driftOutput)")
    let (renamedPact, renamedOutput) = try runToEnd(
      "/usr/bin/env", ["python3", Self.pactVerifier, "ItemsAPI", "http://127.0.0.1:\(drifted.port)", pact])
    #expect(renamedPact != 0, "\(renamedOutput)")

    // 8. No file written anywhere in the loop holds the token or a cookie value.
    let secrets = [Self.token, Self.otherToken].map { String($0.dropFirst("Bearer ".count)) } + cookieValues
    #expect(cookieValues.count > 2, "the provider set cookies: \(cookieValues)")
    for folder in [out, reports] {
      for file in folder.files() {
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder.path + "/" + file)))
        for secret in secrets {
          #expect(bytes.firstRange(of: Array(secret.utf8)) == nil, "\(file) holds \(secret)")
        }
      }
    }
  }
}
