import Contracts
import Foundation
import HTTPCore
import JSONSchema
import MockJSON
import MockServerTesting
import Testing

/// `--openapi` served by the real binary: a Swagger 2.0 document written for the tests, and every shared
/// OpenAPI Initiative document; and the values the mock makes for schemas, checked against them.
@Suite struct OpenAPIServingTests {
  static let swagger = #"""
    swagger: '2.0'
    info: {title: Pets, version: '1'}
    basePath: /v1
    produces: [application/json, application/xml]
    securityDefinitions:
      basic: {type: basic}
    paths:
      /pets/{id}:
        get:
          parameters:
            - {name: id, in: path, required: true, type: integer}
            - {name: tags, in: query, type: array, items: {type: string}, collectionFormat: pipes, maxItems: 2}
          security: [{basic: []}]
          responses:
            '200':
              description: a pet
              schema: {$ref: '#/definitions/Pet'}
              headers: {X-Rate: {type: integer, x-example: 5}}
              examples:
                application/json: {id: 1, name: rex}
            '404': {description: none}
      /pets:
        post:
          consumes: [application/x-www-form-urlencoded]
          parameters:
            - {name: name, in: formData, type: string, required: true}
            - {name: age, in: formData, type: integer}
          responses:
            '201': {description: made, schema: {$ref: '#/definitions/Pet'}}
            '422': {description: refused, examples: {application/json: {error: bad pet}}}
    definitions:
      Pet:
        type: object
        xml: {name: pet}
        required: [name]
        properties:
          id: {type: integer, xml: {attribute: true}}
          name: {type: string}
    """#

  func send(_ port: Int, _ head: String, body: String = "") throws -> (Int, String, String) {
    let text = head + "Host: x\r\nConnection: close\r\nContent-Length: \(body.utf8.count)\r\n\r\n" + body
    let reply = String(
      decoding: try LoopbackSocket.exchange(port: port, Array(text.utf8), timeout: 20), as: UTF8.self)
    let parts = reply.components(separatedBy: "\r\n\r\n")
    let status = Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0
    return (status, parts[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
  }

  @Test func swaggerTwoIsServedAndValidatedByTheBinary() throws {
    let folder = NSTemporaryDirectory() + "openapi-serving-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data(OpenAPIServingTests.swagger.utf8).write(to: URL(fileURLWithPath: folder + "/pets.yaml"))
    let server = try MockServerProcess.launch(arguments: [
      "--openapi", folder + "/pets.yaml", "--validate-requests", "--fixtures", folder + "/none",
      "--allow-empty",
      "--no-watch",
    ])
    defer { server.stop() }
    let basic = "Authorization: Basic YTpi\r\n"
    let ok = try send(server.port, "GET /v1/pets/1?tags=a|b HTTP/1.1\r\n" + basic)
    #expect(ok.0 == 200 && ok.2 == #"{"id":1,"name":"rex"}"# && ok.1.contains("X-Rate: 5"), "\(ok)")
    let xml = try send(server.port, "GET /v1/pets/1 HTTP/1.1\r\nAccept: application/xml\r\n" + basic)
    #expect(xml.0 == 200 && xml.2 == #"<pet id="0"><name>string</name></pet>"#, "\(xml)")
    let anonymous = try send(server.port, "GET /v1/pets/1 HTTP/1.1\r\n")
    #expect(anonymous.0 == 401 && anonymous.1.contains(#"WWW-Authenticate: Basic realm="*""#), "\(anonymous)")
    let tooMany = try send(server.port, "GET /v1/pets/1?tags=a|b|c HTTP/1.1\r\n" + basic)
    #expect(tooMany.0 == 422 && tooMany.2.contains(#""location":["query","tags"]"#), "\(tooMany)")
    let undeclared = try send(server.port, "GET /v1/pets/1?__code=418 HTTP/1.1\r\n" + basic)
    #expect(undeclared.0 == 404 && undeclared.2.contains("declared: 200, 404"), "\(undeclared)")
    let notAcceptable = try send(server.port, "GET /v1/pets/1 HTTP/1.1\r\nAccept: text/html\r\n" + basic)
    #expect(notAcceptable.0 == 406, "\(notAcceptable)")
    let form = "POST /v1/pets HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
    #expect(try send(server.port, form, body: "name=rex&age=3").0 == 201)
    // The document's own 422 answers a form that breaks it.
    let refused = try send(server.port, form, body: "age=old")
    #expect(refused.0 == 422 && refused.2 == #"{"error":"bad pet"}"#, "\(refused)")
    // A media type the operation does not take: Prism looks for a 415, then 422, then 400 response.
    let wrongType = try send(server.port, "POST /v1/pets HTTP/1.1\r\nContent-Type: text/plain\r\n", body: "x")
    #expect(wrongType.0 == 422 && wrongType.2 == #"{"error":"bad pet"}"#, "\(wrongType)")
  }

  /// Every operation of every shared document answers from the binary with a declared status, and a JSON
  /// answer conforms to its schema.
  @Test(arguments: sharedDocuments)
  func sharedDocumentsAreServed(name: String) throws {
    let spec = SharedDocuments.path(name + ".yaml")
    let document = try OpenAPIDocument.load(path: spec)
    let folder = NSTemporaryDirectory() + "openapi-shared-" + UUID().uuidString
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let server = try MockServerProcess.launch(arguments: [
      "--openapi", spec, "--fixtures", folder, "--allow-empty", "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    for op in document.operations where !op.responses.isEmpty {
      let path = op.path.replacingOccurrences(of: #"\{[^}]+\}"#, with: "1", options: .regularExpression)
      let reply = try send(server.port, "\(op.method) \(path) HTTP/1.1\r\nAccept: application/json\r\n")
      let declared = op.responses.map(\.status)
      let status = String(reply.0)
      #expect(
        declared.contains(status) || declared.contains("default")
          || declared.contains("\(status.prefix(1))XX")
          || reply.0 == 406,
        "\(op.method) \(op.path): \(reply)")
      guard let response = op.response(for: reply.0), let media = response.content.first(where: \.isJSON),
        let schema = media.schemaLocation, media.example == nil, media.examples.isEmpty, op.method != "HEAD"
      else { continue }
      let value = try JSONValue.parse(reply.2)
      #expect(document.validator.validate(value, at: schema).isEmpty, "\(op.method) \(op.path): \(reply.2)")
    }
  }

  /// Property: the value the mock makes for a schema (Prism's static value, else a generated one) conforms
  /// to it, for every schema of every shared document and every harness case's document.
  @Test func madeValuesConformToTheirSchemas() throws {
    var documents: [OpenAPIDocument] = []
    for name in sharedDocuments {
      documents.append(try OpenAPIDocument.load(path: SharedDocuments.path(name + ".yaml")))
    }
    for c in PrismHarnessTests.cases {
      if let d = try? OpenAPIDocument.parse((c.value["document"] ?? .null).serialized()) {
        documents.append(d)
      }
    }
    var checked = 0
    for document in documents {
      let mock = OpenAPIMock(document: document)
      var locations: [SchemaLocation] = []
      for (name, _) in document.root["components"]?["schemas"]?.objectValue?.members.map({
        ($0.key, $0.value)
      }) ?? [] {
        locations.append(SchemaLocation(tokens: ["components", "schemas", name]))
      }
      for op in document.operations {
        locations += op.parameters.compactMap(\.schemaLocation)
        locations += op.requestBody.compactMap(\.schemaLocation)
        for r in op.responses { locations += r.content.compactMap(\.schemaLocation) }
      }
      for location in locations {
        guard let value = mock.sample(at: location) else { continue }
        checked += 1
        #expect(
          document.validator.validate(value, at: location).isEmpty,
          "\(document.title) \(location): \(value.serialized().prefix(300))")
      }
    }
    #expect(checked > 200)
  }
}
