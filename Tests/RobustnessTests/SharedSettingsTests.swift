import Foundation
import MockJSON
import MockServerTesting
import TestSupport
import Testing

/// Issue 47, settings shared through the state store: `POST`/`PATCH /__admin/settings` on one replica is
/// what every replica serves (a global delay set through one delays the answers of all), a replica started
/// later loads them, and while the store is down a change is refused with 503 and applied nowhere.
/// Redis and three replicas as in ``SharedStateTests``.
@Suite("Settings shared through the state store", .serialized)
struct SharedSettingsTests {
  /// The settings object `GET /__admin/settings` shows on `port`.
  static func settings(_ port: Int) -> JSONObject? {
    guard let answer = try? SharedStateTests.call(port, "GET", "/__admin/settings"), status(answer) == 200
    else { return nil }
    return (try? JSONValue.parse(SharedStateTests.content(answer)))?.objectValue?["settings"]?.objectValue
  }

  static func fixedDelay(_ port: Int) -> Int? { settings(port)?["fixedDelay"]?.numberValue?.intValue }

  @Test(SharedStateTests.needsRedis)
  func settingsChangedThroughOneReplicaAreServedByAll() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try SharedStateTests.Cluster()
    defer { cluster.stop() }
    let (a, b, c) = (cluster.ports[0], cluster.ports[1], cluster.ports[2])
    #expect(cluster.ports.allSatisfy { Self.fixedDelay($0) == 0 })

    // Set through A: every replica shows it once the change is published, and C's answers are delayed.
    let set = try SharedStateTests.call(
      a, "POST", "/__admin/settings", #"{"fixedDelay":400,"extended":{"team":"payments"}}"#)
    #expect(status(set) == 200, "\(set)")
    #expect(Self.fixedDelay(a) == 400, "A shows what the store took")
    #expect(eventually { Self.fixedDelay(b) == 400 && Self.fixedDelay(c) == 400 })
    #expect(Self.settings(c)?["extended"]?.objectValue?["team"]?.stringValue == "payments")
    let started = ContinuousClock.now
    #expect(SharedStateTests.serves(c, "/file", "file"))
    // A lower bound only: the global delay was added (a busy machine can only make it longer).
    #expect(ContinuousClock.now - started >= .milliseconds(400))

    // PATCH through B changes only the delay, everywhere.
    let patched = try SharedStateTests.call(b, "PATCH", "/__admin/settings", #"{"fixedDelay":0}"#)
    #expect(status(patched) == 200, "\(patched)")
    #expect(eventually { cluster.ports.allSatisfy { Self.fixedDelay($0) == 0 } })
    #expect(Self.settings(a)?["extended"]?.objectValue?["team"]?.stringValue == "payments")

    // A replica started now serves the store's settings from the start.
    let late = try SharedStateTests.Cluster.launch(cluster.fixtures, cluster.redis)
    defer { _ = late.stop() }
    #expect(Self.settings(late.port)?["extended"]?.objectValue?["team"]?.stringValue == "payments")

    // The store down: a change is refused with 503 and applied on no replica.
    cluster.redis.stop()
    var refused = ""
    #expect(
      eventually {
        refused = (try? SharedStateTests.call(c, "POST", "/__admin/settings", #"{"fixedDelay":50}"#)) ?? ""
        return status(refused) == 503
      }, "\(refused)")
    #expect(refused.contains("Shared state unavailable"), "\(refused)")
    #expect(cluster.ports.allSatisfy { Self.fixedDelay($0) == 0 }, "never applied on one replica only")
  }
}
