import Foundation
import HTTPCore
import JSONSchema
import MockJSON

extension OpenAPIMock {
  /// Every problem of `request` against `op`: security, parameters (deserialised by style), body.
  func problems(_ request: Request, _ op: OpenAPIOperation, _ pathValues: [String: String])
    -> [OpenAPIRequestProblem]
  {
    var out = securityProblems(request, op)
    out += parameterProblems(request, op, pathValues)
    out += bodyProblems(request, op)
    return out
  }

  /// The raw operation object (after `$ref`).
  func rawOperation(_ op: OpenAPIOperation) -> JSONValue? { document.schema(at: op.location) }

  // MARK: - Security

  /// Prism's security check: the operation's `security` (else the document's); one requirement of the list
  /// must hold (OR), each scheme of it (AND); `{}` holds without an `Authorization` header; `[]` turns it off.
  func securityProblems(_ request: Request, _ op: OpenAPIOperation) -> [OpenAPIRequestProblem] {
    guard let requirements = (rawOperation(op)?["security"] ?? document.root["security"])?.arrayValue,
      !requirements.isEmpty
    else { return [] }
    var challenges: [String] = []
    var reasons: [String] = []
    var unsupported: [String] = []
    var enforcedFailure = false
    for requirement in requirements {
      let names = requirement.objectValue?.keys ?? []
      var holds = true
      if names.isEmpty {
        if request.headers.contains("Authorization") {
          holds = false
          enforcedFailure = true
          reasons.append("an anonymous alternative needs no Authorization header")
        }
      }
      for name in names {
        let location = SchemaLocation(tokens: ["components", "securitySchemes", name])
        // A scheme we cannot check (undeclared, mutualTLS, an unknown type) is not satisfied silently:
        // its alternative does not hold (as Prism's "We currently do not support this type of security
        // scheme").
        guard let raw = document.schema(at: location) else {
          holds = false
          unsupported.append("\(name) (not declared in components.securitySchemes)")
          continue
        }
        let (scheme, _) = document.dereference(raw, at: location)
        if let why = OpenAPIMock.unsupportedSecurity(scheme) {
          holds = false
          unsupported.append("\(name) (\(why))")
          continue
        }
        if let failure = OpenAPIMock.check(scheme, request) {
          holds = false
          enforcedFailure = true
          reasons.append("\(name): \(failure.reason)")
          if let challenge = failure.challenge, !challenges.contains(challenge) {
            challenges.append(challenge)
          }
        }
      }
      if holds { return [] }
    }
    if !enforcedFailure {
      // Only schemes mockserver does not enforce stand in the way: served, with Prism's warning.
      return [
        OpenAPIRequestProblem(
          location: ["request"], keyword: nil,
          message: "Security scheme not enforced by mockserver: " + unsupported.joined(separator: ", ")
            + "; the request is served",
          status: 200, isWarning: true)
      ]
    }
    reasons += unsupported.map { "\($0): not enforced by mockserver" }
    return [
      OpenAPIRequestProblem(
        location: ["request"], keyword: nil,
        message: "Invalid security scheme used (" + reasons.joined(separator: "; ") + ")", status: 401,
        challenges: challenges)
    ]
  }

