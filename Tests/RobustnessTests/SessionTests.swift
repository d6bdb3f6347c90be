import Dispatch
import Foundation
import MockJSON
import MockServerTesting
import Synchronization
import TestSupport
import Testing

/// Issue 47, sessions: the `X-Mock-Session` header or a `/__session/{id}/` path prefix scope runtime stubs,
/// scenario states and the journal to one session, in one process and across replicas sharing a state
/// store, so parallel test runs sharing one environment cannot see each other's stubs, states or
/// requests. Over real sockets against the `mockserver` binary (and Debian's `redis-server` for the
/// replicas, skipped without it unless MOCKSERVER_REQUIRE_REDIS=1).
@Suite("Sessions isolate stubs, scenarios and the journal", .serialized)
struct SessionTests {
  /// One request with optional header lines and a JSON body; the response text.
  static func call(
    _ port: Int, _ method: String, _ path: String, session: String? = nil, _ body: String? = nil
  ) throws -> String {
    var headers = body == nil ? [] : ["Content-Type: application/json"]
    if let session { headers.append("X-Mock-Session: \(session)") }
    return try KnownDefectTests.send(port, method, path, headers, body: Array((body ?? "").utf8))
  }

  static func content(_ response: String) -> String { SharedStateTests.content(response) }

  /// The body of `GET path` (in `session` when given), or "" when it is not a 200.
  static func served(_ port: Int, _ path: String, session: String? = nil) -> String {
    let answer = (try? call(port, "GET", path, session: session)) ?? ""
    return status(answer) == 200 ? content(answer) : ""
  }

  /// `POST /__admin/requests/count` for `pattern` (in `session`): the count, or nil for an answer that
  /// is not a 200 with a number.
  static func count(_ port: Int, session: String? = nil, _ pattern: String = "{}") -> Int? {
    let path = session.map { "/__session/\($0)/__admin/requests/count" } ?? "/__admin/requests/count"
    guard let answer = try? call(port, "POST", path, pattern), status(answer) == 200 else { return nil }
    return (try? JSONValue.parse(content(answer)))?.objectValue?["count"]?.numberValue?.intValue
  }

