import HTTPCore
import MockJSON
import Testing

@testable import Templating

/// Renders `template` for a request; the engine alone (the socket-level table is in MockServerTests).
func render(
  _ template: String, url: String = "/", method: HTTPMethod = .get, headers: [(String, String)] = [],
  body: String = "", parameters: TemplateValue = .null,
  environment: TemplateEnvironment = TemplateEnvironment(),
  seed: UInt64 = 1, pathParameters: [(String, String)] = []
) throws -> String {
  let request = HTTPRequest(
    head: HTTPRequestHead(method: method, target: url, headers: HTTPHeaders(headers)), body: Array(body.utf8))
  let model = TemplateRequest.model(
    request, host: "localhost", port: 8080, clientIP: "127.0.0.1", id: "req-1", pathParameters: pathParameters
  )
  var env = environment
  // 2018-05-05T10:11:12Z
  if env.fixedTimeMilliseconds == nil { env.fixedTimeMilliseconds = 1_525_515_072_000 }
  return try Template(template).render(
    TemplateContext(request: model, parameters: parameters, environment: env, seed: seed)
  ).text
}

struct TemplateEngineTests {
  struct Case: CustomTestStringConvertible, Sendable {
    var template: String
    var url = "/"
    var headers: [(String, String)] = []
    var body = ""
    var expected: String
    var testDescription: String { template }
  }

