import Contracts
import Foundation
import HTTPCore
import JSONSchema
import Mappings
import MockJSON
import MockServer
import MockServerCLI
import MockServerTesting
import TestSupport
import Testing

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

/// One HTTP exchange with URLSession: status, headers (lowercased names), body.
func exchange(
  _ base: URL, _ method: String, _ url: String, headers: [String: String] = [:], body: String? = nil
) async throws -> (status: Int, headers: [String: String], body: Data) {
  var request = URLRequest(url: URL(string: base.absoluteString + url)!)
  request.httpMethod = method
  for (k, v) in headers { request.setValue(v, forHTTPHeaderField: k) }
  if let body { request.httpBody = Data(body.utf8) }
  let (data, response) = try await URLSession.shared.data(for: request)
  let http = try #require(response as? HTTPURLResponse)
  var out: [String: String] = [:]
  for (k, v) in http.allHeaderFields { out[String(describing: k).lowercased()] = String(describing: v) }
  return (http.statusCode, out, data)
}

/// Runs the `mockserver` command line in-process, capturing nothing (output goes to the test log).
func mockserver(_ arguments: String...) -> Int32 { MockServerMain.run(arguments: arguments) }

@Suite struct OpenAPIImportTests {
  /// Imports every shared document with `mockserver import openapi`, serves the folder, and sends every
  /// stub's example request with its Prefer header: each answers with the stub's status and body.
  @Test(arguments: sharedDocuments + ["split/main"])
  func importServeAndAnswerEveryExample(name: String) async throws {
    let spec = SharedDocuments.path(name + ".yaml")
    let out = try temporaryFolder("import")
    defer { try? FileManager.default.removeItem(atPath: out) }
    #expect(mockserver("import", "openapi", spec, "--out", out, "--seed", "7") == 0)
    let document = try OpenAPIDocument.load(path: spec)
    let files = (try? FileManager.default.contentsOfDirectory(atPath: out + "/mappings")) ?? []
    #expect(files.count == document.operations.filter { !$0.responses.isEmpty }.count)
    // The written fixtures load without a problem and conform to the document.
    let fixtures = FixtureLoader.load(directory: out)
    #expect(fixtures.problems.filter(\.isError).map(\.description) == [])
    #expect(OpenAPILinter(document: document).check(fixtures.stubs).map(\.description) == [])

    let server = try TestMockServer.start(fixtures: out)
    defer { server.stop() }
    var answered = 0
    for stub in fixtures.stubs {
      let meta = try #require(stub.metadata?["x-openapi"])
      let example = try #require(stub.metadata?["x-example-request"])
      var headers: [String: String] = [:]
      if let prefer = meta["prefer"]?.stringValue { headers["Prefer"] = prefer }
      for case .object(let h) in [example["headers"]].compactMap({ $0 }) {
        for m in h { headers[m.key] = m.value.stringValue }
      }
      let reply = try await exchange(
        server.baseURL, example["method"]?.stringValue ?? "GET", example["url"]?.stringValue ?? "/",
        headers: headers, body: example["body"]?.stringValue)
      // Several stubs may answer the same request the same way (the default and `code=` forms).
      #expect(reply.status == stub.response.status, "\(stub.name ?? stub.id)")
      if !stub.response.body.isEmpty {
        #expect(Array(reply.body) == stub.response.body, "\(stub.name ?? stub.id)")
      }
      answered += 1
    }
    #expect(answered == fixtures.stubs.count)
  }

