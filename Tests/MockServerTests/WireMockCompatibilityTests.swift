import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import Mappings
@testable import MockJSON
@testable import MockServer

@Suite("Jayway JSONPath (WireMock's dialect)")
struct JaywayJSONPathTests {
  static let doc = #"""
    {"store": {"book": [
      {"category": "reference", "author": "Nigel Rees", "title": "Sayings", "price": 8.95},
      {"category": "fiction", "author": "Evelyn Waugh", "title": "Sword", "price": 12.99, "tags": ["war"]},
      {"category": "fiction", "author": "Herman Melville", "title": "Moby Dick", "isbn": "0-553", "price": 8.99},
      {"category": "fiction", "author": "J. R. R. Tolkien", "title": "The Lord", "isbn": "0-395", "price": 22.99}
    ], "bicycle": {"color": "red", "price": 19.95}}, "expensive": 10,
    "users": [{"name": "a", "roles": ["ADMIN"]}, {"name": "b", "roles": ["USER", "DEV"]}, {"name": "c", "roles": []}],
    "first name": "Ann"}
    """#

  @Test(
    "expressions select what Jayway selects",
    arguments: [
      ("$.store.book[0:2].title", #"["Sayings","Sword"]"#),
      ("$.store.book[:2].title", #"["Sayings","Sword"]"#),
      ("$.store.book[-1:].title", #"["The Lord"]"#),
      ("$.store.book[2:].title", #"["Moby Dick","The Lord"]"#),
      ("$.store.book[0,2].title", #"["Sayings","Moby Dick"]"#),
      ("$.store.bicycle['color','price']", #"[{"color":"red","price":19.95}]"#),
      ("$['first name']", #"["Ann"]"#),
      (#"$["first name"]"#, #"["Ann"]"#),
      ("$..book[2].title", #"["Moby Dick"]"#),
      ("$..book[?(@.isbn)].title", #"["Moby Dick","The Lord"]"#),
      ("$.store.book[?(!@.isbn)].title", #"["Sayings","Sword"]"#),
      ("$.store.book[?(@.price < 10 && @.category == 'fiction')].title", #"["Moby Dick"]"#),
      ("$.store.book[?(@.price > 20 || @.category == 'reference')].title", #"["Sayings","The Lord"]"#),
      ("$.store.book[?((@.price > 20 || @.price < 9) && !(@.isbn))].title", #"["Sayings"]"#),
      ("$.store.book[?(@.price < $.expensive)].title", #"["Sayings","Moby Dick"]"#),
      ("$.store.book[?(@.author =~ /.*REES/i)].title", #"["Sayings"]"#),
      ("$.store.book[?(@.author =~ /.*REES/)].title", "[]"),
      ("$.store.book[?(@.category in ['reference','poetry'])].title", #"["Sayings"]"#),
      ("$.store.book[?(@.category nin ['fiction'])].title", #"["Sayings"]"#),
      ("$.users[?(@.roles subsetof ['ADMIN','USER'])].name", #"["a","c"]"#),
      ("$.users[?(@.roles anyof ['DEV','ROOT'])].name", #"["b"]"#),
      ("$.users[?(@.roles noneof ['ADMIN'])].name", #"["b","c"]"#),
      ("$.users[?(@.roles size 2)].name", #"["b"]"#),
      ("$.users[?(@.roles empty true)].name", #"["c"]"#),
      ("$.users[?(@.roles contains 'DEV')].name", #"["b"]"#),
      ("$.users[?(@.roles == ['ADMIN'])].name", #"["a"]"#),
      ("$.users[?(@.name size 1)].name", #"["a","b","c"]"#),
      ("$.store.book.length()", "[4]"),
      ("$.store.book[*].price.sum()", "[53.92]"),
      ("$.store.book[*].price.max()", "[22.99]"),
      ("$.store.book[*].price.min()", "[8.95]"),
      ("$.store.bicycle.keys()", #"[["color","price"]]"#),
      ("$.users.size()", "[3]"),
      ("$.users[?(@.roles.length() > 1)].name", #"["b"]"#),
    ])
  func select(expression: String, expected: String) throws {
    let doc = try JSONValue.parse(Self.doc)
    let got = try JSONPath(expression).evaluate(doc)
    #expect(JSONValue.array(got) == (try JSONValue.parse(expected)), "\(JSONValue.array(got).serialized())")
  }

  @Test("definite paths (names, indexes, functions) and indefinite ones")
  func definiteness() throws {
    #expect(try JSONPath("$.a.b[0]").isDefinite)
    #expect(try JSONPath("$.a.length()").isDefinite)
    #expect(try !JSONPath("$.a[0:1]").isDefinite)
    #expect(try !JSONPath("$.a[0,1]").isDefinite)
    #expect(try !JSONPath("$.a[?(@.x)]").isDefinite)
  }

  @Test(
    "malformed filters are errors, not crashes",
    arguments: [
      "$[?(@.a =~ 'x')]", "$[?(@.a =~ /[/)]", "$[?(@.a && )]", "$[?(@.a in ['x')]", "$[1:2:0]",
      "$.a.length(", "$[?(@.a == 1]",
    ])
  func rejected(expression: String) {
    #expect(throws: JSONPathError.self) { try JSONPath(expression) }
  }

  @Test("deeply nested filters are bounded")
  func nesting() {
    let deep = "$[?(" + String(repeating: "(", count: 200) + "@.a" + String(repeating: ")", count: 200) + ")]"
    #expect(throws: JSONPathError.self) { try JSONPath(deep) }
    let negations = "$[?(" + String(repeating: "!", count: 100_000) + "@.a)]"
    #expect(throws: JSONPathError.self) { try JSONPath(negations) }
  }
}

@Suite("equalToJson as JsonUnit compares")
struct EqualToJsonCompatibilityTests {
  func matches(_ expected: String, _ actual: String, order: Bool = false, extra: Bool = false) throws -> Bool
  {
    JSONComparison.equal(
      try JSONValue.parse(expected), try JSONValue.parse(actual), ignoreArrayOrder: order,
      ignoreExtraElements: extra)
  }

  @Test("ignoreExtraElements ignores extra array items after the expected ones")
  func extraArrayItems() throws {
    #expect(try matches(#"{"items":[{"id":1}]}"#, #"{"items":[{"id":1},{"id":2}]}"#, extra: true))
    #expect(try !matches(#"{"items":[{"id":2}]}"#, #"{"items":[{"id":1},{"id":2}]}"#, extra: true))
    #expect(
      try matches(#"{"items":[{"id":2}]}"#, #"{"items":[{"id":1},{"id":2}]}"#, order: true, extra: true))
    #expect(try !matches(#"{"items":[{"id":1}]}"#, #"{"items":[{"id":1},{"id":2}]}"#))
  }

  @Test("placeholders")
  func placeholders() throws {
    #expect(try matches(#"{"a":"${json-unit.any-string}"}"#, #"{"a":"x"}"#))
    #expect(try !matches(#"{"a":"${json-unit.any-string}"}"#, #"{"a":1}"#))
    #expect(try matches(#"{"a":"${json-unit.any-number}"}"#, #"{"a":1.5}"#))
    #expect(try matches(#"{"a":"${json-unit.any-boolean}"}"#, #"{"a":true}"#))
    #expect(try matches(#"{"a":"${json-unit.ignore}"}"#, #"{"a":[1]}"#))
    #expect(try !matches(#"{"a":"${json-unit.ignore}","b":1}"#, #"{"b":1}"#))
    #expect(try matches(#"{"a":"${json-unit.ignore-element}","b":1}"#, #"{"b":1}"#))
    #expect(try matches(#"{"a":"${json-unit.regex}[a-z]+"}"#, #"{"a":"abc"}"#))
    #expect(try !matches(#"{"a":"${json-unit.regex}[a-z]+"}"#, #"{"a":"abc1"}"#))
    #expect(try matches(##"{"a":"#{json-unit.any-number}"}"##, #"{"a":2}"#))
    #expect(try !matches(#"{"a":"${json-unit.matches:isUUID}"}"#, #"{"a":"x"}"#))
  }
}

@Suite("Lenient loading as WireMock's reader, and lint and admin agreeing")
struct LenientLoadingTests {
  func problems(_ stub: String) throws -> [FixtureProblem] {
    StubParser.parse(
      try JSONValue.parse(stub), file: "", context: StubParsingContext(makeID: { "id" })
    ).1
  }

  @Test(
    "loads with a warning",
    arguments: [
      (#"{"request":{"url":"/a"},"response":{"status":"400"}}"#, "$.response.status"),
      (
        #"{"request":{"url":"/a"},"response":{"fixedDelayMilliseconds":"2000"}}"#,
        "$.response.fixedDelayMilliseconds"
      ),
      (#"{"priority":"2","request":{"url":"/a"},"response":{}}"#, "$.priority"),
      (
        #"{"request":{"url":"/a","headers":{"A":{"contains":"x","caseInsensitive":true}}},"response":{}}"#,
        "$.request.headers.A.caseInsensitive"
      ),
      (
        #"{"request":{"url":"/a","headers":{"A":{"equalTo":"x","extra":1}}},"response":{}}"#,
        "$.request.headers.A.extra"
      ),
      (
        #"{"request":{"url":"/a","bodyPatterns":[{"equalToJson":{"a":"${json-unit.matches:x}"}}]},"response":{}}"#,
        "$.request.bodyPatterns[0].equalToJson.a"
      ),
      (
        #"{"request":{"url":"/a"},"response":{},"postServeActions":[{"name":"slack"}]}"#,
        "$.postServeActions[0]"
      ),
    ])
  func warns(stub: String, path: String) throws {
    let found = try problems(stub)
    let hasError = found.contains { $0.isError }
    #expect(!hasError, "\(found)")
    #expect(found.contains { !$0.isError && $0.path == path }, "\(found)")
  }

  @Test(
    "refused with a located error",
    arguments: [
      (
        #"{"request":{"url":"/a","customMatcher":{"name":"x"}},"response":{}}"#,
        "$.request.customMatcher.name"
      ),
      (#"{"request":{"url":"/a"},"response":{"status":"OK"}}"#, "$.response.status"),
      (#"{"request":{"url":"/a","scheme":"ftp"},"response":{}}"#, "$.request.scheme"),
      (#"{"request":{"url":"/a","port":70000},"response":{}}"#, "$.request.port"),
      (
        #"{"request":{"url":"/a","headers":{"D":{"before":"yesterday-ish"}}},"response":{}}"#,
        "$.request.headers.D.before"
      ),
      (
        #"{"request":{"url":"/a","headers":{"D":{"after":"now","truncateActual":"noon"}}},"response":{}}"#,
        "$.request.headers.D.truncateActual"
      ),
      (
        #"{"request":{"url":"/a","bodyPatterns":[{"matchesJsonSchema":5}]},"response":{}}"#,
        "$.request.bodyPatterns[0].matchesJsonSchema"
      ),
      (
        #"{"request":{"url":"/a","bodyPatterns":[{"matchesJsonPath":"$[?(@.a =~ 'x')]"}]},"response":{}}"#,
        "$.request.bodyPatterns[0].matchesJsonPath"
      ),
      (
        #"{"request":{"url":"/a","bodyPatterns":[{"equalToJson":{"a":"${json-unit.regex}["}}]},"response":{}}"#,
        "$.request.bodyPatterns[0].equalToJson.a"
      ),
    ])
  func refuses(stub: String, path: String) throws {
    let found = try problems(stub)
    #expect(found.contains { $0.isError && $0.path == path }, "\(found)")
  }

  @Test("comments, .JSON, and a folder without mappings/ (an error unless allowEmpty)")
  func files() throws {
    let f = try TempFixtures(files: [
      "mappings/a.JSON": """
      // exported from WireMock
      {
        /* the stub */
        "request": {"url": "/a"}, // trailing comment
        "response": {"status": 200}
      }
      """
    ])
    defer { f.remove() }
    let set = FixtureLoader.load(directory: f.root.path, allowEmpty: false)
    #expect(set.problems.isEmpty, "\(set.problems)")
    #expect(set.stubs.count == 1)

    let empty = NSTemporaryDirectory() + "no-mappings-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: empty + "/__files", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: empty) }
    #expect(FixtureLoader.load(directory: empty, allowEmpty: false).hasErrors)
    #expect(!FixtureLoader.load(directory: empty, allowEmpty: true).hasErrors)
    // Request bodies are never read with comments.
    #expect(throws: JSONParseError.self) { try JSONValue.parse("{} // x") }
  }

  @Test("lint summarises repeated warnings of one kind after the first three")
  func summary() {
    let problems = (0..<10).map { k in
      FixtureProblem(
        severity: .warning, file: "mappings/\(k).json", path: "$.response.headers.Content-Length",
        message: "Content-Length \"\(k)\" is a framing header; dropped")
    }
    let report = FixtureLoader.report(problems)
    #expect(report.components(separatedBy: "\n").count == 5, "\(report)")
    #expect(report.contains("… and 7 more warnings like: Content-Length \"…\" is a framing header; dropped"))
    #expect(report.hasSuffix("0 errors, 10 warnings"))
  }

  static let agreementStubs = [
    #"{"request":{"url":5},"response":{"status":200}}"#,
    #"{"request":{"url":"/a","customMatcher":{"name":"x"}},"response":{}}"#,
    #"{"request":{"url":"/a","headers":{"A":{"equalsTo":"x"}}},"response":{"status":"abc"}}"#,
    #"{"request":{"url":"/a","headers":{"A":{"contains":"x","caseInsensitive":true}}},"response":{"status":"201"},"serveEventListeners":[]}"#,
    #"{"request":{"url":"/a"},"response":{"transformers":["other"],"headers":{"Content-Length":"3"},"body":"abc"}}"#,
    #"{"request":{"urlPath":"/a","bodyPatterns":[{"matchesJsonPath":"$[?(@.a =~ /x/ &&)]"}]},"response":{}}"#,
  ]

  @Test(
    "the admin API reports exactly the problems lint reports for the same stub", arguments: agreementStubs)
  func adminAgreesWithLint(stub: String) async throws {
    let f = try TempFixtures(files: ["mappings/s.json": stub])
    defer { f.remove() }
    let lint = FixtureLoader.lint(directory: f.root.path)
    let lintErrors = lint.filter(\.isError).map { "\($0.path): \($0.message)" }
    let lintWarnings = lint.filter { !$0.isError }.map { "\($0.path): \($0.message)" }
    try await withMockService { _, port in
      let reply = try http(port, "POST", "/__admin/mappings", body: stub)
      if lintErrors.isEmpty {
        #expect(reply.status == 201)
      } else {
        #expect(reply.status == 422)
        let errors = reply.json?["errors"]?.arrayValue ?? []
        #expect(errors.compactMap { $0["detail"]?.stringValue } == lintErrors)
        #expect(errors.allSatisfy { $0["code"] == .number(JSONNumber(10)) })
        #expect(errors.allSatisfy { $0["title"] == .string("Error parsing JSON") })
      }
      let warnings = try rawWarnings(port, stub)
      if lintErrors.isEmpty { #expect(warnings == lintWarnings) }
    }
  }

  /// The `MockServer-Warning` fields of a create (the reply helper keeps one value per name).
  func rawWarnings(_ port: Int, _ stub: String) throws -> [String] {
    let client = try RawClient(port: port)
    client.send(
      "POST /__admin/mappings HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(stub.utf8.count)\r\n\r\n"
        + stub)
    let (raw, _) = client.readResponse(timeout: 10)
    let head = raw.components(separatedBy: "\r\n\r\n").first ?? ""
    return head.components(separatedBy: "\r\n").compactMap { line in
      line.lowercased().hasPrefix("mockserver-warning:")
        ? String(line.dropFirst("mockserver-warning:".count)).trimmingCharacters(in: .whitespaces) : nil
    }
  }
}
