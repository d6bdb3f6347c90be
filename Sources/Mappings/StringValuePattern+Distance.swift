import JSONSchema
import MockJSON

/// Distances for near-miss ranking. Each is 0 exactly when the matcher matches (the match decides;
/// the distance only says how far a mismatch is).
extension StringValuePattern {
  /// 0 when `value` (nil = absent) matches, otherwise how far it is, 0 < d ≤ 1.
  public func distance(_ value: String?) -> Double {
    match(value) ? 0 : max(MatchResult.minimumMiss, missDistance(value))
  }

  /// 0 when the request's body matches, otherwise how far it is, 0 < d ≤ 1.
  public func bodyDistance(_ request: RequestView) -> Double {
    if matchBody(request) { return 0 }
    switch self {
    case .equalToJson(let expected, let order, let extra):
      guard let actual = request.bodyJSON else { return 1 }
      return max(
        MatchResult.minimumMiss,
        JSONComparison.distance(expected, actual, ignoreArrayOrder: order, ignoreExtraElements: extra))
    case .and(let all): return all.map { $0.bodyDistance(request) }.reduce(0, +) / Double(max(all.count, 1))
    case .or(let any): return any.map { $0.bodyDistance(request) }.min() ?? 1
    case .matchesJsonSchema(let schema, _):
      return JSONComparison.schemaDistance(schema, request.bodyJSON ?? .string(request.bodyText))
    case .binaryEqualTo, .matchesJsonPath, .not, .absent: return 1
    default: return distance(request.bodyText)
    }
  }

  private func missDistance(_ value: String?) -> Double {
    guard let value else { return 1 }
    switch self {
    case .equalTo(let s, let ci):
      return ci
        ? StringDistance.normalized(s.lowercased(), value.lowercased()) : StringDistance.normalized(s, value)
    case .equalToJson(let expected, let order, let extra):
      guard let actual = try? JSONValue.parse(value) else { return 1 }
      return JSONComparison.distance(expected, actual, ignoreArrayOrder: order, ignoreExtraElements: extra)
    case .and(let all): return all.map { $0.distance(value) }.reduce(0, +) / Double(max(all.count, 1))
    case .or(let any): return any.map { $0.distance(value) }.min() ?? 1
    case .dateTime(let d): return d.missDistance(value)
    case .matchesJsonSchema(let schema, _):
      let instance = (try? JSONValue.parse(value)) ?? .string(value)
      return JSONComparison.schemaDistance(schema, instance)
    default: return 1
    }
  }
}

extension MultiValuePattern {
  /// 0 when `values` (empty = absent) match, otherwise how far they are, 0 < d ≤ 1: the closest value
  /// for a single matcher, the mean of each pattern's closest value for `includes`.
  public func distance(_ values: [String]) -> Double {
    if match(values) { return 0 }
    switch self {
    case .single(let p):
      if values.isEmpty { return p.distance(nil) }
      return values.map { p.distance($0) }.min() ?? 1
    case .includes(let ps):
      let each = ps.map { p in values.map { p.distance($0) }.min() ?? 1 }
      return max(MatchResult.minimumMiss, each.reduce(0, +) / Double(max(ps.count, 1)))
    case .hasExactly:
      return 1
    }
  }
}

extension URLMatcher {
  /// 0 when the request's URL matches, otherwise how far it is: normalized Levenshtein distance for a
  /// literal `url`, `urlPath` or template, 1 for a regular expression that does not match.
  public func distance(_ request: RequestView) -> Double {
    var parameters: [String: String] = [:]
    if match(request, parameters: &parameters) { return 0 }
    switch self {
    case .url(let s), .urlPath(let s):
      return max(MatchResult.minimumMiss, StringDistance.normalized(s, actual(request)))
    case .urlPathTemplate(let t):
      return max(MatchResult.minimumMiss, StringDistance.normalized(t.template, request.path))
    default: return 1
    }
  }
}

extension JSONComparison {
  /// How far `instance` is from conforming to `schema`: grows with the number of violations (one ≈ 0.5).
  package static func schemaDistance(_ schema: JSONValue, _ instance: JSONValue) -> Double {
    let n = Double(JSONSchemaValidator(schema: schema).validate(instance).count)
    return n == 0 ? 0 : max(MatchResult.minimumMiss, n / (n + 1))
  }

  /// How different `actual` is from `expected` under `equalToJson`'s rules, 0...1: the mean over the
  /// expected members (and, unless extra elements are ignored, the actual ones) of each member's distance,
  /// 1 for a member missing or of another kind, normalized Levenshtein distance for differing strings.
  package static func distance(
    _ expected: JSONValue, _ actual: JSONValue, ignoreArrayOrder: Bool, ignoreExtraElements: Bool
  ) -> Double {
    if equal(expected, actual, ignoreArrayOrder: ignoreArrayOrder, ignoreExtraElements: ignoreExtraElements) {
      return 0
    }
    func inner(_ e: JSONValue, _ a: JSONValue) -> Double {
      distance(e, a, ignoreArrayOrder: ignoreArrayOrder, ignoreExtraElements: ignoreExtraElements)
    }
    switch (expected, actual) {
    case (.object(let e), .object(let a)):
      let ea = e.effective
      let aa = a.effective
      var keys = Array(ea.keys)
      if !ignoreExtraElements { keys += aa.keys.filter { ea[$0] == nil } }
      guard !keys.isEmpty else { return 1 }
      let total = keys.reduce(0.0) { sum, k in
        guard let ev = ea[k], let av = aa[k] else { return sum + 1 }
        return sum + inner(ev, av)
      }
      return total / Double(keys.count)
    case (.array(let e), .array(let a)):
      let n = max(e.count, a.count)
      guard n > 0 else { return 1 }
      if ignoreArrayOrder {
        let total = e.reduce(0.0) { sum, ev in sum + (a.map { inner(ev, $0) }.min() ?? 1) }
        return (total + Double(n - e.count)) / Double(n)
      }
      let total = (0..<n).reduce(0.0) { sum, k in
        k < e.count && k < a.count ? sum + inner(e[k], a[k]) : sum + 1
      }
      return total / Double(n)
    case (.string(let e), .string(let a)):
      return StringDistance.normalized(e, a)
    default:
      return 1
    }
  }
}
