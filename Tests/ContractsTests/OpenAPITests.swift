import Contracts
import Foundation
import HTTPCore
import JSONSchema
import Mappings
import MockJSON
import MockServer
import MockServerCLI
import Testing

/// The shared documents with their YAML and JSON twins.
let sharedDocuments = [
  "petstore", "petstore-expanded", "api-with-examples", "link-example", "uspto", "webhook-example",
  "non-oauth-scopes",
]

let usersDocument = SharedDocuments.repositoryRoot.path + "/Tests/ContractsTests/Documents/users.yaml"
let keywordsDocument = SharedDocuments.repositoryRoot.path + "/Tests/ContractsTests/Documents/keywords.yaml"

@Suite struct YAMLTests {
  @Test(arguments: sharedDocuments + ["split/main", "split/schemas"])
  func yamlAndJSONTwinsParseToTheSameValue(name: String) throws {
    let yaml = try String(contentsOfFile: SharedDocuments.path(name + ".yaml"), encoding: .utf8)
    let json = try String(contentsOfFile: SharedDocuments.path(name + ".json"), encoding: .utf8)
    #expect(try YAMLDocument.parse(yaml) == JSONValue.parse(json))
  }

  @Test func coreSchemaScalarsAnchorsAndMergeKeys() throws {
    let value = try YAMLDocument.parse(
      """
      a: 007
      b: -1.5e3
      c: .5
      d: "12"
      e: ~
      f: yes
      g: 0x1F
      h: &base {x: 1, y: [true, false, null]}
      i:
        <<: *base
        y: 2
      '200': ok
      j: |
        two
        lines
      """)
    #expect(value["a"] == .number(JSONNumber(7)))
    #expect(value["b"]?.numberValue == JSONNumber(text: "-1.5e3"))
    #expect(value["c"]?.numberValue == JSONNumber(text: "0.5"))
    #expect(value["d"] == .string("12"))
    #expect(value["e"] == .null)
    #expect(value["f"] == .string("yes"))
    #expect(value["g"] == .number(JSONNumber(31)))
    #expect(value["i"]?["x"] == .number(JSONNumber(1)))
    #expect(value["i"]?["y"] == .number(JSONNumber(2)))
    #expect(value["200"] == .string("ok"))
    #expect(value["j"] == .string("two\nlines"))
  }

  @Test func syntaxErrorsHaveLineAndColumn() {
    #expect(throws: YAMLParseError.self) { try YAMLDocument.parse("a: [1, 2\nb: 3") }
    do {
      _ = try YAMLDocument.parse("a: b: c")
      Issue.record("expected an error")
    } catch {
      #expect(error.line == 1)
      #expect(error.description.contains("mapping values are not allowed"))
    }
  }
}

@Suite struct OpenAPIDocumentTests {
  @Test(arguments: sharedDocuments)
  func everySharedDocumentLoads(name: String) throws {
    let yaml = try OpenAPIDocument.load(path: SharedDocuments.path(name + ".yaml"))
    let json = try OpenAPIDocument.load(path: SharedDocuments.path(name + ".json"))
    #expect(yaml.operations.count == json.operations.count)
    #expect(yaml.operations.map(\.name) == json.operations.map(\.name))
  }

  @Test func operationsAndTheirPaths() throws {
    let doc = try OpenAPIDocument.load(path: SharedDocuments.path("petstore.yaml"))
    #expect(doc.operations.map(\.name) == ["listPets", "createPets", "showPetById"])
    let (op, params) = try #require(doc.operation(method: "GET", path: "/pets/42"))
    #expect(op.name == "showPetById")
    #expect(params == ["petId": "42"])
    // The server URL's base path may prefix the stub path.
    #expect(doc.operation(method: "GET", path: "/v1/pets")?.0.name == "listPets")
    #expect(doc.operation(method: "DELETE", path: "/pets") == nil)
    // 3.1: webhooks only, no paths.
    let webhooks = try OpenAPIDocument.load(path: SharedDocuments.path("webhook-example.yaml"))
    #expect(webhooks.operations.isEmpty)
  }

