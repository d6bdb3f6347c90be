import JSONSchema
import MockJSON
import RegularExpressions
import Templating

/// A WireMock string value matcher (`equalTo`, `contains`, `matches`, `equalToJson`, …).
///
/// Used for header, query, cookie and path-parameter values and for `bodyPatterns`. `match(_:)` receives
/// nil when the field is absent: only `absent` (and combinations that accept absence) match then.
public indirect enum StringValuePattern: Sendable, Hashable, CustomStringConvertible {
  /// `{"equalTo": "v"}`, optionally `"caseInsensitive": true`.
  case equalTo(String, caseInsensitive: Bool)
  /// `{"contains": "v"}`: substring.
  case contains(String)
  /// `{"doesNotContain": "v"}`.
  case doesNotContain(String)
  /// `{"matches": "regex"}`: the whole value matches.
  case matches(CompiledRegex)
  /// `{"doesNotMatch": "regex"}`.
  case doesNotMatch(CompiledRegex)
  /// `{"absent": true}`: the field is not present.
  case absent
  /// `{"equalToJson": …}` with `ignoreArrayOrder` and `ignoreExtraElements` (object members only);
  /// numbers compared by exact decimal value.
  case equalToJson(JSONValue, ignoreArrayOrder: Bool, ignoreExtraElements: Bool)
  /// `{"matchesJsonPath": "$.x"}` or `{"matchesJsonPath": {"expression": "$.x", "equalTo": …}}`.
  case matchesJsonPath(JSONPath, StringValuePattern?)
  /// `{"binaryEqualTo": "base64"}`: the bytes are equal.
  case binaryEqualTo([UInt8])
  /// `{"and": [m1, m2]}`: all match.
  case and([StringValuePattern])
  /// `{"or": [m1, m2]}`: any matches.
  case or([StringValuePattern])
  /// `{"not": m}`: m does not match.
  case not(StringValuePattern)
  /// `{"equalToXml": …}` and `{"matchesXPath": …}` (``XMLValuePattern``).
  case xml(XMLValuePattern)
  /// `{"anything": "anything"}`: any value, also an absent one.
  case anything
  /// `{"matchesJsonSchema": schema, "schemaVersion": "V7"}`: the value (parsed as JSON; text that is not
  /// JSON stands for a JSON string) conforms to the schema.
  case matchesJsonSchema(JSONValue, schemaVersion: String?)
  /// `{"before": …}`, `{"after": …}`, `{"equalToDateTime": …}` with their modifiers.
  case dateTime(DateTimePattern)

  /// True when the value (nil = absent) satisfies the pattern.
  public func match(_ value: String?) -> Bool {
    guard let value else { return acceptsAbsence }
    switch self {
    case .equalTo(let s, let ci): return ci ? s.lowercased() == value.lowercased() : s == value
    case .contains(let s): return ByteSearch.contains(value, s)
    case .doesNotContain(let s): return !ByteSearch.contains(value, s)
    case .matches(let r): return r.matches(value)
    case .doesNotMatch(let r): return !r.matches(value)
    case .absent: return false
    case .equalToJson(let expected, let order, let extra):
      guard let actual = try? JSONValue.parse(value) else { return false }
      return JSONComparison.equal(expected, actual, ignoreArrayOrder: order, ignoreExtraElements: extra)
    case .matchesJsonPath(let path, let sub):
      guard let actual = try? JSONValue.parse(value) else { return false }
      return StringValuePattern.jsonPathMatch(path, sub, actual)
    case .binaryEqualTo(let bytes): return Array(value.utf8) == bytes
    case .and(let all): return all.allSatisfy { $0.match(value) }
    case .or(let any): return any.contains { $0.match(value) }
    case .not(let p): return !p.match(value)
    case .xml(let x): return x.match(value)
    case .anything: return true
    case .matchesJsonSchema(let schema, _):
      let instance = (try? JSONValue.parse(value)) ?? .string(value)
      return JSONSchemaValidator(schema: schema).validate(instance).isEmpty
    case .dateTime(let d): return d.match(value)
    }
  }

  /// Matches a request body: like `match(_:)` but uses the bytes for `binaryEqualTo` and the already
  /// parsed JSON for the JSON matchers.
  public func matchBody(_ request: RequestView) -> Bool {
    switch self {
    case .binaryEqualTo(let bytes): return request.body == bytes
    case .equalToJson(let expected, let order, let extra):
      guard let actual = request.bodyJSON else { return false }
      return JSONComparison.equal(expected, actual, ignoreArrayOrder: order, ignoreExtraElements: extra)
    case .matchesJsonPath(let path, let sub):
      guard let actual = request.bodyJSON else { return false }
      return StringValuePattern.jsonPathMatch(path, sub, actual)
    case .and(let all): return all.allSatisfy { $0.matchBody(request) }
    case .or(let any): return any.contains { $0.matchBody(request) }
    case .not(let p): return !p.matchBody(request)
    case .absent: return request.body.isEmpty
    case .matchesJsonSchema(let schema, _):
      let instance = request.bodyJSON ?? .string(request.bodyText)
      return JSONSchemaValidator(schema: schema).validate(instance).isEmpty
    default: return match(request.bodyText)
    }
  }

  /// False for the body matchers that judge the bytes as received (`binaryEqualTo`, `absent`, and `not`,
  /// `and`, `or` of those only); true for every matcher of the decoded text.
  package var needsDecodedContent: Bool {
    switch self {
    case .binaryEqualTo, .absent: return false
    case .not(let p): return p.needsDecodedContent
    case .and(let all): return all.contains(where: \.needsDecodedContent)
    case .or(let any): return any.contains(where: \.needsDecodedContent)
    default: return true
    }
  }

  /// True when an absent field satisfies the pattern.
  public var acceptsAbsence: Bool {
    switch self {
    case .absent, .anything: return true
    case .and(let all): return all.allSatisfy(\.acceptsAbsence)
    case .or(let any): return any.contains(where: \.acceptsAbsence)
    case .not(let p): return !p.acceptsAbsence
    default: return false
    }
  }

  /// WireMock's `MatchesJsonPathPattern`, on what Jayway JsonPath gives it (a definite path: the value
  /// or nothing; an indefinite one: the list of selected values).
  /// - Without a sub-matcher: a match when the result is a non-empty array or object, or any other
  ///   non-null value (`$.items` does not match `{"items": []}` or `{"items": {}}`).
  /// - With one, the result becomes text values, and the pattern matches when any of them does: an object
  ///   (or anything under `equalToJson`) as Jackson's pretty JSON, an array as one value per element,
  ///   strings raw, numbers and booleans as written; `null` or nothing gives no value, which `absent`
  ///   accepts (`{"deletedAt": null}` is absent).
  package static func jsonPathMatch(_ path: JSONPath, _ sub: StringValuePattern?, _ document: JSONValue)
    -> Bool
  {
    let found = path.evaluate(document)
    let result: JSONValue? = path.isDefinite ? found.first : .array(found)
    guard let sub else {
      switch result {
      case nil, .null?: return false
      case .array(let items)?: return !items.isEmpty
      case .object(let o)?: return !o.members.isEmpty
      default: return true
      }
    }
    var values: [String]
    switch result {
    case nil, .null?: values = []
    case let value? where isEqualToJson(sub): values = [JacksonPrinter.pretty(value)]
    case .object?: values = [JacksonPrinter.pretty(result ?? .null)]
    case .array(let items)?: values = items.map(javaText)
    case .string(let s)?: values = [s]
    case let value?: values = [value.serialized()]
    }
    if values.isEmpty, case .absent = sub { return true }
    return values.contains { sub.match($0) }
  }

  private static func isEqualToJson(_ p: StringValuePattern) -> Bool {
    if case .equalToJson = p { return true }
    return false
  }

  /// An element of a JsonPath list result as Java's `Object.toString()` writes it (json-smart's
  /// `LinkedHashMap` as `{a=1, b=x}`, its arrays as compact JSON, strings raw).
  private static func javaText(_ v: JSONValue) -> String {
    switch v {
    case .string(let s): return s
    case .object(let o):
      return "{" + o.members.map { $0.key + "=" + javaText($0.value) }.joined(separator: ", ") + "}"
    default: return v.serialized()
    }
  }

  /// The pattern in WireMock JSON form, e.g. `{"equalTo":"x"}`.
  public var json: JSONValue {
    switch self {
    case .equalTo(let s, let ci):
      var pairs: [(String, JSONValue)] = [("equalTo", .string(s))]
      if ci { pairs.append(("caseInsensitive", .bool(true))) }
      return .object(JSONObject(pairs: pairs))
    case .contains(let s): return .object(JSONObject(pairs: [("contains", .string(s))]))
    case .doesNotContain(let s): return .object(JSONObject(pairs: [("doesNotContain", .string(s))]))
    case .matches(let r): return .object(JSONObject(pairs: [("matches", .string(r.pattern))]))
    case .doesNotMatch(let r): return .object(JSONObject(pairs: [("doesNotMatch", .string(r.pattern))]))
    case .absent: return .object(JSONObject(pairs: [("absent", .bool(true))]))
    case .equalToJson(let v, let o, let e):
      var pairs: [(String, JSONValue)] = [("equalToJson", v)]
      if o { pairs.append(("ignoreArrayOrder", .bool(true))) }
      if e { pairs.append(("ignoreExtraElements", .bool(true))) }
      return .object(JSONObject(pairs: pairs))
    case .matchesJsonPath(let p, let sub):
      guard let sub, case .object(var o) = sub.json else {
        return .object(JSONObject(pairs: [("matchesJsonPath", .string(p.expression))]))
      }
      o.members.insert(JSONObject.Member(key: "expression", value: .string(p.expression)), at: 0)
      return .object(JSONObject(pairs: [("matchesJsonPath", .object(o))]))
    case .binaryEqualTo(let b):
      return .object(JSONObject(pairs: [("binaryEqualTo", .string(Base64.encode(b)))]))
    case .and(let all): return .object(JSONObject(pairs: [("and", .array(all.map(\.json)))]))
    case .or(let any): return .object(JSONObject(pairs: [("or", .array(any.map(\.json)))]))
    case .not(let p): return .object(JSONObject(pairs: [("not", p.json)]))
    case .xml(let x): return x.json
    case .anything: return .object(JSONObject(pairs: [("anything", .string("anything"))]))
    case .matchesJsonSchema(let schema, let version):
      var pairs: [(String, JSONValue)] = [("matchesJsonSchema", schema)]
      if let version { pairs.append(("schemaVersion", .string(version))) }
      return .object(JSONObject(pairs: pairs))
    case .dateTime(let d): return .object(JSONObject(pairs: d.jsonPairs.map { ($0.0, .string($0.1)) }))
    }
  }

  /// Compact WireMock JSON form, used as "expected" in near-miss reports.
  public var description: String { json.serialized() }
}

