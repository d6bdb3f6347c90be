import Contracts
import Foundation
import HTTPCore
import JSONSchema
import MockJSON
import MockServerCLI
import MockServerTesting
import TestSupport
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
      decoding: try RawClient.exchange(port: port, Array(text.utf8), timeout: 20), as: UTF8.self)
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

  /// A document whose example breaks its own schema (`123` for an object) and a deprecated parameter.
  static let brokenExample = #"""
    openapi: 3.0.0
    info: {title: Broken, version: '1'}
    paths:
      /pets:
        get:
          parameters:
            - {name: old, in: query, deprecated: true, schema: {type: string}}
          responses:
            '200':
              description: ok
              content:
                application/json:
                  schema: {type: object}
                  example: 123
      /fine:
        get:
          responses:
            '200': {description: ok, content: {application/json: {example: {ok: true}}}}
    """#

  func header(_ head: String, _ name: String) -> String? {
    head.components(separatedBy: "\r\n").first { $0.lowercased().hasPrefix(name.lowercased() + ":") }
      .map { String($0.dropFirst(name.count + 1)).trimmingCharacters(in: .whitespaces) }
  }

  /// Prism's CORS under --openapi, on by default: the document's answers carry it and preflights are
  /// answered 204 before the document; fixture stubs and the admin API do not get it.
  @Test func documentAnswersCarryPrismsCORSByDefault() throws {
    let folder = NSTemporaryDirectory() + "openapi-cors-" + UUID().uuidString
    try FileManager.default.createDirectory(
      atPath: folder + "/fixtures/mappings", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data(OpenAPIServingTests.brokenExample.utf8).write(to: URL(fileURLWithPath: folder + "/doc.yaml"))
    try Data(#"{"request":{"url":"/stubbed"},"response":{"status":200,"body":"stub"}}"#.utf8).write(
      to: URL(fileURLWithPath: folder + "/fixtures/mappings/stub.json"))
    let server = try MockServerProcess.launch(arguments: [
      "--openapi", folder + "/doc.yaml", "--validate-requests", "--fixtures", folder + "/fixtures",
      "--no-watch",
    ])
    defer { server.stop() }
    let origin = "Origin: http://app.test\r\n"
    let answer = try send(server.port, "GET /fine HTTP/1.1\r\n" + origin)
    #expect(answer.0 == 200, "\(answer)")
    #expect(header(answer.1, "Access-Control-Allow-Origin") == "http://app.test", "\(answer)")
    #expect(header(answer.1, "Access-Control-Allow-Credentials") == "true", "\(answer)")
    #expect(header(answer.1, "Access-Control-Allow-Headers") == "*", "\(answer)")
    #expect(header(answer.1, "Access-Control-Expose-Headers") == "*", "\(answer)")
    let noOrigin = try send(server.port, "GET /nowhere HTTP/1.1\r\n")
    #expect(noOrigin.0 == 404 && header(noOrigin.1, "Access-Control-Allow-Origin") == "*", "\(noOrigin)")
    let preflight = try send(
      server.port,
      "OPTIONS /fine HTTP/1.1\r\n" + origin
        + "Access-Control-Request-Method: PUT\r\nAccess-Control-Request-Headers: x-a\r\n")
    #expect(preflight.0 == 204, "\(preflight)")
    #expect(header(preflight.1, "Access-Control-Allow-Methods") == "PUT", "\(preflight)")
    #expect(header(preflight.1, "Access-Control-Allow-Headers") == "x-a", "\(preflight)")
    // A fixture stub keeps its own CORS rules (none here); the admin API never gets the document's.
    let stub = try send(server.port, "GET /stubbed HTTP/1.1\r\n" + origin)
    #expect(stub.0 == 200 && header(stub.1, "Access-Control-Allow-Origin") == nil, "\(stub)")
    let admin = try send(server.port, "GET /__admin/mappings HTTP/1.1\r\n" + origin)
    #expect(header(admin.1, "Access-Control-Allow-Origin") == nil, "\(admin)")
    // A deprecated parameter is served, and listed in sl-violations as Prism's warning.
    let deprecated = try send(server.port, "GET /fine HTTP/1.1\r\n")
    #expect(header(deprecated.1, "sl-violations") == nil, "\(deprecated)")
    let warned = try send(server.port, "GET /pets?old=1 HTTP/1.1\r\n")
    #expect(warned.0 == 200 && warned.2 == "123", "\(warned)")
    #expect(
      header(warned.1, "sl-violations")?.contains(
        #"{"location":["request","query","old"],"severity":"Warning","code":"deprecated""#) == true,
      "\(warned)")
  }

  /// `--errors`: an answer that breaks its own schema is a 500 listing why; `--openapi-cors false` turns
  /// CORS off, so a preflight goes to the document (405: no `options` operation).
  @Test func errorsTurnABrokenAnswerInto500() throws {
    let folder = NSTemporaryDirectory() + "openapi-errors-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data(OpenAPIServingTests.brokenExample.utf8).write(to: URL(fileURLWithPath: folder + "/doc.yaml"))
    let server = try MockServerProcess.launch(arguments: [
      "--openapi", folder + "/doc.yaml", "--errors", "--openapi-cors", "false", "--fixtures",
      folder + "/none",
      "--no-watch",
    ])
    defer { server.stop() }
    let broken = try send(server.port, "GET /pets HTTP/1.1\r\nOrigin: http://app.test\r\n")
    #expect(broken.0 == 500, "\(broken)")
    #expect(header(broken.1, "Content-Type") == "application/problem+json", "\(broken)")
    #expect(
      broken.2.contains(#""validation":[{"location":["response","body"],"severity":"Error","code":"type""#))
    #expect(header(broken.1, "sl-violations")?.hasPrefix(#"[{"location":["response","body"]"#) == true)
    #expect(header(broken.1, "Access-Control-Allow-Origin") == nil, "\(broken)")
    let fine = try send(server.port, "GET /fine HTTP/1.1\r\n")
    #expect(fine.0 == 200 && fine.2 == #"{"ok":true}"# && header(fine.1, "sl-violations") == nil, "\(fine)")
    let preflight = try send(
      server.port,
      "OPTIONS /fine HTTP/1.1\r\nOrigin: http://app.test\r\nAccess-Control-Request-Method: GET\r\n")
    #expect(preflight.0 == 405, "\(preflight)")
  }

  /// `--validate-responses` checks the document's own answers too: one that breaks its schema is served as
  /// written, listed in sl-violations and named in the log line.
  @Test func validateResponsesChecksTheDocumentsAnswers() throws {
    let folder = NSTemporaryDirectory() + "openapi-answers-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data(OpenAPIServingTests.brokenExample.utf8).write(to: URL(fileURLWithPath: folder + "/doc.yaml"))
    let server = try MockServerProcess.launch(arguments: [
      "--openapi", folder + "/doc.yaml", "--validate-responses", "--fixtures", folder + "/none", "--no-watch",
    ])
    defer { server.stop() }
    let broken = try send(server.port, "GET /pets HTTP/1.1\r\n")
    #expect(broken.0 == 200 && broken.2 == "123", "\(broken)")
    #expect(
      header(broken.1, "sl-violations")?.hasPrefix(
        #"[{"location":["response","body"],"severity":"Error","code":"type","message":"Response body: expected an object"#
      )
        == true, "\(broken)")
    let fine = try send(server.port, "GET /fine HTTP/1.1\r\n")
    #expect(fine.0 == 200 && header(fine.1, "sl-violations") == nil, "\(fine)")
    // The log line (standard error, read in the background) names the violation.
    let logged = "GET /pets 200 openapi"
    #expect(eventually { server.standardErrorText.contains(logged) })
    let line = server.standardErrorText.split(separator: "\n").first { $0.hasPrefix(logged) } ?? ""
    #expect(
      line.contains("violations: response body: Response body: expected an object"),
      "\(server.standardErrorText)")
  }

  /// `--errors` and `--openapi-cors` (Prism's `--cors`) parse as switches and need `--openapi`.
  @Test func prismsFlagsParse() throws {
    let defaults = try CommandLineOptions.parse(["--openapi", "x.yaml"])
    #expect(defaults.openAPICORS && !defaults.answerViolationsAreErrors)
    let o = try CommandLineOptions.parse(["--openapi", "x.yaml", "--errors", "--openapi-cors", "false"])
    #expect(o.answerViolationsAreErrors && !o.openAPICORS)
    #expect(try !CommandLineOptions.parse(["--openapi", "x.yaml", "--cors=false"]).openAPICORS)
    #expect(throws: CommandLineOptions.UsageError.self) { try CommandLineOptions.parse(["--errors"]) }
    #expect(throws: CommandLineOptions.UsageError.self) { try CommandLineOptions.parse(["--cors=false"]) }
    #expect(
      CommandLineOptions.helpText.contains("--errors")
        && CommandLineOptions.helpText.contains("--openapi-cors"))
  }

  static let unsupportedSecurity = #"""
    openapi: 3.1.0
    info: {title: Secure, version: '1'}
    components:
      securitySchemes:
        mtls: {type: mutualTLS}
        token: {type: http, scheme: bearer}
    paths:
      /mtls:
        get:
          security: [{mtls: []}]
          responses: {'200': {description: ok, content: {application/json: {example: {ok: 1}}}}}
      /either:
        get:
          security: [{mtls: []}, {token: []}]
          responses: {'200': {description: ok, content: {application/json: {example: {ok: 2}}}}}
      /ghost:
        get:
          security: [{ghost: []}]
          responses: {'200': {description: ok, content: {application/json: {example: {ok: 3}}}}}
    """#

  /// A security scheme the validator does not enforce (mutualTLS, an undeclared name) is a start-up and
  /// lint warning naming its JSON pointer, and is never silently satisfied: alone it serves the request
  /// with Prism's warning in sl-violations; beside an enforced alternative that fails, it is a 401.
  @Test func unsupportedSecuritySchemesAreWarnedAboutAndNotSilentlySatisfied() async throws {
    let folder = NSTemporaryDirectory() + "openapi-security-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let spec = folder + "/doc.yaml"
    try Data(OpenAPIServingTests.unsupportedSecurity.utf8).write(to: URL(fileURLWithPath: spec))
    let (status, lint) = try await run(
      MockServerProcess.defaultBinary(), ["lint", "--openapi", spec, folder, "--allow-empty"])
    #expect(status == 0, "\(lint)")
    #expect(
      lint.contains(
        "#/components/securitySchemes/mtls: security scheme mtls (type mutualTLS) is not enforced"))
    #expect(
      lint.contains("#/paths/~1ghost/get/security/0/ghost: security scheme ghost is not declared"), "\(lint)")
    #expect(!lint.contains("securitySchemes/token"), "\(lint)")
    let server = try MockServerProcess.launch(arguments: [
      "--openapi", spec, "--validate-requests", "--fixtures", folder + "/none", "--no-watch",
    ])
    defer { server.stop() }
    // Standard error is read in the background: wait for the start-up lines.
    #expect(eventually { server.standardErrorText.contains("securitySchemes/mtls") })
    #expect(
      server.standardErrorText.contains("warning: #/components/securitySchemes/mtls"),
      "\(server.standardErrorText)")
    let mtls = try send(server.port, "GET /mtls HTTP/1.1\r\n")
    #expect(mtls.0 == 200 && mtls.2 == #"{"ok":1}"#, "\(mtls)")
    #expect(
      header(mtls.1, "sl-violations")?.contains(#""location":["request"],"severity":"Warning""#) == true
        && header(mtls.1, "sl-violations")?.contains("mtls (type mutualTLS)") == true, "\(mtls)")
    let ghost = try send(server.port, "GET /ghost HTTP/1.1\r\n")
    #expect(
      ghost.0 == 200 && header(ghost.1, "sl-violations")?.contains("ghost (not declared") == true, "\(ghost)")
    let refused = try send(server.port, "GET /either HTTP/1.1\r\n")
    #expect(refused.0 == 401 && refused.2.contains("mtls (type mutualTLS): not enforced"), "\(refused)")
    let bearer = try send(server.port, "GET /either HTTP/1.1\r\nAuthorization: Bearer abc\r\n")
    #expect(bearer.0 == 200 && header(bearer.1, "sl-violations") == nil, "\(bearer)")
  }

  /// A Swagger 2.0 document whose examples break its definitions, and with a security definition
  /// mockserver does not enforce.
  static let brokenSwagger = #"""
    swagger: '2.0'
    info: {title: Broken pets, version: '1'}
    securityDefinitions:
      inBody: {type: apiKey, name: key, in: body}
    paths:
      /pets:
        get:
          produces: [application/json]
          parameters:
            - {name: limit, in: query, type: integer, x-example: many}
          responses:
            '200':
              description: ok
              schema: {$ref: '#/definitions/Pet'}
              examples:
                application/json: {id: x, name: rex}
        post:
          parameters:
            - in: body
              name: pet
              schema: {$ref: '#/definitions/Pet'}
              x-examples: {application/json: {id: 1, name: 2}}
          responses:
            '201': {description: made}
    definitions:
      Pet:
        type: object
        properties:
          id: {type: integer}
          name: {type: string, example: 7}
        example: {id: 1, name: rex, born: 2020}
        additionalProperties: false
    """#

  /// Warnings about a Swagger 2.0 document name pointers into the user's file, not into the OpenAPI 3
  /// form it is converted to: `responses.examples` by media type, `definitions` (a schema's own
  /// `example` and a property's), a body parameter's `x-examples`, a query parameter's `x-example`, and
  /// `securityDefinitions`.
  @Test func swaggerWarningsNameTheOriginalPointers() async throws {
    let folder = NSTemporaryDirectory() + "openapi-swagger-warnings-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let spec = folder + "/pets.yaml"
    try Data(OpenAPIServingTests.brokenSwagger.utf8).write(to: URL(fileURLWithPath: spec))
    let (status, lint) = try await run(
      MockServerProcess.defaultBinary(), ["lint", "--openapi", spec, folder, "--allow-empty"])
    #expect(status == 0, "\(lint)")
    for expected in [
      #"#/paths/~1pets/get/responses/200/examples/application~1json $.id: expected an integer "#
        + #"(#/definitions/Pet/properties/id), found "x""#,
      #"#/paths/~1pets/get/parameters/0/x-example: expected an integer (#/paths/~1pets/get/parameters/0)"#,
      #"#/paths/~1pets/post/parameters/0/x-examples/application~1json $.name: expected a string "#
        + #"(#/definitions/Pet/properties/name)"#,
      "#/securityDefinitions/inBody: security scheme inBody (apiKey in body) is not enforced",
      "#/definitions/Pet/example $.born: ",
      #"#/definitions/Pet/properties/name/example: expected a string (#/definitions/Pet/properties/name)"#,
    ] {
      #expect(lint.contains(expected), "\(expected) in \(lint)")
    }
    #expect(!lint.contains("components"), "\(lint)")
  }

  /// A multipart upload: a binary file part (`format: binary`, at most 16 bytes), a part whose
  /// `encoding.contentType` says it is a PNG image, and a text part.
  static let upload = #"""
    openapi: 3.0.3
    info: {title: Upload, version: '1'}
    paths:
      /photos:
        post:
          requestBody:
            required: true
            content:
              multipart/form-data:
                schema:
                  type: object
                  required: [file, caption]
                  properties:
                    file: {type: string, format: binary, maxLength: 16}
                    thumbnail: {type: string}
                    caption: {type: string, maxLength: 10}
                encoding:
                  thumbnail: {contentType: 'image/png, image/jpeg'}
          responses:
            '201': {description: stored, content: {application/json: {example: {stored: true}}}}
    """#

  /// Under --validate-requests a file part is bytes: PNG-like content that is not UTF-8 passes, counted in
  /// bytes against `maxLength`; a part whose Content-Type is not its `encoding.contentType` is a 422
  /// naming the part.
  @Test func multipartFilePartsAreBytesAndTheirDeclaredTypeIsChecked() throws {
    let folder = NSTemporaryDirectory() + "openapi-multipart-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data(OpenAPIServingTests.upload.utf8).write(to: URL(fileURLWithPath: folder + "/upload.yaml"))
    let server = try MockServerProcess.launch(arguments: [
      "--openapi", folder + "/upload.yaml", "--validate-requests", "--fixtures", folder + "/none",
      "--allow-empty", "--no-watch",
    ])
    defer { server.stop() }
    // Not UTF-8: the PNG signature's 0x89, a lone 0xFF and 0xC3 followed by no continuation byte.
    let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A, 0xFF, 0xC3, 0x28, 0x00, 0xFE]
    func post(_ parts: [(name: String, type: String?, bytes: [UInt8])]) throws -> (Int, String) {
      var body: [UInt8] = []
      for part in parts {
        var head = "--XyZ\r\nContent-Disposition: form-data; name=\"\(part.name)\""
        if let type = part.type { head += "; filename=\"x\"\r\nContent-Type: \(type)" }
        body += Array((head + "\r\n\r\n").utf8) + part.bytes + Array("\r\n".utf8)
      }
      body += Array("--XyZ--\r\n".utf8)
      let head =
        "POST /photos HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
        + "Content-Type: multipart/form-data; boundary=XyZ\r\nContent-Length: \(body.count)\r\n\r\n"
      let reply = String(
        decoding: try RawClient.exchange(port: server.port, Array(head.utf8) + body, timeout: 20),
        as: UTF8.self)
      return (Int(reply.split(separator: " ").dropFirst().first ?? "") ?? 0, reply)
    }
    let caption = (name: "caption", type: String?.none, bytes: Array("a cat".utf8))
    let stored = try post([(name: "file", type: "image/png", bytes: png), caption])
    #expect(stored.0 == 201 && stored.1.hasSuffix(#"{"stored":true}"#), "\(stored.1)")
    let withThumbnail = try post([
      (name: "file", type: "image/png", bytes: png), (name: "thumbnail", type: "image/jpeg", bytes: png),
      caption,
    ])
    #expect(withThumbnail.0 == 201, "\(withThumbnail.1)")
    // 20 bytes (and fewer characters once decoded): maxLength 16 counts bytes.
    let tooLong = try post([(name: "file", type: "image/png", bytes: png + png.prefix(7)), caption])
    #expect(
      tooLong.0 == 422 && tooLong.1.contains(#""location":["body","file"]"#)
        && tooLong.1.contains("maxLength"), "\(tooLong.1)")
    let wrongType = try post([
      (name: "file", type: "image/png", bytes: png), (name: "thumbnail", type: "image/gif", bytes: png),
      caption,
    ])
    #expect(
      wrongType.0 == 422 && wrongType.1.contains(#""location":["body","thumbnail"]"#)
        && wrongType.1.contains(#"body part thumbnail: Content-Type \"image/gif\" is not"#), "\(wrongType.1)")
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
