import Foundation
import JSONSchema
import MockJSON

/// Why an OpenAPI document could not be loaded.
package struct OpenAPILoadError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The file (as given, or a sibling file reached through `$ref`).
  package var file: String
  /// `line 3, column 5: …` for syntax, or what is wrong with the document.
  package var message: String

  /// `petstore.yaml: line 3, column 5: …`.
  package var description: String { "\(file): \(message)" }
}

/// An OpenAPI 3.0 or 3.1 document (JSON or YAML) with the sibling files its `$ref`s reach, its operations,
/// and a schema validator over all of them.
package struct OpenAPIDocument: Sendable {
  /// The main document.
  package var root: JSONValue
  /// The file it was read from (empty when parsed from text).
  package var path: String
  /// Sibling documents reached through `$ref`, by path relative to the main document's folder.
  package var siblings: [String: JSONValue]
  /// `openapi` (e.g. `3.0.3`).
  package var version: String
  /// The operations under `paths` in document order (path, then get, put, post, delete, options, head,
  /// patch, trace).
  package var operations: [OpenAPIOperation]
  /// Validator over the main document and its siblings.
  package var validator: JSONSchemaValidator
  /// For a Swagger 2.0 document, where each part of its OpenAPI 3 form came from (nil otherwise).
  package var swaggerPointers: SwaggerPointerMap?

  /// `message` with its JSON pointers into the document's OpenAPI 3 form translated to pointers into the
  /// user's file, for a Swagger 2.0 document (`#/components/schemas/Pet` → `#/definitions/Pet`).
  package func originalPointers(in message: String) -> String {
    swaggerPointers?.translate(message) ?? message
  }

  /// The document's title, or the file name.
  package var title: String { root["info"]?["title"]?.stringValue ?? (path as NSString).lastPathComponent }

  /// Loads `path` (JSON when it starts with `{`, YAML otherwise) and every sibling file its `$ref`s reach.
  /// `$ref`s are read only from files inside the document's folder (after `..` and symbolic links are
  /// resolved).
  /// - Throws: ``OpenAPILoadError`` when a file cannot be read or parsed, is not an OpenAPI 3 document, or
  ///   a `$ref` reaches a file outside the document's folder.
  package static func load(path: String) throws(OpenAPILoadError) -> OpenAPIDocument {
    let main = try readDocument(path, name: (path as NSString).lastPathComponent)
    let folder = (path as NSString).deletingLastPathComponent
    // `$ref`s read files inside the document's own folder only: never through `..` or a symbolic link
    // out of it (a document from elsewhere must not make the server read and serve any file).
    let root = URL(fileURLWithPath: folder.isEmpty ? "." : folder).resolvingSymlinksInPath()
      .standardizedFileURL
      .path
    var siblings: [String: JSONValue] = [:]
    var pending: [(String, JSONValue)] = [("", main)]
    while let (name, value) = pending.popLast() {
      for reference in references(in: value) {
        guard let hash = reference.firstIndex(of: "#") ?? Optional(reference.endIndex) else { continue }
        let documentPart = String(reference[..<hash])
        guard !documentPart.isEmpty, !documentPart.contains("://") else { continue }
        let target = SchemaLocation.join(name, documentPart)
        guard siblings[target] == nil else { continue }
        let file = folder.isEmpty ? target : folder + "/" + target
        let real = URL(fileURLWithPath: file).resolvingSymlinksInPath().standardizedFileURL.path
        guard real.hasPrefix(root.hasSuffix("/") ? root : root + "/") else {
          throw OpenAPILoadError(
            file: path,
            message:
              "expected $ref files inside the document's folder \(root), found \(JSONValue.quoted(reference)), "
              + "which reaches \(real)")
        }
        let sibling = try readDocument(file, name: target)
        siblings[target] = sibling
        pending.append((target, sibling))
      }
    }
    return try OpenAPIDocument(root: main, path: path, siblings: siblings)
  }

  /// Parses a document given as text (JSON or YAML); `$ref`s to other files are not followed.
  package static func parse(_ text: String, name: String = "openapi") throws(OpenAPILoadError)
    -> OpenAPIDocument
  {
    let value = try parseText(text, name: name)
    return try OpenAPIDocument(root: value, path: name, siblings: [:])
  }

  init(root: JSONValue, path: String, siblings: [String: JSONValue]) throws(OpenAPILoadError) {
    guard case .object = root else {
      throw OpenAPILoadError(
        file: path, message: "expected an OpenAPI document (an object), found \(root.kindDescription)")
    }
    // Swagger 2.0 is read as the OpenAPI 3.0 document it stands for (SwaggerConverter).
    var swaggerPointers: SwaggerPointerMap?
    var root = root
    if SwaggerConverter.isSwagger2(root) {
      (root, swaggerPointers) = SwaggerConverter.convertWithPointers(root)
    }
    self.swaggerPointers = swaggerPointers
    guard let version = root["openapi"]?.stringValue, version.hasPrefix("3.") else {
      let found = root["swagger"].map { "swagger: \($0.serialized())" } ?? "no openapi: 3.x field"
      throw OpenAPILoadError(
        file: path, message: "expected an OpenAPI 3.0 or 3.1 or a Swagger 2.0 document, found \(found)")
    }
    self.root = root
    self.path = path
    self.siblings = siblings
    self.version = version
    self.validator = JSONSchemaValidator(
      document: root, siblings: siblings, dialect: version.hasPrefix("3.0") ? .openAPI30 : .openAPI31)
    self.operations = []
    self.operations = collectOperations()
  }

  static func readDocument(_ file: String, name: String) throws(OpenAPILoadError) -> JSONValue {
    // Through a file handle, not `FileManager.contents(atPath:)`: on Linux that leaks the 4 KiB buffer it
    // reads an empty file into (FoundationEssentials of Swift 6.3.1; found by `make fuzz`, input
    // Fuzz/openapi-corpus/empty-document).
    guard let handle = FileHandle(forReadingAtPath: file) else {
      throw OpenAPILoadError(file: file, message: "cannot read the file")
    }
    defer { try? handle.close() }
    let data: Data?
    do {
      data = try handle.readToEnd()
    } catch {
      throw OpenAPILoadError(file: file, message: "cannot read the file")
    }
    return try parseText(String(decoding: data ?? Data(), as: UTF8.self), name: name)
  }

  static func parseText(_ text: String, name: String) throws(OpenAPILoadError) -> JSONValue {
    let trimmed = text.drop(while: { $0.isWhitespace || $0 == "\u{FEFF}" })
    if trimmed.hasPrefix("{") {
      do {
        return try JSONValue.parse(text)
      } catch {
        throw OpenAPILoadError(file: name, message: error.description)
      }
    }
    do {
      return try YAMLDocument.parse(text)
    } catch {
      throw OpenAPILoadError(file: name, message: error.description)
    }
  }

  /// Every `$ref` string in `value`.
  static func references(in value: JSONValue) -> [String] {
    var out: [String] = []
    func walk(_ v: JSONValue) {
      switch v {
      case .object(let o):
        for m in o {
          if m.key == "$ref", case .string(let s) = m.value { out.append(s) } else { walk(m.value) }
        }
      case .array(let a): a.forEach(walk)
      default: break
      }
    }
    walk(value)
    return out
  }

  /// Follows `$ref` (repeatedly) from `value` found at `location`, returning the target and its location.
  package func dereference(_ value: JSONValue, at location: SchemaLocation) -> (JSONValue, SchemaLocation) {
    var value = value
    var location = location
    var hops = 0
    while let ref = value["$ref"]?.stringValue, hops < 32,
      let (target, targetLocation) = validator.resolve(ref, from: location)
    {
      value = target
      location = targetLocation
      hops += 1
    }
    return (value, location)
  }

  static let methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"]

  func collectOperations() -> [OpenAPIOperation] {
    var out: [OpenAPIOperation] = []
    guard let paths = root["paths"]?.objectValue else { return out }
    for member in paths {
      let pathLocation = SchemaLocation(tokens: ["paths", member.key])
      let (item, itemLocation) = dereference(member.value, at: pathLocation)
      guard let itemObject = item.objectValue else { continue }
      let shared = parameters(itemObject["parameters"], at: itemLocation.appending("parameters"))
      for method in OpenAPIDocument.methods {
        guard let op = itemObject[method]?.objectValue else { continue }
        let opLocation = itemLocation.appending(method)
        var params = shared
        for p in parameters(op["parameters"], at: opLocation.appending("parameters")) {
          params.removeAll { $0.name == p.name && $0.location == p.location }
          params.append(p)
        }
        var responses: [OpenAPIResponse] = []
        if let rs = op["responses"]?.objectValue {
          for r in rs {
            let (resolved, rLocation) = dereference(r.value, at: opLocation.appending("responses", r.key))
            responses.append(response(status: r.key, resolved, at: rLocation))
          }
        }
        var body: [OpenAPIMediaType] = []
        var bodyRequired = false
        if let rb = op["requestBody"] {
          let (resolved, rbLocation) = dereference(rb, at: opLocation.appending("requestBody"))
          body = mediaTypes(resolved["content"], at: rbLocation.appending("content"))
          bodyRequired = resolved["required"]?.boolValue ?? false
        }
        out.append(
          OpenAPIOperation(
            method: method.uppercased(), path: member.key, operationId: op["operationId"]?.stringValue,
            location: opLocation, parameters: params, requestBody: body, requestBodyRequired: bodyRequired,
            responses: responses))
      }
    }
    return out
  }

  func parameters(_ value: JSONValue?, at location: SchemaLocation) -> [OpenAPIParameter] {
    guard let list = value?.arrayValue else { return [] }
    return list.enumerated().compactMap { k, raw in
      let (p, pLocation) = dereference(raw, at: location.appending(String(k)))
      guard let name = p["name"]?.stringValue, let place = p["in"]?.stringValue else { return nil }
      var schemaLocation: SchemaLocation? = p["schema"] == nil ? nil : pLocation.appending("schema")
      var example = p["example"] ?? p["examples"]?.objectValue?.members.first?.value["value"]
      if schemaLocation == nil, let content = p["content"]?.objectValue?.members.first {
        schemaLocation = pLocation.appending("content", content.key, "schema")
        example = example ?? content.value["example"]
      }
      return OpenAPIParameter(
        name: name, location: place, required: p["required"]?.boolValue ?? (place == "path"),
        schemaLocation: schemaLocation, example: example, raw: p)
    }
  }

  func response(status: String, _ value: JSONValue, at location: SchemaLocation) -> OpenAPIResponse {
    var headers: [OpenAPIParameter] = []
    if let hs = value["headers"]?.objectValue {
      for h in hs {
        let (header, hLocation) = dereference(h.value, at: location.appending("headers", h.key))
        headers.append(
          OpenAPIParameter(
            name: h.key, location: "header", required: header["required"]?.boolValue ?? false,
            schemaLocation: header["schema"] == nil ? nil : hLocation.appending("schema"),
            example: header["example"]))
      }
    }
    return OpenAPIResponse(
      status: status, location: location, description: value["description"]?.stringValue ?? "",
      content: mediaTypes(value["content"], at: location.appending("content")), headers: headers)
  }

  func mediaTypes(_ value: JSONValue?, at location: SchemaLocation) -> [OpenAPIMediaType] {
    guard let content = value?.objectValue else { return [] }
    return content.members.map { m in
      let mLocation = location.appending(m.key)
      var examples: [(String, JSONValue)] = []
      if let named = m.value["examples"]?.objectValue {
        for e in named {
          let (example, _) = dereference(e.value, at: mLocation.appending("examples", e.key))
          if let v = example["value"] { examples.append((e.key, v)) }
        }
      }
      return OpenAPIMediaType(
        name: m.key, schemaLocation: m.value["schema"] == nil ? nil : mLocation.appending("schema"),
        example: m.value["example"], examples: examples)
    }
  }

  /// The schema at `location` with its `$ref`s followed (for example generation and parameter checks).
  package func schema(at location: SchemaLocation) -> JSONValue? {
    guard let doc = location.document.isEmpty ? root : siblings[location.document],
      let value = location.value(in: doc)
    else { return nil }
    return value
  }

  /// The operation whose method and path template match `method` and `path` (a concrete request path),
  /// with the path parameters' values. Templates with more literal segments win (`/pets/mine` before
  /// `/pets/{id}`). Server URL base paths (`/v1` of `http://host/v1`) may prefix `path`.
  package func operation(method: String, path: String) -> (OpenAPIOperation, [String: String])? {
    var candidates = [path]
    for base in serverBasePaths where path.hasPrefix(base + "/") || path == base {
      candidates.append(String(path.dropFirst(base.count)))
    }
    for candidate in candidates {
      var best: (OpenAPIOperation, [String: String], Int)?
      for op in operations where op.method == method.uppercased() {
        guard let params = PathTemplateMatcher.match(template: op.path, path: candidate) else { continue }
        let literal = op.path.split(separator: "/").filter { !$0.contains("{") }.count
        if best == nil || literal > best!.2 { best = (op, params, literal) }
      }
      if let best { return (best.0, best.1) }
    }
    return nil
  }

  /// The operation with exactly this path template (parameter names ignored: `/a/{x}` is `/a/{id}`).
  package func operation(method: String, template: String) -> OpenAPIOperation? {
    let key = PathTemplateMatcher.shape(template)
    let bases = [""] + serverBasePaths
    for base in bases {
      for op in operations
      where op.method == method.uppercased() && PathTemplateMatcher.shape(base + op.path) == key {
        return op
      }
    }
    return nil
  }

  /// Path parts of the `servers` URLs (`/v1` of `http://petstore.swagger.io/v1`), without `/`.
  package var serverBasePaths: [String] {
    (root["servers"]?.arrayValue ?? []).compactMap { server -> String? in
      guard var url = server["url"]?.stringValue else { return nil }
      if let scheme = url.range(of: "://") {
        url = String(url[scheme.upperBound...])
        guard let slash = url.firstIndex(of: "/") else { return nil }
        url = String(url[slash...])
      }
      while url.hasSuffix("/") { url.removeLast() }
      return url.isEmpty || url.contains("{") ? nil : url
    }
  }
}

