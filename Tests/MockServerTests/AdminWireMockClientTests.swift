import Foundation
import Testing

@testable import MockServer

/// The Python script the test runs: the PyPI `wiremock` admin client creates a stub, a plain request is
/// sent three times, and the client counts the requests by pattern and lists mappings and requests.
private let script = #"""
  import sys, urllib.request
  from wiremock.constants import Config
  from wiremock.client import (Mappings, Mapping, MappingRequest, MappingResponse, Requests,
                               HttpMethods, NearMissMatchPatternRequest)

  port = sys.argv[1]
  Config.base_url = "http://127.0.0.1:%s/__admin" % port
  created = Mappings.create_mapping(Mapping(
      priority=1,
      request=MappingRequest(method=HttpMethods.GET, url="/py/hello"),
      response=MappingResponse(status=200, body="hi from python"),
      persistent=False))
  assert created.id, "created mapping has no id"
  for _ in range(3):
      body = urllib.request.urlopen("http://127.0.0.1:%s/py/hello" % port).read().decode()
      assert body == "hi from python", body
  count = Requests.get_matching_request_count(NearMissMatchPatternRequest(url="/py/hello", method="GET"))
  all_mappings = Mappings.retrieve_all_mappings()
  all_requests = Requests.get_all_received_requests()
  print("count=%d mappings=%d requests=%d id=%s" % (
      count.count, len(all_mappings.mappings), len(all_requests.requests), created.id))
  """#

@Suite("Admin API with the Python wiremock client")
struct AdminWireMockClientTests {
  /// The package root (for `Tests/setup.sh`).
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static func run(_ arguments: [String], input: String? = nil) throws -> (status: Int32, output: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = arguments
    process.currentDirectoryURL = root
    let pipe = Pipe()
    process.standardOutput = pipe
    process.standardError = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return (process.terminationStatus, String(decoding: data, as: UTF8.self))
  }

  @Test("create a stub, send a request, count it")
  func pythonClient() async throws {
    // Installs the client when missing (make test runs this first too).
    if try AdminWireMockClientTests.run(["python3", "-c", "import wiremock.client"]).status != 0 {
      let setup = try AdminWireMockClientTests.run(["sh", "Tests/setup.sh"])
      #expect(setup.status == 0, "Tests/setup.sh failed: \(setup.output)")
    }
    let file = NSTemporaryDirectory() + "mockserver-wiremock-\(UUID().uuidString).py"
    try Data(script.utf8).write(to: URL(fileURLWithPath: file))
    defer { try? FileManager.default.removeItem(atPath: file) }
    try await withMockService { service, port in
      let (status, output) = try AdminWireMockClientTests.run(["python3", file, String(port)])
      #expect(status == 0, "python wiremock client failed: \(output)")
      #expect(output.contains("count=3 mappings=1 requests=3"), "\(output)")
      #expect(service.journal.count(stubID: service.store.stubs.first?.id ?? "") == 3)
    }
  }
}
