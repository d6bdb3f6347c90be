import Foundation
import MockJSON
import RegularExpressions
import Templating

/// WireMock's state extension: the `state-matcher` custom matcher and the `recordState` and `deleteState`
/// serve event listeners. Every configuration error the extension reports at request time (a 500) is a
/// load error here, naming the file, the JSON path and what was expected (docs/stateful.md).
extension StubParser {
  /// A template value of the extension's parameters: a string (numbers and booleans as their JSON text).
  static func stateTemplate(_ v: JSONValue?, _ path: String, _ expected: String, _ d: inout Diagnostics)
    -> Template?
  {
    let text: String
    switch v {
    case .string(let s)?: text = s
    case .number(let n)?: text = n.text
    case .bool(let b)?: text = b ? "true" : "false"
    default:
      d.error(path, expected: expected, found: v ?? .null)
      return nil
    }
    do {
      return try Template(text)
    } catch {
      d.error(path, message: "\(error.line):\(error.column): \(error.message)")
      return nil
    }
  }

  /// An object of templates (`state`, `addFirst`, `addLast`), in file order.
  static func stateTemplates(_ v: JSONValue, _ path: String, _ d: inout Diagnostics) -> [(String, Template)]?
  {
    guard let o = object(v, path, "an object of property names and text templates", &d) else { return nil }
    var out: [(String, Template)] = []
    for m in o {
      let p = JSONPathText.child(path, m.key)
      // A JSON null is read as the text "null", which removes the property (as the extension reads it).
      let value = m.value == .null ? JSONValue.string("null") : m.value
      guard let t = stateTemplate(value, p, "a text template", &d) else { continue }
      out.append((m.key, t))
    }
    return out
  }

  /// A context name template: required, and not blank when written without tags.
  static func contextTemplate(_ o: JSONObject, _ key: String, _ path: String, _ d: inout Diagnostics)
    -> Template?
  {
    let p = JSONPathText.child(path, key)
    guard let t = stateTemplate(o[key], p, "the context name (a text template)", &d) else { return nil }
    if t.source.trimmingCharacters(in: .whitespaces).isEmpty {
      d.error(p, expected: "a context name that is not blank", found: JSONValue.string(t.source))
      return nil
    }
    return t
  }

