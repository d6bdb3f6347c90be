import Foundation
import MockServerTesting
import TestSupport
import Testing

/// WireMock 3's documented helpers (its response-templating page, and the Handlebars.java string and number
/// helpers it registers) with the documentation's examples, against the `mockserver` binary over sockets.
@Suite("Templating helpers: WireMock's documented examples, second part")
struct TemplateDocumentedHelperTests {
  typealias Case = TemplateCase

  static let things = """
    <?xml version="1.0"?>
    <stuff xmlns:th="https://thing.com">
        <th:thing>One</th:thing>
        <th:thing>Two</th:thing>
        <th:thing>Three</th:thing>
    </stuff>
    """

  static let cases: [Case] = [
    // xPath: nodes with name, text and attributes; elements render as XML
    Case(
      template: "{{xPath request.body '/outer/inner'}}", body: "<outer>\n    <inner>Stuff</inner>\n</outer>",
      expected: "<inner>Stuff</inner>"),
    Case(
      template:
        "{{#each (xPath request.body '/things/item') as |node|}}name: {{node.name}}, text: {{node.text}}, ID attribute: {{node.attributes.id}}; {{/each}}",
      body: "<things><item id=\"1\">One</item><item id=\"2\">Two</item></things>",
      expected: "name: item, text: One, ID attribute: 1; name: item, text: Two, ID attribute: 2; "),
    Case(
      template: "{{#each (xPath request.body '/stuff/*') as |thing|}}{{{thing.name}}} {{/each}}",
      body:
        "<?xml version=\"1.0\"?>\n<stuff>\n    <one>1</one>\n    <two>2</two>\n    <three>3</three>\n</stuff>",
      expected: "one two three "),
    Case(
      template: "{{#each (xPath request.body '/stuff/thing') as |thing|}}{{{thing.text}}} {{/each}}",
      body: things,
      expected: "One Two Three "),
    Case(
      template: "{{{xPath request.body '/stuff'}}}", body: things,
      expected:
        "<stuff xmlns:th=\"https://thing.com\">\n    <th:thing>One</th:thing>\n    <th:thing>Two</th:thing>\n    <th:thing>Three</th:thing>\n</stuff>"
    ),
    Case(
      template: "<test>{{xPath request.body '/b/test'}}</test>", body: "<a><test>success</test></a>",
      expected: "<test></test>"),
    Case(
      template: "{{xPath request.body '/test'}}", body: "<testsuccess</test>",
      expected: "[ERROR: <testsuccess</test> is not valid XML]"),
    Case(
      template: "{{xPath request.body '/\\test'}}", body: "<test>success</test>",
      expected: "[ERROR: /\\test is not a valid XPath expression]"),
    // formatXml
    Case(
      template: "{{#formatXml}}\n<foo><bar\n    >wh</bar></foo\n    >\n{{/formatXml}}",
      expected: "<foo>\n  <bar>wh</bar>\n</foo>\n"),
    Case(
      template: "{{#formatXml format='compact'}}\n<foo>\n  <bar>wh</bar>\n</foo>\n{{/formatXml}}",
      expected: "<foo><bar>wh</bar></foo>"),
    Case(
      template: "{{#formatXml format='traditional'}}<foo/>{{/formatXml}}",
      expected: "[ERROR: formatXml: format [traditional] should be one of [pretty, compact]]"),
    Case(
      template: "{{#formatXml}}<foo>Not well formed!</bar>{{/formatXml}}",
      expected: "[ERROR: Input is not valid XML]"),
    // jsonSort
    Case(
      template:
        #"{{#assign 'jsonArray'}}[{"id": 123, "name": "sam"}, {"id": 321, "name": "alice"}]{{/assign}}{{jsonSort jsonArray '$[*].name'}}"#,
      expected: #"[{"id":321,"name":"alice"},{"id":123,"name":"sam"}]"#),
    Case(
      template:
        #"{{#assign 'jsonArray'}}[{"id": 123, "name": "sam"}, {"id": 321, "name": "alice"}]{{/assign}}{{jsonSort jsonArray '$[*].id' order='desc'}}"#,
      expected: #"[{"id":321,"name":"alice"},{"id":123,"name":"sam"}]"#),
    Case(
      template:
        #"{{#assign 'jsonArray'}}{"users":[{"name":"fred"},{"name":"bob"}]}{{/assign}}{{jsonSort jsonArray '$.users[*].name'}}"#,
      expected: #"{"users":[{"name":"bob"},{"name":"fred"}]}"#),
    Case(
      template:
        #"{{#assign 'jsonArray'}}[{"id":1,"created":"2025-03-15T14:30:00Z"},{"id":2,"created":"2025-01-10T09:15:00Z"},{"id":3,"created":"2025-12-01T18:45:00Z"}]{{/assign}}{{jsonSort jsonArray '$[*].created'}}"#,
      expected:
        #"[{"id":2,"created":"2025-01-10T09:15:00Z"},{"id":1,"created":"2025-03-15T14:30:00Z"},{"id":3,"created":"2025-12-01T18:45:00Z"}]"#
    ),
    Case(
      template: #"{{#assign 'jsonArray'}}["charlie","alice","bob"]{{/assign}}{{jsonSort jsonArray '$[*]'}}"#,
      expected: #"["alice","bob","charlie"]"#),
    Case(
      template:
        #"{{#assign 'jsonArray'}}[{"items":[{"price":30},{"price":10},{"price":20}]},{"items":[{"price":100},{"price":50}]}]{{/assign}}{{jsonSort jsonArray '$[0].items[*].price'}}"#,
      expected:
        #"[{"items":[{"price":10},{"price":20},{"price":30}]},{"items":[{"price":100},{"price":50}]}]"#),
    Case(
      template:
        #"{{#assign 'jsonArray'}}[{"id":1,"name":"alice"},{"id":2},{"id":3,"name":"bob"}]{{/assign}}{{jsonSort jsonArray '$[*].name'}}"#,
      expected: #"[{"id":2},{"id":1,"name":"alice"},{"id":3,"name":"bob"}]"#),
    Case(
      template:
        #"{{#assign 'jsonArray'}}[{"id":1,"name":"alice"},{"id":2},{"id":3,"name":"bob"}]{{/assign}}{{jsonSort jsonArray '$[*].name' nulls='last'}}"#,
      expected: #"[{"id":1,"name":"alice"},{"id":3,"name":"bob"},{"id":2}]"#),
    Case(
      template:
        #"{{#assign 'jsonArray'}}[{"id":"a","score":100},{"id":"b","score":50},{"id":"c","score":50},{"id":"d","score":25},{"id":"e","score":50}]{{/assign}}{{jsonSort jsonArray '$[*].score'}}"#,
      expected:
        #"[{"id":"d","score":25},{"id":"b","score":50},{"id":"c","score":50},{"id":"e","score":50},{"id":"a","score":100}]"#
    ),
    Case(
      template: #"{{jsonSort request.body '$[*].active'}}"#,
      body: #"[{"active":true},{"active":false},{"active":true}]"#,
      expected: #"[{"active":false},{"active":true},{"active":true}]"#),
    Case(
      template: #"{{jsonSort request.body '$.name'}}"#, body: #"[{"id":123,"name":"bob"}]"#,
      expected:
        "[ERROR: JSONPath must include [*] to specify array location (e.g., '$[*].name' or '$.users[*].name')]"
    ),
    Case(
      template: #"{{jsonSort request.body '$[*].name'}}"#, body: #"{"id":123,"name":"bob"}"#,
      expected: "[ERROR: JSONPath does not reference an array ('$')]"),
    // Number and assignment helpers
    Case(template: "{{isOdd 3}}", expected: "odd"),
    Case(template: "{{isOdd 3 'rightBox'}}", expected: "rightBox"),
    Case(template: "{{isEven 2}}", expected: "even"),
    Case(template: "{{isEven 4 'leftBox'}}", expected: "leftBox"),
    Case(template: "{{stripes 3 'row-even' 'row-odd'}}", expected: "row-odd"),
    Case(template: "[{{isOdd 2}}]", expected: "[]"),
    Case(
      template: "{{#assign 'myCapitalisedQuery'}}{{capitalize 'some text'}}{{/assign}}{{myCapitalisedQuery}}",
      expected: "Some Text"),
    // val
    Case(template: "{{val (array 1 2 3) default='123'}}", expected: "[1, 2, 3]"),
    Case(template: "{{val 'value for myVar' assign='myVar'}}{{myVar}}", expected: "value for myVar"),
    Case(
      template: "{{val null or='other value for myVar' assign='myVar'}}{{myVar}}",
      expected: "other value for myVar"),
    // Arrays
    Case(template: "{{arrayAdd (array 1 'three') 2 position=1}}", expected: "[1, 2, three]"),
    Case(template: "{{arrayAdd (array 1 'three') 2 position='start'}}", expected: "[2, 1, three]"),
    Case(template: "{{arrayAdd (array 1 'three') 2 position='end'}}", expected: "[1, three, 2]"),
    Case(template: "{{arrayAdd (array 1 'three') 2}}", expected: "[1, three, 2]"),
    Case(template: "{{arrayRemove (array 1 2 'three') position=1}}", expected: "[1, three]"),
    Case(template: "{{arrayRemove (array 1 2 'three') position='start'}}", expected: "[2, three]"),
    Case(template: "{{arrayRemove (array 1 2 'three') position='end'}}", expected: "[1, 2]"),
    Case(template: "{{arrayRemove (array 1 2 'three')}}", expected: "[1, 2]"),
    Case(template: "{{arrayJoin ' - ' 'a' 'b' 'c'}}", expected: "a - b - c"),
    Case(template: "{{arrayJoin ', ' (range 1 5)}}", expected: "1, 2, 3, 4, 5"),
    Case(template: "{{arrayJoin ' * ' (array 1 2 3) prefix='(' suffix=')'}}", expected: "(1 * 2 * 3)"),
    Case(template: "{{range -2 2}} {{array}}", expected: "[-2, -1, 0, 1, 2] []"),
    Case(
      template:
        "{{#if (contains 'abcde' 'abc')}}YES{{/if}} {{#contains (array 'a' 'b' 'c') 'a'}}YES{{/contains}}",
      expected: "YES YES"),
    Case(template: "{{#matches '123' '[0-9]+'}}YES{{/matches}}", expected: "YES"),
    // numberFormat (the documentation's outputs)
    Case(template: "{{{numberFormat 123.4567 'currency' 'en_GB'}}}", expected: "£123.46"),
    Case(template: "{{{numberFormat 123.4567 'percent' 'en_GB'}}}", expected: "12,346%"),
    Case(template: "{{{numberFormat 123.4567 '###.000000' 'en_GB'}}}", expected: "123.456700"),
    Case(
      template: "{{{numberFormat 1234.567 maximumIntegerDigits=3 minimumFractionDigits=6}}}",
      expected: "234.567000"),
    Case(template: "{{{numberFormat 12345.678 groupingUsed=false}}}", expected: "12345.678"),
    Case(template: "{{{numberFormat 1.239 roundingMode='down' maximumFractionDigits=2}}}", expected: "1.23"),
    // Handlebars.java string helpers
    Case(
      template: "{{append 'Hello' ' World'}}|{{prepend 'World' 'Hello '}}",
      expected: "Hello World|Hello World"),
    Case(template: "[{{center 'Handlebars.java' size=19}}]", expected: "[  Handlebars.java  ]"),
    Case(template: "{{center 'Handlebars.java' size=19 pad='*'}}", expected: "**Handlebars.java**"),
    Case(template: "{{cut 'String with spaces'}}|{{cut 'a-b-c' '-'}}", expected: "Stringwithspaces|abc"),
    Case(template: "[{{ljust 'Handlebars.java' size=20}}]", expected: "[Handlebars.java     ]"),
    Case(template: "[{{rjust 'Handlebars.java' size=20}}]", expected: "[     Handlebars.java]"),
    Case(template: "{{slugify 'Joel is a slug'}}", expected: "joel-is-a-slug"),
    Case(template: "{{wordWrap 'Joel is a slug' 5}}", expected: "Joel\nis a\nslug"),
    Case(
      template: "{{yesno true}} {{yesno false}} {{yesno null}} {{yesno true yes='aye'}}",
      expected: "yes no maybe aye"),
    Case(template: "{{stringFormat '%s is %d years old' 'Ann' 42}}", expected: "Ann is 42 years old"),
    Case(
      template: "{{stringFormat '%.2f|%05d|%-4s|%x|%,d' 3.14159 42 'ab' 255 1234567}}",
      expected: "3.14|00042|ab  |ff|1,234,567"),
    Case(
      template: "{{dateFormat (parseDate '2021-06-15T15:16:17Z') 'full'}}", expected: "Tuesday, June 15, 2021"
    ),
    Case(template: "{{dateFormat (parseDate '2021-06-15T15:16:17Z')}}", expected: "Jun 15, 2021"),
    Case(
      template: "{{dateFormat (parseDate '2021-06-15T15:16:17Z') format='yyyy-MM-dd HH:mm'}}",
      expected: "2021-06-15 15:16"),
    // The request model: multipart
    Case(
      template: "{{request.multipart}} {{request.parts.info.body}}",
      body: "--b1\r\nContent-Disposition: form-data; name=\"info\"\r\n\r\nhello\r\n--b1--\r\n",
      contentType: "multipart/form-data; boundary=b1", expected: "true hello"),
    Case(template: "{{request.multipart}}", body: "plain", expected: "false"),
    // jsonPath read without building the document, and on documents it leaves to the parser
    Case(
      template:
        "{{jsonPath request.body '$.user.roles[1]'}}|{{jsonPath request.body '$.user.none' default='-'}}",
      body: #"{"user":{"id":7,"roles":["admin","editor"],"roles":["x","y"]},"n":[1,2.5e3,-0.1]}"#,
      expected: "y|-"),
    Case(
      template: "{{jsonPath request.body '$.a'}}|{{jsonPath request.body '$.b'}}",
      body: #"{"a":"caf\u00e9","b":"thé"}"#, expected: "café|thé"),
    Case(
      template: "{{jsonPath request.body '$.a'}}", body: #"{"a":1,}"#,
      expected: #"[ERROR: {"a":1,} is not valid JSON]"#),
    Case(
      template: "{{jsonPath request.body '$.a'}}", body: #"{"a":01}"#,
      expected: #"[ERROR: {"a":01} is not valid JSON]"#),
  ]

  @Test func documentedHelpersRenderAsWireMockDocuments() throws {
    try expectEachRenders(Self.cases)
  }

  @Test func unknownHelpersStayLoadErrors() throws {
    let fixtures = try TemporaryFixtures([
      (
        "bad.json",
        stubJSON(
          ["method": "GET", "url": "/bad"],
          ["status": 200, "body": "{{jsonSortt request.body '$[*]'}}", "transformers": ["response-template"]])
      )
    ])
    defer { fixtures.remove() }
    let (status, text) = try lint(fixtures)
    #expect(status != 0)
    #expect(text.contains("mappings/bad.json: $.response.body: 1:3: unknown helper 'jsonSortt'"), "\(text)")
  }
}
