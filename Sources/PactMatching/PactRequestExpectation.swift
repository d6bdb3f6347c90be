import Foundation
import MockJSON

/// A body as Pact models it: absent, `null`, empty, or bytes with the media type they were declared or
/// detected as.
package enum PactBody: Sendable, Hashable {
  case missing
  case null
  case empty
  case present([UInt8], contentType: PactContentType?)

  package var bytes: [UInt8]? {
    if case .present(let b, _) = self { return b }
    return nil
  }

  /// Reads an interaction part's `body` as pact_models does for specification `version` (1–4): V4's
  /// `{"content", "contentType", "encoded"}`, base64 strings of V1–V3 binary bodies, JSON values.
  /// - Throws: ``PactRuleError`` for an encoding that cannot be read (base64 that does not decode, an
  ///   unknown `encoded` scheme).
  package init(part: JSONObject, headers: [(String, [String])], version: Int, jsonPath: String)
    throws(PactRuleError)
  {
    let headerType = headers.first { $0.0.lowercased() == "content-type" }?.1.first.flatMap(
      PactContentType.init)
    guard let value = part["body"] else {
      self = .missing
      return
    }
    if version >= 4, case .object(let o) = value, o["content"] != nil {
      let content = o["content"] ?? .null
      if content == .null {
        self = .null
        return
      }
      let declared = o["contentType"]?.stringValue.flatMap(PactContentType.init) ?? headerType
      var bytes: [UInt8]
      switch o["encoded"] {
      case nil, .bool(false)?, .null?:
        if let declared, declared.isJSON {
          if case .string(let s) = content {
            bytes = s.isEmpty ? [] : Array(content.serialized().utf8)
          } else {
            bytes = Array(content.serialized().utf8)
          }
        } else {
          bytes = Array(PactRuleChecks.text(content).utf8)
        }
      case .string(let scheme)? where scheme.lowercased() == "base64":
        guard
          let decoded = Data(base64Encoded: PactRuleChecks.text(content), options: .ignoreUnknownCharacters)
        else {
          throw PactRuleError(
            path: jsonPath + ".body.content", message: "expected base64 text, found text that does not decode"
          )
        }
        bytes = [UInt8](decoded)
      case .string("json")?, .string("JSON")?, .bool(true)?:
        bytes = Array(PactRuleChecks.text(content).utf8)
      case let other?:
        throw PactRuleError(
          path: jsonPath + ".body.encoded",
          message: "expected false, \"base64\" or \"json\", found \(other.serialized())")
      }
      if bytes.isEmpty {
        self = .empty
      } else {
        self = .present(bytes, contentType: declared ?? PactContentType.detect(bytes: bytes))
      }
      return
    }
    switch value {
    case .null:
      self = .null
    case .string(let s):
      if s.isEmpty {
        self = .empty
        return
      }
      let type = headerType ?? PactContentType.detect(text: s)
      if type.isJSON {
        let parses = (try? JSONValue.parse(s)) != nil
        self = .present(Array((parses ? s : JSONValue.string(s).serialized()).utf8), contentType: type)
      } else if type.isText {
        self = .present(Array(s.utf8), contentType: type)
      } else if let decoded = Data(base64Encoded: s) {
        self = .present([UInt8](decoded), contentType: headerType)
      } else {
        self = .present(Array(s.utf8), contentType: headerType)
      }
    default:
      self = .present(Array(value.serialized().utf8), contentType: nil)
    }
  }
}