/// A matcher for a field that may repeat (headers, query parameters): a single pattern that any value
/// may satisfy, or WireMock's `hasExactly` / `includes`.
public enum MultiValuePattern: Sendable, Hashable, CustomStringConvertible {
  /// One pattern: absent field → `acceptsAbsence`; otherwise any value matching is enough.
  case single(StringValuePattern)
  /// `{"hasExactly": [m…]}`: as many values as patterns, each pattern matched by one of them (WireMock's
  /// `ExactMatchMultiValuePattern`: the counts agree and every pattern's best value matches; two patterns
  /// may be met by the same value).
  case hasExactly([StringValuePattern])
  /// `{"includes": [m…]}`: each pattern matched by at least one value.
  case includes([StringValuePattern])

  /// True when `values` (empty = absent) satisfy the pattern.
  public func match(_ values: [String]) -> Bool {
    switch self {
    case .single(let p):
      if values.isEmpty { return p.match(nil) }
      return values.contains { p.match($0) }
    case .includes(let ps):
      // An absent field never satisfies `includes` or `hasExactly` (MultipleMatchMultiValuePattern).
      return !values.isEmpty && ps.allSatisfy { p in values.contains { p.match($0) } }
    case .hasExactly(let ps):
      guard !values.isEmpty, values.count == ps.count else { return false }
      return ps.allSatisfy { p in values.contains { p.match($0) } }
    }
  }

