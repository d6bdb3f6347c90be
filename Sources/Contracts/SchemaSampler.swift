import Foundation
import HTTPCore
import JSONSchema
import MockJSON
import RegularExpressions

/// Generates a value that conforms to a schema, reproducibly from a seed: `example`/`default`/`const`
/// first, then enums, formats (`date-time`, `date`, `uuid`, `email`, `uri`, `hostname`, `ipv4`, `ipv6`),
/// `minimum`/`maximum` (exclusive too) and `multipleOf`, `minLength`/`maxLength`, `minItems`/`maxItems`,
/// `uniqueItems`, `contains` with `minContains`/`maxContains`, every declared property, `patternProperties`
/// and `dependentRequired`, `allOf` merged, the first `oneOf`/`anyOf` branch, `if`/`then`/`else`, `not`.
/// A value that still breaks its schema (a combination of keywords the rules above do not meet at once) is
/// made again from the next random values, up to ``attempts`` times, and the first that validates is kept.
package struct SchemaSampler {
  /// The document whose `$ref`s the schemas use.
  package let document: OpenAPIDocument
  var random: SplitMix64
  /// What is left of ``generationBudget`` for the value being made.
  var remaining = SchemaSampler.generationBudget

  /// The most array items, object properties and string characters one generated value has in all:
  /// `minItems: 100000000` (or `minLength`, `minProperties`) exhausted memory at start or import. Past it
  /// the value is cut short (it then breaks that bound; `mockserver lint` says so).
  package static let generationBudget = 100_000

  /// Creates a sampler; the same seed and document give the same values.
  package init(document: OpenAPIDocument, seed: UInt64) {
    self.document = document
    self.random = SplitMix64(seed: seed)
  }

  /// How many values ``sample(at:)`` makes at most before it keeps one that breaks its schema.
  package static let attempts = 8

  /// A value for the schema at `location` (nil when there is no schema there): the first of up to
  /// ``attempts`` values that validates against it, else the last one made.
  package mutating func sample(at location: SchemaLocation) -> JSONValue? {
    guard let schema = document.schema(at: location) else { return nil }
    var value = JSONValue.null
    for _ in 0..<SchemaSampler.attempts {
      remaining = SchemaSampler.generationBudget
      value = sample(schema, location, depth: 0)
      if document.validator.conforms(value, at: location) { break }
    }
    return value
  }

  /// True when `value` validates against the schema at `location`.
  func conforms(_ value: JSONValue, _ location: SchemaLocation) -> Bool {
    document.validator.conforms(value, at: location)
  }

  mutating func sample(_ schema: JSONValue, _ location: SchemaLocation, depth: Int) -> JSONValue {
    let (schema, location) = document.dereference(schema, at: location)
    guard case .object(var s) = schema, depth < 12 else {
      return schema == .bool(false) ? .null : .object(JSONObject())
    }
    if s["not"] != nil || s["if"] != nil {
      // The value of the rest of the schema, then `then`/`else` applied, made again while it matches `not`.
      let conditional = s
      s.members.removeAll { ["not", "if", "then", "else"].contains($0.key) }
      var value = JSONValue.null
      for _ in 0..<SchemaSampler.attempts {
        value = sample(.object(s), location, depth: depth)
        if conditional["if"] != nil {
          let branch = conforms(value, location.appending("if")) ? "then" : "else"
          if conditional[branch] != nil { value = applying(branch, to: value, location, depth: depth) }
        }
        guard conditional["not"] != nil, conforms(value, location.appending("not")) else { break }
      }
      return value
    }
    if let c = s["const"] { return c }
    if let e = s["example"] { return e }
    if let e = s["examples"]?.arrayValue?.first { return e }
    if let e = s["enum"]?.arrayValue, !e.isEmpty { return e[Int(random.next() % UInt64(e.count))] }
    if let d = s["default"] { return d }
    if let all = s["allOf"]?.arrayValue, !all.isEmpty {
      // Merge object parts: properties and required of every branch.
      var members: [JSONObject.Member] = []
      for (k, branch) in all.enumerated() {
        let value = sample(branch, location.appending("allOf", String(k)), depth: depth + 1)
        if case .object(let o) = value {
          for m in o where !members.contains(where: { $0.key == m.key }) { members.append(m) }
        } else if all.count == 1 {
          return value
        }
      }
      s.members.removeAll { $0.key == "allOf" }
      if case .object(let own) = sample(.object(s), location, depth: depth + 1) {
        for m in own where !members.contains(where: { $0.key == m.key }) { members.append(m) }
      }
      return .object(JSONObject(members))
    }
    for key in ["oneOf", "anyOf"] {
      if let branches = s[key]?.arrayValue, let first = branches.first {
        var value = sample(first, location.appending(key, "0"), depth: depth + 1)
        if let property = s["discriminator"]?["propertyName"]?.stringValue, case .object(var o) = value,
          let ref = first["$ref"]?.stringValue
        {
          let mapped = s["discriminator"]?["mapping"]?.objectValue?.members.first {
            $0.value.stringValue == ref
          }?.key
          let name = mapped ?? String(ref.split(separator: "/").last ?? "")
          o.members.removeAll { $0.key == property }
          o.members.insert(JSONObject.Member(key: property, value: .string(name)), at: 0)
          value = .object(o)
        }
        return value
      }
    }
    switch StaticSampler.declaredType(s) ?? "string" {
    case "object": return object(s, location, depth: depth)
    case "array": return array(s, location, depth: depth)
    case "integer": return .number(integer(s))
    case "number": return .number(number(s))
    case "boolean": return .bool(random.next() & 1 == 0)
    case "null": return .null
    default: return .string(string(s))
    }
  }

  /// `value` made to meet the `then` or `else` (`branch`) of the schema at `location`: an object gets the
  /// branch's members (a branch's value replaces the member of the same name); another value is replaced by
  /// the branch's when that one also meets the whole schema.
  mutating func applying(_ branch: String, to value: JSONValue, _ location: SchemaLocation, depth: Int)
    -> JSONValue
  {
    guard let schema = document.schema(at: location.appending(branch)) else { return value }
    let made = sample(schema, location.appending(branch), depth: depth + 1)
    if case .object(var o) = value, case .object(let extra) = made {
      for m in extra {
        o.members.removeAll { $0.key == m.key }
        o.members.append(m)
      }
      return .object(o)
    }
    return made
  }

  /// The schema a member named `name` takes: its `properties` entry, else the first `patternProperties`
  /// entry whose pattern (ECMA-262) finds a match in the name, else `additionalProperties`; nil when none.
  func memberSchema(_ s: JSONObject, _ name: String, _ location: SchemaLocation) -> (
    JSONValue, SchemaLocation
  )? {
    if let p = s["properties"]?[name] { return (p, location.appending("properties", name)) }
    for p in s["patternProperties"]?.objectValue ?? JSONObject() {
      if (try? CompiledRegex(p.key, dialect: .ecma262))?.containsMatch(in: name) == true {
        return (p.value, location.appending("patternProperties", p.key))
      }
    }
    if let extra = s["additionalProperties"], extra != .bool(false) {
      return (extra, location.appending("additionalProperties"))
    }
    return nil
  }

  mutating func object(_ s: JSONObject, _ location: SchemaLocation, depth: Int) -> JSONValue {
    var members: [JSONObject.Member] = []
    let required = Set(s["required"]?.arrayValue?.compactMap(\.stringValue) ?? [])
    for p in s["properties"]?.objectValue ?? JSONObject() {
      // Deep optional members are left out so recursive schemas end.
      if depth > 4, !required.contains(p.key) { continue }
      if p.value["writeOnly"]?.boolValue == true, !required.contains(p.key) { continue }
      members.append(
        JSONObject.Member(
          key: p.key, value: sample(p.value, location.appending("properties", p.key), depth: depth + 1)))
    }
    // Required names, then the names `dependentRequired` asks for once a member is present.
    var wanted = required.sorted()
    var k = 0
    while k < wanted.count, k < 1_000 {
      let name = wanted[k]
      k += 1
      if !members.contains(where: { $0.key == name }) {
        let value =
          memberSchema(s, name, location).map { sample($0.0, $0.1, depth: depth + 1) }
          ?? .string(string(JSONObject()))
        members.append(JSONObject.Member(key: name, value: value))
      }
      if k == wanted.count, let dependencies = s["dependentRequired"]?.objectValue {
        for d in dependencies where members.contains(where: { $0.key == d.key }) {
          for dependent in d.value.arrayValue?.compactMap(\.stringValue) ?? []
          where !wanted.contains(dependent) {
            wanted.append(dependent)
          }
        }
      }
    }
    if let minimum = s["minProperties"]?.numberValue?.intValue, members.count < minimum,
      s["additionalProperties"] != .bool(false)
    {
      let extra = s["additionalProperties"] ?? .object(JSONObject())
      let end = min(minimum, members.count + remaining)
      remaining -= max(0, end - members.count)
      for n in members.count..<max(members.count, end) {
        members.append(
          JSONObject.Member(
            key: "property\(n + 1)",
            value: sample(extra, location.appending("additionalProperties"), depth: depth + 1)))
      }
    }
    return .object(JSONObject(members))
  }

  mutating func array(_ s: JSONObject, _ location: SchemaLocation, depth: Int) -> JSONValue {
    let minItems = SchemaSampler.count(s["minItems"]) ?? (depth > 4 ? 0 : 1)
    let maxItems = SchemaSampler.count(s["maxItems"]) ?? (minItems + 2)
    let upper = max(minItems, min(maxItems, minItems + 2))
    let count = min(minItems + Int(random.next() % UInt64(upper - minItems + 1)), remaining)
    remaining -= count
    var items: [JSONValue] = []
    let prefix = s["prefixItems"]?.arrayValue ?? []
    let unique = s["uniqueItems"]?.boolValue == true
    var attempts = 0
    while items.count < count, attempts < count * 8 + 8 {
      attempts += 1
      let k = items.count
      let item: JSONValue
      if k < prefix.count {
        item = sample(prefix[k], location.appending("prefixItems", String(k)), depth: depth + 1)
      } else if let schema = s["items"] {
        item = sample(schema, location.appending("items"), depth: depth + 1)
      } else {
        item = .string(string(JSONObject()))
      }
      if unique, items.contains(item) { continue }
      items.append(item)
    }
    if s["contains"] != nil {
      // At least `minContains` (default 1) and at most `maxContains` items match `contains`.
      let containsLocation = location.appending("contains")
      let least = SchemaSampler.count(s["minContains"]) ?? 1
      let most = SchemaSampler.count(s["maxContains"]) ?? Int.max
      var matching = items.indices.filter { conforms(items[$0], containsLocation) }
      while matching.count > most, let last = matching.popLast() { items.remove(at: last) }
      var added = 0
      while matching.count + added < least, added < remaining, added < 1_000,
        let schema = document.schema(at: containsLocation)
      {
        let item = sample(schema, containsLocation, depth: depth + 1)
        if unique, items.contains(item) { break }
        items.insert(item, at: 0)
        added += 1
      }
      remaining -= added
    }
    return .array(items)
  }

  mutating func integer(_ s: JSONObject) -> JSONNumber {
    // Bounds clamped to ±2^61 where they are read (9223372036854775807, a uint64 maximum or 1e19 trapped
    // in `Int(_:)`), so every sum and difference below stays in range.
    let bounded = SchemaSampler.boundedInteger
    var low = s["minimum"]?.numberValue.map { bounded(ceil($0.doubleValue)) } ?? 1
    var high = s["maximum"]?.numberValue.map { bounded(floor($0.doubleValue)) } ?? max(low, 1) + 999
    if s["exclusiveMinimum"]?.boolValue == true { low += 1 }
    if let e = s["exclusiveMinimum"]?.numberValue { low = bounded(floor(e.doubleValue)) + 1 }
    if s["exclusiveMaximum"]?.boolValue == true { high -= 1 }
    if let e = s["exclusiveMaximum"]?.numberValue { high = bounded(ceil(e.doubleValue)) - 1 }
    if s["maximum"] == nil, s["exclusiveMaximum"]?.numberValue == nil { high = max(high, low + 999) }
    if s["minimum"] == nil, s["exclusiveMinimum"]?.numberValue == nil, high < low { low = high - 999 }
    guard high >= low else { return JSONNumber(low) }
    if s["format"]?.stringValue == "int32" {
      low = max(low, Int(Int32.min))
      high = min(high, Int(Int32.max))
    }
    var value = low + Int(random.next() % UInt64(min(high - low, 1_000_000) + 1))
    if let m = s["multipleOf"]?.numberValue?.intValue, m > 0, m <= SchemaSampler.integerBound {
      let up = ((value + m - 1) / m) * m
      value = up <= high ? up : (value / m) * m
    }
    return JSONNumber(value)
  }

  /// The largest integer bound used (2^61): sums and differences of two stay inside `Int`.
  static let integerBound = 1 << 61

  /// `d` as an `Int` within ±``integerBound`` (a non-finite value as the nearer end).
  static func boundedInteger(_ d: Double) -> Int {
    guard !d.isNaN else { return 0 }
    let limit = Double(integerBound)
    return Int(Swift.min(Swift.max(d, -limit), limit))
  }

  /// A count keyword (`minItems`, `maxLength`) as an `Int` in 0...2^31, nil when absent or not a number.
  static func count(_ value: JSONValue?) -> Int? {
    guard let d = value?.numberValue?.doubleValue, !d.isNaN else { return nil }
    return Int(Swift.min(Swift.max(d, 0), Double(1 << 31)))
  }

  mutating func number(_ s: JSONObject) -> JSONNumber {
    if s["multipleOf"]?.numberValue?.isInteger == true { return integer(s) }
    let low = s["minimum"]?.numberValue?.doubleValue ?? s["exclusiveMinimum"]?.numberValue?.doubleValue ?? 0
    let high =
      s["maximum"]?.numberValue?.doubleValue ?? s["exclusiveMaximum"]?.numberValue?.doubleValue ?? low + 1000
    guard high > low, (high - low).isFinite else { return JSONNumber(text: String(low)) ?? JSONNumber(0) }
    // Two decimals strictly inside the range (so exclusive bounds hold too).
    let span = high - low
    var v = low + span * (0.05 + 0.9 * Double(random.next() % 10_000) / 10_000)
    v = (v * 100).rounded() / 100
    if v <= low || v >= high { v = (low + high) / 2 }
    return JSONNumber(text: String(v)) ?? JSONNumber(0)
  }

  mutating func string(_ s: JSONObject) -> String {
    let r = random.next()
    switch s["format"]?.stringValue {
    case "date-time":
      let (y, mo, d) = date(r)
      let time = "\(pad(Int(r >> 20 % 24))):\(pad(Int(r >> 28 % 60))):\(pad(Int(r >> 36 % 60)))"
      return "\(y)-\(pad(mo))-\(pad(d))T\(time)Z"
    case "date":
      let (y, mo, d) = date(r)
      return "\(y)-\(pad(mo))-\(pad(d))"
    case "time": return "\(pad(Int(r % 24))):\(pad(Int(r >> 8 % 60))):\(pad(Int(r >> 16 % 60)))Z"
    case "uuid": return uuid()
    case "email": return "user\(r % 10_000)@example.com"
    case "uri", "url", "iri": return "https://example.com/item/\(r % 10_000)"
    case "uri-reference": return "/item/\(r % 10_000)"
    case "hostname": return "host\(r % 1000).example.com"
    case "ipv4": return "192.0.2.\(r % 255)"
    case "ipv6": return "2001:db8::\(String(r % 65_535, radix: 16))"
    case "byte": return "aGVsbG8="
    default: break
    }
    let minLength = SchemaSampler.count(s["minLength"]) ?? 0
    // A `pattern`: a string the regular expression matches (RegexExample), when its length fits.
    if let pattern = s["pattern"]?.stringValue, let example = RegexExample.generate(pattern),
      example.count >= minLength, example.count <= (SchemaSampler.count(s["maxLength"]) ?? Int.max)
    {
      return example
    }
    let maxLength = SchemaSampler.count(s["maxLength"]) ?? max(minLength, 12)
    let target = min(min(max(minLength, min(8, maxLength)), maxLength), remaining)
    remaining -= target
    let letters = Array("abcdefghijklmnopqrstuvwxyz")
    var out = ""
    var x = r
    for _ in 0..<target {
      out.append(letters[Int(x % 26)])
      x = x / 26 == 0 ? random.next() : x / 26
    }
    return out
  }

  func date(_ r: UInt64) -> (Int, Int, Int) {
    (2020 + Int(r % 7), 1 + Int((r >> 8) % 12), 1 + Int((r >> 16) % 28))
  }

  func pad(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }

  mutating func uuid() -> String {
    let hex = Array("0123456789abcdef")
    var out = ""
    for k in 0..<32 {
      if [8, 12, 16, 20].contains(k) { out.append("-") }
      var digit = Int(random.next() % 16)
      if k == 12 { digit = 4 }
      if k == 16 { digit = 8 + digit % 4 }
      out.append(hex[digit])
    }
    return out
  }
}
