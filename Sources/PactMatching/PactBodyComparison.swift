import Foundation
import HTTPCore
import MockJSON
import XMLSupport

/// One difference between what a pact expects and what was received: where, and Pact's words for it.
package struct PactMismatch: Sendable, Hashable, CustomStringConvertible {
  /// `method`, `path`, `query`, `header` or `body`.
  package var part: String
  /// The body path (`$.a[0]`), header or parameter name; empty for method and path.
  package var location: String
  package var message: String
  package var description: String {
    location.isEmpty ? "\(part): \(message)" : "\(part) \(location): \(message)"
  }
}

/// The rules in force while comparing and whether unexpected keys are allowed (responses) or not
/// (requests): pact_matching's `CoreMatchingContext`.
package struct PactMatchingContext: Sendable {
  package var rules: PactRuleCategory
  package var allowUnexpectedKeys: Bool

  package init(rules: PactRuleCategory, allowUnexpectedKeys: Bool) {
    self.rules = rules
    self.allowUnexpectedKeys = allowUnexpectedKeys
  }

  func with(_ rules: PactRuleCategory) -> PactMatchingContext {
    PactMatchingContext(rules: rules, allowUnexpectedKeys: allowUnexpectedKeys)
  }

  func isDefined(_ path: [String]) -> Bool { rules.isDefined(path) }
  func best(_ path: [String]) -> PactRuleList { rules.best(path) }

  /// Rules declared for exactly this path (wildcards included).
  func exactRules(_ path: [String]) -> [PactMatchingRule] {
    rules.entries.filter { $0.path.tokens.count == path.count && $0.path.weight(for: path).weight > 0 }
      .flatMap(\.list.rules)
  }
}