/// The expected request of one HTTP interaction, with its matching rules: what Pact's mock server compares
/// a received request with.
package struct PactRequestExpectation: Sendable, Hashable {
  package var method: String
  package var path: String
  /// nil when the interaction declares no query.
  package var query: [(String, [String])]?
  package var headers: [(String, [String])]
  package var body: PactBody
  package var rules: PactMatchingRules

  package static func == (a: PactRequestExpectation, b: PactRequestExpectation) -> Bool {
    a.method == b.method && a.path == b.path && a.body == b.body && a.rules == b.rules
      && a.headers.map(\.0) == b.headers.map(\.0) && a.headers.map(\.1) == b.headers.map(\.1)
      && a.query?.map(\.0) == b.query?.map(\.0) && a.query?.map(\.1) == b.query?.map(\.1)
  }

  package func hash(into hasher: inout Hasher) {
    hasher.combine(method)
    hasher.combine(path)
  }

  /// Reads an interaction's `request` for specification `version` (1–4).
  /// - Throws: ``PactRuleError`` naming the JSON path of anything this matcher cannot honour.
  package init(request: JSONObject, version: Int, jsonPath: String) throws(PactRuleError) {
    guard let m = request["method"]?.stringValue, !m.isEmpty else {
      throw PactRuleError(
        path: jsonPath + ".method",
        message: "expected a method, found \(request["method"]?.kindDescription ?? "nothing")")
    }
    method = m.uppercased()
    path = request["path"]?.stringValue ?? "/"
    switch request["query"] {
    case nil, .null?:
      query = nil
    case .string(let s)?:
      query = PactQuery.parse(s)
    case .object(let o)?:
      var out: [(String, [String])] = []
      for member in o {
        switch member.value {
        case .array(let values):
          out.append((member.key, values.map { $0 == .null ? "" : PactRuleChecks.text($0) }))
        case .null: out.append((member.key, [""]))
        default: out.append((member.key, [PactRuleChecks.text(member.value)]))
        }
      }
      query = out
    case let other?:
      throw PactRuleError(
        path: jsonPath + ".query",
        message: "expected a query string or object, found \(other.kindDescription)")
    }
    let headers = PactHeaderComparison.fields(request["headers"])
    self.headers = headers
    body = try PactBody(part: request, headers: headers, version: version, jsonPath: jsonPath)
    rules = try PactMatchingRules(json: request["matchingRules"], jsonPath: jsonPath + ".matchingRules")
  }

  /// Every difference between `received` and this expectation (empty: the request matches), compared as
  /// Pact's mock server does.
  package func mismatches(_ received: PactReceivedRequest) -> [PactMismatch] {
    var out: [PactMismatch] = []
    if method.lowercased() != received.method.lowercased() {
      out.append(
        PactMismatch(
          part: "method", location: "", message: "Expected '\(method)' but was '\(received.method)'"))
    }
    let pathContext = PactMatchingContext(rules: rules.path, allowUnexpectedKeys: false)
    if pathContext.isDefined([]) {
      out += PactRuleChecks.apply(rules.path.best([]), path: []) {
        PactRuleChecks.string($0, path, received.path, cascaded: $1)
      }.map { PactMismatch(part: "path", location: "", message: $0) }
    } else if path != received.path {
      out.append(
        PactMismatch(
          part: "path", location: "", message: "Expected '\(received.path)' to be equal to '\(path)'"))
    }
    let queryContext = PactMatchingContext(rules: rules.query, allowUnexpectedKeys: false)
    switch (query, received.query) {
    case (let e?, let a?):
      out += PactBodyComparison.compareParameters(e, a, queryContext, part: "query", noun: "query parameter")
    case (nil, let a?):
      out += a.map {
        PactMismatch(part: "query", location: $0.0, message: "Unexpected query parameter '\($0.0)' received")
      }
    case (let e?, nil):
      out += e.map {
        PactMismatch(
          part: "query", location: $0.0, message: "Expected query parameter '\($0.0)' but was missing")
      }
    case (nil, nil): break
    }
    let headerContext = PactMatchingContext(rules: rules.header, allowUnexpectedKeys: false)
    out += PactHeaderComparison.compare(headers, received.headers, headerContext)
    out += PactRequestExpectation.compareBody(
      expected: body, expectedHeaders: headers, actual: received.body, actualHeaders: received.headers,
      rules: rules, allowUnexpectedKeys: false)
    return out
  }

  private static func contentType(of body: PactBody, headers: [(String, [String])]) -> PactContentType {
    if case .present(_, let declared?) = body { return declared }
    if let h = headers.first(where: { $0.0.lowercased() == "content-type" })?.1.joined(separator: ", "),
      let parsed = PactContentType(h)
    {
      return parsed
    }
    if case .present(let bytes, _) = body {
      return PactContentType.detect(text: String(validating: bytes, as: UTF8.self) ?? "")
    }
    return .unknown
  }

  /// pact_matching's `match_body`: the media types must agree (or a `Content-Type` rule accept the actual
  /// one), then the bodies are compared by the expected type. Requests allow no unexpected keys,
  /// responses do.
  package static func compareBody(
    expected body: PactBody, expectedHeaders headers: [(String, [String])], actual: PactBody,
    actualHeaders: [(String, [String])], rules: PactMatchingRules, allowUnexpectedKeys: Bool
  ) -> [PactMismatch] {
    let headerContext = PactMatchingContext(rules: rules.header, allowUnexpectedKeys: allowUnexpectedKeys)
    let expectedType = contentType(of: body, headers: headers)
    let actualType = contentType(of: actual, headers: actualHeaders)
    let typeRule = !rules.header.best(["$", "content-type"]).isEmpty
    let comparable =
      expectedType.isUnknown || actualType.isUnknown || expectedType.isEquivalent(to: actualType)
      || expectedType.isEquivalent(to: actualType.baseType)
      || (typeRule
        && PactHeaderComparison.value(
          "Content-Type", 0, expectedType.description, actualType.description, headerContext, single: true
        ).isEmpty)
    guard comparable else {
      guard case .present = body else { return [] }
      return [
        PactMismatch(
          part: "body", location: "$",
          message: "Expected a body of '\(expectedType)' but the actual content type was '\(actualType)'")
      ]
    }
    let context = PactMatchingContext(rules: rules.body, allowUnexpectedKeys: allowUnexpectedKeys)
    switch (body, actual) {
    case (.missing, _): return []
    case (.null, .present(let b, _)), (.empty, .present(let b, _)):
      return [
        PactMismatch(
          part: "body", location: "$", message: "Expected empty body but received \(b.count) bytes")
      ]
    case (.null, _), (.empty, _): return []
    case (.present, .missing), (.present, .null):
      return [PactMismatch(part: "body", location: "$", message: "Expected body but was missing")]
    case (.present, .empty):
      return [PactMismatch(part: "body", location: "$", message: "Expected body but was empty")]
    case (.present(let e, _), .present(let a, _)):
      return PactRequestExpectation.compareBodies(
        e, a, expectedType: expectedType, expectedHeader: headerText(headers),
        actualHeader: headerText(actualHeaders),
        context)
    }
  }

  private static func headerText(_ headers: [(String, [String])]) -> String? {
    headers.first { $0.0.lowercased() == "content-type" }?.1.joined(separator: ", ")
  }

  /// Two present bodies, compared by the expected media type (pact_matching's `compare_bodies_core`).
  package static func compareBodies(
    _ e: [UInt8], _ a: [UInt8], expectedType: PactContentType, expectedHeader: String?, actualHeader: String?,
    _ context: PactMatchingContext
  ) -> [PactMismatch] {
    if expectedType.isJSON {
      let ev: JSONValue
      let av: JSONValue
      do { ev = try JSONValue.parse(bytes: e) } catch {
        return [
          PactMismatch(part: "body", location: "$", message: "Failed to parse the expected body: '\(error)'")
        ]
      }
      do { av = try JSONValue.parse(bytes: a) } catch {
        return [
          PactMismatch(part: "body", location: "$", message: "Failed to parse the actual body: '\(error)'")
        ]
      }
      return PactBodyComparison.compareJSON(["$"], ev, av, context)
    }
    if expectedType.isXML { return PactBodyComparison.compareXML(e, a, context) }
    if expectedType.main == "multipart" {
      return PactBodyComparison.compareMultipart(
        e, expectedType: expectedHeader ?? expectedType.description, a, actualType: actualHeader, context)
    }
    if expectedType.baseType
      == PactContentType(main: "application", sub: "x-www-form-urlencoded", suffix: nil, parameters: [:])
    {
      guard let ef = PactBodyComparison.formFields(e) else {
        return [PactMismatch(part: "body", location: "$", message: "Could not parse expected body")]
      }
      guard let af = PactBodyComparison.formFields(a) else {
        return [PactMismatch(part: "body", location: "$", message: "Could not parse actual body")]
      }
      return PactBodyComparison.compareParameters(ef, af, context, part: "body", noun: "form post parameter")
    }
    let root = ["$"]
    let hasContentTypeRule =
      context.isDefined(root)
      && context.best(root).rules.contains {
        if case .contentType = $0 { return true }
        return false
      }
    if expectedType.isBinary || expectedType.baseType.description == "application/octet-stream"
      || hasContentTypeRule
    {
      if context.isDefined(root) {
        return PactRuleChecks.apply(context.best(root), path: root) {
          PactRuleChecks.bytes($0, e, a, cascaded: $1)
        }.map { PactMismatch(part: "body", location: "$", message: $0) }
      }
      return e == a
        ? []
        : [
          PactMismatch(
            part: "body", location: "$",
            message: "Actual body [\(a.count) bytes] is not equal to the expected body [\(e.count) bytes]")
        ]
    }
    if context.isDefined(root) {
      guard let et = String(validating: e, as: UTF8.self) else {
        return [
          PactMismatch(part: "body", location: "$", message: "Could not parse expected value as UTF-8 text")
        ]
      }
      guard let at = String(validating: a, as: UTF8.self) else {
        return [
          PactMismatch(part: "body", location: "$", message: "Could not parse actual value as UTF-8 text")
        ]
      }
      return PactRuleChecks.apply(context.best(root), path: root) {
        PactRuleChecks.string($0, et, at, cascaded: $1)
      }
      .map { PactMismatch(part: "body", location: "$", message: $0) }
    }
    return e == a
      ? []
      : [
        PactMismatch(
          part: "body", location: "$",
          message:
            "Expected body '\(String(decoding: e, as: UTF8.self))' to match '\(String(decoding: a, as: UTF8.self))' using equality but did not match"
        )
      ]
  }
}

