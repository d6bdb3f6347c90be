import Dispatch
import Foundation
import MockJSON
import MockServerTesting
import Synchronization
import TestSupport
import Testing

/// Issue 47, runtime stubs shared through the state store: Debian's `redis-server` on a free loopback
/// port and three `mockserver` replicas started with `--state-store`, over real sockets. A stub created,
/// edited or removed through one replica is served (or no longer served) by the others, waiting on the
/// published change; with the store stopped, plain stubs keep serving, health says the store is down and
/// stub changes are refused with 503; once the store is back on the same port (empty: no persistence),
/// every replica is whole again without a restart of its own.
///
/// Skipped when `redis-server` is missing, unless MOCKSERVER_REQUIRE_REDIS=1 (then a missing server
/// fails the suite instead).
@Suite("Runtime stubs shared through the state store", .serialized)
struct SharedStateTests {
  static var required: Bool { ProcessInfo.processInfo.environment["MOCKSERVER_REQUIRE_REDIS"] == "1" }

  /// The trait of the tests that start `redis-server`: run when it is installed, and when
  /// `MOCKSERVER_REQUIRE_REDIS=1` says it must be (then they fail without it instead of being skipped).
  static let needsRedis = ConditionTrait.enabled(
    if: RedisServer.installed || required, "redis-server is not installed (make test installs it)")

  /// One request; the response text.
  static func call(_ port: Int, _ method: String, _ path: String, _ body: String? = nil) throws -> String {
    try KnownDefectTests.send(
      port, method, path, body == nil ? [] : ["Content-Type: application/json"],
      body: Array((body ?? "").utf8))
  }

  /// The content of a response text.
  static func content(_ response: String) -> String {
    guard let r = response.range(of: "\r\n\r\n") else { return "" }
    return String(response[r.upperBound...])
  }

  /// True when `GET path` on `port` answers 200 with `body`.
  static func serves(_ port: Int, _ path: String, _ body: String) -> Bool {
    let answer = get(port, path)
    return status(answer) == 200 && content(answer) == body
  }

  /// A runtime stub answering `GET url` with `body`.
  static func stub(_ id: String, _ url: String, _ body: String) -> String {
    #"{"id":"\#(id)","request":{"method":"GET","url":"\#(url)"},"response":{"status":200,"body":"\#(body)"}}"#
  }

  /// Redis, a fixtures folder with one file stub (`GET /file` → `file`), and three replicas.
  struct Cluster {
    let redis: RedisServer
    let fixtures: TemporaryFixtures
    let replicas: [MockServerProcess]

    /// - Parameter files: more fixture files besides `file.json`.
    init(files: [(String, String)] = []) throws {
      redis = try RedisServer()
      fixtures = try TemporaryFixtures([("file.json", stubJSON("/file", body: "file"))] + files)
      var started: [MockServerProcess] = []
      for _ in 0..<3 { started.append(try Cluster.launch(fixtures, redis)) }
      replicas = started
    }

    static func launch(_ fixtures: TemporaryFixtures, _ redis: RedisServer) throws -> MockServerProcess {
      try MockServerProcess.launch(
        arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--state-store", redis.url])
    }

    var ports: [Int] { replicas.map(\.port) }

    func stop() {
      for replica in replicas { _ = replica.stop() }
      redis.stop()
      fixtures.remove()
    }
  }

  @Test func aMalformedStoreURLIsAUsageError() throws {
    for (url, says) in [
      ("http://127.0.0.1:6379", "expected redis://"), ("redis://127.0.0.1:0", "1...65535"),
      ("redis://127.0.0.1:6379/x", "0...1000000"),
    ] {
      let (code, output) = try runBinary(["--no-watch", "--state-store", url])
      #expect(code == 2, "\(url): \(output)")
      #expect(output.contains("--state-store") && output.contains(says), "\(url): \(output)")
    }
  }

  @Test func aReplicaWhoseStoreIsNotThereAtStartServesFileStubsAndSaysTheStoreIsDown() throws {
    let fixtures = try TemporaryFixtures([("file.json", stubJSON("/file", body: "file"))])
    defer { fixtures.remove() }
    // Nothing listens on this port.
    let replica = try MockServerProcess.launch(
      arguments: [
        "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--state-store",
        "redis://127.0.0.1:\(freePort())",
      ])
    defer { _ = replica.stop() }
    #expect(Self.serves(replica.port, "/file", "file"))
    let health = try Self.call(replica.port, "GET", "/__admin/health")
    #expect(status(health) == 503, "\(health)")
    let refused = try Self.call(replica.port, "POST", "/__admin/mappings", Self.stub("s", "/s", "s"))
    #expect(status(refused) == 503, "\(refused)")
    #expect(status(get(replica.port, "/s")) == 404)
    #expect(eventually { replica.standardErrorText.contains("not loaded from the shared state store") })
  }

