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

    init() throws {
      redis = try RedisServer()
      fixtures = try TemporaryFixtures([("file.json", stubJSON("/file", body: "file"))])
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

  @Test(
    .enabled(if: RedisServer.installed || required, "redis-server is not installed (make test installs it)"))
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

  @Test(
    .enabled(if: RedisServer.installed || required, "redis-server is not installed (make test installs it)"))
  func concurrentChangesThroughDifferentReplicasAreAllKept() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try Cluster()
    defer { cluster.stop() }
    let ports = cluster.ports
    // 30 creates at once, 10 through each replica: each write is checked against the generation the
    // replica read, so none overwrites another's.
    let answers = Mutex([Int]())
    DispatchQueue.concurrentPerform(iterations: 30) { k in
      let answer =
        (try? Self.call(ports[k % 3], "POST", "/__admin/mappings", Self.stub("c\(k)", "/c\(k)", "\(k)")))
      answers.withLock { $0.append(status(answer ?? "")) }
    }
    #expect(answers.withLock { $0 }.allSatisfy { $0 == 201 }, "\(answers.withLock { $0 })")
    #expect(
      eventually {
        ports.allSatisfy { port in (0..<30).allSatisfy { Self.serves(port, "/c\($0)", "\($0)") } }
      })
    let listed = try Self.call(ports[1], "GET", "/__admin/mappings")
    let total = try JSONValue.parse(Self.content(listed)).objectValue?["meta"]?.objectValue?["total"]
    #expect(total?.numberValue?.intValue == 31, "30 runtime stubs and the file stub: \(listed.prefix(300))")
  }

  @Test(
    .enabled(if: RedisServer.installed || required, "redis-server is not installed (make test installs it)"))
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
}

/// Requests sent during the outage: how many were served as expected, and the answers that were not.
private final class Traffic: Sendable {
  let stop = Mutex(false)
  let tally = Mutex((served: 0, failed: [String]()))
}