/// A received request as the Pact comparison sees it.
package struct PactReceivedRequest: Sendable {
  package var method: String
  /// The path, percent-decoded.
  package var path: String
  /// The query's parameters decoded (`+` as space), nil without a query.
  package var query: [(String, [String])]?
  /// Header values by name as received, split at commas for the fields RFC 9110 defines as lists.
  package var headers: [(String, [String])]
  package var body: PactBody

  package init(
    method: String, path: String, query: [(String, [String])]?, headers: [(String, [String])], body: PactBody
  ) {
    self.method = method
    self.path = path
    self.query = query
    self.headers = headers
    self.body = body
  }

  /// A request from its raw target (`/a%20b?x=1`), header fields in order and body.
  package init(method: String, target: String, fields: [(String, String)], body: [UInt8]) {
    self.method = method
    var pathPart = Substring(target)
    var rawQuery: Substring?
    if let hash = pathPart.firstIndex(of: "#") { pathPart = pathPart[..<hash] }
    if let mark = pathPart.firstIndex(of: "?") {
      rawQuery = pathPart[pathPart.index(after: mark)...]
      pathPart = pathPart[..<mark]
    }
    path = String(pathPart).removingPercentEncoding ?? String(pathPart)
    query = rawQuery.flatMap { $0.isEmpty ? nil : PactQuery.parse(String($0)) }
    var grouped: [(String, [String])] = []
    for (name, value) in fields {
      let values = PactHeaderComparison.parse(name: name, value: value)
      if let k = grouped.firstIndex(where: { $0.0.lowercased() == name.lowercased() }) {
        grouped[k].1 += values
      } else {
        grouped.append((name.lowercased(), values))
      }
    }
    headers = grouped
    let typeField = grouped.first(where: { $0.0 == "content-type" })
    let type = typeField.flatMap { PactContentType($0.1.joined(separator: ", ")) }
    self.body = body.isEmpty ? .empty : .present(body, contentType: type)
  }
}