/// One operation (path template and method).
package struct OpenAPIOperation: Sendable {
  /// `GET`, `POST`, …
  package var method: String
  /// `/pets/{petId}` as written.
  package var path: String
  /// `operationId`, when given.
  package var operationId: String?
  /// Where the operation is (`#/paths/~1pets/get`).
  package var location: SchemaLocation
  /// Path-item and operation parameters (the operation's replace the path item's of the same name).
  package var parameters: [OpenAPIParameter]
  /// `requestBody.content`.
  package var requestBody: [OpenAPIMediaType]
  /// `requestBody.required`.
  package var requestBodyRequired: Bool
  /// `responses`, in document order.
  package var responses: [OpenAPIResponse]

  /// `operationId`, or `get /pets/{petId}`, in a file-name-safe form (`get-pets-petId`; characters other
  /// than letters, digits, `.`, `_` and `-` become `-`).
  package var name: String {
    if let operationId {
      return String(operationId.map { $0.isLetter || $0.isNumber || "._-".contains($0) ? $0 : "-" })
    }
    let parts = path.split(whereSeparator: { !$0.isLetter && !$0.isNumber }).joined(separator: "-")
    return method.lowercased() + (parts.isEmpty ? "" : "-" + parts)
  }

  /// The declared response for `status`: the exact code, then `2XX`-style ranges, then `default`.
  package func response(for status: Int) -> OpenAPIResponse? {
    responses.first { $0.status == String(status) }
      ?? responses.first { $0.status.uppercased() == "\(status / 100)XX" }
      ?? responses.first { $0.status == "default" }
  }
}

