import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import Synchronization
import Testing

/// Bearer and Basic credentials (brief §5), 401 without credentials, and 401 → token refresh → success,
/// coalesced for concurrent calls, with the counts read from the server journal.
@Suite("Contract: authentication and token refresh")
struct AuthContractTests {
  @Test(
    "401 without a bearer token carries the NG envelope and WWW-Authenticate",
    arguments: TransportKind.allCases)
  func unauthorizedWithoutToken(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let error = await apiError { () async throws(APIError) in
      try await friendsClient(server.baseURL, kind, token: nil).send(friendsList())
    }
    guard case .unacceptableStatus(let response, let application?)? = error else {
      Issue.record("expected .unacceptableStatus(401), got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 401)
    #expect(response.header("www-authenticate") == #"Bearer realm="example""#)
    #expect(application.message == "authentication required")
    #expect(error?.isUnauthorized == true)
    try server.verify(count: 1, .get("/api/v1/friends").header("Authorization", matcher: #"{"absent":true}"#))
  }

  @Test("the bearer token is sent on every request", arguments: TransportKind.allCases)
  func bearerTokenSent(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let client = friendsClient(server.baseURL, kind)
    _ = try await client.send(friendsList())
    let receipt = try await client.send(
      Endpoint<FriendRequestReceipt>(
        .post, "/api/v1/friends/requests", body: .json(FriendRequestBody(userId: 102))))
    #expect(receipt == FriendRequestReceipt(requestId: "fr-7781", state: "pending"))
    #expect(server.requests.count == 2)
    #expect(server.requests.allSatisfy { $0.request.headers["Authorization"] == "Bearer demo-token" })
  }

  @Test(
    "Basic credentials: right ones pass, wrong ones get the code envelope's 401",
    arguments: TransportKind.allCases)
  func basicCredentials(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let user = try await usersClient(server.baseURL, kind).send(Endpoint<User>(.get, "/api/v2/users/42"))
    #expect(user.id == 42)
    let error = await apiError { () async throws(APIError) in
      try await usersClient(server.baseURL, kind, password: "wrong").send(
        Endpoint<User>(.get, "/api/v2/users/42"))
    }
    guard case .unacceptableStatus(let response, let application?)? = error else {
      Issue.record("expected .unacceptableStatus(401), got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 401)
    #expect(application.code == "40100")
    #expect(error?.isUnauthorized == true)
    try server.verify(
      count: 1, .get("/api/v2/users/42").header("Authorization", "Basic YWRtaW46czNjcmV0"))
  }

  // MARK: One token refresh shared by concurrent 401s

  enum RefreshVariant: String, CaseIterable, Sendable, CustomTestStringConvertible {
    /// The refresh answers 200 with a new token after 300 ms.
    case a
    /// The refresh answers 400 invalid_grant.
    case b
    /// The refresh endpoint itself answers 401.
    case c
    var testDescription: String { "variant " + rawValue.uppercased() }
  }

  struct Token: Decodable, Sendable {
    var access_token: String
  }

  struct Me: Decodable, Sendable, Equatable {
    var id: Int
  }

  /// Stubs of the refresh tests: `/me` rejects `Bearer old` and accepts `Bearer new`; `/oauth/token` per variant.
  func installRefreshStubs(_ server: TestMockServer, variant: RefreshVariant) throws {
    try server.stub(
      .get("/me").header("Authorization", "Bearer old").willReturn(
        status: 401, json: #"{"status":"NG","error":{"code":"E_TOKEN_EXPIRED"}}"#,
        headers: [("WWW-Authenticate", #"Bearer error="invalid_token""#)]))
    try server.stub(
      .get("/me").header("Authorization", "Bearer new").willReturn(
        json: #"{"status":"OK","result":{"id":1}}"#))
    switch variant {
    case .a:
      try server.stub(
        .post("/oauth/token").willReturn(
          json: #"{"access_token":"new","refresh_token":"r2"}"#, delayMilliseconds: 300))
    case .b:
      try server.stub(.post("/oauth/token").willReturn(status: 400, json: #"{"error":"invalid_grant"}"#))
    case .c:
      try server.stub(
        .post("/oauth/token").willReturn(
          status: 401, json: #"{"error":"invalid_client"}"#, headers: [("WWW-Authenticate", "Bearer")]))
    }
  }

  @Test(
    "five concurrent 401s refresh exactly once", arguments: TransportKind.allCases,
    RefreshVariant.allCases)
  func concurrentUnauthorizedRefreshOnce(kind: TransportKind, variant: RefreshVariant) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try installRefreshStubs(server, variant: variant)

    // The refresh goes through the same client with a request that *requires* authentication, so variant
    // C also proves the refresh call is never fed back into the 401 logic (no loop).
    let holder = Mutex<APIClient?>(nil)
    let authenticator = BearerTokenAuthenticator(token: "old") { _ in
      guard let client = holder.withLock({ $0 }) else { throw RefreshFailure(reason: "no client") }
      let token = try await client.send(
        Endpoint<Token>(
          .post, "/oauth/token", body: .form([URLQueryItem(name: "refresh_token", value: "r1")]),
          envelope: NoEnvelope()))
      return token.access_token
    }
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(), authentication: .bearer(authenticator))
    holder.withLock { $0 = client }

    let results = await withTaskGroup(of: Result<Me, APIError>.self) { group in
      for _ in 0..<5 {
        group.addTask {
          do throws(APIError) {
            return .success(try await client.send(Endpoint<Me>(.get, "/me")))
          } catch {
            return .failure(error)
          }
        }
      }
      var all: [Result<Me, APIError>] = []
      for await result in group { all.append(result) }
      return all
    }

    try server.verify(count: 1, .post("/oauth/token"))
    #expect(authenticator.refreshCount == 1)
    switch variant {
    case .a:
      let values = results.compactMap { try? $0.get() }
      #expect(values == Array(repeating: Me(id: 1), count: 5))
      try server.verify(count: 10, .get("/me"))
      try server.verify(count: 5, .get("/me").header("Authorization", "Bearer old"))
      try server.verify(count: 5, .get("/me").header("Authorization", "Bearer new"))
      #expect(authenticator.token == "new")
    case .b, .c:
      try server.verify(count: 5, .get("/me"))
      try server.verify(count: 0, .get("/me").header("Authorization", "Bearer new"))
      #expect(results.count == 5)
      for result in results {
        guard case .failure(let error) = result, case .refreshFailed(let response, let reason) = error else {
          Issue.record("expected .refreshFailed, got \(result)")
          continue
        }
        #expect(response.statusCode == 401)
        #expect(response.bodyExcerpt.contains("E_TOKEN_EXPIRED"))
        #expect(reason.contains(variant == .b ? "400" : "401"))
        #expect(error.isUnauthorized)
      }
      // The failure is remembered: a later call with the rejected token does not refresh again.
      let later = await apiError { () async throws(APIError) in
        try await client.send(Endpoint<Me>(.get, "/me"))
      }
      #expect(later?.kind == .refreshFailed)
      try server.verify(count: 1, .post("/oauth/token"))
      #expect(authenticator.refreshCount == 1)
    }
  }

  @Test("401 → refresh → success for a single call", arguments: TransportKind.allCases)
  func singleRefreshThenSuccess(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try installRefreshStubs(server, variant: .a)
    let rejected = Recorder<String?>()
    let authenticator = BearerTokenAuthenticator(token: "old") { token in
      rejected.append(token)
      return "new"
    }
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(), authentication: .bearer(authenticator))
    let response = try await client.response(Endpoint<Me>(.get, "/me"))
    #expect(response.value == Me(id: 1))
    #expect(response.attempts == 2)
    #expect(rejected.all == ["old"])
    #expect(server.requests.map { $0.request.headers["Authorization"] } == ["Bearer old", "Bearer new"])
    #expect(server.requests.map(\.responseStatus) == [401, 200])
  }

  enum SchemeCase: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case bearer, namedHeader, customPrefix
    var testDescription: String { rawValue }
    var scheme: TokenScheme {
      switch self {
      case .bearer: return .bearer
      case .namedHeader: return .header("X-Auth-Token")
      case .customPrefix: return .authorization(prefix: "Token")
      }
    }
  }

  @Test(
    "token header schemes: the token in the scheme's header, and a 401 refreshes through the interceptor",
    arguments: TransportKind.allCases, SchemeCase.allCases)
  func tokenSchemesWithRefresh(kind: TransportKind, scheme: SchemeCase) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    let name = scheme.scheme.headerName
    try server.stub(
      .get("/me").header(name, scheme.scheme.value(for: "old")).willReturn(
        status: 401, json: #"{"status":"NG","error":{"code":"E_TOKEN_EXPIRED"}}"#))
    try server.stub(
      .get("/me").header(name, scheme.scheme.value(for: "new")).willReturn(
        json: #"{"status":"OK","result":{"id":1}}"#))
    let authenticator = BearerTokenAuthenticator(token: "old") { _ in "new" }
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(),
      authentication: .token(authenticator, scheme.scheme))
    let response = try await client.response(Endpoint<Me>(.get, "/me"))
    #expect(response.value == Me(id: 1))
    #expect(response.attempts == 2)
    #expect(authenticator.refreshCount == 1)
    let sent = server.requests.map { $0.request.headers[name] }
    #expect(sent == [scheme.scheme.value(for: "old"), scheme.scheme.value(for: "new")])
    if scheme == .namedHeader {
      #expect(server.requests.allSatisfy { $0.request.headers["Authorization"] == nil })
    }
    #expect(sent.last == ["Bearer new", "new", "Token new"][SchemeCase.allCases.firstIndex(of: scheme) ?? 0])
  }
}
