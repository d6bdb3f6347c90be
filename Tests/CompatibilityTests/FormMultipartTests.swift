import Foundation
import MockServerTesting
import TestSupport
import Testing

/// `formParameters` and `multipartPatterns` (issue 17) against the real binary over sockets.
@Suite("Form and multipart matchers over sockets")
struct FormMultipartTests {
  static let form = ("Content-Type", "application/x-www-form-urlencoded")

  @Test func formParametersDecodeAsWHATWGAndMatchRepeatedKeys() throws {
    let fixtures = try TemporaryFixtures([
      (
        "form.json",
        stubJSON([
          "method": "POST", "url": "/form",
          "formParameters": [
            "tool": ["equalTo": "Wire Mock"], "city": ["equalTo": "café & co"],
            "tag": ["hasExactly": [["equalTo": "a"], ["equalTo": "b"]]],
          ],
        ])
      ),
      (
        "includes.json",
        stubJSON([
          "method": "POST", "url": "/form/includes",
          "formParameters": ["tag": ["includes": [["equalTo": "b"]]], "gone": ["absent": true]],
        ])
      ),
    ])
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let p = server.port
    func post(_ path: String, _ body: String, type: (String, String) = FormMultipartTests.form) throws
      -> Reply
    {
      try request(p, "POST", path, headers: [type], text: body)
    }
    #expect(try post("/form", "tool=Wire+Mock&city=caf%C3%A9+%26+co&tag=b&tag=a").status == 200)
    #expect(try post("/form", "tool=Wire%20Mock&city=caf%C3%A9%20%26%20co&tag=a&tag=b").status == 200)
    #expect(try post("/form", "tool=Wire+Mock&city=caf%C3%A9+%26+co&tag=a").status == 404)
    #expect(try post("/form", "tool=Wire+Mock&city=caf%C3%A9+%26+co&tag=a&tag=b&tag=c").status == 404)
    #expect(try post("/form", "tool=WireMock&city=caf%C3%A9+%26+co&tag=a&tag=b").status == 404)
    // Not a form body: no fields.
    #expect(
      try post(
        "/form", "tool=Wire+Mock&city=caf%C3%A9+%26+co&tag=a&tag=b", type: ("Content-Type", "text/plain")
      )
      .status == 404)
    #expect(try post("/form/includes", "tag=a&tag=b").status == 200)
    #expect(try post("/form/includes", "tag=a&gone=1").status == 404)
    // The near miss names the form parameter.
    let miss = try post("/form", "tool=Other")
    #expect(miss.text.contains("form parameter"), "\(miss.text)")
  }

  static func multipart(_ parts: [(headers: [String], body: String)], boundary: String = "XyZ-boundary")
    -> [UInt8]
  {
    var out = "preamble\r\n"
    for part in parts {
      out += "--\(boundary)\r\n" + part.headers.map { $0 + "\r\n" }.joined() + "\r\n" + part.body + "\r\n"
    }
    out += "--\(boundary)--\r\nepilogue"
    return Array(out.utf8)
  }

  @Test func multipartPatternsMatchPartsByHeadersAndBody() throws {
    let fixtures = try TemporaryFixtures([
      (
        "any.json",
        stubJSON([
          "method": "POST", "url": "/upload",
          "multipartPatterns": [
            [
              "matchingType": "ANY",
              "headers": ["Content-Disposition": ["contains": "name=\"info\""]],
              "bodyPatterns": [["equalToJson": ["id": 1]]],
            ]
          ],
        ])
      ),
      (
        "all.json",
        stubJSON([
          "method": "POST", "url": "/upload/all",
          "multipartPatterns": [
            ["matchingType": "ALL", "headers": ["Content-Disposition": ["contains": "form-data"]]]
          ],
        ])
      ),
    ])
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let p = server.port
    let type = ("Content-Type", "multipart/form-data; boundary=\"XyZ-boundary\"")
    let good = FormMultipartTests.multipart([
      (
        ["Content-Disposition: form-data; name=\"file\"; filename=\"a.txt\"", "Content-Type: text/plain"],
        "hello"
      ),
      (
        ["Content-Disposition: form-data; name=\"info\"", "Content-Type: application/json"], #"{ "id" : 1 }"#
      ),
    ])
    #expect(try request(p, "POST", "/upload", headers: [type], body: good).status == 200)
    let wrongBody = FormMultipartTests.multipart([
      (["Content-Disposition: form-data; name=\"info\""], #"{"id":2}"#)
    ])
    #expect(try request(p, "POST", "/upload", headers: [type], body: wrongBody).status == 404)
    let wrongName = FormMultipartTests.multipart([
      (["Content-Disposition: form-data; name=\"other\""], #"{"id":1}"#)
    ])
    #expect(try request(p, "POST", "/upload", headers: [type], body: wrongName).status == 404)
    #expect(
      try request(p, "POST", "/upload", headers: [("Content-Type", "text/plain")], body: good).status == 404)

    #expect(try request(p, "POST", "/upload/all", headers: [type], body: good).status == 200)
    let mixed = FormMultipartTests.multipart([
      (["Content-Disposition: form-data; name=\"a\""], "1"),
      (["Content-Disposition: attachment; filename=\"x\""], "2"),
    ])
    #expect(try request(p, "POST", "/upload/all", headers: [type], body: mixed).status == 404)
  }
}
