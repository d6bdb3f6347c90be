import ClientKit
import Foundation
import HTTPCore
import Synchronization
import Testing

/// Authentication as an interceptor (issue 19): the 401 refresh lives in ``AuthenticationInterceptor``
/// (adapter + retrier), custom ``RequestInterceptor``s plug into the same chain.
@Suite("Interceptors: authentication and the retry chain")
struct InterceptorTests {
  static let unauthorized = APIError.unacceptableStatus(
    ResponseInfo(
      request: RequestInfo(method: .get, url: baseURL, headers: ["X-Auth-Token": "old"]), statusCode: 401,
      headers: [:], body: Data()),
    application: nil)

  @Test("the interceptor adapts only requests that require authentication")
  func adaptsOnlyAuthenticatedRequests() async throws {
    let interceptor = AuthenticationInterceptor(
      .token(BearerTokenAuthenticator(token: "abc"), .authorization(prefix: "Token")))
    let request = TransportRequest(method: .get, url: baseURL)
    let adapted = try await interceptor.adapt(request, context: AdaptContext(requiresAuthentication: true))
    #expect(adapted.headers["Authorization"] == "Token abc")
    let anonymous = try await interceptor.adapt(request, context: AdaptContext(requiresAuthentication: false))
    #expect(anonymous.headers.contains("Authorization") == false)
  }

