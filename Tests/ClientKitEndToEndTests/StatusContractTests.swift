import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import Testing

/// Status codes with meaning (brief §3): 2xx success, 4xx/5xx typed, 400 "too frequent" and 429 with
/// `Retry-After`, 500/503, response sequences driving retries; over both transports.
@Suite("Contract: status codes, rate limiting and retries")
struct StatusContractTests {
  @Test(
    "every 2xx is a success, every other status a typed unacceptableStatus",
    arguments: TransportKind.allCases)
  func statusMapping(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    let codes = [200, 201, 202, 299, 400, 401, 403, 404, 409, 422, 429, 500, 502, 503, 504]
    for code in codes {
      try server.stub(
        .get("/status/\(code)").willReturn(status: code, json: #"{"status":"NG","message":"m\#(code)"}"#))
    }
    let client = makeClient(server.baseURL, kind.make())
    for code in codes {
      let endpoint = Endpoint<EmptyResponse>(.get, "/status/\(code)")
      if (200..<300).contains(code) {
        let response = try await client.response(endpoint)
        #expect(response.statusCode == code)
        continue
      }
      let error = await apiError { () async throws(APIError) in try await client.send(endpoint) }
      guard case .unacceptableStatus(let response, _)? = error else {
        Issue.record("\(code): expected .unacceptableStatus, got \(String(describing: error))")
        continue
      }
      #expect(response.statusCode == code)
      #expect(error?.statusCode == code)
      #expect(error?.isUnauthorized == (code == 401))
      #expect(error?.isForbidden == (code == 403))
      #expect(error?.isNotFound == (code == 404))
      #expect(error?.isRateLimited == (code == 429))
      #expect(error?.isServerError == (code >= 500))
      #expect(error?.isTransportFailure == false)
      // Without a client envelope the NG body is not interpreted.
      #expect(error?.applicationError == nil)
    }
    try server.verify(count: codes.count, .matching("GET", pathPattern: "/status/[0-9]+"))
  }

  @Test("an NG envelope on a 4xx/5xx is attached to unacceptableStatus", arguments: TransportKind.allCases)
  func envelopeOnErrorStatus(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<EmptyResponse>(.get, "/api/v1/reports/daily"))
    }
    guard case .unacceptableStatus(let response, let application?)? = error else {
      Issue.record("expected .unacceptableStatus with the NG envelope, got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 500)
    #expect(application.message == "internal error, incident 5f2c")
    #expect(error?.isServerError == true)
  }

  @Test(
    "400 'too frequent' from the bundled API is a client error with its message",
    arguments: TransportKind.allCases)
  func tooFrequent400(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let client = friendsClient(server.baseURL, kind)
    let error = await apiError { () async throws(APIError) in
      try await client.send(
        Endpoint<FriendRequestReceipt>(
          .post, "/api/v1/friends/requests", headers: ["X-Demo-Rate": "burst"],
          body: .json(FriendRequestBody(userId: 102))))
    }
    guard case .unacceptableStatus(let response, let application?)? = error else {
      Issue.record("expected .unacceptableStatus(400), got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 400)
    #expect(application.message == "too frequent")
    #expect(error?.isRateLimited == false)
  }

  @Test(
    "429 with Retry-After: the delay is read, a too long one is not waited for",
    arguments: TransportKind.allCases)
  func rateLimited429(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let sleeps = SleepRecorder()
    // The default policy honours Retry-After up to 60 s; the fixture says 30, so one retry after 30 s
    // (the overall deadline leaves room for that wait; the recorder does not really sleep).
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(),
      authentication: .bearer(BearerTokenAuthenticator(token: "demo-token")),
      retryPolicy: RetryPolicy(maxRetries: 1, maxRetryAfter: .seconds(60)), totalTimeout: .seconds(120),
      sleeps: sleeps)
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<[Friend]>(.get, "/api/v1/friends/suggestions"))
    }
    guard case .unacceptableStatus(let response, let application?)? = error else {
      Issue.record("expected .unacceptableStatus(429), got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 429)
    #expect(error?.isRateLimited == true)
    #expect(error?.retryAfter == .seconds(30))
    #expect(application.message == "rate limit exceeded, retry in 30 seconds")
    #expect(sleeps.recorded == [.seconds(30)])
    try server.verify(count: 2, .get("/api/v1/friends/suggestions"))

    // A Retry-After beyond the policy's maximum is not waited for.
    let impatient = makeClient(
      server.baseURL, kind.make(), authentication: .bearer(BearerTokenAuthenticator(token: "demo-token")),
      retryPolicy: RetryPolicy(maxRetries: 3, maxRetryAfter: .seconds(10)), sleeps: sleeps)
    let second = await apiError { () async throws(APIError) in
      try await impatient.send(Endpoint<EmptyResponse>(.get, "/api/v1/friends/suggestions"))
    }
    #expect(second?.isRateLimited == true)
    #expect(sleeps.recorded == [.seconds(30)])
    try server.verify(count: 3, .get("/api/v1/friends/suggestions"))
  }

  @Test(
    "rate limit after N calls: 429 with Retry-After: 1, then the retry succeeds",
    arguments: TransportKind.allCases)
  func rateLimitAfterNCallsThenRetry(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(
      json: #"""
        {"request":{"method":"POST","urlPath":"/api/v1/likes"},
         "x-responseSequence":{"onEnd":"stickOnLast","responses":[
           {"status":200,"jsonBody":{"status":"OK","result":{"id":1}}},
           {"status":200,"jsonBody":{"status":"OK","result":{"id":2}}},
           {"status":429,"headers":{"Retry-After":"1"},"jsonBody":{"status":"NG","message":"slow down"}},
           {"status":200,"jsonBody":{"status":"OK","result":{"id":3}}}]}}
        """#)
    let sleeps = SleepRecorder()
    // A POST is not idempotent, yet 429 is retried: the server did not process it (RFC 6585 §4).
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(), retryPolicy: .default, sleeps: sleeps)
    let like = Endpoint<Item>(.post, "/api/v1/likes", body: .json(Item(id: 0)))
    #expect(try await client.send(like) == Item(id: 1))
    #expect(try await client.send(like) == Item(id: 2))
    let third = try await client.response(like)
    #expect(third.value == Item(id: 3))
    #expect(third.attempts == 2)
    #expect(sleeps.recorded == [.seconds(1)])
    try server.verify(count: 4, .post("/api/v1/likes"))
  }

  @Test("503 then 200: an idempotent GET is retried and succeeds", arguments: TransportKind.allCases)
  func serviceUnavailableThenOK(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(
      json: #"""
        {"request":{"method":"GET","urlPath":"/api/v1/feed"},
         "x-responseSequence":{"responses":[
           {"status":503,"jsonBody":{"status":"NG","message":"busy"}},
           {"status":200,"jsonBody":{"status":"OK","result":{"id":9}}}]}}
        """#)
    let sleeps = SleepRecorder()
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(),
      retryPolicy: RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(200), jitter: 0), sleeps: sleeps)
    let response = try await client.response(Endpoint<Item>(.get, "/api/v1/feed"))
    #expect(response.value == Item(id: 9))
    #expect(response.attempts == 2)
    #expect(sleeps.recorded == [.milliseconds(200)])
    try server.verify(count: 2, .get("/api/v1/feed"))
    #expect(server.requests.map(\.responseStatus) == [503, 200])
  }

  @Test("503 on a POST is not retried (not idempotent)", arguments: TransportKind.allCases)
  func serviceUnavailablePostNotRetried(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let sleeps = SleepRecorder()
    let client = makeClient(
      server.baseURL, kind.make(), envelope: StatusResultEnvelope(), retryPolicy: .default, sleeps: sleeps)
    let error = await apiError { () async throws(APIError) in
      try await client.send(
        Endpoint<EmptyResponse>(.post, "/api/v1/payments/charge", body: .json(Item(id: 1))))
    }
    guard case .unacceptableStatus(let response, let application?)? = error else {
      Issue.record("expected .unacceptableStatus(503), got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 503)
    #expect(application.message == "scheduled maintenance until 03:00 UTC")
    #expect(error?.retryAfter == .seconds(120))
    #expect(sleeps.recorded.isEmpty)
    try server.verify(count: 1, .post("/api/v1/payments/charge"))
  }

  @Test("the bundled notifications sequence: empty, one item, 503, again", arguments: TransportKind.allCases)
  func bundledSequenceLoops(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    struct Notification: Decodable, Sendable, Equatable {
      var id: Int
      var text: String
    }
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())
    let poll = Endpoint<[Notification]>(.get, "/api/v1/notifications")
    #expect(try await client.send(poll) == [])
    #expect(try await client.send(poll) == [Notification(id: 1, text: "Bruno accepted your request")])
    let busy = await apiError { () async throws(APIError) in try await client.send(poll) }
    #expect(busy?.kind == .unacceptableStatus)
    #expect(busy?.statusCode == 503)
    #expect(busy?.retryAfter == .seconds(1))
    #expect(try await client.send(poll) == [])
  }
}