/// Query strings as pact_models reads them.
package enum PactQuery {
  /// `a=1&b=2&a=3` → `[("a", ["1", "3"]), ("b", ["2"])]`, names and values percent-decoded with `+` as a
  /// space; a name without `=` has the value `""`.
  package static func parse(_ query: String) -> [(String, [String])] {
    var out: [(String, [String])] = []
    for pair in query.split(separator: "&", omittingEmptySubsequences: true) {
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      let name = decode(parts[0])
      let value = parts.count > 1 ? decode(parts[1]) : ""
      if let k = out.firstIndex(where: { $0.0 == name }) {
        out[k].1.append(value)
      } else {
        out.append((name, [value]))
      }
    }
    return out
  }

  static func decode(_ s: Substring) -> String {
    var bytes: [UInt8] = []
    var u = Array(s.utf8)[...]
    while let c = u.popFirst() {
      if c == UInt8(ascii: "+") {
        bytes.append(UInt8(ascii: " "))
      } else if c == UInt8(ascii: "%"), u.count >= 2, let h = hex(u[u.startIndex]),
        let l = hex(u[u.startIndex + 1])
      {
        bytes.append(h << 4 | l)
        u = u.dropFirst(2)
      } else {
        bytes.append(c)
      }
    }
    return String(validating: bytes, as: UTF8.self) ?? String(s)
  }

  private static func hex(_ c: UInt8) -> UInt8? {
    switch c {
    case 48...57: return c - 48
    case 65...70: return c - 55
    case 97...102: return c - 87
    default: return nil
    }
  }
}

