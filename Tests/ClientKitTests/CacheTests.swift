import ClientKit
import Foundation
import HTTPCore
import Synchronization
import Testing

@Suite("Response cache")
struct CacheTests {
  /// A backend with an ETag'd resource: 304 when `If-None-Match` matches.
  static func etagBackend(version: Counter) -> StubTransport {
    StubTransport { request throws(APIError) in
      let etag = "\"v\(version.count)\""
      if request.headers["If-None-Match"] == etag {
        return reply(304, headers: ["ETag": etag, "X-Checked": "yes"])
      }
      return reply(200, #"{"id":\#(version.count),"name":"U"}"#, headers: ["ETag": etag])
    }
  }

  @Test func etagRevalidationAnswers304FromTheCache() async throws {
    let version = Counter()
    version.increment()
    let stub = Self.etagBackend(version: version)
    let client = makeClient(stub, cache: ResponseCache())
    let first = try await client.response(GetUser(id: 1))
    #expect(first.source == .network)
    let second = try await client.response(GetUser(id: 1))
    #expect(second.source == .revalidated)
    #expect(second.value == first.value)
    #expect(second.statusCode == 200)
    #expect(second.header("x-checked") == "yes")
    #expect(stub.requests[1].headers["If-None-Match"] == "\"v1\"")
    version.increment()
    let third = try await client.response(GetUser(id: 1))
    #expect(third.source == .network)
    #expect(third.value.id == 2)
  }

  @Test func lastModifiedRevalidation() async throws {
    let stamp = "Wed, 21 Oct 2015 07:28:00 GMT"
    let stub = StubTransport { request throws(APIError) in
      request.headers["If-Modified-Since"] == stamp
        ? reply(304) : reply(200, #"{"id":1,"name":"L"}"#, headers: ["Last-Modified": stamp])
    }
    let client = makeClient(stub, cache: ResponseCache())
    _ = try await client.send(GetUser(id: 1))
    let again = try await client.response(GetUser(id: 1))
    #expect(again.source == .revalidated)
    #expect(again.value.name == "L")
  }

  @Test func defaultQueryItemsDoNotSplitTheCacheKeyAndNoStoreIsRespected() async throws {
    let counter = Counter()
    let stub = StubTransport { request throws(APIError) in
      request.headers["If-None-Match"] == "\"a\""
        ? reply(304) : reply(200, #"{"id":1,"name":"A"}"#, headers: ["ETag": "\"a\""])
    }
    let client = makeClient(
      stub, cache: ResponseCache(),
      defaultQueryItems: { [URLQueryItem(name: "ts", value: "\(counter.increment())")] })
    _ = try await client.send(GetUser(id: 1))
    #expect(try await client.response(GetUser(id: 1)).source == .revalidated)

    let cache = ResponseCache()
    let noStore = makeClient(
      StubTransport(
        statusCode: 200, headers: ["ETag": "\"x\"", "Cache-Control": "no-store"],
        body: #"{"id":1,"name":"A"}"#), cache: cache)
    _ = try await noStore.send(GetUser(id: 1))
    #expect(cache.count == 0)
  }

  @Test func cachedThenFreshDeliversTwice() async throws {
    let version = Counter()
    version.increment()
    let client = makeClient(Self.etagBackend(version: version), cache: ResponseCache())
    var firstRun: [APIResponse<User>.Source] = []
    for try await delivery in client.cachedThenFresh(GetUser(id: 1)) { firstRun.append(delivery.source) }
    #expect(firstRun == [.network])
    version.increment()
    var deliveries: [APIResponse<User>] = []
    for try await delivery in client.cachedThenFresh(GetUser(id: 1)) { deliveries.append(delivery) }
    #expect(deliveries.map(\.source) == [.cache, .network])
    #expect(deliveries.map(\.value.id) == [1, 2])
  }

  @Test func cachedThenFreshWithCallbacks() async throws {
    let version = Counter()
    version.increment()
    let client = makeClient(Self.etagBackend(version: version), cache: ResponseCache())
    _ = try await client.send(GetUser(id: 1))
    let queue = DispatchQueue(label: "test.callbacks")
    let received = Counter()
    let sources = SourceLog()
    let handle = client.sendCachedThenFresh(GetUser(id: 1), queue: queue) { result in
      received.increment()
      if case .success(let r) = result { sources.append(r.source) }
    }
    await handle.wait()
    queue.sync {}
    #expect(received.count == 2)
    #expect(sources.all == [.cache, .revalidated])
  }

  @Test func nonGetAndIgnoreCacheAreNeverCached() async throws {
    let cache = ResponseCache()
    let client = makeClient(
      StubTransport(statusCode: 200, headers: ["ETag": "\"e\""], body: #"{"id":1,"name":"A"}"#), cache: cache)
    _ = try await client.send(Endpoint<User>(.post, "/users/1"))
    _ = try await client.send(Endpoint<User>(.get, "/users/1", cachePolicy: .ignoreCache))
    #expect(cache.count == 0)
    _ = try await client.send(GetUser(id: 1))
    #expect(cache.count == 1)
  }

  @Test func capacityEvictsLeastRecentlyUsed() {
    let cache = ResponseCache(capacity: 2)
    let entry = CachedResponse(statusCode: 200, headers: ["ETag": "\"1\""], body: Data())
    cache.store(entry, for: "a")
    cache.store(entry, for: "b")
    _ = cache.lookup("a")
    cache.store(entry, for: "c")
    #expect(cache.lookup("b") == nil)
    #expect(cache.lookup("a") != nil)
    #expect(cache.lookup("c") != nil)
  }
}

final class SourceLog: Sendable {
  private let items = Mutex<[APIResponse<User>.Source]>([])
  func append(_ s: APIResponse<User>.Source) { items.withLock { $0.append(s) } }
  var all: [APIResponse<User>.Source] { items.withLock { $0 } }
}