  /// Why one security scheme is not satisfied (nil when it is), and its `WWW-Authenticate` challenge.
  static func check(_ scheme: JSONValue, _ request: Request) -> (reason: String, challenge: String?)? {
    let authorization = request.headers.first("Authorization")
    switch scheme["type"]?.stringValue {
    case "apiKey":
      let name = scheme["name"]?.stringValue ?? ""
      switch scheme["in"]?.stringValue {
      case "query":
        return request.queryValues(name).contains { !$0.isEmpty }
          ? nil : ("expected the query parameter \(name)", nil)
      case "cookie":
        let present = request.headers.values("Cookie").contains { cookie in
          cookie.split(separator: ";").contains { pair in
            let kv = pair.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
            return kv.count == 2 && kv[0] == name && !kv[1].isEmpty
          }
        }
        return present ? nil : ("expected the cookie \(name)", nil)
      default:
        return request.headers.first(name).map { $0.isEmpty } == false
          ? nil : ("expected the header \(name)", nil)
      }
    case "http":
      let kind = scheme["scheme"]?.stringValue?.lowercased() ?? ""
      switch kind {
      case "basic":
        let challenge = "Basic realm=\"*\""
        guard let authorization else { return ("expected Authorization: Basic …", challenge) }
        let parts = authorization.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts[0].lowercased() == "basic" else { return ("expected the Basic scheme", challenge) }
        guard parts.count == 2, let data = Data(base64Encoded: parts[1]),
          String(decoding: data, as: UTF8.self).split(separator: ":", omittingEmptySubsequences: false).count
            == 2
        else { return ("expected base64 of user:password after Basic", nil) }
        return nil
      case "bearer":
        return OpenAPIMock.isBearer(authorization) ? nil : ("expected Authorization: Bearer …", "Bearer")
      case "digest":
        let challenge = "Digest realm=\"*\", nonce=\"abc123\""
        guard let authorization else { return ("expected Authorization: Digest …", challenge) }
        let parts = authorization.split(separator: " ", maxSplits: 1).map(String.init)
        guard parts[0].lowercased() == "digest" else { return ("expected the Digest scheme", challenge) }
        let info = parts.count > 1 ? parts[1] : ""
        for field in ["username=", "realm=", "nonce=", "uri=", "response="] where !info.contains(field) {
          return ("expected \(field) in the Digest credentials", nil)
        }
        return nil
      default:
        return nil
      }
    case "oauth2":
      return OpenAPIMock.isBearer(authorization) ? nil : ("expected an OAuth2 bearer token", "OAuth2")
    case "openIdConnect":
      return OpenAPIMock.isBearer(authorization) ? nil : ("expected an OpenID Connect bearer token", "OpenID")
    default:
      return nil
    }
  }

  /// Why mockserver does not enforce `scheme` (nil when ``check(_:_:)`` does): `type mutualTLS`,
  /// `http scheme hoba`, `apiKey in body`, an unknown or missing type.
  static func unsupportedSecurity(_ scheme: JSONValue) -> String? {
    switch scheme["type"]?.stringValue {
    case "apiKey":
      let place = scheme["in"]?.stringValue ?? "(no in)"
      return ["header", "query", "cookie"].contains(place) ? nil : "apiKey in \(place)"
    case "http":
      let kind = scheme["scheme"]?.stringValue?.lowercased() ?? "(no scheme)"
      return ["basic", "bearer", "digest"].contains(kind) ? nil : "http scheme \(kind)"
    case "oauth2", "openIdConnect": return nil
    case let type?: return "type \(type)"
    case nil: return "no type"
    }
  }

  /// Start-up and `lint --openapi` warnings for security schemes mockserver does not enforce: each
  /// declared one (its JSON pointer) and each requirement naming an undeclared one.
  package static func securityWarnings(_ document: OpenAPIDocument) -> [String] {
    var out: [String] = []
    let effect =
      "not enforced: under --validate-requests a request that meets no other alternative of a requirement "
      + "naming it is served with a warning (sl-violations), neither refused nor silently accepted"
    for member in document.root["components"]?["securitySchemes"]?.objectValue ?? JSONObject() {
      let location = SchemaLocation(tokens: ["components", "securitySchemes", member.key])
      let (scheme, _) = document.dereference(member.value, at: location)
      if let why = unsupportedSecurity(scheme) {
        out.append("\(location): security scheme \(member.key) (\(why)) is \(effect)")
      }
    }
    let declared = document.root["components"]?["securitySchemes"]?.objectValue
    func requirements(_ value: JSONValue?, at location: SchemaLocation) {
      for (k, requirement) in (value?.arrayValue ?? []).enumerated() {
        for name in requirement.objectValue?.keys ?? [] where declared?[name] == nil {
          out.append(
            "\(location.appending(String(k), name)): security scheme \(name) is not declared in "
              + "components.securitySchemes; it is \(effect)")
        }
      }
    }
    requirements(document.root["security"], at: SchemaLocation(tokens: ["security"]))
    for op in document.operations {
      requirements(document.schema(at: op.location)?["security"], at: op.location.appending("security"))
    }
    return out
  }

