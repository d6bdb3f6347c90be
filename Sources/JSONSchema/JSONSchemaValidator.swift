import Foundation
import MockJSON
import RegularExpressions
import Synchronization

/// Validates JSON values against JSON Schema as OpenAPI 3.0 and 3.1 use it (and as `matchesJsonSchema`
/// does).
///
/// Keywords: `$ref` (within the document and to sibling documents given in `documents`), `type` (one or a
/// list; `integer` means a number without fraction), `nullable` (3.0), `enum`, `const`, `format`
/// (`date-time`, `date`, `time`, `uuid`, `email`, `uri`, `uri-reference`, `hostname`, `ipv4`, `ipv6`,
/// `int32`, `int64`; other formats are annotations), `minimum`/`maximum`, `exclusiveMinimum`/
/// `exclusiveMaximum` (3.0 Booleans and 3.1 numbers), `multipleOf`, `minLength`/`maxLength` (in Unicode
/// code points), `pattern`, `items`, `prefixItems`, `minItems`/`maxItems`, `uniqueItems`, `contains`,
/// `required`, `properties`, `patternProperties`, `additionalProperties`, `minProperties`/
/// `maxProperties`, `allOf`, `anyOf`, `oneOf` (with `discriminator` choosing the branch), `not`, and the
/// Boolean schemas `true`/`false`. Numbers compare by exact decimal value.
package struct JSONSchemaValidator: Sendable {
  /// Which rules `$ref` follows.
  package enum Dialect: Sendable, Hashable {
    /// OpenAPI 3.0: `$ref` replaces its object (siblings ignored), `nullable`, Boolean exclusive bounds.
    case openAPI30
    /// OpenAPI 3.1 / JSON Schema 2020-12: `$ref` applies alongside its siblings, `type: [.., "null"]`.
    case openAPI31
  }

  /// The documents `$ref`s may reach, by name; `""` is the main document.
  package var documents: [String: JSONValue]
  /// The dialect.
  package var dialect: Dialect

  /// Creates a validator over a main document and its sibling documents.
  package init(document: JSONValue, siblings: [String: JSONValue] = [:], dialect: Dialect = .openAPI31) {
    var all = siblings
    all[""] = document
    self.documents = all
    self.dialect = dialect
  }

  /// A validator for one standalone JSON Schema document (WireMock's `matchesJsonSchema`): `$ref`s such as
  /// `#/definitions/x` or `#/$defs/x` resolve within it; draft 4 Boolean and 2020-12 numeric exclusive
  /// bounds are both understood.
  package init(schema: JSONValue) {
    self.init(document: schema, dialect: .openAPI31)
  }

  /// Validates `instance` against the main document itself (the standalone schema).
  package func validate(_ instance: JSONValue) -> [SchemaViolation] {
    validate(instance, at: SchemaLocation())
  }

  /// Validates `instance` against the schema at `location`.
  /// - Returns: every violation found (empty when the value conforms). For `anyOf`/`oneOf` with no
  ///   matching branch, the violations of the closest branch are reported.
  package func validate(_ instance: JSONValue, at location: SchemaLocation) -> [SchemaViolation] {
    guard let schema = documents[location.document].flatMap({ location.value(in: $0) }) else {
      return [
        SchemaViolation(
          instancePath: "$", schemaPath: location.description, expected: "a schema at this location",
          found: "nothing")
      ]
    }
    var out: [SchemaViolation] = []
    check(instance, "$", schema, location, depth: Depth(), ValidationWork(), &out)
    return out
  }

  /// Validates `instance` against `schema` given inline (its `$ref`s resolve against the main document).
  package func validate(_ instance: JSONValue, schema: JSONValue) -> [SchemaViolation] {
    var out: [SchemaViolation] = []
    check(
      instance, "$", schema, SchemaLocation(document: "\u{0}inline"), depth: Depth(), ValidationWork(), &out)
    return out
  }

  /// True when `instance` conforms.
  package func conforms(_ instance: JSONValue, at location: SchemaLocation) -> Bool {
    validate(instance, at: location).isEmpty
  }

  /// The schema a `$ref` points at, with its location.
  package func resolve(_ reference: String, from base: SchemaLocation) -> (JSONValue, SchemaLocation)? {
    var base = base
    if base.document == "\u{0}inline" { base.document = "" }
    guard let target = base.resolving(reference: reference), let doc = documents[target.document],
      let value = target.value(in: doc)
    else { return nil }
    return (value, target)
  }

  // MARK: - Checking

  func check(
    _ v: JSONValue, _ path: String, _ schema: JSONValue, _ loc: SchemaLocation, depth: Depth,
    _ work: ValidationWork, _ out: inout [SchemaViolation]
  ) {
    var own: [SchemaViolation] = []
    defer { out += own }
    func fail(_ expected: String, _ found: String? = nil, at p: String? = nil) {
      own.append(
        SchemaViolation(
          instancePath: p ?? path, schemaPath: loc.description, expected: expected,
          found: found ?? SchemaViolation.show(v)))
    }
    guard depth.steps < 64 else {
      fail("a schema whose $ref chain ends", "a $ref cycle deeper than 64")
      return
    }
    guard depth.level <= JSONSchemaValidator.maximumDepth else {
      fail(
        "a value nested at most \(JSONSchemaValidator.maximumDepth) levels deep (the validation depth limit)",
        "a deeper value")
      return
    }
    work.steps += 1
    guard work.steps <= JSONSchemaValidator.maximumSteps else {
      if !work.exhausted {
        work.exhausted = true
        fail(
          "a value validated within \(JSONSchemaValidator.maximumSteps) schema checks (the validation work "
            + "limit)", "more work")
      }
      return
    }
    let s: JSONObject
    switch schema {
    case .bool(true): return
    case .bool(false):
      fail("nothing (the schema is false)")
      return
    case .object(let o): s = o
    default: return
    }
    if let ref = s["$ref"]?.stringValue {
      guard let (target, targetLoc) = resolve(ref, from: loc) else {
        fail("a resolvable $ref \(JSONValue.quoted(ref))", "no such schema")
        return
      }
      checkReference(v, path, target, targetLoc, depth: depth.next, work, &out)
      if dialect == .openAPI30 { return }
    }
    if v == .null, s["nullable"]?.boolValue == true { return }

    if let type = s["type"] {
      let names: [String]
      switch type {
      case .string(let t): names = [t]
      case .array(let list): names = list.compactMap(\.stringValue)
      default: names = []
      }
      if !names.isEmpty, !names.contains(where: { JSONSchemaValidator.hasType(v, $0) }) {
        var expected = names.map(JSONSchemaValidator.typePhrase).joined(separator: " or ")
        if let format = s["format"]?.stringValue, names == ["string"] { expected += " of format \(format)" }
        if s["nullable"]?.boolValue == true { expected += " or null" }
        fail(expected)
        return
      }
    }
    if let e = s["enum"]?.arrayValue, !e.contains(v) {
      fail("one of " + e.map { $0.serialized() }.joined(separator: ", "))
    }
    if let c = s["const"], c != v { fail("the value \(c.serialized())") }

    switch v {
    case .number(let n): checkNumber(n, s, fail)
    case .string(let text): checkString(text, s, fail)
    case .array(let items): checkArray(items, path, s, loc, depth, work, &out, fail)
    case .object(let o): checkObject(o, path, s, loc, depth, work, &out, fail)
    default: break
    }

    if let all = s["allOf"]?.arrayValue {
      for (k, sub) in all.enumerated() {
        check(v, path, sub, loc.appending("allOf", String(k)), depth: depth.next, work, &out)
      }
    }
    if let discriminated = discriminatedBranch(v, path, s, loc, fail) {
      if let (branch, branchLoc) = discriminated {
        check(v, path, branch, branchLoc, depth: depth.next, work, &out)
      }
    } else {
      if let any = s["anyOf"]?.arrayValue {
        let results = any.enumerated().map { k, sub in
          var r: [SchemaViolation] = []
          check(v, path, sub, loc.appending("anyOf", String(k)), depth: depth.next, work, &r)
          return r
        }
        if !results.contains(where: \.isEmpty) {
          out += closest(results, fallback: { fail("a value matching one of \(any.count) anyOf schemas") })
        }
      }
      if let one = s["oneOf"]?.arrayValue {
        let results = one.enumerated().map { k, sub in
          var r: [SchemaViolation] = []
          check(v, path, sub, loc.appending("oneOf", String(k)), depth: depth.next, work, &r)
          return r
        }
        let matched = results.filter(\.isEmpty).count
        if matched == 0 {
          out += closest(results, fallback: { fail("a value matching one of \(one.count) oneOf schemas") })
        } else if matched > 1 {
          fail("a value matching exactly one oneOf schema", "a value matching \(matched) of them")
        }
      }
    }
    if let not = s["not"] {
      var r: [SchemaViolation] = []
      check(v, path, not, loc.appending("not"), depth: depth.next, work, &r)
      if r.isEmpty { fail("a value not matching the schema under not") }
    }
  }

  /// Checks `v` at `path` against the schema a `$ref` reached, once per instance path and schema location:
  /// a recursive `oneOf` tried every branch again at every level (tripling per level), and a `$ref` that
  /// comes back to itself at the same path (consuming no input) is a violation instead of a loop.
  func checkReference(
    _ v: JSONValue, _ path: String, _ target: JSONValue, _ loc: SchemaLocation, depth: Depth,
    _ work: ValidationWork, _ out: inout [SchemaViolation]
  ) {
    let key = path + "\u{0}" + loc.description
    if let known = work.results[key] {
      out += known
      return
    }
    guard work.inProgress.insert(key).inserted else {
      out.append(
        SchemaViolation(
          instancePath: path, schemaPath: loc.description, expected: "a $ref that consumes input",
          found: "a $ref cycle at the same value"))
      return
    }
    var r: [SchemaViolation] = []
    check(v, path, target, loc, depth: depth, work, &r)
    work.inProgress.remove(key)
    work.results[key] = r
    out += r
  }

  /// The violations of the branch that came closest (fewest violations, deepest first violation).
  func closest(_ results: [[SchemaViolation]], fallback: () -> Void) -> [SchemaViolation] {
    guard
      let best = results.min(by: { a, b in
        if a.count != b.count { return a.count < b.count }
        return (a.first?.instancePath.count ?? 0) > (b.first?.instancePath.count ?? 0)
      }), !best.isEmpty
    else {
      fallback()
      return []
    }
    return best
  }

  /// With a `discriminator` next to `oneOf`/`anyOf` and an object instance: `.some(branch)` to validate
  /// against, `.some(nil)` when the discriminator already reported a problem, nil when not applicable.
  func discriminatedBranch(
    _ v: JSONValue, _ path: String, _ s: JSONObject, _ loc: SchemaLocation,
    _ fail: (String, String?, String?) -> Void
  ) -> (JSONValue, SchemaLocation)?? {
    guard let d = s["discriminator"]?.objectValue, let property = d["propertyName"]?.stringValue,
      case .object(let o) = v
    else { return nil }
    let branches = (s["oneOf"]?.arrayValue ?? s["anyOf"]?.arrayValue) ?? []
    guard !branches.isEmpty else { return nil }
    let propertyPath = InstancePath.child(path, property)
    guard let value = o[property]?.stringValue else {
      fail(
        "property \(property) (the discriminator), a string", SchemaViolation.show(o[property]), propertyPath)
      return .some(nil)
    }
    let reference =
      d["mapping"]?[value]?.stringValue.map {
        $0.contains("#") || $0.contains(".") ? $0 : "#/components/schemas/\($0)"
      }
      ?? "#/components/schemas/\(value)"
    // The branch whose $ref is the mapped (or implied) schema.
    if let target = loc.resolving(reference: reference) {
      for branch in branches {
        if let ref = branch["$ref"]?.stringValue, loc.resolving(reference: ref) == target,
          let resolved = resolve(ref, from: loc)
        {
          return .some(resolved)
        }
      }
    }
    let names = branches.compactMap { $0["$ref"]?.stringValue?.split(separator: "/").last.map(String.init) }
    fail(
      "property \(property) naming one of the schemas " + names.joined(separator: ", "),
      JSONValue.quoted(value),
      propertyPath)
    return .some(nil)
  }

  // MARK: - Keyword groups

  func checkNumber(_ n: JSONNumber, _ s: JSONObject, _ fail: (String, String?, String?) -> Void) {
    let exclusiveMinBool = s["exclusiveMinimum"]?.boolValue == true
    let exclusiveMaxBool = s["exclusiveMaximum"]?.boolValue == true
    if let min = s["minimum"]?.numberValue {
      if exclusiveMinBool ? !(n > min) : n < min {
        fail("a number \(exclusiveMinBool ? ">" : ">=") \(min.text)", nil, nil)
      }
    }
    if let min = s["exclusiveMinimum"]?.numberValue, !(n > min) { fail("a number > \(min.text)", nil, nil) }
    if let max = s["maximum"]?.numberValue {
      if exclusiveMaxBool ? !(n < max) : n > max {
        fail("a number \(exclusiveMaxBool ? "<" : "<=") \(max.text)", nil, nil)
      }
    }
    if let max = s["exclusiveMaximum"]?.numberValue, !(n < max) { fail("a number < \(max.text)", nil, nil) }
    if let m = s["multipleOf"]?.numberValue, m.doubleValue > 0 {
      let q = n.doubleValue / m.doubleValue
      if abs(q - q.rounded()) > 1e-9 * max(1, abs(q)) { fail("a multiple of \(m.text)", nil, nil) }
    }
    if let format = s["format"]?.stringValue {
      switch format {
      case "int32":
        if !n.isInteger || n < JSONNumber(Int(Int32.min)) || n > JSONNumber(Int(Int32.max)) {
          fail("an integer of format int32", nil, nil)
        }
      case "int64":
        if !n.isInteger || n.intValue == nil { fail("an integer of format int64", nil, nil) }
      default: break
      }
    }
  }

  func checkString(_ text: String, _ s: JSONObject, _ fail: (String, String?, String?) -> Void) {
    let length = text.unicodeScalars.count
    if let min = s["minLength"]?.numberValue?.intValue, length < min {
      fail("a string of at least \(min) character\(min == 1 ? "" : "s")", nil, nil)
    }
    if let max = s["maxLength"]?.numberValue?.intValue, length > max {
      fail("a string of at most \(max) character\(max == 1 ? "" : "s")", nil, nil)
    }
    if let pattern = s["pattern"]?.stringValue {
      if let found = PatternCache.shared.search(pattern, in: text), !found {
        fail("a string matching /\(pattern)/", nil, nil)
      }
    }
    if let format = s["format"]?.stringValue, let ok = StringFormats.check(format, text), !ok {
      fail("a string of format \(format)", nil, nil)
    }
  }

  func checkArray(
    _ items: [JSONValue], _ path: String, _ s: JSONObject, _ loc: SchemaLocation, _ depth: Depth,
    _ work: ValidationWork, _ out: inout [SchemaViolation], _ fail: (String, String?, String?) -> Void
  ) {
    let found = "\(items.count) item\(items.count == 1 ? "" : "s")"
    if let min = s["minItems"]?.numberValue?.intValue, items.count < min {
      fail("an array of at least \(min) item\(min == 1 ? "" : "s")", found, nil)
    }
    if let max = s["maxItems"]?.numberValue?.intValue, items.count > max {
      fail("an array of at most \(max) item\(max == 1 ? "" : "s")", found, nil)
    }
    if s["uniqueItems"]?.boolValue == true {
      var seen: Set<JSONValue> = []
      for (k, item) in items.enumerated() where !seen.insert(item).inserted {
        fail("unique items", "a repeat of an earlier item", InstancePath.index(path, k))
      }
    }
    var start = 0
    if let prefix = s["prefixItems"]?.arrayValue {
      for (k, sub) in prefix.enumerated() where k < items.count {
        check(
          items[k], InstancePath.index(path, k), sub, loc.appending("prefixItems", String(k)),
          depth: depth.child, work,
          &out)
      }
      start = prefix.count
    }
    if let itemSchema = s["items"], itemSchema.arrayValue == nil {
      for k in start..<max(start, items.count) {
        check(
          items[k], InstancePath.index(path, k), itemSchema, loc.appending("items"), depth: depth.child, work,
          &out)
      }
    }
    if let contains = s["contains"] {
      // Each item is checked at its own instance path: the work budget remembers results by instance path
      // and schema location, so checking every item at the array's path counted the first item's result
      // for all of them.
      func matches(_ k: Int) -> Bool {
        var r: [SchemaViolation] = []
        check(
          items[k], InstancePath.index(path, k), contains, loc.appending("contains"), depth: depth.child,
          work, &r)
        return r.isEmpty
      }
      let minimum = s["minContains"]?.numberValue?.intValue
      let maximum = s["maxContains"]?.numberValue?.intValue
      if minimum == nil, maximum == nil {
        if !items.indices.contains(where: matches) {
          fail("an array containing an item that matches contains", nil, nil)
        }
      } else {
        // 2019-09 and later: minContains (default 1, 0 accepts any array) and maxContains count the matches.
        let count = items.indices.count(where: matches)
        if count < (minimum ?? 1) {
          fail("an array containing at least \(minimum ?? 1) items that match contains", "\(count)", nil)
        }
        if let maximum, count > maximum {
          fail("an array containing at most \(maximum) items that match contains", "\(count)", nil)
        }
      }
    }
  }

  func checkObject(
    _ o: JSONObject, _ path: String, _ s: JSONObject, _ loc: SchemaLocation, _ depth: Depth,
    _ work: ValidationWork, _ out: inout [SchemaViolation], _ fail: (String, String?, String?) -> Void
  ) {
    let values = o.effective
    if let required = s["required"]?.arrayValue {
      for case .string(let name) in required where values[name] == nil {
        fail("property \(name) (required)", "nothing", InstancePath.child(path, name))
      }
    }
    if let min = s["minProperties"]?.numberValue?.intValue, values.count < min {
      fail("an object with at least \(min) properties", "\(values.count)", nil)
    }
    if let max = s["maxProperties"]?.numberValue?.intValue, values.count > max {
      fail("an object with at most \(max) properties", "\(values.count)", nil)
    }
    let properties = s["properties"]?.objectValue
    let patterns = s["patternProperties"]?.objectValue?.members ?? []
    var seen: Set<String> = []
    for member in o.members.reversed() where seen.insert(member.key).inserted {
      let key = member.key
      let childPath = InstancePath.child(path, key)
      var described = false
      if let sub = properties?[key] {
        described = true
        check(member.value, childPath, sub, loc.appending("properties", key), depth: depth.child, work, &out)
      }
      for p in patterns where PatternCache.shared.search(p.key, in: key) == true {
        described = true
        check(
          member.value, childPath, p.value, loc.appending("patternProperties", p.key), depth: depth.child,
          work, &out)
      }
      if !described, let additional = s["additionalProperties"] {
        if additional == .bool(false) {
          fail(
            "no property \(key) (additionalProperties is false)", SchemaViolation.show(member.value),
            childPath)
        } else {
          check(
            member.value, childPath, additional, loc.appending("additionalProperties"), depth: depth.child,
            work, &out
          )
        }
      }
    }
  }

  // MARK: - Types

  static func hasType(_ v: JSONValue, _ type: String) -> Bool {
    switch (type, v) {
    case ("null", .null), ("boolean", .bool), ("string", .string), ("array", .array), ("object", .object),
      ("number", .number):
      return true
    case ("integer", .number(let n)): return n.isInteger
    default: return false
    }
  }

  static func typePhrase(_ type: String) -> String {
    switch type {
    case "null": return "null"
    case "boolean": return "a boolean"
    case "integer": return "an integer"
    case "array": return "an array"
    case "object": return "an object"
    default: return "a " + type
    }
  }
}

