import Foundation
import MockJSON
import Templating

/// What a `state-matcher` renders its templates with while one request is matched: the store, the request
/// model and the server's template options. Made once per request, only when the table has state
/// matchers (``StubTable/hasStateMatchers``).
public final class StateMatchEnvironment: Sendable {
  /// The store the matcher reads.
  package let lookup: any TemplateStateLookup
  /// WireMock's `request` model of the request being matched.
  package let request: TemplateValue
  /// Template options (`--fixed-time`, budgets).
  package let environment: TemplateEnvironment

  /// Creates the environment for one request.
  public init(lookup: any TemplateStateLookup, request: TemplateValue, environment: TemplateEnvironment) {
    self.lookup = lookup
    self.request = request
    self.environment = environment
  }

  /// `template` rendered over the request model (and `extra` names, such as `context`).
  func render(_ template: Template, extra: TemplateMap = TemplateMap()) -> String {
    guard Template.mayContainTags(template.source) else { return template.source }
    return template.render(
      TemplateContext(request: request, environment: environment, additionalModel: extra, state: lookup)
    ).text
  }
}

/// The checks of a `hasContext` state matcher on the context it found (all must hold).
package struct StateChecks: Sendable, Hashable {
  /// A comparison of a number with a bound.
  package enum Comparison: String, Sendable, Hashable {
    case eq, ne, lt, lte, gt, gte

    func holds(_ a: Double, _ b: Double) -> Bool {
      switch self {
      case .eq: a == b
      case .ne: a != b
      case .lt: a < b
      case .lte: a <= b
      case .gt: a > b
      case .gte: a >= b
      }
    }

    var text: String {
      switch self {
      case .eq: "=="
      case .ne: "!="
      case .lt: "<"
      case .lte: "<="
      case .gt: ">"
      case .gte: ">="
      }
    }
  }

  /// `updateCountEqualTo` and its kin, `listSizeEqualTo` and its kin.
  package struct CountCheck: Sendable, Hashable {
    /// `updateCount` or `listSize`.
    package var subject: String
    package var comparison: Comparison
    package var bound: Template
  }

  /// `numericComparisons`' bound for one property and operator.
  package struct NumericCheck: Sendable, Hashable {
    package var property: String
    package var comparison: Comparison
    package var bound: Template
  }

  /// `list`'s matchers for the entry at one index (`first`, `last`, `-1`, `0`, …).
  package struct EntryCheck: Sendable, Hashable {
    package var index: String
    package var fields: [RequestPattern.Named]
  }

  package var hasProperty: Template?
  package var hasNotProperty: Template?
  package var properties: [RequestPattern.Named] = []
  package var entries: [EntryCheck] = []
  package var counts: [CountCheck] = []
  package var numeric: [NumericCheck] = []

  /// This and `other`'s checks together.
  func adding(_ other: StateChecks) -> StateChecks {
    var all = self
    all.hasProperty = hasProperty ?? other.hasProperty
    all.hasNotProperty = hasNotProperty ?? other.hasNotProperty
    all.properties += other.properties
    all.entries += other.entries
    all.counts += other.counts
    all.numeric += other.numeric
    return all
  }

  /// Nil when every check holds on `context`, else why not.
  func failure(_ context: StateContextSnapshot, _ env: StateMatchEnvironment) -> String? {
    let extra = TemplateMap([("context", .map(TemplateMap([("updateCount", .int(context.updateCount))])))])
    let name = context.name
    if let hasProperty {
      let p = env.render(hasProperty, extra: extra)
      if context.property(p) == nil { return "context \(name) has no property \(JSONValue.quoted(p))" }
    }
    if let hasNotProperty {
      let p = env.render(hasNotProperty, extra: extra)
      if let v = context.property(p) {
        return "context \(name) has property \(JSONValue.quoted(p)) (\(JSONValue.quoted(v)))"
      }
    }
    for check in properties {
      let value = context.property(check.name)
      if !check.pattern.match(value) {
        return "context \(name) property \(check.name) is "
          + (value.map { JSONValue.quoted($0) } ?? "absent") + ", expected \(check.pattern.description)"
      }
    }
    for check in entries {
      let count = context.list.count
      let index: Int? =
        switch check.index {
        case "first": count > 0 ? 0 : nil
        case "last", "-1": count > 0 ? count - 1 : nil
        default: Int(check.index).flatMap { (0..<count).contains($0) ? $0 : nil }
        }
      guard let index else {
        return "context \(name) has no list entry \(check.index) (list size \(count))"
      }
      let entry = context.list[index]
      for field in check.fields {
        let value = entry.first { $0.key == field.name }?.value
        if !field.pattern.match(value) {
          return "context \(name) list[\(check.index)].\(field.name) is "
            + (value.map { JSONValue.quoted($0) } ?? "absent") + ", expected \(field.pattern.description)"
        }
      }
    }
    for check in counts {
      let actual = check.subject == "updateCount" ? context.updateCount : context.list.count
      let text = env.render(check.bound, extra: extra).trimmingCharacters(in: .whitespaces)
      guard let bound = Double(text), bound.isFinite else {
        return "\(check.subject) bound \(JSONValue.quoted(text)) is not a number"
      }
      if !check.comparison.holds(Double(actual), bound) {
        return "context \(name) \(check.subject) is \(actual), expected \(check.comparison.text) \(text)"
      }
    }
    for check in numeric {
      let text = env.render(check.bound, extra: extra).trimmingCharacters(in: .whitespaces)
      guard let bound = Double(text), bound.isFinite else {
        return "numericComparisons bound \(JSONValue.quoted(text)) for \(check.property) is not a number"
      }
      guard let raw = context.property(check.property) else {
        return "context \(name) has no property \(JSONValue.quoted(check.property)) to compare"
      }
      guard let value = Double(raw.trimmingCharacters(in: .whitespaces)), value.isFinite else {
        return "context \(name) property \(check.property) is \(JSONValue.quoted(raw)), not a number"
      }
      if !check.comparison.holds(value, bound) {
        return
          "context \(name) property \(check.property) is \(raw), expected \(check.comparison.text) \(text)"
      }
    }
    return nil
  }
}

