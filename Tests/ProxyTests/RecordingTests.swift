import Foundation
import HTTPCore
import MockJSON
import MockServer
import MockServerTesting
import TestSupport
import Testing

/// Recording (issue 15) over real sockets: `mockserver record` in front of the Python upstream, the files it
/// writes checked with `mockserver lint` and served back by a fresh `mockserver`; the admin recording API;
/// `--proxy-all --record-mappings`.
@Suite("Recording and playback")
struct RecordingTests {
  /// Twenty varied requests: JSON, text, binary, gzip, 204, 404, query strings, bodies, a large body, a
  /// chunked answer, and a repeated request whose answer changes.
  static let requests: [(String, String, [(String, String)], [UInt8])] = [
    ("GET", "/json", [], []),
    ("GET", "/text", [], []),
    ("GET", "/binary", [], []),
    ("GET", "/gzip", [("Accept-Encoding", "gzip")], []),
    ("GET", "/empty", [], []),
    ("GET", "/missing", [], []),
    ("GET", "/search?q=alpha", [], []),
    ("GET", "/search?q=beta", [], []),
    ("GET", "/search?q=two%20words&page=2", [], []),
    ("GET", "/counter", [], []),
    ("GET", "/counter", [], []),
    ("GET", "/counter", [], []),
    ("POST", "/echo", [("Content-Type", "application/json")], Array(#"{"name":"x","n":[1,2]}"#.utf8)),
    ("POST", "/echo", [("Content-Type", "text/plain")], Array("plain text body".utf8)),
    ("PUT", "/echo", [("Content-Type", "application/octet-stream")], [0, 1, 2, 255, 254, 0, 10, 13]),
    ("GET", "/json", [], []),
    ("GET", "/big?size=100000", [], []),
    ("GET", "/chunked", [], []),
    ("GET", "/search?q=alpha", [], []),
    ("GET", "/headers", [("X-Trace", "t1")], []),
  ]

  /// Status, the headers that must be replayed (not Date, framing, hop-by-hop, or what content coding
  /// negotiation adds) and the decoded content.
  static func comparable(_ r: HTTPResponse) -> (Int, [String], [UInt8]) {
    // Matched-Stub-Id and Matched-Stub-Name name the recorded stub that answered the replay (WireMock's
    // headers); the upstream did not send them.
    let skipped: Set<String> = [
      "date", "content-length", "transfer-encoding", "connection", "keep-alive", "content-encoding", "vary",
      "matched-stub-id", "matched-stub-name",
    ]
    let headers = r.headers.fields.filter { !skipped.contains($0.name.lowercased()) }
      .map { "\($0.name.lowercased()): \($0.value)" }.sorted()
    var body = r.body
    if r.headers.first("Content-Encoding") == "gzip", let decoded = try? ContentCoding.gzip.decode(body) {
      body = decoded
    }
    return (r.status.code, headers, body)
  }

  @Test func recordStopLintAndReplayGivesIdenticalAnswers() throws {
    let upstream = try PythonUpstream.launch()
    let out = try TemporaryFolder()
    defer { out.remove() }
    try FileManager.default.removeItem(atPath: out.path + "/mappings")
    let recorder = try RecordingRun([
      "record", "--upstream", "http://127.0.0.1:\(upstream.port)", "--out", out.path, "--quiet",
    ])
    var recorded: [HTTPResponse] = []
    for (method, target, headers, body) in Self.requests {
      recorded.append(try exchange(recorder.port, method, target, headers: headers, body: body))
    }
    let (status, output) = recorder.interrupt()
    upstream.stop()
    #expect(status == 0, "\(output)")
    #expect(output.contains("recorded 20 request(s)"), "\(output)")
    #expect(output.contains("wrote \(out.path)/mappings/get-json.json"), "\(output)")
    // The one scenario (the counter's three answers to one request) is named, with why.
    #expect(
      output.contains(
        "note: scenario \"scenario-1-get-counter\": GET /counter got 3 different answers to the same request"),
      "\(output)")
    #expect(output.components(separatedBy: "note: scenario").count == 2, "\(output)")
    // The gzip answer really was compressed upstream, and counter answers changed.
    #expect(recorded[3].headers.first("Content-Encoding") == "gzip")
    #expect(recorded[9].body != recorded[10].body)
    let files = out.files()
    #expect(files.contains { $0.hasPrefix("__files/") }, "\(files)")
    #expect(files.contains("mappings/get-counter.json"), "\(files)")
    let (lintStatus, lintOutput) = try runMockserver(["lint", out.path])
    #expect(lintStatus == 0, "\(lintOutput)")
    #expect(lintOutput.contains("0 errors, 0 warnings"), "\(lintOutput)")
    // Served back with the upstream gone.
    let replay = try MockServerProcess.launch(arguments: ["--fixtures", out.path, "--no-watch", "--quiet"])
    defer { replay.stop() }
    for (i, (method, target, headers, body)) in Self.requests.enumerated() {
      let again = try exchange(replay.port, method, target, headers: headers, body: body)
      let (s1, h1, b1) = Self.comparable(recorded[i])
      let (s2, h2, b2) = Self.comparable(again)
      #expect(s1 == s2, "\(method) \(target): status \(s1) then \(s2)")
      #expect(h1 == h2, "\(method) \(target): headers \(h1) then \(h2)")
      #expect(b1 == b2, "\(method) \(target): \(b1.count) bytes then \(b2.count)")
    }
  }

  /// Each answered exchange is on disk as soon as it was recorded: a recording ended by SIGKILL, SIGTERM or
  /// SIGHUP right after the traffic leaves every exchange written, in files that lint clean and replay the same
  /// answers.
  @Test(arguments: [SIGKILL, SIGTERM, SIGHUP]) func recordingSurvivesTheWayItEnds(signal: Int32) throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let out = try TemporaryFolder()
    defer { out.remove() }
    try FileManager.default.removeItem(atPath: out.path + "/mappings")
    let recorder = try RecordingRun([
      "record", "--upstream", "http://127.0.0.1:\(upstream.port)", "--out", out.path,
    ])
    var recorded: [HTTPResponse] = []
    for (method, target, headers, body) in Self.requests {
      recorded.append(try exchange(recorder.port, method, target, headers: headers, body: body))
    }
    // The progress line is printed after the exchange's files were written.
    #expect(recorder.waitFor("recorded \(Self.requests.count) request(s)"), "\(recorder.outputText)")
    let (status, output) = recorder.stop(with: signal)
    if signal != SIGKILL {
      // SIGTERM and SIGHUP (a closed terminal) end the recording as Ctrl-C does: the summary is printed.
      #expect(status == 0, "\(output)")
      #expect(output.contains("recorded \(Self.requests.count) request(s) as"), "\(output)")
    }
    let (lintStatus, lintOutput) = try runMockserver(["lint", out.path])
    #expect(lintStatus == 0, "\(lintOutput)")
    #expect(lintOutput.contains("0 errors"), "\(lintOutput)")
    let replay = try MockServerProcess.launch(arguments: ["--fixtures", out.path, "--no-watch", "--quiet"])
    defer { replay.stop() }
    for (i, (method, target, headers, body)) in Self.requests.enumerated() where i < 9 {
      let again = try exchange(replay.port, method, target, headers: headers, body: body)
      #expect(Self.comparable(recorded[i]).0 == Self.comparable(again).0, "\(method) \(target)")
      #expect(Self.comparable(recorded[i]).2 == Self.comparable(again).2, "\(method) \(target)")
    }
  }

