import Contracts
import Foundation
import MockJSON
import MockServer
import MockServerCLI
import MockServerTesting
import TestSupport
import Testing

/// `mockserver verify` against a provider started by the test: a second server with edited fixtures.
@Suite(.serialized) struct VerifyTests {
  static let fixtures: [String: String] = [
    "users.json": #"""
    {"name": "get-user", "request": {"method": "GET", "urlPath": "/api/users/1", "headers": {"Authorization": {"equalTo": "Bearer demo"}}},
     "response": {"status": 200, "headers": {"Content-Type": "application/json"},
       "jsonBody": {"id": 1, "name": "Aiko", "email": "aiko@example.com", "tags": ["a"]}}}
    """#,
    "friends.json": #"""
    {"name": "friends", "request": {"method": "GET", "url": "/api/friends?page=1"},
     "response": {"status": 200, "headers": {"Content-Type": "application/json"},
       "jsonBody": {"result": [{"id": 101, "online": true}, {"id": 102, "online": false}]}}}
    """#,
    "orders.json": #"""
    {"name": "order", "request": {"method": "GET", "urlPathTemplate": "/api/orders/{id}", "pathParameters": {"id": {"equalTo": "7"}}},
     "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "jsonBody": {"id": 7, "total": 12.5}}}
    """#,
    "health.json": #"""
    {"name": "health", "request": {"method": "GET", "urlPath": "/health"},
     "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "jsonBody": {"ok": true}}}
    """#,
    "search.json": #"""
    {"name": "search", "request": {"method": "GET", "urlPathPattern": "/api/search/[a-z]+", "headers": {"Accept": {"matches": "application/(json|xml)"}}}, "response": {"status": 200}}
    """#,
    "admin.json": #"""
    {"name": "admin", "request": {"method": "GET", "urlPathPattern": "/api/(?=admin).*"}, "response": {"status": 200}}
    """#,
  ]

  func folder(_ files: [String: String]) throws -> String {
    let root = try temporaryFolder("verify")
    try FileManager.default.createDirectory(atPath: root + "/mappings", withIntermediateDirectories: true)
    for (name, text) in files {
      try Data(text.utf8).write(to: URL(fileURLWithPath: root + "/mappings/" + name))
    }
    return root
  }

  func verify(_ arguments: [String]) async -> Int32 {
    await offPool { MockServerMain.run(arguments: ["verify"] + arguments) }
  }

  @Test func passesWhenNothingDrifted() async throws {
    let ours = try folder(Self.fixtures)
    // The provider needs a real token, which only --header gives (the fixture says "Bearer demo").
    var provider = Self.fixtures
    provider["users.json"] = provider["users.json"]!.replacingOccurrences(
      of: "Bearer demo", with: "Bearer s3cret-token")
    let theirs = try folder(provider)
    defer {
      try? FileManager.default.removeItem(atPath: ours)
      try? FileManager.default.removeItem(atPath: theirs)
    }
    let server = try TestMockServer.start(fixtures: theirs)
    defer { server.stop() }
    let junit = ours + "/junit.xml"
    let code = await verify([
      "--upstream", server.baseURL.absoluteString, "--fixtures", ours, "--junit", junit, "--header",
      "Authorization: Bearer s3cret-token",
    ])
    #expect(code == 0)
    let xml = try String(contentsOfFile: junit, encoding: .utf8)
    #expect(xml.contains(#"tests="6" failures="0""#))
    #expect(xml.contains("<skipped message=\"the URL is a regular expression"))
    #expect(!xml.contains("s3cret"))
    // Without the header the provider refuses: drift (status class).
    #expect(
      await verify(["--upstream", server.baseURL.absoluteString, "--fixtures", ours, "--only", "get-user"])
        == 1)
  }

  @Test func findsRenamedFieldTypeChangeRemovedEndpointAndChangedStatus() async throws {
    let ours = try folder(Self.fixtures)
    var provider = Self.fixtures
    provider["users.json"] = provider["users.json"]!.replacingOccurrences(
      of: #""name": "Aiko""#, with: #""fullName": "Aiko""#)
    provider["friends.json"] = provider["friends.json"]!.replacingOccurrences(
      of: #""id": 101"#, with: #""id": "101""#)
    provider["orders.json"] = nil
    provider["health.json"] = provider["health.json"]!.replacingOccurrences(
      of: #""status": 200"#, with: #""status": 503"#)
    let theirs = try folder(provider)
    defer {
      try? FileManager.default.removeItem(atPath: ours)
      try? FileManager.default.removeItem(atPath: theirs)
    }
    let server = try TestMockServer.start(fixtures: theirs)
    defer { server.stop() }
    let junit = ours + "/junit.xml"
    let code = await verify([
      "--upstream", server.baseURL.absoluteString, "--fixtures", ours, "--junit", junit, "--strict",
    ])
    #expect(code == 1)
    let xml = try String(contentsOfFile: junit, encoding: .utf8)
    for line in [
      "$.name: in the fixture, missing from the provider&apos;s answer",
      "$.fullName: in the provider&apos;s answer (a string), missing from the fixture",
      "$.result[0].id: expected a number like the fixture&apos;s 101, found a string &quot;101&quot;",
      "status: expected 2xx like the fixture&apos;s 200, found 404 (the endpoint may be gone)",
      "status: expected 2xx like the fixture&apos;s 200, found 503",
    ] {
      #expect(xml.contains(line.replacingOccurrences(of: "&apos;", with: "'")), "\(line)")
    }
    #expect(xml.contains(#"tests="6" failures="4""#))
    // By default a field the provider adds is no drift (Pact's verifier's judgement); --strict reports it.
    let lenientJUnit = ours + "/lenient.xml"
    #expect(
      await verify([
        "--upstream", server.baseURL.absoluteString, "--fixtures", ours, "--junit", lenientJUnit,
      ]) == 1)
    let lenient = try String(contentsOfFile: lenientJUnit, encoding: .utf8)
    #expect(lenient.contains("$.name: in the fixture, missing from the provider"))
    #expect(!lenient.contains("$.fullName"))
    // --only narrows the run to the stubs named.
    #expect(
      await verify(["--upstream", server.baseURL.absoluteString, "--fixtures", ours, "--only", "search"]) == 0
    )
  }

  @Test func unsafeMethodsAreSkippedAndAnUnknownOnlyIsRefused() async throws {
    let ours = try folder([
      "create.json":
        #"{"name": "create", "request": {"method": "POST", "urlPath": "/items"}, "response": {"status": 201}}"#,
      "remove.json":
        #"{"name": "remove", "x-verify": true, "request": {"method": "DELETE", "urlPath": "/items/1"}, "response": {"status": 204}}"#,
      "list.json":
        #"{"name": "list", "request": {"method": "GET", "urlPath": "/items"}, "response": {"status": 200}}"#,
    ])
    defer { try? FileManager.default.removeItem(atPath: ours) }
    let server = try TestMockServer.start(fixtures: ours)
    defer { server.stop() }
    let junit = ours + "/junit.xml"
    #expect(
      await verify(["--upstream", server.baseURL.absoluteString, "--fixtures", ours, "--junit", junit]) == 0)
    // POST is skipped (listed as such); the DELETE the stub opted in with x-verify is sent.
    #expect(!server.requests.contains { $0.request.head.method.rawValue == "POST" })
    #expect(server.requests.contains { $0.request.head.method.rawValue == "DELETE" })
    let xml = try String(contentsOfFile: junit, encoding: .utf8)
    #expect(xml.contains("POST changes the provider"))
    server.reset()
    #expect(
      await verify(["--upstream", server.baseURL.absoluteString, "--fixtures", ours, "--allow-unsafe"]) == 0)
    #expect(server.requests.contains { $0.request.head.method.rawValue == "POST" })
    // An --only that names nothing checks nothing: exit 2.
    #expect(
      await verify(["--upstream", server.baseURL.absoluteString, "--fixtures", ours, "--only", "typo"]) == 2)
  }

  @Test func anUnreachableProviderFails() async throws {
    let ours = try folder(["health.json": Self.fixtures["health.json"]!])
    defer { try? FileManager.default.removeItem(atPath: ours) }
    #expect(await verify(["--upstream", "http://127.0.0.1:1", "--fixtures", ours]) == 1)
  }
}

@Suite struct RegexExampleTests {
  @Test(arguments: [
    ("Bearer [A-Za-z0-9._-]+", "Bearer A"), ("/api/v1/friends.*", "/api/v1/friends"),
    (#"\d{3}-\d{4}"#, "000-0000"),
    ("(json|xml)", "json"), ("[^a-z]+", "0"), (#"/users/[0-9]+(\?.*)?"#, "/users/0"), ("a?b*c", "c"),
  ])
  func generatesAMatchingString(pattern: String, expected: String) {
    #expect(RegexExample.generate(pattern) == expected)
  }

  @Test func refusesWhatItCannotCover() {
    #expect(RegexExample.generate("(?=x).*") == nil)
    #expect(RegexExample.generate(#"(a)\1"#) == nil)
  }
}
