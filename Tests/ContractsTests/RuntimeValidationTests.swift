import Contracts
import Foundation
import HTTPCore
import JSONSchema
import Mappings
import MockJSON
import MockServer
import MockServerCLI
import Testing

/// `--validate-requests` and `--validate-responses`, in-process as `serve` wires them.
@Suite struct RuntimeValidationTests {
  func start(fixtures: FixtureSet) throws -> (HTTPServer, URL, MockService) {
    let document = try OpenAPIDocument.load(path: usersDocument)
    var set = try ContractCommands.openAPIFixtures(usersDocument, seed: 1).get().1
    let (flagged, findings) = ResponseValidation.flag(fixtures.stubs, document: document)
    #expect(findings.count == fixtures.stubs.count)
    set.stubs += flagged
    var configuration = MockServiceConfiguration()
    configuration.adminResponseCheck = AdminResponseCheck.fromEnvironment
    configuration.logLevel = .quiet
    configuration.requestCheck = RequestValidation.check(OpenAPIRequestValidator(document: document))
    let service = MockService(configuration: configuration, fixtures: set)
    var serverConfiguration = ServerConfiguration()
    serverConfiguration.port = 0
    let server = HTTPServer(configuration: serverConfiguration, responder: service)
    try server.start()
    return (server, URL(string: server.baseURL)!, service)
  }

  @Test func requestsThatBreakTheDocumentGet400WithAReport() async throws {
    let (server, base, service) = try start(fixtures: FixtureSet())
    defer { server.shutdown(graceful: false) }
    let notANumber = try await exchange(base, "GET", "/users/abc")
    #expect(notANumber.status == 400)
    let report = try JSONValue.parse(bytes: Array(notANumber.body))
    #expect(
      report["validation"]?.arrayValue?.compactMap { $0["message"]?.stringValue } == [
        "path id: expected an integer (#/paths/~1users~1{id}/get/parameters/0/schema), found \"abc\""
      ])
    #expect(try await exchange(base, "GET", "/users/0").status == 400)
    #expect(try await exchange(base, "GET", "/users/3").status == 200)

    let dog = try await exchange(
      base, "POST", "/pets", headers: ["Content-Type": "application/json"],
      body: #"{"kind":"dog","name":"Rex"}"#)
    #expect(dog.status == 400)
    #expect(
      try JSONValue.parse(bytes: Array(dog.body))["validation"]?.arrayValue?.first?["message"]
        == .string(
          "body $.goodBoy: expected property goodBoy (required) (#/components/schemas/Dog), found nothing"))
    let cat = try await exchange(
      base, "POST", "/pets", headers: ["Content-Type": "application/json"],
      body: #"{"kind":"cat","name":"Tama","lives":9}"#)
    #expect(cat.status == 201)
    let wrongType = try await exchange(
      base, "POST", "/pets", headers: ["Content-Type": "text/plain"], body: "cat")
    #expect(wrongType.status == 400)
    // Requests no operation addresses are not judged.
    #expect(try await exchange(base, "GET", "/elsewhere").status == 404)
    // The refused requests are in the journal with their status.
    #expect(service.journal.snapshot().filter { $0.responseStatus == 400 }.count == 4)
  }

  @Test func stubAnswersThatBreakTheDocumentAreFlagged() async throws {
    let context = StubParsingContext(makeID: { UUID().uuidString })
    let (stub, _) = StubParser.parse(
      try JSONValue.parse(
        #"{"request": {"method": "GET", "urlPath": "/users/42"}, "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "jsonBody": {"code": 0, "data": {"id": 42, "name": "Aiko", "email": 42}}}}"#
      ), file: "mappings/users.json", context: context)
    let (server, base, _) = try start(fixtures: FixtureSet(stubs: [try #require(stub)]))
    defer { server.shutdown(graceful: false) }
    let reply = try await exchange(base, "GET", "/users/42")
    #expect(reply.status == 200)
    #expect(
      reply.headers["x-contract-violation"]
        == "$.response.jsonBody.data.email: expected a string of format email (#/components/schemas/User/properties/email), found 42"
    )
    #expect(try await exchange(base, "GET", "/users/41").headers["x-contract-violation"] == nil)
  }
}

@Suite struct RequestValidatorTests {
  @Test func queryParametersAreReadAsTheirSchemaTypes() throws {
    let validator = OpenAPIRequestValidator(
      document: try OpenAPIDocument.load(path: SharedDocuments.path("petstore.yaml")))
    func check(_ target: String) -> [String]? {
      validator.violations(method: "GET", target: target, headers: [:], body: [])?.map(\.description)
    }
    #expect(check("/pets") == [])
    #expect(check("/pets?limit=20") == [])
    #expect(
      check("/pets?limit=abc") == [
        "query limit: expected an integer (#/paths/~1pets/get/parameters/0/schema), found \"abc\""
      ])
    #expect(
      check("/pets?limit=500") == [
        "query limit: expected a number <= 100 (#/paths/~1pets/get/parameters/0/schema), found 500"
      ])
    #expect(check("/unknown") == nil)
  }

  @Test func refSiblingsFollowTheDialect() throws {
    let schemas: JSONValue = try .parse(
      ##"{"components": {"schemas": {"S": {"type": "string"}}}, "x": {"$ref": "#/components/schemas/S", "maxLength": 2}}"##
    )
    let location = SchemaLocation(tokens: ["x"])
    let v30 = JSONSchemaValidator(document: schemas, dialect: .openAPI30)
    let v31 = JSONSchemaValidator(document: schemas, dialect: .openAPI31)
    #expect(v30.validate(.string("abc"), at: location).isEmpty)
    #expect(
      v31.validate(.string("abc"), at: location).map(\.expected) == ["a string of at most 2 characters"])
  }
}