  static let cases: [Case] = [
    Case(template: "Hello {{request.query.name}}", url: "/?name=Ann", expected: "Hello Ann"),
    Case(
      template:
        "Multi 1: {{request.query.multi_param.[0]}}, Multi 2: {{request.query.multi_param.[1]}}, Single 1: {{request.query.single-param}}",
      url: "/things?multi_param=one&multi_param=two&single-param=1234",
      expected: "Multi 1: one, Multi 2: two, Single 1: 1234"),
    Case(template: "{{request.query.multi_param.[0]}}", expected: ""),
    Case(
      template:
        "Request ID: {{request.headers.X-Request-Id}}, Awkward: {{request.headers.[123$%$^&__why_o_why]}}",
      headers: [("X-Request-Id", "req-id-1234"), ("123$%$^&__why_o_why", "foundit")],
      expected: "Request ID: req-id-1234, Awkward: foundit"),
    Case(
      template: "{{request.headers.case-key-123}}, {{request.headers.[case-key-123]}}",
      headers: [("Case-KEY-123", "foundit")], expected: "foundit, foundit"),
    Case(
      template: "session: {{request.cookies.session}}, awkward: {{request.cookies.[)((**#$@#]}}",
      headers: [("Cookie", "session=session-1234; )((**#$@#=foundit")],
      expected: "session: session-1234, awkward: foundit"),
    Case(
      template: "{{request.cookies.multi}}, {{request.cookies.multi.[0]}}, {{request.cookies.multi.[1]}}",
      headers: [("Cookie", "multi=one; multi=two")], expected: "one, one, two"),
    Case(template: "Path: {{request.path}}", url: "/the/entire/path", expected: "Path: /the/entire/path"),
    Case(
      template: "First: {{request.path.[0]}}, Last: {{request.path.[2]}}", url: "/the/entire/path",
      expected: "First: the, Last: path"),
    Case(template: "{{request.path.[0]}}", url: "/", expected: ""),
    Case(
      template: "URL: {{{request.url}}}", url: "/the/entire/path?query1=one&query2=two",
      expected: "URL: /the/entire/path?query1=one&query2=two"),
    Case(template: "IP: {{{request.clientIp}}}", expected: "IP: 127.0.0.1"),
    Case(
      template: "Body: {{{request.body}}}", body: "All of the body content",
      expected: "Body: All of the body content"),
    Case(template: "{{{ capitalize request.body }}}", body: "some text", expected: "Some Text"),
    Case(
      template: "{{#eq request.headers.X-Thing.[0] '1'}}ONE{{else}}MANY{{/eq}}", headers: [("X-Thing", "1")],
      expected: "ONE"),
    Case(template: "{{{eq 5 5 yes='y' no='n'}}}", expected: "y"),
    Case(template: "{{request.baseUrl}}", expected: "http://localhost:8080"),
    Case(template: "{{request.pathSegments.[0]}}", url: "/the/entire/path", expected: "the"),
    Case(template: "{{request.id}}", expected: "req-1"),
    Case(
      template: "{{request.method}} {{request.scheme}} {{request.host}} {{request.port}}",
      expected: "GET http localhost 8080"),
    Case(template: "{{trim '   stuff  '}}", expected: "stuff"),
    Case(template: "{{#trim}}\n  stuff\n  {{/trim}}", expected: "stuff"),
    Case(template: "{{#base64}}hello{{/base64}}", expected: "aGVsbG8="),
    Case(template: "{{{base64 'hello'}}}", expected: "aGVsbG8="),
    Case(template: "{{{base64 'hello' padding=false}}}", expected: "aGVsbG8"),
    Case(template: "{{{base64 'aGVsbG8=' decode=true}}}", expected: "hello"),
    Case(template: "{{{base64 'aGVsbG8' decode=true}}}", expected: "hello"),
    Case(template: "{{{urlEncode 'one two'}}}", expected: "one+two"),
    Case(template: "{{#urlEncode}}Content to encode{{/urlEncode}}", expected: "Content+to+encode"),
    Case(template: "{{{urlEncode 'one+two' decode=true}}}", expected: "one two"),
    Case(
      template: "{{#urlEncode decode=true}}Content%20to%20decode{{/urlEncode}}", expected: "Content to decode"
    ),
    Case(template: "{{regexExtract request.body '[A-Z]+'}}", body: "abc-DEF-123", expected: "DEF"),
    Case(
      template:
        "{{regexExtract request.body '([a-z]+)-([A-Z]+)-([0-9]+)' 'parts'}}{{parts.0}},{{parts.1}},{{parts.2}}",
      body: "abc-DEF-123", expected: "abc,DEF,123"),
    Case(template: "{{regexExtract 'abc' '[0-9]+'}}", expected: "[ERROR: Nothing matched [0-9]+]"),
    Case(
      template: "{{regexExtract 'abc' '[0-9]+' default='my default value'}}", expected: "my default value"),
    Case(template: "{{size 'abcde'}}", expected: "5"),
    Case(
      template: "{{size request.query.things}}", url: "/?things=1&things=2&things=3&things=4", expected: "4"),
    Case(template: "{{size request.query}}", url: "/stuff?one=1&two=2&three=3", expected: "3"),
    Case(
      template: "{{request.query.things.first}}", url: "/?things=1&things=2&things=3&things=4", expected: "1"),
    Case(
      template: "{{request.query.things.last}}", url: "/?things=1&things=2&things=3&things=4", expected: "4"),
    Case(template: "{{request.query.things.[-2]}}", url: "/?things=1&things=2&things=3", expected: "2"),
    Case(
      template: "{{lookup request.query 'filter[order_id]'}}", url: "/?filter%5Border_id%5D=123",
      expected: "123"),
    Case(
      template: "Start \n\n {{request.query.one}} middle {{{request.query.two}}} end\n", url: "/?one=1&two=2",
      expected: "Start \n\n 1 middle 2 end\n"),
    Case(template: "{{range 3 8}}", expected: "[3, 4, 5, 6, 7, 8]"),
    Case(template: "{{range '3' '8'}}", expected: "[3, 4, 5, 6, 7, 8]"),
    Case(template: "{{range -2 2}}", expected: "[-2, -1, 0, 1, 2]"),
    Case(
      template: "{{range 555}}",
      expected: "[ERROR: The range helper requires both lower and upper bounds as integer parameters]"),
    Case(template: "{{array 1 'two' true}}", expected: "[1, two, true]"),
    Case(template: "{{array}}", expected: "[]"),
    Case(template: "{{arrayAdd (array 1 'three') 2 position=1}}", expected: "[1, 2, three]"),
    Case(template: "{{arrayRemove (array 1 2 'three') position='start'}}", expected: "[2, three]"),
    Case(template: "{{#if (matches '123' '[0-9]+')}}YES{{/if}}", expected: "YES"),
    Case(template: "{{#if (matches 'abc' '[0-9]+')}}YES{{/if}}", expected: ""),
    Case(template: "{{#matches '123' '[0-9]+'}}YES{{/matches}}", expected: "YES"),
    Case(template: "{{#if (contains 'abcde' 'abc')}}YES{{/if}}", expected: "YES"),
    Case(template: "{{#if (contains 'abcde' request.query.nonexist)}}YES{{/if}}", expected: ""),
    Case(template: "{{#contains (array 'a' 'b' 'c') 'a'}}YES{{/contains}}", expected: "YES"),
    Case(template: "{{#contains (array 'a' 'b' 'c') 'z'}}YES{{/contains}}", expected: ""),
    Case(
      template: "{{math 1 '+' 2}} {{math 4 '-' 2}} {{math 2 '*' 3}} {{math 8 '/' 2}} {{math 10 '%' 3}}",
      expected: "3 2 6 4 1"),
    Case(template: "{{math 0.5 '+' 3}}", expected: "3.5"),
    Case(template: "{{val request.query.nonexist or='123'}}", expected: "123"),
    Case(template: "{{val request.query.nonexist default='123'}}", expected: "123"),
    Case(template: "{{val 'exists'}}{{val null}}", expected: "exists"),
    Case(template: "{{val (array 1 2 3) default='123'}}", expected: "[1, 2, 3]"),
    Case(template: "{{val 'value for myVar' assign='myVar'}}{{myVar}}", expected: "value for myVar"),
    Case(template: "{{val (array 1 2 3) assign='myVar'}}{{arrayJoin '*' myVar}}", expected: "1*2*3"),
    Case(
      template: "{{val 10 assign='myVar'}}{{#lt myVar 20}}Less Than{{else}}More Than{{/lt}}",
      expected: "Less Than"),
    Case(template: "{{arrayJoin ',' (array 'One' 'Two' 'Three')}}", expected: "One,Two,Three"),
    Case(template: "{{arrayJoin ',' 1 2 3 prefix='p..' suffix='..s'}}", expected: "p..1,2,3..s"),
    Case(template: "{{arrayJoin ',' (array )}}", expected: ""),
    Case(
      template: "{{arrayJoin (array 'One' 'Two')}}", expected: "[ERROR: Separator parameter must be a String]"
    ),
    Case(
      template:
        "{{#parseJson 'things'}}[{\"id\":1,\"name\":\"One\"},{\"id\":2,\"name\":\"Two\"}]{{/parseJson}}[{{#arrayJoin ',' things as |item|}}{\"name{{item.id}}\":\"{{item.name}}\"}{{/arrayJoin}}]",
      expected: "[{\"name1\":\"One\"},{\"name2\":\"Two\"}]"),
    Case(
      template: "{{#assign 'json'}}{\"name\":\"Ann\"}{{/assign}}{{lookup (parseJson json) 'name'}}",
      expected: "Ann"),
    Case(template: "{{parseJson}}", expected: "[ERROR: Missing required JSON string parameter]"),
    Case(
      template: "{\"test\": \"{{jsonPath request.body '$.a.test'}}\"}", body: #"{"a":{"test":"success"}}"#,
      expected: "{\"test\": \"success\"}"),
    Case(
      template: "{\"check\": {{jsonPath request.body '$.a'}} }", body: #"{"a":{"test":"success"}}"#,
      expected: "{\"check\": {\n  \"test\" : \"success\"\n} }"),
    Case(
      template: "{\"test\": {{jsonPath request.body '$.items'}} }",
      body: #"{"items":[{"name":"One"},{"name":"Two"}]}"#,
      expected: "{\"test\": [ {\n  \"name\" : \"One\"\n}, {\n  \"name\" : \"Two\"\n} ] }"),
    Case(
      template: "{{#each (jsonPath request.body '$.items') as |item|}}{{item.name}} {{/each}}",
      body: #"{"items":[{"name":"One"},{"name":"Two"},{"name":"Three"}]}"#, expected: "One Two Three "),
    Case(
      template: "{{#each (jsonPath request.body '$.items') as |value key|}}{{key}}: {{value}} {{/each}}",
      body: #"{"items":{"one":1,"two":2,"three":3}}"#, expected: "one: 1 two: 2 three: 3 "),
    Case(template: "{{jsonPath request.body '$.b'}}", body: #"{"a":1}"#, expected: ""),
    Case(template: "{{jsonPath request.body '$.b' default='foo'}}", body: #"{"a":1}"#, expected: "foo"),
    Case(
      template: "{{jsonPath request.body '$.test'}}", body: #"{"test":"success}"#,
      expected: "[ERROR: {\"test\":\"success} is not valid JSON]"),
    Case(
      template: "{{jsonPath request.body '$.things[?(@.id > 1)].name'}}",
      body: #"{"things":[{"id":1,"name":"a"},{"id":2,"name":"b"}]}"#, expected: "[ \"b\" ]"),
    Case(template: "{{ toJson (array 1 2 3) }}", expected: "[ 1, 2, 3 ]"),
    Case(template: "{{ toJson null }}", expected: ""),
    Case(template: "{{ toJson 'null' }}", expected: "\"null\""),
    Case(template: "{{ toJson true }}{{ toJson 123 }}", expected: "true123"),
    Case(
      template: "{{#formatJson}} {\"foo\":true,\"bar\":{\"baz\":false}} {{/formatJson}}",
      expected: "{\n  \"foo\" : true,\n  \"bar\" : {\n    \"baz\" : false\n  }\n}"),
    Case(
      template: "{{#formatJson format='compact'}} {\n \"foo\" : true } {{/formatJson}}",
      expected: "{\"foo\":true}"),
    Case(template: "{{now}}", expected: "2018-05-05T10:11:12Z"),
    Case(template: "{{now offset='3 days'}}", expected: "2018-05-08T10:11:12Z"),
    Case(template: "{{now offset='-24 hours' format='yyyy-MM-dd'}}", expected: "2018-05-04"),
    Case(template: "{{now format='epoch'}} {{now format='unix'}}", expected: "1525515072000 1525515072"),
    Case(template: "{{now timezone='Australia/Sydney'}}", expected: "2018-05-05T20:11:12+10:00"),
    Case(
      template: "{{date (parseDate '2018-05-05T10:11:12Z') offset='-1 days'}}",
      expected: "2018-05-04T10:11:12Z"),
    Case(
      template:
        "{{date (parseDate '2023-10-07T00:00:00Z') offset='3 days' timezone='Australia/Sydney' format='yyyy-MM-dd HH:mm:ssZ'}}",
      expected: "2023-10-10 11:00:00+1100"),
    Case(
      template: "{{date (parseDate '16/04/2018' format='dd/MM/yyyy') offset='5 days' format='yyyy-MM-dd'}}",
      expected: "2018-04-21"),
    Case(template: "{{date (parseDate '1525515072000' format='epoch')}}", expected: "2018-05-05T10:11:12Z"),
    Case(
      template: "{{date (truncateDate (parseDate '2021-06-29T11:22:33Z') 'first hour of day')}}",
      expected: "2021-06-29T00:00:00Z"),
    Case(
      template: "{{date (parseDate '2021-10' format='yyyy-MM') offset='+32 days' format='yyyy-MM'}}",
      expected: "2021-11"),
    Case(template: "{{upper 'abc'}} {{lower 'ABC'}}", expected: "ABC abc"),
    Case(template: "{{abbreviate 'Mocking with WireMock' 10}}", expected: "Mocking..."),
    Case(template: "{{replace 'a-b-c' '-' '+'}}", expected: "a+b+c"),
    Case(template: "{{substring 'one two' 4}} {{substring 'one two' 0 3}}", expected: "two one"),
    Case(template: "{{join (array 'a' 'b') ', '}}", expected: "a, b"),
    Case(
      template: "{{#if request.query.a}}A{{else if request.query.b}}B{{else}}C{{/if}}", url: "/?b=1",
      expected: "B"),
    Case(template: "{{#unless request.query.a}}no a{{/unless}}", expected: "no a"),
    Case(
      template:
        "{{#each request.query.x}}{{@index}}:{{this}}{{#if @first}}(first){{/if}}{{#if @last}}(last){{/if}} {{/each}}",
      url: "/?x=a&x=b&x=c", expected: "0:a(first) 1:b 2:c(last) "),
    Case(template: "{{#each (array)}}x{{else}}empty{{/each}}", expected: "empty"),
    Case(
      template: "{{#each request.headers}}{{@key}}={{this}};{{/each}}", headers: [("A", "1"), ("B", "2")],
      expected: "A=1;B=2;"),
    Case(template: "{{#with request.query}}{{a}}-{{b}}{{/with}}", url: "/?a=1&b=2", expected: "1-2"),
    Case(template: "{{#each (array 1 2)}}{{../request.path}}{{/each}}", url: "/p", expected: "/p/p"),
    Case(template: "a {{! a comment }}b{{!-- with }} inside --}} c", expected: "a b c"),
    Case(template: "a   {{~ 'x' ~}}   b", expected: "axb"),
    Case(template: "{{#if true ~}}\n  yes\n{{~/if}}", expected: "yes"),
    Case(
      template: "{{#and true (eq 1 1)}}both{{/and}}{{#or false 0}}x{{else}}neither{{/or}}{{not false}}",
      expected: "bothneithertrue"),
    Case(
      template: "{{gt 3 2}} {{gte 2 2}} {{lt 3 2}} {{lte '10' 9}} {{neq 'a' 'b'}}",
      expected: "true true false false true"),
    Case(template: "\\{{not a tag}}", expected: "{{not a tag}}"),
    Case(
      template: "{{request.query.q}}", url: "/?q=look+at+my+%27single+quotes%27",
      expected: "look at my 'single quotes'"),
    Case(template: "{{request.bodyAsBase64}}", body: "hello", expected: "aGVsbG8="),
    Case(template: "{{size (pickRandom (array 1 2 3 4 5) count=3)}}", expected: "3"),
    Case(template: "{{defaultIfEmpty request.query.x 'none'}}", expected: "none"),
    Case(template: "{{capitalizeFirst 'hello world'}}", expected: "Hello world"),
    // Sections on values (Handlebars' blockHelperMissing), as Handlebars.java renders them for WireMock.
    Case(
      template: "{{#request.query.tier}}T={{this}}{{/request.query.tier}}", url: "/?tier=gold",
      expected: "T=gold"),
    Case(template: "{{#request.query.x}}{{this}};{{/request.query.x}}", url: "/?x=a&x=b", expected: "a;b;"),
    Case(template: "{{^request.query.none}}none{{/request.query.none}}", expected: "none"),
    Case(
      template: "{{^request.query.tier}}no{{else}}yes{{/request.query.tier}}", url: "/?tier=gold",
      expected: "yes"),
    Case(template: "{{#nosuch}}x{{else}}empty{{/nosuch}}", expected: "empty"),
    Case(template: "{{#with request}}{{#query}}{{a}}{{/query}}{{/with}}", url: "/?a=1", expected: "1"),
    Case(template: "{{#request.headers}}{{X-A}}{{/request.headers}}", headers: [("X-A", "h")], expected: "h"),
    // Handlebars.java's loop data are words, not Booleans.
    Case(
      template: "{{#each (array 'a' 'b' 'c')}}{{@index}}{{@first}}{{@last}}{{@odd}}{{@even}};{{/each}}",
      expected: "0firsteven;1odd;2lasteven;"),
    // BigDecimal division: the dividend's scale, rounded half up.
    Case(
      template:
        "{{math 1.0 '/' 3}}|{{math 10 '/' 4.0}}|{{math 1 '/' 3.0}}|{{math 7.50 '/' 2}}|{{math 2 '/' 0.5}}|{{math 10.0 '/' 4}}",
      expected: "0.3|3|0|3.8|4|2.5"),
    Case(template: "{{size request.pathSegments}}", url: "/a/b", expected: "2"),
    // regexExtract into a variable keeps the groups of every match (WireMock's RegexExtractHelperTest).
    Case(
      template: "{{regexExtract request.path.[1] '([A-Za-z]+)' 'parts'}}{{#each parts}}{{this}} {{/each}}",
      url: "/api/abc,def,ghi", expected: "abc def ghi "),
    Case(
      template: "{{regexExtract 'x' '(([A-Za-z]+)'}}", expected: "[ERROR: Invalid regex string (([A-Za-z]+)]"),
    // A fraction or an exponent read by jsonPath is a Java double when written, as in WireMock.
    Case(
      template:
        "{{jsonPath request.body '$.a'}}|{{jsonPath request.body '$.b'}}|{{jsonPath request.body '$.c'}}",
      body: #"{"a":1.50,"b":1e3,"c":12}"#, expected: "1.5|1000.0|12"),
    Case(
      template: "{{jsonPath request.body '$.o'}}", body: #"{"o":{"p":2.50}}"#, expected: "{\n  \"p\" : 2.5\n}"
    ),
  ]

  @Test(arguments: cases)
  func renders(_ c: Case) throws {
    #expect(try render(c.template, url: c.url, headers: c.headers, body: c.body) == c.expected)
  }

  @Test func pathParametersOfURLPathTemplates() throws {
    #expect(
      try render(
        "{{request.path.id}} {{request.path.[1]}}", url: "/users/42", pathParameters: [("id", "42")])
        == "42 42")
  }

  @Test func transformerParameters() throws {
    let params = TemplateValue.json(try JSONValue.parse(#"{"variable":"some.value"}"#))
    #expect(
      try render(
        #"{"test1": "{{parameters.variable}}", "test2": "{{parameters.unknown}}"}"#, parameters: params)
        == #"{"test1": "some.value", "test2": ""}"#)
  }

  @Test func escapingIsOffByDefaultAndOptional() throws {
    let q = "/?q=%3Ca%20b%3D%27c%27%3E"
    #expect(try render("{{request.query.q}}", url: q) == "<a b='c'>")
    let on = TemplateEnvironment(escapesHTML: true)
    #expect(try render("{{request.query.q}}", url: q, environment: on) == "&lt;a b&#x3D;&#x27;c&#x27;&gt;")
    #expect(try render("{{{request.query.q}}}", url: q, environment: on) == "<a b='c'>")
  }

  @Test func randomHelpersAreReproducibleWithASeed() throws {
    let t =
      "{{randomValue length=12 type='ALPHANUMERIC'}} {{randomInt lower=5 upper=9}} {{pickRandom 'a' 'b' 'c'}} {{randomValue type='UUID'}}"
    let a = try render(t, seed: 7)
    #expect(a == (try render(t, seed: 7)))
    #expect(a != (try render(t, seed: 8)))
    let parts = a.split(separator: " ")
    #expect(parts[0].count == 12)
    #expect((5..<9).contains(Int(parts[1]) ?? -1))
    #expect(["a", "b", "c"].contains(parts[2]))
    #expect(parts[3].count == 36 && parts[3].split(separator: "-").count == 5)
    #expect(try render("{{randomValue length=8 type='NUMERIC'}}").allSatisfy(\.isNumber))
    #expect(try render("{{randomValue length=6 type='HEXADECIMAL' uppercase=true}}").allSatisfy(\.isHexDigit))
    let d = Double(try render("{{randomDecimal lower=-10.1 upper=-0.9}}")) ?? 0
    #expect(d >= -10.1 && d <= -0.9)
  }

  @Test func systemValueIsAllowListed() throws {
    #expect(try render("{{systemValue key='PATH'}}") == "[ERROR: Access to PATH is denied]")
    let env = TemplateEnvironment(allowedEnvironment: ["PATH", "NO_SUCH_VARIABLE_X"])
    #expect(try render("{{systemValue key='PATH'}}", environment: env).contains("/"))
    #expect(try render("{{systemValue key='NO_SUCH_VARIABLE_X' default='d'}}", environment: env) == "d")
  }

  @Test func runtimeProblemsAreReported() throws {
    let request = HTTPRequest(head: HTTPRequestHead(method: .get, target: "/"))
    let model = TemplateRequest.model(request, port: 80)
    let r = try Template("x{{jsonPath request.body '$.a'}}{{regexExtract 'a' 'b'}}").render(
      TemplateContext(request: model))
    #expect(r.text == "x[ERROR: Nothing matched b]")
    #expect(r.problems == ["Nothing matched b"])
  }

  struct SyntaxCase: CustomTestStringConvertible, Sendable {
    var template: String
    var message: String
    var testDescription: String { template }
  }

  static let syntaxCases: [SyntaxCase] = [
    SyntaxCase(
      template: "{\"a\": [{{#each request.query.x}}]", message: "1:8: unclosed {{#each}} opened at 1:8"),
    SyntaxCase(
      template: "line1\nabc {{#if a}}x{{/each}}",
      message: "2:15: {{/each}} does not close {{#if}} opened at 2:5"),
    SyntaxCase(template: "{{request.path", message: "1:1: unclosed {{ opened at 1:1"),
    SyntaxCase(template: "{{nonExist thing=123}}", message: "1:3: unknown helper 'nonExist'"),
    // With arguments a block is a helper call; without, `{{#nope}}` is a section on a value (below).
    SyntaxCase(template: "{{#nope 1}}{{/nope}}", message: "1:4: unknown helper 'nope'"),
    SyntaxCase(
      template: "{{#request.query.a}}x{{/request.query.b}}",
      message: "1:22: {{/request.query.b}} does not close {{#request.query.a}} opened at 1:1"),
    SyntaxCase(template: "{{/if}}", message: "1:1: {{/if}} closes no block"),
    SyntaxCase(template: "{{jsonPath (bogus 1) '$'}}", message: "1:13: unknown helper 'bogus'"),
    SyntaxCase(template: "{{> partial}}", message: "1:1: partials are not supported"),
    SyntaxCase(template: "{{else}}", message: "1:1: {{else}} outside a block"),
    SyntaxCase(template: "{{upper 'abc}}", message: "1:9: unclosed string opened at 1:9"),
  ]

  @Test(arguments: syntaxCases)
  func syntaxErrorsAreLocated(_ c: SyntaxCase) {
    #expect(throws: TemplateSyntaxError.self) { try Template(c.template) }
    do {
      _ = try Template(c.template)
    } catch {
      #expect("\(error.line):\(error.column): \(error.message)" == c.message)
    }
  }

  @Test func constantTemplates() throws {
    #expect(try Template("plain text").isConstant)
    #expect(!(try Template("{{now}}").isConstant))
    #expect(!Template.mayContainTags("{\"a\":1}"))
  }
}

/// The direct renderer (templates that only copy request fields) against the general one.
struct TemplateDirectRenderingTests {
  static let templates = [
    "id={{request.path.[2]}} m={{request.method}} n={{jsonPath request.body '$.user.name'}}",
    "{{request.url}}|{{request.path}}|{{request.pathSegments.[0]}}|{{request.path.[9]}}",
    "{{jsonPath request.body '$.user'}}|{{jsonPath request.body '$.user.roles[1]'}}|{{jsonPath request.body '$.n'}}",
    "{{{jsonPath request.body '$.user.missing'}}}{{jsonPath request.body '$.flag'}}",
  ]
  static let bodies = [
    #"{"user":{"id":7,"name":"Aiko Tanaka","roles":["admin","editor"]},"n":1.50,"flag":null}"#,
    #"{"user":{"name":"<b>&'"}}"#, #"{"user":{"name":"Zoë"}}"#, #"{"user":{"name":"a\"b"}}"#, "not json",
    "", #"{"user":{"name":"x"}} trailing"#, "[1,2]", #"{"user":{"name":"dup"},"user":{"name":"last"}}"#,
  ]

  @Test("renders exactly what the general renderer renders, or declines")
  func sameBytes() throws {
    for source in Self.templates {
      let template = try Template(source)
      #expect(template.direct != nil, "\(source)")
      for body in Self.bodies {
        for url in ["/bench/templated/7", "/a%20b/%C3%A9/x?q=1", "/", "//a//b/"] {
          for escapesHTML in [false, true] {
            let request = HTTPRequest(
              head: HTTPRequestHead(
                method: .post, target: url, headers: ["Content-Type": "application/json"]),
              body: Array(body.utf8))
            let model = TemplateRequest.model(request, port: 8080)
            let general = template.renderUTF8(
              TemplateContext(request: model, environment: TemplateEnvironment(escapesHTML: escapesHTML)))
            guard
              let direct = template.renderDirect(request, pathParameters: [:], escapesHTML: escapesHTML)
            else { continue }
            #expect(direct == general.bytes, "\(source) on \(body) at \(url)")
            #expect(general.problems.isEmpty)
          }
        }
      }
    }
  }

  @Test("declines what it cannot answer: other request members, blocks, helpers, path parameters")
  func declines() throws {
    for source in [
      "{{request.query.a}}", "{{#if request.method}}x{{/if}}", "{{upper request.method}}",
      "{{jsonPath request.body '$..name'}}", "{{jsonPath request.body '$.a' default='x'}}",
      "{{request.path.[-1]}}",
    ] {
      #expect(try Template(source).direct == nil, "\(source)")
    }
    let request = HTTPRequest(head: HTTPRequestHead(method: .get, target: "/a/b"))
    let template = try Template("{{request.path.[1]}}")
    #expect(template.renderDirect(request, pathParameters: ["id": "b"], escapesHTML: false) == nil)
    #expect(template.renderDirect(request, pathParameters: [:], escapesHTML: false) == Array("b".utf8))
    let notJSON = HTTPRequest(
      head: HTTPRequestHead(method: .post, target: "/"), body: Array("not json".utf8))
    #expect(
      try Template("{{jsonPath request.body '$.a'}}").renderDirect(
        notJSON, pathParameters: [:], escapesHTML: false) == nil)
  }
}

/// The rendering budgets (issue 41 item 12): steps and bytes counted in loops, sub-expressions and helpers.
struct TemplateBudgetTests {
  func rendering(_ source: String, body: String = "") throws -> TemplateRendering {
    let request = HTTPRequest(
      head: HTTPRequestHead(method: .post, target: "/"), body: Array(body.utf8))
    return try Template(source).render(TemplateContext(request: TemplateRequest.model(request, port: 8080)))
  }

  @Test func nestedLoopsStopAtTheStepBudget() throws {
    let r = try rendering("{{#each (range 0 9999)}}{{#each (range 0 9999)}}x{{/each}}{{/each}}")
    #expect(r.budgetExceeded?.contains("more than \(Template.maximumSteps) steps") == true)
    // Each pass is at least two steps (the pass and its text): well under the budget was written.
    #expect(r.text.utf8.count < Template.maximumSteps / 2)
  }

  @Test func subExpressionsCountTheirText() throws {
    // A `replace` doubling its text 30 times inside sub-expressions: never written, 1 GiB before.
    var expression = "'ab'"
    for _ in 0..<30 { expression = "(replace \(expression) 'a' 'aa')" }
    let replaced = try rendering("{{size \(expression)}}")
    #expect(replaced.budgetExceeded != nil)
    let joined = try rendering("{{size (join (range 0 99999) (join (range 0 99999) 'xxxxxxxxxx'))}}")
    #expect(joined.budgetExceeded?.contains("(join)") == true)
    let fine = try rendering("{{size (join (range 0 999) ',')}}")
    #expect(fine.budgetExceeded == nil && !fine.text.isEmpty)
  }

  @Test func xpathOperationsCountAsSteps() throws {
    let xml = "<a>" + String(repeating: "<b/>", count: 5_000) + "</a>"
    let r = try rendering("{{xPath request.body 'count(//b[count(//b) > 0])'}}", body: xml)
    #expect(r.budgetExceeded?.contains("XPath") == true)
    let small = try rendering("{{xPath request.body 'count(//b)'}}", body: xml)
    #expect(small.budgetExceeded == nil && small.text == "5000")
  }
}
