import Foundation
import MockServerTesting
import TestSupport
import Testing

/// The helpers issue 14 still lacked, with WireMock's documented examples, over sockets.
@Suite("Templating helpers: XML, forms, numbers, JSON editing")
struct TemplateHelperTests {
  typealias Case = TemplateCase

  static let soap = """
    <soap:Envelope xmlns:soap="http://www.w3.org/2003/05/soap-envelope/"><soap:Body><m:a xmlns:m="urn:m"><m:test>success</m:test></m:a></soap:Body></soap:Envelope>
    """

  static let cases: [Case] = [
    Case(
      template: "{{xPath request.body '/outer/inner/text()'}}", body: "<outer><inner>Stuff</inner></outer>",
      expected: "Stuff"),
    Case(
      template: "{{xPath request.body '/outer/inner/@id'}}",
      body: "<outer><inner id=\"42\">x</inner></outer>",
      expected: "42"),
    Case(
      template: "{{xPath request.body '/outer/inner'}}", body: "<outer><inner><a>1</a></inner></outer>",
      expected: "<inner><a>1</a></inner>"),
    Case(
      template: "{{#each (xPath request.body '/list/item/text()') as |i|}}[{{i}}]{{/each}}",
      body: "<list><item>a</item><item>b</item></list>", expected: "[a][b]"),
    Case(template: "{{xPath request.body 'count(/l/i)'}}", body: "<l><i/><i/><i/></l>", expected: "3"),
    Case(template: "{{soapXPath request.body '/a/test/text()'}}", body: soap, expected: "success"),
    Case(
      template: "{{formData request.body 'form' urlDecode=true}}{{form.formField3}}",
      body: "formField1=value1&formField2=value2&formField3=value%203", expected: "value 3"),
    Case(
      template: "{{formData request.body 'form'}}{{form.formField3}}",
      body: "formField3=value%203", expected: "value%203"),
    Case(
      template: "{{formData request.body 'form' urlDecode=true}}{{form.multi.[1]}}", body: "multi=a&multi=b",
      expected: "b"),
    Case(
      template:
        "{{request.parts.info.body}} {{request.parts.info.headers.content-type}} {{request.parts.file.name}}",
      body:
        "--b1\r\nContent-Disposition: form-data; name=\"info\"\r\nContent-Type: application/json\r\n\r\n{\"id\":1}\r\n"
        + "--b1\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.txt\"\r\n\r\nhello\r\n--b1--\r\n",
      contentType: "multipart/form-data; boundary=b1", expected: "{\"id\":1} application/json file"),
    Case(
      template: "{{formatXml request.body}}", body: "<a>\n <b x=\"1\">t</b>   <c/></a>",
      expected: "<a>\n  <b x=\"1\">t</b>\n  <c/>\n</a>\n"),
    Case(
      template: "{{formatXml request.body format='compact'}}", body: "<a>\n <b>t</b>\n</a>",
      expected: "<a><b>t</b></a>"),
    Case(template: "{{numberFormat 123.4567 '###.00'}}", expected: "123.46"),
    Case(template: "{{numberFormat 1234567 'integer'}}", expected: "1,234,567"),
    Case(template: "{{numberFormat 0.25 'percent'}}", expected: "25%"),
    Case(template: "{{numberFormat 1234.5 'number' 'en_US'}}", expected: "1,234.5"),
    Case(template: "{{numberFormat 1234.5 'number' 'de_DE'}}", expected: "1.234,5"),
    Case(template: "{{numberFormat 12.3 minimumFractionDigits=2}}", expected: "12.30"),
    Case(
      template: #"{{jsonMerge '{"a":1,"b":{"c":2}}' '{"b":{"d":3},"e":4}'}}"#,
      expected: "{\n  \"a\" : 1,\n  \"b\" : {\n    \"c\" : 2,\n    \"d\" : 3\n  },\n  \"e\" : 4\n}"),
    Case(
      template: #"{{jsonRemove '{"id":1,"secret":"x","name":"n"}' '$.secret'}}"#,
      expected: "{\n  \"id\" : 1,\n  \"name\" : \"n\"\n}"),
    Case(
      template: #"{{jsonRemove '[{"id":1},{"id":2}]' '$[0]'}}"#, expected: "[ {\n  \"id\" : 2\n} ]"),
    Case(template: #"{{jsonArrayAdd '[1,2]' '3'}}"#, expected: "[ 1, 2, 3 ]"),
    Case(template: #"{{jsonArrayAdd '[1,2]' '[3,4]' flatten=true}}"#, expected: "[ 1, 2, 3, 4 ]"),
    Case(template: #"{{jsonArrayAdd '[1,2,3]' '4' maxItems=3}}"#, expected: "[ 2, 3, 4 ]"),
    Case(
      template: #"{{jsonArrayAdd '{"items":[1]}' '2' jsonPath='$.items'}}"#,
      expected: "{\n  \"items\" : [ 1, 2 ]\n}"),
  ]

  @Test func helpersRenderAsWireMockDocuments() throws {
    try expectEachRenders(TemplateHelperTests.cases)
  }
}
