import Dispatch
import Foundation
import MockJSON
import MockServerTesting
import Synchronization
import TestSupport
import Testing

/// Stateful mocking in the format of WireMock's state extension (wiremock/wiremock-state-extension): the
/// `recordState` and `deleteState` serve event listeners, the `state-matcher` custom matcher, the
/// `{{state}}` helper and the admin routes, over real sockets against the binary. The cases restate, in
/// this project's words, the extension's README examples and what its own tests assert
/// (RecordStateEventListenerTest, DeleteStateEventListenerTest, StateRequestMatcherTest,
/// StateTemplateHelperProviderExtensionTest, AdminApiTest, the list and queue examples).
@Suite("Stateful mocking (WireMock's state extension)", .serialized)
struct StatefulMockingTests {
  /// One request; the response text.
  static func call(_ port: Int, _ method: String, _ path: String, _ body: String? = nil) throws -> String {
    try KnownDefectTests.send(
      port, method, path, body == nil ? [] : ["Content-Type: application/json"],
      body: Array((body ?? "").utf8))
  }

  /// The content of a response text.
  static func content(_ response: String) -> String {
    guard let r = response.range(of: "\r\n\r\n") else { return "" }
    return String(response[r.upperBound...])
  }

  /// The context `name` as the admin API shows it, or nil (404).
  static func context(_ port: Int, _ name: String) throws -> JSONObject? {
    let answer = try call(port, "GET", "/__admin/state-extension/contexts/\(name)")
    guard status(answer) == 200 else { return nil }
    return try JSONValue.parse(content(answer)).objectValue
  }

  /// `properties` of context `name` as a dictionary (empty when it does not exist).
  static func properties(_ port: Int, _ name: String) throws -> [String: String] {
    var out: [String: String] = [:]
    for m in try context(port, name)?["properties"]?.objectValue ?? JSONObject() {
      out[m.key] = m.value.stringValue
    }
    return out
  }

  /// The `id`s of the list of context `name`.
  static func listIDs(_ port: Int, _ name: String, field: String = "id") throws -> [String] {
    (try context(port, name)?["list"]?.arrayValue ?? []).compactMap { $0.objectValue?[field]?.stringValue }
  }