  static func isBearer(_ authorization: String?) -> Bool {
    guard let authorization, authorization.hasPrefix("Bearer") else { return false }
    let rest = authorization.dropFirst("Bearer".count)
    guard let first = rest.first, first == " " || first == "\t" else { return false }
    return !rest.dropFirst().isEmpty
  }

  // MARK: - Parameters

  func parameterProblems(_ request: Request, _ op: OpenAPIOperation, _ pathValues: [String: String])
    -> [OpenAPIRequestProblem]
  {
    var out: [OpenAPIRequestProblem] = []
    for p in op.parameters {
      guard ["path", "query", "header", "cookie"].contains(p.location) else { continue }
      let value = deserialize(p, request, pathValues)
      guard let value else {
        if p.required {
          out.append(
            OpenAPIRequestProblem(
              location: [p.location], keyword: "required",
              message: "Request \(p.location) must have required property '\(p.name)'", status: 422))
        }
        continue
      }
      guard let schemaLocation = p.schemaLocation else { continue }
      for v in document.validator.validate(value, at: schemaLocation) {
        out.append(
          OpenAPIRequestProblem(
            location: [p.location, p.name] + OpenAPIMock.components(v), keyword: v.keyword,
            message: "\(p.location) parameter \(p.name)"
              + (v.instancePath == "$" ? "" : " " + v.instancePath) + ": " + v.message,
            status: 422))
      }
    }
    return out
  }

  /// Where a violation is, as Prism's `location` names it: the instance path's parts, the object that lacks
  /// it for a missing required property.
  static func components(_ v: SchemaViolation) -> [String] {
    let parts = components(v.instancePath)
    return v.keyword == "required" ? Array(parts.dropLast()) : parts
  }

  /// `$.a.b[2]` → `["a", "b", "2"]`.
  static func components(_ path: String) -> [String] {
    var out: [String] = []
    var current = ""
    var inBracket = false
    for c in path.dropFirst() {
      switch c {
      case "." where !inBracket:
        if !current.isEmpty { out.append(current) }
        current = ""
      case "[" where !inBracket:
        if !current.isEmpty { out.append(current) }
        current = ""
        inBracket = true
      case "]" where inBracket:
        out.append(current.trimmingCharacters(in: CharacterSet(charactersIn: "'")))
        current = ""
        inBracket = false
      default: current.append(c)
      }
    }
    if !current.isEmpty { out.append(current) }
    return out
  }

  /// The schema (after `$ref`) at `location`, as an object.
  func schemaObject(_ location: SchemaLocation?) -> (JSONObject, SchemaLocation)? {
    guard let location, let raw = document.schema(at: location) else { return nil }
    let (s, l) = document.dereference(raw, at: location)
    return s.objectValue.map { ($0, l) }
  }

