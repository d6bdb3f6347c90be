import Contracts
import Foundation
import MockJSON
import MockServer
import MockServerCLI
import MockServerTesting
import TestSupport
import Testing

/// Runs `body` on a thread of its own (not the concurrency pool), for blocking work such as the
/// synchronous command line or a child process.
func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
  await withCheckedContinuation { continuation in
    Thread.detachNewThread { continuation.resume(returning: body()) }
  }
}

/// Runs a child process; returns its exit status and combined output.
func run(_ executable: String, _ arguments: [String]) async throws -> (Int32, String) {
  try await offPool {
    Result {
      let result = try runProcess(executable, arguments, mergingErrors: true)
      return (result.status, result.stdout)
    }
  }.get()
}

let pactScripts = SharedDocuments.repositoryRoot.path + "/Tests/ContractsTests/Pact"

/// Writes a pact file with Pact's reference implementation (pact-python; Tests/setup.sh installs it).
func referencePact(_ specification: String) async throws -> String {
  let out = try temporaryFolder("pact-\(specification)")
  let (status, output) = try await run("python3", [pactScripts + "/consumer.py", out, specification])
  try #require(status == 0, "pact-python consumer test failed (run Tests/setup.sh): \(output)")
  return out + "/FriendsApp-FriendsAPI.json"
}

/// Verifies pact files against `base` with Pact's reference verifier.
func referenceVerify(_ base: URL, _ files: [String]) async throws -> (Int32, String) {
  try await run("python3", [pactScripts + "/verify.py", "FriendsAPI", base.absoluteString] + files)
}

