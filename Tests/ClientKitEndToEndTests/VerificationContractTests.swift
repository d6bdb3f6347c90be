import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import Testing

/// What the client actually sent (brief §2, "Verification"), read back from the server journal: base URL
/// and endpoint path, default and per-call query items, default and per-call headers, JSON and form
/// bodies, the bearer token and an HMAC signature the server side can recompute. Over both transports.
@Suite("Contract: what the client sent, through the journal")
struct VerificationContractTests {
  @Test(
    "default query items come first, then the call's; headers merge, the call's win",
    arguments: TransportKind.allCases)
  func defaultsAndPerCallParameters(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/api/v1/search").willReturn(json: #"{"status":"OK","result":[]}"#))
    let client = makeClient(
      server.baseURL.appendingPathComponent("api/v1"), kind.make(), envelope: StatusResultEnvelope(),
      defaultHeaders: ["Accept": "application/json", "X-Client": "ios", "Accept-Language": "en"],
      defaultQueryItems: {
        [
          URLQueryItem(name: "app_version", value: "2.4.1"), URLQueryItem(name: "build", value: "311"),
          URLQueryItem(name: "ts", value: "1700000000"),
        ]
      },
      authentication: .bearer(BearerTokenAuthenticator(token: "demo-token")))
    let found = try await client.send(
      Endpoint<[Item]>(
        .get, "search", query: [URLQueryItem(name: "q", value: "café & co")],
        headers: ["Accept-Language": "ja", "X-Trace": "t-1"]))
    #expect(found.isEmpty)

    try server.verify(
      count: 1,
      .get("/api/v1/search").query("app_version", "2.4.1").query("build", "311").query("ts", "1700000000")
        .query("q", "café & co").header("Accept-Language", "ja").header("X-Client", "ios")
        .header("Authorization", "Bearer demo-token").header("X-Trace", "t-1"))
    let entry = try #require(server.requests.first)
    #expect(
      entry.request.head.target
        == "/api/v1/search?app_version=2.4.1&build=311&ts=1700000000&q=caf%C3%A9%20%26%20co")
    #expect(entry.request.headers.values("Accept-Language") == ["ja"])
  }

  @Test("the timestamp default is evaluated per call", arguments: TransportKind.allCases)
  func defaultQueryEvaluatedPerCall(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/ping").willReturn(status: 204))
    let counter = Recorder<Int>()
    let client = makeClient(
      server.baseURL, kind.make(),
      defaultQueryItems: {
        counter.append(1)
        return [URLQueryItem(name: "n", value: "\(counter.all.count)")]
      })
    for _ in 0..<3 { _ = try await client.send(Endpoint<EmptyResponse>(.get, "/ping")) }
    #expect(server.requests.map(\.request.head.target) == ["/ping?n=1", "/ping?n=2", "/ping?n=3"])
  }

  @Test("JSON and form bodies arrive as encoded, with their Content-Type", arguments: TransportKind.allCases)
  func bodies(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let client = friendsClient(server.baseURL, kind)
    _ = try await client.send(
      Endpoint<FriendRequestReceipt>(
        .post, "/api/v1/friends/requests", body: .json(FriendRequestBody(userId: 102))))
    try server.verify(
      count: 1,
      .post("/api/v1/friends/requests").header("Content-Type", "application/json")
        .body(matcher: #"{"equalToJson":{"userId":102}}"#))

    try server.stub(.post("/login").willReturn(status: 204))
    _ = try await makeClient(server.baseURL, kind.make()).send(
      Endpoint<EmptyResponse>(
        .post, "/login",
        body: .form([
          URLQueryItem(name: "user", value: "aiko tanaka"), URLQueryItem(name: "pw", value: "a&b=c"),
        ])))
    let login = try #require(server.requests.last)
    #expect(login.request.headers["Content-Type"] == "application/x-www-form-urlencoded")
    #expect(String(decoding: login.request.body, as: UTF8.self) == "user=aiko+tanaka&pw=a%26b%3Dc")
  }

  @Test(
    "the HMAC signature recomputed from what the server received matches the header",
    arguments: TransportKind.allCases)
  func signatureMatchesWhatWasSent(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.post("/api/v1/orders").willReturn(status: 201, json: #"{"id":42}"#))
    let signer = SigningAdapter(secret: "s3cr3t", now: { Date(timeIntervalSince1970: 1_700_000_000) })
    let client = makeClient(
      server.baseURL, kind.make(),
      defaultQueryItems: { [URLQueryItem(name: "v", value: "2"), URLQueryItem(name: "a", value: "x y")] },
      adapters: [signer])
    let created = try await client.send(
      Endpoint<Item>(
        .post, "/api/v1/orders", query: [URLQueryItem(name: "b", value: "1")], body: .json(Item(id: 1))))
    #expect(created == Item(id: 42))

    let entry = try #require(server.requests.first)
    let received = entry.request
    #expect(received.headers["X-Timestamp"] == "1700000000")
    // Rebuild the request from the bytes the server got and sign it independently.
    let url = try #require(URL(string: server.baseURL.absoluteString + received.head.target))
    let asReceived = TransportRequest(method: received.method, url: url, body: Data(received.body))
    let canonical = SigningAdapter.canonicalString(for: asReceived, timestamp: "1700000000")
    #expect(canonical.hasPrefix("POST\n/api/v1/orders\na=x%20y&b=1&v=2\n1700000000\n"))
    #expect(received.headers["X-Signature"] == signer.signature(of: canonical))
    #expect(received.headers["X-Signature"]?.count == 64)
  }

  @Test("near misses: an unmatched call is listed with what did not match", arguments: [TransportKind.socket])
  func unmatchedRequestsAreVisible(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/api/v1/me").header("Authorization", "Bearer t").willReturn(json: "{}"))
    let error = await apiError { () async throws(APIError) in
      try await makeClient(server.baseURL, kind.make()).send(Endpoint<EmptyResponse>(.get, "/api/v1/me"))
    }
    #expect(error?.isNotFound == true)
    #expect(server.unmatchedRequests.count == 1)
    #expect(server.unmatchedRequests.first?.nearMisses.isEmpty == false)
  }
}
