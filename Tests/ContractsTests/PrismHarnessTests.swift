import Contracts
import Foundation
import HTTPCore
import MockJSON
import MockServer
import MockServerCLI
import MockServerTesting
import TestSupport
import Testing

/// Prism's own test harness (stoplightio/prism, `test-harness/specs/`), re-stated in
/// `PrismHarness/cases.json`: each case names the harness spec it comes from (`source`), the document
/// (as JSON), the request and the answer expected (status, the headers that matter, the body as JSON, text,
/// XML, a problem report with its violations' locations and keywords, or empty). Every spec that applies to
/// a mock without Prism's random-data mode (`-d`), its proxy to outside hosts, Postman collections or its
/// own implementation limits is there, Swagger 2.0 twins included. A case with `difference` is a stated
/// difference from Prism (docs/contracts.md): its `expect` is our answer, and the difference names Prism's.
///
/// Each case is served by the in-process server as `mockserver --openapi DOC` with the case's `options`
/// wires it (OpenAPIServing), over a real socket, one server per case. `slViolations` lists what Prism's
/// `sl-violations` header holds (location, severity, code); Prism's specs that do not show the header
/// do not compare it.
@Suite struct PrismHarnessTests {
  struct Case: Sendable, CustomTestStringConvertible {
    var source: String
    var value: JSONValue
    var testDescription: String { source.replacingOccurrences(of: "test-harness/specs/", with: "") }
  }