  @Test func siblingFileReferencesResolve() throws {
    let doc = try OpenAPIDocument.load(path: SharedDocuments.path("split/main.yaml"))
    #expect(doc.siblings.keys.sorted() == ["schemas.yaml"])
    let op = try #require(doc.operation(method: "GET", path: "/pets/3")?.0)
    let media = try #require(op.responses.first?.content.first)
    let location = try #require(media.schemaLocation)
    let good: JSONValue = try .parse(#"{"id": 1, "name": "rex", "status": "sold"}"#)
    #expect(doc.validator.validate(good, at: location).isEmpty)
    let bad: JSONValue = try .parse(#"{"id": 0, "name": "rex", "status": "lost"}"#)
    #expect(
      doc.validator.validate(bad, at: location).map(\.description) == [
        "$.status: expected one of \"available\", \"pending\", \"sold\" (schemas.yaml#/Pet/properties/status), found \"lost\"",
        "$.id: expected a number >= 1 (schemas.yaml#/Pet/properties/id), found 0",
      ])
  }

  @Test func missingFilesAndOtherVersionsAreRefused() throws {
    #expect(throws: OpenAPILoadError.self) { try OpenAPIDocument.load(path: "/nonexistent/api.yaml") }
    do {
      _ = try OpenAPIDocument.parse("swagger: '1.2'\ninfo: {title: t, version: '1'}\npaths: {}")
      Issue.record("expected an error")
    } catch {
      #expect(error.message.contains("found swagger: \"1.2\""))
    }
  }

  /// An empty file is read (and refused as no document) and a folder is refused as unreadable. The empty
  /// file is `make fuzz`'s Fuzz/openapi-corpus/empty-document: reading it with `FileManager.contents`
  /// leaked 4 KiB each time (AddressSanitizer's report; the leak is inside FoundationEssentials).
  @Test func emptyFilesAndFoldersAreRefused() throws {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("openapi-empty-\(UUID())").path
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let empty = folder + "/openapi.yaml"
    #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
    for path in [empty, folder] {
      do {
        _ = try OpenAPIDocument.load(path: path)
        Issue.record("expected an error for \(path)")
      } catch {
        #expect(error.file == path)
        #expect(
          error.message
            == (path == empty
              ? "expected an OpenAPI document (an object), found null" : "cannot read the file"))
      }
    }
  }

