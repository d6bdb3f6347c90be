import Foundation
import MockJSON

/// Header matching as pact_matching's `headers.rs`: names case-insensitive, list-valued fields split at
/// commas, `Content-Type` and `Accept` compared as media types, every value checked against the rules.
package enum PactHeaderComparison {
  /// Fields whose value is a comma-separated list (RFC 9110), split into values; others are one value.
  static let listFields: Set<String> = [
    "accept", "accept-encoding", "accept-language", "access-control-allow-headers",
    "access-control-allow-methods", "access-control-expose-headers", "access-control-request-headers",
    "allow",
    "cache-control", "if-match", "if-none-match", "vary",
  ]

  /// An interaction part's `headers` as pact_models reads them: a string split as ``parse(name:value:)``,
  /// an array (V4) as its values.
  package static func fields(_ value: JSONValue?) -> [(String, [String])] {
    (value?.objectValue ?? JSONObject()).members.map { member in
      switch member.value {
      case .string(let s): return (member.key, parse(name: member.key, value: s))
      case .array(let values): return (member.key, values.map(PactRuleChecks.text))
      default: return (member.key, [member.value.serialized()])
      }
    }
  }

  /// True for the fields whose value is a comma-separated list.
  package static func isList(_ name: String) -> Bool { listFields.contains(name.lowercased()) }

  /// One field value as Pact reads it: split at commas for list fields, trimmed.
  package static func parse(name: String, value: String) -> [String] {
    if listFields.contains(name.lowercased()) {
      return value.split(separator: ",", omittingEmptySubsequences: false).map {
        $0.trimmingCharacters(in: .whitespaces)
      }
    }
    return [value.trimmingCharacters(in: .whitespaces)]
  }

  /// Every expected header present with matching values; headers the request adds are fine.
  static func compare(
    _ expected: [(String, [String])], _ actual: [(String, [String])], _ ctx: PactMatchingContext
  ) -> [PactMismatch] {
    var out: [PactMismatch] = []
    for (name, values) in expected {
      guard let got = actual.first(where: { $0.0.lowercased() == name.lowercased() })?.1 else {
        out.append(
          PactMismatch(part: "header", location: name, message: "Expected a header '\(name)' but was missing")
        )
        continue
      }
      if values.isEmpty && !got.isEmpty {
        out.append(
          PactMismatch(
            part: "header", location: name,
            message:
              "Expected an empty header '\(name)' but actual value was '\(got.joined(separator: ", "))'"))
        continue
      }
      if values.count == 1 && got.count == 1 {
        out += value(name, 0, values[0], got[0], ctx, single: true)
        continue
      }
      let path = ["$", name.lowercased()]
      if ctx.isDefined(path) {
        out += PactBodyComparison.compareLists(path, ctx.best(path), values, got, ctx, describe: { "\($0)" })
        {
          _, e, a, c in value(name, 0, e, a, c, single: false)
        }.map { PactMismatch(part: "header", location: name, message: $0.message) }
        continue
      }
      for i in 0..<max(values.count, got.count) {
        let e = i < values.count ? values[i] : ""
        if i < got.count {
          out += value(name, i, e, got[i], ctx, single: false)
        } else {
          out.append(
            PactMismatch(
              part: "header", location: name,
              message:
                "Mismatch with header '\(name)': Expected value '\(e)' at index \(i) but was missing (actual has \(got.count) value(s))"
            ))
        }
      }
    }
    return out
  }

  /// One header value: by its rules, as a media type (`Content-Type`, `Accept`), or equal after
  /// whitespace around commas is dropped.
  static func value(
    _ name: String, _ index: Int, _ expected: String, _ actual: String, _ ctx: PactMatchingContext,
    single: Bool
  ) -> [PactMismatch] {
    let path = ["$", name.lowercased()]
    let indexed = path + [String(index)]
    let e = expected.trimmingCharacters(in: .whitespaces)
    let a = actual.trimmingCharacters(in: .whitespaces)
    var problems: [String]
    if ctx.isDefined(path) || ctx.isDefined(indexed) {
      let p = ctx.isDefined(path) ? path : indexed
      problems = PactRuleChecks.apply(ctx.best(p), path: p) { PactRuleChecks.string($0, e, a, cascaded: $1) }
      if !single { problems = problems.map { "\($0) for value at index \(index)" } }
    } else if name.lowercased() == "content-type" || name.lowercased() == "accept" {
      problems =
        parameterised(e, a)
        ? []
        : [
          single
            ? "Expected header '\(name)' to have value '\(e)' but was '\(a)'"
            : "Expected header '\(name)' at index \(index) to have value '\(e)' but was '\(a)'"
        ]
    } else {
      let normalise = { (s: String) in
        s.split(separator: ",", omittingEmptySubsequences: false).map {
          $0.trimmingCharacters(in: .whitespaces)
        }
        .joined(separator: ",")
      }
      problems =
        normalise(e) == normalise(a)
        ? [] : ["Expected '\(a)' to be equal to '\(e)'" + (single ? "" : " for value at index \(index)")]
    }
    return problems.map {
      PactMismatch(part: "header", location: name, message: "Mismatch with header '\(name)': \($0)")
    }
  }

  /// Media types: the type and subtype equal (case-insensitively, RFC 9110 §8.3.1), and every expected
  /// parameter present with the same value (compared case-insensitively, as pact-reference compares
  /// charsets).
  package static func parameterised(_ expected: String, _ actual: String) -> Bool {
    func split(_ s: String) -> (String, [String: String]) {
      let items = s.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }.filter {
        !$0.isEmpty
      }
      var parameters: [String: String] = [:]
      for item in items.dropFirst() {
        guard let eq = item.firstIndex(of: "=") else { continue }
        parameters[item[..<eq].trimmingCharacters(in: .whitespaces).lowercased()] =
          item[item.index(after: eq)...].trimmingCharacters(in: .whitespaces)
      }
      return (items.first ?? "", parameters)
    }
    let (et, ep) = split(expected)
    let (at, ap) = split(actual)
    guard et.lowercased() == at.lowercased() else { return false }
    for (k, v) in ep {
      guard let got = ap[k], got.lowercased() == v.lowercased() else { return false }
    }
    return true
  }
}