  @Test func preferSelectsStatusAndNamedExamples() async throws {
    let spec = SharedDocuments.path("split/main.yaml")
    let document = try OpenAPIDocument.load(path: spec)
    let generated = try ContractCommands.openAPIFixtures(spec, seed: 1).get().1
    #expect(generated.problems.map(\.description) == [])
    var serviceConfiguration = MockServiceConfiguration()
    serviceConfiguration.adminResponseCheck = AdminResponseCheck.fromEnvironment
    serviceConfiguration.logLevel = .quiet
    let service = MockService(configuration: serviceConfiguration, fixtures: generated)
    var configuration = ServerConfiguration()
    configuration.port = 0
    let server = HTTPServer(configuration: configuration, responder: service)
    try server.start()
    defer { server.shutdown(graceful: false) }
    let base = URL(string: server.baseURL)!

    let first = try await exchange(base, "GET", "/pets/1")
    #expect(first.status == 200)
    #expect(
      try JSONValue.parse(bytes: Array(first.body)) == .parse(#"{"id":1,"name":"rex","status":"available"}"#))
    let second = try await exchange(base, "GET", "/pets/1", headers: ["Prefer": "example=second"])
    #expect(try JSONValue.parse(bytes: Array(second.body))["name"] == .string("tom"))
    let missing = try await exchange(base, "GET", "/pets/1", headers: ["Prefer": "code=404"])
    #expect(missing.status == 404)
    #expect(
      try JSONValue.parse(bytes: Array(missing.body)) == .parse(#"{"code":404,"message":"no such pet"}"#))
    let both = try await exchange(base, "GET", "/pets/1", headers: ["Prefer": "code=200, example=second"])
    #expect(try JSONValue.parse(bytes: Array(both.body))["id"] == .number(JSONNumber(2)))

    // The generated owners respect formats, enums and bounds, and the same seed gives the same value.
    let owners = try await exchange(base, "GET", "/owners")
    #expect(owners.status == 200)
    let value = try JSONValue.parse(bytes: Array(owners.body))
    let op = try #require(document.operation(method: "GET", path: "/owners")?.0)
    let location = try #require(op.responses.first?.content.first?.schemaLocation)
    #expect(document.validator.validate(value, at: location).map(\.description) == [])
    let again = try ContractCommands.openAPIFixtures(spec, seed: 1).get().1
    let other = try ContractCommands.openAPIFixtures(spec, seed: 2).get().1
    let owner = { (set: FixtureSet) in set.stubs.first { $0.request.url.value == "/owners" }?.response.body }
    #expect(owner(again) == Array(owners.body))
    #expect(owner(other) != Array(owners.body))
  }

  /// Generated values conform to their schemas for many seeds: every response, request body and component
  /// schema of every document in ../shared/openapi (the OpenAPI Initiative's examples), of the tests' users
  /// document, and of Documents/keywords.yaml (contains with minContains/maxContains, uniqueItems,
  /// patternProperties, dependentRequired, if/then/else, not).
  @Test(arguments: [1, 2, 3, 42, 1000] as [UInt64])
  func generatedValuesConform(seed: UInt64) throws {
    let shared = (try? FileManager.default.contentsOfDirectory(atPath: SharedDocuments.folder)) ?? []
    let documents =
      [usersDocument, keywordsDocument, SharedDocuments.path("split/main.yaml")]
      + shared.filter { $0.hasSuffix(".yaml") }.sorted().map { SharedDocuments.path($0) }
    #expect(documents.count >= 10, "\(documents)")
    var checked = 0
    for spec in documents {
      let document = try OpenAPIDocument.load(path: spec)
      var sampler = SchemaSampler(document: document, seed: seed)
      var locations: [(String, SchemaLocation)] = []
      for op in document.operations {
        for media in op.responses.flatMap(\.content) + op.requestBody where media.isJSON {
          if let location = media.schemaLocation { locations.append((op.name, location)) }
        }
      }
      for schema in document.root["components"]?["schemas"]?.objectValue ?? JSONObject() {
        locations.append((schema.key, SchemaLocation(tokens: ["components", "schemas", schema.key])))
      }
      for (name, location) in locations {
        guard let value = sampler.sample(at: location) else { continue }
        checked += 1
        #expect(
          document.validator.validate(value, at: location).map(\.description) == [],
          "\(spec): \(name): \(value.serialized())")
      }
    }
    #expect(checked >= 50, "\(checked) schemas checked")
  }
}

@Suite struct OpenAPILintTests {
  func fixtures(_ files: [String: String]) throws -> String {
    let root = try temporaryFolder("lint")
    try FileManager.default.createDirectory(atPath: root + "/mappings", withIntermediateDirectories: true)
    for (name, text) in files {
      try Data(text.utf8).write(to: URL(fileURLWithPath: root + "/mappings/" + name))
    }
    return root
  }

  @Test func aWrongFixtureIsReportedAtTheExactPath() throws {
    let root = try fixtures([
      "users.json": """
      {"request": {"method": "GET", "urlPath": "/users/42"},
       "response": {"status": 200, "headers": {"Content-Type": "application/json"},
         "jsonBody": {"code": 0, "data": {"id": 42, "name": "Aiko", "email": 42}, "info": null}}}
      """,
      "more.json": """
      {"mappings": [
        {"request": {"method": "GET", "urlPathTemplate": "/users/{userId}"},
         "response": {"status": 500, "jsonBody": {}}},
        {"request": {"method": "GET", "urlPath": "/users/7"},
         "response": {"status": 404, "headers": {"Content-Type": "text/html"}, "body": "<p>no</p>"}},
        {"request": {"method": "POST", "urlPath": "/pets"},
         "response": {"status": 201, "headers": {"Content-Type": "application/json"},
           "body": "{\\"kind\\": \\"dog\\", \\"name\\": \\"Rex\\", \\"goodBoy\\": \\"yes\\"}"}},
        {"request": {"method": "GET", "urlPath": "/elsewhere"}, "response": {"status": 200}}
      ]}
      """,
    ])
    defer { try? FileManager.default.removeItem(atPath: root) }
    let document = try OpenAPIDocument.load(path: usersDocument)
    let stubs = FixtureLoader.load(directory: root).stubs
    #expect(
      OpenAPILinter(document: document).check(stubs).map(\.description) == [
        "mappings/more.json: $.mappings[0].response.status: expected a status declared for GET /users/{id} (200, 404) (#/paths/~1users~1{id}/get/responses), found 500",
        "mappings/more.json: $.mappings[1].response.headers.Content-Type: expected a Content-Type of application/json (#/paths/~1users~1{id}/get/responses/404/content), found \"text/html\"",
        "mappings/more.json: $.mappings[2].response.body ($.goodBoy): expected a boolean (#/components/schemas/Dog/properties/goodBoy), found \"yes\"",
        "mappings/more.json: $.mappings[3].request: warning: no operation of Users matches GET /elsewhere; not checked",
        "mappings/users.json: $.response.jsonBody.data.email: expected a string of format email (#/components/schemas/User/properties/email), found 42",
      ])
    // The command: exit 1, the same lines on stderr.
    #expect(mockserver("lint", "--openapi", usersDocument, root) == 1)
  }

  @Test func aConformingFolderPasses() throws {
    let root = try fixtures([
      "user.json": """
      {"request": {"method": "GET", "urlPathTemplate": "/users/{userId}"},
       "response": {"status": 200, "headers": {"Content-Type": "application/json; charset=utf-8"},
         "jsonBody": {"code": 0, "data": {"id": 1, "name": "Aiko", "email": "aiko@example.com",
           "joined": "2024-01-02T03:04:05Z", "role": "admin", "balance": 1250.00}, "info": null}}}
      """
    ])
    defer { try? FileManager.default.removeItem(atPath: root) }
    #expect(mockserver("lint", "--openapi", usersDocument, root) == 0)
  }
}
