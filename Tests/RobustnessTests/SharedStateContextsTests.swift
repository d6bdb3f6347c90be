import Dispatch
import Foundation
import MockJSON
import MockServerTesting
import Synchronization
import TestSupport
import Testing

/// Issue 47, the state extension's contexts (docs/stateful.md) kept in the shared state store: a context
/// written through one replica (a `recordState` listener) is read at once through another, by its
/// `state-matcher`, by a templated response's `{{state}}` and by the admin state routes; writes to one
/// context through the three replicas at once are atomic per context (none is lost); while the store is
/// down a stub that reads or writes state, and the admin state routes, answer 503. Redis and three
/// replicas as in ``SharedStateTests``.
@Suite("State extension contexts shared through the state store", .serialized)
struct SharedStateContextsTests {
  /// `POST /notes/{id}` records `text` in context `{id}`; `GET /notes/{id}` answers it when the context
  /// exists (state-matcher, `{{state}}`), 404 otherwise; `POST /items` adds `n` to context `items`' list.
  static let files: [(String, String)] = [
    (
      "notes.json",
      #"""
      {"mappings": [
        {"request": {"method": "POST", "urlPathPattern": "/notes/[a-z0-9]+"},
         "response": {"status": 201, "body": "saved"},
         "serveEventListeners": [{"name": "recordState", "parameters": {
           "context": "{{request.pathSegments.[1]}}",
           "state": {"text": "{{jsonPath request.body '$.text'}}"}}}]},
        {"priority": 1,
         "request": {"method": "GET", "urlPathPattern": "/notes/[a-z0-9]+",
           "customMatcher": {"name": "state-matcher",
             "parameters": {"hasContext": "{{request.pathSegments.[1]}}"}}},
         "response": {"status": 200, "transformers": ["response-template"],
           "body": "{{state context=request.pathSegments.[1] property='text'}}"}},
        {"priority": 9,
         "request": {"method": "GET", "urlPathPattern": "/notes/[a-z0-9]+"},
         "response": {"status": 404, "body": "no note"}},
        {"request": {"method": "POST", "url": "/items"},
         "response": {"status": 204},
         "serveEventListeners": [{"name": "recordState", "parameters": {
           "context": "items", "list": {"addLast": {"n": "{{jsonPath request.body '$.n'}}"}}}}]}
      ]}
      """#
    )
  ]

  /// Context `name` as `GET /__admin/state-extension/contexts/{name}` on `port` shows it (nil for any
  /// other answer).
  static func context(_ port: Int, _ name: String) -> JSONObject? {
    guard let answer = try? SharedStateTests.call(port, "GET", "/__admin/state-extension/contexts/\(name)"),
      status(answer) == 200
    else { return nil }
    return (try? JSONValue.parse(SharedStateTests.content(answer)))?.objectValue
  }

  @Test(SharedStateTests.needsRedis)
  func aContextWrittenThroughOneReplicaIsReadThroughTheOthers() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try SharedStateTests.Cluster(files: Self.files)
    defer { cluster.stop() }
    let (a, b, c) = (cluster.ports[0], cluster.ports[1], cluster.ports[2])
    #expect(status(get(b, "/notes/abc")) == 404)

    // Written through A: read through B (matcher and template) and C (admin), with no wait: the store
    // is where every replica reads.
    let saved = try SharedStateTests.call(a, "POST", "/notes/abc", #"{"text":"hello"}"#)
    #expect(status(saved) == 201, "\(saved)")
    #expect(SharedStateTests.serves(b, "/notes/abc", "hello"))
    #expect(status(get(b, "/notes/zzz")) == 404)
    let shown = Self.context(c, "abc")
    #expect(
      shown?["properties"]?.objectValue?["text"]?.stringValue == "hello", "\(String(describing: shown))")
    #expect(shown?["updateCount"]?.numberValue?.intValue == 1)
    let names = try SharedStateTests.call(b, "GET", "/__admin/state-extension/contexts")
    let listed = try JSONValue.parse(SharedStateTests.content(names)).arrayValue?.compactMap(\.stringValue)
    #expect(listed == ["abc"], "\(names)")

    // 240 writes to one context at once, spread over the three replicas: none is lost (each replica's
    // writers take turns; one overtaken by another replica's write applies its change to that one).
    let gate = DispatchSemaphore(value: 0)
    let done = DispatchGroup()
    let statuses = Mutex([Int]())
    let writes = 240
    for k in 0..<writes {
      done.enter()
      let thread = Thread {
        gate.wait()
        let answer =
          (try? SharedStateTests.call(cluster.ports[k % 3], "POST", "/items", #"{"n":"\#(k)"}"#)) ?? ""
        statuses.withLock { $0.append(status(answer)) }
        done.leave()
      }
      thread.stackSize = 256 << 10
      thread.start()
    }
    for _ in 0..<writes { gate.signal() }
    done.wait()
    let refused = statuses.withLock { $0 }.filter { $0 != 204 }
    #expect(refused.isEmpty, "answers other than 204: \(refused)")
    let items = Self.context(a, "items")
    let list = items?["list"]?.arrayValue ?? []
    #expect(list.count == writes, "\(list.count) entries")
    #expect(Set(list.compactMap { $0.objectValue?["n"]?.stringValue }) == Set((0..<writes).map(String.init)))
    #expect(items?["updateCount"]?.numberValue?.intValue == writes)

    // Deleted through C: gone for B.
    let deleted = try SharedStateTests.call(c, "DELETE", "/__admin/state-extension/contexts/abc")
    #expect(status(deleted) == 204, "\(deleted)")
    #expect(status(get(b, "/notes/abc")) == 404)
  }

  @Test(SharedStateTests.needsRedis)
  func stubsThatUseStateAndTheStateRoutesAnswer503WhileTheStoreIsDown() throws {
    #expect(RedisServer.installed, "MOCKSERVER_REQUIRE_REDIS=1 needs redis-server")
    let cluster = try SharedStateTests.Cluster(files: Self.files)
    defer { cluster.stop() }
    let (a, b) = (cluster.ports[0], cluster.ports[1])
    #expect(status(try SharedStateTests.call(a, "POST", "/notes/abc", #"{"text":"hello"}"#)) == 201)
    cluster.redis.stop()
    var answer = ""
    #expect(
      eventually {
        answer = get(b, "/notes/abc")
        return status(answer) == 503
      }, "\(answer)")
    #expect(answer.contains("Shared state unavailable"), "\(answer)")
    let write = try SharedStateTests.call(a, "POST", "/items", #"{"n":"1"}"#)
    #expect(status(write) == 503, "\(write)")
    for (method, path) in [
      ("GET", "/__admin/state-extension/contexts"), ("GET", "/__admin/state-extension/contexts/abc"),
      ("DELETE", "/__admin/state-extension/contexts/abc"), ("DELETE", "/__admin/state-extension/contexts"),
    ] {
      let refused = try SharedStateTests.call(b, method, path)
      #expect(status(refused) == 503, "\(method) \(path): \(refused)")
      #expect(refused.contains("Shared state unavailable"), "\(method) \(path): \(refused)")
    }
    #expect(SharedStateTests.serves(b, "/file", "file"), "plain stubs keep serving")
    // Back, empty: no context, on every replica, without a restart.
    try cluster.redis.start()
    #expect(eventually { status(get(b, "/notes/abc")) == 404 })
  }
}