  /// WireMock JSON form.
  public var json: JSONValue {
    switch self {
    case .single(let p): return p.json
    case .hasExactly(let ps): return .object(JSONObject(pairs: [("hasExactly", .array(ps.map(\.json)))]))
    case .includes(let ps): return .object(JSONObject(pairs: [("includes", .array(ps.map(\.json)))]))
    }
  }

  /// Compact JSON form.
  public var description: String { json.serialized() }
}

/// JSON equality as `equalToJson` defines it (WireMock delegates to JsonUnit).
package enum JSONComparison {
  /// True when `actual` equals `expected`: numbers by decimal value, objects regardless of member order;
  /// with `ignoreArrayOrder` arrays as multisets; with `ignoreExtraElements` `actual` objects may have
  /// members `expected` lacks and `actual` arrays items it lacks (JsonUnit's `IGNORING_EXTRA_FIELDS` and
  /// `IGNORING_EXTRA_ARRAY_ITEMS`). Strings of `expected` may be JsonUnit placeholders:
  /// `${json-unit.any-string}`, `${json-unit.any-number}`, `${json-unit.any-boolean}`, `${json-unit.ignore}`,
  /// `${json-unit.ignore-element}` (the member may also be missing), `${json-unit.regex}PATTERN` (the whole
  /// string matches) and `${json-unit.matches:NAME}` (a custom matcher: none is registered, so it never
  /// matches). `#{json-unit.…}` is the same.
  package static func equal(
    _ expected: JSONValue, _ actual: JSONValue, ignoreArrayOrder: Bool, ignoreExtraElements: Bool
  ) -> Bool {
    var budget = maximumComparisons
    return equal(
      expected, actual, ignoreArrayOrder: ignoreArrayOrder, ignoreExtraElements: ignoreExtraElements,
      budget: &budget)
  }

  /// The most value comparisons one `equalToJson` evaluation makes: matching arrays as multisets
  /// backtracks, and a crafted pair held the loop for about a second per stub (0.1 s now); past it the
  /// values count as different.
  static let maximumComparisons = 100_000

  static func equal(
    _ expected: JSONValue, _ actual: JSONValue, ignoreArrayOrder: Bool, ignoreExtraElements: Bool,
    budget: inout Int
  ) -> Bool {
    budget -= 1
    if budget < 0 { return false }
    if case .string(let s) = expected, let placeholder = Placeholder(s) { return placeholder.accepts(actual) }
    switch (expected, actual) {
    case (.object(let e), .object(let a)):
      // Objects of a few dozen members (nearly all) compare by linear search, as `JSONObject ==` does:
      // building the two `effective` dictionaries per object was most of an `equalToJson` match.
      if e.members.count <= 32 && a.members.count <= 32 {
        for (i, m) in e.members.enumerated() where !e.isShadowed(i) {
          if case .string(let s) = m.value, Placeholder(s) == .ignoreElement { continue }
          guard let w = a[m.key],
            equal(
              m.value, w, ignoreArrayOrder: ignoreArrayOrder, ignoreExtraElements: ignoreExtraElements,
              budget: &budget)
          else { return false }
        }
        if !ignoreExtraElements {
          for m in a.members where e[m.key] == nil { return false }
        }
        return true
      }
      let ea = e.effective
      let aa = a.effective
      for (k, v) in ea {
        if case .string(let s) = v, Placeholder(s) == .ignoreElement { continue }
        guard let w = aa[k],
          equal(
            v, w, ignoreArrayOrder: ignoreArrayOrder, ignoreExtraElements: ignoreExtraElements,
            budget: &budget)
        else { return false }
      }
      if !ignoreExtraElements {
        for k in aa.keys where ea[k] == nil { return false }
      }
      return true
    case (.array(let e), .array(let a)):
      guard e.count == a.count || (ignoreExtraElements && e.count < a.count) else { return false }
      if !ignoreArrayOrder {
        for (x, y) in zip(e, a)
        where !equal(x, y, ignoreArrayOrder: false, ignoreExtraElements: ignoreExtraElements, budget: &budget)
        {
          return false
        }
        return true
      }
      var used = [Bool](repeating: false, count: a.count)
      func go(_ k: Int) -> Bool {
        if k == e.count { return true }
        for j in a.indices where !used[j] {
          if budget < 0 { return false }
          if equal(
            e[k], a[j], ignoreArrayOrder: true, ignoreExtraElements: ignoreExtraElements, budget: &budget)
          {
            used[j] = true
            if go(k + 1) { return true }
            used[j] = false
          }
        }
        return false
      }
      return go(0)
    default:
      return expected == actual
    }
  }

  /// A JsonUnit placeholder written as a string of the expected JSON.
  package enum Placeholder: Equatable {
    case anyString, anyNumber, anyBoolean, ignore, ignoreElement
    case regex(String)
    case custom(String)

    /// Recognises `${json-unit.…}` / `#{json-unit.…}`; nil for any other string.
    package init?(_ s: String) {
      // The first byte first: nearly every string of an expected document is no placeholder.
      guard let first = s.utf8.first, first == 36 || first == 35,
        s.hasPrefix("${json-unit.") || s.hasPrefix("#{json-unit.")
      else { return nil }
      let rest = s.dropFirst(12)
      guard let close = rest.firstIndex(of: "}") else { return nil }
      let name = rest[..<close]
      let tail = String(rest[rest.index(after: close)...])
      switch name {
      case "any-string" where tail.isEmpty: self = .anyString
      case "any-number" where tail.isEmpty: self = .anyNumber
      case "any-boolean" where tail.isEmpty: self = .anyBoolean
      case "ignore" where tail.isEmpty: self = .ignore
      case "ignore-element" where tail.isEmpty: self = .ignoreElement
      case "regex": self = .regex(tail)
      default:
        guard name.hasPrefix("matches:") else { return nil }
        self = .custom(String(name.dropFirst(8)))
      }
    }

    /// True when `actual` satisfies the placeholder.
    package func accepts(_ actual: JSONValue) -> Bool {
      switch (self, actual) {
      case (.ignore, _), (.ignoreElement, _): return true
      case (.anyString, .string), (.anyNumber, .number), (.anyBoolean, .bool): return true
      case (.regex(let pattern), .string(let s)):
        return (try? CompiledRegex(pattern))?.matches(s) ?? false
      default: return false
      }
    }
  }
}

