import Foundation
import TestSupport
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

/// The whole admin surface of the PyPI `wiremock` client (issue 18): every resource method of Mappings,
/// Requests, NearMisses, Scenarios and GlobalSettings, each result checked. Prints `ALL OK` at the end.
private let surfaceScript = #"""
  import sys, time, urllib.request, urllib.error
  from wiremock.constants import Config
  from wiremock.client import (Mappings, Mapping, MappingRequest, MappingResponse, Requests, NearMisses,
                               Scenarios, GlobalSettings, GlobalSetting, HttpMethods, NearMissMatchRequest,
                               NearMissMatchPatternRequest)

  port = sys.argv[1]
  base = "http://127.0.0.1:%s" % port
  Config.base_url = base + "/__admin"
  def get(path):
      try:
          with urllib.request.urlopen(base + path) as r:
              return r.status, r.read().decode()
      except urllib.error.HTTPError as e:
          return e.code, e.read().decode()

  # Mappings
  Mappings.delete_all_mappings()
  a = Mappings.create_mapping(Mapping(
      priority=1, request=MappingRequest(method=HttpMethods.GET, url="/a"),
      response=MappingResponse(status=200, body="a"), metadata={"team": "x"}))
  b = Mappings.create_mapping(Mapping(
      request=MappingRequest(method=HttpMethods.GET, url="/b"), response=MappingResponse(status=201, body="b"),
      scenario_name="flow", required_scenario_state="Started", new_scenario_state="second"))
  assert Mappings.retrieve_mapping(a.id).request.url == "/a"
  listed = Mappings.retrieve_all_mappings()
  assert listed.meta.total == 2 and len(listed.mappings) == 2, listed
  a.response = MappingResponse(status=200, body="a2")
  assert Mappings.update_mapping(a).response.body == "a2"
  assert get("/a") == (200, "a2")
  Mappings.persist_mappings()
  Mappings.delete_mapping_by_metadata({"matchesJsonPath": {"expression": "$.team", "equalTo": "x"}})
  assert get("/a")[0] == 404
  Mappings.reset_mappings()
  assert Mappings.retrieve_all_mappings().meta.total == 2  # the saved files are the folder's stubs now

  # Scenarios: /b moves the scenario on, so a second /b misses; reset starts it again.
  assert get("/b")[0] == 201 and get("/b")[0] == 404
  Scenarios.reset_all_scenarios()
  assert get("/b")[0] == 201

  # Requests
  Requests.reset_request_journal()
  get("/a"); get("/a"); get("/nothing")
  all_requests = Requests.get_all_received_requests()
  assert len(all_requests.requests) == 3, all_requests
  assert len(Requests.get_all_received_requests(limit=1).requests) == 1
  first = all_requests.requests[0]
  assert Requests.get_request(first.id).request.url == first.request.url
  count = Requests.get_matching_request_count(NearMissMatchPatternRequest(url="/a", method="GET"))
  assert count.count == 2, count
  found = Requests.get_matching_requests(NearMissMatchPatternRequest(url="/a", method="GET"))
  assert len(found.requests) == 2
  unmatched = Requests.get_unmatched_requests()
  assert [r.url for r in unmatched.requests] == ["/nothing"], unmatched
  near = Requests.get_unmatched_requests_near_misses()
  assert len(near.near_misses) >= 1

  # Near misses
  by_request = NearMisses.find_nearest_misses_by_request(NearMissMatchRequest(url="/aa", method="GET"))
  assert len(by_request.near_misses) >= 1
  by_pattern = NearMisses.find_nearest_misses_by_request_pattern(
      NearMissMatchPatternRequest(url="/nothinG", method="GET"))
  assert len(by_pattern.near_misses) >= 1

  # Settings
  GlobalSettings.update_global_settings(GlobalSetting(fixed_delay=250))
  started = time.time(); get("/a")
  assert time.time() - started >= 0.24
  GlobalSettings.update_global_settings(GlobalSetting(fixed_delay=0))

  Mappings.delete_mapping(b.id)
  Mappings.delete_all_mappings()
  assert Mappings.retrieve_all_mappings().meta.total == 0
  print("ALL OK")
  """#

@Suite("Admin API with the Python wiremock client")
struct AdminWireMockClientTests {
  /// The package root (for `Tests/setup.sh`).
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
    let result = try runProcess(
      arguments[0], Array(arguments.dropFirst()), in: root.path, mergingErrors: true)
    return (result.status, result.stdout)
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

  @Test("the client's whole admin surface: mappings, requests, near misses, scenarios, settings")
  func pythonClientSurface() async throws {
    if try AdminWireMockClientTests.run(["python3", "-c", "import wiremock.client"]).status != 0 {
      let setup = try AdminWireMockClientTests.run(["sh", "Tests/setup.sh"])
      #expect(setup.status == 0, "Tests/setup.sh failed: \(setup.output)")
    }
    let folder = NSTemporaryDirectory() + "mockserver-wiremock-surface-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder + "/mappings", withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let file = folder + "/surface.py"
    try Data(surfaceScript.utf8).write(to: URL(fileURLWithPath: file))
    try await withMockService(configure: { $0.fixturesDirectory = folder }) { _, port in
      let (status, output) = try AdminWireMockClientTests.run(["python3", file, String(port)])
      #expect(status == 0, "python wiremock client failed: \(output)")
      #expect(output.contains("ALL OK"), "\(output)")
    }
  }
}