/// Body comparison as pact_matching does it: JSON, XML, form-urlencoded, multipart, text and bytes.
package enum PactBodyComparison {
  package typealias Context = PactMatchingContext

  static func mismatch(_ path: [String], _ message: String) -> PactMismatch {
    PactMismatch(part: "body", location: PactDocPath(fragments: path).description, message: message)
  }

  // MARK: JSON

  package static func compareJSON(_ path: [String], _ e: JSONValue, _ a: JSONValue, _ ctx: Context)
    -> [PactMismatch]
  {
    switch (e, a) {
    case (.object(let eo), .object(let ao)): return compareMaps(path, eo, ao, ctx)
    case (.array(let el), .array(let al)): return compareLists(path, el, al, ctx)
    case (.object, _), (.array, _):
      return [mismatch(path, "Type mismatch: " + PactRuleChecks.typeMismatch(e, a))]
    default: return compareValues(path, e, a, ctx)
    }
  }

  static func compareValues(_ path: [String], _ e: JSONValue, _ a: JSONValue, _ ctx: Context)
    -> [PactMismatch]
  {
    if ctx.isDefined(path) {
      return PactRuleChecks.apply(ctx.best(path), path: path) { PactRuleChecks.json($0, e, a, cascaded: $1) }
        .map { mismatch(path, $0) }
    }
    return PactRuleChecks.json(.equality, e, a, cascaded: false).map { [mismatch(path, $0)] } ?? []
  }

  static func compareMaps(_ path: [String], _ e: JSONObject, _ a: JSONObject, _ ctx: Context)
    -> [PactMismatch]
  {
    if e.members.isEmpty && !ctx.allowUnexpectedKeys && !a.members.isEmpty {
      return [mismatch(path, "Expected an empty Map but received \(JSONValue.object(a).serialized())")]
    }
    var out: [PactMismatch] = []
    if ctx.isDefined(path) {
      let list = ctx.best(path)
      for rule in list.rules {
        out += compareMaps(with: rule, cascaded: list.cascaded, path, e, a, ctx)
      }
    } else {
      out += matchKeys(path, e.keys, a.keys, ctx)
      for m in e.members {
        if let av = a[m.key] { out += compareJSON(path + [m.key], m.value, av, ctx) }
      }
    }
    return out
  }

  private static func compareMaps(
    with rule: PactMatchingRule, cascaded: Bool, _ path: [String], _ e: JSONObject, _ a: JSONObject,
    _ ctx: Context
  ) -> [PactMismatch] {
    var out: [PactMismatch] = []
    if !cascaded && rule.isValuesMatcher {
      var inner = ctx
      if case .eachValue(let rules) = rule {
        var category = PactRuleCategory(kind: .body)
        for r in rules { category.add(r, at: PactDocPath(fragments: path + ["*"]), isOr: false) }
        inner = ctx.with(category)
      }
      for m in a.members {
        if let ev = e[m.key] {
          out += compareJSON(path + [m.key], ev, m.value, inner)
        } else if let first = e.members.first?.value {
          out += compareJSON(path + [m.key], first, m.value, inner)
        }
      }
    } else {
      if let problem = PactRuleChecks.map(rule, e, a, cascaded: cascaded) {
        out.append(mismatch(path, problem))
      }
      out += matchKeys(path, e.keys, a.keys, ctx)
      for m in e.members {
        if let av = a[m.key] { out += compareJSON(path + [m.key], m.value, av, ctx) }
      }
    }
    return out
  }

  /// pact_matching's `match_keys`: the key sets (unless `values`, `eachValue` or `eachKey` is declared for
  /// this object), then each `eachKey` rule against every actual key.
  static func matchKeys(_ path: [String], _ expected: [String], _ actual: [String], _ ctx: Context)
    -> [PactMismatch]
  {
    var out: [PactMismatch] = []
    let direct = ctx.exactRules(path)
    let keysFree = direct.contains {
      switch $0 {
      case .values, .eachValue, .eachKey: return true
      default: return false
      }
    }
    if !keysFree {
      let actualSet = Set(actual)
      let missing = expected.filter { !actualSet.contains($0) }
      if ctx.allowUnexpectedKeys {
        if !missing.isEmpty {
          out.append(
            mismatch(path, "Actual map is missing the following keys: \(missing.joined(separator: ", "))"))
        }
      } else if expected.sorted() != actual.sorted() {
        out.append(
          mismatch(
            path,
            "Expected a Map with keys [\(expected.sorted().joined(separator: ", "))] but received one with keys "
              + "[\(actual.sorted().joined(separator: ", "))]"))
      }
    }
    if !direct.isEmpty {
      for rule in ctx.best(path).rules {
        guard case .eachKey(let subRules) = rule else { continue }
        for sub in subRules {
          for key in actual.sorted() {
            if let problem = PactRuleChecks.string(sub, "", key, cascaded: false) {
              out.append(mismatch(path + [key], problem))
            }
          }
        }
      }
    }
    return out
  }

  static func compareLists(_ path: [String], _ e: [JSONValue], _ a: [JSONValue], _ ctx: Context)
    -> [PactMismatch]
  {
    if ctx.isDefined(path) {
      return compareLists(path, ctx.best(path), e, a, ctx, describe: describeJSON) {
        compareJSON($0, $1, $2, $3)
      }
    }
    if e.isEmpty && !a.isEmpty {
      return [mismatch(path, "Expected an empty List but received \(JSONValue.array(a).serialized())")]
    }
    var out: [PactMismatch] = []
    for (i, v) in e.enumerated() {
      if i < a.count {
        out += compareJSON(path + [String(i)], v, a[i], ctx)
      } else if !ctx.isDefined(path + [String(i)]) {
        out.append(mismatch(path, "Expected \(v.serialized()) but was missing"))
      }
    }
    if e.count != a.count {
      out.append(mismatch(path, "Expected a List with \(e.count) elements but received \(a.count) elements"))
    }
    return out
  }

  static func describeJSON(_ values: [JSONValue]) -> String { JSONValue.array(values).serialized() }

  /// pact_matching's `compare_lists_with_matchingrules`, for JSON arrays, repeated query parameters and
  /// header values alike.
  static func compareLists<T: Equatable>(
    _ path: [String], _ list: PactRuleList, _ e: [T], _ a: [T], _ ctx: Context, describe: ([T]) -> String,
    _ compare: ([String], T, T, Context) -> [PactMismatch]
  ) -> [PactMismatch] {
    if list.isEmpty { return [mismatch(path, "No matcher found for path '\(PactDocPath(fragments: path))'")] }
    let results = list.rules.map {
      compareLists(with: $0, path, e, a, ctx, cascaded: list.cascaded, describe: describe, compare)
    }
    if list.isOr, results.contains(where: \.isEmpty) { return [] }
    return results.flatMap { $0 }
  }

  private static func compareLists<T: Equatable>(
    with rule: PactMatchingRule, _ path: [String], _ e: [T], _ a: [T], _ ctx: Context, cascaded: Bool,
    describe: ([T]) -> String, _ compare: ([String], T, T, Context) -> [PactMismatch]
  ) -> [PactMismatch] {
    guard !e.isEmpty else { return [] }
    var out: [PactMismatch] = []
    switch rule {
    case .arrayContains(var variants):
      if variants.isEmpty {
        var equality = PactRuleCategory(kind: .body)
        equality.add(.equality, at: PactDocPath(tokens: []), isOr: false)
        variants = e.indices.map { .init(index: $0, rules: equality) }
      }
      for variant in variants {
        guard variant.index < e.count else {
          out.append(
            mismatch(
              path,
              "ArrayContains: variant \(variant.index) is missing from the expected list, which has \(e.count) items"
            ))
          continue
        }
        let inner = ctx.with(variant.rules)
        if !a.contains(where: { compare(["$"], e[variant.index], $0, inner).isEmpty }) {
          out.append(
            mismatch(
              path,
              "Variant at index \(variant.index) (\(describe([e[variant.index]]))) was not found in the actual list"
            ))
        }
      }
    case .eachValue(let rules):
      guard !cascaded else { return [] }
      var category = PactRuleCategory(kind: .body)
      for r in rules { category.add(r, at: PactDocPath(fragments: path + ["*"]), isOr: false) }
      out += listContents(path, e, a, ctx.with(category), describe: describe, compare)
    default:
      if let problem = PactRuleChecks.list(rule, e, a, cascaded: cascaded, describe: describe) {
        out.append(mismatch(path, problem))
      }
      out += listContents(path, e, a, ctx, describe: describe, compare)
    }
    return out
  }

  private static func listContents<T: Equatable>(
    _ path: [String], _ e: [T], _ a: [T], _ ctx: Context, describe: ([T]) -> String,
    _ compare: ([String], T, T, Context) -> [PactMismatch]
  ) -> [PactMismatch] {
    var expected = e
    if a.count > e.count, let first = e.first {
      expected += Array(repeating: first, count: a.count - e.count)
    }
    var out: [PactMismatch] = []
    for (i, v) in expected.enumerated() {
      if i < a.count {
        out += compare(path + [String(i)], v, a[i], ctx)
      } else if !ctx.isDefined(path + [String(i)]) {
        out.append(mismatch(path, "Expected \(describe([v])) (\(i)) but was missing"))
      }
    }
    return out
  }

  // MARK: Query parameters and form bodies

  /// pact_matching's `match_query_maps`: every expected name present with its values, no unexpected name.
  package static func compareParameters(
    _ expected: [(String, [String])], _ actual: [(String, [String])], _ ctx: Context, part: String,
    noun: String
  ) -> [PactMismatch] {
    var out: [PactMismatch] = []
    let actualByName = Dictionary(actual, uniquingKeysWith: { $0 + $1 })
    let expectedNames = Set(expected.map(\.0))
    for (name, values) in expected {
      guard let got = actualByName[name] else {
        out.append(
          PactMismatch(part: part, location: name, message: "Expected \(noun) '\(name)' but was missing"))
        continue
      }
      out += compareParameterValues(name, values, got, ctx, part: part, noun: noun)
    }
    for (name, _) in actual where !expectedNames.contains(name) {
      out.append(PactMismatch(part: part, location: name, message: "Unexpected \(noun) '\(name)' received"))
    }
    return out
  }

  private static func compareParameterValues(
    _ name: String, _ e: [String], _ a: [String], _ ctx: Context, part: String, noun: String
  ) -> [PactMismatch] {
    let path = ["$", name]
    func one(_ p: [String], _ ev: String, _ av: String) -> [PactMismatch] {
      if ctx.isDefined(p) {
        return PactRuleChecks.apply(ctx.best(p), path: p) { PactRuleChecks.string($0, ev, av, cascaded: $1) }
          .map { PactMismatch(part: part, location: name, message: $0) }
      }
      return ev == av
        ? []
        : [
          PactMismatch(
            part: part, location: name,
            message: "Expected \(noun) '\(name)' with value '\(ev)' but was '\(av)'")
        ]
    }
    if ctx.isDefined(path) {
      return compareLists(path, ctx.best(path), e, a, ctx, describe: { "\($0)" }) { p, ev, av, _ in
        one(p + ["0"], ev, av)
      }.map { PactMismatch(part: part, location: name, message: $0.message) }
    }
    if e.isEmpty && !a.isEmpty {
      return [
        PactMismatch(
          part: part, location: name,
          message: "Expected an empty parameter list for '\(name)' but received \(a)")
      ]
    }
    var out: [PactMismatch] = []
    for i in 0..<max(e.count, a.count) where i < a.count {
      out += one(path + [String(i)], i < e.count ? e[i] : "", a[i])
    }
    if e.count > a.count, !ctx.isDefined(path) {
      for v in e[a.count...] {
        out.append(
          PactMismatch(
            part: part, location: name, message: "Expected \(noun) '\(name)' value '\(v)' but was missing"))
      }
    }
    if e.count != a.count {
      out.append(
        PactMismatch(
          part: part, location: name,
          message: "Expected \(noun) '\(name)' with \(e.count) value(s) but received \(a.count) value(s)"))
    }
    return out
  }

  /// `application/x-www-form-urlencoded` fields, decoded as serde_urlencoded does (`+` is a space).
  package static func formFields(_ bytes: [UInt8]) -> [(String, [String])]? {
    guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
    return PactQuery.parse(text)
  }

  // MARK: XML

  static func compareXML(_ e: [UInt8], _ a: [UInt8], _ ctx: Context) -> [PactMismatch] {
    let expectedRoot: XMLElementNode
    let actualRoot: XMLElementNode
    do { expectedRoot = try XMLSupport.parse(e) } catch {
      return [mismatch(["$"], "Failed to parse the expected body: '\(error.message)'")]
    }
    do { actualRoot = try XMLSupport.parse(a) } catch {
      return [mismatch(["$"], "Failed to parse the actual body: '\(error.message)'")]
    }
    var out: [PactMismatch] = []
    compareElement(["$", name(expectedRoot)], expectedRoot, actualRoot, ctx, &out)
    return out
  }

  private static func name(_ e: XMLElementNode) -> String {
    e.namespaceURI.map { "\($0):\(e.localName)" } ?? e.localName
  }

  private static func elements(_ e: XMLElementNode) -> [XMLElementNode] {
    e.children.compactMap {
      if case .element(let c) = $0 { return c }
      return nil
    }
  }

  private static func compareElement(
    _ path: [String], _ e: XMLElementNode, _ a: XMLElementNode, _ ctx: Context, _ out: inout [PactMismatch]
  ) {
    let problems: [String]
    if ctx.isDefined(path) {
      problems = PactRuleChecks.apply(ctx.best(path), path: path) { rule, cascaded in
        let children = elements(a).count
        switch rule {
        case .regex(let r):
          return r.matches(a.localName) ? nil : "Expected '\(name(a))' to match '\(r.pattern)'"
        case .type, .equality:
          return name(e) == name(a) ? nil : "Expected '\(name(a))' to be the same type as '\(name(e))'"
        case .minType(let min):
          return !cascaded && children < min ? "Expected '\(name(a))' to have at least \(min) children" : nil
        case .maxType(let max):
          return !cascaded && children > max ? "Expected '\(name(a))' to have at most \(max) children" : nil
        case .minMaxType(let min, let max):
          if !cascaded && children < min { return "Expected '\(name(a))' to have at least \(min) children" }
          if !cascaded && children > max { return "Expected '\(name(a))' to have at most \(max) children" }
          return nil
        case .notEmpty:
          return a.children.isEmpty ? "Expected '\(name(a))' to have at least one child" : nil
        default:
          // Rules for the element's text (`$.a.#text` declared on `$.a`) are checked with the text.
          return nil
        }
      }
    } else {
      problems = name(e) == name(a) ? [] : ["Expected '\(name(a))' to be equal to '\(name(e))'"]
    }
    guard problems.isEmpty else {
      out += problems.map { mismatch(path, $0) }
      return
    }
    compareAttributes(path, e, a, ctx, &out)
    compareChildren(path, e, a, ctx, &out)
    compareText(path, e, a, ctx, &out)
  }

  private static func attributes(_ e: XMLElementNode) -> [String: String] {
    var out: [String: String] = [:]
    for attr in e.attributes {
      out[attr.namespaceURI.map { "\($0):\(attr.localName)" } ?? attr.localName] = attr.value
    }
    return out
  }

  private static func compareAttributes(
    _ path: [String], _ e: XMLElementNode, _ a: XMLElementNode, _ ctx: Context, _ out: inout [PactMismatch]
  ) {
    let ea = attributes(e)
    let aa = attributes(a)
    if ea.isEmpty && !aa.isEmpty && !ctx.allowUnexpectedKeys {
      out.append(mismatch(path, "Did not expect any attributes but received \(aa.keys.sorted())"))
      return
    }
    if ctx.allowUnexpectedKeys && ea.count > aa.count {
      out.append(
        mismatch(path, "Expected at least \(ea.count) attribute(s) but received \(aa.count) attribute(s)"))
    } else if !ctx.allowUnexpectedKeys && ea.count != aa.count {
      out.append(mismatch(path, "Expected \(ea.count) attribute(s) but received \(aa.count) attribute(s)"))
    }
    for (key, value) in ea.sorted(by: { $0.key < $1.key }) {
      let p = path + ["@" + key]
      guard let got = aa[key] else {
        out.append(mismatch(p, "Expected attribute '\(key)'='\(value)' but was missing"))
        continue
      }
      out += compareText(p, value, got, ctx)
    }
  }

  private static func compareChildren(
    _ path: [String], _ e: XMLElementNode, _ a: XMLElementNode, _ ctx: Context, _ out: inout [PactMismatch]
  ) {
    let ec = elements(e)
    let ac = elements(a)
    if ec.isEmpty && !ac.isEmpty && !ctx.allowUnexpectedKeys {
      out.append(
        mismatch(path, "Expected no children but received [\(ac.map(name).joined(separator: ", "))]"))
      return
    }
    var expectedByName: [String: [XMLElementNode]] = [:]
    for c in ec { expectedByName[name(c), default: []].append(c) }
    var actualByName: [(String, [XMLElementNode])] = []
    for c in ac {
      if let k = actualByName.firstIndex(where: { $0.0 == name(c) }) {
        actualByName[k].1.append(c)
      } else {
        actualByName.append((name(c), [c]))
      }
    }
    for (key, group) in actualByName {
      let p = path + [key]
      guard let expectedGroup = expectedByName.removeValue(forKey: key) else {
        if !ctx.allowUnexpectedKeys || ctx.rules.typeRuleDefined(p) {
          out.append(mismatch(path, "Unexpected child <\(key)/>"))
        }
        continue
      }
      if ctx.rules.typeRuleDefined(p) {
        for child in group { compareElement(p, expectedGroup[0], child, ctx, &out) }
      } else {
        for i in 0..<max(expectedGroup.count, group.count) {
          if i < expectedGroup.count, i < group.count {
            compareElement(p, expectedGroup[i], group[i], ctx, &out)
          } else if i < group.count {
            if !ctx.allowUnexpectedKeys { out.append(mismatch(p, "Unexpected child <\(key)/>")) }
          } else {
            out.append(mismatch(p, "Expected child <\(key)/> but was missing"))
          }
        }
      }
    }
    for key in expectedByName.keys.sorted() {
      out.append(mismatch(path, "Expected child <\(key)/> but was missing"))
    }
  }

  private static func text(_ e: XMLElementNode) -> String {
    e.children.compactMap {
      if case .text(let t) = $0 { return t.trimmingCharacters(in: .whitespacesAndNewlines) }
      return nil
    }.joined()
  }

  private static func compareText(
    _ path: [String], _ e: XMLElementNode, _ a: XMLElementNode, _ ctx: Context, _ out: inout [PactMismatch]
  ) {
    out += compareText(path + ["#text"], text(e), text(a), ctx)
  }

  static func compareText(_ path: [String], _ e: String, _ a: String, _ ctx: Context) -> [PactMismatch] {
    if ctx.isDefined(path) {
      return PactRuleChecks.apply(ctx.best(path), path: path) {
        PactRuleChecks.string($0, e, a, cascaded: $1)
      }
      .map { mismatch(path, $0) }
    }
    return e == a ? [] : [mismatch(path, "Expected '\(a)' to be equal to '\(e)'")]
  }

  // MARK: Multipart

  static func compareMultipart(
    _ e: [UInt8], expectedType: String?, _ a: [UInt8], actualType: String?, _ ctx: Context
  ) -> [PactMismatch] {
    let ep = MultipartPart.parse(e, contentType: expectedType)
    let ap = MultipartPart.parse(a, contentType: actualType)
    if ep.isEmpty, !e.isEmpty { return [mismatch(["$"], "Failed to parse the expected multipart body")] }
    if ap.isEmpty, !a.isEmpty { return [mismatch(["$"], "Failed to parse the actual multipart body")] }
    var out: [PactMismatch] = []
    if ep.count != ap.count {
      out.append(mismatch(["$"], "Expected \(ep.count) part(s) but received \(ap.count) part(s)"))
    }
    for (i, (x, y)) in zip(ep, ap).enumerated() {
      let label = x.name ?? String(i)
      for field in x.headers.fields where field.name.lowercased() != "content-disposition" || x.name == nil {
        let got = y.headers.values(field.name)
        let matches = got.contains {
          field.name.lowercased() == "content-type"
            ? PactHeaderComparison.parameterised(field.value, $0)
            : $0.trimmingCharacters(in: .whitespaces) == field.value.trimmingCharacters(in: .whitespaces)
        }
        if !matches {
          out.append(
            mismatch(
              ["$", label], "Expected part header '\(field.name)' to be '\(field.value)' but was \(got)"))
        }
      }
      if x.name != nil, y.name != x.name {
        out.append(
          mismatch(["$", label], "Expected a part named '\(label)' but it was named '\(y.name ?? "")'"))
      }
      let path = ["$", label]
      if ctx.isDefined(path) {
        let ev = String(decoding: x.body, as: UTF8.self)
        let av = String(decoding: y.body, as: UTF8.self)
        out += PactRuleChecks.apply(ctx.best(path), path: path) { rule, cascaded in
          if case .contentType = rule {
            return PactRuleChecks.bytes(rule, x.body, y.body, cascaded: cascaded)
          }
          return PactRuleChecks.string(rule, ev, av, cascaded: cascaded)
        }.map { mismatch(path, $0) }
      } else if x.body != y.body {
        out.append(
          mismatch(
            path,
            "Expected the part's body (\(x.body.count) bytes) but received other contents (\(y.body.count) bytes)"
          ))
      }
    }
    return out
  }
}
