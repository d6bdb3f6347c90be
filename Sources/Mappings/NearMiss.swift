import MockJSON

/// A stub that almost matched a request, with what did not match.
public struct NearMiss: Sendable, Hashable {
  /// One part of the request that failed the stub's pattern.
  public typealias Mismatch = MatchResult.Part

  /// The stub's id.
  public var stubID: String
  /// The stub's name.
  public var stubName: String?
  /// The stub's file (relative to the fixtures directory).
  public var file: String?
  /// JSON path of the stub within its file.
  public var location: String
  /// The weighted mean distance of the stub's parts from the request, 0...1 (``MatchResult/distance``).
  public var distance: Double
  /// 1 − ``distance``: how much of the stub the request satisfied, weighted.
  public var score: Double { 1 - distance }
  /// The failing parts.
  public var mismatches: [Mismatch]

  /// Values as a list for messages: `(absent)`, `"a"`, or `["a", "b"]`.
  package static func show(_ values: [String]) -> String {
    if values.isEmpty { return "(absent)" }
    if values.count == 1 { return values[0] }
    return "[" + values.map { JSONValue.quoted($0) }.joined(separator: ", ") + "]"
  }

  /// The first 200 characters of a body, or `(empty)`.
  package static func excerpt(_ s: String) -> String {
    if s.isEmpty { return "(empty)" }
    return s.count <= 200 ? s : String(s.prefix(200)) + "…"
  }
}

/// The report for an unmatched request: the 404 body and the server-log text.
public struct NearMissReport: Sendable, Hashable {
  /// Request method.
  public var method: String
  /// Request-target as received.
  public var url: String
  /// Nearest stubs, best first.
  public var nearMisses: [NearMiss]

  /// Creates a report.
  public init(method: String, url: String, nearMisses: [NearMiss]) {
    self.method = method
    self.url = url
    self.nearMisses = nearMisses
  }

  /// The JSON body for the 404 response:
  /// `{"status":404,"message":"No stub mapping matched GET /x","request":{"method","url"},
  ///   "nearMisses":[{"stub":{"id","name","file","location"},"score":0.75,
  ///   "mismatches":[{"part","expected","actual"}]}]}`.
  public var json: JSONValue {
    let misses: [JSONValue] = nearMisses.map { m in
      var stub: [(String, JSONValue)] = [("id", .string(m.stubID))]
      if let n = m.stubName { stub.append(("name", .string(n))) }
      if let f = m.file, !f.isEmpty { stub.append(("file", .string(f))) }
      stub.append(("location", .string(m.location)))
      let score = JSONNumber(text: String(Double(Int(m.score * 100)) / 100)) ?? JSONNumber(0)
      let distance = JSONNumber(text: String((m.distance * 1000).rounded() / 1000)) ?? JSONNumber(0)
      return .object(
        JSONObject(pairs: [
          ("stub", .object(JSONObject(pairs: stub))),
          ("score", .number(score)),
          ("distance", .number(distance)),
          (
            "mismatches",
            .array(
              m.mismatches.map {
                .object(
                  JSONObject(pairs: [
                    ("part", .string($0.label)), ("expected", .string($0.expected)),
                    ("actual", .string($0.actual)),
                  ]))
              })
          ),
        ]))
    }
    return .object(
      JSONObject(pairs: [
        ("status", .number(JSONNumber(404))),
        ("message", .string("No stub mapping matched \(method) \(url)")),
        ("request", .object(JSONObject(pairs: [("method", .string(method)), ("url", .string(url))]))),
        ("nearMisses", .array(misses)),
      ]))
  }

  /// The 404 body bytes (pretty JSON), to send with `Content-Type: application/json`.
  public func jsonBody() -> [UInt8] { json.serializedBytes(pretty: true) }

  /// The report as log text, one line per mismatch:
  /// ```
  /// No stub mapping matched GET /users?id=1
  ///   near miss 1: get-user (mappings/users.json $.mappings[0]), score 0.80
  ///     header Authorization: expected {"equalTo":"Bearer t"}, got (absent)
  /// ```
  public func text() -> String {
    var lines = ["No stub mapping matched \(method) \(url)"]
    if nearMisses.isEmpty { lines.append("  (no stubs loaded)") }
    for (k, m) in nearMisses.enumerated() {
      let label = m.stubName ?? m.stubID
      let place = m.file.flatMap { $0.isEmpty ? nil : " (\($0) \(m.location))" } ?? ""
      let score = String(Double(Int(m.score * 100)) / 100)
      lines.append("  near miss \(k + 1): \(label)\(place), score \(score)")
      for x in m.mismatches {
        lines.append("    \(x.label): expected \(x.expected), got \(x.actual)")
      }
    }
    return lines.joined(separator: "\n")
  }
}
