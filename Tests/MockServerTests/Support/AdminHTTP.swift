import Foundation
import HTTPCore
import MockServerCLI
import TestSupport

@testable import Mappings
@testable import MockJSON
@testable import MockServer

/// One HTTP exchange's result, for admin API tests.
struct Reply {
  var status: Int
  /// Header fields, names lower-cased.
  var headers: [String: String]
  var body: String
  var json: JSONValue? { try? JSONValue.parse(body) }
}

/// Sends one request on a fresh connection (`Connection: close`) and reads the response.
func http(
  _ port: Int, _ method: String, _ target: String, body: String? = nil, headers: [String: String] = [:]
) throws -> Reply {
  let client = try RawClient(port: port)
  var text = "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
  for (k, v) in headers { text += "\(k): \(v)\r\n" }
  if let body { text += "Content-Length: \(body.utf8.count)\r\n" }
  text += "\r\n" + (body ?? "")
  client.send(text)
  let (raw, _) = client.readResponse(timeout: 10)
  return parseReply(raw)
}

func parseReply(_ raw: String) -> Reply {
  guard let split = raw.range(of: "\r\n\r\n") else { return Reply(status: 0, headers: [:], body: raw) }
  let lines = raw[..<split.lowerBound].components(separatedBy: "\r\n")
  let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
  var headers: [String: String] = [:]
  for line in lines.dropFirst() {
    guard let colon = line.firstIndex(of: ":") else { continue }
    headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
      in: .whitespaces)
  }
  return Reply(status: status, headers: headers, body: String(raw[split.upperBound...]))
}

/// An empty fixture set.
let noFixtures = FixtureSet(stubs: [], envelopes: EnvelopeSet(), problems: [])

/// Starts a ``MockService`` behind an ``HTTPServer`` on a free port.
func withMockService<T>(
  configure: (inout MockServiceConfiguration) -> Void = { _ in }, fixtures: FixtureSet = noFixtures,
  server: (inout ServerConfiguration) -> Void = { _ in },
  _ body: (MockService, Int) async throws -> T
) async throws -> T {
  var configuration = MockServiceConfiguration()
  configuration.adminResponseCheck = AdminResponseCheck.fromEnvironment
  configuration.logLevel = .quiet
  configure(&configuration)
  let service = MockService(configuration: configuration, fixtures: fixtures)
  return try await withServer(configure: server, responder: service) { s in try await body(service, s.port) }
}