/// A parameter or a response header.
package struct OpenAPIParameter: Sendable {
  /// Name (case-insensitive for headers).
  package var name: String
  /// `path`, `query`, `header`, `cookie`.
  package var location: String
  /// `required` (always true for path parameters).
  package var required: Bool
  /// Where its schema is.
  package var schemaLocation: SchemaLocation?
  /// `example`, or the first of `examples`.
  package var example: JSONValue?
  /// The parameter object as written (after `$ref`): `style`, `explode`, `allowReserved`, … are read from it.
  package var raw: JSONValue = .null
}

/// One declared response.
package struct OpenAPIResponse: Sendable {
  /// `200`, `2XX` or `default`.
  package var status: String
  /// Where it is (after `$ref`).
  package var location: SchemaLocation
  /// `description`.
  package var description: String
  /// `content`, by media type in document order.
  package var content: [OpenAPIMediaType]
  /// `headers`.
  package var headers: [OpenAPIParameter]

  /// The media type entry that covers `contentType` (parameters ignored; `application/*`, `*/*` and
  /// `+json` suffixes honoured), or nil.
  package func mediaType(for contentType: String) -> OpenAPIMediaType? {
    let wanted = MediaTypeName(contentType)
    return content.first { MediaTypeName($0.name).essence == wanted.essence }
      ?? content.first { MediaTypeName($0.name).covers(wanted) }
  }
}

