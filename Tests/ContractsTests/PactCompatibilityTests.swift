import Contracts
import Foundation
import MockJSON
import MockServerTesting
import TestSupport
import Testing

/// Consumer-side request matching as Pact specifies it. The cases in `Pact/compatibility-cases.json`
/// restate, in this project's words, every request-matching scenario of the Pact project's compatibility
/// suite (pact-foundation/pact-compatibility-suite: the V1–V4 `http_consumer`, `http_matching` and
/// `matching_rules` features; each case names its scenario). Each pact is imported with `import pact`'s
/// importer, served, and sent the scenario's request over a socket: the interaction must answer exactly
/// when Pact says the request matches.
@Suite(.serialized) struct PactCompatibilityTests {
  struct Case: Sendable {
    var id: String
    var source: String
    var pact: JSONValue
    var request: JSONValue
    var expectsMatch: Bool
  }

  /// The suite's scenarios, and our own cases for the rules and rule paths the suite has no request
  /// scenario for (`time`, `timestamp`, `combine: OR`, `$.*`, `['a b']`, `[*]` with `min`, numbers in
  /// query and body, path and header rules, XML attributes and text), each checked against Pact's mock
  /// server the same way.
  static let casesFiles = [pactScripts + "/compatibility-cases.json", pactScripts + "/rule-cases.json"]

