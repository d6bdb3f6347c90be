import JSONSchema
import MockJSON

/// The document's own examples against their schemas: each response and request body media type's
/// `example` and named `examples`, each parameter's and response header's `example`, and each named
/// schema's (and its properties') `example` and `examples`. A wrong example
/// would be served (or sent by `verify`) as it is, so `--openapi` and `lint --openapi` report each as a
/// warning naming its JSON pointer in the document:
/// `#/paths/~1pets/get/responses/200/content/application~1json/example $.id: expected an integer
/// (#/components/schemas/Pet/properties/id), found "x"`. Security schemes mockserver does not enforce
/// (`mutualTLS`, unknown types, undeclared names) are warnings too (``OpenAPIMock/securityWarnings(_:)``).
package enum OpenAPIExampleCheck {
  package static func warnings(_ document: OpenAPIDocument) -> [String] {
    var out: [String] = []
    func check(_ value: JSONValue, at pointer: SchemaLocation, schema: SchemaLocation?) {
      guard let schema else { return }
      for v in document.validator.validate(value, at: schema) {
        out.append("\(pointer)\(v.instancePath == "$" ? "" : " " + v.instancePath): \(v.message)")
      }
    }
    func media(_ m: OpenAPIMediaType, _ location: SchemaLocation) {
      // XML and text examples written as strings are the answer's text, not a value of the schema.
      if !m.isJSON, case .string = m.example ?? .null { return }
      let at = location.appending(m.name)
      if let e = m.example { check(e, at: at.appending("example"), schema: m.schemaLocation) }
      for (name, value) in m.examples {
        if !m.isJSON, case .string = value { continue }
        check(value, at: at.appending("examples", name, "value"), schema: m.schemaLocation)
      }
    }
    // Named schemas' own examples and their properties' (served as the static value of the schema).
    for member in document.root["components"]?["schemas"]?.objectValue ?? JSONObject() {
      let location = SchemaLocation(tokens: ["components", "schemas", member.key])
      var schemas = [(member.value, location)]
      for p in member.value["properties"]?.objectValue ?? JSONObject() {
        schemas.append((p.value, location.appending("properties", p.key)))
      }
      for (schema, at) in schemas where schema["$ref"] == nil {
        if let e = schema["example"] { check(e, at: at.appending("example"), schema: at) }
        for (k, e) in (schema["examples"]?.arrayValue ?? []).enumerated() {
          check(e, at: at.appending("examples", String(k)), schema: at)
        }
      }
    }
    for op in document.operations {
      for p in op.parameters {
        if let e = p.raw["example"], var at = p.schemaLocation, at.tokens.last == "schema" {
          at.tokens.removeLast()
          check(e, at: at.appending("example"), schema: p.schemaLocation)
        }
      }
      for m in op.requestBody { media(m, op.location.appending("requestBody", "content")) }
      for r in op.responses {
        for m in r.content { media(m, r.location.appending("content")) }
        for h in r.headers {
          if let e = h.example {
            check(e, at: r.location.appending("headers", h.name, "example"), schema: h.schemaLocation)
          }
        }
      }
    }
    // A Swagger 2.0 document's pointers name the user's file, not its OpenAPI 3 form.
    return (out + OpenAPIMock.securityWarnings(document)).map(document.originalPointers(in:))
  }
}