  static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
    "PrismHarness")

  static let cases: [Case] = {
    guard let data = FileManager.default.contents(atPath: folder.appendingPathComponent("cases.json").path),
      let list = (try? JSONValue.parse(bytes: Array(data)))?.arrayValue
    else { return [] }
    return list.map { Case(source: $0["source"]?.stringValue ?? "?", value: $0) }
  }()

  @Test func theCaseListIsComplete() {
    #expect(PrismHarnessTests.cases.count >= 200, "PrismHarness/cases.json is missing or short")
    let sources = PrismHarnessTests.cases.map(\.source)
    #expect(Set(sources).count == sources.count, "a harness spec is listed twice")
  }

  @Test(arguments: PrismHarnessTests.cases)
  func harnessCase(_ c: Case) throws {
    let folder = NSTemporaryDirectory() + "prism-harness-" + UUID().uuidString
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let spec = folder + "/openapi.json"
    try Data((c.value["document"] ?? .null).serialized().utf8).write(to: URL(fileURLWithPath: spec))
    let document = try OpenAPIDocument.load(path: spec)
    let options = c.value["options"]?.arrayValue?.compactMap(\.stringValue) ?? []
    var configuration = MockServiceConfiguration()
    configuration.adminResponseCheck = AdminResponseCheck.fromEnvironment
    configuration.logLevel = .quiet
    OpenAPIServing.configure(
      &configuration, document: document,
      options: try CommandLineOptions.parse(["--openapi", spec] + options))
    let service = MockService(configuration: configuration, fixtures: FixtureSet())
    var serverConfiguration = ServerConfiguration()
    serverConfiguration.port = 0
    let server = HTTPServer(configuration: serverConfiguration, responder: service)
    try server.start()
    defer { server.shutdown(graceful: false) }

    let request = c.value["request"] ?? .null
    let reply = try PrismHarnessTests.send(request, port: server.port)
    let expect = c.value["expect"] ?? .null
    let context = "\(c.source)\n\(reply.head)\n\n\(String(decoding: reply.body, as: UTF8.self))"
    #expect(reply.status == expect["status"]?.numberValue?.intValue, "\(context)")
    for header in expect["headers"]?.objectValue ?? JSONObject() {
      let found = reply.headers[header.key.lowercased()]
      if header.key.lowercased() == "content-type" {
        #expect(found.map { MediaTypeName($0).essence } == header.value.stringValue, "\(context)")
      } else {
        #expect(found == header.value.stringValue, "\(header.key): \(context)")
      }
    }
    if let wanted = expect["slViolations"]?.arrayValue {
      // Prism's sl-violations header: each violation's location, severity and code (messages are ours).
      let listed =
        reply.headers["sl-violations"].flatMap { try? JSONValue.parse(bytes: Array($0.utf8)) }?.arrayValue
        ?? []
      #expect(listed.count == wanted.count, "sl-violations: \(context)")
      for w in wanted {
        #expect(
          listed.contains {
            $0["location"] == w["location"] && $0["severity"] == w["severity"] && $0["code"] == w["code"]
          }, "sl-violations \(w.serialized()) missing: \(context)")
      }
    }
    guard let body = expect["body"] else { return }
    let text = String(decoding: reply.body, as: UTF8.self)
    if body["empty"] != nil {
      #expect(reply.body.isEmpty, "\(context)")
    } else if let json = body["json"] {
      #expect((try? JSONValue.parse(bytes: reply.body)) == json, "\(context)")
    } else if let expected = body["text"]?.stringValue {
      #expect(text == expected, "\(context)")
    } else if let xml = body["xml"]?.stringValue {
      #expect(PrismHarnessTests.compactXML(text) == PrismHarnessTests.compactXML(xml), "\(context)")
    } else if let problem = body["problem"] {
      #expect(reply.headers["content-type"].map { MediaTypeName($0).essence } == "application/problem+json")
      let report = try? JSONValue.parse(bytes: reply.body)
      #expect(report?["status"] == problem["status"], "\(context)")
      #expect(report?["detail"]?.stringValue?.isEmpty == false, "\(context)")
      let ours = (report?["validation"]?.arrayValue ?? []).map {
        ($0["location"] ?? .null, $0["code"]?.stringValue)
      }
      for wanted in problem["violations"]?.arrayValue ?? [] {
        let location = wanted["location"] ?? .null
        let keyword = wanted["keyword"]?.stringValue
        #expect(
          ours.contains { $0.0 == location && (keyword == nil || $0.1 == keyword) },
          "violation \(location) \(keyword ?? "") missing: \(context)")
      }
    }
  }

  /// Whitespace between elements dropped.
  static func compactXML(_ text: String) -> String {
    text.replacingOccurrences(of: ">\\s+<", with: "><", options: .regularExpression)
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  struct Reply {
    var status: Int
    var head: String
    var headers: [String: String]
    var body: [UInt8]
  }

  /// Sends the case's request (curl's form: `Accept: */*` unless given, form fields as multipart) with
  /// `Connection: close` and reads the answer.
  static func send(_ request: JSONValue, port: Int) throws -> Reply {
    let method = request["method"]?.stringValue ?? "GET"
    let target = request["target"]?.stringValue ?? "/"
    var headers: [(String, String)] = [("Host", "127.0.0.1:\(port)")]
    for h in request["headers"]?.objectValue ?? JSONObject() {
      headers.append((h.key, h.value.stringValue ?? ""))
    }
    var body = Array((request["body"]?.stringValue ?? "").utf8)
    if let fields = request["multipart"]?.arrayValue {
      let boundary = "------------------------harness0123456789"
      var text = ""
      for field in fields {
        let name = field.arrayValue?.first?.stringValue ?? ""
        let value = field.arrayValue?.dropFirst().first?.stringValue ?? ""
        text += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n"
      }
      text += "--\(boundary)--\r\n"
      body = Array(text.utf8)
      headers.removeAll { $0.0.lowercased() == "content-type" }
      headers.append(("Content-Type", "multipart/form-data; boundary=\(boundary)"))
    }
    if !body.isEmpty { headers.append(("Content-Length", String(body.count))) }
    headers.append(("Connection", "close"))
    let head = "\(method) \(target) HTTP/1.1\r\n" + headers.map { "\($0.0): \($0.1)\r\n" }.joined() + "\r\n"
    let bytes = try RawClient.exchange(port: port, Array(head.utf8) + body, timeout: 20)
    guard let end = bytes.firstRange(of: Array("\r\n\r\n".utf8)) else {
      return Reply(status: 0, head: String(decoding: bytes, as: UTF8.self), headers: [:], body: [])
    }
    let headText = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
    let lines = headText.components(separatedBy: "\r\n")
    let status = Int(lines[0].split(separator: " ").dropFirst().first ?? "") ?? 0
    var fields: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    return Reply(status: status, head: headText, headers: fields, body: Array(bytes[end.upperBound...]))
  }
}
