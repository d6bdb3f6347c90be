import Dispatch
import Foundation
import Synchronization
import Templating
import TestSupport
import Testing

@testable import MockServer

/// Writes of the state extension's contexts to the shared store (issue 47) against a real
/// `redis-server`: the compare-and-set script answers an overtaken write with what the context holds now,
/// and many writers on two replicas' stores (each with its own connection, as two processes have) writing
/// one context at once lose no write and count each once. A write that was overtaken used to be retried a
/// fixed number of times and then dropped with only a log line, while its request was answered as if it
/// had been written (CI: 1 of 60 concurrent `recordState` writes lost).
@Suite(
  "Shared state extension context writes", .serialized,
  .enabled(if: RedisServer.installed, "redis-server is not installed"))
struct SharedStateContextWritesTests {
  static func shared(_ redis: RedisServer) throws -> SharedRuntimeStubs {
    SharedRuntimeStubs(endpoint: try RedisEndpoint(url: redis.url), log: { _ in })
  }

  @Test func anOvertakenWriteIsToldWhatTheContextHoldsNow() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let contexts = SharedStateContexts(try Self.shared(redis), expirationSeconds: 60)
    // Expecting a value where there is none: overtaken, nothing there.
    #expect(try contexts.set("c", to: "one", ifStill: "zero") == .overtaken(current: nil))
    #expect(try contexts.value(of: "c") == nil)
    // Expecting none: written.
    #expect(try contexts.set("c", to: "one", ifStill: nil) == .written)
    // Expecting none where there is one, or another value: overtaken, with what is there.
    #expect(try contexts.set("c", to: "two", ifStill: nil) == .overtaken(current: "one"))
    #expect(try contexts.set("c", to: "two", ifStill: "zero") == .overtaken(current: "one"))
    #expect(try contexts.set("c", to: "two", ifStill: "one") == .written)
    #expect(try contexts.value(of: "c") == "two")
  }

  @Test func concurrentWritersOnTwoReplicasLoseNoWrite() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let replicas = [
      StateStore(expirationSeconds: 60, sharedIn: try Self.shared(redis)),
      StateStore(expirationSeconds: 60, sharedIn: try Self.shared(redis)),
    ]
    let writers = 16
    let perWriter = 25
    let failures = Mutex([String]())
    // One thread per writer (`concurrentPerform` would run only as many as there are cores).
    let gate = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    for w in 0..<writers {
      done.enter()
      let store = replicas[w % 2]
      let thread = Thread {
        defer { done.leave() }
        gate.wait()
        for k in 0..<perWriter {
          let entry = [StateField("n", "\(w)-\(k)")]
          do {
            let outcome = try store.checkedChange("queue", token: store.newWriteToken(), creating: true) {
              c in
              c.list.append(entry)
              return nil
            }
            if !outcome.done { failures.withLock { $0.append("\(w)-\(k): \(outcome)") } }
          } catch {
            failures.withLock { $0.append("\(w)-\(k): \(error)") }
          }
        }
      }
      thread.stackSize = 256 << 10
      thread.start()
    }
    for _ in 0..<writers { gate.signal() }
    done.wait()
    #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
    let context = try replicas[1].checkedContext(named: "queue")
    #expect(context?.list.count == writers * perWriter)
    #expect(context?.updateCount == writers * perWriter)
    let written = Set(context?.list.compactMap { $0.first?.value } ?? [])
    #expect(written.count == writers * perWriter)
  }

  /// Names that differ in their bytes are two keys and two contexts, listed and deleted as two (the
  /// listing merged them by `String` equality, so deleting every context left one behind).
  @Test func namesThatDifferInTheirBytesAreListedAndDeletedAsTwo() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let store = StateStore(expirationSeconds: 60, sharedIn: try Self.shared(redis))
    for name in ["\u{E9}", "e\u{301}"] {
      let outcome = try store.checkedChange(name, token: store.newWriteToken(), creating: true) { _ in nil }
      #expect(outcome.done)
    }
    #expect(try store.checkedNames().count == 2)
    try store.checkedDeleteAll()
    #expect(try store.checkedNames().isEmpty)
  }

  /// A context another writer left in the store with the largest update count takes one more write
  /// without overflowing (the replica stopped on an arithmetic overflow): the count stays at its largest.
  @Test func aStoredUpdateCountAtItsLargestTakesAnotherWrite() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let shared = try Self.shared(redis)
    _ = try shared.connection.command([
      "SET", shared.keyPrefix + ":state:big", #"{"p":[["v","x"]],"l":[],"n":\#(Int.max),"w":"1"}"#,
    ])
    let store = StateStore(expirationSeconds: 60, sharedIn: shared)
    let outcome = try store.checkedChange("big", token: store.newWriteToken(), creating: true) { c in
      c.properties = [StateField("v", "y")]
      return nil
    }
    #expect(outcome.done)
    let context = try store.checkedContext(named: "big")
    #expect(context?.updateCount == Int.max)
    #expect(context?.properties == [StateField("v", "y")])
  }
}
