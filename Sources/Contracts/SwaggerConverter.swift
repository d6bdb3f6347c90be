import JSONSchema
import MockJSON

/// Reads a Swagger 2.0 document as the OpenAPI 3.0 document it stands for, so that serving, validation,
/// import and lint have one model. Converted at load time:
/// - `definitions` → `components.schemas`, `parameters` → `components.parameters` (non-body ones),
///   `responses` → `components.responses`, `securityDefinitions` → `components.securitySchemes`
///   (`basic` → `http`/`basic`, `apiKey` as it is, `oauth2` with its flow); every `$ref` rewritten to match
///   (`#/definitions/Pet` → `#/components/schemas/Pet`);
/// - `host`, `basePath` and `schemes` → `servers`;
/// - a parameter `in: body` → `requestBody` with the operation's (else the document's) `consumes` media types
///   (`application/json` when none); `in: formData` parameters → one object schema under
///   `application/x-www-form-urlencoded` and/or `multipart/form-data` (a `type: file` is a binary string);
/// - other parameters' `type`, `format`, `items`, `enum`, bounds, `pattern`, `default` → `schema`;
///   `collectionFormat` → `style`/`explode` (`csv` → `form`/`simple` without explode, `ssv` →
///   `spaceDelimited`, `pipes` → `pipeDelimited`, `multi` → `form` exploded); `tsv` is kept as
///   `x-collectionFormat` and read as tabs;
/// - a response's `schema` → `content` for each `produces` media type (the operation's, else the document's,
///   else `application/json`), its `examples` (by media type) → that media type's `example`, its `headers`
///   → header objects with a `schema`.
///
/// As it converts it records where each converted part came from (``SwaggerPointerMap``), so that
/// messages about the document name pointers into the user's file (`#/definitions/Pet`, not
/// `#/components/schemas/Pet`).
package enum SwaggerConverter {
  /// True for a `swagger: "2.0"` document.
  package static func isSwagger2(_ root: JSONValue) -> Bool {
    root["swagger"]?.stringValue?.hasPrefix("2") ?? false
  }

  /// The OpenAPI 3.0 form of a Swagger 2.0 document.
  package static func convert(_ root: JSONValue) -> JSONValue { convertWithPointers(root).0 }

  /// The OpenAPI 3.0 form of a Swagger 2.0 document and where its parts came from.
  package static func convertWithPointers(_ root: JSONValue) -> (JSONValue, SwaggerPointerMap) {
    var map = SwaggerPointerMap()
    let swagger = rewriteReferences(root)
    var out: [(String, JSONValue)] = [("openapi", .string("3.0.3"))]
    out.append(
      (
        "info",
        swagger["info"] ?? .object(JSONObject(pairs: [("title", .string("")), ("version", .string(""))]))
      ))
    if let host = swagger["host"]?.stringValue {
      let scheme = swagger["schemes"]?.arrayValue?.first?.stringValue ?? "http"
      let base = swagger["basePath"]?.stringValue ?? ""
      out.append(
        ("servers", .array([.object(JSONObject(pairs: [("url", .string("\(scheme)://\(host)\(base)"))]))])))
    } else if let base = swagger["basePath"]?.stringValue, base != "/" {
      out.append(("servers", .array([.object(JSONObject(pairs: [("url", .string(base))]))])))
    }
    let consumes = strings(swagger["consumes"])
    let produces = strings(swagger["produces"])
    let sharedParameters = swagger["parameters"]?.objectValue ?? JSONObject()
    var paths: [(String, JSONValue)] = []
    for member in swagger["paths"]?.objectValue ?? JSONObject() {
      guard let item = member.value.objectValue else {
        paths.append((member.key, member.value))
        continue
      }
      var converted: [(String, JSONValue)] = []
      let itemLocation = ["paths", member.key]
      let itemParameters = (item["parameters"]?.arrayValue ?? []).enumerated().map {
        ($0.element, itemLocation + ["parameters", String($0.offset)])
      }
      for field in item {
        if OpenAPIDocument.methods.contains(field.key), let op = field.value.objectValue {
          converted.append(
            (
              field.key,
              operation(
                op, at: itemLocation + [field.key], inherited: itemParameters, shared: sharedParameters,
                consumes: consumes, produces: produces, map: &map)
            ))
        } else if field.key == "parameters" {
          let plain = itemParameters.filter {
            resolve($0.0, sharedParameters)["in"]?.stringValue.map { $0 != "body" && $0 != "formData" }
              ?? true
          }
          for (i, p) in plain.enumerated() {
            mapParameter(p.0, converted: itemLocation + ["parameters", String(i)], original: p.1, map: &map)
          }
          if !plain.isEmpty { converted.append(("parameters", .array(plain.map { parameter($0.0) }))) }
        } else {
          converted.append((field.key, field.value))
        }
      }
      paths.append((member.key, .object(JSONObject(pairs: converted))))
    }
    out.append(("paths", .object(JSONObject(pairs: paths))))
    var components: [(String, JSONValue)] = []
    if let definitions = swagger["definitions"] {
      components.append(("schemas", definitions))
      map.add(["components", "schemas"], ["definitions"])
    }
    if let params = swagger["parameters"]?.objectValue {
      let plain = params.members.filter {
        $0.value["in"]?.stringValue != "body" && $0.value["in"]?.stringValue != "formData"
      }
      for p in plain {
        mapParameter(
          p.value, converted: ["components", "parameters", p.key], original: ["parameters", p.key], map: &map)
      }
      if !plain.isEmpty {
        components.append(
          ("parameters", .object(JSONObject(plain.map { .init(key: $0.key, value: parameter($0.value)) }))))
      }
    }
    if let responses = swagger["responses"]?.objectValue {
      components.append(
        (
          "responses",
          convertResponses(
            responses, converted: ["components", "responses"], original: ["responses"], produces: produces,
            map: &map)
        ))
    }
    if let schemes = swagger["securityDefinitions"]?.objectValue {
      map.add(["components", "securitySchemes"], ["securityDefinitions"])
      components.append(
        (
          "securitySchemes",
          .object(JSONObject(schemes.members.map { .init(key: $0.key, value: securityScheme($0.value)) }))
        ))
    }
    if !components.isEmpty { out.append(("components", .object(JSONObject(pairs: components)))) }
    for key in ["security", "tags", "externalDocs"] {
      if let value = swagger[key] { out.append((key, value)) }
    }
    for member in swagger.objectValue ?? JSONObject() where member.key.hasPrefix("x-") {
      out.append((member.key, member.value))
    }
    return (.object(JSONObject(pairs: out)), map)
  }

  static func strings(_ value: JSONValue?) -> [String] { value?.arrayValue?.compactMap(\.stringValue) ?? [] }

  /// `#/definitions/X` → `#/components/schemas/X`, `#/responses/X` → `#/components/responses/X`,
  /// `#/parameters/X` → `#/components/parameters/X`, everywhere in the document.
  static func rewriteReferences(_ value: JSONValue) -> JSONValue {
    switch value {
    case .object(let o):
      return .object(
        JSONObject(
          o.members.map { m in
            if m.key == "$ref", case .string(let ref) = m.value {
              return .init(key: m.key, value: .string(rewrite(ref)))
            }
            return .init(key: m.key, value: rewriteReferences(m.value))
          }))
    case .array(let a): return .array(a.map(rewriteReferences))
    default: return value
    }
  }

  static func rewrite(_ ref: String) -> String {
    guard let hash = ref.firstIndex(of: "#") else { return ref }
    let file = ref[..<hash]
    let pointer = ref[ref.index(after: hash)...]
    for (old, new) in [
      ("/definitions/", "/components/schemas/"), ("/responses/", "/components/responses/"),
      ("/parameters/", "/components/parameters/"),
    ]
    where pointer.hasPrefix(old) {
      return file + "#" + new + pointer.dropFirst(old.count)
    }
    return ref
  }

  /// A `#/components/parameters/X` reference (already rewritten) resolved against the document's
  /// `parameters`, else the value itself.
  static func resolve(_ value: JSONValue, _ shared: JSONObject) -> JSONValue {
    if let ref = value["$ref"]?.stringValue, ref.hasPrefix("#/components/parameters/") {
      let name = String(ref.dropFirst("#/components/parameters/".count))
        .replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
      return shared[name] ?? value
    }
    return value
  }

  static let schemaKeywords = [
    "type", "format", "items", "enum", "default", "maximum", "exclusiveMaximum", "minimum",
    "exclusiveMinimum",
    "maxLength", "minLength", "pattern", "maxItems", "minItems", "uniqueItems", "multipleOf",
  ]

  /// The schema a non-body Swagger parameter (or header, or `items`) describes.
  static func schema(of p: JSONValue) -> JSONValue {
    var fields: [(String, JSONValue)] = []
    for key in schemaKeywords {
      guard var value = p[key] else { continue }
      if key == "items" { value = schema(of: value) }
      if key == "type", value.stringValue == "file" {
        fields.append(("type", .string("string")))
        fields.append(("format", .string("binary")))
        continue
      }
      fields.append((key, value))
    }
    if p["format"]?.stringValue == "byte", p["pattern"] == nil {
      // As Prism's converter: a base64 text (the `byte` format checks the rest).
      fields.append(("pattern", .string(#"^[\w\d+\/=]*$"#)))
    }
    return .object(JSONObject(pairs: fields))
  }

  /// A non-body parameter in OpenAPI 3 form.
  static func parameter(_ p: JSONValue) -> JSONValue {
    guard let object = p.objectValue, object["$ref"] == nil else { return p }
    var fields: [(String, JSONValue)] = []
    for key in ["name", "in", "description", "required", "allowEmptyValue", "deprecated"] {
      if let value = object[key] { fields.append((key, value)) }
    }
    if let example = object["x-example"] { fields.append(("example", example)) }
    fields.append(("schema", schema(of: p)))
    if object["type"]?.stringValue == "array" {
      let place = object["in"]?.stringValue ?? "query"
      switch object["collectionFormat"]?.stringValue ?? "csv" {
      case "multi":
        fields.append(("style", .string("form")))
        fields.append(("explode", .bool(true)))
      case "ssv":
        fields.append(("style", .string("spaceDelimited")))
        fields.append(("explode", .bool(false)))
      case "pipes":
        fields.append(("style", .string("pipeDelimited")))
        fields.append(("explode", .bool(false)))
      case "tsv":
        fields.append(("x-collectionFormat", .string("tsv")))
        fields.append(("explode", .bool(false)))
      default:
        fields.append(("style", .string(place == "query" || place == "cookie" ? "form" : "simple")))
        fields.append(("explode", .bool(false)))
      }
    }
    for member in object where member.key.hasPrefix("x-") && member.key != "x-example" {
      fields.append((member.key, member.value))
    }
    return .object(JSONObject(pairs: fields))
  }

  /// Records where a converted non-body parameter came from: its `schema` is the parameter's own fields,
  /// its `example` its `x-example`.
  static func mapParameter(
    _ raw: JSONValue, converted: [String], original: [String], map: inout SwaggerPointerMap
  ) {
    map.add(converted, original)
    guard raw["$ref"] == nil else { return }
    map.add(converted + ["schema"], original)
    map.add(converted + ["example"], original + ["x-example"])
  }

  /// A `responses` object (the document's shared one or an operation's) in OpenAPI 3's form, each response's
  /// parts recorded in `map` under `converted` and `original` plus its name.
  static func convertResponses(
    _ responses: JSONObject, converted: [String], original: [String], produces: [String],
    map: inout SwaggerPointerMap
  ) -> JSONValue {
    for r in responses {
      mapResponse(
        r.value, converted: converted + [r.key], original: original + [r.key], produces: produces, map: &map)
    }
    return .object(
      JSONObject(responses.members.map { .init(key: $0.key, value: response($0.value, produces: produces)) }))
  }

  /// Records where a converted response's parts came from: each media type's `schema` is the response's
  /// `schema`, its `example` the response's `examples` entry for that type; a header's `schema` is the
  /// header itself.
  static func mapResponse(
    _ r: JSONValue, converted: [String], original: [String], produces: [String], map: inout SwaggerPointerMap
  ) {
    guard let object = r.objectValue, object["$ref"] == nil else { return }
    map.add(converted, original)
    for h in object["headers"]?.objectValue ?? JSONObject() {
      map.add(converted + ["headers", h.key, "schema"], original + ["headers", h.key])
      let example = h.value["x-example"] != nil ? "x-example" : "example"
      map.add(converted + ["headers", h.key, "example"], original + ["headers", h.key, example])
    }
    let examples = object["examples"]?.objectValue ?? JSONObject()
    var types = produces.isEmpty ? ["application/json"] : produces
    for e in examples where !types.contains(e.key) { types.append(e.key) }
    for type in types {
      let media = converted + ["content", type]
      map.add(media, examples[type] != nil ? original + ["examples", type] : original)
      map.add(media + ["schema"], original + ["schema"])
      map.add(media + ["example"], original + ["examples", type])
    }
  }

  static func operation(
    _ op: JSONObject, at location: [String], inherited: [(JSONValue, [String])], shared: JSONObject,
    consumes: [String], produces: [String], map: inout SwaggerPointerMap
  ) -> JSONValue {
    let opConsumes = op["consumes"].map(strings) ?? consumes
    let opProduces = op["produces"].map(strings) ?? produces
    // Operation parameters replace the path item's of the same name and location.
    var all: [(JSONValue, [String])] = []
    let own = (op["parameters"]?.arrayValue ?? []).enumerated().map {
      ($0.element, location + ["parameters", String($0.offset)])
    }
    func key(_ p: JSONValue) -> String {
      let r = resolve(p, shared)
      return (r["in"]?.stringValue ?? "") + " " + (r["name"]?.stringValue ?? "")
    }
    let ownKeys = Set(own.map { key($0.0) })
    all = inherited.filter { !ownKeys.contains(key($0.0)) } + own
    var parameters: [JSONValue] = []
    var body: JSONValue?
    var form: [(String, JSONValue)] = []
    var formRequired: [JSONValue] = []
    var hasFile = false
    // A shared parameter's parts are at `#/parameters/Name`.
    var formOrigins: [(String, [String])] = []
    for (raw, rawLocation) in all {
      let p = resolve(raw, shared)
      var origin = rawLocation
      if let ref = raw["$ref"]?.stringValue, ref.hasPrefix("#/components/parameters/"),
        let tokens = SchemaLocation().resolving(reference: ref)?.tokens
      {
        origin = Array(tokens.dropFirst())
      }
      switch p["in"]?.stringValue {
      case "body":
        var content: [(String, JSONValue)] = []
        let types = opConsumes.filter { !isForm($0) }
        var media: [(String, JSONValue)] = []
        if let s = p["schema"] { media.append(("schema", s)) }
        if let e = p["x-examples"]?.objectValue?.members.first?.value ?? p["example"] {
          media.append(("example", e))
        }
        let exampleKey =
          p["x-examples"]?.objectValue?.members.first.map { ["x-examples", $0.key] } ?? ["example"]
        map.add(location + ["requestBody"], origin)
        for type in types.isEmpty ? ["application/json"] : types {
          content.append((type, .object(JSONObject(pairs: media))))
          map.add(location + ["requestBody", "content", type, "schema"], origin + ["schema"])
          map.add(location + ["requestBody", "content", type, "example"], origin + exampleKey)
        }
        var fields: [(String, JSONValue)] = [("content", .object(JSONObject(pairs: content)))]
        if let required = p["required"] { fields.append(("required", required)) }
        if let d = p["description"] { fields.append(("description", d)) }
        body = .object(JSONObject(pairs: fields))
      case "formData":
        guard let name = p["name"]?.stringValue else { continue }
        var property = schema(of: p)
        if p["type"]?.stringValue == "file" { hasFile = true }
        if p["allowEmptyValue"]?.boolValue != true, p["type"]?.stringValue == "string",
          case .object(var o) = property, o["minLength"] == nil, o["format"]?.stringValue != "binary"
        {
          // A string form field without `allowEmptyValue: true` must not be empty (Swagger 2.0's rule).
          o.members.append(.init(key: "minLength", value: .number(JSONNumber(1))))
          property = .object(o)
        }
        if p["type"]?.stringValue == "array" {
          let format = p["collectionFormat"]?.stringValue ?? "csv"
          if case .object(var o) = property {
            o.members.append(.init(key: "x-collectionFormat", value: .string(format)))
            property = .object(o)
          }
        }
        form.append((name, property))
        formOrigins.append((name, origin))
        if p["required"]?.boolValue == true { formRequired.append(.string(name)) }
      case .some, nil:
        mapParameter(
          raw, converted: location + ["parameters", String(parameters.count)], original: origin, map: &map)
        parameters.append(parameter(raw))
      }
    }
    var out: [(String, JSONValue)] = []
    for member in op
    where !["parameters", "consumes", "produces", "responses", "schemes", "security"].contains(member.key) {
      out.append((member.key, member.value))
    }
    if let security = op["security"] { out.append(("security", security)) }
    if !parameters.isEmpty { out.append(("parameters", .array(parameters))) }
    if let body {
      out.append(("requestBody", body))
    } else if !form.isEmpty {
      var objectSchema: [(String, JSONValue)] = [
        ("type", .string("object")), ("properties", .object(JSONObject(pairs: form))),
      ]
      if !formRequired.isEmpty { objectSchema.append(("required", .array(formRequired))) }
      var types = opConsumes.filter(isForm)
      if types.isEmpty { types = [hasFile ? "multipart/form-data" : "application/x-www-form-urlencoded"] }
      for type in types {
        for (name, origin) in formOrigins {
          map.add(location + ["requestBody", "content", type, "schema", "properties", name], origin)
        }
      }
      let media = JSONValue.object(JSONObject(pairs: [("schema", .object(JSONObject(pairs: objectSchema)))]))
      out.append(
        (
          "requestBody",
          .object(
            JSONObject(pairs: [
              ("content", .object(JSONObject(pairs: types.map { ($0, media) }))),
              ("required", .bool(!formRequired.isEmpty)),
            ]))
        ))
    }
    if let responses = op["responses"]?.objectValue {
      out.append(
        (
          "responses",
          convertResponses(
            responses, converted: location + ["responses"], original: location + ["responses"],
            produces: opProduces, map: &map)
        ))
    }
    return .object(JSONObject(pairs: out))
  }

  static func isForm(_ type: String) -> Bool {
    let essence = MediaTypeName(type).essence
    return essence == "application/x-www-form-urlencoded" || essence == "multipart/form-data"
  }

  static func response(_ r: JSONValue, produces: [String]) -> JSONValue {
    guard let object = r.objectValue, object["$ref"] == nil else { return r }
    var out: [(String, JSONValue)] = [("description", object["description"] ?? .string(""))]
    if let headers = object["headers"]?.objectValue {
      out.append(
        (
          "headers",
          .object(
            JSONObject(
              headers.members.map { h in
                var fields: [(String, JSONValue)] = [("schema", schema(of: h.value))]
                if let d = h.value["description"] { fields.append(("description", d)) }
                if let e = h.value["x-example"] ?? h.value["example"] { fields.append(("example", e)) }
                return .init(key: h.key, value: .object(JSONObject(pairs: fields)))
              }))
        ))
    }
    let examples = object["examples"]?.objectValue ?? JSONObject()
    var types = produces
    for e in examples where !types.contains(e.key) { types.append(e.key) }
    if object["schema"] != nil || !examples.members.isEmpty {
      var content: [(String, JSONValue)] = []
      for type in types.isEmpty ? ["application/json"] : types {
        var media: [(String, JSONValue)] = []
        if let s = object["schema"] { media.append(("schema", s)) }
        if let e = examples[type] { media.append(("example", e)) }
        guard !media.isEmpty else { continue }
        content.append((type, .object(JSONObject(pairs: media))))
      }
      out.append(("content", .object(JSONObject(pairs: content))))
    }
    return .object(JSONObject(pairs: out))
  }

  static func securityScheme(_ s: JSONValue) -> JSONValue {
    guard let type = s["type"]?.stringValue else { return s }
    var out: [(String, JSONValue)] = []
    switch type {
    case "basic":
      out = [("type", .string("http")), ("scheme", .string("basic"))]
    case "apiKey":
      out = [
        ("type", .string("apiKey")), ("name", s["name"] ?? .string("")), ("in", s["in"] ?? .string("header")),
      ]
    case "oauth2":
      let flow: String
      switch s["flow"]?.stringValue ?? "implicit" {
      case "accessCode": flow = "authorizationCode"
      case "application": flow = "clientCredentials"
      case let other: flow = other
      }
      var flowFields: [(String, JSONValue)] = []
      if let u = s["authorizationUrl"] { flowFields.append(("authorizationUrl", u)) }
      if let u = s["tokenUrl"] { flowFields.append(("tokenUrl", u)) }
      flowFields.append(("scopes", s["scopes"] ?? .object(JSONObject())))
      out = [
        ("type", .string("oauth2")),
        ("flows", .object(JSONObject(pairs: [(flow, .object(JSONObject(pairs: flowFields)))]))),
      ]
    default:
      return s
    }
    if let d = s["description"] { out.append(("description", d)) }
    return .object(JSONObject(pairs: out))
  }
}
