import Foundation
import MockServerTesting
import TestSupport
import Testing

/// `equalToXml` and `matchesXPath` (issue 17) against the real binary over sockets, with WireMock's
/// documented examples.
@Suite("XML matchers over sockets")
struct XMLMatchingTests {
  static let stubs: [(String, String)] = [
    (
      "equal.json",
      stubJSON([
        "method": "POST", "url": "/xml/equal",
        "bodyPatterns": [["equalToXml": "<thing><a>1</a><b x=\"1\" y=\"2\">text</b></thing>"]],
      ])
    ),
    (
      "placeholders.json",
      stubJSON([
        "method": "POST", "url": "/xml/placeholders",
        "bodyPatterns": [
          [
            "equalToXml":
              "<message><id>${xmlunit.ignore}</id><count>${xmlunit.isNumber}</count><code>${xmlunit.matchesRegex([A-Z]{3})}</code><when>${xmlunit.isDateTime}</when><v attr=\"${xmlunit.ignore}\">x</v></message>",
            "enablePlaceholders": true,
          ]
        ],
      ])
    ),
    (
      "delimiters.json",
      stubJSON([
        "method": "POST", "url": "/xml/delimiters",
        "bodyPatterns": [
          [
            "equalToXml": "<message><id>[[xmlunit.ignore]]</id><content>Hello</content></message>",
            "enablePlaceholders": true, "placeholderOpeningDelimiterRegex": "\\[\\[",
            "placeholderClosingDelimiterRegex": "]]",
          ]
        ],
      ])
    ),
    (
      "disabled.json",
      stubJSON([
        "method": "POST", "url": "/xml/disabled",
        "bodyPatterns": [["equalToXml": "<id>${xmlunit.ignore}</id>"]],
      ])
    ),
    (
      "namespaces.json",
      stubJSON([
        "method": "POST", "url": "/xml/ns",
        "bodyPatterns": [["equalToXml": "<a:root xmlns:a=\"urn:one\"><a:v>1</a:v></a:root>"]],
      ])
    ),
    (
      "exempt.json",
      stubJSON([
        "method": "POST", "url": "/xml/exempt",
        "bodyPatterns": [
          [
            "equalToXml": "<a:root xmlns:a=\"urn:one\"><a:v>1</a:v></a:root>",
            "exemptedComparisons": ["NAMESPACE_URI"],
          ]
        ],
      ])
    ),
    (
      "none.json",
      stubJSON([
        "method": "POST", "url": "/xml/none",
        "bodyPatterns": [
          ["equalToXml": "<a:root xmlns:a=\"urn:one\"><a:v>1</a:v></a:root>", "namespaceAwareness": "NONE"]
        ],
      ])
    ),
    (
      "xpath.json",
      stubJSON([
        "method": "POST", "url": "/xpath/count",
        "bodyPatterns": [["matchesXPath": "/todo-list[count(todo-item) = 3]"]],
      ])
    ),
    (
      "xpath-sub.json",
      stubJSON([
        "method": "POST", "url": "/xpath/sub",
        "bodyPatterns": [["matchesXPath": ["expression": "//todo-item/text()", "contains": "wash"]]],
      ])
    ),
    (
      "xpath-ns.json",
      stubJSON([
        "method": "POST", "url": "/xpath/ns",
        "bodyPatterns": [
          [
            "matchesXPath": "/stuff:outer/more:inner[.=111]",
            "xPathNamespaces": ["stuff": "http://stuff.example.com", "more": "http://more.example.com"],
          ]
        ],
      ])
    ),
    (
      "xpath-attr.json",
      stubJSON([
        "method": "POST", "url": "/xpath/attr",
        "bodyPatterns": [["matchesXPath": ["expression": "/order/@id", "matches": "[0-9]+"]]],
      ])
    ),
  ]

  func post(_ port: Int, _ path: String, _ xml: String) throws -> Int {
    try request(port, "POST", path, headers: [("Content-Type", "application/xml")], text: xml).status
  }