  static func cases(_ file: String) throws -> [Case] {
    let document = try JSONValue.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: file))))
    return (document["cases"]?.arrayValue ?? []).compactMap { c in
      guard let id = c["id"]?.stringValue, let pact = c["pact"], let request = c["request"] else {
        return nil
      }
      return Case(
        id: id, source: c["source"]?.stringValue ?? "", pact: pact, request: request,
        expectsMatch: c["expect"]?.stringValue == "match")
    }
  }

  /// The case's request as bytes on the wire: raw query, repeated headers in order, exact body.
  static func wire(_ request: JSONValue) -> [UInt8] {
    var target = request["path"]?.stringValue ?? "/"
    if let query = request["query"]?.stringValue { target += "?" + query }
    var body: [UInt8] = []
    if let text = request["body"]?["text"]?.stringValue {
      body = Array(text.utf8)
    } else if let b64 = request["body"]?["base64"]?.stringValue, let data = Data(base64Encoded: b64) {
      body = [UInt8](data)
    }
    var head = "\(request["method"]?.stringValue ?? "GET") \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
    for pair in request["headers"]?.arrayValue ?? [] {
      guard let name = pair.arrayValue?.first?.stringValue, let value = pair.arrayValue?.last?.stringValue
      else {
        continue
      }
      head += "\(name): \(value)\r\n"
    }
    head += "Content-Length: \(body.count)\r\nConnection: close\r\n\r\n"
    return Array(head.utf8) + body
  }

  @Test(arguments: casesFiles) func everyScenarioGivesPactsAnswer(file: String) throws {
    let all = try Self.cases(file)
    #expect(all.count >= 20, "\(file) has its cases")
    let server = try TestMockServer.start()
    defer { server.stop() }
    var disagreements: [String] = []
    for c in all {
      let (mappings, _, _) = try PactImporter.mappings(from: c.pact, file: "\(c.id).json")
      let ids = try mappings.map { try server.stub(json: $0.serialized()) }
      defer { for id in ids { server.removeStub(id: id) } }
      let reply = try RawClient.exchange(port: server.port, Self.wire(c.request), timeout: 30)
      let statusLine = String(decoding: reply.prefix(while: { $0 != 13 }), as: UTF8.self)
      let expected =
        c.pact["interactions"]?.arrayValue?.first?["response"]?["status"]?.numberValue?.intValue ?? 200
      let matched = statusLine.hasPrefix("HTTP/1.1 \(expected) ")
      if matched != c.expectsMatch {
        disagreements.append(
          "\(c.id) (\(c.source)): Pact says \(c.expectsMatch ? "match" : "mismatch"), we answered \(statusLine)"
        )
      }
    }
    #expect(disagreements == [], "\(disagreements.count) of \(all.count) cases differ")
  }

  /// The restated cases are checked against Pact's own mock server (pact-python's Pact FFI): a case whose
  /// `expect` is not what Pact answers would make the test above prove nothing.
  @Test(arguments: casesFiles) func restatedCasesAreWhatPactsMockServerAnswers(file: String) async throws {
    let (status, output) = try await run("python3", [pactScripts + "/reference_match.py", file])
    try #require(status == 0, "reference_match.py failed (run Tests/setup.sh): \(output)")
    let jsonStart = try #require(output.firstIndex(of: "{"))
    let results = try JSONValue.parse(String(output[jsonStart...]))["results"]
    for c in try Self.cases(file) {
      #expect(
        results?[c.id]?["outcome"]?.stringValue == (c.expectsMatch ? "match" : "mismatch"),
        "\(c.id): \(results?[c.id]?["detail"]?.stringValue ?? "no result")")
    }
  }

  /// A GET interaction answers GET only: RFC 9110's HEAD-as-GET applies to hand-written stubs, not to a
  /// contract's method.
  @Test func aGetInteractionDoesNotAnswerHead() throws {
    let pact = try JSONValue.parse(
      #"{"consumer": {"name": "c"}, "provider": {"name": "p"}, "metadata": {"pactSpecification": {"version": "3.0.0"}}, "interactions": [{"description": "get", "request": {"method": "GET", "path": "/thing"}, "response": {"status": 200, "body": "x"}}]}"#
    )
    let server = try TestMockServer.start()
    defer { server.stop() }
    for m in try PactImporter.mappings(from: pact).mappings { try server.stub(json: m.serialized()) }
    let get = try RawClient.exchange(
      port: server.port, Array("GET /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
      timeout: 30)
    #expect(String(decoding: get, as: UTF8.self).hasPrefix("HTTP/1.1 200 "))
    let head = try RawClient.exchange(
      port: server.port, Array("HEAD /thing HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8),
      timeout: 30)
    #expect(String(decoding: head, as: UTF8.self).hasPrefix("HTTP/1.1 404 "))
  }

  /// A rule MockServer cannot honour fails the import with the file, the interaction and the rule's path;
  /// `--lenient` drops it with a warning that says the same.
  @Test func anUnsupportedRuleFailsTheImport() throws {
    let pact = try JSONValue.parse(
      #"{"consumer": {"name": "c"}, "provider": {"name": "p"}, "metadata": {"pactSpecification": {"version": "4.0"}}, "interactions": [{"type": "Synchronous/HTTP", "description": "uses a plugin rule", "request": {"method": "POST", "path": "/x", "body": {"content": {"a": 1}, "contentType": "application/json"}, "matchingRules": {"body": {"$.a": {"combine": "AND", "matchers": [{"match": "protobuf-field"}]}}}}, "response": {"status": 200}}]}"#
    )
    do {
      _ = try PactImporter.mappings(from: pact, file: "team.json")
      Issue.record("expected the import to fail")
    } catch {
      #expect(error.path == "$.interactions[0].request.matchingRules.body['$.a'].matchers[0]")
      #expect(error.message.contains("interaction \"uses a plugin rule\""))
      #expect(error.message.contains("\"protobuf-field\""))
    }
    let (mappings, _, warnings) = try PactImporter.mappings(from: pact, file: "team.json", lenient: true)
    #expect(mappings.count == 1)
    #expect(warnings.count == 1)
    #expect(warnings.first?.contains("team.json: interaction \"uses a plugin rule\"") == true)
  }

  /// V4's `pending`, `comments` and `key` survive an import and an export.
  @Test func v4InteractionFieldsAreWrittenBack() throws {
    let folder = try temporaryFolder("v4-fields")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let pactFile = folder + "/pact.json"
    try Data(
      #"{"consumer": {"name": "c"}, "provider": {"name": "p"}, "metadata": {"pactSpecification": {"version": "4.0"}}, "interactions": [{"type": "Synchronous/HTTP", "key": "k-1", "pending": true, "comments": {"text": ["draft"]}, "description": "d", "request": {"method": "GET", "path": "/d"}, "response": {"status": 204}}]}"#
        .utf8
    ).write(to: URL(fileURLWithPath: pactFile))
    #expect(mockserver("import", "pact", pactFile, "--out", folder) == 0)
    let out = folder + "/out.json"
    #expect(
      mockserver("export", "pact", "--consumer", "c", "--provider", "p", "--fixtures", folder, "--out", out)
        == 0)
    let exported = try JSONValue.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: out))))
    let interaction = try #require(exported["interactions"]?.arrayValue?.first)
    #expect(interaction["pending"] == .bool(true))
    #expect(interaction["key"] == .string("k-1"))
    #expect(interaction["comments"]?["text"]?.arrayValue?.first == .string("draft"))
  }
}

