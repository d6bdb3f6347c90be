// libFuzzer entry point for the OpenAPI loader and what works from a loaded document: `make fuzz` links it
// with the objects of MockServer's dependency closure. Any input is an OpenAPI 3.x or Swagger 2.0 document
// (JSON when its first non-blank character is `{`, YAML otherwise, as the loader decides). It is written to
// a private temporary folder of its own (made once with mkdtemp, nothing else in it) and loaded with
// `OpenAPIDocument.load(path:)`, the entry point `--openapi` and `import openapi` use, so `$ref`s to other
// files reach nothing but the document itself. A document that loads has its example warnings listed
// (`--openapi`'s start-up check), its stubs generated (`import openapi`) and parsed as fixture files are,
// the generated stubs linted against it (`lint --openapi`), and each operation's example request (from the
// stubs' `x-example-request`, or the path with every parameter as `1`) judged by the request validator
// (`--validate-requests`) and answered by the document (`--openapi`'s answers, with and without `Prefer`
// and `Accept`). Every schema the document's media types and components declare gets a generated example,
// validated against it with JSONSchemaValidator. Nothing may crash.

import Contracts
import Foundation
import HTTPCore
import JSONSchema
import Mappings
import MockJSON

/// The private folder the input is written to, and the document's path in it.
let fuzzFolder: String = {
  var template = Array((NSTemporaryDirectory() + "/openapi-fuzz.XXXXXX").utf8CString)
  guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
    fatalError("openapi fuzzer: cannot make a temporary folder")
  }
  let folder = String(cString: made)
  atexit {
    // Only the one file this fuzzer writes, then the folder it made.
    _ = unlink(fuzzDocumentPath)
    _ = rmdir((fuzzDocumentPath as NSString).deletingLastPathComponent)
  }
  return folder
}()
let fuzzDocumentPath = fuzzFolder + "/openapi.yaml"

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOpenAPI(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = UnsafeBufferPointer(start: data, count: size)
  guard FileManager.default.createFile(atPath: fuzzDocumentPath, contents: Data(bytes)) else {
    fatalError("openapi fuzzer: cannot write \(fuzzDocumentPath)")
  }
  guard let document = try? OpenAPIDocument.load(path: fuzzDocumentPath) else { return 0 }
  _ = document.title
  _ = OpenAPIExampleCheck.warnings(document)

  // `import openapi` and `--openapi`: the generated stubs, parsed as fixture files are, then linted.
  let generated = OpenAPIStubGenerator(document: document, seed: 7).generate()
  let context = StubParsingContext(makeID: { "fuzz" })
  var stubs: [StubMapping] = []
  // One entry per operation, in document order.
  var exampleRequests: [JSONValue?] = []
  for operation in generated {
    exampleRequests.append(operation.mappings.first?["metadata"]?["x-example-request"])
    for mapping in operation.mappings {
      if let stub = StubParser.parse(mapping, file: "openapi:fuzz", context: context).0 { stubs.append(stub) }
    }
  }
  let linter = OpenAPILinter(document: document)
  _ = linter.check(stubs)

  // One example request per operation, judged and answered.
  let validator = OpenAPIRequestValidator(document: document)
  let mock = OpenAPIMock(document: document, seed: 7)
  for (k, op) in document.operations.enumerated() {
    let example = k < exampleRequests.count ? exampleRequests[k] : nil
    let method = example?["method"]?.stringValue ?? op.method
    let target = example?["url"]?.stringValue ?? placeholderTarget(op.path)
    var headers = HTTPHeaders()
    if let given = example?["headers"]?.objectValue {
      for member in given { headers.add(name: member.key, value: member.value.stringValue ?? "") }
    }
    let body = Array((example?["body"]?.stringValue ?? "").utf8)
    _ = validator.violations(method: method, target: target, headers: headers, body: body)
    _ = mock.check(method: method, target: target, headers: headers, body: body)
    _ = mock.respond(method: method, target: target, headers: headers, body: body)
    // The first few operations again with `Prefer` naming each declared status, and with an `Accept`.
    guard k < 4 else { continue }
    for response in op.responses.prefix(4) {
      var preferring = headers
      preferring.add(name: "Prefer", value: "code=\(Int(response.status) ?? 500)")
      preferring.add(name: "Accept", value: "application/xml;q=0.5, text/*")
      _ = mock.respond(method: method, target: target, headers: preferring, body: body)
    }
  }

  // JSON Schema: an example generated for each schema the document declares, validated against it.
  var sampler = SchemaSampler(document: document, seed: 7)
  var locations: [SchemaLocation] = []
  for op in document.operations {
    locations += op.requestBody.compactMap(\.schemaLocation)
    locations += op.responses.flatMap { $0.content.compactMap(\.schemaLocation) }
    locations += op.parameters.compactMap(\.schemaLocation)
  }
  for member in document.root["components"]?["schemas"]?.objectValue ?? JSONObject() {
    locations.append(SchemaLocation(tokens: ["components", "schemas", member.key]))
  }
  for location in locations.prefix(32) {
    guard let value = sampler.sample(at: location) else { continue }
    _ = document.validator.validate(value, at: location)
    if let schema = document.schema(at: location) {
      // `matchesJsonSchema`'s standalone reading of the same schema.
      _ = JSONSchemaValidator(schema: schema).validate(value)
    }
  }
  return 0
}

/// `/pets/{petId}` → `/pets/1`.
func placeholderTarget(_ path: String) -> String {
  var out = ""
  var inside = false
  for c in path {
    if c == "{" {
      inside = true
      out += "1"
    } else if c == "}" {
      inside = false
    } else if !inside {
      out.append(c)
    }
  }
  return out.hasPrefix("/") ? out : "/" + out
}
