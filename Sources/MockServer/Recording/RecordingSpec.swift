import Foundation
import HTTPCore
import Mappings
import MockJSON

/// What a recording session (or snapshot) turns into stubs: WireMock's record spec
/// (`POST /__admin/recordings/start` and `/snapshot` bodies), plus the redaction `mockserver record`
/// applies by default.
package struct RecordingSpec: Sendable {
  /// How request bodies become body patterns (`requestBodyPattern`).
  package enum BodyPattern: Sendable, Equatable {
    /// `equalToJson` for JSON bodies, `equalTo` for text, `binaryEqualTo` otherwise (WireMock's `auto`).
    case auto(ignoreArrayOrder: Bool, ignoreExtraElements: Bool, caseInsensitive: Bool)
    /// `equalTo` always.
    case equalTo(caseInsensitive: Bool)
    /// `equalToJson` always (text that is not JSON falls back to `equalTo`).
    case equalToJson(ignoreArrayOrder: Bool, ignoreExtraElements: Bool)
  }

  /// `targetBaseUrl`: every request is proxied there while recording.
  package var targetBaseURL: String?
  /// `filters`: only exchanges whose request matches are recorded.
  package var filters: RequestPattern?
  /// `filters.ids`: only these journal entries (snapshots).
  package var ids: Set<String>?
  /// `captureHeaders`: request fields matched with `equalTo` (name, caseInsensitive).
  package var captureHeaders: [(name: String, caseInsensitive: Bool)] = []
  /// `requestBodyPattern`.
  package var bodyPattern = BodyPattern.auto(
    ignoreArrayOrder: true, ignoreExtraElements: true, caseInsensitive: false)
  /// `extractBodyCriteria.textSizeThreshold` in bytes: larger text bodies go to `__files/` when writing files.
  package var textSizeThreshold: Int?
  /// `extractBodyCriteria.binarySizeThreshold` in bytes.
  package var binarySizeThreshold: Int?
  /// `extractBodyCriteria` was given: the admin API writes bodies over its thresholds (an omitted one is
  /// 0, as WireMock) to the fixtures folder's `__files/` and references them with `bodyFileName`.
  package var extractsBodies = false
  /// `persist` (default true): add the stubs to the server (and mark them persistent).
  package var persist = true
  /// `repeatsAsScenarios` (default true): identical requests with different answers become a scenario.
  package var repeatsAsScenarios = true
  /// `transformers`.
  package var transformers: [String] = []
  /// `outputFormat`: `FULL` (stubs) or `IDS` (their ids).
  package var outputIDsOnly = false
  /// Header names (lowercased) whose values are replaced by ``placeholder`` (`mockserver record`).
  package var redactedHeaders: Set<String> = []
  /// JSON member names whose values are replaced by ``placeholder`` in bodies (`--redact`).
  package var redactedFields: Set<String> = []
  /// The text that replaces a redacted value.
  package static let placeholder = "REDACTED"

  /// Defaults.
  package init() {}

  /// The headers `mockserver record` redacts unless told otherwise (lowercased).
  package static let defaultRedactedHeaders: Set<String> = [
    "authorization", "cookie", "set-cookie", "proxy-authorization",
  ]

  /// A spec problem: the JSON pointer and what was expected.
  package struct Problem: Error, Sendable {
    package var pointer: String
    package var detail: String
  }

  /// Parses a record spec object. Unknown fields are refused.
  package static func parse(_ o: JSONObject, requireTarget: Bool) -> Result<RecordingSpec, Problem> {
    var spec = RecordingSpec()
    let known: Set<String> = [
      "targetBaseUrl", "filters", "captureHeaders", "requestBodyPattern", "extractBodyCriteria", "persist",
      "repeatsAsScenarios", "transformers", "transformerParameters", "outputFormat",
    ]
    for key in o.keys where !known.contains(key) {
      return .failure(
        Problem(
          pointer: "/\(key)",
          detail:
            "$.\(key): expected a record spec field (\(known.sorted().joined(separator: ", "))), found unknown field"
        ))
    }
    if let t = o["targetBaseUrl"] {
      guard let url = t.stringValue, ProxyDefinition.problem(baseURL: url) == nil else {
        return .failure(
          Problem(
            pointer: "/targetBaseUrl",
            detail: "$.targetBaseUrl: expected an absolute http:// or https:// URL, found \(t)"))
      }
      spec.targetBaseURL = url.hasSuffix("/") ? String(url.dropLast()) : url
    } else if requireTarget {
      return .failure(
        Problem(
          pointer: "/targetBaseUrl",
          detail: "$.targetBaseUrl: expected the upstream's base URL, found nothing"))
    }
    if let f = o["filters"] {
      guard var fo = f.objectValue else {
        return .failure(
          Problem(
            pointer: "/filters",
            detail: "$.filters: expected a request pattern object, found \(f.kindDescription)"))
      }
      if let ids = fo["ids"] {
        guard let list = ids.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
          return .failure(
            Problem(
              pointer: "/filters/ids",
              detail: "$.filters.ids: expected an array of journal ids, found \(ids.kindDescription)"))
        }
        spec.ids = Set(list.compactMap(\.stringValue))
      }
      fo.members.removeAll { $0.key == "ids" || $0.key == "allowNonProxied" }
      if !fo.members.isEmpty {
        var d = Diagnostics(file: "")
        let pattern = StubParser.parseRequest(.object(fo), "$.filters", &d)
        if let first = d.problems.first(where: \.isError) {
          return .failure(Problem(pointer: "/filters", detail: "\(first.path): \(first.message)"))
        }
        spec.filters = pattern
      }
    }
    if let c = o["captureHeaders"] {
      guard let co = c.objectValue else {
        return .failure(
          Problem(
            pointer: "/captureHeaders",
            detail:
              "$.captureHeaders: expected an object of header name → {\"caseInsensitive\": bool}, found \(c.kindDescription)"
          ))
      }
      for m in co {
        spec.captureHeaders.append((m.key, m.value["caseInsensitive"]?.boolValue ?? false))
      }
    }
    if let b = o["requestBodyPattern"] {
      guard let bo = b.objectValue else {
        return .failure(
          Problem(
            pointer: "/requestBodyPattern",
            detail:
              "$.requestBodyPattern: expected an object {\"matcher\": \"auto\" | \"equalTo\" | \"equalToJson\"}, found \(b.kindDescription)"
          ))
      }
      let order = bo["ignoreArrayOrder"]?.boolValue ?? true
      let extra = bo["ignoreExtraElements"]?.boolValue ?? true
      let ci = bo["caseInsensitive"]?.boolValue ?? false
      switch bo["matcher"]?.stringValue ?? "auto" {
      case "auto":
        spec.bodyPattern = .auto(ignoreArrayOrder: order, ignoreExtraElements: extra, caseInsensitive: ci)
      case "equalTo": spec.bodyPattern = .equalTo(caseInsensitive: ci)
      case "equalToJson": spec.bodyPattern = .equalToJson(ignoreArrayOrder: order, ignoreExtraElements: extra)
      default:
        return .failure(
          Problem(
            pointer: "/requestBodyPattern/matcher",
            detail:
              "$.requestBodyPattern.matcher: expected auto, equalTo or equalToJson, found \(bo["matcher"] ?? .null)"
          ))
      }
    }
    if let e = o["extractBodyCriteria"] {
      guard let eo = e.objectValue else {
        return .failure(
          Problem(
            pointer: "/extractBodyCriteria",
            detail: "$.extractBodyCriteria: expected an object, found \(e.kindDescription)"))
      }
      spec.extractsBodies = true
      for (key, keyPath) in [
        ("textSizeThreshold", \RecordingSpec.textSizeThreshold),
        ("binarySizeThreshold", \RecordingSpec.binarySizeThreshold),
      ] {
        guard let v = eo[key] else { continue }
        guard let n = byteSize(v) else {
          return .failure(
            Problem(
              pointer: "/extractBodyCriteria/\(key)",
              detail: "$.extractBodyCriteria.\(key): expected a size such as \"2 kb\" or 2048, found \(v)"))
        }
        spec[keyPath: keyPath] = n
      }
    }
    for (key, keyPath) in [
      ("persist", \RecordingSpec.persist), ("repeatsAsScenarios", \RecordingSpec.repeatsAsScenarios),
    ] {
      guard let v = o[key] else { continue }
      guard let flag = v.boolValue else {
        return .failure(
          Problem(pointer: "/\(key)", detail: "$.\(key): expected true or false, found \(v.kindDescription)"))
      }
      spec[keyPath: keyPath] = flag
    }
    if let t = o["transformers"] {
      guard let list = t.arrayValue, list.allSatisfy({ $0.stringValue != nil }) else {
        return .failure(
          Problem(
            pointer: "/transformers",
            detail: "$.transformers: expected an array of transformer names, found \(t.kindDescription)"))
      }
      spec.transformers = list.compactMap(\.stringValue)
      if let name = spec.transformers.first {
        return .failure(
          Problem(
            pointer: "/transformers/0",
            detail:
              "$.transformers[0]: expected a registered recording transformer (this server has none), found \(JSONValue.quoted(name))"
          ))
      }
    }
    if let f = o["outputFormat"] {
      switch f.stringValue?.uppercased() {
      case "FULL": spec.outputIDsOnly = false
      case "IDS": spec.outputIDsOnly = true
      default:
        return .failure(
          Problem(pointer: "/outputFormat", detail: "$.outputFormat: expected FULL or IDS, found \(f)"))
      }
    }
    return .success(spec)
  }

  /// `2048`, `"2048"`, `"2 kb"`, `"1 Mb"`, `"1.5 mb"` → bytes (kilo = 1024), at most 1 GiB.
  static func byteSize(_ v: JSONValue) -> Int? {
    if let n = v.numberValue?.intValue { return (0...(1 << 30)).contains(n) ? n : nil }
    guard let s = v.stringValue?.lowercased().replacingOccurrences(of: " ", with: "") else { return nil }
    let units: [(String, Double)] = [
      ("gb", 1_073_741_824), ("mb", 1_048_576), ("kb", 1024), ("b", 1), ("", 1),
    ]
    for (suffix, scale) in units where s.hasSuffix(suffix) {
      guard let number = Double(s.dropLast(suffix.count)), number.isFinite, number >= 0 else { return nil }
      let bytes = number * scale
      return bytes <= Double(1 << 30) ? Int(bytes) : nil
    }
    return nil
  }

  /// True when `exchange` passes the filters.
  func accepts(_ exchange: RecordedExchange) -> Bool {
    if let ids, !ids.contains(exchange.journalID) { return false }
    guard let filters else { return true }
    guard let view = try? RequestView(exchange.request) else { return false }
    return filters.matches(view).0
  }
}
