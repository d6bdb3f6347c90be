import Foundation
import MockJSON
import MockServerTesting
import TestSupport
import Testing

/// Issue 47, the recording in progress shared through the state store: `POST /__admin/recordings/start`
/// on one replica makes every replica record what it proxies, `status` agrees on all of them, and `stop`
/// on any replica answers with stubs from every replica's exchanges, which every replica then serves;
/// `snapshot` sees every replica's exchanges too. While the store is down the recording API answers 503.
/// Redis and three replicas as in ``SharedStateTests``; the upstream is a fourth `mockserver` of its own.
@Suite("Recordings shared through the state store", .serialized)
struct SharedRecordingsTests {
  /// `GET /__admin/recordings/status` on `port`: the status name (nil for any other answer).
  static func recordingStatus(_ port: Int) -> String? {
    guard let answer = try? SharedStateTests.call(port, "GET", "/__admin/recordings/status"),
      status(answer) == 200
    else { return nil }
    return (try? JSONValue.parse(SharedStateTests.content(answer)))?.objectValue?["status"]?.stringValue
  }

  /// The `request.url` of each stub in a `{"mappings": [...]}` answer, sorted.
  static func recordedURLs(_ answer: String) -> [String] {
    let mappings =
      (try? JSONValue.parse(SharedStateTests.content(answer)))?.objectValue?["mappings"]?.arrayValue ?? []
    return mappings.compactMap { $0.objectValue?["request"]?.objectValue?["url"]?.stringValue }.sorted()
  }

  @Test(SharedStateTests.needsRedis)
  func aRecordingStartedOnOneReplicaRecordsWhatEveryReplicaProxies() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let upstreamFixtures = try TemporaryFixtures(
      ["a", "b", "c", "d"].map { ("\($0).json", stubJSON("/up/\($0)", body: "upstream-\($0)")) })
    defer { upstreamFixtures.remove() }
    let upstream = try MockServerProcess.launch(
      arguments: ["--fixtures", upstreamFixtures.fixtures, "--no-watch", "--quiet"])
    var upstreamRunning = true
    defer { if upstreamRunning { _ = upstream.stop() } }
    let cluster = try SharedStateTests.Cluster()
    defer { cluster.stop() }
    let (a, b, c) = (cluster.ports[0], cluster.ports[1], cluster.ports[2])
    #expect(cluster.ports.allSatisfy { Self.recordingStatus($0) == "NeverStarted" })

    // Started on A: every replica says Recording (each takes the store's status as it answers).
    let started = try SharedStateTests.call(
      a, "POST", "/__admin/recordings/start", #"{"targetBaseUrl":"http://127.0.0.1:\#(upstream.port)"}"#)
    #expect(status(started) == 200, "\(started)")
    #expect(cluster.ports.allSatisfy { Self.recordingStatus($0) == "Recording" })
    let again = try SharedStateTests.call(
      c, "POST", "/__admin/recordings/start", #"{"targetBaseUrl":"http://127.0.0.1:\#(upstream.port)"}"#)
    #expect(status(again) == 409, "one recording for all replicas: \(again)")

    // Traffic through B and C (and A) goes to the upstream and is recorded.
    #expect(SharedStateTests.serves(b, "/up/b", "upstream-b"))
    #expect(SharedStateTests.serves(c, "/up/c", "upstream-c"))
    #expect(SharedStateTests.serves(a, "/up/a", "upstream-a"))

    // A snapshot through C sees every replica's exchanges (once their journal entries are in the store).
    var snapshot = ""
    #expect(
      eventually {
        snapshot =
          (try? SharedStateTests.call(c, "POST", "/__admin/recordings/snapshot", #"{"persist":false}"#)) ?? ""
        return Self.recordedURLs(snapshot) == ["/up/a", "/up/b", "/up/c"]
      }, "\(snapshot)")

    // Stopped on A: the stubs of all of it, served by every replica once the upstream is gone.
    let stopped = try SharedStateTests.call(a, "POST", "/__admin/recordings/stop")
    #expect(status(stopped) == 200, "\(stopped)")
    #expect(Self.recordedURLs(stopped) == ["/up/a", "/up/b", "/up/c"], "\(stopped)")
    #expect(cluster.ports.allSatisfy { Self.recordingStatus($0) == "Stopped" })
    let notRecording = try SharedStateTests.call(c, "POST", "/__admin/recordings/stop")
    #expect(status(notRecording) == 400, "stopped everywhere: \(notRecording)")
    _ = upstream.stop()
    upstreamRunning = false
    #expect(eventually { SharedStateTests.serves(b, "/up/c", "upstream-c") })
    #expect(eventually { SharedStateTests.serves(c, "/up/b", "upstream-b") })
    #expect(eventually { SharedStateTests.serves(b, "/up/a", "upstream-a") })
    #expect(status(get(b, "/up/d")) == 404, "no longer proxied: the recording ended on B too")
  }

  @Test(SharedStateTests.needsRedis)
  func theRecordingAPIAnswers503WhileTheStoreIsDown() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try SharedStateTests.Cluster()
    defer { cluster.stop() }
    let b = cluster.ports[1]
    #expect(Self.recordingStatus(b) == "NeverStarted")
    cluster.redis.stop()
    var answer = ""
    #expect(
      eventually {
        answer = (try? SharedStateTests.call(b, "GET", "/__admin/recordings/status")) ?? ""
        return status(answer) == 503
      }, "\(answer)")
    #expect(answer.contains("Shared state unavailable"), "\(answer)")
    for (path, body) in [
      ("/__admin/recordings/start", #"{"targetBaseUrl":"http://127.0.0.1:9"}"#),
      ("/__admin/recordings/stop", nil), ("/__admin/recordings/snapshot", nil),
    ] {
      let refused = try SharedStateTests.call(b, "POST", path, body)
      #expect(status(refused) == 503, "\(path): \(refused)")
      #expect(refused.contains("Shared state unavailable"), "\(path): \(refused)")
    }
    #expect(SharedStateTests.serves(b, "/file", "file"), "plain stubs keep serving")
    // Back, empty: the recording API answers again without a restart.
    try cluster.redis.start()
    #expect(eventually { Self.recordingStatus(b) == "NeverStarted" })
  }
}
