// libFuzzer entry point for the XML reader (libxml2 through XMLSupport): `make fuzz` links it with the
// objects of MockServer's dependency closure. Any input is an XML document. It is read the way `equalToXml`
// and `matchesXPath` read a body (through the stub parser's own matcher parsing), formatted as the
// `formatXml` helper does, and queried as the `xPath` helper does. A few fixed XPath expressions run on it
// (string functions that take whole subtrees' text, counts, attributes, namespaces); when the input's
// first line compiles as XPath, it runs too and the document is the rest. A document that parses must be similar to itself under
// `equalToXml` (each namespace awareness, same-name order ignored or not). Entities stay internal and
// bounded: libxml2 never loads an external one (XMLSupport's loader refuses them). Nothing may crash.

import Mappings
import MockJSON
import XMLSupport

let fixedExpressions = [
  "count(//*)", "//*[contains(., 'x')]", "string(/*)", "//@*", "//text()", "name(/*)",
  "//*[local-name()='Body']/*", "sum(//@*)", "//*[starts-with(normalize-space(.), 'a')]",
  "concat(substring-before(/*, ' '), translate(string(/*), 'abc', 'ABC'))",
]

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzXML(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let input = Array(UnsafeBufferPointer(start: data, count: size))
  // A first line that compiles as XPath is an expression to run on the rest; otherwise all is the document.
  let newline = input.firstIndex(of: 0x0A) ?? input.endIndex
  let firstLine = String(decoding: input[..<newline].prefix(200), as: UTF8.self)
  let lineIsExpression = newline < input.endIndex && XMLSupport.xpathProblem(firstLine) == nil
  let bytes = lineIsExpression ? Array(input[(newline + 1)...]) : input
  let text = String(decoding: bytes, as: UTF8.self)

  // What the templating helpers do with a body: `formatXml` and `xPath` (namespaces ignored).
  _ = try? XMLSupport.format(text, pretty: true)
  _ = try? XMLSupport.format(text, pretty: false)
  var operations = 0
  for expression in (lineIsExpression ? [firstLine] : []) + ["//*", "/*/@*"] {
    _ = try? XMLSupport.evaluateNodes(
      expression, in: bytes, namespaceAware: false, operationLimit: 100_000, operations: &operations)
  }

  // `equalToXml`: the document must be similar to itself, however namespaces and order are read.
  var diagnostics = Diagnostics(file: "fuzz.json")
  for options: [(String, JSONValue)] in [
    [], [("namespaceAwareness", .string("NONE"))], [("namespaceAwareness", .string("STRICT"))],
    [("ignoreOrderOfSameNode", .bool(true))],
  ] {
    let json = JSONValue.object(JSONObject(pairs: [("equalToXml", .string(text))] + options))
    guard let pattern = StubParser.parseMatcher(json, "$", &diagnostics) else { return 0 }
    guard pattern.match(text) else {
      fatalError("equalToXml \(json.serialized()) does not match its own document")
    }
  }

  // `matchesXPath`: fixed expressions, the first line, a namespace-aware one and one with a sub-matcher.
  var matchers: [JSONValue] = (fixedExpressions + (lineIsExpression ? [firstLine] : [])).map {
    .object(JSONObject(pairs: [("matchesXPath", .string($0))]))
  }
  matchers.append(
    .object(
      JSONObject(pairs: [
        ("matchesXPath", .string("//soap:Body/*")),
        ("xPathNamespaces", .object(JSONObject(pairs: [("soap", .string(soapNamespace))]))),
      ])))
  matchers.append(
    .object(
      JSONObject(pairs: [
        (
          "matchesXPath",
          .object(JSONObject(pairs: [("expression", .string("//*")), ("contains", .string("x"))]))
        )
      ])))
  for json in matchers {
    _ = StubParser.parseMatcher(json, "$", &diagnostics)?.match(text)
  }
  return 0
}

let soapNamespace = "http://schemas.xmlsoap.org/soap/envelope/"
