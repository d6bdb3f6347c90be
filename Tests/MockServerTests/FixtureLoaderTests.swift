import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import Mappings
@testable import MockJSON
@testable import MockServer

/// A temporary fixtures directory, removed by `remove()`.
struct TempFixtures {
  let root: URL

  init(files: [String: String]) throws {
    root = FileManager.default.temporaryDirectory.appendingPathComponent("fixtures-\(UUID().uuidString)")
    for (path, content) in files {
      let url = root.appendingPathComponent(path)
      try FileManager.default.createDirectory(
        at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
      try Data(content.utf8).write(to: url)
    }
    try FileManager.default.createDirectory(
      at: root.appendingPathComponent("mappings"), withIntermediateDirectories: true)
  }

  func remove() { try? FileManager.default.removeItem(at: root) }
}

/// The repository's bundled `Fixtures/` directory.
let bundledFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().appendingPathComponent("Fixtures").path

@Suite("Fixture loading and lint")
struct FixtureLoaderTests {
  static let envelopes =
    #"{"ok":{"status":"OK","result":"${result}"},"ng":{"status":"NG","message":"${message}"}}"#

  /// Broken files and the exact problem line lint reports for each.
  @Test(
    "lint reports each kind of broken file",
    arguments: [
      (
        "bad JSON", #"{"request": {"urlPath": "/a"} "response": {}}"#,
        #"mappings/t.json: line 1, column 31: expected ',' or '}', found '"'"#
      ),
      (
        "top level not an object", "[1]",
        #"mappings/t.json: $: expected a stub mapping object or {"mappings": [ … ]}, found an array"#
      ),
      (
        "mappings not an array", #"{"mappings": {}}"#,
        "mappings/t.json: $.mappings: expected an array of stub mappings, found an object"
      ),
      (
        "unknown matcher",
        #"{"request":{"urlPath":"/a","headers":{"Accept":{"equalsTo":"x"}}},"response":{}}"#,
        #"mappings/t.json: $.request.headers.Accept.equalsTo: expected a matcher (equalTo, contains, doesNotContain, matches, doesNotMatch, absent, equalToJson, matchesJsonPath, binaryEqualTo, equalToXml, matchesXPath, and, or, not, anything, matchesJsonSchema, before, after, equalToDateTime), found unknown matcher "equalsTo""#
      ),
      (
        "header matcher is a string",
        #"{"mappings":[{"request":{"urlPath":"/a"},"response":{}},{"request":{"urlPath":"/b","headers":{"Authorization":"Bearer x"}},"response":{}}]}"#,
        #"mappings/t.json: $.mappings[1].request.headers.Authorization: expected a matcher object such as {"equalTo": …}, found a string"#
      ),
      (
        "status of wrong type", #"{"request":{"urlPath":"/a"},"response":{"status":"OK"}}"#,
        "mappings/t.json: $.response.status: expected an integer final status code 200...599, found a string"
      ),
      (
        "status out of range", #"{"request":{"urlPath":"/a"},"response":{"status":1000}}"#,
        "mappings/t.json: $.response.status: expected an integer final status code 200...599, found the number 1000"
      ),
      (
        "interim status", #"{"request":{"urlPath":"/a"},"response":{"status":101}}"#,
        "mappings/t.json: $.response.status: expected an integer final status code 200...599, found the number 101"
      ),
      (
        "header name with a space", #"{"request":{"urlPath":"/a"},"response":{"headers":{"Bad Name":"v"}}}"#,
        #"mappings/t.json: $.response.headers['Bad Name']: expected a header name made of token characters (RFC 9110 §5.1), found "Bad Name""#
      ),
      (
        "header value with CR LF",
        #"{"request":{"urlPath":"/a"},"response":{"headers":{"X-A":"a\r\nSet-Cookie: evil=1"}}}"#,
        #"mappings/t.json: $.response.headers.X-A: expected a header value without CR, LF, NUL or other control characters (RFC 9110 §5.5), found "a\r\nSet-Cookie: evil=1""#
      ),
      (
        "status message with CR LF",
        #"{"request":{"urlPath":"/a"},"response":{"statusMessage":"OK\r\nX-Evil: 1"}}"#,
        #"mappings/t.json: $.response.statusMessage: expected a reason phrase without control characters, found "OK\r\nX-Evil: 1""#
      ),
      (
        "escaping bodyFileName",
        #"{"request":{"urlPath":"/a"},"response":{"bodyFileName":"../envelopes.json"}}"#,
        #"mappings/t.json: $.response.bodyFileName: expected a path inside __files/, found "../envelopes.json", which leads outside it through '..'"#
      ),
      (
        "absolute bodyFileName", #"{"request":{"urlPath":"/a"},"response":{"bodyFileName":"/etc/passwd"}}"#,
        #"mappings/t.json: $.response.bodyFileName: expected a path inside __files/, found "/etc/passwd", an absolute path"#
      ),
      (
        "missing body file", #"{"request":{"urlPath":"/a"},"response":{"bodyFileName":"nope.json"}}"#,
        #"mappings/t.json: $.response.bodyFileName: expected an existing file under __files/, found no file "__files/nope.json""#
      ),
      (
        "missing envelope template",
        #"{"request":{"urlPath":"/a"},"response":{"x-envelope":{"name":"okay","result":1}}}"#,
        #"mappings/t.json: $.response.x-envelope.name: expected an envelope template from envelopes.json (ng, ok), found "okay""#
      ),
      (
        "missing envelope value", #"{"request":{"urlPath":"/a"},"response":{"x-envelope":{"name":"ng"}}}"#,
        #"mappings/t.json: $.response.x-envelope.message: expected a value for slot "message" of envelope "ng", found nothing"#
      ),
      (
        "two URL fields", #"{"request":{"url":"/a","urlPath":"/a"},"response":{}}"#,
        "mappings/t.json: $.request.urlPath: expected at most one of url, urlPath, urlPattern, urlPathPattern, urlPathTemplate, found url and urlPath"
      ),
      (
        "invalid regex", #"{"request":{"urlPathPattern":"/a/(["},"response":{}}"#,
        "mappings/t.json: $.request.urlPathPattern: expected a valid regular expression"
      ),
      (
        "query in urlPath", #"{"request":{"urlPath":"/categories?per_page=50"},"response":{}}"#,
        #"mappings/t.json: $.request.urlPath: expected a path without '?': put the query in queryParameters, or use url, found "/categories?per_page=50""#
      ),
      (
        "invalid percent-encoding", #"{"request":{"urlPath":"/a%ZZ"},"response":{}}"#,
        "mappings/t.json: $.request.urlPath: expected valid percent-encoding (%XX of UTF-8 bytes), found %ZZ is not a percent sign followed by two hex digits"
      ),
      (
        "two body fields", #"{"request":{"urlPath":"/a"},"response":{"body":"x","jsonBody":{}}}"#,
        "mappings/t.json: $.response.jsonBody: expected one body field (body, jsonBody, base64Body, bodyFileName or x-envelope), found body and jsonBody"
      ),
      (
        "unknown fault", #"{"request":{"urlPath":"/a"},"response":{"fault":"EXPLODE"}}"#,
        #"mappings/t.json: $.response.fault: expected one of CONNECTION_RESET_BY_PEER, EMPTY_RESPONSE, MALFORMED_RESPONSE_CHUNK, RANDOM_DATA_THEN_CLOSE, NO_RESPONSE, TRUNCATED_BODY, HEADERS_THEN_STALL, CORRUPT_GZIP, found "EXPLODE""#
      ),
      (
        "bad delay distribution",
        #"{"request":{"urlPath":"/a"},"response":{"delayDistribution":{"type":"uniform","lower":50,"upper":10}}}"#,
        "mappings/t.json: $.response.delayDistribution.upper: expected upper ≥ lower (50), found 10"
      ),
      (
        "lognormal without median",
        #"{"request":{"urlPath":"/a"},"response":{"delayDistribution":{"type":"lognormal","sigma":0.1}}}"#,
        "mappings/t.json: $.response.delayDistribution.median: expected a number of milliseconds, found nothing"
      ),
      (
        "unknown request field", #"{"request":{"urlpath":"/a"},"response":{}}"#,
        #"mappings/t.json: $.request.urlpath: expected a request field (method, url, urlPath, urlPattern, urlPathPattern, urlPathTemplate, pathParameters, queryParameters, headers, cookies, basicAuthCredentials, bodyPatterns, formParameters, multipartPatterns, scheme, host, port, clientIp, customMatcher), found unknown field "urlpath""#
      ),
      (
        "scenario state without name",
        #"{"requiredScenarioState":"Started","request":{"urlPath":"/a"},"response":{}}"#,
        "mappings/t.json: $.requiredScenarioState: expected scenarioName alongside requiredScenarioState, found no scenarioName"
      ),
      (
        "negative delay", #"{"request":{"urlPath":"/a"},"response":{"fixedDelayMilliseconds":-5}}"#,
        "mappings/t.json: $.response.fixedDelayMilliseconds: expected a whole number of 0 or more, found the number -5"
      ),
      (
        "bad JSONPath",
        #"{"request":{"urlPath":"/a","bodyPatterns":[{"matchesJsonPath":"$.a["}]},"response":{}}"#,
        #"mappings/t.json: $.request.bodyPatterns[0].matchesJsonPath: expected a JSONPath expression, found expected an index, a quoted name, '*' or a filter at offset 4 of "$.a[""#
      ),
      (
        "equalToJson string that is not JSON",
        #"{"request":{"urlPath":"/a","bodyPatterns":[{"equalToJson":"{nope"}]},"response":{}}"#,
        "mappings/t.json: $.request.bodyPatterns[0].equalToJson: expected JSON (inline, or as a string holding JSON text), found a string that is not JSON (line 1, column 2: expected a member name in double quotes, found 'n')"
      ),
      (
        "pathParameters naming no variable",
        #"{"request":{"urlPathTemplate":"/u/{id}","pathParameters":{"uid":{"equalTo":"1"}}},"response":{}}"#,
        #"mappings/t.json: $.request.pathParameters.uid: expected a variable of the template (id), found "uid""#
      ),
      (
        "response sequence onEnd",
        #"{"request":{"urlPath":"/a"},"x-responseSequence":{"onEnd":"forever","responses":[{}]}}"#,
        #"mappings/t.json: $.x-responseSequence.onEnd: expected "stickOnLast" or "loop", found "forever""#
      ),
      (
        "unsupported WireMock matcher",
        #"{"request":{"urlPath":"/a","bodyPatterns":[{"includes":"x"}]},"response":{}}"#,
        "mappings/t.json: $.request.bodyPatterns[0].includes: expected a supported matcher (equalTo, contains, doesNotContain, matches, doesNotMatch, absent, equalToJson, matchesJsonPath, binaryEqualTo, equalToXml, matchesXPath, and, or, not, anything, matchesJsonSchema, before, after, equalToDateTime), found includes is only allowed for headers and query parameters"
      ),
      (
        "missing request", #"{"response":{}}"#,
        "mappings/t.json: $.request: expected a request pattern object, found nothing"
      ),
      (
        "priority zero", #"{"priority":0,"request":{},"response":{}}"#,
        "mappings/t.json: $.priority: expected an integer of 1 or more (1 is highest), found the number 0"
      ),
    ])
  func lintErrors(kind: String, content: String, expected: String) throws {
    let dir = try TempFixtures(files: [
      "mappings/t.json": content, "envelopes.json": FixtureLoaderTests.envelopes,
    ])
    defer { dir.remove() }
    let problems = FixtureLoader.lint(directory: dir.root.path).filter(\.isError)
    #expect(problems.count == 1, "\(kind): \(problems)")
    #expect(
      problems.first.map { $0.description.hasPrefix(expected) } == true,
      "\(kind): \(problems.first?.description ?? "none")")
    let (_, status) = FixtureLoader.runLint(directory: dir.root.path)
    #expect(status == 1)
  }