  /// The parameter's value as the JSON its schema describes, read by its `style` and `explode`; nil when
  /// the request does not carry it.
  func deserialize(_ p: OpenAPIParameter, _ request: Request, _ pathValues: [String: String]) -> JSONValue? {
    let raw = p.raw
    let schema = schemaObject(p.schemaLocation)
    let type = schema.flatMap { OpenAPIMock.typeName($0.0) }
    let defaultStyle = p.location == "query" || p.location == "cookie" ? "form" : "simple"
    let style =
      raw["style"]?.stringValue ?? (raw["x-collectionFormat"]?.stringValue == "tsv" ? "tsv" : defaultStyle)
    let explode = raw["explode"]?.boolValue ?? (style == "form")
    func typed(_ text: String, _ location: SchemaLocation?) -> JSONValue { coerce(text, location) }
    let itemLocation = schema.map { $0.1.appending("items") }
    func propertyLocation(_ name: String) -> SchemaLocation? {
      guard let (s, l) = schema else { return nil }
      if s["properties"]?[name] != nil { return l.appending("properties", name) }
      if let extra = s["additionalProperties"], extra.objectValue != nil {
        return l.appending("additionalProperties")
      }
      return nil
    }
    func object(_ pairs: [(String, String)]) -> JSONValue {
      .object(JSONObject(pairs: pairs.map { ($0.0, typed($0.1, propertyLocation($0.0))) }))
    }
    func pairs(_ items: [String]) -> [(String, String)] {
      stride(from: 0, to: items.count - 1, by: 2).map { (items[$0], items[$0 + 1]) }
    }
    func keyValues(_ items: [String], _ separator: Character = "=") -> [(String, String)] {
      items.map { item in
        let kv = item.split(separator: separator, maxSplits: 1, omittingEmptySubsequences: false)
        return (String(kv[0]), kv.count > 1 ? String(kv[1]) : "")
      }
    }
    switch p.location {
    case "query":
      if type == "object" {
        if style == "deepObject" {
          let prefix = p.name + "["
          let found = request.query.filter { $0.0.hasPrefix(prefix) && $0.0.hasSuffix("]") }
          guard !found.isEmpty else { return nil }
          return object(found.map { (String($0.0.dropFirst(prefix.count).dropLast()), $0.1) })
        }
        if explode {
          let names = Set(schema?.0["properties"]?.objectValue?.keys ?? [])
          let found = request.query.filter { names.contains($0.0) }
          if found.isEmpty { return request.queryValues(p.name).isEmpty ? nil : .object(JSONObject()) }
          return object(found)
        }
        guard let text = request.queryValues(p.name).first else { return nil }
        return object(pairs(text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)))
      }
      let values = request.queryValues(p.name)
      guard !values.isEmpty else { return nil }
      if type == "array" {
        let separator: Character
        switch style {
        case "spaceDelimited": separator = " "
        case "pipeDelimited": separator = "|"
        case "tsv": separator = "\t"
        default: separator = ","
        }
        let items =
          explode && style == "form"
          ? values
          : values.flatMap {
            $0.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
          }
        return .array(items.map { typed($0, itemLocation) })
      }
      return typed(values[0], p.schemaLocation)
    case "header", "cookie":
      let text: String
      if p.location == "header" {
        let values = request.headers.values(p.name)
        guard !values.isEmpty else { return nil }
        text = values.joined(separator: ",")
      } else {
        let cookies = request.headers.values("Cookie").flatMap { $0.split(separator: ";") }
          .map { $0.trimmingCharacters(in: .whitespaces) }
        guard let pair = cookies.first(where: { $0.hasPrefix(p.name + "=") }) else { return nil }
        text = String(pair.dropFirst(p.name.count + 1))
      }
      return simple(
        text, type: type, explode: explode, typed: typed, location: p.schemaLocation,
        itemLocation: itemLocation, object: object, pairs: pairs, keyValues: keyValues)
    default:
      guard let encoded = pathValues[p.name] else { return nil }
      var text = encoded
      if text.isEmpty { return nil }
      switch style {
      case "label":
        guard text.hasPrefix(".") else { return .string(text) }
        text.removeFirst()
        let items = text.split(separator: explode ? "." : ",", omittingEmptySubsequences: false).map(
          String.init)
        if type == "array" { return .array(items.map { typed($0, itemLocation) }) }
        if type == "object" { return explode ? object(keyValues(items)) : object(pairs(items)) }
        return typed(text, p.schemaLocation)
      case "matrix":
        let prefix = ";" + p.name + "="
        if type == "array", explode {
          let items = text.split(separator: ";").compactMap { part -> String? in
            part.hasPrefix(p.name + "=") ? String(part.dropFirst(p.name.count + 1)) : nil
          }
          return .array(items.map { typed($0, itemLocation) })
        }
        if type == "object", explode {
          return object(keyValues(text.split(separator: ";").map(String.init)))
        }
        guard text.hasPrefix(prefix) else { return .string(text) }
        text = String(text.dropFirst(prefix.count))
        return simple(
          text, type: type, explode: false, typed: typed, location: p.schemaLocation,
          itemLocation: itemLocation, object: object, pairs: pairs, keyValues: keyValues)
      default:
        return simple(
          text, type: type, explode: explode, typed: typed, location: p.schemaLocation,
          itemLocation: itemLocation, object: object, pairs: pairs, keyValues: keyValues)
      }
    }
  }

  /// A value in the `simple` style (path and header parameters): `a,b` arrays, `k,v,k,v` objects
  /// (`k=v,k=v` exploded).
  func simple(
    _ text: String, type: String?, explode: Bool, typed: (String, SchemaLocation?) -> JSONValue,
    location: SchemaLocation?, itemLocation: SchemaLocation?, object: ([(String, String)]) -> JSONValue,
    pairs: ([String]) -> [(String, String)], keyValues: ([String], Character) -> [(String, String)]
  ) -> JSONValue {
    let items = text.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    switch type {
    case "array": return .array(items.map { typed($0, itemLocation) })
    case "object": return explode ? object(keyValues(items, "=")) : object(pairs(items))
    default: return typed(text, location)
    }
  }

  static func typeName(_ s: JSONObject) -> String? {
    if let t = s["type"]?.stringValue { return t }
    if let list = s["type"]?.arrayValue?.compactMap(\.stringValue) { return list.first { $0 != "null" } }
    if s["properties"] != nil { return "object" }
    if s["items"] != nil { return "array" }
    return nil
  }

  /// Text read as its schema's type: numbers, Booleans and `null` where the schema says so, else a string.
  func coerce(_ text: String, _ location: SchemaLocation?) -> JSONValue {
    guard let (s, _) = schemaObject(location) else { return .string(text) }
    var types = s["type"]?.arrayValue?.compactMap(\.stringValue) ?? s["type"]?.stringValue.map { [$0] } ?? []
    if types.isEmpty {
      for key in ["oneOf", "anyOf", "allOf"] {
        for branch in s[key]?.arrayValue ?? [] {
          let (b, _) = document.dereference(branch, at: SchemaLocation())
          if let t = b["type"]?.stringValue { types.append(t) }
        }
      }
    }
    for type in types {
      switch type {
      case "integer", "number": if let n = JSONNumber(text: text) { return .number(n) }
      case "boolean":
        if text == "true" { return .bool(true) }
        if text == "false" { return .bool(false) }
      case "null": if text.isEmpty || text == "null" { return .null }
      default: break
      }
    }
    return .string(text)
  }

  // MARK: - Body

  func bodyProblems(_ request: Request, _ op: OpenAPIOperation) -> [OpenAPIRequestProblem] {
    let contentType = request.headers.first("Content-Type")
    let hasBody = !request.body.isEmpty
    guard !op.requestBody.isEmpty else {
      if hasBody, contentType != nil, op.method != "GET", op.method != "HEAD" {
        return [
          OpenAPIRequestProblem(
            location: ["body"], keyword: nil,
            message: "\(op.method) \(op.path) takes no request body; found \(request.body.count) bytes of "
              + (contentType ?? "unknown type"),
            status: 415)
        ]
      }
      return []
    }
    guard hasBody else {
      return op.requestBodyRequired
        ? [
          OpenAPIRequestProblem(
            location: ["body"], keyword: "required", message: "Request body is required (none was sent)",
            status: 422)
        ] : []
    }
    let wanted = MediaTypeName(contentType ?? "application/json")
    guard
      let media = op.requestBody.first(where: { MediaTypeName($0.name).essence == wanted.essence })
        ?? op.requestBody.first(where: { MediaTypeName($0.name).covers(wanted) })
    else {
      return [
        OpenAPIRequestProblem(
          location: ["header", "content-type"], keyword: nil,
          message: "Supported content types: " + op.requestBody.map(\.name).joined(separator: ", ")
            + "; found \(contentType.map(JSONValue.quoted) ?? "none")",
          status: 415)
      ]
    }
    guard let schemaLocation = media.schemaLocation else { return [] }
    let value: JSONValue
    var out: [OpenAPIRequestProblem] = []
    // Multipart file parts: read as bytes, counted in bytes (``binaryParts(_:_:_:)``).
    var binary: Set<String> = []
    if wanted.isJSON || (contentType == nil && MediaTypeName(media.name).isJSON) {
      do {
        value = try JSONValue.parse(bytes: request.body)
      } catch {
        return [
          OpenAPIRequestProblem(
            location: ["body"], keyword: nil, message: "Request body is not JSON: \(error.description)",
            status: 422)
        ]
      }
    } else if wanted.essence == "application/x-www-form-urlencoded" || wanted.essence == "multipart/form-data"
    {
      let fields: [(String, String)]
      if wanted.essence == "multipart/form-data" {
        guard let parts = MultipartForm.parts(request.body, contentType: contentType ?? "") else {
          return [
            OpenAPIRequestProblem(
              location: ["body"], keyword: nil,
              message: "Request body is not multipart/form-data with the boundary of its Content-Type",
              status: 422)
          ]
        }
        let encoding = mediaObject(op, media)?["encoding"]?.objectValue
        binary = binaryParts(parts, schemaLocation, encoding)
        out += partTypeProblems(parts, encoding)
        // A file part stands in the object as a string of its length in bytes: no UTF-8 requirement, and
        // `minLength`/`maxLength` count bytes; its content is not read.
        fields = parts.map {
          ($0.name, binary.contains($0.name) ? String(repeating: "a", count: $0.bytes.count) : $0.text)
        }
        out += reservedProblems(
          op, media, parts.filter { !binary.contains($0.name) }.map { ($0.name, $0.text) })
      } else {
        let text = String(decoding: request.body, as: UTF8.self)
        let raw = text.split(separator: "&").map { pair -> (String, String) in
          let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
          return (String(kv[0]), kv.count > 1 ? String(kv[1]) : "")
        }
        out += reservedProblems(op, media, raw.map { (OpenAPIMock.formDecode($0.0), $0.1) })
        fields = raw.map { (OpenAPIMock.formDecode($0.0), OpenAPIMock.formDecode($0.1)) }
      }
      value = formObject(fields, schemaLocation)
    } else {
      // Other media types: a string schema is checked against the text; the rest is not read.
      guard let (s, _) = schemaObject(schemaLocation), OpenAPIMock.typeName(s) == "string" else { return [] }
      value = .string(String(decoding: request.body, as: UTF8.self))
    }
    for v in document.validator.validate(value, at: schemaLocation) {
      let field = OpenAPIMock.components(v).first
      var message = v.message
      if let field, binary.contains(field), v.keyword != "required" {
        // A file part's content stands for itself: only its presence, type and length in bytes count.
        guard ["minLength", "maxLength", "type"].contains(v.keyword) else { continue }
        message = message.replacingOccurrences(of: "characters", with: "bytes")
          .replacingOccurrences(of: "character", with: "byte")
      }
      out.append(
        OpenAPIRequestProblem(
          location: ["body"] + OpenAPIMock.components(v), keyword: v.keyword,
          message: "body" + (v.instancePath == "$" ? "" : " " + v.instancePath) + ": " + message,
          status: 422))
    }
    return out
  }

  /// The names of multipart parts that are files: their `encoding.contentType` names a type that is not
  /// text (`text/*`, JSON, XML, a form), else their property's schema (or its `items`, for an array) is a
  /// `format: binary` string or has a `contentMediaType` without a `contentEncoding`.
  func binaryParts(_ parts: [MultipartForm.Part], _ location: SchemaLocation, _ encoding: JSONObject?)
    -> Set<String>
  {
    let schema = schemaObject(location)
    var out: Set<String> = []
    for name in Set(parts.map(\.name)) {
      if let declared = encoding?[name]?["contentType"]?.stringValue {
        if MultipartForm.ranges(declared).contains(where: { !MultipartForm.isText($0) }) { out.insert(name) }
        continue
      }
      guard let (s, l) = schema, s["properties"]?[name] != nil,
        var (property, propertyLocation) = schemaObject(l.appending("properties", name))
      else { continue }
      if OpenAPIMock.typeName(property) == "array",
        let items = schemaObject(propertyLocation.appending("items"))
      {
        (property, propertyLocation) = items
      }
      if property["format"]?.stringValue == "binary"
        || (property["contentMediaType"] != nil && property["contentEncoding"] == nil)
      {
        out.insert(name)
      }
    }
    return out
  }

  /// A part whose `Content-Type` is none of its `encoding.contentType` (a list, wildcards allowed); a
  /// part that sends no `Content-Type` is not checked.
  func partTypeProblems(_ parts: [MultipartForm.Part], _ encoding: JSONObject?) -> [OpenAPIRequestProblem] {
    parts.compactMap { part in
      guard let declared = encoding?[part.name]?["contentType"]?.stringValue, let sent = part.contentType,
        !MultipartForm.ranges(declared).contains(where: { $0.covers(MediaTypeName(sent)) })
      else { return nil }
      return OpenAPIRequestProblem(
        location: ["body", part.name], keyword: nil,
        message: "body part \(part.name): Content-Type \(JSONValue.quoted(sent)) is not the encoding's "
          + "contentType \(declared)",
        status: 422)
    }
  }

  /// Fields whose `encoding` says `allowReserved: false` but whose text (as sent) holds RFC 3986 reserved
  /// characters.
  func reservedProblems(_ op: OpenAPIOperation, _ media: OpenAPIMediaType, _ fields: [(String, String)])
    -> [OpenAPIRequestProblem]
  {
    let encoding = mediaObject(op, media)?["encoding"]?.objectValue
    return fields.compactMap { name, value in
      guard encoding?[name]?["allowReserved"]?.boolValue == false,
        value.contains(where: { ":/?#[]@!$&'()*+,;=".contains($0) })
      else { return nil }
      return OpenAPIRequestProblem(
        location: ["body", name], keyword: nil,
        message: "body field \(name): reserved characters used where the encoding has allowReserved: false",
        status: 422)
    }
  }

  func mediaObject(_ op: OpenAPIOperation, _ media: OpenAPIMediaType) -> JSONValue? {
    guard let raw = rawOperation(op)?["requestBody"] else { return nil }
    let (body, _) = document.dereference(raw, at: op.location.appending("requestBody"))
    return body["content"]?[media.name]
  }

  /// Form fields as the object their schema describes: repeated or delimited fields for arrays, text read
  /// as numbers and Booleans where the property's schema says so.
  func formObject(_ fields: [(String, String)], _ location: SchemaLocation) -> JSONValue {
    let schema = schemaObject(location)
    var members: [JSONObject.Member] = []
    var seen: Set<String> = []
    for (name, _) in fields where !seen.contains(name) {
      seen.insert(name)
      let values = fields.filter { $0.0 == name }.map(\.1)
      let propertyLocation: SchemaLocation? = schema.flatMap { s, l in
        s["properties"]?[name] != nil ? l.appending("properties", name) : nil
      }
      let property = schemaObject(propertyLocation)
      if let (p, l) = property, OpenAPIMock.typeName(p) == "array" {
        let separator: Character
        switch p["x-collectionFormat"]?.stringValue {
        case "ssv": separator = " "
        case "pipes": separator = "|"
        case "tsv": separator = "\t"
        case "multi": separator = "\u{0}"
        default: separator = ","
        }
        let items =
          values.count > 1
          ? values
          : values.flatMap {
            $0.split(separator: separator, omittingEmptySubsequences: false).map(String.init)
          }
        members.append(.init(key: name, value: .array(items.map { coerce($0, l.appending("items")) })))
      } else {
        members.append(.init(key: name, value: coerce(values[0], propertyLocation)))
      }
    }
    return .object(JSONObject(members))
  }
}