  static func launch(_ stubs: [(String, String)], _ extra: [String] = []) throws -> (
    TemporaryFixtures, MockServerProcess
  ) {
    let fixtures = try TemporaryFixtures(stubs)
    let server = try MockServerProcess.launch(
      arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--seed", "7"] + extra)
    return (fixtures, server)
  }

  /// The CRUD stubs of the format page (section 10), under `/todos`, one stub per file when `split`.
  static func crudStubs(split: Bool) -> [(String, String)] {
    let id = "{{request.pathSegments.[1]}}"
    let stubs = [
      #"""
      { "name": "todo-create", "request": { "method": "POST", "urlPath": "/todos" },
        "response": { "status": 201, "transformers": ["response-template"],
          "jsonBody": { "id": "{{randomValue length=12 type='ALPHANUMERIC' uppercase=false}}",
                        "title": "{{jsonPath request.body '$.title'}}", "done": "false" } },
        "serveEventListeners": [
          { "name": "recordState", "parameters": { "context": "{{jsonPath response.body '$.id'}}",
              "state": { "id": "{{jsonPath response.body '$.id'}}", "title": "{{jsonPath request.body '$.title'}}", "done": "false" } } },
          { "name": "recordState", "parameters": { "context": "todos",
              "list": { "addLast": { "id": "{{jsonPath response.body '$.id'}}" } } } } ] }
      """#,
      #"""
      { "name": "todo-list", "request": { "method": "GET", "urlPath": "/todos" },
        "response": { "status": 200, "transformers": ["response-template"],
          "body": "[{{#each (state context='todos' property='list' default='[]')}}{\"id\":\"{{id}}\",\"title\":\"{{state context=id property='title'}}\"}{{#unless @last}},{{/unless}}{{/each}}]" } }
      """#,
      #"""
      { "name": "todo-get", "request": { "method": "GET", "urlPathPattern": "/todos/[^/]+",
          "customMatcher": { "name": "state-matcher", "parameters": { "hasContext": "ID" } } },
        "response": { "status": 200, "transformers": ["response-template"],
          "jsonBody": { "id": "{{state context=request.pathSegments.[1] property='id'}}",
                        "title": "{{state context=request.pathSegments.[1] property='title'}}",
                        "done": "{{state context=request.pathSegments.[1] property='done'}}" } } }
      """#,
      #"""
      { "name": "todo-get-missing", "request": { "method": "GET", "urlPathPattern": "/todos/[^/]+",
          "customMatcher": { "name": "state-matcher", "parameters": { "hasNotContext": "ID" } } },
        "response": { "status": 404, "transformers": ["response-template"],
          "jsonBody": { "error": "todo {{request.pathSegments.[1]}} not found" } } }
      """#,
      #"""
      { "name": "todo-update", "request": { "method": "PUT", "urlPathPattern": "/todos/[^/]+",
          "customMatcher": { "name": "state-matcher", "parameters": { "hasContext": "ID" } } },
        "response": { "status": 200, "transformers": ["response-template"],
          "jsonBody": { "id": "{{request.pathSegments.[1]}}",
            "title": "{{jsonPath request.body '$.title' default=(state context=request.pathSegments.[1] property='title')}}",
            "done": "{{jsonPath request.body '$.done' default=(state context=request.pathSegments.[1] property='done')}}" } },
        "serveEventListeners": [ { "name": "recordState", "parameters": { "context": "ID",
            "state": { "title": "{{jsonPath response.body '$.title'}}", "done": "{{jsonPath response.body '$.done'}}" } } } ] }
      """#,
      #"""
      { "name": "todo-delete", "request": { "method": "DELETE", "urlPathPattern": "/todos/[^/]+",
          "customMatcher": { "name": "state-matcher", "parameters": { "hasContext": "ID" } } },
        "response": { "status": 204 },
        "serveEventListeners": [
          { "name": "deleteState", "parameters": { "context": "ID" } },
          { "name": "deleteState", "parameters": { "context": "todos",
              "list": { "deleteWhere": { "property": "id", "value": "ID" } } } } ] }
      """#,
    ].map { $0.replacingOccurrences(of: "\"ID\"", with: "\"\(id)\"") }
    if split {
      return stubs.enumerated().map { ("crud-\($0.offset).json", $0.element) }
    }
    return [("crud.json", #"{"mappings":["# + stubs.joined(separator: ",") + "]}")]
  }

  /// The README's walk-through: create, read, list, update, delete, 404 afterwards.
  @Test(arguments: [false, true])
  func crudFlowWorksInOneAndInSeveralMappingFiles(split: Bool) throws {
    let (fixtures, server) = try StatefulMockingTests.launch(StatefulMockingTests.crudStubs(split: split))
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    let created = try StatefulMockingTests.call(p, "POST", "/todos", #"{"title":"milk"}"#)
    #expect(status(created) == 201, "\(created)")
    let id = try #require(try JSONValue.parse(StatefulMockingTests.content(created))["id"]?.stringValue)
    let read = try StatefulMockingTests.call(p, "GET", "/todos/\(id)")
    #expect(
      status(read) == 200 && read.contains(#""title":"milk""#) && read.contains(#""done":"false""#), "\(read)"
    )
    _ = try StatefulMockingTests.call(p, "POST", "/todos", #"{"title":"eggs"}"#)
    let list = StatefulMockingTests.content(try StatefulMockingTests.call(p, "GET", "/todos"))
    let titles = try JSONValue.parse(list).arrayValue?.compactMap { $0["title"]?.stringValue }
    #expect(titles == ["milk", "eggs"], "\(list)")
    let updated = try StatefulMockingTests.call(p, "PUT", "/todos/\(id)", #"{"done":"true"}"#)
    #expect(status(updated) == 200 && updated.contains(#""title":"milk""#), "\(updated)")
    #expect(try StatefulMockingTests.properties(p, id) == ["id": id, "title": "milk", "done": "true"])
    #expect(try StatefulMockingTests.context(p, id)?["updateCount"]?.numberValue?.intValue == 2)
    #expect(status(try StatefulMockingTests.call(p, "DELETE", "/todos/\(id)")) == 204)
    let gone = try StatefulMockingTests.call(p, "GET", "/todos/\(id)")
    #expect(status(gone) == 404 && gone.contains("todo \(id) not found"), "\(gone)")
    #expect(try StatefulMockingTests.listIDs(p, "todos").count == 1)
    // PUT and DELETE of an unknown record: no stub matches, and the near miss names the state matcher.
    let miss = try StatefulMockingTests.call(p, "DELETE", "/todos/todo-42")
    #expect(status(miss) == 404 && miss.contains("context todo-42 does not exist"), "\(miss)")
    // The admin API's near misses read the store as serving does: the same reason, not a missing store.
    let asked = try StatefulMockingTests.call(
      p, "POST", "/__admin/near-misses/request", #"{"method":"DELETE","url":"/todos/todo-42"}"#)
    #expect(status(asked) == 200 && asked.contains("context todo-42 does not exist"), "\(asked)")
    #expect(!asked.contains("no state store"), "\(asked)")
    // A state matcher in a posted request pattern is evaluated against the store too.
    let pattern = try StatefulMockingTests.call(
      p, "POST", "/__admin/near-misses/request-pattern",
      #"{"method":"GET","urlPathPattern":"/todos/.+","customMatcher":{"name":"state-matcher","parameters":{"hasContext":"{{request.pathSegments.[1]}}"}}}"#
    )
    #expect(status(pattern) == 200 && !pattern.contains("no state store"), "\(pattern)")
  }

  /// The bundled example (Fixtures/mappings/todos.json) answers as the README shows.
  @Test func bundledToDoExampleServesCRUD() throws {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
      .deletingLastPathComponent().appendingPathComponent("Fixtures").path
    let server = try MockServerProcess.launch(arguments: ["--fixtures", root, "--no-watch", "--seed", "1"])
    defer { server.stop() }
    let p = server.port
    let created = try StatefulMockingTests.call(p, "POST", "/api/v1/todos", #"{"title":"write docs"}"#)
    #expect(status(created) == 201, "\(created)")
    let id = try #require(try JSONValue.parse(StatefulMockingTests.content(created))["id"]?.stringValue)
    let one = StatefulMockingTests.content(try StatefulMockingTests.call(p, "GET", "/api/v1/todos/\(id)"))
    #expect(one == #"{"id":"\#(id)","title":"write docs","done":false,"updates":1}"#, "\(one)")
    #expect(status(try StatefulMockingTests.call(p, "PUT", "/api/v1/todos/\(id)", #"{"done":true}"#)) == 200)
    let list = StatefulMockingTests.content(try StatefulMockingTests.call(p, "GET", "/api/v1/todos"))
    #expect(list == #"[{"id":"\#(id)","title":"write docs","done":true}]"#, "\(list)")
    #expect(status(try StatefulMockingTests.call(p, "DELETE", "/api/v1/todos/\(id)")) == 204)
    #expect(status(try StatefulMockingTests.call(p, "GET", "/api/v1/todos/\(id)")) == 404)
    #expect(StatefulMockingTests.content(try StatefulMockingTests.call(p, "GET", "/api/v1/todos")) == "[]")
  }
}

extension StatefulMockingTests {
  /// A stub `POST /NAME/{context}` whose listener has `parameters` (with `CTX` for the context segment).
  static func listener(_ name: String, _ kind: String, _ parameters: String, method: String = "POST")
    -> String
  {
    let stub =
      #"{"request":{"method":"\#(method)","urlPathPattern":"/\#(name)/[^/]+"},"response":{"status":200},"#
      + #""serveEventListeners":[{"name":"\#(kind)","parameters":\#(parameters)}]}"#
    return stub.replacingOccurrences(of: "CTX", with: "{{request.pathSegments.[1]}}")
  }

  /// addFirst and addLast (both in one listener: addFirst first), deleteFirst, deleteLast, deleteIndex
  /// (with "-1" the last entry, as the README says, and an out-of-range index ignored), deleteWhere (the
  /// first entry only), list operations on an unknown context creating nothing.
  @Test func listsGrowAndShrinkAtBothEnds() throws {
    let value = "{{jsonPath request.body '$.v'}}"
    let (fixtures, server) = try StatefulMockingTests.launch([
      (
        "first.json",
        StatefulMockingTests.listener(
          "first", "recordState", #"{"context":"CTX","list":{"addFirst":{"id":"\#(value)"}}}"#)
      ),
      (
        "last.json",
        StatefulMockingTests.listener(
          "last", "recordState", #"{"context":"CTX","list":{"addLast":{"id":"\#(value)"}}}"#)
      ),
      (
        "both.json",
        StatefulMockingTests.listener(
          "both", "recordState", #"{"context":"CTX","list":{"addFirst":{"id":"F"},"addLast":{"id":"L"}}}"#)
      ),
      (
        "dfirst.json",
        StatefulMockingTests.listener(
          "dfirst", "deleteState", #"{"context":"CTX","list":{"deleteFirst":true}}"#)
      ),
      (
        "dlast.json",
        StatefulMockingTests.listener(
          "dlast", "deleteState", #"{"context":"CTX","list":{"deleteLast":true}}"#)
      ),
      (
        "dindex.json",
        StatefulMockingTests.listener(
          "dindex", "deleteState", #"{"context":"CTX","list":{"deleteIndex":"\#(value)"}}"#)
      ),
      (
        "dwhere.json",
        StatefulMockingTests.listener(
          "dwhere", "deleteState",
          #"{"context":"CTX","list":{"deleteWhere":{"property":"id","value":"\#(value)"}}}"#)
      ),
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    func post(_ path: String, _ v: String = "") throws {
      let answer = try StatefulMockingTests.call(p, "POST", path, #"{"v":"\#(v)"}"#)
      #expect(status(answer) == 200, "\(path): \(answer)")
    }
    for v in ["b", "c", "d"] { try post("/last/l", v) }
    try post("/first/l", "a")
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["a", "b", "c", "d"])
    try post("/both/l")
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["F", "a", "b", "c", "d", "L"])
    try post("/dfirst/l")
    try post("/dlast/l")
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["a", "b", "c", "d"])
    try post("/dindex/l", "1")
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["a", "c", "d"])
    try post("/dindex/l", "-1")
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["a", "c"])
    try post("/dindex/l", "9")
    try post("/dindex/l", "x")
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["a", "c"])
    for v in ["c", "a", "c"] { try post("/last/l", v) }
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["a", "c", "c", "a", "c"])
    try post("/dwhere/l", "c")
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["a", "c", "a", "c"])
    try post("/dwhere/l", "zzz")
    #expect(try StatefulMockingTests.listIDs(p, "l") == ["a", "c", "a", "c"])
    // Every request that wrote counts once, also those that removed nothing: 4 adds, both, 2 deletes,
    // 4 deleteIndex, 3 adds, 2 deleteWhere.
    #expect(try StatefulMockingTests.context(p, "l")?["updateCount"]?.numberValue?.intValue == 16)
    // List deletions on an unknown context create nothing.
    try post("/dfirst/none")
    try post("/dwhere/none", "a")
    #expect(try StatefulMockingTests.context(p, "none") == nil)
  }

  /// Properties: set, kept when not named (a selective overwrite), removed by the text `null`; the empty
  /// string is a value. Several listeners of one request add 1 to `updateCount` once; each sees the writes
  /// of the ones before it, and a listener's own templates see the state before its write.
  @Test func propertiesAreSetKeptAndRemoved() throws {
    let (fixtures, server) = try StatefulMockingTests.launch(
      [
        (
          "ab.json",
          StatefulMockingTests.listener("ab", "recordState", #"{"context":"CTX","state":{"a":"1","b":"2"}}"#)
        ),
        (
          "b.json",
          StatefulMockingTests.listener("b", "recordState", #"{"context":"CTX","state":{"b":"3","e":""}}"#)
        ),
        (
          "rm.json",
          StatefulMockingTests.listener("rm", "recordState", #"{"context":"CTX","state":{"a":"null"}}"#)
        ),
        (
          "two.json",
          #"{"request":{"method":"POST","urlPathPattern":"/two/[^/]+"},"response":{"status":200},"serveEventListeners":["#
            + #"{"name":"recordState","parameters":{"context":"CTX","state":{"n":"{{state context='CTX' property='updateCount'}}"}}},"#
            + #"{"name":"recordState","parameters":{"context":"CTX","state":{"seen":"{{state context='CTX' property='n'}}"},"list":{"addLast":{"k":"v"}}}}"#
            + "]}"
        ),
      ].map {
        (
          $0.0,
          $0.1.replacingOccurrences(of: "'CTX'", with: "request.pathSegments.[1]").replacingOccurrences(
            of: "CTX", with: "{{request.pathSegments.[1]}}")
        )
      })
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    #expect(status(try StatefulMockingTests.call(p, "POST", "/ab/c")) == 200)
    #expect(try StatefulMockingTests.properties(p, "c") == ["a": "1", "b": "2"])
    #expect(status(try StatefulMockingTests.call(p, "POST", "/b/c")) == 200)
    #expect(try StatefulMockingTests.properties(p, "c") == ["a": "1", "b": "3", "e": ""])
    #expect(status(try StatefulMockingTests.call(p, "POST", "/rm/c")) == 200)
    #expect(try StatefulMockingTests.properties(p, "c") == ["b": "3", "e": ""])
    #expect(try StatefulMockingTests.context(p, "c")?["updateCount"]?.numberValue?.intValue == 3)
    // Two listeners, one request: the first renders before any write (updateCount 0, no context), the
    // second sees the first's write; the count is 1.
    #expect(status(try StatefulMockingTests.call(p, "POST", "/two/t")) == 200)
    #expect(try StatefulMockingTests.properties(p, "t") == ["n": "0", "seen": "0"])
    let t = try #require(try StatefulMockingTests.context(p, "t"))
    #expect(t["updateCount"]?.numberValue?.intValue == 1 && t["list"]?.arrayValue?.count == 1)
    #expect(status(try StatefulMockingTests.call(p, "POST", "/two/t")) == 200)
    #expect(try StatefulMockingTests.properties(p, "t") == ["n": "1", "seen": "1"])
    #expect(try StatefulMockingTests.context(p, "t")?["updateCount"]?.numberValue?.intValue == 2)
  }
}

extension StatefulMockingTests {
  /// Every parameter of the state matcher, each with a request that matches (200) and one that does not
  /// (404 with its reason among the near misses).
  @Test func everyStateMatcherParameterMatchesAndMisses() throws {
    func stub(_ path: String, _ parameters: String) -> (String, String) {
      (
        "m-\(path).json",
        #"{"request":{"method":"GET","urlPath":"/\#(path)","customMatcher":{"name":"state-matcher","parameters":\#(parameters)}},"response":{"status":200,"body":"\#(path)"}}"#
      )
    }
    let (fixtures, server) = try StatefulMockingTests.launch([
      (
        "seed.json",
        #"{"request":{"method":"POST","urlPath":"/seed"},"response":{"status":200},"serveEventListeners":["#
          + #"{"name":"recordState","parameters":{"context":"s","state":{"done":"true","n":"5","empty":""},"#
          + #""list":{"addLast":{"id":"1","tag":"x"}}}},"#
          + #"{"name":"recordState","parameters":{"context":"s","list":{"addLast":{"id":"2","tag":"y"}}}}]}"#
      ),
      stub("has", #"{"hasContext":"s"}"#),
      stub("hasnot", #"{"hasNotContext":"s"}"#),
      stub("hasprop", #"{"hasContext":"s","hasProperty":"empty"}"#),
      stub("hasnotprop", #"{"hasContext":"s","hasNotProperty":"other"}"#),
      stub("prop", #"{"hasContext":"s","property":{"done":{"equalTo":"true"},"n":{"matches":"[0-9]+"}}}"#),
      stub("propabsent", #"{"hasContext":"s","property":{"other":{"absent":true}}}"#),
      stub("listfirst", #"{"hasContext":"s","list":{"first":{"id":{"equalTo":"1"}}}}"#),
      stub(
        "listlast", #"{"hasContext":"s","list":{"last":{"tag":{"equalTo":"y"}},"-1":{"id":{"equalTo":"2"}}}}"#
      ),
      stub("listindex", #"{"hasContext":"s","list":{"1":{"id":{"equalTo":"2"}}}}"#),
      stub("listpast", #"{"hasContext":"s","list":{"2":{"id":{"equalTo":"3"}}}}"#),
      stub(
        "uc",
        #"{"hasContext":"s","updateCountEqualTo":"1","updateCountLessThan":"2","updateCountMoreThan":"0"}"#),
      stub("ls", #"{"hasContext":"s","listSizeEqualTo":"2","listSizeLessThan":"3","listSizeMoreThan":"1"}"#),
      stub("lsnan", #"{"hasContext":"s","listSizeEqualTo":"two"}"#),
      stub(
        "num",
        #"{"hasContext":"s","numericComparisons":{"n":{"GT":"4","lte":"5","ne":"6","eq":"5.0","gte":"5","lt":"{{request.query.max}}"}}}"#
      ),
      stub("numtext", #"{"hasContext":"s","numericComparisons":{"done":{"eq":"1"}}}"#),
      stub("nummissing", #"{"hasContext":"s","numericComparisons":{"zzz":{"eq":"1"}}}"#),
      stub("not", #"{"not":{"hasContext":"zzz"}}"#),
      stub("and", #"{"and":[{"hasContext":"s"},{"hasNotContext":"zzz"}]}"#),
      stub("or", #"{"or":[{"hasContext":"zzz"},{"hasContext":"{{request.query.c}}"}]}"#),
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    // Before the context exists.
    #expect(status(get(p, "/hasnot")) == 200)
    let before = get(p, "/has")
    #expect(status(before) == 404 && before.contains("context s does not exist"), "\(before)")
    #expect(status(try StatefulMockingTests.call(p, "POST", "/seed")) == 200)
    for path in [
      "/has", "/hasprop", "/hasnotprop", "/prop", "/propabsent", "/listfirst", "/listlast", "/listindex",
      "/uc",
      "/ls", "/num?max=10", "/not", "/and", "/or?c=s",
    ] {
      let answer = get(p, path)
      #expect(status(answer) == 200, "\(path): \(answer)")
    }
    for (path, reason) in [
      ("/hasnot", "context s exists"), ("/listpast", "has no list entry 2"), ("/lsnan", "is not a number"),
      ("/num?max=5", "expected < 5"), ("/numtext", "not a number"), ("/nummissing", "zzz\\\" to compare"),
      ("/or?c=q", "context q does not exist"),
    ] {
      let answer = get(p, path)
      #expect(status(answer) == 404 && answer.contains(reason), "\(path): \(answer)")
    }
  }

  /// Two stubs on one URL, one `hasContext` and one `hasNotContext`, whatever their order; and priorities
  /// as WireMock's: a state-matcher stub of higher priority wins over a plain stub while it matches.
  @Test func stateMatchersTakePartInPrioritiesAndTies() throws {
    let (fixtures, server) = try StatefulMockingTests.launch([
      (
        "a.json",
        #"{"priority":1,"request":{"method":"GET","urlPath":"/p","customMatcher":{"name":"state-matcher","parameters":{"hasContext":"on"}}},"response":{"status":200,"body":"stateful"}}"#
      ),
      (
        "b.json",
        #"{"priority":5,"request":{"method":"GET","urlPath":"/p"},"response":{"status":200,"body":"plain"}}"#
      ),
      (
        "on.json",
        StatefulMockingTests.listener("on", "recordState", #"{"context":"on","state":{"x":"1"}}"#)
      ),
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    #expect(StatefulMockingTests.content(get(p, "/p")) == "plain")
    #expect(status(try StatefulMockingTests.call(p, "POST", "/on/x")) == 200)
    #expect(StatefulMockingTests.content(get(p, "/p")) == "stateful")
  }
}

extension StatefulMockingTests {
  /// The helper: property, updateCount, listSize, list (whole and by path, computed paths too) and what it
  /// renders when the context or value is missing, with and without `default` (the README's table as the
  /// extension's tests assert it); misuse renders WireMock's error text.
  @Test func stateHelperRendersValuesAndDefaults() throws {
    func show(_ name: String, _ template: String) -> (String, String) {
      let body = template.replacingOccurrences(of: "\"", with: "\\\"")
      return (
        "h-\(name).json",
        #"{"request":{"method":"GET","urlPath":"/h/\#(name)"},"response":{"status":200,"transformers":["response-template"],"body":"\#(body)"}}"#
      )
    }
    let (fixtures, server) = try StatefulMockingTests.launch([
      (
        "seed.json",
        #"{"request":{"method":"POST","urlPath":"/seed"},"response":{"status":200},"serveEventListeners":["#
          + #"{"name":"recordState","parameters":{"context":"c","state":{"p":"v"},"list":{"addLast":{"id":"1"}}}},"#
          + #"{"name":"recordState","parameters":{"context":"c","list":{"addLast":{"id":"2"}}}},"#
          + #"{"name":"recordState","parameters":{"context":"empty","state":{"q":"w"}}}]}"#
      ),
      show(
        "prop",
        "{{state context='c' property='p'}}|{{state context='c' property='nope'}}|{{state context='c' property='nope' default='d'}}|{{state context='x' property='p'}}|{{state context='x' property='p' default='d'}}"
      ),
      show(
        "counts",
        "{{state context='c' property='updateCount'}}|{{state context='c' property='listSize'}}|{{state context='x' property='updateCount'}}|{{state context='x' property='listSize'}}|{{state context='x' property='listSize' default='7'}}|{{state context='empty' property='listSize' default='7'}}"
      ),
      show(
        "list",
        "{{#each (state context='c' property='list')}}{{id}};{{/each}}|{{state context='x' property='list'}}|{{state context='x' property='list' default='[{\"id\":\"z\"}]'}}|{{state context='empty' property='list' default='[{\"id\":\"z\"}]'}}|{{state context='x' property='list' default='nope'}}"
      ),
      show(
        "path",
        "{{state context='c' list='[0].id'}}|{{state context='c' list='[-1].id'}}|{{state context='c' list=(join '[' request.query.i '].id' '')}}|{{state context='c' list='[5].id'}}|{{state context='c' list='[5].id' default='d'}}|{{state context='x' list='[0].id' default='d'}}"
      ),
      show(
        "with", "{{#with (state context='c' property='nope') as | value |}}\"{{value}}\"{{else}}null{{/with}}"
      ),
      show(
        "errors",
        "{{state context='' property='p'}}|{{state context='c'}}|{{state context='c' property='p' list='[0]'}}"
      ),
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    #expect(status(try StatefulMockingTests.call(p, "POST", "/seed")) == 200)
    func body(_ path: String) -> String { StatefulMockingTests.content(get(p, path)) }
    #expect(body("/h/prop") == "v||d||d")
    #expect(body("/h/counts") == "1|2|0|0|7|0")
    #expect(body("/h/list") == "1;2;|[]|[{id=z}]|[]|[]")
    #expect(body("/h/path?i=1") == "1|2|2||d|d")
    #expect(body("/h/with") == "null")
    #expect(
      body("/h/errors")
        == "[ERROR: 'context' cannot be empty]|[ERROR: Either 'property' or 'list' has to be set]|"
        + "[ERROR: Either 'property' or 'list' has to be set]")
  }

  /// `deleteState` with `context` (twice is fine), `contexts` (unknown names ignored), `contextsMatching`
  /// (whole names: `extOne` does not delete `knownContextOne`; `.*` deletes all); the queue example reads
  /// the first entry and removes it in the same request, so it answers with the entry it removes.
  @Test func deleteStateRemovesContextsByNameListAndPattern() throws {
    let (fixtures, server) = try StatefulMockingTests.launch([
      (
        "mk.json", StatefulMockingTests.listener("mk", "recordState", #"{"context":"CTX","state":{"x":"1"}}"#)
      ),
      ("del.json", StatefulMockingTests.listener("del", "deleteState", #"{"context":"CTX"}"#)),
      (
        "dels.json",
        StatefulMockingTests.listener(
          "dels", "deleteState", #"{"contexts":["knownContextOne","unknown","CTX"]}"#)
      ),
      (
        "match.json",
        StatefulMockingTests.listener("match", "deleteState", #"{"contextsMatching":"{{request.query.re}}"}"#)
      ),
      (
        "queue-add.json",
        StatefulMockingTests.listener(
          "qadd", "recordState", #"{"context":"queue","list":{"addLast":{"v":"CTX"}}}"#)
      ),
      (
        "queue-take.json",
        #"{"request":{"method":"GET","urlPath":"/qtake"},"response":{"status":200,"transformers":["response-template"],"body":"{{state context='queue' list='[0].v' default='empty'}}"},"#
          + #""serveEventListeners":[{"name":"deleteState","parameters":{"context":"queue","list":{"deleteFirst":true}}}]}"#
      ),
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    func names() throws -> [String] {
      try JSONValue.parse(
        StatefulMockingTests.content(
          try StatefulMockingTests.call(p, "GET", "/__admin/state-extension/contexts"))
      )
      .arrayValue?.compactMap(\.stringValue) ?? []
    }
    for n in ["knownContextOne", "knownContextTwo", "extOne", "other"] {
      _ = try StatefulMockingTests.call(p, "POST", "/mk/\(n)")
    }
    _ = try StatefulMockingTests.call(p, "POST", "/del/other")
    _ = try StatefulMockingTests.call(p, "POST", "/del/other")
    #expect(try names() == ["extOne", "knownContextOne", "knownContextTwo"])
    _ = try StatefulMockingTests.call(p, "POST", "/match/x?re=extOne")
    #expect(try names() == ["knownContextOne", "knownContextTwo"])
    _ = try StatefulMockingTests.call(p, "POST", "/dels/knownContextTwo")
    #expect(try names() == [])
    for n in ["a", "b"] { _ = try StatefulMockingTests.call(p, "POST", "/mk/\(n)") }
    _ = try StatefulMockingTests.call(p, "POST", "/match/x?re=.*")
    #expect(try names() == [])
    for v in ["one", "two"] { _ = try StatefulMockingTests.call(p, "POST", "/qadd/\(v)") }
    #expect(StatefulMockingTests.content(get(p, "/qtake")) == "one")
    #expect(StatefulMockingTests.content(get(p, "/qtake")) == "two")
    #expect(StatefulMockingTests.content(get(p, "/qtake")) == "empty")
  }
}

extension StatefulMockingTests {
  /// The admin routes (the extension's AdminApiTest): list names, read one (404 when unknown), delete one
  /// (204, unknown names too), delete all; `POST /__admin/reset` leaves contexts alone. The server checks
  /// each answer against its OpenAPI document (MOCKSERVER_VALIDATE_ADMIN_RESPONSES=1).
  @Test func adminRoutesListReadAndDeleteContexts() throws {
    let (fixtures, server) = try StatefulMockingTests.launch([
      (
        "mk.json",
        StatefulMockingTests.listener(
          "mk", "recordState", #"{"context":"CTX","state":{"x":"1"},"list":{"addLast":{"a":"b"}}}"#)
      )
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    let empty = try StatefulMockingTests.call(p, "GET", "/__admin/state-extension/contexts")
    let emptyList = try JSONValue.parse(StatefulMockingTests.content(empty))
    #expect(status(empty) == 200 && emptyList == .array([]))
    for n in ["one", "two"] { _ = try StatefulMockingTests.call(p, "POST", "/mk/\(n)") }
    let one = try #require(try StatefulMockingTests.context(p, "one"))
    #expect(one["contextName"] == .string("one"))
    #expect(one["properties"] == .object(JSONObject(pairs: [("x", .string("1"))])))
    #expect(one["list"] == .array([.object(JSONObject(pairs: [("a", .string("b"))]))]))
    #expect(one["updateCount"]?.numberValue?.intValue == 1)
    #expect(status(try StatefulMockingTests.call(p, "GET", "/__admin/state-extension/contexts/nope")) == 404)
    #expect(status(try StatefulMockingTests.call(p, "POST", "/__admin/reset")) == 200)
    #expect(try StatefulMockingTests.context(p, "one") != nil)
    #expect(
      status(try StatefulMockingTests.call(p, "DELETE", "/__admin/state-extension/contexts/one")) == 204)
    #expect(
      status(try StatefulMockingTests.call(p, "DELETE", "/__admin/state-extension/contexts/nope")) == 204)
    #expect(try StatefulMockingTests.context(p, "one") == nil)
    #expect(try StatefulMockingTests.context(p, "two") != nil)
    #expect(status(try StatefulMockingTests.call(p, "DELETE", "/__admin/state-extension/contexts")) == 204)
    let after = try StatefulMockingTests.call(p, "GET", "/__admin/state-extension/contexts")
    #expect(try JSONValue.parse(StatefulMockingTests.content(after)) == .array([]))
    let openAPI = try StatefulMockingTests.call(p, "GET", "/__admin/openapi.json")
    #expect(openAPI.contains("/__admin/state-extension/contexts/{name}"))
  }

  /// A context is forgotten `--state-expiration-seconds` after its last write; a read does not extend it.
  @Test func contextsExpireAfterTheirLastWrite() throws {
    let (fixtures, server) = try StatefulMockingTests.launch(
      [
        (
          "mk.json",
          StatefulMockingTests.listener("mk", "recordState", #"{"context":"CTX","state":{"x":"1"}}"#)
        )
      ],
      ["--state-expiration-seconds", "1"])
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    _ = try StatefulMockingTests.call(p, "POST", "/mk/short")
    #expect(try StatefulMockingTests.context(p, "short") != nil)
    #expect(eventually(timeout: 30) { (try? StatefulMockingTests.context(p, "short")) == .some(nil) })
    let (code, output) = try runBinary(["--state-expiration-seconds", "0", "--fixtures", fixtures.fixtures])
    #expect(code == 2 && output.contains("--state-expiration-seconds"), "\(output)")
  }

  /// Every configuration error of the format page is a load error naming the file, the JSON path and what
  /// was expected (`lint` and the admin API say the same).
  @Test func configurationErrorsAreLoadErrorsWithFileAndPath() throws {
    let cases: [(String, String, String)] = [
      (
        #""customMatcher":{"name":"state-matcher","parameters":{"property":{"a":{"equalTo":"b"}}}}"#,
        "$.request.customMatcher.parameters", "hasContext, hasNotContext, and, or or not"
      ),
      (
        #""customMatcher":{"name":"my-matcher","parameters":{}}"#, "$.request.customMatcher.name",
        "state-matcher"
      ),
      (
        #""customMatcher":{"name":"state-matcher","parameters":{"hasContext":"a","property":{"x":{"bogus":"1"}}}}"#,
        "$.request.customMatcher.parameters.property.x", "matcher"
      ),
      (
        #""customMatcher":{"name":"state-matcher","parameters":{"and":[{"hasContext":"a"},{"nothing":1}]}}"#,
        "$.request.customMatcher.parameters.and[1]", "hasContext"
      ),
    ]
    let listenerCases: [(String, String, String)] = [
      (
        #"{"name":"recordState","parameters":{"state":{"a":"b"}}}"#,
        "$.serveEventListeners[0].parameters.context", "context"
      ),
      (
        #"{"name":"recordState","parameters":{"context":"  "}}"#,
        "$.serveEventListeners[0].parameters.context", "not blank"
      ),
      (
        #"{"name":"deleteState","parameters":{}}"#, "$.serveEventListeners[0].parameters",
        "context, contexts or contextsMatching"
      ),
      (
        #"{"name":"deleteState","parameters":{"list":{"deleteFirst":true}}}"#,
        "$.serveEventListeners[0].parameters.context", "list entry deletion"
      ),
      (
        #"{"name":"deleteState","parameters":{"context":"c","list":{"deleteWhere":{"property":"id"}}}}"#,
        "$.serveEventListeners[0].parameters.list.deleteWhere.value", "list entry deletion"
      ),
      (
        #"{"name":"deleteState","parameters":{"contextsMatching":"[a-"}}"#,
        "$.serveEventListeners[0].parameters.contextsMatching", "regular expression"
      ),
    ]
    var files: [(String, String)] = []
    for (k, c) in cases.enumerated() {
      files.append(
        ("m\(k).json", #"{"request":{"method":"GET","urlPath":"/m\#(k)",\#(c.0)},"response":{"status":200}}"#)
      )
    }
    for (k, c) in listenerCases.enumerated() {
      files.append(
        (
          "l\(k).json",
          #"{"request":{"method":"GET","urlPath":"/l\#(k)"},"response":{"status":200},"serveEventListeners":[\#(c.0)]}"#
        ))
    }
    let fixtures = try TemporaryFixtures(files)
    defer { fixtures.remove() }
    let (code, output) = try runBinary(["lint", fixtures.fixtures])
    #expect(code != 0)
    let lines = output.split(separator: "\n").map(String.init)
    for (k, c) in cases.enumerated() {
      #expect(
        lines.contains { $0.contains("m\(k).json") && $0.contains(c.1) && $0.contains(c.2) },
        "m\(k): \(output)")
    }
    for (k, c) in listenerCases.enumerated() {
      #expect(
        lines.contains { $0.contains("l\(k).json") && $0.contains(c.1) && $0.contains(c.2) },
        "l\(k): \(output)")
    }
  }

  /// 1,000 concurrent creates from 32 connections leave exactly 1,000 list entries and 1,000 contexts
  /// (plus the list's own), and every created record is readable at once.
  @Test func concurrentCreatesAllLand() throws {
    let (fixtures, server) = try StatefulMockingTests.launch(
      StatefulMockingTests.crudStubs(split: false), ["--quiet"])
    defer {
      server.stop()
      fixtures.remove()
    }
    let p = server.port
    let failures = Mutex<[String]>([])
    let ids = Mutex<[String]>([])
    DispatchQueue.concurrentPerform(iterations: 32) { worker in
      guard let socket = try? RawClient(port: p) else {
        failures.withLock { $0.append("connect") }
        return
      }
      let count = 1000 / 32 + (worker < 1000 % 32 ? 1 : 0)
      for n in 0..<count {
        let body = #"{"title":"w\#(worker)-\#(n)"}"#
        socket.send(
          "POST /todos HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        )
        let created = socket.readResponse().text
        guard status(created) == 201,
          let id = (try? JSONValue.parse(StatefulMockingTests.content(created)))?["id"]?.stringValue
        else {
          failures.withLock { $0.append(created) }
          continue
        }
        socket.send("GET /todos/\(id) HTTP/1.1\r\nHost: x\r\n\r\n")
        let read = socket.readResponse().text
        if status(read) != 200 || !read.contains("w\(worker)-\(n)") { failures.withLock { $0.append(read) } }
        ids.withLock { $0.append(id) }
      }
    }
    #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(3) })")
    #expect(Set(ids.withLock { $0 }).count == 1000)
    #expect(try StatefulMockingTests.listIDs(p, "todos").count == 1000)
    let names = try JSONValue.parse(
      StatefulMockingTests.content(
        try StatefulMockingTests.call(p, "GET", "/__admin/state-extension/contexts")))
    #expect(names.arrayValue?.count == 1001)
  }
}