/// The `state-matcher` custom matcher of WireMock's state extension: one more condition of a request
/// pattern, read from the store as it is when the request is matched (docs/stateful.md).
package indirect enum StateMatcher: Sendable, Hashable {
  /// `hasContext`: the context exists and every check holds.
  case hasContext(Template, StateChecks)
  /// `hasNotContext`: the context does not exist.
  case hasNotContext(Template)
  /// `not`: the inner matcher does not match.
  case not(StateMatcher)
  /// `and`: every matcher matches.
  case all([StateMatcher])
  /// `or`: one matcher matches.
  case any([StateMatcher])

  /// True when the store satisfies the matcher; `reason` says what was found (for near misses).
  package func evaluate(_ env: StateMatchEnvironment) -> (matched: Bool, reason: String) {
    switch self {
    case .hasContext(let template, let checks):
      let name = env.render(template)
      guard let context = env.lookup.stateContext(named: name) else {
        return (false, "context \(name) does not exist")
      }
      if let failure = checks.failure(context, env) { return (false, failure) }
      return (true, "context \(name) exists")
    case .hasNotContext(let template):
      let name = env.render(template)
      if env.lookup.stateContext(named: name) != nil { return (false, "context \(name) exists") }
      return (true, "context \(name) does not exist")
    case .not(let inner):
      let (matched, reason) = inner.evaluate(env)
      return (!matched, matched ? "not: \(reason)" : reason)
    case .all(let list):
      var reasons: [String] = []
      for m in list {
        let (matched, reason) = m.evaluate(env)
        if !matched { return (false, reason) }
        reasons.append(reason)
      }
      return (true, reasons.joined(separator: "; "))
    case .any(let list):
      var reasons: [String] = []
      for m in list {
        let (matched, reason) = m.evaluate(env)
        if matched { return (true, reason) }
        reasons.append(reason)
      }
      return (false, reasons.isEmpty ? "or: no matcher" : reasons.joined(separator: "; and "))
    }
  }

  /// The matcher as near misses show what was expected.
  package var description: String {
    switch self {
    case .hasContext(let t, _): "context \(t.source) exists"
    case .hasNotContext(let t): "context \(t.source) does not exist"
    case .not(let m): "not (\(m.description))"
    case .all(let l): l.map(\.description).joined(separator: " and ")
    case .any(let l): l.map(\.description).joined(separator: " or ")
    }
  }
}

/// The store and template options a table's `state-matcher`s read (``StubTable/matchIndexed``).
public struct StateMatchSource: Sendable {
  /// The store.
  public var lookup: any TemplateStateLookup
  /// Template options (`--fixed-time`, budgets).
  public var environment: TemplateEnvironment
  /// Creates a source.
  public init(lookup: any TemplateStateLookup, environment: TemplateEnvironment) {
    self.lookup = lookup
    self.environment = environment
  }
}
