import Foundation
import HTTPCore
import Synchronization
import TestSupport
import Testing

@testable import MockJSON
@testable import MockServer
@testable import MockServerCLI

private let helloStub = #"""
  {"id":"hello","name":"hello","request":{"method":"GET","urlPath":"/hello"},
   "response":{"status":200,"body":"hi","headers":{"Content-Type":"text/plain"}}}
  """#

@Suite("Admin API over HTTP")
struct AdminAPITests {
  @Test("health and version")
  func healthAndVersion() async throws {
    try await withMockService { _, port in
      let health = try http(port, "GET", "/__admin/health")
      #expect(health.status == 200)
      #expect(health.json?["status"] == .string("healthy"))
      let version = try http(port, "GET", "/__admin/version")
      #expect(version.json?["version"] == .string(MockServerInfo.version))
      let unknown = try http(port, "GET", "/__admin/nope")
      #expect(unknown.status == 404)
      #expect(unknown.json?["errors"]?.arrayValue?.count == 1)
    }
  }

  @Test("create, get, list with paging, replace, delete a stub")
  func mappingsCRUD() async throws {
    try await withMockService { service, port in
      let created = try http(port, "POST", "/__admin/mappings", body: helloStub)
      #expect(created.status == 201)
      #expect(created.json?["id"] == .string("hello"))
      #expect(created.json?["uuid"] == .string("hello"))
      #expect(try http(port, "GET", "/hello").body == "hi")

      // A stub without id gets one, and the same id is shown afterwards.
      let anon = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"request":{"url":"/anon"},"response":{"status":204}}"#)
      let anonID = try #require(anon.json?["id"]?.stringValue)
      #expect(try http(port, "GET", "/__admin/mappings/\(anonID)").json?["id"] == .string(anonID))

      let list = try http(port, "GET", "/__admin/mappings")
      #expect(list.json?["meta"]?["total"] == .number(JSONNumber(2)))
      let page = try http(port, "GET", "/__admin/mappings?limit=1&offset=1")
      #expect(page.json?["mappings"]?.arrayValue?.count == 1)
      #expect(page.json?["mappings"]?.arrayValue?.first?["id"] == .string(anonID))
      #expect(try http(port, "GET", "/__admin/mappings?limit=x").status == 400)

      let replaced = try http(
        port, "PUT", "/__admin/mappings/hello",
        body: #"{"request":{"method":"GET","urlPath":"/hello"},"response":{"status":200,"body":"bye"}}"#)
      #expect(replaced.status == 200)
      #expect(replaced.json?["id"] == .string("hello"))
      #expect(try http(port, "GET", "/hello").body == "bye")
      #expect(
        try http(port, "PUT", "/__admin/mappings/missing", body: helloStub).status == 404)

      #expect(try http(port, "DELETE", "/__admin/mappings/hello").status == 200)
      #expect(try http(port, "GET", "/__admin/mappings/hello").status == 404)
      #expect(try http(port, "DELETE", "/__admin/mappings/hello").status == 404)
      #expect(try http(port, "GET", "/hello").status == 404)

      #expect(try http(port, "DELETE", "/__admin/mappings").status == 200)
      #expect(service.store.stubs.isEmpty)
    }
  }

  @Test("numbers keep their spelling through the admin round-trip")
  func numberSpelling() async throws {
    try await withMockService { _, port in
      let stub = #"""
        {"id":"n","request":{"url":"/n"},"response":{"status":200,"jsonBody":{"price":275.0,"big":9007199254740993}}}
        """#
      let created = try http(port, "POST", "/__admin/mappings", body: stub)
      #expect(created.body.contains("275.0"))
      #expect(created.body.contains("9007199254740993"))
      let got = try http(port, "GET", "/__admin/mappings/n")
      #expect(got.body.contains("275.0"))
      #expect(got.body.contains("9007199254740993"))
      let served = try http(port, "GET", "/n")
      #expect(served.body.contains("275.0"))
      #expect(served.body.contains("9007199254740993"))
    }
  }

  @Test("malformed admin input gets 400 (422 for stubs, as WireMock) with a JSON path and changes nothing")
  func malformedInput() async throws {
    try await withMockService { service, port in
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      let syntax = try http(port, "POST", "/__admin/mappings", body: #"{"request": "#)
      #expect(syntax.status == 422)
      #expect(syntax.json?["errors"]?.arrayValue?.first?["title"] == .string("Error parsing JSON"))

      let bad = try http(
        port, "POST", "/__admin/mappings", body: #"{"request":{"url":5},"response":{"status":200}}"#)
      #expect(bad.status == 422)
      #expect(bad.json?["errors"]?.arrayValue?.first?["code"] == .number(JSONNumber(10)))
      let detail = bad.json?["errors"]?.arrayValue?.first?["detail"]?.stringValue ?? ""
      #expect(detail.hasPrefix("$.request.url: expected"))
      #expect(detail.contains("found the number 5"))
      #expect(bad.json?["errors"]?.arrayValue?.first?["source"]?["pointer"] == .string("/request/url"))

      #expect(try http(port, "POST", "/__admin/mappings").status == 422)
      #expect(try http(port, "PUT", "/__admin/mappings/hello", body: "[]").status == 422)
      #expect(try http(port, "POST", "/__admin/requests/count", body: #"{"method":7}"#).status == 400)
      #expect(try http(port, "POST", "/__admin/settings", body: #"{"fixedDelay":-1}"#).status == 400)
      #expect(try http(port, "GET", "/__admin/requests?since=yesterday").status == 400)
      #expect(try http(port, "GET", "/__admin/requests?unmatched=maybe").status == 400)

      // Import is all or nothing.
      let importBody = #"""
        {"mappings":[{"id":"a","request":{"url":"/a"},"response":{"status":200}},
                     {"id":"b","request":{"url":"/b"},"response":{"status":"x"}}]}
        """#
      let imported = try http(port, "POST", "/__admin/mappings/import", body: importBody)
      #expect(imported.status == 422)
      #expect(imported.body.contains("$.mappings[1].response.status"))
      #expect(service.store.stubs.map(\.id) == ["hello"])
      #expect(try http(port, "GET", "/hello").body == "hi")
      #expect(service.settings.globalDelayMilliseconds == 0)
    }
  }

  @Test("import adds stubs, honours duplicatePolicy and deleteAllNotInImport")
  func importMappings() async throws {
    try await withMockService { service, port in
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      let body = #"""
        {"mappings":[{"id":"hello","request":{"url":"/hello"},"response":{"status":200,"body":"imported"}},
                     {"id":"b","request":{"url":"/b"},"response":{"status":201}}],
         "importOptions":{"duplicatePolicy":"IGNORE"}}
        """#
      #expect(try http(port, "POST", "/__admin/mappings/import", body: body).status == 200)
      #expect(Set(service.store.stubs.map(\.id)) == ["hello", "b"])
      #expect(try http(port, "GET", "/hello").body == "hi")
      let overwrite = body.replacingOccurrences(of: "IGNORE", with: "OVERWRITE")
      #expect(try http(port, "POST", "/__admin/mappings/import", body: overwrite).status == 200)
      #expect(try http(port, "GET", "/hello").body == "imported")
      let only =
        #"{"mappings":[{"id":"c","request":{"url":"/c"},"response":{"status":200}}],"importOptions":{"deleteAllNotInImport":true}}"#
      #expect(try http(port, "POST", "/__admin/mappings/import", body: only).status == 200)
      #expect(service.store.stubs.map(\.id) == ["c"])
    }
  }

  @Test("reset to files and save runtime stubs to files")
  func resetAndSave() async throws {
    let folder = try temporaryFolder("save", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try Data(helloStub.utf8).write(to: URL(fileURLWithPath: folder + "/mappings/hello.json"))
    try await withMockService(
      configure: { $0.fixturesDirectory = folder }, fixtures: FixtureLoader.load(directory: folder)
    ) { service, port in
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"id":"rt","name":"runtime one","request":{"url":"/rt"},"response":{"status":202}}"#)
      #expect(service.store.stubs.count == 2)
      #expect(try http(port, "POST", "/__admin/mappings/reset").status == 200)
      #expect(service.store.stubs.map(\.id) == ["hello"])

      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"id":"rt","name":"runtime one","request":{"url":"/rt"},"response":{"status":202}}"#)
      #expect(try http(port, "POST", "/__admin/mappings/save").status == 200)
      let saved = try FileManager.default.contentsOfDirectory(atPath: folder + "/mappings").sorted()
      #expect(saved == ["hello.json", "runtime-one-rt.json"])
      #expect(service.store.runtimeStubs.isEmpty)
      // After a reset the saved stub comes back from its file.
      #expect(try http(port, "POST", "/__admin/mappings/reset").status == 200)
      #expect(Set(service.store.stubs.map(\.id)) == ["hello", "rt"])
      #expect(try http(port, "GET", "/rt").status == 202)

      // A broken file: reset refuses (500) and keeps serving.
      try Data("{".utf8).write(to: URL(fileURLWithPath: folder + "/mappings/broken.json"))
      let refused = try http(port, "POST", "/__admin/mappings/reset")
      #expect(refused.status == 500)
      #expect(refused.body.contains("mappings/broken.json"))
      #expect(Set(service.store.stubs.map(\.id)) == ["hello", "rt"])
    }
  }

  @Test("the journal lists, filters, gets, deletes and clears requests")
  func journal() async throws {
    try await withMockService { service, port in
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      let before = Date().timeIntervalSince1970
      _ = try http(port, "GET", "/hello?x=1", headers: ["X-Test": "a"])
      _ = try http(
        port, "POST", "/missing", body: #"{"k":"v"}"#, headers: ["Content-Type": "application/json"])
      let list = try http(port, "GET", "/__admin/requests")
      #expect(list.status == 200)
      let requests = try #require(list.json?["requests"]?.arrayValue)
      #expect(requests.count == 2)
      #expect(list.json?["meta"]?["total"] == .number(JSONNumber(2)))
      #expect(list.json?["requestJournalDisabled"] == .bool(false))
      // Newest first.
      let unmatched = requests[0]
      let matched = requests[1]
      #expect(unmatched["wasMatched"] == .bool(false))
      #expect(unmatched["request"]?["method"] == .string("POST"))
      #expect(unmatched["request"]?["body"] == .string(#"{"k":"v"}"#))
      #expect(unmatched["response"]?["status"] == .number(JSONNumber(404)))
      #expect(unmatched["nearMisses"]?.arrayValue?.first?["stub"]?["id"] == .string("hello"))
      #expect(matched["wasMatched"] == .bool(true))
      #expect(matched["stubMapping"]?["id"] == .string("hello"))
      #expect(matched["request"]?["url"] == .string("/hello?x=1"))
      #expect(matched["request"]?["absoluteUrl"] == .string("http://127.0.0.1:\(port)/hello?x=1"))
      #expect(matched["request"]?["clientIp"] == .string("127.0.0.1"))
      #expect(matched["request"]?["headers"]?["X-Test"] == .string("a"))
      #expect(matched["response"]?["status"] == .number(JSONNumber(200)))
      let logged = matched["request"]?["loggedDate"]?.numberValue?.doubleValue ?? 0
      #expect(logged / 1000 >= before.rounded(.down) - 1)
      #expect(matched["request"]?["loggedDateString"]?.stringValue?.hasSuffix("Z") == true)

      #expect(try http(port, "GET", "/__admin/requests?limit=1").json?["requests"]?.arrayValue?.count == 1)
      let onlyUnmatched = try http(port, "GET", "/__admin/requests?unmatched=true")
      #expect(onlyUnmatched.json?["requests"]?.arrayValue?.count == 1)
      let future = HTTPDate.iso8601(Date().timeIntervalSince1970 + 3600)
      #expect(
        try http(port, "GET", "/__admin/requests?since=\(future)").json?["requests"]?.arrayValue?.count == 0)
      let past = HTTPDate.iso8601(before - 3600)
      #expect(
        try http(port, "GET", "/__admin/requests?since=\(past)").json?["requests"]?.arrayValue?.count == 2)

      let id = try #require(matched["id"]?.stringValue)
      let one = try http(port, "GET", "/__admin/requests/\(id)")
      #expect(one.json?["id"] == .string(id))
      #expect(try http(port, "DELETE", "/__admin/requests/\(id)").status == 200)
      #expect(try http(port, "GET", "/__admin/requests/\(id)").status == 404)
      #expect(service.journal.retainedCount == 1)
      #expect(try http(port, "DELETE", "/__admin/requests").status == 200)
      #expect(service.journal.retainedCount == 0)
      _ = try http(port, "GET", "/hello")
      #expect(try http(port, "POST", "/__admin/requests/reset").status == 200)
      #expect(service.journal.retainedCount == 0)
      // Admin requests are not journaled.
      #expect(try http(port, "GET", "/__admin/requests").json?["requests"]?.arrayValue?.count == 0)
    }
  }

  @Test("count, find, remove by pattern; unmatched and near misses")
  func countFindNearMisses() async throws {
    try await withMockService { _, port in
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      for _ in 0..<3 { _ = try http(port, "GET", "/hello") }
      _ = try http(port, "GET", "/helo")
      let count = try http(port, "POST", "/__admin/requests/count", body: #"{"method":"GET","url":"/hello"}"#)
      #expect(count.json?["count"] == .number(JSONNumber(3)))
      #expect(count.json?["exact"] == nil)
      let any = try http(port, "POST", "/__admin/requests/count", body: #"{"urlPathPattern":"/hel.*"}"#)
      #expect(any.json?["count"] == .number(JSONNumber(4)))
      let found = try http(port, "POST", "/__admin/requests/find", body: #"{"url":"/helo"}"#)
      #expect(found.json?["requests"]?.arrayValue?.count == 1)
      #expect(found.json?["requests"]?.arrayValue?.first?["url"] == .string("/helo"))

      let unmatched = try http(port, "GET", "/__admin/requests/unmatched")
      #expect(unmatched.json?["requests"]?.arrayValue?.map { $0["url"] } == [.string("/helo")])
      let near = try http(port, "GET", "/__admin/requests/unmatched/near-misses")
      let first = near.json?["nearMisses"]?.arrayValue?.first
      #expect(first?["stubMapping"]?["id"] == .string("hello"))
      #expect(first?["request"]?["url"] == .string("/helo"))
      #expect((first?["matchResult"]?["distance"]?.numberValue?.doubleValue ?? 0) > 0)

      let byPattern = try http(
        port, "POST", "/__admin/near-misses/request-pattern", body: #"{"method":"GET","url":"/helo2"}"#)
      #expect(byPattern.json?["nearMisses"]?.arrayValue?.isEmpty == false)
      let byRequest = try http(
        port, "POST", "/__admin/near-misses/request", body: #"{"method":"GET","url":"/hellp"}"#)
      #expect(byRequest.json?["nearMisses"]?.arrayValue?.first?["stubMapping"]?["id"] == .string("hello"))

      let removed = try http(port, "POST", "/__admin/requests/remove", body: #"{"url":"/helo"}"#)
      #expect(removed.json?["requests"]?.arrayValue?.count == 1)
      #expect(try http(port, "GET", "/__admin/requests/unmatched").json?["requests"]?.arrayValue?.count == 0)
      let after = try http(port, "POST", "/__admin/requests/count", body: #"{"urlPathPattern":"/hel.*"}"#)
      #expect(after.json?["count"] == .number(JSONNumber(3)))
    }
  }

  @Test("counts by pattern stay exact past eviction once the pattern is counted")
  func countPastEviction() async throws {
    try await withMockService(configure: { $0.journalCapacity = 5 }) { service, port in
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      let pattern = #"{"method":"GET","urlPath":"/hello"}"#
      #expect(
        try http(port, "POST", "/__admin/requests/count", body: pattern).json?["count"]
          == .number(JSONNumber(0)))
      for _ in 0..<20 { _ = try http(port, "GET", "/hello") }
      let count = try http(port, "POST", "/__admin/requests/count", body: pattern)
      #expect(count.json?["count"] == .number(JSONNumber(20)))
      #expect(count.json?["exact"] == nil)
      #expect(service.journal.retainedCount == 5)
      // A pattern first counted after eviction says so.
      let late = try http(port, "POST", "/__admin/requests/count", body: #"{"url":"/hello"}"#)
      #expect(late.json?["count"] == .number(JSONNumber(5)))
      #expect(late.json?["exact"] == .bool(false))
      // After a reset it is exact again.
      _ = try http(port, "DELETE", "/__admin/requests")
      for _ in 0..<7 { _ = try http(port, "GET", "/hello") }
      let again = try http(port, "POST", "/__admin/requests/count", body: #"{"url":"/hello"}"#)
      #expect(again.json?["count"] == .number(JSONNumber(7)))
      #expect(again.json?["exact"] == nil)
    }
  }

  @Test("--no-journal: no entries, journal reported disabled, counts of tracked patterns still exact")
  func noJournal() async throws {
    try await withMockService(configure: { $0.journalCapacity = 0 }) { _, port in
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      _ = try http(port, "POST", "/__admin/requests/count", body: #"{"url":"/hello"}"#)
      for _ in 0..<4 { _ = try http(port, "GET", "/hello") }
      let list = try http(port, "GET", "/__admin/requests")
      #expect(list.json?["requestJournalDisabled"] == .bool(true))
      #expect(list.json?["requests"]?.arrayValue?.count == 0)
      let count = try http(port, "POST", "/__admin/requests/count", body: #"{"url":"/hello"}"#)
      #expect(count.json?["count"] == .number(JSONNumber(4)))
    }
  }

  @Test("scenarios: list, set state, reset; bad state 400, unknown scenario 404")
  func scenarios() async throws {
    try await withMockService { _, port in
      let stubs = #"""
        {"mappings":[
          {"id":"s1","scenarioName":"cart","requiredScenarioState":"Started","newScenarioState":"full",
           "request":{"url":"/cart"},"response":{"status":200,"body":"empty"}},
          {"id":"s2","scenarioName":"cart","requiredScenarioState":"full",
           "request":{"url":"/cart"},"response":{"status":200,"body":"full"}}]}
        """#
      #expect(try http(port, "POST", "/__admin/mappings/import", body: stubs).status == 200)
      let list = try http(port, "GET", "/__admin/scenarios")
      let cart = list.json?["scenarios"]?.arrayValue?.first
      #expect(cart?["name"] == .string("cart"))
      #expect(cart?["id"] == .string("cart"))
      #expect(cart?["state"] == .string("Started"))
      #expect(cart?["possibleStates"] == .array([.string("Started"), .string("full")]))
      #expect(try http(port, "GET", "/cart").body == "empty")
      #expect(
        try eventually { try http(port, "GET", "/__admin/scenarios").body.contains(#""state": "full""#) })
      #expect(try http(port, "GET", "/cart").body == "full")
      #expect(try http(port, "POST", "/__admin/scenarios/reset").status == 200)
      #expect(try http(port, "GET", "/cart").body == "empty")
      #expect(
        try http(port, "PUT", "/__admin/scenarios/cart/state", body: #"{"state":"full"}"#).status == 200)
      #expect(try http(port, "GET", "/cart").body == "full")
      let bad = try http(port, "PUT", "/__admin/scenarios/cart/state", body: #"{"state":"nope"}"#)
      #expect(bad.status == 400)
      #expect(bad.body.contains("$.state: expected one of"))
      #expect(try http(port, "PUT", "/__admin/scenarios/cart/state", body: #"{"state":1}"#).status == 400)
      #expect(try http(port, "PUT", "/__admin/scenarios/other/state", body: #"{"state":"x"}"#).status == 404)
      #expect(try http(port, "PUT", "/__admin/scenarios/cart/state").status == 200)
      #expect(try http(port, "GET", "/cart").body == "empty")
    }
  }

  @Test("a scenario moves only when the response was served")
  func scenarioMovesOnlyWhenServed() async throws {
    try await withMockService { service, port in
      let stub = #"""
        {"id":"slow","scenarioName":"s","newScenarioState":"moved",
         "request":{"url":"/slow"},"response":{"status":200,"fixedDelayMilliseconds":1000}}
        """#
      _ = try http(port, "POST", "/__admin/mappings", body: stub)
      do {
        let client = try RawClient(port: port)
        client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\n")
        usleep(50_000)
      }  // closed long before the 1 s delay ends
      usleep(1_500_000)
      #expect(service.scenarioBook.scenarios(of: service.store.stubs).first?.state == "Started")
      _ = try http(port, "GET", "/slow")
      #expect(eventually { service.scenarioBook.scenarios(of: service.store.stubs).first?.state == "moved" })
    }
  }

  @Test("response sequence through the admin API: loop end behaviour")
  func sequence() async throws {
    try await withMockService { _, port in
      let stub = #"""
        {"id":"seq","request":{"url":"/seq"},
         "x-responseSequence":{"responses":[{"status":200,"body":"one"},{"status":200,"body":"two"}],"onEnd":"loop"}}
        """#
      #expect(try http(port, "POST", "/__admin/mappings", body: stub).status == 201)
      var bodies: [String] = []
      for _ in 0..<3 {
        bodies.append(try http(port, "GET", "/seq").body)
        usleep(20_000)
      }
      #expect(bodies == ["one", "two", "one"])
    }
  }

  @Test("settings: global fixed delay in both shapes")
  func settings() async throws {
    try await withMockService { service, port in
      #expect(
        try http(port, "GET", "/__admin/settings").json?["settings"]?["fixedDelay"] == .number(JSONNumber(0)))
      #expect(try http(port, "POST", "/__admin/settings", body: #"{"fixedDelay":150}"#).status == 200)
      #expect(service.settings.globalDelayMilliseconds == 150)
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      let started = Date()
      _ = try http(port, "GET", "/hello")
      #expect(Date().timeIntervalSince(started) >= 0.14)
      #expect(
        try http(port, "PUT", "/__admin/settings", body: #"{"settings":{"fixedDelay":0}}"#).status == 200)
      #expect(service.settings.globalDelayMilliseconds == 0)
      #expect(try http(port, "POST", "/__admin/settings", body: #"{"settings":3}"#).status == 400)
    }
  }

  @Test("reset: runtime stubs, journal and scenarios")
  func resetAll() async throws {
    try await withMockService { service, port in
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      _ = try http(port, "GET", "/hello")
      #expect(try http(port, "POST", "/__admin/reset").status == 200)
      #expect(service.store.stubs.isEmpty)
      #expect(service.journal.retainedCount == 0)
    }
  }

  @Test("access: loopback only unless allowed, bearer token, --no-admin")
  func access() async throws {
    let head = HTTPRequestHead(method: .get, target: "/__admin/health")
    func context(_ address: String) -> RequestContext {
      RequestContext(
        client: .text(address), localPort: 8080, isTLS: false, clientCertificateSubject: nil, connectionID: 1,
        requestNumber: 1, receivedAt: 0)
    }
    func status(_ plan: ResponsePlan) -> Int? {
      for case .response(let h, _) in plan.steps { return h.status.code }
      return nil
    }
    var config = MockServiceConfiguration()
    config.adminResponseCheck = AdminResponseCheck.fromEnvironment
    config.logLevel = .quiet
    let local = MockService(configuration: config, fixtures: noFixtures)
    #expect(status(local.respond(to: HTTPRequest(head: head), context: context("10.1.2.3:5000"))) == 403)
    #expect(status(local.respond(to: HTTPRequest(head: head), context: context("[::1]:5000"))) == 200)
    #expect(status(local.respond(to: HTTPRequest(head: head), context: context("127.0.0.1:5000"))) == 200)
    config.adminAllowsRemote = true
    let remote = MockService(configuration: config, fixtures: noFixtures)
    #expect(status(remote.respond(to: HTTPRequest(head: head), context: context("10.1.2.3:5000"))) == 200)

    try await withMockService(configure: { $0.adminToken = "s3cret" }) { _, port in
      let missing = try http(port, "GET", "/__admin/health")
      #expect(missing.status == 401)
      #expect(missing.headers["www-authenticate"]?.hasPrefix("Bearer") == true)
      #expect(
        try http(port, "GET", "/__admin/health", headers: ["Authorization": "Bearer wrong"]).status == 401)
      #expect(
        try http(port, "GET", "/__admin/health", headers: ["Authorization": "Bearer s3cret"]).status == 200)
    }
    try await withMockService(configure: { $0.adminEnabled = false }) { _, port in
      let reply = try http(port, "GET", "/__admin/health")
      #expect(reply.status == 404)
      #expect(reply.body.contains("No stub mapping matched"))
    }
  }

  @Test("shutdown answers and calls the host's hook")
  func shutdown() async throws {
    try await withMockService { service, port throws in
      #expect(try http(port, "POST", "/__admin/shutdown").status == 501)
      let called = Flag()
      service.onShutdownRequested = { called.value.store(true, ordering: .relaxed) }
      #expect(try http(port, "POST", "/__admin/shutdown").status == 200)
      #expect(eventually { called.value.load(ordering: .relaxed) })
    }
  }

  @Test("the journal can be read concurrently while traffic flows")
  func concurrentReads() async throws {
    try await withMockService(
      configure: { $0.journalCapacity = 100 }, server: { $0.eventLoops = 2 }
    ) { service, port in
      _ = try http(port, "POST", "/__admin/mappings", body: helloStub)
      _ = try http(port, "POST", "/__admin/requests/count", body: #"{"urlPath":"/hello"}"#)
      let total = 300
      try await withThrowingTaskGroup(of: Int.self) { group in
        for w in 0..<3 {
          group.addTask {
            let client = try RawClient(port: port)
            for i in 0..<(total / 3) {
              client.send("GET /hello?w=\(w)&i=\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
              let (reply, _) = client.readResponse()
              if !reply.hasPrefix("HTTP/1.1 200") { return -1 }
            }
            return 0
          }
        }
        for _ in 0..<2 {
          group.addTask {
            var reads = 0
            for _ in 0..<40 {
              let reply = try http(port, "GET", "/__admin/requests?limit=50")
              guard reply.status == 200, let list = reply.json?["requests"]?.arrayValue, list.count <= 50
              else {
                return -1
              }
              let count = try http(port, "POST", "/__admin/requests/count", body: #"{"urlPath":"/hello"}"#)
              guard count.json?["count"]?.numberValue?.intValue != nil else { return -1 }
              reads += 1
            }
            return reads
          }
        }
        for try await result in group { #expect(result >= 0) }
      }
      let count = try http(port, "POST", "/__admin/requests/count", body: #"{"urlPath":"/hello"}"#)
      #expect(count.json?["count"] == .number(JSONNumber(total)))
      #expect(service.journal.count(stubID: "hello") == total)
      #expect(service.journal.retainedCount == 100)
    }
  }

  @Test("--no-watch parses")
  func noWatchFlag() throws {
    #expect(try CommandLineOptions.parse([]).watch)
    #expect(try !CommandLineOptions.parse(["--no-watch"]).watch)
    #expect(CommandLineOptions.helpText.contains("--no-watch"))
  }
}

/// A Boolean shared with an escaping closure.
final class Flag: Sendable {
  let value = Atomic<Bool>(false)
}

@Suite("Admin API: stub metadata")
struct AdminMetadataTests {
  @Test("find-by-metadata, remove-by-metadata and mappings/new")
  func metadata() async throws {
    try await withMockService { service, port in
      let a =
        #"{"id":"a","request":{"url":"/a"},"response":{"status":200},"metadata":{"team":"payments","n":1}}"#
      let b = #"{"id":"b","request":{"url":"/b"},"response":{"status":200},"metadata":{"team":"search"}}"#
      #expect(try http(port, "POST", "/__admin/mappings", body: a).status == 201)
      #expect(try http(port, "POST", "/__admin/mappings/new", body: b).status == 201)
      let pattern = #"{"matchesJsonPath":{"expression":"$.team","equalTo":"payments"}}"#
      let found = try http(port, "POST", "/__admin/mappings/find-by-metadata", body: pattern)
      #expect(found.status == 200)
      let compact = found.body.filter { !$0.isWhitespace }
      #expect(compact.contains(#""id":"a""#))
      #expect(!compact.contains(#""id":"b""#))
      #expect(compact.contains(#""total":1"#))
      #expect(
        try http(port, "POST", "/__admin/mappings/find-by-metadata", body: #"{"nope":1}"#).status == 400)
      #expect(try http(port, "POST", "/__admin/mappings/remove-by-metadata", body: pattern).status == 200)
      #expect(service.store.stubs.map(\.id) == ["b"])
    }
  }
}