  @Test("duplicate ids across files are an error")
  func duplicateIDs() throws {
    let stub = #"{"id":"same","request":{"urlPath":"/a"},"response":{}}"#
    let dir = try TempFixtures(files: ["mappings/a.json": stub, "mappings/b.json": stub])
    defer { dir.remove() }
    let set = FixtureLoader.load(directory: dir.root.path)
    #expect(set.stubs.count == 1)
    #expect(
      set.errors.map(\.description) == [
        #"mappings/b.json: $.id: expected an id used by no other stub, found "same", already used in mappings/a.json $"#
      ])
  }

  @Test("a symbolic link out of __files is refused")
  func symlinkEscape() throws {
    let dir = try TempFixtures(files: [
      "secret.txt": "top secret",
      "mappings/t.json": #"{"request":{"urlPath":"/a"},"response":{"bodyFileName":"link.txt"}}"#,
    ])
    defer { dir.remove() }
    try FileManager.default.createDirectory(
      at: dir.root.appendingPathComponent("__files"), withIntermediateDirectories: true)
    try FileManager.default.createSymbolicLink(
      at: dir.root.appendingPathComponent("__files/link.txt"),
      withDestinationURL: dir.root.appendingPathComponent("secret.txt"))
    let errors = FixtureLoader.lint(directory: dir.root.path).filter(\.isError).map(\.description)
    #expect(
      errors == [
        #"mappings/t.json: $.response.bodyFileName: expected a path inside __files/, found "link.txt", which leads outside it"#
      ])
  }

  /// Framing headers in a fixture and `//` in a path are loaded with a warning that says what changed.
  @Test("warnings for framing headers, '//' paths and bodies on 204")
  func warnings() throws {
    let dir = try TempFixtures(files: [
      "mappings/t.json": #"""
      {"mappings":[
        {"request":{"method":"DELETE","urlPath":"/items/7"},"response":{"status":204,"headers":{"Transfer-Encoding":"chunked","Content-Type":"application/json"}}},
        {"request":{"method":"GET","urlPath":"/items"},"response":{"status":200,"headers":{"Content-Length":"999","Transfer-Encoding":"chunked"},"body":"[]"}},
        {"request":{"urlPath":"/api//users"},"response":{"status":204,"body":"x"}}
      ]}
      """#
    ])
    defer { dir.remove() }
    let set = FixtureLoader.load(directory: dir.root.path)
    #expect(!set.hasErrors)
    #expect(set.stubs.count == 3)
    #expect(
      set.warnings.map(\.path) == [
        "$.mappings[0].response.headers.Transfer-Encoding", "$.mappings[1].response.headers.Content-Length",
        "$.mappings[1].response.headers.Transfer-Encoding", "$.mappings[2].request.urlPath",
        "$.mappings[2].response",
      ])
    let f1 = set.stubs[0].response.httpResponse(for: .delete)
    #expect(f1.headers.fields.map(\.name) == ["Content-Type"])
    #expect(f1.body.isEmpty)
    let f2 = set.stubs[1].response.httpResponse()
    #expect(!f2.headers.contains("Content-Length") && !f2.headers.contains("Transfer-Encoding"))
    #expect(f2.body == Array("[]".utf8))
    #expect(set.stubs[2].response.httpResponse().body.isEmpty)
  }

  @Test("--skip-invalid: valid stubs of a file with one invalid stub still load")
  func skipInvalid() throws {
    let dir = try TempFixtures(files: [
      "mappings/t.json":
        #"{"mappings":[{"request":{"urlPath":"/ok"},"response":{}},{"request":{"urlPath":"/bad"},"response":{"status":"x"}}]}"#,
      "mappings/broken.json": "{",
    ])
    defer { dir.remove() }
    let set = FixtureLoader.load(directory: dir.root.path)
    #expect(set.stubs.map(\.location) == ["$.mappings[0]"])
    #expect(set.errors.count == 2)
    #expect(set.report().hasSuffix("2 errors, 0 warnings"))
  }

  @Test("missing directory is one error")
  func missingDirectory() {
    let set = FixtureLoader.load(directory: "/nonexistent/fixtures")
    #expect(
      set.errors.map(\.description) == [
        "/nonexistent/fixtures: $: expected a fixtures directory holding mappings/, found no such directory"
      ])
  }

  /// How fast they load is measured by `make bench` ("startup ms, 10,000 stubs"), not here.
  @Test("10,000 stubs in one file all load")
  func loadScale() throws {
    var items: [String] = []
    for k in 0..<10_000 {
      items.append(
        #"{"request":{"method":"GET","urlPath":"/items/\#(k)","headers":{"Accept":{"contains":"json"}}},"response":{"status":200,"jsonBody":{"id":\#(k)}}}"#
      )
    }
    let dir = try TempFixtures(files: [
      "mappings/big.json": #"{"mappings":[\#(items.joined(separator: ","))]}"#
    ])
    defer { dir.remove() }
    let set = FixtureLoader.load(directory: dir.root.path)
    #expect(set.stubs.count == 10_000)
    #expect(!set.hasErrors)
  }
}

@Suite("Response fields")
struct StubResponseTests {
  @Test(
    "each body field resolves to bytes",
    arguments: [
      (#"{"body":"héllo"}"#, "héllo"),
      (#"{"jsonBody":{"amount":275.0,"list":[1,2.50]}}"#, #"{"amount":275.0,"list":[1,2.50]}"#),
      (#"{"base64Body":"aGk="}"#, "hi"),
      (#"{"bodyFileName":"data/a.txt"}"#, "file content"),
      (#"{"x-envelope":{"name":"ok","result":{"n":1.0}}}"#, #"{"status":"OK","result":{"n":1.0}}"#),
      (
        #"{"x-envelope":{"name":"code","code":40100,"data":null,"info":"no"}}"#,
        #"{"code":40100,"data":null,"info":"no"}"#
      ),
      ("{}", ""),
    ])
  func bodies(response: String, expected: String) throws {
    let ctx = try testContext(
      envelopes:
        #"{"ok":{"status":"OK","result":"${result}"},"code":{"code":"${code}","data":"${data}","info":"${info}"}}"#,
      files: ["data/a.txt": "file content"])
    let stub = try makeStub(#"{"request":{},"response":\#(response)}"#, context: ctx)
    #expect(String(decoding: stub.response.body, as: UTF8.self) == expected)
  }

  @Test("status, statusMessage, headers (multi-valued), envelope Content-Type")
  func headAndHeaders() throws {
    let ctx = try testContext(envelopes: #"{"ok":{"status":"OK","result":"${result}"}}"#)
    let stub = try makeStub(
      #"{"request":{},"response":{"status":429,"statusMessage":"Slow Down","headers":{"Retry-After":"30","Set-Cookie":["a=1","b=2"]},"x-envelope":{"name":"ok","result":null}}}"#,
      context: ctx)
    let r = stub.response.httpResponse()
    #expect(r.status.code == 429)
    #expect(r.status.reasonPhrase == "Slow Down")
    #expect(r.headers.values("Set-Cookie") == ["a=1", "b=2"])
    #expect(r.headers.first("retry-after") == "30")
    #expect(r.headers.first("Content-Type") == "application/json")
    #expect(stub.response.httpResponse(for: .head).body.isEmpty)
    let plain = try makeStub(#"{"request":{},"response":{"status":404}}"#)
    #expect(plain.response.httpResponse().status.reasonPhrase == "Not Found")
  }

  @Test("delays, dribble and faults are typed")
  func timingAndFaults() throws {
    let s1 = try makeStub(
      #"{"request":{},"response":{"fixedDelayMilliseconds":250,"delayDistribution":{"type":"uniform","lower":10,"upper":30},"chunkedDribbleDelay":{"numberOfChunks":5,"totalDuration":1000}}}"#
    )
    #expect(s1.response.fixedDelayMilliseconds == 250)
    #expect(s1.response.delayDistribution == .uniform(lower: 10, upper: 30))
    #expect(s1.response.chunkedDribbleDelay == ChunkedDribbleDelay(numberOfChunks: 5, totalDuration: 1000))
    #expect(s1.response.sampleDelayMilliseconds(random: { 0.5 }) == 270)
    let s2 = try makeStub(
      #"{"request":{},"response":{"delayDistribution":{"type":"lognormal","median":80,"sigma":0.4,"maxValue":100}}}"#
    )
    #expect(s2.response.delayDistribution == .lognormal(median: 80, sigma: 0.4, maxValue: 100))
    #expect(s2.response.sampleDelayMilliseconds(random: { 0.999 }) <= 100)
    let s3 = try makeStub(
      #"{"request":{},"response":{"delayDistribution":{"type":"fixed","milliseconds":15}}}"#)
    #expect(s3.response.sampleDelayMilliseconds(random: { 0 }) == 15)
    // A stub's own delay replaces the global one of its kind (WireMock's Response.Builder.configureDelay):
    // s1's 250 ms and uniform 10...30 stand; s3 has no fixed delay, so the global 1000 ms applies, plus its
    // own fixed distribution of 15, not the global one; a stub with neither takes both globals.
    let global = DelayDistribution.fixed(milliseconds: 7)
    #expect(s1.response.sampleDelayMilliseconds(globalFixed: 1000, globalDistribution: global) { 0.5 } == 270)
    #expect(s3.response.sampleDelayMilliseconds(globalFixed: 1000, globalDistribution: global) { 0 } == 1015)
    let none = try makeStub(#"{"request":{},"response":{"status":200}}"#)
    #expect(
      none.response.sampleDelayMilliseconds(globalFixed: 1000, globalDistribution: global) { 0 } == 1007)
    let zero = try makeStub(#"{"request":{},"response":{"fixedDelayMilliseconds":0}}"#)
    #expect(zero.response.sampleDelayMilliseconds(globalFixed: 1000) { 0 } == 0)
    for fault in Fault.allCases {
      let s = try makeStub(#"{"request":{},"response":{"fault":"\#(fault.rawValue)"}}"#)
      #expect(s.response.fault == fault)
    }
  }

  @Test(
    "response sequence: stick on last or loop",
    arguments: [("stickOnLast", [200, 201, 202, 202, 202]), ("loop", [200, 201, 202, 200, 201])])
  func sequence(onEnd: String, statuses: [Int]) throws {
    let stub = try makeStub(
      #"{"request":{},"x-responseSequence":{"onEnd":"\#(onEnd)","responses":[{"status":200},{"status":201},{"status":202}]}}"#
    )
    #expect((0..<5).map { stub.response(serveCount: $0).status } == statuses)
  }

  @Test("id, uuid, name, metadata and source kept for the admin round-trip")
  func identity() throws {
    let text =
      #"{"uuid":"u-1","name":"n","metadata":{"team":"x","v":1.50},"request":{"urlPath":"/a","bodyPatterns":[{"equalToJson":{"amount":275.0}}]},"response":{"status":200}}"#
    let stub = try makeStub(text)
    #expect(stub.id == "u-1")
    #expect(stub.name == "n")
    #expect(stub.metadata?["v"]?.numberValue?.text == "1.50")
    #expect(stub.source.serialized() == text)
    #expect(stub.priority == 5)
  }
}