  /// One `serveEventListeners` entry named `recordState` or `deleteState`, nil for other names (and, with
  /// errors in `d`, for invalid ones).
  package static func parseStateListener(_ entry: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> StateListener?
  {
    guard let e = entry.objectValue, let name = e["name"]?.stringValue,
      name == "recordState" || name == "deleteState"
    else { return nil }
    let pp = JSONPathText.child(path, "parameters")
    guard let p = object(e["parameters"] ?? .null, pp, "the listener's parameters object", &d) else {
      return nil
    }
    if name == "recordState" {
      guard let context = contextTemplate(p, "context", pp, &d) else { return nil }
      var r = StateListener.RecordState(context: context)
      var ok = true
      if let s = p["state"] {
        if let list = stateTemplates(s, JSONPathText.child(pp, "state"), &d) {
          r.properties = list
        } else {
          ok = false
        }
      }
      if let l = p["list"] {
        let lp = JSONPathText.child(pp, "list")
        guard let lo = object(l, lp, "an object with addFirst and/or addLast", &d) else { return nil }
        if let v = lo["addFirst"] {
          r.addFirst = stateTemplates(v, JSONPathText.child(lp, "addFirst"), &d)
          ok = ok && r.addFirst != nil
        }
        if let v = lo["addLast"] {
          r.addLast = stateTemplates(v, JSONPathText.child(lp, "addLast"), &d)
          ok = ok && r.addLast != nil
        }
        if lo["addFirst"] == nil && lo["addLast"] == nil {
          d.warning(lp, "neither addFirst nor addLast: the list is not changed")
        }
      }
      return ok ? .record(r) : nil
    }
    // deleteState
    if let l = p["list"] {
      let lp = JSONPathText.child(pp, "list")
      guard p["context"] != nil else {
        d.error(
          JSONPathText.child(pp, "context"),
          expected:
            "the context whose list entry to delete (Missing/invalid configuration for list entry deletion)",
          found: "no context beside list")
        return nil
      }
      guard let context = contextTemplate(p, "context", pp, &d),
        let lo = object(l, lp, "an object with deleteFirst, deleteLast, deleteIndex or deleteWhere", &d)
      else { return nil }
      let deletion: StateListener.DeleteState.ListDeletion
      if lo["deleteFirst"] == .bool(true) {
        deletion = .first
      } else if lo["deleteLast"] == .bool(true) {
        deletion = .last
      } else if let i = lo["deleteIndex"] {
        guard
          let t = stateTemplate(
            i, JSONPathText.child(lp, "deleteIndex"), "an index as text (\"0\", \"-1\")", &d)
        else { return nil }
        deletion = .index(t)
      } else if let w = lo["deleteWhere"] {
        let wp = JSONPathText.child(lp, "deleteWhere")
        guard let wo = object(w, wp, "{\"property\": …, \"value\": …}", &d) else { return nil }
        let expected = "a text template (Missing/invalid configuration for list entry deletion)"
        let property = stateTemplate(wo["property"], JSONPathText.child(wp, "property"), expected, &d)
        let value = stateTemplate(wo["value"], JSONPathText.child(wp, "value"), expected, &d)
        guard let property, let value else { return nil }
        deletion = .matching(property: property, value: value)
      } else {
        d.error(
          lp, expected: "deleteFirst: true, deleteLast: true, deleteIndex or deleteWhere",
          found: "none of them (Missing/invalid configuration for list entry deletion)")
        return nil
      }
      return .delete(StateListener.DeleteState(target: .context(context), list: deletion))
    }
    if p["context"] != nil {
      guard let context = contextTemplate(p, "context", pp, &d) else { return nil }
      return .delete(StateListener.DeleteState(target: .context(context)))
    }
    if let cs = p["contexts"] {
      let cp = JSONPathText.child(pp, "contexts")
      guard let list = cs.arrayValue else {
        d.error(cp, expected: "an array of context names (text templates)", found: cs)
        return nil
      }
      var templates: [Template] = []
      for (i, c) in list.enumerated() {
        guard let t = stateTemplate(c, JSONPathText.index(cp, i), "a context name (a text template)", &d)
        else { return nil }
        templates.append(t)
      }
      return .delete(StateListener.DeleteState(target: .contexts(templates)))
    }
    if let m = p["contextsMatching"] {
      let mp = JSONPathText.child(pp, "contextsMatching")
      guard let t = stateTemplate(m, mp, "a Java regular expression (a text template)", &d) else {
        return nil
      }
      var compiled: CompiledRegex?
      if !Template.mayContainTags(t.source) {
        do {
          compiled = try CompiledRegex(t.source)
        } catch {
          d.error(
            mp, expected: "a valid regular expression",
            found: "\(FixtureProblem.excerpt(t.source)) (\(error.message))")
          return nil
        }
      }
      return .delete(StateListener.DeleteState(target: .matching(t, compiled: compiled)))
    }
    d.error(
      pp, expected: "context, contexts or contextsMatching",
      found: "none of them (Missing/invalid configuration for context deletion)")
    return nil
  }

  /// `customMatcher` named `state-matcher`.
  static func parseStateMatcher(_ o: JSONObject, _ path: String, _ d: inout Diagnostics) -> StateMatcher? {
    let pp = JSONPathText.child(path, "parameters")
    guard let p = object(o["parameters"] ?? .null, pp, "the state matcher's parameters object", &d) else {
      return nil
    }
    return parseStateMatcherObject(p, pp, top: nil, &d, depth: 0)
  }

  /// Deepest nesting of `and`, `or` and `not` read (a deeper one is refused, not recursed into).
  static let maximumStateMatcherDepth = 32

  static func parseStateMatcherObject(
    _ p: JSONObject, _ path: String, top: StateChecks?, _ d: inout Diagnostics, depth: Int
  ) -> StateMatcher? {
    guard depth <= maximumStateMatcherDepth else {
      d.error(
        path, expected: "at most \(maximumStateMatcherDepth) nested and/or/not", found: "deeper nesting")
      return nil
    }
    guard let checks = parseStateChecks(p, path, &d) else { return nil }
    let inherited = top.map { checks.adding($0) } ?? checks
    func nested(_ key: String) -> [StateMatcher]? {
      let np = JSONPathText.child(path, key)
      guard let list = p[key]?.arrayValue, !list.isEmpty else {
        d.error(np, expected: "a non-empty array of state matcher objects", found: p[key] ?? .null)
        return nil
      }
      var out: [StateMatcher] = []
      for (i, item) in list.enumerated() {
        let ip = JSONPathText.index(np, i)
        guard let io = object(item, ip, "a state matcher object", &d),
          let m = parseStateMatcherObject(io, ip, top: top ?? checks, &d, depth: depth + 1)
        else { return nil }
        out.append(m)
      }
      return out
    }
    if p["hasContext"] != nil {
      guard let t = contextTemplate(p, "hasContext", path, &d) else { return nil }
      return .hasContext(t, inherited)
    }
    if p["hasNotContext"] != nil {
      guard let t = contextTemplate(p, "hasNotContext", path, &d) else { return nil }
      return .hasNotContext(t)
    }
    if p["and"] != nil { return nested("and").map { .all($0) } }
    if p["or"] != nil { return nested("or").map { .any($0) } }
    if let n = p["not"] {
      let np = JSONPathText.child(path, "not")
      guard let no = object(n, np, "a state matcher object", &d),
        let m = parseStateMatcherObject(no, np, top: top ?? checks, &d, depth: depth + 1)
      else { return nil }
      return .not(m)
    }
    d.error(
      path,
      expected: "hasContext, hasNotContext, and, or or not (state-matcher: You have to specify "
        + "'hasContext' or 'hasNotContext')",
      found: "none of them")
    return nil
  }

  /// The property-level checks of one matcher object.
  static func parseStateChecks(_ p: JSONObject, _ path: String, _ d: inout Diagnostics) -> StateChecks? {
    var c = StateChecks()
    var ok = true
    func template(_ key: String, _ expected: String) -> Template? {
      guard p[key] != nil else { return nil }
      let t = stateTemplate(p[key], JSONPathText.child(path, key), expected, &d)
      if t == nil { ok = false }
      return t
    }
    func matchers(_ v: JSONValue, _ mp: String) -> [RequestPattern.Named]? {
      guard let o = object(v, mp, "an object of names and string matchers ({\"equalTo\": …})", &d) else {
        return nil
      }
      var out: [RequestPattern.Named] = []
      for m in o {
        guard let pattern = parseMatcher(m.value, JSONPathText.child(mp, m.key), &d) else { return nil }
        out.append(RequestPattern.Named(m.key, pattern))
      }
      return out
    }
    c.hasProperty = template("hasProperty", "a property name (a text template)")
    c.hasNotProperty = template("hasNotProperty", "a property name (a text template)")
    if let v = p["property"] {
      if let m = matchers(v, JSONPathText.child(path, "property")) { c.properties = m } else { ok = false }
    }
    if let v = p["list"] {
      let lp = JSONPathText.child(path, "list")
      if let o = object(v, lp, "an object of list indexes (first, last, -1, 0, …) and matchers", &d) {
        for m in o {
          let ip = JSONPathText.child(lp, m.key)
          guard ["first", "last", "-1"].contains(m.key) || (Int(m.key).map { $0 >= 0 } ?? false) else {
            d.error(
              ip, expected: "a list index: first, last, -1 or a number from 0", found: JSONValue.string(m.key)
            )
            ok = false
            continue
          }
          if let f = matchers(m.value, ip) {
            c.entries.append(StateChecks.EntryCheck(index: m.key, fields: f))
          } else {
            ok = false
          }
        }
      } else {
        ok = false
      }
    }
    for subject in ["updateCount", "listSize"] {
      for (suffix, comparison) in [
        ("EqualTo", StateChecks.Comparison.eq), ("LessThan", .lt), ("MoreThan", .gt),
      ] {
        if let t = template(subject + suffix, "a number as text (a template)") {
          c.counts.append(StateChecks.CountCheck(subject: subject, comparison: comparison, bound: t))
        }
      }
    }
    if let v = p["numericComparisons"] {
      let np = JSONPathText.child(path, "numericComparisons")
      if let o = object(v, np, "an object of property names and {operator: bound}", &d) {
        for m in o {
          let mp = JSONPathText.child(np, m.key)
          guard
            let ops = object(m.value, mp, "an object of operators (eq, ne, lt, lte, gt, gte) and bounds", &d)
          else {
            ok = false
            continue
          }
          for op in ops {
            let opPath = JSONPathText.child(mp, op.key)
            guard let comparison = StateChecks.Comparison(rawValue: op.key.lowercased()) else {
              d.error(
                opPath, expected: "an operator: eq, ne, lt, lte, gt or gte", found: JSONValue.string(op.key))
              ok = false
              continue
            }
            guard let t = stateTemplate(op.value, opPath, "a number as text (a template)", &d) else {
              ok = false
              continue
            }
            c.numeric.append(StateChecks.NumericCheck(property: m.key, comparison: comparison, bound: t))
          }
        }
      } else {
        ok = false
      }
    }
    return ok ? c : nil
  }
}