  @Test(Self.needsRedis)
  func stubChangesThroughOneReplicaAreServedByTheOthers() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster()
    defer { cluster.stop() }
    let (a, b, c) = (cluster.ports[0], cluster.ports[1], cluster.ports[2])
    for port in cluster.ports {
      #expect(Self.serves(port, "/file", "file"))
      #expect(status(get(port, "/shared")) == 404)
    }

    // Created through A: served by B and C once the change is published.
    let created = try Self.call(a, "POST", "/__admin/mappings", Self.stub("s1", "/shared", "one"))
    #expect(status(created) == 201, "\(created)")
    #expect(Self.serves(a, "/shared", "one"), "A answers after the store took the change")
    #expect(eventually { Self.serves(b, "/shared", "one") && Self.serves(c, "/shared", "one") })
    let listed = try Self.call(c, "GET", "/__admin/mappings/s1")
    #expect(status(listed) == 200 && listed.contains("/shared"), "\(listed)")

    // Edited through B.
    let edited = try Self.call(b, "PUT", "/__admin/mappings/s1", Self.stub("s1", "/shared", "two"))
    #expect(status(edited) == 200, "\(edited)")
    #expect(eventually { cluster.ports.allSatisfy { Self.serves($0, "/shared", "two") } })

    // Imported through C (two stubs in one change).
    let imported = try Self.call(
      c, "POST", "/__admin/mappings/import",
      #"{"mappings":[\#(Self.stub("i1", "/i1", "first")),\#(Self.stub("i2", "/i2", "second"))]}"#)
    #expect(status(imported) == 200, "\(imported)")
    #expect(
      eventually {
        cluster.ports.allSatisfy { Self.serves($0, "/i1", "first") && Self.serves($0, "/i2", "second") }
      })

    // Removed through C.
    let removed = try Self.call(c, "DELETE", "/__admin/mappings/s1")
    #expect(status(removed) == 200, "\(removed)")
    #expect(eventually { cluster.ports.allSatisfy { status(get($0, "/shared")) == 404 } })

    // A replica started now loads the store's runtime stubs before it serves.
    let late = try Cluster.launch(cluster.fixtures, cluster.redis)
    defer { _ = late.stop() }
    #expect(Self.serves(late.port, "/i1", "first"), "loaded at start")
    #expect(status(get(late.port, "/shared")) == 404)

    // Reset through the new replica: runtime stubs gone everywhere, file stubs stay.
    let reset = try Self.call(late.port, "POST", "/__admin/mappings/reset")
    #expect(status(reset) == 200, "\(reset)")
    #expect(eventually { cluster.ports.allSatisfy { status(get($0, "/i1")) == 404 } })
    for port in cluster.ports + [late.port] { #expect(Self.serves(port, "/file", "file")) }
  }