/// Generated mapping files are visible and distinct (issue 41, item 15): two consumers whose names differ
/// only in characters a file name cannot hold get two files, and an operation id like `../x` stays inside
/// the folder as a visible file.
@Suite struct GeneratedFileNameTests {
  @Test func namesThatSanitiseAlikeStayDistinctAndVisible() throws {
    let folder = try temporaryFolder("names")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for consumer in ["a/b", "a?b"] {
      let file = folder + "/\(consumer == "a/b" ? "one" : "two").json"
      try Data(
        (#"{"consumer": {"name": "# + JSONValue.quoted(consumer)
          + #"}, "provider": {"name": "p"}, "interactions": [{"description": "d", "request": {"method": "GET", "path": "/"}, "response": {"status": 200}}]}"#)
          .utf8
      ).write(to: URL(fileURLWithPath: file))
      #expect(mockserver("import", "pact", file, "--out", folder) == 0)
    }
    let names = try FileManager.default.contentsOfDirectory(atPath: folder + "/mappings")
    #expect(names.count == 2, "\(names)")
    #expect(names.allSatisfy { !$0.hasPrefix(".") && !$0.hasPrefix("-") })
    #expect(FixtureFileName.make("../x") == "x-" + String(FixtureFileName.make("../x").suffix(8)))
    #expect(FixtureFileName.make("listPets") == "listPets")
    #expect(FixtureFileName.make("a/b") != FixtureFileName.make("a?b"))
  }
}

/// An OpenAPI document's `$ref`s read files inside its folder only (issue 41, item 10).
@Suite struct OpenAPIReferenceConfinementTests {
  @Test func refsOutsideTheDocumentsFolderAreRefused() throws {
    let root = try temporaryFolder("refs")
    defer { try? FileManager.default.removeItem(atPath: root) }
    let api = root + "/api"
    try FileManager.default.createDirectory(atPath: api, withIntermediateDirectories: true)
    try Data(#"{"type": "string", "example": "top secret"}"#.utf8).write(
      to: URL(fileURLWithPath: root + "/secret.json"))
    try Data(#"{"type": "string", "example": "fine"}"#.utf8).write(
      to: URL(fileURLWithPath: api + "/inside.json"))
    try FileManager.default.createSymbolicLink(
      atPath: api + "/link.json", withDestinationPath: root + "/secret.json")
    func document(_ ref: String) -> String {
      #"{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/a": {"get": {"responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": ""#
        + ref + #""}}}}}}}}}"#
    }
    for (name, ref, allowed) in [
      ("ok.json", "inside.json", true), ("up.json", "../secret.json", false),
      ("link.json", "link.json", false),
    ] {
      let path = api + "/" + name
      try Data(document(ref).utf8).write(to: URL(fileURLWithPath: path))
      do {
        _ = try OpenAPIDocument.load(path: path)
        #expect(allowed, "\(ref) was read")
      } catch {
        #expect(!allowed, "\(ref): \(error)")
        #expect(error.description.contains("inside the document's folder"), "\(error)")
      }
    }
  }
}
