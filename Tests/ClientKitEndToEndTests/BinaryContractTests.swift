import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import Testing

/// The main outcomes against the shipped `mockserver` binary serving the bundled `Fixtures/` on port 0:
/// both envelopes OK and NG, 401 without credentials, 429 with Retry-After, 500 and 503, a large body and
/// a connection reset. Over both transports.
@Suite("Contract: the mockserver binary with the bundled fixtures")
struct BinaryContractTests {
  /// Launches the binary (built by `swift build --build-tests`) with the bundled fixtures.
  func launch() throws -> MockServerProcess {
    try MockServerProcess.launch(arguments: ["--fixtures", bundledFixtures, "--quiet"])
  }

  @Test("envelopes: OK and NG of status/result and code/data", arguments: TransportKind.allCases)
  func envelopes(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    let friends = try await friendsClient(server.baseURL, kind).send(friendsList())
    #expect(friends.map(\.name) == ["Aiko", "Bruno"])

    let ng = await apiError { () async throws(APIError) in
      try await friendsClient(server.baseURL, kind).send(friendsList(page: 1000))
    }
    guard case .application(let failure, let response)? = ng else {
      Issue.record("expected .application, got \(String(describing: ng))")
      return
    }
    #expect(response.statusCode == 200)
    #expect(failure.message == "page out of range")

    let user = try await usersClient(server.baseURL, kind).send(Endpoint<User>(.get, "/api/v2/users/42"))
    #expect(user.email == "aiko@example.com")
    let missing = await apiError { () async throws(APIError) in
      try await usersClient(server.baseURL, kind).send(Endpoint<User>(.get, "/api/v2/users/0"))
    }
    guard case .unacceptableStatus(let notFound, let application?)? = missing else {
      Issue.record("expected .unacceptableStatus(404), got \(String(describing: missing))")
      return
    }
    #expect(notFound.statusCode == 404)
    #expect(application.code == "40400")

    let receipt = try await friendsClient(server.baseURL, kind).send(
      Endpoint<FriendRequestReceipt>(
        .post, "/api/v1/friends/requests", body: .json(FriendRequestBody(userId: 7))))
    #expect(receipt.requestId == "fr-7781")
  }

  @Test("401 without a token, and with wrong Basic credentials", arguments: TransportKind.allCases)
  func unauthorized(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    let bearer = await apiError { () async throws(APIError) in
      try await friendsClient(server.baseURL, kind, token: nil).send(friendsList())
    }
    guard case .unacceptableStatus(let response, let application?)? = bearer else {
      Issue.record("expected .unacceptableStatus(401), got \(String(describing: bearer))")
      return
    }
    #expect(response.statusCode == 401)
    #expect(application.message == "authentication required")
    #expect(bearer?.isUnauthorized == true)

    let basic = await apiError { () async throws(APIError) in
      try await usersClient(server.baseURL, kind, password: "nope").send(
        Endpoint<User>(.get, "/api/v2/users/42"))
    }
    #expect(basic?.kind == .unacceptableStatus)
    #expect(basic?.isUnauthorized == true)
    #expect(basic?.applicationError?.code == "40100")
  }

  @Test("429 with Retry-After: 30, and 400 too frequent", arguments: TransportKind.allCases)
  func rateLimited(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    let client = friendsClient(server.baseURL, kind)
    let limited = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<[Friend]>(.get, "/api/v1/friends/suggestions"))
    }
    guard case .unacceptableStatus(let response, _)? = limited else {
      Issue.record("expected .unacceptableStatus(429), got \(String(describing: limited))")
      return
    }
    #expect(response.statusCode == 429)
    #expect(limited?.isRateLimited == true)
    #expect(limited?.retryAfter == .seconds(30))

    let burst = await apiError { () async throws(APIError) in
      try await client.send(
        Endpoint<FriendRequestReceipt>(
          .post, "/api/v1/friends/requests", headers: ["X-Demo-Rate": "burst"],
          body: .json(FriendRequestBody(userId: 7))))
    }
    #expect(burst?.statusCode == 400)
    #expect(burst?.applicationError?.message == "too frequent")
  }

  @Test("500 and 503 with Retry-After: 120", arguments: TransportKind.allCases)
  func serverErrors(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())
    let serverError = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<EmptyResponse>(.get, "/api/v1/reports/daily"))
    }
    guard case .unacceptableStatus(let response, let application?)? = serverError else {
      Issue.record("expected .unacceptableStatus(500), got \(String(describing: serverError))")
      return
    }
    #expect(response.statusCode == 500)
    #expect(application.message == "internal error, incident 5f2c")

    let maintenance = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<EmptyResponse>(.get, "/api/v1/payments/history"))
    }
    #expect(maintenance?.kind == .unacceptableStatus)
    #expect(maintenance?.statusCode == 503)
    #expect(maintenance?.isServerError == true)
    #expect(maintenance?.retryAfter == .seconds(120))
  }

  @Test(
    "the large catalog arrives whole; the flaky endpoint resets at once", arguments: TransportKind.allCases)
  func largeBodyAndReset(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    let client = makeClient(server.baseURL, kind.make())
    let progress = Recorder<DownloadProgress>()
    let catalog = try await client.response(
      Endpoint<Data>(.get, "/api/v1/catalog"), progress: { progress.append($0) })
    let expected = try Data(
      contentsOf: repositoryRoot.appendingPathComponent("Fixtures/__files/catalog.json"))
    #expect(catalog.value == expected)
    #expect(progress.all.count >= 2)

    // At once, not at the client's 5 s deadline: a reset noticed only then would be `.timedOut`.
    let reset = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<EmptyResponse>(.get, "/api/v1/flaky"))
    }
    guard case .connectionReset? = reset else {
      Issue.record("expected .connectionReset, got \(String(describing: reset))")
      return
    }
  }

  @Test("a 1 s deadline against the bundled 25 s timeline", arguments: TransportKind.allCases)
  func timeoutAgainstSlowTimeline(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(), timeout: .seconds(1))
    let (error, elapsed) = await timedError { () async throws(APIError) in
      try await client.send(Endpoint<[Item]>(.get, "/api/v1/timeline"))
    }
    guard case .timedOut(let limit, _)? = error else {
      Issue.record("expected .timedOut, got \(String(describing: error))")
      return
    }
    #expect(limit == .seconds(1))
    // At the deadline, long before the 25 s timeline would answer.
    #expect(elapsed >= 0.9 && elapsed < 10, "elapsed \(elapsed) s")
  }
}