@Suite(.serialized) struct PactTests {
  @Test(arguments: ["V2", "V3", "V4"])
  func referencePactImportsAndServesEveryInteraction(specification: String) async throws {
    let pactFile = try await referencePact(specification)
    let pact = try JSONValue.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: pactFile))))
    let fixtures = try temporaryFolder("pact-fixtures")
    defer { try? FileManager.default.removeItem(atPath: fixtures) }
    #expect(mockserver("import", "pact", pactFile, "--out", fixtures) == 0)
    let set = FixtureLoader.load(directory: fixtures)
    #expect(set.problems.map(\.description) == [])
    // Three interactions, two with a provider state: three default stubs and two state copies.
    #expect(set.stubs.count == 5)
    #expect(
      set.stubs.filter { $0.scenarioName == "pact:FriendsAPI" }.compactMap(\.requiredScenarioState).sorted()
        == [
          "no friend 999", "two friends exist",
        ])

    let server = try TestMockServer.start(fixtures: fixtures)
    defer { server.stop() }
    for (k, interaction) in (pact["interactions"]?.arrayValue ?? []).enumerated() {
      let stub = try #require(
        set.stubs.first { $0.metadata?["pact"]?["interaction"]?.numberValue?.intValue == k })
      let example = try #require(stub.metadata?["x-example-request"])
      var headers: [String: String] = [:]
      for m in example["headers"]?.objectValue ?? JSONObject() { headers[m.key] = m.value.stringValue }
      let reply = try await exchange(
        server.baseURL, example["method"]?.stringValue ?? "GET", example["url"]?.stringValue ?? "/",
        headers: headers,
        body: example["body"]?.stringValue)
      #expect(reply.status == interaction["response"]?["status"]?.numberValue?.intValue)
      let expected = interaction["response"]?["body"].map { $0["content"] ?? $0 }
      #expect(try JSONValue.parse(bytes: Array(reply.body)) == expected)
    }
    // The rules became matchers: another token of the right form matches, a Basic one does not.
    let other = try await exchange(
      server.baseURL, "GET", "/api/v1/friends?page=2", headers: ["Authorization": "Bearer other-token"])
    #expect(other.status == 200)
    let wrong = try await exchange(
      server.baseURL, "GET", "/api/v1/friends?page=1", headers: ["Authorization": "Basic abc"])
    #expect(wrong.status == 404)
    let notANumber = try await exchange(
      server.baseURL, "GET", "/api/v1/friends?page=x", headers: ["Authorization": "Bearer t"])
    #expect(notANumber.status == 404)

    // Pact's own verifier accepts our server serving the imported pact.
    let (status, output) = try await referenceVerify(server.baseURL, [pactFile])
    #expect(status == 0, "\(output)")
  }

  @Test func exportedPactIsAcceptedByPactsVerifier() async throws {
    let pactFile = try await referencePact("V3")
    let fixtures = try temporaryFolder("export")
    defer { try? FileManager.default.removeItem(atPath: fixtures) }
    #expect(mockserver("import", "pact", pactFile, "--out", fixtures) == 0)
    // A hand-written stub too: literal request parts only.
    try Data(
      #"{"name": "me", "request": {"method": "GET", "url": "/api/v1/me?lang=en", "headers": {"Accept": {"equalTo": "application/json"}}}, "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "jsonBody": {"id": 1, "tags": ["a"]}}}"#
        .utf8
    ).write(to: URL(fileURLWithPath: fixtures + "/mappings/me.json"))
    let exported = fixtures + "/out/pact.json"
    #expect(
      mockserver(
        "export", "pact", "--consumer", "FriendsApp", "--provider", "FriendsAPI", "--fixtures", fixtures,
        "--out", exported)
        == 0)
    let pact = try JSONValue.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: exported))))
    #expect(pact["metadata"]?["pactSpecification"]?["version"] == .string("4.0"))
    #expect(pact["interactions"]?.arrayValue?.count == 4)
    // An imported interaction's response body rules are written back as they were (not loosened to type,
    // not dropped); a hand-written stub's body is matched by type, as `verify` judges it.
    let original = try JSONValue.parse(bytes: Array(try Data(contentsOf: URL(fileURLWithPath: pactFile))))
    for interaction in original["interactions"]?.arrayValue ?? [] {
      let description = interaction["description"]
      let written = pact["interactions"]?.arrayValue?.first { $0["description"] == description }
      let rules = interaction["response"]?["matchingRules"]?["body"]?.objectValue ?? JSONObject()
      let back = written?["response"]?["matchingRules"]?["body"]?.objectValue ?? JSONObject()
      #expect(Set(back.keys) == Set(rules.keys), "\(description ?? .null)")
      for m in rules.members {
        #expect(back[m.key]?["matchers"] == m.value["matchers"], "\(description ?? .null) \(m.key)")
      }
    }
    let me = pact["interactions"]?.arrayValue?.first { $0["description"] == .string("me") }
    #expect(
      me?["response"]?["matchingRules"]?["body"]?["$"]?["matchers"]?.arrayValue?.first?["match"]
        == .string("type"))

    let server = try TestMockServer.start(fixtures: fixtures)
    defer { server.stop() }
    let (status, output) = try await referenceVerify(server.baseURL, [exported])
    #expect(status == 0, "\(output)")

    // From the journal: only what was exercised.
    server.reset()
    _ = try await exchange(
      server.baseURL, "GET", "/api/v1/me?lang=en", headers: ["Accept": "application/json"])
    _ = try await exchange(server.baseURL, "GET", "/api/v1/friends/999")
    let friends = try await exchange(
      server.baseURL, "GET", "/api/v1/friends?page=1",
      headers: ["Authorization": "Bearer live-secret-4711", "Cookie": "session=live-cookie-4711"])
    #expect(friends.status == 200)
    let fromJournal = fixtures + "/out/journal.json"
    let base = server.baseURL.absoluteString
    let code = await offPool {
      MockServerMain.run(arguments: [
        "export", "pact", "--consumer", "FriendsApp", "--provider", "FriendsAPI", "--from-journal", base,
        "--out", fromJournal,
      ])
    }
    #expect(code == 0)
    let journalPact = try JSONValue.parse(
      bytes: Array(try Data(contentsOf: URL(fileURLWithPath: fromJournal))))
    #expect(
      journalPact["interactions"]?.arrayValue?.compactMap { $0["request"]?["path"]?.stringValue }.sorted()
        == ["/api/v1/friends", "/api/v1/friends/999", "/api/v1/me"])
    // The token the client sent is never written; the pact's own rule stands for it.
    let journalText = try String(contentsOfFile: fromJournal, encoding: .utf8)
    #expect(!journalText.contains("live-secret-4711") && !journalText.contains("live-cookie-4711"))
    let (journalStatus, journalOutput) = try await referenceVerify(server.baseURL, [fromJournal])
    #expect(journalStatus == 0, "\(journalOutput)")
  }

  /// Stubs with a binary body, a bearer-protected endpoint, volatile headers and an id in `Location`:
  /// the exported pact (V4 and V3) holds no secret, no volatile value and the exact bytes, Pact's verifier
  /// accepts it against a provider serving the same answers, and refuses it once a field is renamed.
  @Test(arguments: ["v4", "v3"]) func exportedPactHasNoSecretsAndVerifiesByteExact(spec: String) async throws
  {
    let fixtures = try temporaryFolder("export-secrets")
    defer { try? FileManager.default.removeItem(atPath: fixtures) }
    try FileManager.default.createDirectory(atPath: fixtures + "/mappings", withIntermediateDirectories: true)
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0x00, 0xFF, 0xFE, 0x80, 0x01, 0x02]
    let stubs = #"""
      {"mappings": [
        {"name": "logo", "request": {"method": "GET", "urlPath": "/logo.png"},
         "response": {"status": 200, "headers": {"Content-Type": "image/png", "ETag": "\"abc123\"",
           "Date": "Sun, 06 Dec 2026 05:00:00 GMT", "X-Request-Id": "7f3a"},
           "base64Body": "\#(Data(png).base64EncodedString())"}},
        {"name": "account", "request": {"method": "GET", "urlPath": "/account",
           "headers": {"Authorization": {"matches": "Bearer .+"}}},
         "metadata": {"x-example-request": {"method": "GET", "url": "/account",
           "headers": {"Authorization": "Bearer s3cr3t-token-XYZ", "Cookie": "session=c00kie-value"}}},
         "response": {"status": 200, "headers": {"Content-Type": "application/json",
           "Set-Cookie": "session=c00kie-value"}, "jsonBody": {"id": 7, "owner": "aiko"}}},
        {"name": "order", "request": {"method": "POST", "urlPath": "/orders", "bodyPatterns": [{"equalToJson":
           {"name": "${json-unit.any-string}", "qty": "${json-unit.any-number}", "code": "${json-unit.regex}[A-Z]{3}"}}]},
         "response": {"status": 201}},
        {"name": "item", "request": {"method": "GET", "urlPathTemplate": "/items/{id}"},
         "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "jsonBody": {"name": "pen"}}},
        {"name": "create", "request": {"method": "POST", "urlPath": "/items"},
         "metadata": {"x-example-request": {"method": "POST", "url": "/items",
           "headers": {"Content-Type": "application/json"}, "body": "{\"name\":\"pen\"}"}},
         "response": {"status": 201, "headers": {"Location": "/items/4711", "Content-Type": "application/json"},
           "jsonBody": {"id": 4711, "name": "pen"}}}
      ]}
      """#
    try Data(stubs.utf8).write(to: URL(fileURLWithPath: fixtures + "/mappings/api.json"))
    let exported = fixtures + "/out/pact.json"
    #expect(
      mockserver(
        "export", "pact", "--consumer", "App", "--provider", "API", "--fixtures", fixtures, "--out", exported,
        "--spec", spec) == 0)
    let text = try String(contentsOfFile: exported, encoding: .utf8)
    for secret in ["s3cr3t-token-XYZ", "c00kie-value", "abc123", "7f3a", "06 Dec 2026"] {
      #expect(!text.contains(secret), "\(secret) was written")
    }
    let pact = try JSONValue.parse(text)
    let interactions = pact["interactions"]?.arrayValue ?? []
    let logo = try #require(interactions.first { $0["description"] == .string("logo") })
    let body = try #require(logo["response"]?["body"])
    let base64 = spec == "v4" ? body["content"]?.stringValue : body.stringValue
    #expect(base64.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } == png)
    if spec == "v4" { #expect(body["encoded"] == .string("base64")) }
    // JsonUnit placeholders: example values and the rules that stand for them.
    let order = try #require(interactions.first { $0["description"] == .string("order") })
    let orderRules = order["request"]?["matchingRules"]?["body"]
    #expect(orderRules?["$.name"]?["matchers"]?.arrayValue?.first?["match"] == .string("type"))
    #expect(orderRules?["$.qty"]?["matchers"]?.arrayValue?.first?["match"] == .string("number"))
    #expect(orderRules?["$.code"]?["matchers"]?.arrayValue?.first?["regex"] == .string("[A-Z]{3}"))
    #expect(!text.contains("json-unit"))
    // A templated path: an example id and a path rule that takes any.
    let item = try #require(interactions.first { $0["description"] == .string("item") })
    #expect(item["request"]?["path"] == .string("/items/1"))
    #expect(
      item["request"]?["matchingRules"]?["path"]?["matchers"]?.arrayValue?.first?["regex"]
        == .string("/items/[^/]+"))

    let server = try TestMockServer.start(fixtures: fixtures)
    defer { server.stop() }
    let (status, output) = try await referenceVerify(server.baseURL, [exported])
    #expect(status == 0, "\(output)")
    // A provider that renamed one field fails Pact's verifier.
    try server.stub(
      json:
        #"{"priority": 1, "request": {"method": "GET", "urlPath": "/account"}, "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "jsonBody": {"id": 7, "ownerName": "aiko"}}}"#
    )
    let (renamed, _) = try await referenceVerify(server.baseURL, [exported])
    #expect(renamed != 0)
  }

  @Test func importerRejectsFilesThatAreNotPacts() throws {
    #expect(throws: PactImportError.self) { try PactImporter.mappings(from: .object(JSONObject())) }
    let noMethod: JSONValue = try .parse(
      #"{"interactions": [{"request": {"path": "/"}, "response": {"status": 200}}]}"#)
    do {
      _ = try PactImporter.mappings(from: noMethod)
      Issue.record("expected an error")
    } catch {
      #expect(error.description == "$.interactions[0].request.method: expected a string, found nothing")
    }
  }
}

/// `verify --pact` against Pact's own verifier on the same pact and providers: a provider that honours the
/// interaction (adding a field), one that renamed a field, one that changed a type, one without the
/// endpoint.
@Suite(.serialized) struct PactProviderVerificationTests {
  static let pact = #"""
    {"consumer": {"name": "App"}, "provider": {"name": "Users"},
     "metadata": {"pactSpecification": {"version": "3.0.0"}},
     "interactions": [{"description": "a user", "request": {"method": "GET", "path": "/users/1"},
       "response": {"status": 200, "headers": {"Content-Type": "application/json"},
         "body": {"id": 1, "name": "Aiko", "tags": ["a"]},
         "matchingRules": {"body": {"$.id": {"matchers": [{"match": "integer"}]},
           "$.name": {"matchers": [{"match": "type"}]}, "$.tags": {"matchers": [{"match": "type", "min": 1}]}}}}}]}
    """#

  @Test(arguments: [
    (#"{"id": 5, "name": "Bo", "tags": ["x", "y"], "extra": true}"#, true),
    (#"{"id": 5, "fullName": "Bo", "tags": ["x"]}"#, false),
    (#"{"id": "5", "name": "Bo", "tags": ["x"]}"#, false),
    ("", false),
  ])
  func agreesWithPactsVerifier(providerBody: String, honours: Bool) async throws {
    let folder = try temporaryFolder("verify-pact")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let pactFile = folder + "/pact.json"
    try Data(Self.pact.utf8).write(to: URL(fileURLWithPath: pactFile))
    let server = try TestMockServer.start()
    defer { server.stop() }
    if !providerBody.isEmpty {
      try server.stub(
        json:
          #"{"request": {"method": "GET", "urlPath": "/users/1"}, "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "body": "#
          + JSONValue.quoted(providerBody) + "}}")
    }
    let (reference, output) = try await referenceVerify(server.baseURL, [pactFile])
    #expect((reference == 0) == honours, "Pact's verifier: \(output)")
    let junit = folder + "/report.xml"
    let ours = await offPool {
      MockServerMain.run(arguments: [
        "verify", "--pact", pactFile, "--upstream", server.baseURL.absoluteString, "--junit", junit,
      ])
    }
    #expect(ours == (honours ? 0 : 1))
    let report = try String(contentsOfFile: junit, encoding: .utf8)
    #expect(report.contains("failures=\"\(honours ? 0 : 1)\""))
  }

  @Test func providerStatesAreSetUpFirst() async throws {
    let folder = try temporaryFolder("verify-states")
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let pactFile = folder + "/pact.json"
    try Data(
      Self.pact.replacingOccurrences(
        of: #""description": "a user","#,
        with: #""description": "a user", "providerStates": [{"name": "user 1 exists", "params": {"id": 1}}],"#
      ).utf8
    ).write(to: URL(fileURLWithPath: pactFile))
    let server = try TestMockServer.start()
    defer { server.stop() }
    // The user exists only once the state set-up call arrived (a scenario step).
    try server.stub(
      json:
        #"{"scenarioName": "users", "newScenarioState": "ready", "request": {"method": "POST", "urlPath": "/_states", "bodyPatterns": [{"equalToJson": {"state": "user 1 exists", "params": {"id": 1}, "action": "setup"}}]}, "response": {"status": 200}}"#
    )
    try server.stub(
      json:
        #"{"scenarioName": "users", "requiredScenarioState": "ready", "request": {"method": "GET", "urlPath": "/users/1"}, "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "jsonBody": {"id": 1, "name": "Aiko", "tags": ["a"]}}}"#
    )
    let base = server.baseURL.absoluteString
    let withoutSetup = await offPool {
      MockServerMain.run(arguments: ["verify", "--pact", pactFile, "--upstream", base])
    }
    #expect(withoutSetup == 0, "no set-up URL: the interaction is skipped, not failed")
    let code = await offPool {
      MockServerMain.run(arguments: [
        "verify", "--pact", pactFile, "--upstream", base, "--provider-states-setup-url", base + "/_states",
      ])
    }
    #expect(code == 0)
    #expect(server.requests.contains { $0.request.head.rawPath == "/_states" })
  }
}
