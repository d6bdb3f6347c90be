import Foundation
import HTTPCore
import JSONSchema
import MockJSON

/// One way a request breaks the document (`--validate-requests`).
package struct RequestViolation: Sendable, Hashable, CustomStringConvertible {
  /// `path petId`, `query limit`, `header X-Token`, `body`, `Content-Type`.
  package var location: String
  /// The violation (instance path inside the parameter value or body, schema path, expected, found).
  package var violation: SchemaViolation

  /// `body $.name: expected a string (#/components/schemas/Pet/properties/name), found 42`.
  package var description: String {
    location + (violation.instancePath == "$" ? "" : " " + violation.instancePath) + ": " + violation.message
  }

  /// `{"location": …, "path": …, "schema": …, "expected": …, "found": …, "message": …}`.
  package var json: JSONValue {
    .object(
      JSONObject(pairs: [
        ("location", .string(location)), ("path", .string(violation.instancePath)),
        ("schema", .string(violation.schemaPath)), ("expected", .string(violation.expected)),
        ("found", .string(violation.found)), ("message", .string(description)),
      ]))
  }
}

/// Checks requests against the operation they address, as Prism's validation proxy does: path, query
/// and header parameters (required, and their values against their schemas, numbers and Booleans read
/// from the text), the request body (required, declared content type, JSON against the schema).
package struct OpenAPIRequestValidator: Sendable {
  /// The document.
  package let document: OpenAPIDocument

  /// Creates a validator.
  package init(document: OpenAPIDocument) { self.document = document }

  /// The violations of a request, or nil when no operation of the document matches its method and path
  /// (such requests are not judged).
  /// - Parameters:
  ///   - method: `GET`, …
  ///   - target: the request target (`/pets/1?limit=3`), percent-encoded as sent.
  ///   - headers: the request's header fields.
  ///   - body: the content.
  package func violations(method: String, target: String, headers: HTTPHeaders, body: [UInt8])
    -> [RequestViolation]?
  {
    let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
    let rawPath = String(parts[0])
    guard let (op, pathValues) = document.operation(method: method, path: rawPath) else { return nil }
    var query: [String: [String]] = [:]
    if parts.count > 1 {
      for pair in parts[1].split(separator: "&") {
        let kv = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let name = decode(String(kv[0]))
        query[name, default: []].append(kv.count > 1 ? decode(String(kv[1])) : "")
      }
    }
    var out: [RequestViolation] = []
    for p in op.parameters {
      let values: [String]
      switch p.location {
      case "path": values = pathValues[p.name].map { [decode($0)] } ?? []
      case "query": values = query[p.name] ?? []
      case "header": values = headers.values(p.name)
      default: continue
      }
      let location = "\(p.location) \(p.name)"
      guard !values.isEmpty else {
        if p.required {
          out.append(
            RequestViolation(
              location: location,
              violation: SchemaViolation(
                instancePath: "$", schemaPath: (p.schemaLocation ?? op.location).description,
                expected: "the required \(p.location) parameter \(p.name)", found: "nothing")))
        }
        continue
      }
      guard let schemaLocation = p.schemaLocation else { continue }
      let value = typed(values, schemaAt: schemaLocation)
      for v in document.validator.validate(value, at: schemaLocation) {
        out.append(RequestViolation(location: location, violation: v))
      }
    }
    if !op.requestBody.isEmpty {
      let contentType = headers.values("Content-Type").first
      if body.isEmpty {
        if op.requestBodyRequired {
          out.append(
            RequestViolation(
              location: "body",
              violation: SchemaViolation(
                instancePath: "$", schemaPath: op.location.appending("requestBody").description,
                expected: "a request body (required)", found: "none")))
        }
      } else if let media = op.requestBody.first(where: {
        MediaTypeName($0.name).essence == MediaTypeName(contentType ?? "").essence
          || MediaTypeName($0.name).covers(MediaTypeName(contentType ?? ""))
      }) {
        if media.isJSON || MediaTypeName(contentType ?? "").isJSON, let schemaLocation = media.schemaLocation
        {
          do {
            let json = try JSONValue.parse(bytes: body)
            for v in document.validator.validate(json, at: schemaLocation) {
              out.append(RequestViolation(location: "body", violation: v))
            }
          } catch {
            out.append(
              RequestViolation(
                location: "body",
                violation: SchemaViolation(
                  instancePath: "$", schemaPath: schemaLocation.description, expected: "a JSON body",
                  found: "invalid JSON (\(error.description))")))
          }
        }
      } else {
        out.append(
          RequestViolation(
            location: "Content-Type",
            violation: SchemaViolation(
              instancePath: "$", schemaPath: op.location.appending("requestBody", "content").description,
              expected: "one of " + op.requestBody.map(\.name).joined(separator: ", "),
              found: contentType.map(JSONValue.quoted) ?? "nothing")))
      }
    }
    return out
  }

  /// The 400 answer's JSON: `{"title", "status", "detail", "validation": [...]}` (Prism's shape).
  package static func report(_ violations: [RequestViolation], method: String, target: String) -> JSONValue {
    .object(
      JSONObject(pairs: [
        ("type", .string("https://mockserver.dev/problems/contract-violation")),
        ("title", .string("Request does not conform to the OpenAPI document")),
        ("status", .number(JSONNumber(400))),
        (
          "detail",
          .string("\(method) \(target): \(violations.count) violation\(violations.count == 1 ? "" : "s")")
        ),
        ("validation", .array(violations.map(\.json))),
      ]))
  }

  /// Parameter text as the JSON value its schema expects (numbers, Booleans, arrays of them).
  func typed(_ values: [String], schemaAt location: SchemaLocation) -> JSONValue {
    let schema = document.schema(at: location).map { document.dereference($0, at: location) }
    let type = schema?.0["type"]?.stringValue
    if type == "array" {
      let items = values.flatMap { $0.split(separator: ",").map(String.init) }
      let itemLocation = schema!.1.appending("items")
      return .array(items.map { typed([$0], schemaAt: itemLocation) })
    }
    let text = values[0]
    switch type {
    case "integer", "number": return JSONNumber(text: text).map(JSONValue.number) ?? .string(text)
    case "boolean": return text == "true" ? .bool(true) : text == "false" ? .bool(false) : .string(text)
    default: return .string(text)
    }
  }

  func decode(_ s: String) -> String {
    s.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? s
  }
}
