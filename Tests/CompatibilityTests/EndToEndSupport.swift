import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

struct TestFailure: Error, CustomStringConvertible {
  var description: String
  init(_ d: String) { description = d }
}

/// A parsed response: status, header fields (names lower-cased), body bytes.
struct Reply {
  var status: Int
  var headers: [(String, String)]
  var body: [UInt8]
  var text: String { String(decoding: body, as: UTF8.self) }
  func header(_ name: String) -> String? { headers.first { $0.0 == name.lowercased() }?.1 }

  init(_ bytes: [UInt8]) {
    let marker: [UInt8] = [13, 10, 13, 10]
    var end = bytes.count
    if bytes.count >= 4 {
      for i in 0...(bytes.count - 4) where Array(bytes[i..<i + 4]) == marker {
        end = i
        break
      }
    }
    let head = String(decoding: bytes[0..<end], as: UTF8.self)
    let lines = head.components(separatedBy: "\r\n")
    status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    headers = lines.dropFirst().compactMap { line in
      guard let colon = line.firstIndex(of: ":") else { return nil }
      return (
        line[..<colon].lowercased(), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
      )
    }
    body = end + 4 <= bytes.count ? Array(bytes[(end + 4)...]) : []
  }
}

/// Sends a request with `Connection: close` and a `Content-Length` for `body`.
func request(
  _ port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], body: [UInt8] = []
) throws -> Reply {
  var head = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
  for (n, v) in headers { head += "\(n): \(v)\r\n" }
  if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
  head += "\r\n"
  return Reply(try RawClient.exchange(port: port, Array(head.utf8) + body, timeout: 15))
}

/// Sends text as the body (UTF-8).
func request(
  _ port: Int, _ method: String, _ target: String, headers: [(String, String)] = [], text: String
) throws -> Reply {
  try request(port, method, target, headers: headers, body: Array(text.utf8))
}

/// Starts the real `mockserver` binary on `fixtures` (no watching unless asked).
func launch(_ fixtures: TemporaryFixtures, watch: Bool = false, extra: [String] = []) throws
  -> MockServerProcess
{
  try MockServerProcess.launch(
    arguments: ["--fixtures", fixtures.fixtures] + (watch ? [] : ["--no-watch"]) + extra)
}

/// A stub JSON with the given request and response objects.
func stub(_ request: String, _ response: String = #"{"status":200,"body":"matched"}"#) -> String {
  #"{"request":\#(request),"response":\#(response)}"#
}

/// A stub from Swift values (serialized with JSONSerialization, so XML and regexes need no escaping).
func stubJSON(_ request: [String: Any], _ response: [String: Any] = ["status": 200, "body": "matched"])
  -> String
{
  let data =
    (try? JSONSerialization.data(withJSONObject: ["request": request, "response": response])) ?? Data()
  return String(decoding: data, as: UTF8.self)
}

/// One templating case: a stub body `template` rendered for a POST with `body`, expected as `expected`.
struct TemplateCase: Sendable, CustomTestStringConvertible {
  var template: String
  var body = ""
  var contentType = "text/plain"
  var expected: String
  var testDescription: String { template }
}

/// Serves each case as a templated stub from the `mockserver` binary and checks its rendered text.
func expectEachRenders(_ cases: [TemplateCase]) throws {
  var stubs: [(String, String)] = []
  for (k, c) in cases.enumerated() {
    stubs.append(
      (
        "case\(k).json",
        stubJSON(
          ["method": "POST", "url": "/case/\(k)"],
          ["status": 200, "body": c.template, "transformers": ["response-template"]])
      ))
  }
  let fixtures = try TemporaryFixtures(stubs)
  defer { fixtures.remove() }
  let server = try launch(fixtures)
  defer { server.stop() }
  for (k, c) in cases.enumerated() {
    let reply = try request(
      server.port, "POST", "/case/\(k)", headers: [("Content-Type", c.contentType)], text: c.body)
    #expect(reply.status == 200, "\(c.template)")
    #expect(reply.text == c.expected, "case \(k): \(c.template)")
  }
}

/// Runs `mockserver lint` on `fixtures`: its exit status and its output (both streams).
func lint(_ fixtures: TemporaryFixtures) throws -> (status: Int32, output: String) {
  let result = try runProcess(
    MockServerProcess.defaultBinary(), ["lint", "--fixtures", fixtures.fixtures], mergingErrors: true)
  return (result.status, result.stdout)
}