  @Test(Self.needsRedis)
  func concurrentChangesThroughDifferentReplicasAreAllKept() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster()
    defer { cluster.stop() }
    let ports = cluster.ports
    // 90 creates at once, 30 through each replica, each on a thread of its own: each write is checked
    // against the generation the replica read, so none overwrites another's, and one overtaken by
    // another replica's write is applied again rather than refused.
    let creates = 90
    let gate = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let answers = Mutex([Int]())
    for k in 0..<creates {
      done.enter()
      let thread = Thread {
        gate.wait()
        let answer =
          (try? Self.call(ports[k % 3], "POST", "/__admin/mappings", Self.stub("c\(k)", "/c\(k)", "\(k)")))
        answers.withLock { $0.append(status(answer ?? "")) }
        done.leave()
      }
      thread.stackSize = 256 << 10
      thread.start()
    }
    for _ in 0..<creates { gate.signal() }
    done.wait()
    #expect(answers.withLock { $0 }.allSatisfy { $0 == 201 }, "\(answers.withLock { $0 })")
    #expect(
      eventually {
        ports.allSatisfy { port in (0..<creates).allSatisfy { Self.serves(port, "/c\($0)", "\($0)") } }
      })
    let listed = try Self.call(ports[1], "GET", "/__admin/mappings")
    let total = try JSONValue.parse(Self.content(listed)).objectValue?["meta"]?.objectValue?["total"]
    #expect(
      total?.numberValue?.intValue == creates + 1,
      "\(creates) runtime stubs and the file stub: \(listed.prefix(300))")
  }

  @Test(Self.needsRedis)
  func aStoreOutageKeepsPlainStubsServingRefusesChangesAndHealsWhenTheStoreReturns() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster()
    defer { cluster.stop() }
    let ports = cluster.ports
    let created = try Self.call(ports[0], "POST", "/__admin/mappings", Self.stub("before", "/before", "b"))
    #expect(status(created) == 201, "\(created)")
    #expect(eventually { ports.allSatisfy { Self.serves($0, "/before", "b") } })
    for port in ports {
      let health = try Self.call(port, "GET", "/__admin/health")
      let store = try JSONValue.parse(Self.content(health)).objectValue?["stateStore"]?.objectValue
      #expect(status(health) == 200 && store?["status"]?.stringValue == "up", "\(health)")
    }

    // Traffic to the file stub on every replica while the store goes away.
    let traffic = Traffic()
    let thread = Thread {
      var k = 0
      while !traffic.stop.withLock({ $0 }) {
        let answer = get(ports[k % 3], "/file")
        traffic.tally.withLock { t in
          if status(answer) == 200 && Self.content(answer) == "file" {
            t.served += 1
          } else {
            t.failed.append(answer)
          }
        }
        k += 1
      }
    }
    thread.start()
    let servedBefore = traffic.tally.withLock { $0.served }
    cluster.redis.stop()

    // Health names the store as down on every replica.
    for port in ports {
      var last = ""
      #expect(
        eventually {
          last = (try? Self.call(port, "GET", "/__admin/health")) ?? ""
          return status(last) == 503
        }, "\(last)")
      let body = try JSONValue.parse(Self.content(last)).objectValue
      let store = body?["stateStore"]?.objectValue
      #expect(store?["status"]?.stringValue == "down", "\(last)")
      #expect(store?["url"]?.stringValue == "redis://127.0.0.1:\(cluster.redis.port)/0", "\(last)")
      #expect(body?["message"]?.stringValue?.contains("shared state store") == true, "\(last)")
    }
    // A change of the stubs is refused, and not applied locally either.
    let refused = try Self.call(ports[1], "POST", "/__admin/mappings", Self.stub("during", "/during", "d"))
    #expect(status(refused) == 503, "\(refused)")
    #expect(refused.contains("Shared state unavailable") && refused.contains("unavailable"), "\(refused)")
    #expect(status(get(ports[1], "/during")) == 404, "never applied on one replica only")
    let refusedDelete = try Self.call(ports[2], "DELETE", "/__admin/mappings/before")
    #expect(status(refusedDelete) == 503, "\(refusedDelete)")
    // The runtime stubs known before the outage keep serving.
    #expect(ports.allSatisfy { Self.serves($0, "/before", "b") })
    // Traffic kept being served through the outage (wait for some requests after the stop).
    #expect(eventually { traffic.tally.withLock { $0.served } > servedBefore + 30 })

    // The store comes back on the same port, empty: no runtime stubs; every replica is whole again.
    try cluster.redis.start()
    for port in ports {
      #expect(eventually { (try? Self.call(port, "GET", "/__admin/health")).map(status) == 200 })
      #expect(eventually { status(get(port, "/before")) == 404 }, "an empty store means no runtime stubs")
    }
    traffic.stop.withLock { $0 = true }
    #expect(eventually(timeout: 60) { thread.isFinished })
    let (served, failed) = traffic.tally.withLock { ($0.served, $0.failed) }
    #expect(
      failed.isEmpty,
      "\(failed.count) of \(served + failed.count) file-stub requests failed: \(failed.prefix(3))")

    let after = try Self.call(ports[2], "POST", "/__admin/mappings", Self.stub("after", "/after", "a"))
    #expect(status(after) == 201, "\(after)")
    #expect(eventually { ports.allSatisfy { Self.serves($0, "/after", "a") } })
    // Each replica said once that the store went down and once that it came back.
    for replica in cluster.replicas {
      #expect(
        eventually {
          let log = replica.standardErrorText
          return log.contains("is down") && log.contains("is up again")
        }, "\(replica.standardErrorText)")
    }
  }

  /// After the store comes back, the first request on every path that uses it is answered, on every
  /// replica: each of a replica's connections (scenario commits, the journal's queries, contexts,
  /// sessions) reconnects once one of them saw the store go away. Before, a connection idle through the
  /// outage found out on its first command after the store was back, and that request got a 503
  /// (`Server closed the connection`), seconds or minutes after health said the store was up.
  @Test(Self.needsRedis)
  func afterTheStoreReturnsTheFirstRequestOnEveryPathIsAnswered() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster(files: Self.scenarioFiles + SharedStateContextsTests.files)
    defer { cluster.stop() }
    let ports = cluster.ports
    /// Every path that uses the store, on `port`: (what, status).
    func useEveryPath(_ port: Int, session: String) throws -> [(String, Int)] {
      [
        ("scenario step", status(try Self.call(port, "GET", "/step"))),
        ("sequence", status(try Self.call(port, "GET", "/seq"))),
        ("context write", status(try Self.call(port, "POST", "/notes/n\(port)", #"{"text":"x"}"#))),
        ("context read", status(try Self.call(port, "GET", "/notes/n\(port)"))),
        ("count", status(try Self.call(port, "POST", "/__admin/requests/count", #"{"url":"/file"}"#))),
        ("session", status(try Self.call(port, "GET", "/__session/\(session)/file"))),
      ]
    }
    for port in ports {
      let used = try useEveryPath(port, session: "before")
      #expect(used.allSatisfy { $0.1 != 503 }, "\(port) before the outage: \(used)")
    }
    cluster.redis.stop()
    #expect(
      eventually {
        ports.allSatisfy { (try? Self.call($0, "GET", "/__admin/health")).map(status) == 503 }
      })
    try cluster.redis.start()
    #expect(
      eventually {
        ports.allSatisfy { (try? Self.call($0, "GET", "/__admin/health")).map(status) == 200 }
      })
    for port in ports {
      let used = try useEveryPath(port, session: "after\(port)")
      #expect(used.allSatisfy { $0.1 != 503 }, "\(port) after the store came back: \(used)")
    }
  }

  /// A scenario of two steps on `GET /step` (`first` moves it to `second`) and a response sequence of
  /// three on `GET /seq`, as file stubs of every replica.
  static let scenarioFiles = [
    (
      "step-first.json",
      #"{"scenarioName":"flow","requiredScenarioState":"Started","newScenarioState":"second","#
        + #""request":{"method":"GET","url":"/step"},"response":{"status":200,"body":"first"}}"#
    ),
    (
      "step-second.json",
      #"{"scenarioName":"flow","requiredScenarioState":"second","#
        + #""request":{"method":"GET","url":"/step"},"response":{"status":200,"body":"second"}}"#
    ),
    (
      "seq.json",
      #"{"request":{"method":"GET","url":"/seq"},"x-responseSequence":{"responses":["#
        + #"{"status":200,"body":"1"},{"status":200,"body":"2"},{"status":200,"body":"3"}]}}"#
    ),
  ]

  /// Scenario `name`'s state as replica `port` reports it.
  static func scenarioState(_ port: Int, _ name: String = "flow") throws -> String? {
    let listed = try call(port, "GET", "/__admin/scenarios")
    let list = try JSONValue.parse(content(listed)).objectValue?["scenarios"]?.arrayValue ?? []
    return list.first { $0.objectValue?["name"]?.stringValue == name }?.objectValue?["state"]?.stringValue
  }

  @Test(Self.needsRedis)
  func scenarioStatesAndSequencePositionsAreSharedByTheReplicas() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster(files: Self.scenarioFiles)
    defer { cluster.stop() }
    let (a, b, c) = (cluster.ports[0], cluster.ports[1], cluster.ports[2])
    // Advanced through B, seen by C (and A), at once: the store holds the state.
    #expect(Self.serves(b, "/step", "first"))
    #expect(Self.serves(c, "/step", "second"))
    #expect(Self.serves(a, "/step", "second"))
    #expect(try Self.scenarioState(a) == "second")
    // Set through the admin API of C, seen by B.
    let set = try Self.call(c, "PUT", "/__admin/scenarios/flow/state", #"{"state":"Started"}"#)
    #expect(status(set) == 200, "\(set)")
    #expect(try Self.scenarioState(b) == "Started")
    #expect(Self.serves(b, "/step", "first"))
    // A sequence's position is shared: one response each, in order, whichever replica serves.
    #expect(Self.serves(a, "/seq", "1"))
    #expect(Self.serves(b, "/seq", "2"))
    #expect(Self.serves(c, "/seq", "3"))
    #expect(Self.serves(a, "/seq", "3"), "sticks on the last")
    // Reset through A: the scenario and the sequence start again everywhere.
    let reset = try Self.call(a, "POST", "/__admin/scenarios/reset")
    #expect(status(reset) == 200, "\(reset)")
    #expect(Self.serves(c, "/seq", "1"))
    #expect(try Self.scenarioState(b) == "Started")
    // The global reset too.
    #expect(Self.serves(c, "/step", "first"))
    let global = try Self.call(b, "POST", "/__admin/reset")
    #expect(status(global) == 200, "\(global)")
    #expect(Self.serves(a, "/step", "first"))
  }

  @Test(Self.needsRedis)
  func concurrentRequestsToOneScenarioStepOverThreeReplicasAdvanceItExactlyOnce() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster(files: Self.scenarioFiles)
    defer { cluster.stop() }
    let ports = cluster.ports
    // 200 requests on threads of their own, released together, spread over the three replicas.
    let gate = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let answers = Mutex([String]())
    for k in 0..<200 {
      done.enter()
      let thread = Thread {
        gate.wait()
        let answer = get(ports[k % 3], "/step", timeout: 60)
        answers.withLock { $0.append(status(answer) == 200 ? Self.content(answer) : answer) }
        done.leave()
      }
      thread.stackSize = 256 << 10
      thread.start()
    }
    for _ in 0..<200 { gate.signal() }
    done.wait()
    let all = answers.withLock { $0 }
    #expect(all.count == 200)
    #expect(all.filter { $0 == "first" }.count == 1, "exactly one answered by the step's stub")
    #expect(all.filter { $0 == "second" }.count == 199, "\(all.filter { $0 != "second" }.prefix(3))")
    for port in ports { #expect(try Self.scenarioState(port) == "second") }
  }

  /// A scenario that every request moves: `GET /toggle` answers `on` and moves `Started` to `on`, then
  /// answers `off` and moves it back.
  static let toggleFiles = [
    (
      "toggle-on.json",
      #"{"scenarioName":"toggle","requiredScenarioState":"Started","newScenarioState":"on","#
        + #""request":{"method":"GET","url":"/toggle"},"response":{"status":200,"body":"on"}}"#
    ),
    (
      "toggle-off.json",
      #"{"scenarioName":"toggle","requiredScenarioState":"on","newScenarioState":"Started","#
        + #""request":{"method":"GET","url":"/toggle"},"response":{"status":200,"body":"off"}}"#
    ),
  ]

  /// Every request to a scenario that every request moves, raced over three replicas, is answered by
  /// the step of the state it found and moves it once: the answers alternate, so of 90 requests exactly 45
  /// are `on` and 45 `off`, and the state is back at `Started`. Each commit overtakes the others of its
  /// round, so a request may lose many rounds in a row; none may be answered 503 for it (it was, after a
  /// fixed 8 rounds, before the retries had a deadline and a back-off).
  @Test(Self.needsRedis)
  func aScenarioThatEveryRequestMovesRacedOverThreeReplicasMovesOncePerRequest() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster(files: Self.toggleFiles)
    defer { cluster.stop() }
    let ports = cluster.ports
    let requests = 90
    let gate = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let answers = Mutex([String]())
    for k in 0..<requests {
      done.enter()
      let thread = Thread {
        gate.wait()
        let answer = get(ports[k % 3], "/toggle", timeout: 60)
        answers.withLock { $0.append(status(answer) == 200 ? Self.content(answer) : answer) }
        done.leave()
      }
      thread.stackSize = 256 << 10
      thread.start()
    }
    for _ in 0..<requests { gate.signal() }
    done.wait()
    let all = answers.withLock { $0 }
    let unexpected = all.filter { $0 != "on" && $0 != "off" }
    #expect(unexpected.isEmpty, "\(unexpected.count) other answers, e.g. \(unexpected.prefix(2))")
    #expect(all.filter { $0 == "on" }.count == requests / 2)
    #expect(all.filter { $0 == "off" }.count == requests / 2)
    for port in ports { #expect(try Self.scenarioState(port, "toggle") == "Started") }
  }

  @Test(Self.needsRedis)
  func aScenarioStubAnswers503WhileTheStoreIsDownAndPlainStubsServe() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster(files: Self.scenarioFiles)
    defer { cluster.stop() }
    let ports = cluster.ports
    #expect(Self.serves(ports[0], "/step", "first"))
    cluster.redis.stop()
    for port in ports {
      let answer = get(port, "/step")
      #expect(status(answer) == 503, "\(answer)")
      #expect(answer.contains("Shared state unavailable"), "\(answer)")
      #expect(status(get(port, "/seq")) == 503)
      #expect(Self.serves(port, "/file", "file"), "a plain stub keeps serving")
      let listed = try Self.call(port, "GET", "/__admin/scenarios")
      #expect(status(listed) == 503, "\(listed)")
    }
    // Back, empty: the scenario starts again, on every replica, without a restart of its own.
    try cluster.redis.start()
    #expect(eventually { Self.serves(ports[1], "/step", "first") })
    for port in ports { #expect(eventually { Self.serves(port, "/step", "second") }) }
  }

  /// `count` of `POST /__admin/requests/count` for `GET url` on `port` (nil for any other answer).
  static func count(_ port: Int, _ url: String) -> Int? {
    guard
      let answer = try? call(port, "POST", "/__admin/requests/count", #"{"method":"GET","url":"\#(url)"}"#),
      status(answer) == 200
    else { return nil }
    return (try? JSONValue.parse(content(answer)))?.objectValue?["count"]?.numberValue?.intValue
  }

  /// The shared count is never passed off as exact when the stream lost entries: with a journal of 10
  /// entries, the stream is trimmed (about 10 kept), and a count then says `"exact": false` with how many
  /// were lost, as the local journal does once it evicted entries; a clear makes counts exact again.
  @Test(Self.needsRedis)
  func aCountOverATrimmedStreamSaysItIsNotExact() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let redis = try RedisServer()
    let fixtures = try TemporaryFixtures([("file.json", stubJSON("/file", body: "file"))])
    defer {
      redis.stop()
      fixtures.remove()
    }
    let replicas = try (0..<2).map { _ in
      try MockServerProcess.launch(
        arguments: [
          "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--state-store", redis.url,
          "--journal-size", "10",
        ])
    }
    defer { for r in replicas { _ = r.stop() } }
    let (a, b) = (replicas[0].port, replicas[1].port)
    func countAnswer(_ port: Int) -> JSONObject? {
      guard
        let answer = try? Self.call(
          port, "POST", "/__admin/requests/count", #"{"method":"GET","url":"/file"}"#),
        status(answer) == 200
      else { return nil }
      return (try? JSONValue.parse(Self.content(answer)))?.objectValue
    }
    // Within the cap: exact.
    for _ in 0..<5 { #expect(Self.serves(a, "/file", "file")) }
    #expect(eventually { countAnswer(b)?["count"]?.numberValue?.intValue == 5 })
    #expect(countAnswer(b)?["exact"] == nil)
    // 400 more through A: the stream keeps about 10 (Redis trims whole nodes of 100), the rest is lost.
    for _ in 0..<400 { #expect(Self.serves(a, "/file", "file")) }
    var last: JSONObject?
    #expect(
      eventually {
        last = countAnswer(b)
        guard let last, let count = last["count"]?.numberValue?.intValue,
          let lost = last["evicted"]?.numberValue?.intValue
        else { return false }
        return last["exact"] == .bool(false) && count + lost == 405
      }, "\(String(describing: last))")
    // A clear: counts are exact again.
    let cleared = try Self.call(b, "DELETE", "/__admin/requests")
    #expect(status(cleared) == 200, "\(cleared)")
    #expect(Self.serves(a, "/file", "file"))
    #expect(eventually { countAnswer(b)?["count"]?.numberValue?.intValue == 1 })
    #expect(countAnswer(b)?["exact"] == nil)
  }

  @Test(Self.needsRedis)
  func theJournalIsSharedAnyReplicaCountsForAllAndAKilledReplicaLosesNoEntry() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster()
    defer { cluster.stop() }
    let ports = cluster.ports
    // 10 requests to each replica, and one unmatched to each.
    for k in 0..<30 { #expect(Self.serves(ports[k % 3], "/file", "file")) }
    for port in ports { #expect(status(get(port, "/nothing-\(port)")) == 404) }
    // Any replica counts all 30: its own entries are sent before it answers, the others' within a
    // second (waited for, no fixed sleep); never more.
    for port in ports {
      var last: Int?
      #expect(
        eventually {
          last = Self.count(port, "/file")
          return last == 30
        }, "count on \(port): \(String(describing: last))")
    }
    let found = try Self.call(ports[1], "POST", "/__admin/requests/find", #"{"method":"GET","url":"/file"}"#)
    let requests = try JSONValue.parse(Self.content(found)).objectValue?["requests"]?.arrayValue
    #expect(requests?.count == 30, "\(found.prefix(300))")
    let unmatched = try Self.call(ports[2], "GET", "/__admin/requests/unmatched")
    #expect(
      try JSONValue.parse(Self.content(unmatched)).objectValue?["requests"]?.arrayValue?.count == 3,
      "\(unmatched.prefix(300))")
    let misses = try Self.call(ports[0], "GET", "/__admin/requests/unmatched/near-misses")
    #expect(status(misses) == 200, "\(misses.prefix(300))")
    let listed = try Self.call(ports[0], "GET", "/__admin/requests")
    let total = try JSONValue.parse(Self.content(listed)).objectValue?["meta"]?.objectValue?["total"]
    #expect(total?.numberValue?.intValue == 33, "\(listed.prefix(300))")

    // Cleared through C: cleared for every replica.
    let cleared = try Self.call(ports[2], "DELETE", "/__admin/requests")
    #expect(status(cleared) == 200, "\(cleared)")
    #expect(Self.count(ports[0], "/file") == 0)

    // 20 requests through A, acknowledged to the store (B counts them); A killed with SIGKILL loses none.
    for _ in 0..<20 { #expect(Self.serves(ports[0], "/file", "file")) }
    #expect(eventually { Self.count(ports[1], "/file") == 20 })
    kill(cluster.replicas[0].processIdentifier, SIGKILL)
    #expect(cluster.replicas[0].waitForExit(timeout: 10) != nil)
    #expect(Self.count(ports[1], "/file") == 20)
    #expect(Self.count(ports[2], "/file") == 20)

    // With the store down, a count is 503 (the shared state is unavailable), never one replica's number.
    cluster.redis.stop()
    for port in ports.dropFirst() {
      let answer = try Self.call(port, "POST", "/__admin/requests/count", #"{"method":"GET","url":"/file"}"#)
      #expect(status(answer) == 503, "\(answer)")
      #expect(answer.contains("Shared state unavailable"), "\(answer)")
      let find = try Self.call(port, "POST", "/__admin/requests/find", #"{"method":"GET","url":"/file"}"#)
      #expect(status(find) == 503, "\(find)")
      #expect(Self.serves(port, "/file", "file"), "plain stubs keep serving")
    }
    // Back (empty): counts answer again, from what was sent since.
    try cluster.redis.start()
    #expect(eventually { Self.count(ports[1], "/file") != nil })
  }

  @Test(Self.needsRedis)
  func aStoreWhoseRepliesStallDoesNotHoldPlainStubs() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let redis = try RedisServer()
    defer { redis.stop() }
    let proxy = try StallingProxy(upstreamPort: redis.port)
    defer { proxy.stop() }
    let fixtures = try TemporaryFixtures(
      [("file.json", stubJSON("/file", body: "file"))] + Self.scenarioFiles)
    defer { fixtures.remove() }
    let replica = try MockServerProcess.launch(
      arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--state-store", proxy.url])
    defer { _ = replica.stop() }
    #expect(Self.serves(replica.port, "/step", "first"), "through the proxy while it forwards")
    proxy.stall()
    // A scenario request now waits on the store: the proxy holds its commit's reply (or the journal
    // writer's, whichever comes first).
    let done = DispatchSemaphore(value: 0)
    Thread {
      _ = get(replica.port, "/step", timeout: 60)
      done.signal()
    }.start()
    #expect(eventually { proxy.heldReplies > 0 })
    // Plain stubs answer meanwhile (and their journal entries queue).
    for _ in 0..<50 { #expect(Self.serves(replica.port, "/file", "file")) }
    #expect(proxy.isStalled, "every answer came while the store's replies were held")
    proxy.resume()
    done.wait()
    #expect(eventually { Self.serves(replica.port, "/step", "second") })
  }
}

/// Requests sent during the outage: how many were served as expected, and the answers that were not.
private final class Traffic: Sendable {
  let stop = Mutex(false)
  let tally = Mutex((served: 0, failed: [String]()))
}
