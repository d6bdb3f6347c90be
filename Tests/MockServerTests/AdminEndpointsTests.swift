import Foundation
import TestSupport
import Testing

@testable import MockJSON
@testable import MockServer

/// Issue 18: admin endpoints WireMock clients call that were missing.
@Suite("Admin endpoints: unmatched stubs, remove, files, metadata, settings, body files")
struct AdminEndpointsTests {
  @Test("GET/DELETE /__admin/mappings/unmatched and POST /__admin/mappings/remove")
  func unmatchedAndRemove() async throws {
    try await withMockService { service, port in
      for (id, url) in [("used", "/used"), ("idle", "/idle"), ("other", "/other")] {
        _ = try http(
          port, "POST", "/__admin/mappings",
          body: #"{"id":"\#(id)","request":{"method":"GET","url":"\#(url)"},"response":{"status":200}}"#)
      }
      _ = try http(port, "GET", "/used")
      let unmatched = try http(port, "GET", "/__admin/mappings/unmatched").json
      let ids = unmatched?["mappings"]?.arrayValue?.compactMap { $0["id"]?.stringValue }.sorted()
      #expect(ids == ["idle", "other"])
      #expect(unmatched?["meta"]?["total"]?.numberValue?.intValue == 2)

      // Remove by request pattern (the same JSON, members in another order).
      let removed = try http(
        port, "POST", "/__admin/mappings/remove", body: #"{"request":{"url":"/other","method":"GET"}}"#)
      #expect(removed.status == 200)
      #expect(service.store.stub(id: "other") == nil)
      #expect(service.store.stub(id: "idle") != nil)
      #expect(
        try http(port, "POST", "/__admin/mappings/remove", body: #"{"request":{"url":5}}"#).status == 400)

      #expect(try http(port, "DELETE", "/__admin/mappings/unmatched").status == 200)
      #expect(service.store.stubs.map(\.id) == ["used"])
    }
  }

  @Test(
    "journal listings as WireMock's: unmatched newest first, meta.total of the filtered entries, possibleStates only those named"
  )
  func journalOrderTotalsAndScenarioStates() async throws {
    try await withMockService { service, port in
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"id":"a","request":{"method":"GET","url":"/a"},"response":{"status":200}}"#)
      _ = try http(
        port, "POST", "/__admin/mappings",
        body:
          #"{"scenarioName":"checkout","newScenarioState":"paid","request":{"method":"POST","url":"/pay"},"response":{"status":200}}"#
      )
      for path in ["/a", "/first-miss", "/second-miss"] { _ = try http(port, "GET", path) }
      let unmatched = try http(port, "GET", "/__admin/requests/unmatched").json
      #expect(
        unmatched?["requests"]?.arrayValue?.compactMap { $0["url"]?.stringValue } == [
          "/second-miss", "/first-miss",
        ])
      let misses = try http(port, "GET", "/__admin/requests/unmatched/near-misses").json
      #expect(misses?["nearMisses"]?.arrayValue?.first?["request"]?["url"]?.stringValue == "/second-miss")

      let byStub = try http(port, "GET", "/__admin/requests?matchingStub=a").json
      #expect(byStub?["requests"]?.arrayValue?.count == 1)
      #expect(byStub?["meta"]?["total"]?.numberValue?.intValue == 1)
      let unmatchedPage = try http(port, "GET", "/__admin/requests?unmatched=true&limit=1").json
      #expect(unmatchedPage?["requests"]?.arrayValue?.count == 1)
      #expect(unmatchedPage?["meta"]?["total"]?.numberValue?.intValue == 2)
      #expect(try http(port, "GET", "/__admin/requests").json?["meta"]?["total"]?.numberValue?.intValue == 3)

      let scenarios = try http(port, "GET", "/__admin/scenarios").json
      let checkout = scenarios?["scenarios"]?.arrayValue?.first { $0["name"]?.stringValue == "checkout" }
      #expect(checkout?["possibleStates"]?.arrayValue?.compactMap(\.stringValue) == ["paid"])
      #expect(checkout?["state"]?.stringValue == "Started")
      #expect(
        try http(port, "PUT", "/__admin/scenarios/checkout/state", body: #"{"state":"Started"}"#).status
          == 400)
      #expect(
        try http(port, "PUT", "/__admin/scenarios/checkout/state", body: #"{"state":"paid"}"#).status == 200)
      #expect(try http(port, "PUT", "/__admin/scenarios/checkout/state").status == 200)
      #expect(service.scenarioBook.state(of: "checkout") == "Started")
    }
  }

  @Test("POST /__admin/requests/remove-by-metadata removes the requests of stubs whose metadata matches")
  func requestsRemoveByMetadata() async throws {
    try await withMockService { service, port in
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"id":"t","metadata":{"team":"pay"},"request":{"url":"/t"},"response":{"status":200}}"#)
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"id":"u","request":{"url":"/u"},"response":{"status":200}}"#)
      _ = try http(port, "GET", "/t")
      _ = try http(port, "GET", "/u")
      let r = try http(
        port, "POST", "/__admin/requests/remove-by-metadata",
        body: #"{"matchesJsonPath":{"expression":"$.team","equalTo":"pay"}}"#)
      #expect(r.status == 200)
      #expect(service.journal.snapshot().map { $0.request.head.target } == ["/u"])
    }
  }

  @Test("/__admin/files: list, get, put, delete; traversal and symbolic links out are refused")
  func bodyFiles() async throws {
    let folder = try temporaryFolder("files", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try FileManager.default.createDirectory(atPath: folder + "/__files", withIntermediateDirectories: true)
    try Data("hello".utf8).write(to: URL(fileURLWithPath: folder + "/__files/hello.txt"))
    let outside = folder + "/secret.txt"
    try Data("secret".utf8).write(to: URL(fileURLWithPath: outside))
    try FileManager.default.createSymbolicLink(
      atPath: folder + "/__files/link.txt", withDestinationPath: outside)
    try FileManager.default.createSymbolicLink(atPath: folder + "/__files/up", withDestinationPath: folder)
    try await withMockService(configure: { $0.fixturesDirectory = folder }) { _, port in
      #expect(try http(port, "GET", "/__admin/files/hello.txt").body == "hello")
      let put = try http(port, "PUT", "/__admin/files/sub/new.json", body: #"{"a":1}"#)
      #expect(put.status == 200)
      #expect(
        try String(contentsOfFile: folder + "/__files/sub/new.json", encoding: .utf8) == #"{"a":1}"#)
      let list = try http(port, "GET", "/__admin/files").json?.arrayValue?.compactMap(\.stringValue)
      #expect(list?.contains("hello.txt") == true)
      #expect(list?.contains("sub/new.json") == true)
      #expect(try http(port, "DELETE", "/__admin/files/sub/new.json").status == 200)
      #expect(!FileManager.default.fileExists(atPath: folder + "/__files/sub/new.json"))
      #expect(try http(port, "GET", "/__admin/files/sub/new.json").status == 404)

      // Out of __files/: dot segments, encoded slashes, links.
      #expect(try http(port, "GET", "/__admin/files/../secret.txt").status == 400)
      #expect(try http(port, "GET", "/__admin/files/%2E%2E/secret.txt").status == 400)
      #expect(try http(port, "GET", "/__admin/files/..%2Fsecret.txt").status == 400)
      #expect(try http(port, "GET", "/__admin/files/link.txt").status == 403)
      #expect(try http(port, "PUT", "/__admin/files/link.txt", body: "x").status == 403)
      #expect(try http(port, "PUT", "/__admin/files/up/evil.txt", body: "x").status == 403)
      #expect(try http(port, "DELETE", "/__admin/files/up/secret.txt").status == 403)
      #expect(try String(contentsOfFile: outside, encoding: .utf8) == "secret")
      #expect(!FileManager.default.fileExists(atPath: folder + "/evil.txt"))
    }
  }

  @Test("an unmatched GET whose path is a file under __files/ is served from it")
  func unmatchedGetServesBodyFile() async throws {
    let folder = try temporaryFolder("files-fallback", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try FileManager.default.createDirectory(
      atPath: folder + "/__files/docs", withIntermediateDirectories: true)
    try Data(#"{"ok":true}"#.utf8).write(to: URL(fileURLWithPath: folder + "/__files/docs/data.json"))
    try Data("secret".utf8).write(to: URL(fileURLWithPath: folder + "/outside.txt"))
    try await withMockService(configure: { $0.fixturesDirectory = folder }) { _, port in
      let r = try http(port, "GET", "/docs/data.json")
      #expect(r.status == 200)
      #expect(r.body == #"{"ok":true}"#)
      #expect(r.headers["content-type"] == "application/json")
      #expect(try http(port, "GET", "/docs/missing.json").status == 404)
      #expect(try http(port, "GET", "/../outside.txt").status != 200)
      #expect(try http(port, "POST", "/docs/data.json", body: "").status == 404)
    }
  }

  @Test("POST /__admin/settings: delayDistribution (fixed, uniform, lognormal) and extended")
  func settingsDistributionAndExtended() async throws {
    try await withMockService { service, port in
      let set = try http(
        port, "POST", "/__admin/settings",
        body:
          #"{"fixedDelay":5,"delayDistribution":{"type":"uniform","lower":1,"upper":3},"extended":{"k":"v"}}"#
      )
      #expect(set.status == 200, "\(set.body)")
      let got = try http(port, "GET", "/__admin/settings").json?["settings"]
      #expect(got?["fixedDelay"]?.numberValue?.intValue == 5)
      #expect(got?["delayDistribution"]?["type"]?.stringValue == "uniform")
      #expect(got?["extended"]?["k"]?.stringValue == "v")
      #expect(service.settings.delayDistribution == .uniform(lower: 1, upper: 3))
      for body in [
        #"{"delayDistribution":{"type":"lognormal","median":2,"sigma":0.1}}"#,
        #"{"settings":{"delayDistribution":{"type":"fixed","milliseconds":2}}}"#,
      ] {
        #expect(try http(port, "POST", "/__admin/settings", body: body).status == 200)
      }
      // POST replaces: fixedDelay and extended left out are unset.
      #expect(service.settings.globalDelayMilliseconds == 0)
      #expect(service.settings.extended == nil)
      #expect(service.settings.delayDistribution == .fixed(milliseconds: 2))
      let bad = try http(
        port, "POST", "/__admin/settings", body: #"{"delayDistribution":{"type":"gaussian"}}"#)
      #expect(bad.status == 400)
      #expect(bad.body.contains("delayDistribution.type"))
      #expect(try http(port, "POST", "/__admin/settings", body: #"{"extended":3}"#).status == 400)
      // The global distribution delays stub responses.
      _ = try http(
        port, "POST", "/__admin/settings",
        body: #"{"delayDistribution":{"type":"fixed","milliseconds":300}}"#)
      _ = try http(
        port, "POST", "/__admin/mappings", body: #"{"request":{"url":"/slow"},"response":{"status":200}}"#)
      let started = Date()
      #expect(try http(port, "GET", "/slow").status == 200)
      #expect(Date().timeIntervalSince(started) >= 0.29)
    }
  }

  @Test("the near-miss endpoints answer WireMock's shapes")
  func nearMissParity() async throws {
    try await withMockService { _, port in
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"request":{"method":"GET","url":"/users/1"},"response":{"status":200}}"#)
      _ = try http(port, "GET", "/users/2")
      let unmatched = try http(port, "GET", "/__admin/requests/unmatched/near-misses").json
      let first = unmatched?["nearMisses"]?.arrayValue?.first
      #expect(first?["request"]?["url"]?.stringValue == "/users/2")
      #expect(first?["stubMapping"] != nil)
      #expect(first?["matchResult"]?["distance"]?.numberValue != nil)
      let byRequest = try http(
        port, "POST", "/__admin/near-misses/request", body: #"{"method":"GET","url":"/users/3"}"#
      ).json
      #expect(byRequest?["nearMisses"]?.arrayValue?.isEmpty == false)
      let byPattern = try http(
        port, "POST", "/__admin/near-misses/request-pattern", body: #"{"method":"GET","url":"/users/9"}"#
      ).json
      #expect(byPattern?["nearMisses"]?.arrayValue?.first?["requestPattern"] != nil)
    }
  }
}