/// Substring search over UTF-8 bytes, as Java's `String.contains` compares code units (no canonical
/// equivalence, unlike Foundation's `contains`), in time linear in both lengths (Knuth–Morris–Pratt):
/// a 64 MiB body is scanned in about 80 ms, where Foundation took 0.8 s and a naive scan could take
/// hours with a crafted pattern.
package enum ByteSearch {
  /// True when `needle` occurs in `haystack` (an empty needle always does).
  package static func contains(_ haystack: String, _ needle: String) -> Bool {
    if needle.isEmpty { return true }
    var h = haystack
    var n = needle
    return h.withUTF8 { hb in n.withUTF8 { nb in contains(hb, nb) } }
  }

  static func contains(_ hb: UnsafeBufferPointer<UInt8>, _ nb: UnsafeBufferPointer<UInt8>) -> Bool {
    var steps = 0
    return contains(hb, nb, steps: &steps)
  }

  /// `contains`, counting in `steps` the byte comparisons made (the needle's failure table and the scan):
  /// at most 2 × (haystack + needle) bytes, whatever the input, which is what makes it linear.
  package static func contains(_ haystack: String, _ needle: String, steps: inout Int) -> Bool {
    var h = haystack
    var n = needle
    return h.withUTF8 { hb in n.withUTF8 { nb in contains(hb, nb, steps: &steps) } }
  }

  @inline(__always)
  static func contains(
    _ hb: UnsafeBufferPointer<UInt8>, _ nb: UnsafeBufferPointer<UInt8>, steps: inout Int
  ) -> Bool {
    let m = nb.count
    guard m > 0 else { return true }
    guard m <= hb.count else { return false }
    // fail[q]: the length of the longest proper prefix of needle[0...q] that is also its suffix.
    var fail = [Int](repeating: 0, count: m)
    var k = 0
    var q = 1
    while q < m {
      while k > 0, nb[q] != nb[k] {
        k = fail[k - 1]
        steps &+= 1
      }
      steps &+= 1
      if nb[q] == nb[k] { k += 1 }
      fail[q] = k
      q += 1
    }
    return fail.withUnsafeBufferPointer { fail in
      let first = nb[0]
      var matched = 0
      var i = 0
      while i < hb.count {
        let c = hb[i]
        i += 1
        steps &+= 1
        if matched == 0 {
          if c != first { continue }
          matched = 1
        } else {
          while matched > 0, c != nb[matched] {
            matched = fail[matched - 1]
            steps &+= 1
          }
          if c == nb[matched] { matched += 1 }
        }
        if matched == m { return true }
      }
      return false
    }
  }
}
