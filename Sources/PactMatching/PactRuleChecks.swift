import Foundation
import MockJSON
import RegularExpressions

/// One matching rule applied to one value, as pact_matching's `DoMatch` implementations do for strings
/// (path, query, headers, text), JSON values, bytes, lists and maps. Each returns nil when the value
/// matches, else the mismatch in Pact's words. `cascaded` is set when the rule was declared on an
/// ancestor of the value.
package enum PactRuleChecks {
  /// Applies a rule list (`combine` AND or OR): the messages of the failing rules, empty when it matches.
  package static func apply(
    _ list: PactRuleList, path: [String], _ check: (PactMatchingRule, Bool) -> String?
  ) -> [String] {
    if list.isEmpty { return ["No matcher found for path '\(PactDocPath(fragments: path))'"] }
    let results = list.rules.map { check($0, list.cascaded) }
    if list.isOr { return results.contains { $0 == nil } ? [] : results.compactMap { $0 } }
    return results.compactMap { $0 }
  }

  static let semverPattern = CompiledRegex(
    constant:
      #"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)(\.(0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?(\+[0-9a-zA-Z-]+(\.[0-9a-zA-Z-]+)*)?$"#
  )

  /// A text value (path, query and header values, text bodies, XML text and attributes).
  package static func string(_ rule: PactMatchingRule, _ expected: String, _ actual: String, cascaded: Bool)
    -> String?
  {
    switch rule {
    case .regex(let r):
      return r.matches(actual) ? nil : "Expected '\(actual)' to match '\(r.pattern)'"
    case .equality, .values:
      return expected == actual ? nil : "Expected '\(actual)' to be equal to '\(expected)'"
    case .type, .minType, .maxType, .minMaxType: return nil
    case .include(let s):
      return s.isEmpty || actual.contains(s) ? nil : "Expected '\(actual)' to include '\(s)'"
    case .number, .decimal:
      return Double(actual) != nil ? nil : "Expected '\(actual)' to match a number"
    case .integer:
      return UInt64(actual) != nil ? nil : "Expected '\(actual)' to match an integer number"
    case .date(let f):
      return f.accepts(actual) ? nil : "Expected '\(actual)' to match a date pattern of '\(f)'"
    case .time(let f):
      return f.accepts(actual) ? nil : "Expected '\(actual)' to match a time pattern of '\(f)'"
    case .timestamp(let f):
      return f.accepts(actual) ? nil : "Expected '\(actual)' to match a timestamp pattern of '\(f)'"
    case .boolean:
      return actual == "true" || actual == "false" ? nil : "Expected '\(actual)' to match a boolean"
    case .statusCode(let c):
      guard let code = UInt16(actual) else { return "Unable to match '\(actual)' using statusCode" }
      return c.contains(Int(code)) ? nil : "Expected status code \(code) to be a \(c)"
    case .notEmpty:
      return actual.isEmpty ? "Expected '' (String) to not be empty" : nil
    case .semver:
      return semverPattern.containsMatch(in: actual) ? nil : "'\(actual)' is not a valid semantic version"
    case .contentType(let t):
      return PactContentType.check(Array(actual.utf8), is: t)
    case .null, .eachKey, .eachValue, .arrayContains:
      return !cascaded || rule.canCascade ? "Unable to match '\(actual)' using \(rule.name)" : nil
    }
  }

  /// A JSON leaf, or a collection compared as a whole.
  package static func json(
    _ rule: PactMatchingRule, _ expected: JSONValue, _ actual: JSONValue, cascaded: Bool
  )
    -> String?
  {
    switch rule {
    case .regex(let r):
      let s = actual.stringValue ?? actual.serialized()
      return r.matches(s) ? nil : "Expected '\(text(actual))' to match '\(r.pattern)'"
    case .include(let sub):
      let s = actual.stringValue ?? actual.serialized()
      return sub.isEmpty || s.contains(sub) ? nil : "Expected '\(text(actual))' to include '\(sub)'"
    case .type:
      return sameType(expected, actual) ? nil : typeMismatch(expected, actual)
    case .minType(let min):
      if case .array(let a) = actual, case .array = expected {
        return !cascaded && a.count < min ? "Expected '\(text(actual))' to have at least \(min) item(s)" : nil
      }
      return sameType(expected, actual) ? nil : typeMismatch(expected, actual)
    case .maxType(let max):
      if case .array(let a) = actual, case .array = expected {
        return !cascaded && a.count > max ? "Expected '\(text(actual))' to have at most \(max) item(s)" : nil
      }
      return sameType(expected, actual) ? nil : typeMismatch(expected, actual)
    case .minMaxType(let min, let max):
      if case .array(let a) = actual, case .array = expected {
        if !cascaded && a.count < min { return "Expected '\(text(actual))' to have at least \(min) item(s)" }
        if !cascaded && a.count > max { return "Expected '\(text(actual))' to have at most \(max) item(s)" }
        return nil
      }
      return sameType(expected, actual) ? nil : typeMismatch(expected, actual)
    case .equality, .values:
      return equal(expected, actual)
        ? nil
        : "Expected \(valueOf(actual)) (\(typeOf(actual))) to be equal to \(valueOf(expected)) (\(typeOf(expected)))"
    case .null:
      return actual == .null ? nil : "Expected \(valueOf(actual)) (\(typeOf(actual))) to be a null value"
    case .integer:
      return typeOf(actual) == "Integer"
        ? nil : "Expected \(valueOf(actual)) (\(typeOf(actual))) to be an integer"
    case .decimal:
      return typeOf(actual) == "Decimal"
        ? nil : "Expected \(valueOf(actual)) (\(typeOf(actual))) to be a decimal number"
    case .number:
      if case .number = actual { return nil }
      return "Expected \(valueOf(actual)) (\(typeOf(actual))) to be a number"
    case .date(let f), .time(let f), .timestamp(let f):
      let s = text(actual)
      return f.accepts(s) ? nil : "Expected '\(s)' to match a \(rule.name) pattern of '\(f)'"
    case .contentType(let t):
      let data: [UInt8]
      if case .string(let s) = actual {
        data = Data(base64Encoded: s).map { [UInt8]($0) } ?? Array(s.utf8)
      } else {
        data = Array(actual.serialized().utf8)
      }
      return PactContentType.check(data, is: t).map {
        "Failed to match data to have a content type of '\(t)': \($0)"
      }
    case .boolean:
      switch actual {
      case .bool: return nil
      case .string(let s) where s == "true" || s == "false": return nil
      default: return "Expected \(valueOf(actual)) (\(typeOf(actual))) to match a boolean"
      }
    case .notEmpty:
      switch actual {
      case .null: return "Expected non-empty value but got a NULL"
      case .string(let s): return s.isEmpty ? "Expected '' (String) to not be empty" : nil
      case .array(let a): return a.isEmpty ? "Expected [] (Array) to not be empty" : nil
      case .object(let o): return o.members.isEmpty ? "Expected {} (Object) to not be empty" : nil
      default: return nil
      }
    case .semver:
      guard case .string(let s) = actual else {
        return "Expected something that matches a semantic version, but got '\(actual.serialized())'"
      }
      return semverPattern.containsMatch(in: s) ? nil : "'\(s)' is not a valid semantic version"
    case .eachKey, .eachValue, .arrayContains, .statusCode:
      return nil
    }
  }

  /// A list compared as a whole (its size; equality of all items).
  package static func list<T: Equatable>(
    _ rule: PactMatchingRule, _ expected: [T], _ actual: [T], cascaded: Bool, describe: ([T]) -> String
  ) -> String? {
    switch rule {
    case .minType(let min):
      return !cascaded && actual.count < min
        ? "Expected \(describe(actual)) (size \(actual.count)) to have minimum size of \(min)" : nil
    case .maxType(let max):
      return !cascaded && actual.count > max
        ? "Expected \(describe(actual)) (size \(actual.count)) to have maximum size of \(max)" : nil
    case .minMaxType(let min, let max):
      if !cascaded && actual.count < min {
        return "Expected \(describe(actual)) (size \(actual.count)) to have minimum size of \(min)"
      }
      if !cascaded && actual.count > max {
        return "Expected \(describe(actual)) (size \(actual.count)) to have maximum size of \(max)"
      }
      return nil
    case .equality:
      return expected == actual ? nil : "Expected \(describe(actual)) to be equal to \(describe(expected))"
    case .notEmpty:
      return actual.isEmpty ? "Expected \(describe(actual)) (Array) to not be empty" : nil
    case .null, .statusCode:
      return "Unable to match \(describe(actual)) using \(rule.name)"
    default:
      return nil
    }
  }

  /// An object compared as a whole (its size; equality).
  package static func map(
    _ rule: PactMatchingRule, _ expected: JSONObject, _ actual: JSONObject, cascaded: Bool
  ) -> String? {
    let shown = JSONValue.object(actual).serialized()
    switch rule {
    case .regex, .type, .arrayContains, .eachKey, .eachValue, .values: return nil
    case .minType(let min):
      return !cascaded && actual.members.count < min
        ? "Expected \(shown) (size \(actual.members.count)) to have minimum size of \(min)" : nil
    case .maxType(let max):
      return !cascaded && actual.members.count > max
        ? "Expected \(shown) (size \(actual.members.count)) to have maximum size of \(max)" : nil
    case .minMaxType(let min, let max):
      if !cascaded && actual.members.count < min {
        return "Expected \(shown) (size \(actual.members.count)) to have minimum size of \(min)"
      }
      if !cascaded && actual.members.count > max {
        return "Expected \(shown) (size \(actual.members.count)) to have maximum size of \(max)"
      }
      return nil
    case .equality:
      return equal(.object(expected), .object(actual))
        ? nil : "Expected \(shown) to be equal to \(JSONValue.object(expected).serialized())"
    case .notEmpty:
      return actual.members.isEmpty ? "Expected \(shown) (Map) to not be empty" : nil
    default:
      return "Unable to match \(shown) using \(rule.name)"
    }
  }

  /// A binary body.
  package static func bytes(_ rule: PactMatchingRule, _ expected: [UInt8], _ actual: [UInt8], cascaded: Bool)
    -> String?
  {
    switch rule {
    case .regex(let r):
      guard let s = String(validating: actual, as: UTF8.self) else {
        return "Could not convert actual bytes into a UTF-8 string"
      }
      return r.matches(s) ? nil : "Expected '\(s)' to match '\(r.pattern)'"
    case .equality:
      return expected == actual
        ? nil : "Expected \(expected.count) bytes to be equal to the actual \(actual.count) bytes"
    case .type, .minType, .maxType, .minMaxType: return nil
    case .include(let sub):
      guard let s = String(validating: actual, as: UTF8.self) else {
        return "Could not convert actual bytes into a UTF-8 string"
      }
      return sub.isEmpty || s.contains(sub) ? nil : "Expected '\(s)' to include '\(sub)'"
    case .contentType(let t): return PactContentType.check(actual, is: t)
    case .notEmpty: return actual.isEmpty ? "Expected [] (0 bytes) to not be empty" : nil
    default:
      return !cascaded || rule.canCascade
        ? "Unable to match \(actual.count) bytes using \(rule.name)" : nil
    }
  }

  // MARK: - JSON helpers (serde_json's view of values)

  /// `Integer` for a number written without fraction or exponent, else `Decimal`.
  package static func typeOf(_ v: JSONValue) -> String {
    switch v {
    case .object: return "Object"
    case .array: return "Array"
    case .null: return "Null"
    case .bool: return "Boolean"
    case .number(let n): return isIntegerText(n.text) ? "Integer" : "Decimal"
    case .string: return "String"
    }
  }

  static func isIntegerText(_ t: String) -> Bool {
    !t.utf8.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
  }

  package static func valueOf(_ v: JSONValue) -> String {
    if case .string(let s) = v { return "'\(s)'" }
    return v.serialized()
  }

  /// The raw text of a string, the JSON text of anything else.
  package static func text(_ v: JSONValue) -> String { v.stringValue ?? v.serialized() }

  static func sameType(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.array, .array), (.bool, .bool), (.number, .number), (.null, .null), (.object, .object),
      (.string, .string):
      return true
    default: return false
    }
  }

  static func typeMismatch(_ e: JSONValue, _ a: JSONValue) -> String {
    "Expected \(valueOf(a)) (\(typeOf(a))) to be the same type as \(valueOf(e)) (\(typeOf(e)))"
  }

  /// serde_json's equality: an integer never equals a decimal (`1` ≠ `1.0`), objects by member.
  package static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
    switch (a, b) {
    case (.number(let x), .number(let y)):
      let xi = isIntegerText(x.text)
      guard xi == isIntegerText(y.text) else { return false }
      return xi ? x == y : x.doubleValue == y.doubleValue
    case (.array(let x), .array(let y)):
      return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
    case (.object(let x), .object(let y)):
      guard x.members.count == y.members.count else { return false }
      return x.members.allSatisfy { m in y[m.key].map { equal(m.value, $0) } ?? false }
    default:
      return a == b
    }
  }
}

extension PactDocPath {
  /// The path of a value location (`["$", "a", "0"]`).
  package init(fragments: [String]) {
    var p = PactDocPath(tokens: [])
    for f in fragments {
      if f == "$" && p.tokens.isEmpty { p.tokens.append(.root) } else { p = p.joined(f) }
    }
    self = p
  }
}

extension PactMatchingRule.StatusClass: CustomStringConvertible {
  package var description: String {
    switch self {
    case .information: return "Informational response (100–199)"
    case .success: return "Successful response (200–299)"
    case .redirect: return "Redirect (300–399)"
    case .clientError: return "Client error (400–499)"
    case .serverError: return "Server error (500–599)"
    case .nonError: return "Non-error response (< 400)"
    case .error: return "Error response (>= 400)"
    case .codes(let c): return "one of \(c)"
    }
  }
}