  /// Swagger 2.0 is read as the OpenAPI 3.0 document it stands for: definitions, body and formData
  /// parameters, collectionFormat, produces/consumes, response examples per media type, security.
  @Test func swaggerTwoIsConverted() throws {
    let doc = try OpenAPIDocument.parse(
      #"""
      {"swagger": "2.0", "info": {"title": "t", "version": "1"}, "host": "api.example.com", "basePath": "/v1",
       "consumes": ["application/json"], "produces": ["application/json", "application/xml"],
       "securityDefinitions": {"basic": {"type": "basic"}, "key": {"type": "apiKey", "name": "X-Key", "in": "header"}},
       "paths": {"/pets/{id}": {"parameters": [{"name": "id", "in": "path", "required": true, "type": "integer"}],
         "get": {"parameters": [{"name": "tags", "in": "query", "type": "array", "items": {"type": "string"}, "collectionFormat": "pipes"}],
           "responses": {"200": {"description": "ok", "schema": {"$ref": "#/definitions/Pet"},
             "examples": {"application/json": {"id": 1, "name": "rex"}}, "headers": {"X-Rate": {"type": "integer", "x-example": 5}}}}},
         "put": {"parameters": [{"name": "pet", "in": "body", "required": true, "schema": {"$ref": "#/definitions/Pet"}}],
           "security": [{"basic": []}], "responses": {"204": {"description": "done"}}},
         "post": {"consumes": ["multipart/form-data"], "parameters": [{"name": "photo", "in": "formData", "type": "file", "required": true}],
           "responses": {"201": {"description": "made"}}}}},
       "definitions": {"Pet": {"type": "object", "required": ["name"], "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}}}}
      """#)
    #expect(doc.version == "3.0.3")
    #expect(doc.serverBasePaths == ["/v1"])
    let get = try #require(doc.operation(method: "GET", template: "/pets/{id}"))
    #expect(get.parameters.map(\.name) == ["id", "tags"])
    #expect(get.parameters[1].raw["style"]?.stringValue == "pipeDelimited")
    #expect(get.responses[0].content.map(\.name) == ["application/json", "application/xml"])
    #expect(get.responses[0].content[0].example?["name"]?.stringValue == "rex")
    #expect(get.responses[0].headers.first?.example == .number(JSONNumber(5)))
    let schema = try #require(get.responses[0].content[0].schemaLocation)
    #expect(
      doc.validator.validate(try JSONValue.parse(#"{"id": 1}"#), at: schema).map(\.schemaPath) == [
        "#/components/schemas/Pet"
      ])
    let put = try #require(doc.operation(method: "PUT", template: "/pets/{id}"))
    #expect(put.requestBody.map(\.name) == ["application/json"] && put.requestBodyRequired)
    let post = try #require(doc.operation(method: "POST", template: "/pets/{id}"))
    #expect(post.requestBody.map(\.name) == ["multipart/form-data"])
    #expect(doc.root["components"]?["securitySchemes"]?["basic"]?["scheme"]?.stringValue == "basic")
    // Pointers into the converted form translate to the file's own, the longest recorded prefix first
    // (the converted GET lists the path item's `id` before its own `tags`).
    for (converted, original) in [
      ("#/components/schemas/Pet/properties/id", "#/definitions/Pet/properties/id"),
      ("#/components/securitySchemes/key", "#/securityDefinitions/key"),
      (
        "#/paths/~1pets~1{id}/get/responses/200/content/application~1json/example",
        "#/paths/~1pets~1{id}/get/responses/200/examples/application~1json"
      ),
      (
        "#/paths/~1pets~1{id}/get/responses/200/content/application~1xml/schema/properties",
        "#/paths/~1pets~1{id}/get/responses/200/schema/properties"
      ),
      (
        "#/paths/~1pets~1{id}/get/responses/200/headers/X-Rate/example",
        "#/paths/~1pets~1{id}/get/responses/200/headers/X-Rate/x-example"
      ),
      ("#/paths/~1pets~1{id}/get/parameters/1/schema/items", "#/paths/~1pets~1{id}/get/parameters/0/items"),
      ("#/paths/~1pets~1{id}/parameters/0/schema", "#/paths/~1pets~1{id}/parameters/0"),
      (
        "#/paths/~1pets~1{id}/put/requestBody/content/application~1json/schema",
        "#/paths/~1pets~1{id}/put/parameters/0/schema"
      ),
      (
        "#/paths/~1pets~1{id}/post/requestBody/content/multipart~1form-data/schema/properties/photo",
        "#/paths/~1pets~1{id}/post/parameters/0"
      ),
      ("#/paths/~1a%20b/get", "#/paths/~1a%20b/get"),
    ] {
      #expect(doc.originalPointers(in: "(\(converted)): x") == "(\(original)): x")
    }
    #expect(
      doc.originalPointers(in: "#/components/schemas/Pet: not declared in components.securitySchemes")
        == "#/definitions/Pet: not declared in securityDefinitions")
  }
}

@Suite struct JSONSchemaValidatorTests {
  let validator = JSONSchemaValidator(document: .object(JSONObject()), dialect: .openAPI30)

  func violations(_ schema: String, _ value: String) throws -> [String] {
    validator.validate(try JSONValue.parse(value), schema: try JSONValue.parse(schema)).map(\.description)
  }

  @Test(arguments: [
    (#"{"type":"string"}"#, #""a""#, true), (#"{"type":"string"}"#, "1", false),
    (#"{"type":"integer"}"#, "1.0", true), (#"{"type":"integer"}"#, "1.5", false),
    (#"{"type":"string","nullable":true}"#, "null", true), (#"{"type":"string"}"#, "null", false),
    (#"{"type":["string","null"]}"#, "null", true), (#"{"enum":[1,"a"]}"#, "1.0", true),
    (#"{"enum":[1,"a"]}"#, #""b""#, false), (#"{"const":{"a":1}}"#, #"{"a":1}"#, true),
    (#"{"type":"string","format":"date-time"}"#, #""2024-02-29T10:20:30.5+01:00""#, true),
    (#"{"type":"string","format":"date-time"}"#, #""2023-02-29T10:20:30Z""#, false),
    (#"{"type":"string","format":"date"}"#, #""2024-12-31""#, true),
    (#"{"type":"string","format":"date"}"#, #""2024-13-01""#, false),
    (#"{"type":"string","format":"uuid"}"#, #""123e4567-e89b-12d3-a456-426614174000""#, true),
    (#"{"type":"string","format":"uuid"}"#, #""123e4567e89b12d3a456426614174000""#, false),
    (#"{"type":"string","format":"email"}"#, #""aiko@example.com""#, true),
    (#"{"type":"string","format":"email"}"#, #""aiko.example.com""#, false),
    (#"{"type":"string","format":"uri"}"#, #""https://example.com/a?b""#, true),
    (#"{"type":"string","format":"uri"}"#, #""/relative""#, false),
    (#"{"type":"string","format":"ipv6"}"#, #""2001:db8::1""#, true),
    (#"{"type":"string","format":"something-else"}"#, #""anything""#, true),
    (#"{"minimum":1,"maximum":10}"#, "10", true), (#"{"minimum":1,"maximum":10}"#, "10.5", false),
    (#"{"maximum":10,"exclusiveMaximum":true}"#, "10", false), (#"{"exclusiveMinimum":0}"#, "0", false),
    (#"{"multipleOf":0.5}"#, "2.5", true), (#"{"multipleOf":0.5}"#, "2.4", false),
    (#"{"type":"integer","format":"int32"}"#, "2147483648", false),
    (#"{"minLength":2,"maxLength":3}"#, #""é€""#, true), (#"{"maxLength":3}"#, #""abcd""#, false),
    (#"{"pattern":"^[a-z]+$"}"#, #""abc""#, true), (#"{"pattern":"^[a-z]+$"}"#, #""ab1""#, false),
    (#"{"items":{"type":"integer"},"minItems":1,"uniqueItems":true}"#, "[1,2]", true),
    (#"{"items":{"type":"integer"},"minItems":1,"uniqueItems":true}"#, "[1,1]", false),
    (#"{"items":{"type":"integer"}}"#, #"[1,"2"]"#, false),
    (
      #"{"required":["a"],"properties":{"a":{"type":"integer"}},"additionalProperties":false}"#, #"{"a":1}"#,
      true
    ),
    (
      #"{"required":["a"],"properties":{"a":{"type":"integer"}},"additionalProperties":false}"#,
      #"{"a":1,"b":2}"#, false
    ),
    (#"{"additionalProperties":{"type":"string"}}"#, #"{"x":1}"#, false),
    (#"{"allOf":[{"required":["a"]},{"required":["b"]}]}"#, #"{"a":1}"#, false),
    (#"{"anyOf":[{"type":"string"},{"type":"integer"}]}"#, "3", true),
    (#"{"oneOf":[{"type":"number"},{"type":"integer"}]}"#, "3", false),
    (#"{"oneOf":[{"type":"number"},{"type":"integer"}]}"#, "3.5", true),
    (#"{"not":{"type":"string"}}"#, #""x""#, false), ("true", "1", true), ("false", "1", false),
  ])
  func keyword(schema: String, value: String, valid: Bool) throws {
    #expect(try violations(schema, value).isEmpty == valid, "\(schema) against \(value)")
  }

  @Test func violationsNameTheInstanceAndSchemaPaths() throws {
    let doc = try OpenAPIDocument.load(path: usersDocument)
    let op = try #require(doc.operation(method: "GET", path: "/users/1")?.0)
    let location = try #require(op.responses.first?.content.first?.schemaLocation)
    let body: JSONValue = try .parse(
      #"{"code":0,"data":{"id":1,"name":"","email":42,"joined":"yesterday","extra":true},"info":null}"#)
    #expect(
      doc.validator.validate(body, at: location).map(\.description).sorted() == [
        "$.data.email: expected a string of format email (#/components/schemas/User/properties/email), found 42",
        "$.data.extra: expected no property extra (additionalProperties is false) (#/components/schemas/User), found true",
        "$.data.joined: expected a string of format date-time (#/components/schemas/User/properties/joined), found \"yesterday\"",
        "$.data.name: expected a string of at least 1 character (#/components/schemas/User/properties/name), found \"\"",
      ])
  }

  @Test func discriminatorChoosesTheBranch() throws {
    let doc = try OpenAPIDocument.load(path: usersDocument)
    let pet = SchemaLocation(tokens: ["components", "schemas", "Pet"])
    #expect(doc.validator.validate(try .parse(#"{"kind":"cat","name":"Tama","lives":9}"#), at: pet).isEmpty)
    #expect(
      doc.validator.validate(try .parse(#"{"kind":"dog","name":"Rex","lives":9}"#), at: pet).map(
        \.description) == [
          "$.goodBoy: expected property goodBoy (required) (#/components/schemas/Dog), found nothing"
        ])
    #expect(
      doc.validator.validate(try .parse(#"{"kind":"cow","name":"Bess"}"#), at: pet).map(\.description) == [
        "$.kind: expected property kind naming one of the schemas Cat, Dog (#/components/schemas/Pet), found \"cow\""
      ])
  }
}

@Suite struct ContainsCountTests {
  /// maxContains counts each item on its own: a remembered result for the array's path was reused for every
  /// item, so one matching item made all of them match (found by the value generator's property test).
  @Test func eachItemIsCheckedAgainstContains() throws {
    let validator = JSONSchemaValidator(
      schema: try .parse(
        #"{"type":"array","contains":{"properties":{"kind":{"const":"special"}}},"minContains":1,"maxContains":2}"#
      ))
    let two = #"[{"kind":"special"},{"kind":"special"},{"kind":"plain"}]"#
    let three = #"[{"kind":"special"},{"kind":"special"},{"kind":"special"}]"#
    #expect(validator.validate(try .parse(two)).isEmpty)
    #expect(validator.validate(try .parse(three)).count == 1)
    #expect(validator.validate(try .parse(#"[{"kind":"plain"}]"#)).count == 1)
  }
}

@Suite struct StandaloneSchemaTests {
  /// The form `matchesJsonSchema` uses: one schema document with its own definitions.
  @Test func standaloneSchemaWithDefinitions() throws {
    let validator = JSONSchemaValidator(
      schema: try .parse(
        ##"{"type": "object", "required": ["user"], "properties": {"user": {"$ref": "#/$defs/user"}}, "$defs": {"user": {"type": "object", "required": ["id"], "properties": {"id": {"type": "integer", "exclusiveMinimum": 0}}}}}"##
      ))
    #expect(validator.validate(try .parse(#"{"user": {"id": 1}}"#)).isEmpty)
    #expect(
      validator.validate(try .parse(#"{"user": {"id": 0}}"#)).map(\.description) == [
        "$.user.id: expected a number > 0 (#/$defs/user/properties/id), found 0"
      ])
  }
}