/// One media type entry: its schema and examples.
package struct OpenAPIMediaType: Sendable {
  /// `application/json`, `text/plain`, `application/*` …
  package var name: String
  /// Where its schema is.
  package var schemaLocation: SchemaLocation?
  /// `example`.
  package var example: JSONValue?
  /// `examples` by name (their `value`s), in document order.
  package var examples: [(String, JSONValue)]

  /// True for JSON media types (`application/json`, `application/problem+json`, `*/*`-less JSON forms).
  package var isJSON: Bool { MediaTypeName(name).isJSON }
}

/// A media type split into its type/subtype essence (lowercased, parameters dropped).
package struct MediaTypeName: Sendable, Hashable {
  /// `application/json`.
  package var essence: String

  /// Parses `application/json; charset=utf-8`.
  package init(_ text: String) {
    essence = String(text.split(separator: ";").first ?? "").trimmingCharacters(in: .whitespaces).lowercased()
  }

  /// True for `application/json`, `*/*+json`, `text/json`.
  package var isJSON: Bool { essence.hasSuffix("/json") || essence.hasSuffix("+json") }

  /// True when this range covers `other` (`application/*` covers `application/json`, `*/*` covers all).
  package func covers(_ other: MediaTypeName) -> Bool {
    if essence == "*/*" || essence == other.essence { return true }
    if essence.hasSuffix("/*") { return other.essence.hasPrefix(essence.dropLast()) }
    return false
  }
}