/// Compiled `pattern`s, each compiled once per process: schemas are validated many times (every request
/// with `--validate-requests`), and compiling per use would cost time. Bounded: emptied past 4,096
/// patterns (schemas name a handful; the bound only stops a stream of distinct schemas from growing it).
final class PatternCache: Sendable {
  static let shared = PatternCache()
  /// An invalid pattern is cached as nil.
  private let compiled = Mutex<[String: CompiledRegex?]>([:])

  /// True when `pattern` (ECMA 262 style, unanchored) finds a match in `text`; nil for an invalid pattern.
  func search(_ pattern: String, in text: String) -> Bool? {
    let cached = compiled.withLock { $0[pattern] }
    let regex: CompiledRegex?
    if let cached {
      regex = cached
    } else {
      regex = try? CompiledRegex(pattern, dialect: .ecma262)
      compiled.withLock { cache in
        if cache.count >= 4096 { cache.removeAll() }
        cache[pattern] = .some(regex)
      }
    }
    return regex?.containsMatch(in: text)
  }
}

extension JSONSchemaValidator {
  /// The deepest value validated: an array or object nested deeper gets a violation saying so (stated in
  /// docs/contracts.md; a request is then refused with 400).
  package static let maximumDepth = 64
  /// The most schema checks one validation makes (each keyword group at one value counts one); past it
  /// a violation says so. With each `$ref` checked once per value (``checkReference``), ordinary
  /// documents stay far below it.
  package static let maximumSteps = 1_000_000

  /// How deep a check is: `level` values into the instance, `steps` schema steps (`$ref`, `allOf`, …)
  /// since the last value entered.
  struct Depth {
    var level = 0
    var steps = 0
    /// One more schema step at the same value.
    var next: Depth { Depth(level: level, steps: steps + 1) }
    /// Into a child value.
    var child: Depth { Depth(level: level + 1, steps: 0) }
  }
}

/// The work of one validation: schema checks made, and the violations of each `$ref` already checked at
/// an instance path. Made and used by one call, on its thread.
final class ValidationWork {
  var steps = 0
  var exhausted = false
  var results: [String: [SchemaViolation]] = [:]
  var inProgress: Set<String> = []
}
