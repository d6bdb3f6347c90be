import ClientKit
import Foundation
import Testing

/// The overall deadline across retries (issue 19): `totalTimeout`, its default, and the report.
@Suite("Overall deadline")
struct DeadlineTests {
  /// A transport that honours each attempt's deadline by waiting for it and timing out.
  static func silentTransport() -> StubTransport {
    StubTransport { request throws(APIError) in
      try? await Task.sleep(for: request.timeout)
      throw .timedOut(limit: request.timeout, request: request.info)
    }
  }

  static func seconds(_ d: Duration) -> Double {
    Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
  }

  @Test("default: with retries on, the per-attempt timeout is also the overall deadline")
  func defaultTotalIsAttemptTimeout() async {
    let transport = Self.silentTransport()
    let client = APIClient(
      baseURL: baseURL, retryPolicy: .default, transport: transport, timeout: .milliseconds(300),
      sleep: { _ in })
    let start = ContinuousClock.now
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    let elapsed = Self.seconds(ContinuousClock.now - start)
    guard case .deadlineExceeded(let report)? = error else {
      Issue.record("expected .deadlineExceeded, got \(String(describing: error))")
      return
    }
    #expect(report.attempts == 1)
    #expect(report.totalLimit == .milliseconds(300))
    #expect(report.attemptLimit == .milliseconds(300))
    #expect(elapsed >= 0.27)
    #expect(transport.requests.count == 1)
    let text = error?.description ?? ""
    #expect(text.contains("1 attempt"), "\(text)")
    #expect(text.contains("300 ms overall"), "\(text)")
    #expect(text.contains("300 ms per attempt"), "\(text)")
    #expect(error?.isTransportFailure == true)
    #expect(error?.presentation == .toast)
  }

  @Test("retries that all time out are reported with their count")
  func retriesExhaustedReportAttempts() async {
    let transport = Self.silentTransport()
    let client = APIClient(
      baseURL: baseURL, retryPolicy: RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(1)),
      transport: transport,
      timeout: .milliseconds(200), totalTimeout: .seconds(30), sleep: { _ in })
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    guard case .deadlineExceeded(let report)? = error else {
      Issue.record("expected .deadlineExceeded, got \(String(describing: error))")
      return
    }
    #expect(report.attempts == 3)
    #expect(transport.requests.count == 3)
    #expect(error?.description.contains("3 attempts") == true, "\(error?.description ?? "")")
    #expect(Self.seconds(report.elapsed) >= 0.55)
  }

  @Test("the last attempt gets only what is left of the overall deadline")
  func lastAttemptClipped() async {
    let transport = Self.silentTransport()
    let client = APIClient(
      baseURL: baseURL, retryPolicy: RetryPolicy(maxRetries: 5, baseDelay: .milliseconds(1)),
      transport: transport,
      timeout: .milliseconds(300), totalTimeout: .milliseconds(500), sleep: { _ in })
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    guard case .deadlineExceeded(let report)? = error else {
      Issue.record("expected .deadlineExceeded, got \(String(describing: error))")
      return
    }
    // Usually 2 (300 + 200 ms); 1 when a loaded machine stretches the first attempt past 500 ms.
    #expect((1...2).contains(report.attempts))
    let timeouts = transport.requests.map(\.timeout)
    #expect(timeouts.count == report.attempts)
    #expect(timeouts.first == .milliseconds(300))
    #expect(timeouts.dropFirst().allSatisfy { $0 < .milliseconds(300) })
    #expect(Self.seconds(report.elapsed) >= 0.45)
  }

  @Test("a wait that would pass the deadline ends the call with the last answer")
  func retryAfterBeyondDeadline() async {
    let transport = StubTransport(statusCode: 503, headers: ["Retry-After": "5"])
    let client = APIClient(
      baseURL: baseURL, retryPolicy: .default, transport: transport, timeout: .seconds(2), sleep: { _ in })
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    #expect(error?.statusCode == 503)
    #expect(transport.requests.count == 1)
  }

  @Test("without retries there is no overall deadline, and a timeout stays .timedOut")
  func noRetriesKeepsTimedOut() async {
    let client = APIClient(
      baseURL: baseURL, retryPolicy: .never, transport: Self.silentTransport(), timeout: .milliseconds(100))
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    #expect(error?.caseName == "timedOut")
  }

  @Test("a request's totalTimeout overrides the client's")
  func requestOverride() async {
    let transport = Self.silentTransport()
    let client = APIClient(
      baseURL: baseURL, retryPolicy: RetryPolicy(maxRetries: 9, baseDelay: .milliseconds(1)),
      transport: transport,
      timeout: .milliseconds(100), totalTimeout: .seconds(60), sleep: { _ in })
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<User>(.get, "/u", totalTimeout: .milliseconds(250)))
    }
    guard case .deadlineExceeded(let report)? = error else {
      Issue.record("expected .deadlineExceeded, got \(String(describing: error))")
      return
    }
    #expect(report.totalLimit == .milliseconds(250))
    // Usually 3 (100 + 100 + 50 ms); fewer when a loaded machine stretches the sleeps.
    #expect((1...3).contains(report.attempts))
    #expect(transport.requests.count == report.attempts)
    #expect(Self.seconds(report.elapsed) >= 0.24)
  }
}
