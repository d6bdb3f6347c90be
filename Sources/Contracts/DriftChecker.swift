import HTTPCore
import JSONSchema
import Mappings
import MockJSON

/// One difference between a fixture and the provider's real answer.
package struct DriftFinding: Sendable, Hashable, CustomStringConvertible {
  /// What differs.
  package enum Kind: String, Sendable, Hashable {
    /// The status class (2xx, 4xx…) differs.
    case status
    /// The content type differs.
    case contentType
    /// A key of the fixture's JSON is missing from the real answer.
    case missingKey
    /// The real answer has a key the fixture lacks.
    case newKey
    /// A value's JSON type differs.
    case type
    /// A value differs (only where the stub asks for values to be compared).
    case value
    /// The real body is not JSON while the fixture's is.
    case notJSON
    /// The provider could not be reached.
    case unreachable
  }

  /// What differs.
  package var kind: Kind
  /// `status`, `Content-Type`, or the JSON path in the body (`$.data.email`).
  package var path: String
  /// `expected …, found …` or a description.
  package var message: String

  /// Creates a finding.
  package init(kind: Kind, path: String, message: String) {
    self.kind = kind
    self.path = path
    self.message = message
  }

  /// `$.data.email: expected a string, found a number`.
  package var description: String { "\(path): \(message)" }
}