/// `multipart/form-data` parts of a request body (RFC 7578), read as bytes.
enum MultipartForm {
  /// One part: its `Content-Disposition` name, its `Content-Type` (nil when it sends none) and content.
  struct Part {
    var name: String
    var contentType: String?
    var bytes: [UInt8]
    /// The content as text (invalid UTF-8 replaced).
    var text: String { String(decoding: bytes, as: UTF8.self) }
  }

  /// The media ranges of an `encoding.contentType` (`image/png, image/jpeg`).
  static func ranges(_ declared: String) -> [MediaTypeName] {
    declared.split(separator: ",").map { MediaTypeName(String($0)) }.filter { !$0.essence.isEmpty }
  }

  /// True for a type whose content is text: `text/*`, JSON, XML, `application/x-www-form-urlencoded`.
  static func isText(_ type: MediaTypeName) -> Bool {
    type.essence.hasPrefix("text/") || type.isJSON || type.essence.hasSuffix("/xml")
      || type.essence.hasSuffix("+xml") || type.essence == "application/x-www-form-urlencoded"
  }

  /// The parts, or nil when the Content-Type has no boundary or the body does not hold it.
  static func parts(_ body: [UInt8], contentType: String) -> [Part]? {
    guard
      let boundaryParameter = contentType.split(separator: ";").dropFirst()
        .map({ $0.trimmingCharacters(in: .whitespaces) })
        .first(where: { $0.lowercased().hasPrefix("boundary=") })
    else { return nil }
    let boundary = boundaryParameter.dropFirst("boundary=".count).trimmingCharacters(
      in: CharacterSet(charactersIn: "\""))
    guard !boundary.isEmpty else { return nil }
    let delimiter = Array(("--" + boundary).utf8)
    let starts = occurrences(of: delimiter, in: body[...])
    guard !starts.isEmpty else { return nil }
    let cr: UInt8 = 13
    let lf: UInt8 = 10
    let dash: UInt8 = 45
    var out: [Part] = []
    for (k, start) in starts.enumerated() {
      var section = body[(start + delimiter.count)..<(k + 1 < starts.count ? starts[k + 1] : body.count)]
      if section.starts(with: [dash, dash]) { break }
      if section.starts(with: [cr, lf]) {
        section = section.dropFirst(2)
      } else if section.first == lf {
        section = section.dropFirst()
      }
      let headEnd: Range<Int>
      if let crlf = occurrences(of: [cr, lf, cr, lf], in: section).first {
        headEnd = crlf..<(crlf + 4)
      } else if let bare = occurrences(of: [lf, lf], in: section).first {
        headEnd = bare..<(bare + 2)
      } else {
        continue
      }
      let head = String(decoding: section[..<headEnd.lowerBound], as: UTF8.self)
      var content = section[headEnd.upperBound...]
      if content.last == lf {
        content = content.dropLast()
        if content.last == cr { content = content.dropLast() }
      }
      var name: String?
      var type: String?
      for line in head.split(whereSeparator: { $0 == "\r\n" || $0 == "\n" || $0 == "\r" }) {
        let lower = line.lowercased()
        if lower.hasPrefix("content-type:") {
          type = line.dropFirst("content-type:".count).trimmingCharacters(in: .whitespaces)
        }
        guard lower.hasPrefix("content-disposition:") else { continue }
        for parameter in line.split(separator: ";").dropFirst() {
          let kv = parameter.trimmingCharacters(in: .whitespaces).split(separator: "=", maxSplits: 1)
          if kv.count == 2, kv[0].lowercased() == "name" {
            name = kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))
          }
        }
      }
      if let name { out.append(Part(name: name, contentType: type, bytes: Array(content))) }
    }
    return out
  }

  /// Where `needle` starts in `haystack`, left to right, without overlaps.
  static func occurrences(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> [Int] {
    guard let first = needle.first, haystack.count >= needle.count else { return [] }
    var out: [Int] = []
    var i = haystack.startIndex
    let last = haystack.endIndex - needle.count
    while i <= last {
      if haystack[i] == first, haystack[i..<(i + needle.count)].elementsEqual(needle) {
        out.append(i)
        i += needle.count
      } else {
        i += 1
      }
    }
    return out
  }
}