  @Test func redactionLeavesNoSecretInAnyWrittenFile() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let out = try TemporaryFolder()
    defer { out.remove() }
    let recorder = try RecordingRun([
      "record", "--upstream", "http://127.0.0.1:\(upstream.port)", "--out", out.path, "--quiet",
      "--redact", "token,X-Api-Key", "--match-headers", "Authorization,X-Api-Key,Accept",
    ])
    let secrets = [
      ("Authorization", "Bearer SECRET-AUTH"), ("Cookie", "sid=SECRET-REQUEST-COOKIE"),
      ("X-Api-Key", "SECRET-API-KEY"), ("Proxy-Authorization", "Basic SECRET-PROXY"),
      ("Accept", "application/json"),
    ]
    let secret = try exchange(recorder.port, "GET", "/secret", headers: secrets)
    #expect(String(decoding: secret.body, as: UTF8.self).contains("SECRET-TOKEN-VALUE"))
    _ = try exchange(
      recorder.port, "POST", "/echo", headers: secrets + [("Content-Type", "application/json")],
      body: Array(#"{"a":1,"token":"SECRET-BODY-TOKEN"}"#.utf8))
    // An answer that echoes the credentials sent (/headers) has them scrubbed from its body.
    let echoed = try exchange(recorder.port, "GET", "/headers", headers: secrets)
    #expect(String(decoding: echoed.body, as: UTF8.self).contains("SECRET-AUTH"))
    let (status, output) = recorder.interrupt()
    #expect(status == 0, "\(output)")
    for file in out.files() {
      let text = try String(contentsOfFile: out.path + "/" + file, encoding: .utf8)
      #expect(!text.contains("SECRET"), "\(file) keeps a secret: \(text)")
    }
    #expect(output.contains("value of the Authorization header in GET /headers response body"), "\(output)")
    #expect(output.contains("value of the Cookie header in GET /headers response body"), "\(output)")
    #expect(output.contains("credential value(s) seen"), "\(output)")
    #expect(output.contains("appear in none of the"), "\(output)")
    for said in [
      "Set-Cookie header of GET /secret response", "Authorization header of GET /secret request",
      "X-Api-Key header", "token of GET /secret response body",
    ] {
      #expect(output.contains(said), "output does not say \(said): \(output)")
    }
    #expect(try runMockserver(["lint", out.path]).0 == 0)
    // The redacted stub still answers a request with any credentials.
    let replay = try MockServerProcess.launch(arguments: ["--fixtures", out.path, "--no-watch", "--quiet"])
    defer { replay.stop() }
    let again = try exchange(
      replay.port, "GET", "/secret",
      headers: [("Authorization", "Bearer other"), ("X-Api-Key", "k"), ("Accept", "application/json")])
    #expect(again.status.code == 200)
    #expect(again.headers.first("Set-Cookie") == "REDACTED")
    #expect(try JSONValue.parse(bytes: again.body)["token"]?.stringValue == "REDACTED")
  }

  /// Requests that match alike but got different answers: told apart by a credential header when one is
  /// present in some and absent in others (a client with a token never replays the 401); a scenario only for
  /// the same request answered differently, and with `--no-scenarios` the first answer alone, each said.
  @Test func differentAnswersAreToldApartByCredentialsOrMadeAScenario() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    for noScenarios in [false, true] {
      let out = try TemporaryFolder()
      defer { out.remove() }
      let recorder = try RecordingRun(
        ["record", "--upstream", "http://127.0.0.1:\(upstream.port)", "--out", out.path, "--quiet"]
          + (noScenarios ? ["--no-scenarios"] : []))
      // /headers answers differently with and without Authorization (its body lists the headers sent).
      let withToken = try exchange(
        recorder.port, "GET", "/headers", headers: [("Authorization", "Bearer t-123456")])
      let without = try exchange(recorder.port, "GET", "/headers")
      let counts = try (0..<2).map { _ in try exchange(recorder.port, "GET", "/counter").body }
      let (status, output) = recorder.interrupt()
      #expect(status == 0, "\(output)")
      #expect(
        output.contains(
          "note: GET /headers answered 200 with Authorization and 200 without Authorization: its stubs match "
            + "Authorization by form when present and require it absent otherwise"), "\(output)")
      if noScenarios {
        #expect(
          output.contains(
            "note: GET /counter got 2 different answers to the same request; the first is kept"),
          "\(output)")
      } else {
        #expect(output.contains("note: scenario \"scenario-1-get-counter\""), "\(output)")
      }
      let replay = try MockServerProcess.launch(arguments: ["--fixtures", out.path, "--no-watch", "--quiet"])
      defer { replay.stop() }
      // Another token gets the answer recorded with one; no token gets the other.
      let again = try exchange(
        replay.port, "GET", "/headers", headers: [("Authorization", "Bearer other-token")])
      #expect(again.body != without.body && again.status.code == withToken.status.code)
      #expect(try exchange(replay.port, "GET", "/headers").body == without.body)
      let first = try exchange(replay.port, "GET", "/counter").body
      let second = try exchange(replay.port, "GET", "/counter").body
      #expect(first == counts[0])
      #expect(second == (noScenarios ? counts[0] : counts[1]))
    }
  }

  @Test func adminRecordingAPIStartStopStatusAndSnapshot() throws {
    let upstreamFolder = try TemporaryFolder(files: [
      (
        "users.json",
        #"{"request":{"method":"GET","url":"/api/users"},"response":{"status":200,"jsonBody":[{"id":1}]}}"#
      ),
      (
        "other.json",
        #"{"request":{"method":"GET","urlPath":"/api/other"},"response":{"status":202,"body":"other"}}"#
      ),
    ])
    defer { upstreamFolder.remove() }
    let upstream = try MockServerProcess.launch(arguments: [
      "--fixtures", upstreamFolder.path, "--no-watch", "--quiet",
    ])
    let empty = try TemporaryFolder()
    defer { empty.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", empty.path, "--no-watch", "--quiet"])
    defer { server.stop() }
    func admin(_ method: String, _ path: String, _ body: String = "") throws -> (Int, JSONValue) {
      let r = try exchange(
        server.port, method, path, headers: [("Content-Type", "application/json")], body: Array(body.utf8))
      return (r.status.code, (try? JSONValue.parse(bytes: r.body)) ?? .null)
    }
    #expect(try admin("GET", "/__admin/recordings/status").1["status"]?.stringValue == "NeverStarted")
    #expect(try admin("POST", "/__admin/recordings/start", "{}").0 == 400)
    #expect(try admin("POST", "/__admin/recordings/stop").0 == 400)
    let start = try admin(
      "POST", "/__admin/recordings/start",
      #"{"targetBaseUrl":"http://127.0.0.1:\#(upstream.port)","captureHeaders":{"Accept":{}},"repeatsAsScenarios":true}"#
    )
    #expect(start.0 == 200, "\(start.1)")
    #expect(try admin("GET", "/__admin/recordings/status").1["status"]?.stringValue == "Recording")
    #expect(
      try exchange(server.port, "GET", "/api/users", headers: [("Accept", "application/json")]).status.code
        == 200)
    #expect(
      try exchange(server.port, "GET", "/api/users", headers: [("Accept", "application/json")]).status.code
        == 200)
    #expect(try exchange(server.port, "GET", "/api/other?x=1").status.code == 202)
    let (stopStatus, stopped) = try admin("POST", "/__admin/recordings/stop")
    #expect(stopStatus == 200)
    let mappings = stopped["mappings"]?.arrayValue ?? []
    #expect(mappings.count == 2, "\(stopped)")
    #expect(mappings.first?["request"]?["headers"]?["Accept"]?["equalTo"]?.stringValue == "application/json")
    #expect(mappings.last?["request"]?["url"]?.stringValue == "/api/other?x=1")
    #expect(try admin("GET", "/__admin/recordings/status").1["status"]?.stringValue == "Stopped")
    upstream.stop()
    // Persisted: served without the upstream.
    let users = try exchange(server.port, "GET", "/api/users", headers: [("Accept", "application/json")])
    #expect(users.status.code == 200)
    #expect(String(decoding: users.body, as: UTF8.self) == #"[{"id":1}]"#)
    // And written (persist defaults to true, as in WireMock): a new server on the folder answers from them.
    let written = (try? FileManager.default.contentsOfDirectory(atPath: empty.path + "/mappings")) ?? []
    #expect(written.filter { $0.hasSuffix(".json") }.count == 2, "\(written)")
    let again = try MockServerProcess.launch(arguments: ["--fixtures", empty.path, "--no-watch", "--quiet"])
    defer { again.stop() }
    let fromFiles = try exchange(again.port, "GET", "/api/users", headers: [("Accept", "application/json")])
    #expect(String(decoding: fromFiles.body, as: UTF8.self) == #"[{"id":1}]"#)
    #expect(try exchange(again.port, "GET", "/api/other?x=1").status.code == 202)
    // Snapshot: from the journal's proxied exchanges (none now: nothing was proxied since a reset).
    _ = try admin("DELETE", "/__admin/requests")
    let (snapshotStatus, snapshot) = try admin("POST", "/__admin/recordings/snapshot", #"{"persist":false}"#)
    #expect(snapshotStatus == 200)
    #expect(snapshot["mappings"]?.arrayValue?.count == 0, "\(snapshot)")
  }

  @Test func snapshotTurnsProxiedJournalEntriesIntoStubs() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let folder = try TemporaryFolder(files: [
      ("proxy.json", proxyStub(".*", to: "http://127.0.0.1:\(upstream.port)"))
    ])
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"])
    defer { server.stop() }
    _ = try exchange(server.port, "GET", "/json")
    _ = try exchange(server.port, "GET", "/text")
    let r = try exchange(
      server.port, "POST", "/__admin/recordings/snapshot", headers: [("Content-Type", "application/json")],
      body: Array(#"{"filters":{"urlPathPattern":"/js.*"},"persist":false}"#.utf8))
    #expect(r.status.code == 200)
    let mappings = try JSONValue.parse(bytes: r.body)["mappings"]?.arrayValue ?? []
    #expect(mappings.count == 1)
    #expect(mappings.first?["response"]?["jsonBody"]?["name"]?.stringValue == "Ada")
  }

  @Test func proxyAllWithRecordMappingsServesKnownStubsAndRecordsTheRest() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let folder = try TemporaryFolder(files: [
      ("local.json", #"{"request":{"method":"GET","url":"/local"},"response":{"status":200,"body":"local"}}"#)
    ])
    defer { folder.remove() }
    let run = try RecordingRun([
      "--fixtures", folder.path, "--no-watch", "--quiet", "--proxy-all", "http://127.0.0.1:\(upstream.port)",
      "--record-mappings",
    ])
    #expect(String(decoding: try exchange(run.port, "GET", "/local").body, as: UTF8.self) == "local")
    #expect(try exchange(run.port, "GET", "/text").status.code == 200)
    let (status, output) = run.interrupt()
    #expect(status == 0, "\(output)")
    #expect(folder.files() == ["mappings/get-text.json", "mappings/local.json"], "\(output)")
    #expect(try runMockserver(["lint", folder.path]).0 == 0)
  }
}