  /// A file scenario: `GET /step` answers `one`, moving to `two`, then `two`.
  static let scenarioFixture = (
    "scenario.json",
    #"""
    {"mappings": [
      {"scenarioName": "flow", "requiredScenarioState": "Started", "newScenarioState": "two",
       "request": {"method": "GET", "url": "/step"}, "response": {"status": 200, "body": "one"}},
      {"scenarioName": "flow", "requiredScenarioState": "two",
       "request": {"method": "GET", "url": "/step"}, "response": {"status": 200, "body": "two"}}
    ]}
    """#
  )

  @Test func aSessionHasItsOwnStubsScenarioStatesAndRequestsInOneProcess() throws {
    let fixtures = try TemporaryFixtures([
      ("file.json", stubJSON("/file", body: "file")), Self.scenarioFixture,
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { _ = server.stop() }
    let port = server.port

    // A stub made in session a (through the header) answers a's requests, named by header or prefix;
    // others see the server's stubs.
    let made = try Self.call(
      port, "POST", "/__admin/mappings", session: "a", SharedStateTests.stub("sa", "/who", "a"))
    #expect(status(made) == 201, "\(made)")
    let server404 = try Self.call(port, "GET", "/who")
    #expect(status(server404) == 404, "a session's stub is not the server's: \(server404)")
    #expect(Self.served(port, "/who", session: "a") == "a")
    #expect(Self.served(port, "/__session/a/who") == "a")
    #expect(status(try Self.call(port, "GET", "/who", session: "b")) == 404)
    // The server's stubs are seen by every session, below the session's own.
    let global = try Self.call(
      port, "POST", "/__admin/mappings", SharedStateTests.stub("g", "/who", "server"))
    #expect(status(global) == 201, "\(global)")
    #expect(Self.served(port, "/who") == "server")
    #expect(Self.served(port, "/who", session: "b") == "server")
    #expect(Self.served(port, "/who", session: "a") == "a", "the session's own stub outranks the server's")
    #expect(Self.served(port, "/file", session: "a") == "file")

    // Scenario states are the session's, for the file scenario too.
    #expect(Self.served(port, "/step", session: "a") == "one")
    #expect(Self.served(port, "/step", session: "a") == "two")
    #expect(Self.served(port, "/step", session: "b") == "one", "b's scenario is still Started")
    #expect(Self.served(port, "/step") == "one", "the server's scenario is still Started")
    let scenarios = try Self.call(port, "GET", "/__session/a/__admin/scenarios")
    let flow = try JSONValue.parse(Self.content(scenarios)).objectValue?["scenarios"]?.arrayValue?.first
    #expect(flow?.objectValue?["state"]?.stringValue == "two", "\(scenarios)")

    // The journal: a session's queries see its requests; queries without a session see every one.
    #expect(Self.count(port, session: "a") == 6)
    #expect(Self.count(port, session: "b") == 3)
    #expect(Self.count(port) == 12)
    let find = try Self.call(port, "POST", "/__admin/requests/find", session: "b", #"{"url":"/step"}"#)
    let found = try JSONValue.parse(Self.content(find)).objectValue?["requests"]?.arrayValue ?? []
    #expect(found.count == 1, "\(find)")
    let listed = try Self.call(port, "GET", "/__admin/requests", session: "a")
    let events = try JSONValue.parse(Self.content(listed)).objectValue?["requests"]?.arrayValue ?? []
    #expect(
      events.count == 6 && events.allSatisfy { $0.objectValue?["session"]?.stringValue == "a" }, "\(listed)")
    // The prefix is stripped before journaling: the logged URL is the path the stub saw.
    let prefixed = events.compactMap { $0.objectValue?["request"]?.objectValue?["url"]?.stringValue }
    #expect(prefixed.allSatisfy { !$0.hasPrefix("/__session/") }, "\(prefixed)")

    // A session's mappings list is its own; a reset in it removes only what is its own.
    let mine = try Self.call(port, "GET", "/__admin/mappings", session: "a")
    let total = try JSONValue.parse(Self.content(mine)).objectValue?["meta"]?.objectValue?["total"]
    #expect(total?.numberValue?.intValue == 1, "\(mine)")
    let reset = try Self.call(port, "POST", "/__admin/reset", session: "a", "{}")
    #expect(status(reset) == 200, "\(reset)")
    #expect(Self.served(port, "/who", session: "a") == "server")
    #expect(Self.served(port, "/step", session: "a") == "one", "a's scenario is back to Started")
    #expect(Self.count(port, session: "a") == 2, "a's journal was cleared, then two requests")
    #expect(Self.count(port, session: "b") == 3)
    #expect(Self.served(port, "/step", session: "b") == "two", "b's scenario was not reset")
  }

  @Test func aSessionNamedBadlyOrAskingForTheWholeServerIsRefusedWithAReason() throws {
    let server = try MockServerProcess.launch(arguments: ["--no-watch", "--quiet"])
    defer { _ = server.stop() }
    let port = server.port
    for (session, path) in [
      ("has space", "/x"), (String(repeating: "x", count: 65), "/x"), ("a", "/__session/b/x"),
      (nil, "/__session/a%2Fb/x"), (nil, "/__session//x"),
    ] {
      let answer = try Self.call(port, "GET", path, session: session)
      #expect(status(answer) == 400, "\(session ?? "-") \(path): \(answer)")
      #expect(answer.contains("Invalid session"), "\(answer)")
    }
    // The header twice is ambiguous (it named the first): refused, as two names are.
    let twice = try KnownDefectTests.send(port, "GET", "/x", ["X-Mock-Session: sx", "X-Mock-Session: sy"])
    #expect(status(twice) == 400 && twice.contains("appears 2 times"), "\(twice)")
    // Whole-server admin routes are refused in a session, naming why; nothing changed.
    for (method, path) in [
      ("POST", "/__admin/recordings/start"), ("POST", "/__admin/mappings/save"),
      ("POST", "/__admin/shutdown"),
      ("POST", "/__admin/settings"), ("DELETE", "/__admin/files/x.json"),
    ] {
      let answer = try Self.call(port, method, path, session: "t", "{}")
      #expect(status(answer) == 400 && answer.contains("acts on the whole server"), "\(path): \(answer)")
    }
    #expect(status(try Self.call(port, "GET", "/__admin/health", session: "t")) == 200)
    // A custom header name.
    let custom = try MockServerProcess.launch(arguments: [
      "--no-watch", "--quiet", "--session-header", "X-Run",
    ])
    defer { _ = custom.stop() }
    let made = try KnownDefectTests.send(
      custom.port, "POST", "/__admin/mappings", ["Content-Type: application/json", "X-Run: r1"],
      body: Array(SharedStateTests.stub("r", "/r", "r1").utf8))
    #expect(status(made) == 201, "\(made)")
    #expect(status(try KnownDefectTests.send(custom.port, "GET", "/r", ["X-Run: r1"])) == 200)
    #expect(status(try KnownDefectTests.send(custom.port, "GET", "/r")) == 404)
    let (code, output) = try runBinary(["--no-watch", "--session-header", "X Run"])
    #expect(code == 2 && output.contains("--session-header"), "\(output)")
    let (idleCode, idleOutput) = try runBinary(["--no-watch", "--session-idle-seconds", "0"])
    #expect(idleCode == 2 && idleOutput.contains("--session-idle-seconds"), "\(idleOutput)")
  }

  @Test func anIdleSessionEndsWithItsStubsStatesAndRequests() throws {
    let server = try MockServerProcess.launch(arguments: [
      "--no-watch", "--quiet", "--session-idle-seconds", "1",
    ])
    defer { _ = server.stop() }
    let port = server.port
    let made = try Self.call(
      port, "POST", "/__admin/mappings", session: "old", SharedStateTests.stub("o", "/o", "o"))
    #expect(status(made) == 201, "\(made)")
    #expect(Self.served(port, "/o", session: "old") == "o")
    #expect(Self.count(port) == 1)
    // Ended by the sweep once idle for a second: its request leaves the journal, its stub the server.
    #expect(eventually { Self.count(port) == 0 })
    #expect(status(try Self.call(port, "GET", "/o", session: "old")) == 404)
  }

  // MARK: Across replicas

  @Test(SharedStateTests.needsRedis)
  func sessionsIsolateStubsScenariosAndCountsAcrossReplicas() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try SharedStateTests.Cluster(files: [Self.scenarioFixture])
    defer { cluster.stop() }
    let (a, b, c) = (cluster.ports[0], cluster.ports[1], cluster.ports[2])

    // A stub made in session s1 through A is served in s1 by B and C (once the change is published),
    // and by none of them without the session or in another.
    let made = try Self.call(
      a, "POST", "/__admin/mappings", session: "s1", SharedStateTests.stub("x", "/mine", "s1"))
    #expect(status(made) == 201, "\(made)")
    #expect(eventually { [b, c].allSatisfy { Self.served($0, "/mine", session: "s1") == "s1" } })
    for port in cluster.ports {
      #expect(status(try Self.call(port, "GET", "/mine")) == 404)
      #expect(status(try Self.call(port, "GET", "/mine", session: "s2")) == 404)
    }

    // The file scenario advanced in s1 through B is in its new state for s1 on C, not for s2 or none.
    #expect(Self.served(b, "/step", session: "s1") == "one")
    #expect(Self.served(c, "/__session/s1/step") == "two")
    #expect(Self.served(a, "/step", session: "s2") == "one")
    #expect(Self.served(c, "/step") == "one")

    // Counts in a session are exact on every replica; without a session they count every session's. A
    // clear drops also what replicas send later of requests received before it.
    let cleared = try Self.call(b, "DELETE", "/__admin/requests")
    #expect(status(cleared) == 200, "\(cleared)")
    for k in 0..<9 { #expect(Self.served(cluster.ports[k % 3], "/file", session: "counted") == "file") }
    for k in 0..<3 { #expect(Self.served(cluster.ports[k], "/file") == "file") }
    for port in cluster.ports {
      #expect(eventually { Self.count(port, session: "counted") == 9 })
      #expect(eventually { Self.count(port) == 12 })
    }
    // A session's scenario list shows its state; a reset in s1 through C ends s1's stubs everywhere.
    let reset = try Self.call(c, "POST", "/__admin/reset", session: "s1", "{}")
    #expect(status(reset) == 200, "\(reset)")
    #expect(
      eventually {
        cluster.ports.allSatisfy { status((try? Self.call($0, "GET", "/mine", session: "s1")) ?? "") == 404 }
      })
    #expect(Self.served(a, "/step", session: "s1") == "one")
  }

  @Test(SharedStateTests.needsRedis)
  func oneSessionsVerificationIsExactUnderOtherSessionsConcurrentTraffic() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try SharedStateTests.Cluster()
    defer { cluster.stop() }
    let ports = cluster.ports
    let made = try Self.call(
      ports[0], "POST", "/__admin/mappings", session: "mine", SharedStateTests.stub("m", "/order", "placed"))
    #expect(status(made) == 201, "\(made)")
    #expect(eventually { ports.allSatisfy { Self.served($0, "/order", session: "mine") == "placed" } })
    let clear = try Self.call(ports[1], "DELETE", "/__admin/requests", session: "mine")
    #expect(status(clear) == 200, "\(clear)")

    // Other sessions (and requests without one) hit the same URL on every replica while this session
    // sends its 60.
    // At most 2,000 of them: the journal's stream keeps 10,000 entries.
    let stop = Mutex(false)
    let others = Thread {
      var k = 0
      while !stop.withLock({ $0 }), k < 2000 {
        _ = try? Self.call(ports[k % 3], "GET", "/order", session: k % 4 == 0 ? nil : "other-\(k % 5)")
        k += 1
      }
    }
    others.start()
    let failures = Mutex([String]())
    DispatchQueue.concurrentPerform(iterations: 60) { k in
      let answer = Self.served(ports[k % 3], "/order", session: "mine")
      if answer != "placed" { failures.withLock { $0.append(answer) } }
    }
    // Counted while the other traffic goes on: never more than 60, and 60 once every replica sent its
    // entries (each does within a second).
    var seen: [Int] = []
    #expect(
      eventually {
        let n = Self.count(ports[2], session: "mine", #"{"method":"GET","url":"/order"}"#) ?? -1
        seen.append(n)
        return n == 60
      }, "\(seen)")
    stop.withLock { $0 = true }
    while others.isExecuting { usleep(1000) }
    #expect(seen.allSatisfy { $0 <= 60 }, "\(seen)")
    #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    for port in ports {
      #expect(Self.count(port, session: "mine", #"{"method":"GET","url":"/order"}"#) == 60)
    }
    #expect((Self.count(ports[0]) ?? 0) > 60, "without a session the count is every session's")
  }

  @Test(SharedStateTests.needsRedis)
  func aSessionIdleOnEveryReplicaEndsEverywhere() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let redis = try RedisServer()
    let fixtures = try TemporaryFixtures([("file.json", stubJSON("/file", body: "file"))])
    var replicas: [MockServerProcess] = []
    defer {
      for r in replicas { _ = r.stop() }
      redis.stop()
      fixtures.remove()
    }
    for _ in 0..<2 {
      replicas.append(
        try MockServerProcess.launch(arguments: [
          "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--state-store", redis.url,
          "--session-idle-seconds", "1",
        ]))
    }
    let (a, b) = (replicas[0].port, replicas[1].port)
    let made = try Self.call(
      a, "POST", "/__admin/mappings", session: "short", SharedStateTests.stub("s", "/s", "s"))
    #expect(status(made) == 201, "\(made)")
    #expect(eventually { Self.served(b, "/s", session: "short") == "s" })
    #expect(eventually { Self.count(a, session: "short") == 1 })
    // 40 more sessions, one request each, spread over both replicas: a sweep that ends many sessions
    // removes all their entries (in one read of the stream; it read the whole stream once per session).
    for k in 0..<40 {
      #expect(Self.served(replicas[k % 2].port, "/file", session: "many\(k)") == "file")
    }
    // Once idle on both, they end: the stub is gone on each replica and the requests from the journal.
    #expect(eventually { Self.count(b) == 0 })
    #expect(status(try Self.call(a, "GET", "/s", session: "short")) == 404)
    #expect(status(try Self.call(b, "GET", "/s", session: "short")) == 404)
  }
}