  @Test("as a retrier: refresh once per call and retry at once; a failed refresh is one typed error")
  func retrierDecisions() async {
    let refreshes = Counter()
    let good = AuthenticationInterceptor(
      .token(
        BearerTokenAuthenticator(token: "old") { rejected in
          refreshes.increment()
          #expect(rejected == "old")
          return "new"
        }, .header("X-Auth-Token")))
    #expect(
      await good.retry(Self.unauthorized, context: RetryContext(isIdempotent: false)) == .retry(after: .zero))
    #expect(refreshes.count == 1)
    // The one retry of this call is used: a second 401 is reported as it is.
    #expect(
      await good.retry(Self.unauthorized, context: RetryContext(isIdempotent: false, retryCount: 1))
        == .doNotRetry)
    // Not a 401, or a request that does not require authentication: not the interceptor's business.
    let reset = APIError.connectionReset(RequestInfo(method: .get, url: baseURL))
    #expect(await good.retry(reset, context: RetryContext(isIdempotent: true)) == .doNotRetry)
    #expect(
      await good.retry(
        Self.unauthorized, context: RetryContext(isIdempotent: true, requiresAuthentication: false))
        == .doNotRetry)
    #expect(refreshes.count == 1)

    let bad = AuthenticationInterceptor(
      .bearer(BearerTokenAuthenticator(token: "old") { _ in throw RefreshFailure(reason: "invalid_grant") }))
    let rejectedBearer = APIError.unacceptableStatus(
      ResponseInfo(
        request: RequestInfo(method: .get, url: baseURL, headers: ["Authorization": "Bearer old"]),
        statusCode: 401, headers: [:], body: Data()),
      application: nil)
    guard
      case .doNotRetryWithError(.refreshFailed(let response, let reason)) = await bad.retry(
        rejectedBearer, context: RetryContext(isIdempotent: true))
    else {
      Issue.record("expected .doNotRetryWithError(.refreshFailed)")
      return
    }
    #expect(response.statusCode == 401)
    #expect(reason == "invalid_grant")
  }

  @Test("the token a request carried is read back per scheme")
  func tokenReadBack() {
    let headers: HTTPHeaders = ["Authorization": "bearer abc", "X-Auth-Token": "xyz"]
    #expect(TokenScheme.bearer.token(in: headers) == "abc")
    #expect(TokenScheme.header("x-auth-token").token(in: headers) == "xyz")
    #expect(TokenScheme.authorization(prefix: "Token").token(in: headers) == nil)
    #expect(TokenScheme.authorization(prefix: "Token").token(in: ["Authorization": "Token t1"]) == "t1")
    for scheme in [TokenScheme.bearer, .header("X-Auth-Token"), .authorization(prefix: "JWT")] {
      var h = HTTPHeaders()
      h.add(name: scheme.headerName, value: scheme.value(for: "tok"))
      #expect(scheme.token(in: h) == "tok")
    }
  }

  /// Adds `X-Attempt` and retries a 503 once, ending a second one with its own error.
  struct MaintenanceInterceptor: RequestInterceptor {
    let adapted = Counter()
    func adapt(_ request: TransportRequest) async throws -> TransportRequest {
      var r = request
      r.headers.replaceOrAdd(name: "X-Attempt", value: String(adapted.increment()))
      return r
    }
    func retry(_ error: APIError, context: RetryContext) async -> RetryDecision {
      guard error.statusCode == 503 else { return .doNotRetry }
      return context.retryCount == 0
        ? .retry(after: .milliseconds(5)) : .doNotRetryWithError(.invalidRequest("down for maintenance"))
    }
  }

  @Test("a custom interceptor adapts every attempt and is asked before the retry policy")
  func customInterceptorInChain() async {
    let stub = StubTransport { _ throws(APIError) in reply(503) }
    let sleeps = SleepRecorder()
    let interceptor = MaintenanceInterceptor()
    let client = APIClient(
      baseURL: baseURL, interceptors: [interceptor], retryPolicy: .never, transport: stub,
      sleep: { try await sleeps.sleep($0) })
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    #expect(error?.caseName == "invalidRequest")
    #expect(stub.requests.map { $0.headers["X-Attempt"] } == ["1", "2"])
    #expect(sleeps.recorded == [.milliseconds(5)])
  }

  @Test("a refresh retry does not use up the retry policy's retries, and works with retries off")
  func refreshIndependentOfRetryPolicy() async throws {
    let authenticator = BearerTokenAuthenticator(token: "old") { _ in "new" }
    let calls = Counter()
    let stub = StubTransport { request throws(APIError) in
      let n = calls.increment()
      if request.headers["Authorization"] != "Bearer new" { return reply(401) }
      return n == 2 ? reply(503) : reply(200, #"{"id":1,"name":"A"}"#)
    }
    // 401 → refresh → 503 → policy retry → 200: three attempts with one policy retry.
    let client = makeClient(
      stub, authentication: .bearer(authenticator), retryPolicy: RetryPolicy(maxRetries: 1))
    #expect(try await client.send(GetUser(id: 1)).id == 1)
    #expect(calls.count == 3)
    // With retries off the refresh still happens.
    let never = makeClient(
      StubTransport { request throws(APIError) in
        request.headers["Authorization"] == "Bearer newer" ? reply(200, #"{"id":2,"name":"B"}"#) : reply(401)
      }, authentication: .bearer(BearerTokenAuthenticator(token: "old") { _ in "newer" }), retryPolicy: .never
    )
    #expect(try await never.send(GetUser(id: 2)).id == 2)
  }

  static let t0 = Date(timeIntervalSince1970: 1_000_000)

  @Test("a credential about to expire is refreshed before sending, once for concurrent requests")
  func proactiveRefresh() async throws {
    let refreshes = Counter()
    let authenticator = BearerTokenAuthenticator(
      credential: TokenCredential(token: "old", expiresAt: Self.t0.addingTimeInterval(30)),
      refreshWindow: .seconds(60), now: { Self.t0 }
    ) { rejected in
      refreshes.increment()
      #expect(rejected == "old")
      try await Task.sleep(for: .milliseconds(50))
      return TokenCredential(token: "new", expiresIn: 3600, issuedAt: Self.t0)
    }
    #expect(authenticator.requiresRefresh)
    let stub = StubTransport { _ throws(APIError) in reply(200, #"{"id":1,"name":"A"}"#) }
    let client = makeClient(stub, authentication: .bearer(authenticator))
    await withTaskGroup(of: Void.self) { group in
      for _ in 0..<5 { group.addTask { _ = try? await client.send(GetUser(id: 1)) } }
    }
    #expect(refreshes.count == 1)
    #expect(stub.requests.count == 5)
    #expect(stub.requests.allSatisfy { $0.headers["Authorization"] == "Bearer new" })
    #expect(authenticator.expiresAt == Self.t0.addingTimeInterval(3600))
    #expect(authenticator.requiresRefresh == false)
  }

  @Test("a failed proactive refresh sends the old token; its 401 then fails at once as refreshFailed")
  func failedProactiveRefresh() async {
    let refreshes = Counter()
    let authenticator = BearerTokenAuthenticator(
      credential: TokenCredential(token: "old", expiresAt: Self.t0), now: { Self.t0 }
    ) { _ in
      refreshes.increment()
      throw RefreshFailure(reason: "invalid_grant")
    }
    let stub = StubTransport { _ throws(APIError) in reply(401) }
    let client = makeClient(stub, authentication: .bearer(authenticator))
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    guard case .refreshFailed(let response, let reason)? = error else {
      Issue.record("expected .refreshFailed, got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 401)
    #expect(reason == "invalid_grant")
    #expect(refreshes.count == 1)
    #expect(stub.requests.map { $0.headers["Authorization"] } == ["Bearer old"])
  }

  @Test("expires_in is range-checked; a credential without expiry never refreshes before a 401")
  func credentialExpiry() {
    #expect(TokenCredential(token: "t", expiresIn: 60, issuedAt: Self.t0).expiresAt == Self.t0 + 60)
    #expect(TokenCredential(token: "t", expiresIn: -5).expiresAt == nil)
    #expect(TokenCredential(token: "t", expiresIn: .infinity).expiresAt == nil)
    #expect(TokenCredential(token: "t", expiresIn: .nan).expiresAt == nil)
    #expect(TokenCredential(token: "t", expiresIn: 1e300).expiresAt == nil)
    let plain = BearerTokenAuthenticator(token: "t") { _ in "u" }
    #expect(plain.requiresRefresh == false)
    let noRefresh = BearerTokenAuthenticator(
      credential: TokenCredential(token: "t", expiresAt: .distantPast), refresh: nil)
    #expect(noRefresh.requiresRefresh == false)
  }
}