/// The expected response of one HTTP interaction with its matching rules: what Pact's verifier compares a
/// provider's answer with (extra headers and extra body fields allowed).
package struct PactResponseExpectation: Sendable {
  package var status: Int
  package var headers: [(String, [String])]
  package var body: PactBody
  package var rules: PactMatchingRules

  /// Reads an interaction's `response` for specification `version` (1–4).
  /// - Throws: ``PactRuleError`` naming the JSON path of anything this matcher cannot honour.
  package init(response: JSONObject, version: Int, jsonPath: String) throws(PactRuleError) {
    status = response["status"]?.numberValue?.intValue ?? 200
    let headers = PactHeaderComparison.fields(response["headers"])
    self.headers = headers
    body = try PactBody(part: response, headers: headers, version: version, jsonPath: jsonPath)
    rules = try PactMatchingRules(json: response["matchingRules"], jsonPath: jsonPath + ".matchingRules")
  }

  /// Every difference between the provider's answer and this expectation, as Pact's verifier finds them.
  package func mismatches(status actualStatus: Int, fields: [(String, String)], body actualBody: [UInt8])
    -> [PactMismatch]
  {
    var out: [PactMismatch] = []
    if let list = rules.others["status"].flatMap({ try? PactMatchingRules.statusRules($0) }), !list.isEmpty {
      out += PactRuleChecks.apply(list, path: []) {
        PactRuleChecks.string($0, String(status), String(actualStatus), cascaded: $1)
      }.map { PactMismatch(part: "status", location: "", message: $0) }
    } else if status != actualStatus {
      out.append(
        PactMismatch(part: "status", location: "", message: "expected \(status) but was \(actualStatus)"))
    }
    let received = PactReceivedRequest(method: "GET", target: "/", fields: fields, body: actualBody)
    let headerContext = PactMatchingContext(rules: rules.header, allowUnexpectedKeys: true)
    out += PactHeaderComparison.compare(headers, received.headers, headerContext)
    out += PactRequestExpectation.compareBody(
      expected: body, expectedHeaders: headers, actual: received.body, actualHeaders: received.headers,
      rules: rules, allowUnexpectedKeys: true)
    return out
  }
}

extension PactMatchingRules {
  /// The rules of a response's `status` category (`{"matchers": [...]}`).
  static func statusRules(_ value: JSONValue) throws(PactRuleError) -> PactRuleList {
    var list = PactRuleList(rules: [], isOr: value["combine"]?.stringValue?.uppercased() == "OR")
    for (k, rule) in (value["matchers"]?.arrayValue ?? []).enumerated() {
      list.rules.append(try PactMatchingRule.parse(rule, jsonPath: "$.status.matchers[\(k)]"))
    }
    return list
  }
}
