import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import Testing

/// ETag revalidation and "cached first, then fresh" (brief §2) against `x-conditional` stubs; over both
/// transports.
@Suite("Contract: ETag revalidation and cache")
struct CachingContractTests {
  static let profile = #"{"status":"OK","result":{"id":7}}"#

  func conditionalServer() throws -> TestMockServer {
    let server = try TestMockServer.start()
    try server.stub(
      .get("/profile").willReturn(
        responseJSON: #"""
          {"status":200,"headers":{"Content-Type":"application/json","Cache-Control":"max-age=0"},
           "body":\#(jsonLiteral(Self.profile)),"x-conditional":true}
          """#))
    return server
  }

  @Test(
    "the second call revalidates with If-None-Match and is answered from the cache on 304",
    arguments: TransportKind.allCases)
  func etagRevalidation(kind: TransportKind) async throws {
    let server = try conditionalServer()
    defer { server.stop() }
    let cache = ResponseCache()
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope(), cache: cache)
    let first = try await client.response(Endpoint<Item>(.get, "/profile"))
    #expect(first.value == Item(id: 7))
    #expect(first.source == .network)
    let etag = try #require(first.header("ETag"))
    #expect(cache.count == 1)

    let second = try await client.response(Endpoint<Item>(.get, "/profile"))
    #expect(second.value == Item(id: 7))
    #expect(second.source == .revalidated)
    #expect(second.statusCode == 200)
    #expect(second.body == Data(Self.profile.utf8))

    let sent = server.requests
    #expect(sent.count == 2)
    #expect(sent.first?.request.headers.contains("If-None-Match") == false)
    #expect(sent.last?.request.headers["If-None-Match"] == etag)
  }

  @Test("a changed resource replaces the cached one", arguments: TransportKind.allCases)
  func changedResourceIsFetched(kind: TransportKind) async throws {
    let server = try conditionalServer()
    defer { server.stop() }
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(), cache: ResponseCache())
    #expect(try await client.send(Endpoint<Item>(.get, "/profile")) == Item(id: 7))
    server.reset()
    try server.stub(
      .get("/profile").willReturn(
        responseJSON: #"{"status":200,"jsonBody":{"status":"OK","result":{"id":8}},"x-conditional":true}"#))
    let changed = try await client.response(Endpoint<Item>(.get, "/profile"))
    #expect(changed.value == Item(id: 8))
    #expect(changed.source == .network)
    #expect(server.requests.first?.request.headers.contains("If-None-Match") == true)
  }

  @Test(
    "cachedThenFresh delivers the stored value, then the revalidated one", arguments: TransportKind.allCases)
  func cachedThenFresh(kind: TransportKind) async throws {
    let server = try conditionalServer()
    defer { server.stop() }
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(), cache: ResponseCache())
    var sources: [APIResponse<Item>.Source] = []
    for try await response in client.cachedThenFresh(Endpoint<Item>(.get, "/profile")) {
      #expect(response.value == Item(id: 7))
      sources.append(response.source)
    }
    #expect(sources == [.network])
    sources = []
    for try await response in client.cachedThenFresh(Endpoint<Item>(.get, "/profile")) {
      #expect(response.value == Item(id: 7))
      sources.append(response.source)
    }
    #expect(sources == [.cache, .revalidated])
    try server.verify(count: 2, .get("/profile"))
  }
}
