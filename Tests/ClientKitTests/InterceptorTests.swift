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
}
