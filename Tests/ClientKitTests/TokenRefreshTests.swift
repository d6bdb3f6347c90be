import ClientKit
import Foundation
import HTTPCore
import Synchronization
import Testing

/// One refresh shared by concurrent 401s, one retry each, no retry or loop after a failed refresh.
@Suite("Token refresh: one refresh for concurrent 401s")
struct TokenRefreshTests {
  struct GetMe: Request {
    typealias Response = User
    var path: String { "/me" }
  }

  struct RefreshToken: Request {
    typealias Response = Token
    var method: HTTPMethod { .post }
    var path: String { "/oauth/token" }
    var envelope: (any ResponseEnvelope)? { NoEnvelope() }
  }

  struct Token: Decodable, Sendable {
    var access_token: String
  }

  enum Variant: String, CaseIterable, Sendable {
    case success, badRequest, unauthorized
  }

  /// The fake backend of these tests: `/me` needs `Bearer new`; `/oauth/token` answers per variant.
  static func backend(_ variant: Variant, meCalls: Counter, refreshCalls: Counter) -> StubTransport {
    StubTransport { request throws(APIError) in
      if request.url.path.hasSuffix("/oauth/token") {
        refreshCalls.increment()
        try? await Task.sleep(for: .milliseconds(50))
        switch variant {
        case .success: return reply(200, #"{"access_token":"new","refresh_token":"r2"}"#)
        case .badRequest: return reply(400, #"{"error":"invalid_grant"}"#)
        case .unauthorized: return reply(401, #"{"status":"NG","error":{"code":"E_REFRESH"}}"#)
        }
      }
      meCalls.increment()
      if request.headers["Authorization"] == "Bearer new" {
        return reply(200, #"{"status":"OK","result":{"id":1,"name":"Me"}}"#)
      }
      return reply(
        401, #"{"status":"NG","error":{"code":"E_TOKEN_EXPIRED"}}"#,
        headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#])
    }
  }

  /// A client whose refresh goes through the same client, as apps do.
  static func client(_ transport: StubTransport) -> (APIClient, BearerTokenAuthenticator) {
    let box = Mutex<APIClient?>(nil)
    let authenticator = BearerTokenAuthenticator(token: "old") { _ in
      guard let client = box.withLock({ $0 }) else { throw RefreshFailure(reason: "no client") }
      return try await client.send(RefreshToken()).access_token
    }
    let client = makeClient(
      transport, envelope: StatusResultEnvelope(), authentication: .bearer(authenticator),
      retryPolicy: .default)
    box.withLock { $0 = client }
    return (client, authenticator)
  }

  static func fiveConcurrent(_ client: APIClient) async -> [Result<User, APIError>] {
    await withTaskGroup(of: Result<User, APIError>.self) { group in
      for _ in 0..<5 {
        group.addTask {
          do throws(APIError) {
            return .success(try await client.send(GetMe()))
          } catch {
            return .failure(error)
          }
        }
      }
      var results: [Result<User, APIError>] = []
      for await r in group { results.append(r) }
      return results
    }
  }

  @Test func variantA_oneRefreshThenOneRetryEach() async {
    let me = Counter()
    let refreshes = Counter()
    let (client, authenticator) = Self.client(Self.backend(.success, meCalls: me, refreshCalls: refreshes))
    let results = await Self.fiveConcurrent(client)
    #expect(results.allSatisfy { (try? $0.get())?.name == "Me" })
    #expect(refreshes.count == 1)
    #expect(authenticator.refreshCount == 1)
    #expect(me.count == 10)
    #expect(authenticator.token == "new")
  }

  @Test(arguments: [Variant.badRequest, .unauthorized])
  func failedRefreshFailsEveryWaiterOnceWithoutRetry(variant: Variant) async throws {
    let me = Counter()
    let refreshes = Counter()
    let (client, authenticator) = Self.client(Self.backend(variant, meCalls: me, refreshCalls: refreshes))
    let results = await Self.fiveConcurrent(client)
    #expect(refreshes.count == 1)
    #expect(me.count == 5)
    for result in results {
      guard case .failure(let error) = result, case .refreshFailed(let response, _) = error else {
        Issue.record("expected .refreshFailed, got \(result)")
        continue
      }
      #expect(error.isUnauthorized)
      #expect(response.statusCode == 401)
      #expect(response.header("www-authenticate")?.contains("invalid_token") == true)
      #expect(String(decoding: response.body, as: UTF8.self).contains("E_TOKEN_EXPIRED"))
    }
    // A late 401 for the same token fails at once instead of refreshing again.
    _ = await apiError { () async throws(APIError) in try await client.send(GetMe()) }
    #expect(refreshes.count == 1)
    #expect(authenticator.refreshCount == 1)
    // A new login clears the failure.
    authenticator.setToken("new")
    #expect(try await client.send(GetMe()).id == 1)
  }

  @Test func staggered401sAfterASuccessfulRefreshJustRetry() async throws {
    let me = Counter()
    let refreshes = Counter()
    let (client, authenticator) = Self.client(Self.backend(.success, meCalls: me, refreshCalls: refreshes))
    #expect(try await client.send(GetMe()).id == 1)
    // A request that was built with the old token and rejected later must not refresh again.
    let token = try await authenticator.token(replacing: "old")
    #expect(token == "new")
    #expect(refreshes.count == 1)
  }

  @Test func noRefreshClosureReports401AsIs() async {
    let stub = StubTransport { _ throws(APIError) in reply(401) }
    let client = makeClient(stub, authentication: .bearer(BearerTokenAuthenticator(token: "x")))
    let error = await apiError { () async throws(APIError) in try await client.send(GetMe()) }
    #expect(error?.isUnauthorized == true)
    // As is: the 401 itself, not a "refresh failed" for a refresh that was never possible.
    #expect(error?.caseName == "unacceptableStatus")
    #expect(error?.statusCode == 401)
    #expect(stub.requests.count == 1)
  }

  @Test func secondConsecutive401IsNotRefreshedAgain() async {
    // The refresh "succeeds" but the server keeps rejecting: exactly one retry, no loop.
    let stub = StubTransport { request throws(APIError) in
      request.url.path.hasSuffix("/oauth/token") ? reply(200, #"{"access_token":"new"}"#) : reply(401)
    }
    let (client, authenticator) = Self.client(stub)
    let error = await apiError { () async throws(APIError) in try await client.send(GetMe()) }
    #expect(error?.isUnauthorized == true)
    #expect(stub.requests.filter { $0.url.path.hasSuffix("/me") }.count == 2)
    #expect(authenticator.refreshCount == 1)
  }
}
