import Foundation
import HTTPCore
import MockServerCLI

@testable import MockServer

/// Writes `mappings` (a JSON array of WireMock stub mappings) and optional `__files` into a temporary
/// fixtures folder, loads it, and serves it with a ``MockService`` on a free loopback port.
func withMockServer<T>(
  mappings: String, files: [String: String] = [:],
  configure: (inout MockServiceConfiguration) -> Void = { _ in },
  _ body: (HTTPServer, MockService) async throws -> T
) async throws -> T {
  let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fixtures-\(UUID())")
  try FileManager.default.createDirectory(
    at: directory.appendingPathComponent("mappings"), withIntermediateDirectories: true)
  try FileManager.default.createDirectory(
    at: directory.appendingPathComponent("__files"), withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  try Data("{\"mappings\": \(mappings)}".utf8).write(
    to: directory.appendingPathComponent("mappings/stubs.json"))
  for (name, content) in files {
    try Data(content.utf8).write(to: directory.appendingPathComponent("__files/\(name)"))
  }
  let fixtures = FixtureLoader.load(directory: directory.path)
  if fixtures.hasErrors { throw HarnessError.invalidFixtures(fixtures.report()) }
  var configuration = MockServiceConfiguration()
  configuration.adminResponseCheck = AdminResponseCheck.fromEnvironment
  configuration.fixturesDirectory = directory.path
  configuration.logLevel = .quiet
  configure(&configuration)
  let service = MockService(configuration: configuration, fixtures: fixtures)
  var serverConfiguration = ServerConfiguration()
  serverConfiguration.port = 0
  serverConfiguration.shutdownGraceMilliseconds = 500
  serverConfiguration.maxHoldMilliseconds = configuration.maxHoldMilliseconds
  let server = HTTPServer(configuration: serverConfiguration, responder: service)
  try server.start()
  defer { server.shutdown(graceful: false) }
  return try await body(server, service)
}

enum HarnessError: Error { case invalidFixtures(String) }
