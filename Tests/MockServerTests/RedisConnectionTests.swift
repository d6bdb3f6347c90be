import Foundation
import Synchronization
import TestSupport
import Testing

@testable import MockServer

/// The shared state store's connection (issue 47) against a real `redis-server`: the store URL's parts
/// and their ranges, commands and pipelines, error replies, and a store that goes away and comes back
/// (commands fail as unavailable, with back-off, and succeed again without a new connection object).
@Suite("Redis connection", .serialized)
struct RedisConnectionTests {
  @Test func storeURLsAreParsedAndCheckedWhereTheyEnter() throws {
    let plain = try RedisEndpoint(url: "redis://localhost:6380")
    #expect(plain.host == "localhost" && plain.port == 6380 && plain.database == 0 && plain.password == nil)
    let full = try RedisEndpoint(url: "redis://ann:s%40cret@10.0.0.5:7000/3")
    #expect(full.user == "ann" && full.password == "s@cret" && full.port == 7000 && full.database == 3)
    #expect(full.description == "redis://ann:***@10.0.0.5:7000/3", "the password is never shown")
    let v6 = try RedisEndpoint(url: "redis://[::1]:6379")
    #expect(v6.host == "::1" && v6.port == 6379)
    #expect(try RedisEndpoint(url: "redis://cache").port == 6379)
    for bad in [
      "http://localhost:6379", "redis://:6379", "redis://h:0", "redis://h:70000", "redis://h:x",
      "redis://h:6379/-1", "redis://h:6379/abc", "redis://[::1:6379",
    ] {
      #expect(throws: RedisFailure.self, "\(bad)") { try RedisEndpoint(url: bad) }
    }
  }

  @Test(.enabled(if: RedisServer.installed, "redis-server is not installed (make test installs it)"))
  func commandsPipelinesAndErrorReplies() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let connection = RedisConnection(endpoint: try RedisEndpoint(url: redis.url))
    #expect(connection.isReachable)
    #expect(try connection.command(["SET", "greeting", "héllo\r\nworld"]) == .status("OK"))
    #expect(try connection.command(["GET", "greeting"]).text == "héllo\r\nworld", "binary-safe arguments")
    #expect(try connection.command(["GET", "missing"]) == .null)
    let replies = try connection.pipeline([["INCR", "n"], ["INCR", "n"], ["LRANGE", "none", "0", "-1"]])
    #expect(replies == [.integer(1), .integer(2), .array([])])
    // An error reply is thrown after the whole pipeline is read: the connection stays in step.
    #expect(throws: RedisFailure.self) { try connection.pipeline([["INCR", "greeting"], ["INCR", "n"]]) }
    #expect(try connection.command(["GET", "n"]).text == "3")
  }

  @Test(.enabled(if: RedisServer.installed, "redis-server is not installed (make test installs it)"))
  func aStoreThatGoesAwayFailsAsUnavailableAndIsUsedAgainWhenItReturns() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let changes = Mutex<[Bool]>([])
    let connection = RedisConnection(endpoint: try RedisEndpoint(url: redis.url), timeoutMilliseconds: 500) {
      up, _ in changes.withLock { $0.append(up) }
    }
    #expect(try connection.command(["SET", "k", "v"]) == .status("OK"))
    redis.stop()
    var failure: RedisFailure?
    do { _ = try connection.command(["GET", "k"]) } catch { failure = error }
    guard case .unavailable? = failure else {
      Issue.record("expected unavailable, got \(String(describing: failure))")
      return
    }
    try redis.start()
    // Back-off: the next attempt waits at most 5 s; the store came back empty (no persistence).
    #expect(eventually { (try? connection.command(["GET", "k"])) == .null })
    #expect(changes.withLock { $0 } == [false, true], "one report per change")
  }

  @Test func anUnreachableStoreFailsFastAfterTheFirstAttempt() throws {
    // Nothing listens on this port: the first command tries, later ones wait for the back-off.
    let connection = RedisConnection(endpoint: try RedisEndpoint(url: "redis://127.0.0.1:\(freePort())"))
    for _ in 0..<3 {
      #expect(throws: RedisFailure.self) { try connection.command(["PING"]) }
    }
    #expect(!connection.isReachable)
  }
}