/// Compares a stub's response with the provider's answer to the same request: the status class, the
/// content type, and the JSON shape (keys present, value types, array element shape). Values are ignored
/// unless the stub's `metadata.x-verify.values` is true.
package enum DriftChecker {
  /// The findings for one stub (empty: no drift). As Pact's verifier judges a provider: a field the
  /// provider adds is no drift unless `strict`.
  package static func compare(
    stub: StubMapping, status: Int, headers: HTTPHeaders, body: [UInt8], strict: Bool = false
  ) -> [DriftFinding] {
    let all = findings(stub: stub, status: status, headers: headers, body: body)
    return strict ? all : all.filter { $0.kind != .newKey }
  }

  static func findings(stub: StubMapping, status: Int, headers: HTTPHeaders, body: [UInt8])
    -> [DriftFinding]
  {
    var out: [DriftFinding] = []
    let expected = stub.response
    if expected.status / 100 != status / 100 {
      let hint = status == 404 && expected.status / 100 == 2 ? " (the endpoint may be gone)" : ""
      out.append(
        DriftFinding(
          kind: .status, path: "status",
          message:
            "expected \(expected.status / 100)xx like the fixture's \(expected.status), found \(status)\(hint)"
        ))
      return out
    }
    let fixtureType = expected.headers.first("Content-Type").map(MediaTypeName.init)
    let realType = headers.first("Content-Type").map(MediaTypeName.init)
    if let fixtureType, !expected.body.isEmpty, fixtureType.essence != realType?.essence {
      out.append(
        DriftFinding(
          kind: .contentType, path: "Content-Type",
          message: "expected \(fixtureType.essence), found \(realType?.essence ?? "none")"))
    }
    guard !expected.body.isEmpty, let fixtureJSON = try? JSONValue.parse(bytes: expected.body) else {
      return out
    }
    guard let realJSON = try? JSONValue.parse(bytes: body) else {
      out.append(
        DriftFinding(
          kind: .notJSON, path: "$",
          message:
            "expected a JSON body, found \(body.isEmpty ? "an empty body" : "\(body.count) bytes that are not JSON")"
        ))
      return out
    }
    let values = stub.metadata?["x-verify"]?["values"]?.boolValue == true
    shape(fixtureJSON, realJSON, "$", values: values, &out)
    return out
  }

  static func typeName(_ v: JSONValue) -> String {
    switch v {
    case .null: return "null"
    case .bool: return "a boolean"
    case .number: return "a number"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
  }

  static func shape(
    _ fixture: JSONValue, _ real: JSONValue, _ path: String, values: Bool, _ out: inout [DriftFinding]
  ) {
    switch (fixture, real) {
    case (.null, _), (_, .null): return
    case (.object(let f), .object(let r)):
      let realKeys = Set(r.keys)
      let fixtureKeys = Set(f.keys)
      for m in f.members where realKeys.contains(m.key) == false {
        out.append(
          DriftFinding(
            kind: .missingKey, path: InstancePath.child(path, m.key),
            message: "in the fixture, missing from the provider's answer"))
      }
      for m in r.members where !fixtureKeys.contains(m.key) {
        out.append(
          DriftFinding(
            kind: .newKey, path: InstancePath.child(path, m.key),
            message: "in the provider's answer (\(typeName(m.value))), missing from the fixture"))
      }
      for m in f.members {
        if let rv = r[m.key] { shape(m.value, rv, InstancePath.child(path, m.key), values: values, &out) }
      }
    case (.array(let f), .array(let r)):
      guard let template = f.first else { return }
      for (k, item) in r.enumerated() {
        let before = out.count
        shape(f.count > k ? f[k] : template, item, InstancePath.index(path, k), values: values, &out)
        if out.count > before { break }  // one element's differences stand for the rest
      }
    default:
      if typeName(fixture) != typeName(real) {
        out.append(
          DriftFinding(
            kind: .type, path: path,
            message:
              "expected \(typeName(fixture)) like the fixture's \(SchemaViolation.show(fixture)), found \(typeName(real)) \(SchemaViolation.show(real))"
          ))
      } else if values, fixture != real {
        out.append(
          DriftFinding(
            kind: .value, path: path,
            message: "expected \(SchemaViolation.show(fixture)), found \(SchemaViolation.show(real))"))
      }
    }
  }
}

/// The outcome for one stub of `mockserver verify`.
package struct DriftResult: Sendable {
  /// The stub's file (relative to the fixtures folder), or `(admin)`.
  package var file: String
  /// `name`, or `METHOD URL`.
  package var name: String
  /// The request sent.
  package var request: ExampleRequest?
  /// Why it was not checked (no concrete request), or nil.
  package var skipped: String?
  /// The differences (empty: in step with the provider).
  package var findings: [DriftFinding]

  /// Creates a result.
  package init(
    file: String, name: String, request: ExampleRequest?, skipped: String?, findings: [DriftFinding]
  ) {
    self.file = file
    self.name = name
    self.request = request
    self.skipped = skipped
    self.findings = findings
  }

  /// True when checked and differing.
  package var drifted: Bool { skipped == nil && !findings.isEmpty }
}

/// Renders drift results.
package enum DriftReport {
  /// Readable text grouped by fixture file, then a summary line.
  package static func text(_ results: [DriftResult], upstream: String) -> String {
    var lines: [String] = []
    var order: [String] = []
    var byFile: [String: [DriftResult]] = [:]
    for r in results {
      if byFile[r.file] == nil { order.append(r.file) }
      byFile[r.file, default: []].append(r)
    }
    for file in order {
      lines.append(file)
      for r in byFile[file] ?? [] {
        let what = r.request.map { "\($0.method) \($0.url)" } ?? ""
        if let skipped = r.skipped {
          lines.append("  - \(r.name): skipped, \(skipped)")
        } else if r.findings.isEmpty {
          lines.append("  ok \(what) (\(r.name))")
        } else {
          lines.append("  DRIFT \(what) (\(r.name))")
          for f in r.findings { lines.append("      \(f.description)") }
        }
      }
    }
    let drifted = results.filter(\.drifted).count
    let skipped = results.filter { $0.skipped != nil }.count
    let checked = results.count - skipped
    lines.append(
      "\(checked) stub\(checked == 1 ? "" : "s") checked against \(upstream): \(drifted) drifted, \(checked - drifted) in step, \(skipped) skipped"
    )
    return lines.joined(separator: "\n")
  }

  /// JUnit XML: one test suite per fixture file, one test case per stub (failure = drift).
  package static func junit(_ results: [DriftResult]) -> String {
    var order: [String] = []
    var byFile: [String: [DriftResult]] = [:]
    for r in results {
      if byFile[r.file] == nil { order.append(r.file) }
      byFile[r.file, default: []].append(r)
    }
    var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    xml +=
      "<testsuites name=\"mockserver verify\" tests=\"\(results.count)\" failures=\"\(results.filter(\.drifted).count)\">\n"
    for file in order {
      let list = byFile[file] ?? []
      xml +=
        "  <testsuite name=\"\(XMLRenderer.escape(file))\" tests=\"\(list.count)\" failures=\"\(list.filter(\.drifted).count)\" skipped=\"\(list.filter { $0.skipped != nil }.count)\">\n"
      for r in list {
        let name = r.request.map { "\($0.method) \($0.url) (\(r.name))" } ?? r.name
        xml += "    <testcase classname=\"\(XMLRenderer.escape(file))\" name=\"\(XMLRenderer.escape(name))\""
        if let skipped = r.skipped {
          xml += ">\n      <skipped message=\"\(XMLRenderer.escape(skipped))\"/>\n    </testcase>\n"
        } else if r.findings.isEmpty {
          xml += "/>\n"
        } else {
          let message = r.findings.map(\.description).joined(separator: "\n")
          xml +=
            ">\n      <failure message=\"\(XMLRenderer.escape(r.findings[0].description))\">\(XMLRenderer.escape(message))</failure>\n    </testcase>\n"
        }
      }
      xml += "  </testsuite>\n"
    }
    xml += "</testsuites>\n"
    return xml
  }

}
