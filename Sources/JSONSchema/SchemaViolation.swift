import MockJSON

/// One way a JSON value breaks a schema: where in the value, which schema, what was expected and found.
///
/// Rendered as `$.data.email: expected a string of format email (#/components/schemas/User/properties/email),
/// found 42`.
package struct SchemaViolation: Sendable, Hashable, CustomStringConvertible {
  /// JSON path of the offending value inside the validated instance, `$` for the instance itself
  /// (for a missing required property, the path the property would have).
  package var instancePath: String
  /// Where the schema that failed lives: `#/components/schemas/User/properties/email` in the main document,
  /// `schemas.yaml#/Owner` in a sibling file.
  package var schemaPath: String
  /// What the schema allows, e.g. `a string of format email`.
  package var expected: String
  /// What the value was, e.g. `42`, `"abc"`, `an object`, `nothing`.
  package var found: String

  /// Creates a violation.
  package init(instancePath: String, schemaPath: String, expected: String, found: String) {
    self.instancePath = instancePath
    self.schemaPath = schemaPath
    self.expected = expected
    self.found = found
  }

  /// `expected … (schema path), found …` without the instance path.
  package var message: String { "expected \(expected) (\(schemaPath)), found \(found)" }

  /// `instancePath: expected … (schema path), found …`.
  package var description: String { "\(instancePath): \(message)" }

  /// The JSON Schema keyword that failed (`type`, `required`, `minLength`, `format`, `enum`, …), as
  /// Prism's and Ajv's `code` names it; read from ``expected``, whose wording each keyword fixes.
  package var keyword: String {
    let e = expected
    let starts: [(String, String)] = [
      ("property ", "required"), ("one of ", "enum"), ("the value ", "const"),
      ("a string of at least", "minLength"),
      ("a string of at most", "maxLength"), ("a string matching", "pattern"),
      ("a string of format", "format"),
      ("an integer of format", "format"), ("a number >= ", "minimum"), ("a number > ", "exclusiveMinimum"),
      ("a number <= ", "maximum"), ("a number < ", "exclusiveMaximum"), ("a multiple of", "multipleOf"),
      ("an array of at least", "minItems"), ("an array of at most", "maxItems"),
      ("unique items", "uniqueItems"),
      ("an array containing", "contains"), ("an object with at least", "minProperties"),
      ("an object with at most", "maxProperties"), ("a value matching one of", "anyOf"),
      ("a value matching exactly one oneOf", "oneOf"), ("a value not matching", "not"),
      ("nothing (the schema is false)", "false schema"), ("no property ", "additionalProperties"),
    ]
    for (prefix, keyword) in starts where e.hasPrefix(prefix) {
      if keyword == "anyOf", e.hasSuffix("oneOf schemas") { return "oneOf" }
      return keyword
    }
    if e.hasPrefix("a ") || e.hasPrefix("an ") || e.hasPrefix("null") { return "type" }
    return "schema"
  }

  /// The violation with its instance path moved under `prefix` (`$.response.jsonBody` + `$.data` →
  /// `$.response.jsonBody.data`).
  package func under(_ prefix: String) -> SchemaViolation {
    var copy = self
    copy.instancePath = prefix + instancePath.dropFirst()
    return copy
  }

  /// A short rendering of a value for `found`: scalars as JSON (strings cut at 60 characters), containers
  /// by kind.
  package static func show(_ value: JSONValue?) -> String {
    guard let value else { return "nothing" }
    switch value {
    case .null, .bool, .number: return value.serialized()
    case .string(let s):
      let cut = s.count > 60 ? String(s.prefix(60)) + "…" : s
      return JSONValue.string(cut).serialized()
    case .array(let a): return a.isEmpty ? "an empty array" : "an array of \(a.count)"
    case .object: return "an object"
    }
  }
}

/// JSON path text helpers (`$.a.b`, `$['x y']`, `$.list[2]`).
package enum InstancePath {
  /// `base.key`, or `base['key']` when `key` is not a simple name.
  package static func child(_ base: String, _ key: String) -> String {
    let simple =
      !key.isEmpty
      && key.utf8.allSatisfy { c in
        (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c == 45
      } && !(key.utf8.first.map { $0 >= 48 && $0 <= 57 } ?? false)
    if simple { return base + "." + key }
    var escaped = ""
    for c in key {
      if c == "'" || c == "\\" { escaped.append("\\") }
      escaped.append(c)
    }
    return base + "['" + escaped + "']"
  }

  /// `base[k]`.
  package static func index(_ base: String, _ k: Int) -> String { base + "[\(k)]" }
}
