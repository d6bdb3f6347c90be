import ClientKit
import Foundation
import HTTPCore
import Testing

@Suite("Retry policy")
struct RetryTests {
  static let info = RequestInfo(method: .get, url: URL(string: "http://h/x")!)

  static func status(_ code: Int, retryAfter: String? = nil) -> APIError {
    var headers = HTTPHeaders()
    if let retryAfter { headers.add(name: "Retry-After", value: retryAfter) }
    return .unacceptableStatus(
      ResponseInfo(request: info, statusCode: code, headers: headers), application: nil)
  }

  /// (error, idempotent, expected to retry)
  static let table: [(APIError, Bool, Bool)] = [
    (.timedOut(limit: .seconds(1), request: info), true, true),
    (.timedOut(limit: .seconds(1), request: info), false, false),
    (.connectionReset(info), true, true),
    (.connectionReset(info), false, false),
    (.emptyResponse(info), true, true),
    (.connectionLost(info, receivedBytes: 3), true, true),
    (.truncatedBody(info, statusCode: 200, expected: 10, received: 2), true, true),
    (.truncatedBody(info, statusCode: 200, expected: 10, received: 2), false, false),
    (.cannotConnect(info, reason: "refused"), false, true),
    (.transportFailure(info, code: -1, detail: "x"), true, true),
    (status(500), true, true), (status(502), true, true), (status(503), true, true),
    (status(504), true, true),
    (status(500), false, false),
    (status(429), false, true),
    (status(400), true, false), (status(401), true, false), (status(404), true, false),
    (.tlsFailure(info, .untrustedRoot), true, false),
    (.malformedResponse(info, detail: "x"), true, false),
    (
      .application(
        ApplicationError(code: "E", message: nil), response: ResponseInfo(request: info, statusCode: 200)),
      true, false
    ),
    (
      .decoding(
        DecodingFailure(codingPath: "a", reason: "b"), response: ResponseInfo(request: info, statusCode: 200)),
      true, false
    ),
    (.emptyBody(ResponseInfo(request: info, statusCode: 204)), true, false),
    (.invalidRequest("x"), true, false),
    (.cancelled, true, false),
    (.refreshFailed(response: ResponseInfo(request: info, statusCode: 401), reason: "x"), true, false),
  ]

  @Test(arguments: 0..<table.count)
  func decisions(index: Int) {
    let (error, idempotent, retries) = Self.table[index]
    let policy = RetryPolicy(random: { 0.5 })
    let decision = policy.decision(for: error, isIdempotent: idempotent, retryCount: 0)
    #expect((decision != .doNotRetry) == retries, "\(error.caseName) idempotent=\(idempotent)")
  }

  @Test func exponentialBackoffWithBoundedJitter() {
    let low = RetryPolicy(
      baseDelay: .milliseconds(100), multiplier: 2, maxDelay: .seconds(1), jitter: 0.5, random: { 0 })
    let high = RetryPolicy(
      baseDelay: .milliseconds(100), multiplier: 2, maxDelay: .seconds(1), jitter: 0.5, random: { 0.999999 })
    #expect(low.backoff(retryCount: 0) == .milliseconds(50))
    #expect(high.backoff(retryCount: 0) == .milliseconds(100))
    #expect(low.backoff(retryCount: 2) == .milliseconds(200))
    #expect(high.backoff(retryCount: 2) == .milliseconds(400))
    #expect(high.backoff(retryCount: 10) == .seconds(1))
    let real = RetryPolicy(baseDelay: .milliseconds(100), jitter: 0.5)
    for _ in 0..<50 {
      let d = real.backoff(retryCount: 1)
      #expect(d >= .milliseconds(100) && d <= .milliseconds(200))
    }
  }

  @Test func retryAfterIsHonouredAndCapped() {
    let policy = RetryPolicy(maxRetryAfter: .seconds(60), random: { 0 })
    #expect(
      policy.decision(for: Self.status(503, retryAfter: "7"), isIdempotent: true, retryCount: 0)
        == .retry(after: .seconds(7)))
    #expect(
      policy.decision(for: Self.status(429, retryAfter: "120"), isIdempotent: true, retryCount: 0)
        == .doNotRetry)
    let date = Date(timeIntervalSinceNow: 30)
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    let error = Self.status(429, retryAfter: formatter.string(from: date))
    guard case .retry(let after) = policy.decision(for: error, isIdempotent: false, retryCount: 0) else {
      Issue.record("expected a retry")
      return
    }
    // 30 s ahead, less the whole-second rounding and however long the machine took since (10 s of slack);
    // a date misread by a whole hour, or ignored, is far outside.
    #expect(after > .seconds(20) && after <= .seconds(31))
    #expect(error.isRateLimited)
  }

  @Test func maxRetriesBoundsAttempts() async {
    let stub = StubTransport { _ throws(APIError) in reply(503) }
    let sleeps = SleepRecorder()
    let client = makeClient(
      stub, retryPolicy: RetryPolicy(maxRetries: 3, baseDelay: .milliseconds(10), jitter: 0), sleeps: sleeps)
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    #expect(error?.isServerError == true)
    #expect(stub.requests.count == 4)
    #expect(sleeps.recorded == [.milliseconds(10), .milliseconds(20), .milliseconds(40)])
  }

  @Test func nonIdempotentPostIsNotRetriedAfterATimeout() async {
    let stub = StubTransport { request throws(APIError) in
      throw .timedOut(limit: .seconds(1), request: request.info)
    }
    let client = makeClient(stub, retryPolicy: RetryPolicy(maxRetries: 3))
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<User>(.post, "/orders"))
    }
    #expect(error?.caseName == "timedOut")
    #expect(stub.requests.count == 1)
    let idempotent = Endpoint<User>(.post, "/orders", isIdempotent: true)
    _ = await apiError { () async throws(APIError) in try await client.send(idempotent) }
    #expect(stub.requests.count == 5)
  }

  @Test func retrySucceedsAfterTransientFailures() async throws {
    let calls = Counter()
    let stub = StubTransport { request throws(APIError) in
      switch calls.increment() {
      case 1: throw .connectionReset(request.info)
      case 2: return reply(503, "", headers: ["Retry-After": "1"])
      default: return reply(200, #"{"id":1,"name":"A"}"#)
      }
    }
    let sleeps = SleepRecorder()
    let client = makeClient(
      stub, retryPolicy: RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(5), jitter: 0), sleeps: sleeps)
    let response = try await client.response(GetUser(id: 1))
    #expect(response.value.id == 1)
    #expect(response.attempts == 3)
    #expect(sleeps.recorded == [.milliseconds(5), .seconds(1)])
  }
}
