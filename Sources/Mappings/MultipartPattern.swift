import HTTPCore
import MockJSON

/// `application/x-www-form-urlencoded` bodies as WHATWG's URL standard decodes them (§5.1): fields split
/// on `&`, name and value on the first `=`, `+` is a space, percent-escapes decoded (invalid ones kept),
/// then UTF-8 with invalid sequences replaced.
package enum FormDecoding {
  /// The fields of `body` when `contentType` is `application/x-www-form-urlencoded`; empty otherwise.
  package static func fields(_ body: [UInt8], contentType: String?) -> [(name: String, value: String)] {
    guard let contentType,
      contentType.split(separator: ";").first?.trimmingOWS().lowercased()
        == "application/x-www-form-urlencoded"
    else { return [] }
    var out: [(name: String, value: String)] = []
    for field in body.split(separator: UInt8(ascii: "&"), omittingEmptySubsequences: true) {
      let eq = field.firstIndex(of: UInt8(ascii: "="))
      let name = eq.map { field[..<$0] } ?? field[...]
      let value = eq.map { field[field.index(after: $0)...] } ?? []
      out.append((decode(name), decode(value)))
    }
    return out
  }

  /// WHATWG percent-decoding with `+` as space.
  package static func decode(_ bytes: ArraySlice<UInt8>) -> String {
    var out: [UInt8] = []
    out.reserveCapacity(bytes.count)
    var i = bytes.startIndex
    while i < bytes.endIndex {
      let c = bytes[i]
      if c == 0x25, i + 2 < bytes.endIndex, let h = PercentDecoding.hex(bytes[i + 1]),
        let l = PercentDecoding.hex(bytes[i + 2])
      {
        out.append(h << 4 | l)
        i += 3
      } else {
        out.append(c == 0x2B ? 0x20 : c)
        i += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}

/// One entry of `multipartPatterns`: header and body matchers that one part (`ANY`) or every part (`ALL`)
/// of a `multipart/*` body must satisfy.
public struct MultipartPattern: Sendable, Hashable, CustomStringConvertible {
  /// `matchingType`.
  public enum MatchingType: String, Sendable, Hashable {
    /// At least one part matches (WireMock's default).
    case any = "ANY"
    /// Every part matches.
    case all = "ALL"
  }

  /// `matchingType`.
  public var matchingType: MatchingType
  /// `name`: the part's `Content-Disposition` name, when given.
  public var name: String?
  /// `headers` of the part (names case-insensitive).
  public var headers: [RequestPattern.NamedMulti]
  /// `bodyPatterns` applied to the part's body (its `Content-Type` charset decides the text).
  public var bodyPatterns: [StringValuePattern]

  /// Creates a pattern.
  public init(
    matchingType: MatchingType = .any, name: String? = nil, headers: [RequestPattern.NamedMulti] = [],
    bodyPatterns: [StringValuePattern] = []
  ) {
    self.matchingType = matchingType
    self.name = name
    self.headers = headers
    self.bodyPatterns = bodyPatterns
  }

  /// 0 when `parts` satisfy the pattern, otherwise how far they are (0 < d ≤ 1).
  public func distance(_ parts: [MultipartPart]) -> Double {
    guard !parts.isEmpty else { return 1 }
    let each = parts.map(partDistance)
    switch matchingType {
    case .any: return each.min() ?? 1
    case .all:
      return each.allSatisfy { $0 == 0 }
        ? 0 : max(MatchResult.minimumMiss, each.reduce(0, +) / Double(each.count))
    }
  }

  /// Share of this pattern's matchers the part fails (0 = the part matches).
  private func partDistance(_ part: MultipartPart) -> Double {
    var total = 0
    var failed = 0
    if let name {
      total += 1
      if part.name != name { failed += 1 }
    }
    for h in headers {
      total += 1
      if !h.pattern.match(part.headers.values(h.name)) { failed += 1 }
    }
    if !bodyPatterns.isEmpty {
      let view = RequestView(part: part)
      for b in bodyPatterns {
        total += 1
        if !b.matchBody(view) { failed += 1 }
      }
    }
    guard failed > 0 else { return 0 }
    return max(MatchResult.minimumMiss, Double(failed) / Double(max(total, 1)))
  }

  /// WireMock JSON form.
  public var json: JSONValue {
    var pairs: [(String, JSONValue)] = [("matchingType", .string(matchingType.rawValue))]
    if let name { pairs.append(("name", .string(name))) }
    if !headers.isEmpty {
      pairs.append(("headers", .object(JSONObject(pairs: headers.map { ($0.name, $0.pattern.json) }))))
    }
    if !bodyPatterns.isEmpty { pairs.append(("bodyPatterns", .array(bodyPatterns.map(\.json)))) }
    return .object(JSONObject(pairs: pairs))
  }

  /// Compact JSON form.
  public var description: String { json.serialized() }
}