  @Test func equalToXmlAndXPathAsWireMockDocumentsThem() throws {
    let fixtures = try TemporaryFixtures(XMLMatchingTests.stubs)
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let p = server.port

    // Similar documents: whitespace between elements, attribute order, child order, comments, prolog.
    #expect(try post(p, "/xml/equal", "<thing><a>1</a><b x=\"1\" y=\"2\">text</b></thing>") == 200)
    #expect(
      try post(
        p, "/xml/equal",
        "<?xml version=\"1.0\"?>\n<thing>\n  <!-- c -->\n  <b y=\"2\" x=\"1\">text</b>\n  <a>1</a>\n</thing>")
        == 200)
    #expect(try post(p, "/xml/equal", "<thing><a>2</a><b x=\"1\" y=\"2\">text</b></thing>") == 404)
    #expect(try post(p, "/xml/equal", "<thing><a>1</a><b x=\"1\">text</b></thing>") == 404)
    #expect(try post(p, "/xml/equal", "<thing><a>1</a><b x=\"1\" y=\"2\">text</b><c/></thing>") == 404)
    #expect(try post(p, "/xml/equal", "not xml") == 404)

    // Placeholders.
    #expect(
      try post(
        p, "/xml/placeholders",
        "<message><id>abc-123</id><count>42.5</count><code>ABC</code><when>2024-01-02T03:04:05Z</when><v attr=\"any\">x</v></message>"
      ) == 200)
    #expect(
      try post(
        p, "/xml/placeholders",
        "<message><id>1</id><count>many</count><code>ABC</code><when>2024-01-02T03:04:05Z</when><v attr=\"a\">x</v></message>"
      ) == 404)
    #expect(
      try post(
        p, "/xml/placeholders",
        "<message><id>1</id><count>1</count><code>abcd</code><when>2024-01-02T03:04:05Z</when><v attr=\"a\">x</v></message>"
      ) == 404)
    #expect(
      try post(
        p, "/xml/placeholders",
        "<message><id>1</id><count>1</count><code>ABC</code><when>yesterday</when><v attr=\"a\">x</v></message>"
      )
        == 404)
    #expect(try post(p, "/xml/delimiters", "<message><id>99</id><content>Hello</content></message>") == 200)
    #expect(try post(p, "/xml/delimiters", "<message><id>99</id><content>Bye</content></message>") == 404)
    // Without enablePlaceholders the placeholder is literal text.
    #expect(try post(p, "/xml/disabled", "<id>7</id>") == 404)
    #expect(try post(p, "/xml/disabled", "<id>${xmlunit.ignore}</id>") == 200)

    // Namespaces: prefixes do not matter, URIs do.
    #expect(try post(p, "/xml/ns", "<b:root xmlns:b=\"urn:one\"><b:v>1</b:v></b:root>") == 200)
    #expect(try post(p, "/xml/ns", "<root xmlns=\"urn:one\"><v>1</v></root>") == 200)
    #expect(try post(p, "/xml/ns", "<b:root xmlns:b=\"urn:two\"><b:v>1</b:v></b:root>") == 404)
    #expect(try post(p, "/xml/exempt", "<b:root xmlns:b=\"urn:two\"><b:v>1</b:v></b:root>") == 200)
    #expect(try post(p, "/xml/none", "<a:root xmlns:a=\"urn:one\"><a:v>1</a:v></a:root>") == 200)
    #expect(try post(p, "/xml/none", "<b:root xmlns:b=\"urn:one\"><b:v>1</b:v></b:root>") == 404)

    // matchesXPath.
    let three =
      "<todo-list><todo-item>wash car</todo-item><todo-item>b</todo-item><todo-item>c</todo-item></todo-list>"
    #expect(try post(p, "/xpath/count", three) == 200)
    #expect(try post(p, "/xpath/count", "<todo-list><todo-item>a</todo-item></todo-list>") == 404)
    #expect(try post(p, "/xpath/sub", three) == 200)
    #expect(try post(p, "/xpath/sub", "<todo-list><todo-item>dishes</todo-item></todo-list>") == 404)
    #expect(
      try post(
        p, "/xpath/ns",
        "<s:outer xmlns:s=\"http://stuff.example.com\" xmlns:m=\"http://more.example.com\"><m:inner>111</m:inner></s:outer>"
      ) == 200)
    #expect(
      try post(
        p, "/xpath/ns",
        "<s:outer xmlns:s=\"http://stuff.example.com\" xmlns:m=\"http://other.example.com\"><m:inner>111</m:inner></s:outer>"
      ) == 404)
    #expect(try post(p, "/xpath/attr", "<order id=\"123\"/>") == 200)
    #expect(try post(p, "/xpath/attr", "<order id=\"abc\"/>") == 404)
    #expect(server.isRunning)
  }

  /// XXE: an external entity is never resolved (no file read, no network), and a DTD is never loaded.
  @Test func externalEntitiesAreNotResolved() throws {
    let fixtures = try TemporaryFixtures([
      (
        "xxe.json",
        stubJSON(
          ["method": "POST", "url": "/xxe"],
          [
            "status": 200, "body": "[{{xPath request.body '/r/text()'}}]",
            "transformers": ["response-template"],
          ])
      ),
      (
        "xxe-match.json",
        stubJSON([
          "method": "POST", "url": "/xxe-match",
          "bodyPatterns": [["matchesXPath": ["expression": "/r", "contains": "root:"]]],
        ])
      ),
    ])
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let evil = "<?xml version=\"1.0\"?><!DOCTYPE r [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><r>&x;</r>"
    let reply = try request(server.port, "POST", "/xxe", text: evil)
    #expect(reply.status == 200)
    #expect(!reply.text.contains("root:"))
    #expect(try request(server.port, "POST", "/xxe-match", text: evil).status == 404)
    // Entity expansion ("billion laughs") is refused by the parser: no match, an error text, the server
    // stays up and small.
    var entities = #"<!ENTITY lol "lol">"#
    for level in 1...9 {
      let inner = level == 1 ? "&lol;" : "&lol\(level - 1);"
      entities += "<!ENTITY lol\(level) \"\(String(repeating: inner, count: 10))\">"
    }
    let laughs = "<?xml version=\"1.0\"?><!DOCTYPE r [\(entities)]><r>&lol9;</r>"
    let expanded = try request(server.port, "POST", "/xxe", text: laughs)
    #expect(expanded.status == 200)
    #expect(expanded.body.count < 4096)
    #expect(try request(server.port, "POST", "/xxe-match", text: laughs).status == 404)
    #expect(server.isRunning)
  }

  /// libxml2 is not mapped into a server whose stubs use no XML (issue 20's idle memory); the first XML
  /// stub, added at run time, loads it, and the matcher answers as with fixtures.
  @Test func libxml2IsLoadedOnFirstXMLUse() throws {
    let fixtures = try TemporaryFixtures([("plain.json", stubJSON(["method": "GET", "url": "/plain"]))])
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let mapsPath = "/proc/\(server.processIdentifier)/maps"
    let maps = { (try? String(contentsOfFile: mapsPath, encoding: .utf8)) ?? "" }
    #expect(try request(server.port, "GET", "/plain").status == 200)
    #expect(!maps().contains("libxml2"))
    let added = try request(
      server.port, "POST", "/__admin/mappings", headers: [("Content-Type", "application/json")],
      text: stubJSON([
        "method": "POST", "url": "/xpath/late", "bodyPatterns": [["matchesXPath": "/a/b[. = '1']"]],
      ]))
    #expect(added.status == 201)
    #expect(maps().contains("libxml2"))
    #expect(try post(server.port, "/xpath/late", "<a><b>1</b></a>") == 200)
    #expect(try post(server.port, "/xpath/late", "<a><b>2</b></a>") == 404)
  }

  /// Lint reports a bad XPath and a bad equalToXml with file, JSON path and reason.
  @Test func badXMLMatchersAreLintErrors() throws {
    let fixtures = try TemporaryFixtures([
      ("bad-xpath.json", stubJSON(["url": "/a", "bodyPatterns": [["matchesXPath": "/a[["]]])),
      ("bad-xml.json", stubJSON(["url": "/b", "bodyPatterns": [["equalToXml": "<a><b></a>"]]])),
      (
        "bad-exempt.json",
        stubJSON(["url": "/c", "bodyPatterns": [["equalToXml": "<a/>", "exemptedComparisons": ["NOPE"]]]])
      ),
    ])
    defer { fixtures.remove() }
    let (status, text) = try lint(fixtures)
    #expect(status != 0)
    #expect(text.contains("mappings/bad-xpath.json: $.request.bodyPatterns[0].matchesXPath"), "\(text)")
    #expect(text.contains("mappings/bad-xml.json: $.request.bodyPatterns[0].equalToXml"), "\(text)")
    #expect(
      text.contains("mappings/bad-exempt.json: $.request.bodyPatterns[0].exemptedComparisons[0]"), "\(text)")
  }
}