/// Matches concrete paths against OpenAPI path templates (`/pets/{id}`, `/files/{name}.json`).
package enum PathTemplateMatcher {
  /// The parameters when `path` fits `template`, else nil. Each `{name}` takes at least one character
  /// and never a `/`.
  package static func match(template: String, path: String) -> [String: String]? {
    let t = template.split(separator: "/", omittingEmptySubsequences: false)
    let p = path.split(separator: "/", omittingEmptySubsequences: false)
    guard t.count == p.count else { return nil }
    var params: [String: String] = [:]
    for (ts, ps) in zip(t, p) {
      guard matchSegment(Substring(ts), Substring(ps), &params) else { return nil }
    }
    return params
  }

  static func matchSegment(_ t: Substring, _ p: Substring, _ params: inout [String: String]) -> Bool {
    guard let open = t.firstIndex(of: "{"), let close = t[open...].firstIndex(of: "}") else { return t == p }
    let prefix = t[..<open]
    let name = String(t[t.index(after: open)..<close])
    let rest = t[t.index(after: close)...]
    guard p.hasPrefix(prefix) else { return false }
    let afterPrefix = p.dropFirst(prefix.count)
    // The literal up to the next parameter must follow the value; take the shortest value that works.
    let nextLiteral = rest.prefix(while: { $0 != "{" })
    var end = afterPrefix.startIndex
    while end < afterPrefix.endIndex {
      end = afterPrefix.index(after: end)
      let value = afterPrefix[afterPrefix.startIndex..<end]
      let remainder = afterPrefix[end...]
      if remainder.hasPrefix(nextLiteral) {
        var trial = params
        trial[name] = String(value)
        if matchSegment(rest, remainder, &trial) {
          params = trial
          return true
        }
      }
    }
    return false
  }

  /// The template with parameter names erased (`/pets/{}`), to compare templates.
  package static func shape(_ template: String) -> String {
    var out = ""
    var inside = false
    for c in template {
      if c == "{" {
        inside = true
        out.append("{")
      } else if c == "}" {
        inside = false
        out.append("}")
      } else if !inside {
        out.append(c)
      }
    }
    return out
  }
}
