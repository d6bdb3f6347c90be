import Foundation
import HTTPCore
import MockJSON
import Templating
import TestSupport
import Testing

@testable import MockServer
@testable import MockServerCLI

/// WireMock's templating documentation and acceptance tests as a table: each stub is loaded from a
/// mapping file, each request is sent over a loopback socket, and the answer is compared byte for byte.
@Suite("Response templating over sockets")
struct TemplatingSocketTests {
  struct Case: CustomTestStringConvertible, Sendable {
    /// The response body template (a `body` string), unless `response` gives the whole response object.
    var template = ""
    var response: String?
    /// The request part of the stub, when not the default (matched by the `X-Case` header).
    var request: String?
    var method = "GET"
    var target = "/"
    var headers: [(String, String)] = []
    var body = ""
    var expected: String
    var expectedHeader: (String, String)?
    var expectedStatusLine: String?
    var testDescription: String { response ?? template }
  }

  // 2018-05-05T10:11:12Z
  static let fixedTime: Int64 = 1_525_515_072_000

  static let cases: [Case] = [
    // The request model
    Case(
      template: "{{request.url}}", target: "/the/entire/path?query1=one&query2=two",
      expected: "/the/entire/path?query1=one&query2=two"),
    Case(template: "Path: {{request.path}}", target: "/the/entire/path", expected: "Path: /the/entire/path"),
    Case(
      template: "First: {{request.path.[0]}}, Last: {{request.path.[2]}}", target: "/the/entire/path",
      expected: "First: the, Last: path"),
    Case(template: "{{request.pathSegments.[1]}}", target: "/the/entire/path", expected: "entire"),
    Case(template: "{{request.path.[0]}}", target: "/", expected: ""),
    Case(
      template:
        "Multi 1: {{request.query.multi_param.[0]}}, Multi 2: {{request.query.multi_param.[1]}}, Single 1: {{request.query.single-param}}",
      target: "/things?multi_param=one&multi_param=two&single-param=1234",
      expected: "Multi 1: one, Multi 2: two, Single 1: 1234"),
    Case(
      template: "{{request.query.things.first}}-{{request.query.things.last}}-{{request.query.things.[-2]}}",
      target: "/?things=1&things=2&things=3&things=4", expected: "1-4-3"),
    Case(
      template: "{{request.query.search}}", target: "/?search=look+at+my+%27single+quotes%27",
      expected: "look at my 'single quotes'"),
    Case(
      template: "{{lookup request.query 'filter[order_id]'}}", target: "/?filter%5Border_id%5D=123",
      expected: "123"),
    Case(template: "{{request.method}}", method: "PUT", expected: "PUT"),
    Case(template: "{{request.scheme}}://{{request.host}}", expected: "http://127.0.0.1"),
    Case(template: "{{request.clientIp}}", expected: "127.0.0.1"),
    Case(
      template: "Request ID: {{request.headers.X-Request-Id}}", headers: [("X-Request-Id", "req-id-1234")],
      expected: "Request ID: req-id-1234"),
    Case(template: "{{request.headers.x-request-id}}", headers: [("X-REQUEST-ID", "abc")], expected: "abc"),
    Case(
      template: "{{request.headers.X-Multi.[1]}}", headers: [("X-Multi", "a"), ("X-Multi", "b")],
      expected: "b"),
    Case(
      template: "{{request.headers.[123$%$^&__why_o_why]}}", headers: [("123$%$^&__why_o_why", "foundit")],
      expected: "foundit"),
    Case(
      template: "session: {{request.cookies.session}}",
      headers: [("Cookie", "session=session-1234; other=x")], expected: "session: session-1234"),
    Case(
      template: "Body: {{{request.body}}}", method: "POST", body: "All of the body content",
      expected: "Body: All of the body content"),
    Case(template: "{{request.bodyAsBase64}}", method: "POST", body: "hello", expected: "aGVsbG8="),
    Case(
      template: "{{request.path.contactId}} {{request.path.addressId}}",
      request: #"{"urlPathTemplate": "/contacts/{contactId}/addresses/{addressId}"}"#,
      target: "/contacts/12345/addresses/99876", expected: "12345 99876"),
    // Percent-encoded variables (the full match's path) and a template among literal stubs: the
    // parameters are made from the request's path only when the response reads them.
    Case(
      template: "{{request.path.contactId}}|{{request.path.addressId}}",
      request: #"{"urlPathTemplate": "/contacts/{contactId}/addresses/{addressId}"}"#,
      target: "/contacts/a%20b/addresses/%C3%A9", expected: "a b|é"),
    Case(
      response:
        #"{"status": 200, "transformerParameters": {"variable": "some.value"}, "body": "{\"test\": \"{{parameters.variable}}\"}", "transformers": ["response-template"]}"#,
      expected: #"{"test": "some.value"}"#),
    // Where templates apply
    Case(
      response:
        #"{"jsonBody": {"id": "{{request.path.[1]}}", "ok": true, "n": 1.50}, "transformers": ["response-template"]}"#,
      target: "/users/42", expected: #"{"id":"42","ok":true,"n":1.50}"#),
    Case(
      response:
        #"{"headers": {"X-Correlation-Id": "{{request.headers.X-Correlation-Id}}"}, "body": "ok", "transformers": ["response-template"]}"#,
      headers: [("X-Correlation-Id", "12345")], expected: "ok", expectedHeader: ("X-Correlation-Id", "12345")),
    Case(
      response:
        #"{"headers": {"Location": "/things/{{request.query.id}}"}, "status": 201, "transformers": ["response-template"]}"#,
      target: "/things?id=7", expected: "", expectedHeader: ("Location", "/things/7")),
    Case(
      response:
        #"{"status": 418, "statusMessage": "I am {{request.query.who}}", "body": "", "transformers": ["response-template"]}"#,
      target: "/?who=a+teapot", expected: "", expectedStatusLine: "HTTP/1.1 418 I am a teapot"),
    Case(
      response:
        #"{"bodyFileName": "greet-{{request.query.name}}.txt", "transformers": ["response-template"]}"#,
      target: "/?name=Ram", expected: "Hello Ram"),
    Case(
      response: #"{"bodyFileName": "templated.txt", "transformers": ["response-template"]}"#,
      target: "/?name=Ann", expected: "Dear Ann"),
    Case(
      response:
        #"{"bodyFileName": "templated.txt", "transformers": ["response-template"], "transformerParameters": {"disableBodyFileTemplating": true}}"#,
      expected: "Dear {{request.query.name}}"),
    Case(response: #"{"body": "{{request.path}}"}"#, target: "/not/templated", expected: "{{request.path}}"),
    // Helpers
    Case(
      template: "{{jsonPath request.body '$.a.test'}}", method: "POST", body: #"{"a":{"test":"success"}}"#,
      expected: "success"),
    Case(
      template: "{\"check\": {{jsonPath request.body '$.a'}} }", method: "POST",
      body: #"{"a":{"test":"success"}}"#, expected: "{\"check\": {\n  \"test\" : \"success\"\n} }"),
    Case(
      template: "{{jsonPath request.body '$.things[0].id'}}", method: "POST",
      body: #"{"things":[{"id":7},{"id":8}]}"#, expected: "7"),
    Case(
      template: "{{jsonPath request.body '$.b' default='foo'}}", method: "POST", body: #"{"a":1}"#,
      expected: "foo"),
    Case(
      template: "{{jsonPath request.body '$.a'}}", method: "POST", body: "not json",
      expected: "[ERROR: not json is not valid JSON]"),
    Case(
      template: "{{#each (jsonPath request.body '$.items') as |item|}}{{item.name}} {{/each}}",
      method: "POST",
      body: #"{"items":[{"name":"One"},{"name":"Two"},{"name":"Three"}]}"#, expected: "One Two Three "),
    Case(
      template: "{{#assign 'j'}}{\"name\":\"Ann\"}{{/assign}}{{lookup (parseJson j) 'name'}}", expected: "Ann"
    ),
    Case(template: "{{toJson request.query}}", target: "/?a=1", expected: "{\n  \"a\" : \"1\"\n}"),
    Case(
      template: "{{#formatJson format='compact'}} { \"foo\" : true } {{/formatJson}}",
      expected: #"{"foo":true}"#),
    Case(
      template: "{{regexExtract request.body '[A-Z]+'}}", method: "POST", body: "abc-DEF-123", expected: "DEF"
    ),
    Case(
      template:
        "{{regexExtract request.body '([a-z]+)-([A-Z]+)-([0-9]+)' 'parts'}}{{parts.0}},{{parts.1}},{{parts.2}}",
      method: "POST", body: "abc-DEF-123", expected: "abc,DEF,123"),
    Case(
      template: "{{regexExtract 'abc' '[0-9]+' default='my default value'}}", expected: "my default value"),
    Case(template: "{{size (randomValue length=33 type='ALPHANUMERIC')}}", expected: "33"),
    Case(template: "{{size (randomValue type='UUID')}}", expected: "36"),
    Case(
      template: "{{#if (matches (randomInt lower=5 upper=9) '[5-8]')}}in range{{/if}}", expected: "in range"),
    Case(
      template: "{{#contains (array 'a' 'b') (pickRandom 'a' 'b')}}picked{{/contains}}", expected: "picked"),
    Case(template: "{{now}}", expected: "2018-05-05T10:11:12Z"),
    Case(template: "{{now offset='3 days'}}", expected: "2018-05-08T10:11:12Z"),
    Case(template: "{{now offset='-24 hours' format='yyyy-MM-dd'}}", expected: "2018-05-04"),
    Case(template: "{{now format='epoch'}}", expected: "1525515072000"),
    Case(template: "{{now format='unix'}}", expected: "1525515072"),
    Case(
      template: "{{now timezone='Australia/Sydney' format='yyyy-MM-dd HH:mm:ssZ'}}",
      expected: "2018-05-05 20:11:12+1000"),
    Case(
      template: "{{date (parseDate request.headers.MyDate) offset='-1 days'}}",
      headers: [("MyDate", "2020-03-01T00:00:00Z")], expected: "2020-02-29T00:00:00Z"),
    Case(
      template: "{{date (parseDate '16/04/2018' format='dd/MM/yyyy') offset='5 days' format='yyyy-MM-dd'}}",
      expected: "2018-04-21"),
    Case(
      template: "{{date (truncateDate (parseDate '2021-06-29T11:22:33Z') 'first day of month')}}",
      expected: "2021-06-01T00:00:00Z"),
    Case(
      template: "{{math 1 '+' 2}} {{math 10 '-' 3}} {{math 2 '*' 3}} {{math 15 '/' 3}} {{math 11 '%' 3}}",
      expected: "3 7 6 5 2"),
    Case(template: "{{math request.query.a '+' request.query.b}}", target: "/?a=2&b=40", expected: "42"),
    Case(template: "{{range 3 8}}", expected: "[3, 4, 5, 6, 7, 8]"),
    Case(template: "{{array 1 'two' true}}", expected: "[1, two, true]"),
    Case(template: "{{size request.query.things}}", target: "/?things=1&things=2&things=3", expected: "3"),
    Case(
      template: "{{#eq request.headers.X-Thing '1'}}ONE{{else}}MANY{{/eq}}", headers: [("X-Thing", "1")],
      expected: "ONE"),
    Case(
      template: "{{#if (eq request.query.a 'x')}}x{{else if (eq request.query.a 'y')}}y{{else}}z{{/if}}",
      target: "/?a=y", expected: "y"),
    Case(template: "{{#unless request.query.a}}none{{/unless}}", expected: "none"),
    Case(template: "{{#gt request.query.n 10}}big{{else}}small{{/gt}}", target: "/?n=11", expected: "big"),
    Case(
      template: "{{#and (lt 1 2) (not false)}}yes{{/and}} {{#or false request.query.x}}x{{else}}no{{/or}}",
      expected: "yes no"),
    Case(
      template: "{{#each request.query.id}}{{@index}}={{this}}{{#unless @last}},{{/unless}}{{/each}}",
      target: "/?id=a&id=b&id=c", expected: "0=a,1=b,2=c"),
    Case(
      template: "{{#with request.headers}}{{X-A}}{{/with}}", headers: [("X-A", "in scope")],
      expected: "in scope"),
    Case(
      template: "{{trim '   stuff  '}}|{{upper 'abc'}}|{{lower 'DEF'}}|{{capitalize 'some text'}}",
      expected: "stuff|ABC|def|Some Text"),
    Case(template: "{{abbreviate 'Mocking with WireMock' 10}}", expected: "Mocking..."),
    Case(template: "{{replace request.query.s '-' ' '}}", target: "/?s=a-b-c", expected: "a b c"),
    Case(template: "{{substring 'one two' 4}}", expected: "two"),
    Case(template: "{{arrayJoin ',' (array 'One' 'Two' 'Three')}}", expected: "One,Two,Three"),
    Case(template: "{{join request.query.x ', '}}", target: "/?x=a&x=b", expected: "a, b"),
    Case(template: "{{base64 'hello'}} {{base64 'aGVsbG8=' decode=true}}", expected: "aGVsbG8= hello"),
    Case(
      template: "{{urlEncode 'one two'}} {{urlEncode 'one+two' decode=true}}", expected: "one+two one two"),
    Case(template: "{{val request.query.missing or='fallback'}}", expected: "fallback"),
    Case(
      template: "{{val 10 assign='n'}}{{#lt n 20}}Less Than{{else}}More Than{{/lt}}", expected: "Less Than"),
    Case(template: "{{systemValue key='HOME'}}", expected: "[ERROR: Access to HOME is denied]"),
    Case(template: "{{#if (contains (hostname) '')}}host{{/if}}", expected: "host"),
    Case(template: "a {{!-- comment --}}b {{~ 'c' ~}} d", expected: "a bcd"),
    Case(template: "{{{request.query.q}}} {{request.query.q}}", target: "/?q=%3Cb%3E", expected: "<b> <b>"),
    // xPath gives WireMock's ListOrSingle: one node is still a list of one ({{#each}} runs once, size 1)
    Case(
      template:
        "{{#each (xPath request.body '/stuff/thing') as |thing|}}[{{thing.attributes.id}}:{{thing.text}}]{{/each}}",
      method: "POST", body: "<stuff><thing id=\"1\">One</thing></stuff>", expected: "[1:One]"),
    Case(
      template: "{{#each (xPath request.body '/stuff/thing/text()')}}[{{this}}]{{else}}none{{/each}}",
      method: "POST", body: "<stuff><thing>One</thing></stuff>", expected: "[One]"),
    Case(
      template: "{{size (xPath request.body '/stuff/thing')}} {{xPath request.body '/stuff/thing/text()'}}",
      method: "POST", body: "<stuff><thing>One</thing></stuff>", expected: "1 One"),
    // stringFormat's %f and %e round the decimal value half up, as Java's String.format does
    Case(
      template: "{{stringFormat '%.2f|%.2f|%.2f|%.0f|%.1f|%.2f' 0.125 1.005 2.675 1234.5 9.96 -0.125}}",
      expected: "0.13|1.01|2.68|1235|10.0|-0.13"),
    Case(
      template: "{{stringFormat '%f|%.3f|%,.2f|%08.2f' 3.14159265 0.0004 1234567.891 3.14159}}",
      expected: "3.141593|0.000|1,234,567.89|00003.14"),
    Case(
      template: "{{stringFormat '%e|%.2E|%.1e' 12345.678 0.000125 0.0}}",
      expected: "1.234568e+04|1.25E-04|0.0e+00"),
    Case(
      template: "{{stringFormat '%.2f' (jsonPath request.body '$.price')}}", method: "POST",
      body: #"{"price": 10.005}"#, expected: "10.01"),
    // dateFormat takes what now, date and parseDate give (the date's own format and zone do not apply)
    Case(template: "{{dateFormat (now) 'yyyy-MM-dd HH:mm:ss'}}", expected: "2018-05-05 10:11:12"),
    Case(template: "{{dateFormat (now offset='1 days') 'full'}}", expected: "Sunday, May 6, 2018"),
    Case(template: "{{dateFormat (now format='epoch') 'short'}}", expected: "5/5/18"),
    Case(
      template:
        "{{dateFormat (now timezone='Australia/Sydney') 'HH:mm'}} {{dateFormat (now) 'HH:mm' tz='Australia/Sydney'}}",
      expected: "10:11 20:11"),
    Case(template: "{{dateFormat (now) format='yyyy'}}", expected: "2018"),
    Case(template: "{{dateFormat (date (now) offset='-1 months') 'MMMM'}}", expected: "April"),
  ]

  static func stubs() -> String {
    var stubs: [String] = []
    for (k, c) in cases.enumerated() {
      let request =
        c.request.map { $0.dropLast() + #", "headers": {"X-Case": {"equalTo": "\#(k)"}}}"# }
        ?? #"{"urlPattern": ".*", "headers": {"X-Case": {"equalTo": "\#(k)"}}}"#
      let response =
        c.response
        ?? #"{"status": 200, "body": \#(JSONValue.quoted(c.template)), "transformers": ["response-template"]}"#
      stubs.append(#"{"request": \#(request), "response": \#(response)}"#)
    }
    return "[" + stubs.joined(separator: ",\n") + "]"
  }

  /// Sends one request and returns the status line, the headers and the body.
  static func exchange(port: Int, _ c: Case, index: Int) throws -> (String, [(String, String)], String) {
    let client = try RawClient(port: port)
    var text = "\(c.method) \(c.target) HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Case: \(index)\r\n"
    for (n, v) in c.headers { text += "\(n): \(v)\r\n" }
    if !c.body.isEmpty || c.method == "POST" { text += "Content-Length: \(c.body.utf8.count)\r\n" }
    text += "Connection: close\r\n\r\n" + c.body
    client.send(text)
    let (raw, _) = client.read(timeout: 10) { RawClient.responseCount($0) >= 1 }
    guard let split = raw.firstRange(of: [13, 10, 13, 10]) else { return ("", [], "") }
    let head = String(decoding: raw[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
    let headers = head.dropFirst().compactMap { line -> (String, String)? in
      guard let colon = line.firstIndex(of: ":") else { return nil }
      return (String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
    }
    return (head[0], headers, String(decoding: raw[split.upperBound...], as: UTF8.self))
  }

  @Test("WireMock's documented examples render the same text")
  func documentedExamples() async throws {
    #expect(Self.cases.count >= 60)
    try await withMockServer(
      mappings: Self.stubs(),
      files: ["greet-Ram.txt": "Hello Ram", "templated.txt": "Dear {{request.query.name}}"],
      configure: { $0.templating.environment.fixedTimeMilliseconds = Self.fixedTime }
    ) { server, _ in
      for (k, c) in Self.cases.enumerated() {
        let (status, headers, body) = try Self.exchange(port: server.port, c, index: k)
        #expect(body == c.expected, "case \(k): \(c.testDescription)")
        if let (name, value) = c.expectedHeader {
          #expect(
            headers.first { $0.0.lowercased() == name.lowercased() }?.1 == value, "case \(k) header \(name)")
        }
        if let line = c.expectedStatusLine { #expect(status == line, "case \(k)") }
      }
    }
  }

  @Test("global templating renders stubs without the transformer; local mode does not")
  func globalMode() async throws {
    let stubs = #"[{"request": {"urlPath": "/g"}, "response": {"body": "{{request.query.x}}"}}]"#
    let one = Case(target: "/g?x=7", expected: "")
    try await withMockServer(mappings: stubs) { server, _ in
      let body = try Self.exchange(port: server.port, one, index: 0).2
      #expect(body == "{{request.query.x}}")
    }
    try await withMockServer(mappings: stubs, configure: { $0.templating.global = true }) { server, _ in
      let body = try Self.exchange(port: server.port, one, index: 0).2
      #expect(body == "7")
    }
  }

  /// One request on its own connection (`Connection: close`): the head's lines without `Date`, and the
  /// content.
  static func rawExchange(_ port: Int, _ method: String, _ target: String, _ fields: String = "") throws
    -> (head: [String], body: String)
  {
    let client = try RawClient(port: port)
    client.send("\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(fields)Connection: close\r\n\r\n")
    let (raw, _) = client.read(timeout: 10)
    guard let split = raw.firstRange(of: [13, 10, 13, 10]) else { return ([], "") }
    let head = String(decoding: raw[..<split.lowerBound], as: UTF8.self).components(separatedBy: "\r\n")
    return (head.filter { !$0.hasPrefix("Date:") }, String(decoding: raw[split.upperBound...], as: UTF8.self))
  }

  @Test(
    "every way a stub answers names it once: prepared, negotiated (gzip), templated, empty rendering, CORS, sequence"
  )
  func matchedStubFieldsOnEveryPath() async throws {
    let stubs = """
      [{"id": "00000000-0000-4000-8000-000000000001", "name": "plain", "request": {"urlPath": "/p"}, "response": {"body": "plain"}},
       {"id": "00000000-0000-4000-8000-000000000002", "request": {"urlPath": "/t"}, "response": {"headers": {"X-Q": "{{request.query.q}}"}, "body": "{{request.query.q}}", "transformers": ["response-template"]}},
       {"id": "00000000-0000-4000-8000-000000000003", "x-cors": true, "request": {"urlPath": "/c"}, "response": {"body": "c"}},
       {"id": "00000000-0000-4000-8000-000000000004", "request": {"urlPath": "/s"}, "x-responseSequence": {"responses": [{"body": "first"}, {"body": "second"}]}}]
      """
    try await withMockServer(mappings: stubs) { server, _ in
      func ids(_ target: String, _ fields: String = "") throws -> [String] {
        try Self.rawExchange(server.port, "GET", target, fields).head.filter { $0.hasPrefix("Matched-Stub-") }
      }
      let one = "Matched-Stub-Id: 00000000-0000-4000-8000-000000000001"
      for _ in 0..<2 {  // the first answer prepares the head, the second is served from it
        #expect(try ids("/p") == [one, "Matched-Stub-Name: plain"])
      }
      #expect(try ids("/p", "Accept-Encoding: gzip\r\n") == [one, "Matched-Stub-Name: plain"])
      let two = ["Matched-Stub-Id: 00000000-0000-4000-8000-000000000002"]
      #expect(try ids("/t?q=a") == two)
      #expect(try ids("/t") == two)  // an empty rendering
      let templated = try Self.rawExchange(server.port, "GET", "/t?q=abc")
      #expect(templated.head.contains("X-Q: abc"))
      #expect(
        try ids("/c", "Origin: http://app.test\r\n") == [
          "Matched-Stub-Id: 00000000-0000-4000-8000-000000000003"
        ])
      #expect(try ids("/s") == ["Matched-Stub-Id: 00000000-0000-4000-8000-000000000004"])
      #expect(try ids("/s") == ["Matched-Stub-Id: 00000000-0000-4000-8000-000000000004"])
    }
  }

  @Test("a templated body goes out with the stub's prepared head: the same bytes as an untemplated stub")
  func preparedHeadWithRenderedBody() async throws {
    let head =
      #""status": 201, "headers": {"Content-Type": "application/json", "X-Fixed": "yes", "Content-Length": "999"}"#
    let stubs = """
      [{"request": {"urlPath": "/t"}, "response": {\(head), "body": "{\\"q\\":\\"{{request.query.q}}\\"}", "transformers": ["response-template"]}},
       {"request": {"urlPath": "/s"}, "response": {\(head), "body": "{\\"q\\":\\"a\\"}"}},
       {"request": {"urlPath": "/e"}, "response": {"body": "{{request.query.q}}", "transformers": ["response-template"]}},
       {"request": {"urlPath": "/se"}, "response": {"body": ""}},
       {"request": {"urlPath": "/big"}, "response": {"body": "{{request.query.q}}{{#each (range 1 100)}}abcdefgh{{/each}}", "transformers": ["response-template"]}}]
      """
    try await withMockServer(mappings: stubs) { server, _ in
      let templated = try Self.rawExchange(server.port, "GET", "/t?q=a")
      let literal = try Self.rawExchange(server.port, "GET", "/s?q=a")
      #expect(templated.body == #"{"q":"a"}"#)
      // The same head but for the line naming the stub that answered.
      let named = { (line: String) in line.hasPrefix("Matched-Stub-Id: ") }
      #expect(templated.head.filter { !named($0) } == literal.head.filter { !named($0) })
      #expect(templated.head.filter(named).count == 1)
      #expect(templated.head.first == "HTTP/1.1 201 Created")
      #expect(templated.head.filter { $0.lowercased().hasPrefix("content-length:") } == ["Content-Length: 9"])
      #expect(templated.head.contains("X-Fixed: yes"))
      // Each rendering is framed by its own length; HEAD announces it and sends nothing.
      let longer = try Self.rawExchange(server.port, "GET", "/t?q=longer-value")
      #expect(longer.body == #"{"q":"longer-value"}"#)
      #expect(longer.head.contains("Content-Length: \(longer.body.utf8.count)"))
      let headOnly = try Self.rawExchange(server.port, "HEAD", "/t?q=abc")
      #expect(headOnly.head.contains("Content-Length: 11"))
      #expect(headOnly.body.isEmpty)
      // An empty rendering is framed as an empty literal body is.
      let empty = try Self.rawExchange(server.port, "GET", "/e")
      #expect(empty.body.isEmpty)
      #expect(
        empty.head.filter { !named($0) }
          == (try Self.rawExchange(server.port, "GET", "/se")).head.filter { !named($0) })
      // Asked for gzip, a large rendering is compressed as before.
      let gzip = try Self.rawExchange(server.port, "GET", "/big?q=x", "Accept-Encoding: gzip\r\n")
      #expect(gzip.head.contains("Content-Encoding: gzip"))
      let plain = try Self.rawExchange(server.port, "GET", "/big?q=x")
      #expect(plain.body == "x" + String(repeating: "abcdefgh", count: 100))
    }
  }

  @Test("--seed makes random helpers reproducible")
  func seeded() async throws {
    let stubs = #"""
      [{"request": {"urlPath": "/r"}, "response": {"body": "{{randomValue length=10}} {{randomValue type='UUID'}} {{randomInt}}", "transformers": ["response-template"]}}]
      """#
    var answers: [String] = []
    for _ in 0..<2 {
      try await withMockServer(mappings: stubs, configure: { $0.seed = 42 }) { server, _ in
        answers.append(try Self.exchange(port: server.port, Case(target: "/r", expected: ""), index: 0).2)
      }
    }
    #expect(answers[0] == answers[1])
    #expect(answers[0].count > 40)
  }

  @Test("HTML escaping of {{expr}} is an option")
  func escaping() async throws {
    let stubs = #"""
      [{"request": {"urlPath": "/e"}, "response": {"body": "{{request.query.q}}|{{{request.query.q}}}", "transformers": ["response-template"]}}]
      """#
    try await withMockServer(mappings: stubs, configure: { $0.templating.environment.escapesHTML = true }) {
      server, _ in
      let body = try Self.exchange(port: server.port, Case(target: "/e?q=%3Ca%3E", expected: ""), index: 0).2
      #expect(body == "&lt;a&gt;|<a>")
    }
  }

  @Test("template syntax errors are located lint errors")
  func lint() async throws {
    let stubs = #"""
      [{"request": {"urlPath": "/x"}, "response": {"body": "[{{#each request.query.id}}", "transformers": ["response-template"]}},
       {"request": {"urlPath": "/y"}, "response": {"headers": {"X-A": "{{nope 1}}"}, "transformers": ["response-template"]}}]
      """#
    do {
      try await withMockServer(mappings: stubs) { _, _ in }
      Issue.record("the fixtures loaded")
    } catch HarnessError.invalidFixtures(let report) {
      #expect(
        report.contains("$.mappings[0].response.body: 1:2: unclosed {{#each}} opened at 1:2"), "\(report)")
      #expect(report.contains("$.mappings[1].response.headers.X-A: 1:3: unknown helper 'nope'"), "\(report)")
    }
  }
}

@Suite("Bundled templated fixtures")
struct TemplatedFixtureTests {
  @Test("Fixtures/mappings/orders.json answers as the README shows")
  func readmeExample() async throws {
    let fixtures = FixtureLoader.load(directory: bundledFixtures)
    var configuration = MockServiceConfiguration()
    configuration.adminResponseCheck = AdminResponseCheck.fromEnvironment
    configuration.logLevel = .quiet
    configuration.seed = 7
    configuration.templating.environment.fixedTimeMilliseconds = TemplateDateParsing.milliseconds(
      "2026-11-30T12:00:00Z")
    let service = MockService(configuration: configuration, fixtures: fixtures)
    var serverConfiguration = ServerConfiguration()
    serverConfiguration.port = 0
    let server = HTTPServer(configuration: serverConfiguration, responder: service)
    try server.start()
    defer { server.shutdown(graceful: false) }
    let get = TemplatingSocketTests.Case(request: nil, target: "/api/v1/orders/A-1042", expected: "")
    let (getStatus, _, getBody) = try TemplatingSocketTests.exchange(port: server.port, get, index: 0)
    #expect(getStatus == "HTTP/1.1 200 OK")
    #expect(getBody == #"{"status":"OK","result":{"id":"A-1042","state":"shipped"}}"#)
    let post = TemplatingSocketTests.Case(
      method: "POST", target: "/api/v1/orders", headers: [("Content-Type", "application/json")],
      body: #"{"item":"book","quantity":2}"#, expected: "")
    let (postStatus, _, postBody) = try TemplatingSocketTests.exchange(port: server.port, post, index: 0)
    #expect(postStatus == "HTTP/1.1 201 Created")
    #expect(
      postBody
        == #"{"status":"OK","result":{"id":"c13b5277-6948-49bf-b756-c3e68c8f8913","item":"book","quantity":2,"createdAt":"2026-11-30T12:00:00Z"}}"#
    )
  }
}

/// `--fixed-time` parsing, as the command line does it.
enum TemplateDateParsing {
  static func milliseconds(_ iso: String) -> Int64? {
    Templating.TemplateDate.epochMilliseconds(iso8601: iso)
  }
}

@Suite("Templating through the admin API and the command line")
struct TemplatingAdminAndCLITests {
  @Test("a templated stub added with POST /__admin/mappings renders; a broken template is refused, located")
  func adminMappings() async throws {
    try await withMockService { _, port in
      let good = #"""
        {"request": {"urlPathTemplate": "/hello/{name}"},
         "response": {"body": "Hello {{request.path.name}}", "transformers": ["response-template"]}}
        """#
      #expect(try http(port, "POST", "/__admin/mappings", body: good).status == 201)
      #expect(try http(port, "GET", "/hello/Ann").body == "Hello Ann")
      let bad = #"""
        {"request": {"urlPath": "/bad"},
         "response": {"body": "{{#if request.query.a}}x", "transformers": ["response-template"]}}
        """#
      let refused = try http(port, "POST", "/__admin/mappings", body: bad)
      #expect(refused.status >= 400 && refused.status < 500)
      #expect(refused.body.contains("1:1: unclosed {{#if}} opened at 1:1"), "\(refused.body)")
    }
  }

  @Test("command line flags set the templating configuration")
  func commandLine() throws {
    let options = try CommandLineOptions.parse([
      "--global-response-templating", "--template-escaping", "--fixed-time", "2018-05-05T10:11:12Z",
      "--template-env", "HOME,REGION",
    ])
    #expect(options.templating.global)
    #expect(options.templating.local)
    #expect(options.templating.environment.escapesHTML)
    #expect(options.templating.environment.fixedTimeMilliseconds == 1_525_515_072_000)
    #expect(options.templating.environment.allowedEnvironment == ["HOME", "REGION"])
    #expect(throws: CommandLineOptions.UsageError.self) {
      try CommandLineOptions.parse(["--fixed-time", "soon"])
    }
    #expect(!(try CommandLineOptions.parse([])).templating.global)
  }
}
