import ClientKit
import Foundation
import HTTPCore
import Testing

@Suite("APIError")
struct APIErrorTests {
  static let info = RequestInfo(method: .get, url: URL(string: "http://api.test/v1/users/1")!)

  /// Every transport-level case, thrown by a stub transport, reaches the caller unchanged.
  static let transportErrors: [APIError] = [
    .timedOut(limit: .milliseconds(1500), request: info),
    .cannotConnect(info, reason: "Connection refused"),
    .connectionReset(info),
    .emptyResponse(info),
    .connectionLost(info, receivedBytes: 12),
    .truncatedBody(info, statusCode: 200, expected: 100, received: 14),
    .malformedResponse(info, detail: "malformed status-line"),
    .tlsFailure(info, .expired),
    .transportFailure(info, code: -1, detail: "unknown"),
    .cancelled,
  ]

  @Test(arguments: 0..<transportErrors.count)
  func transportErrorsReachTheCaller(index: Int) async {
    let expected = Self.transportErrors[index]
    let client = makeClient(StubTransport { _ throws(APIError) in throw expected })
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    #expect(error?.caseName == expected.caseName)
    #expect(error?.isTransportFailure == (expected.caseName != "cancelled"))
    let text = error?.errorDescription ?? ""
    #expect(!text.isEmpty)
    if expected.caseName != "cancelled" { #expect(error?.request?.url == Self.info.url) }
  }

  @Test func descriptionsNameTheImportantFacts() {
    #expect(APIError.timedOut(limit: .milliseconds(1500), request: Self.info).description.contains("1500 ms"))
    #expect(APIError.timedOut(limit: .seconds(20), request: Self.info).description.contains("20 s"))
    let truncated = APIError.truncatedBody(Self.info, statusCode: 200, expected: 100, received: 14)
      .description
    #expect(truncated.contains("14 of 100"))
    #expect(APIError.cannotConnect(Self.info, reason: "Connection refused").description.contains("api.test"))
    #expect(APIError.cancelled.presentation == .none)
    #expect(APIError.connectionReset(Self.info).presentation == .toast)
    #expect(APIError.invalidRequest("bad").presentation == .alert)
    let tls = APIError.tlsFailure(Self.info, .hostnameMismatch)
    #expect(tls.description.contains("host name does not match the certificate"))
    #expect(tls.trustFailure == .hostnameMismatch)
    #expect(tls.isTransportFailure)
    #expect(tls.presentation == .alert)
    #expect(APIError.connectionReset(Self.info).trustFailure == nil)
  }

  @Test(arguments: [
    (401, "unauthorized"), (403, "forbidden"), (404, "notFound"), (429, "rateLimited"), (500, "server"),
    (503, "server"), (418, "other"),
  ])
  func unacceptableStatusHelpers(status: Int, kind: String) async {
    let client = makeClient(StubTransport(statusCode: status, headers: ["retry-after": "3"], body: "nope"))
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    guard let error, case .unacceptableStatus(let response, let app) = error else {
      Issue.record("expected .unacceptableStatus, got \(String(describing: error))")
      return
    }
    #expect(app == nil)
    #expect(response.statusCode == status)
    #expect(response.bodyExcerpt == "nope")
    #expect(error.statusCode == status)
    #expect(error.isUnauthorized == (kind == "unauthorized"))
    #expect(error.isForbidden == (kind == "forbidden"))
    #expect(error.isNotFound == (kind == "notFound"))
    #expect(error.isRateLimited == (kind == "rateLimited"))
    #expect(error.isServerError == (kind == "server"))
    #expect(error.retryAfter == .seconds(3))
    #expect(error.description.contains("HTTP \(status)"))
  }

  @Test func acceptableStatusCodesAreConfigurable() async throws {
    let client = makeClient(StubTransport(statusCode: 404, body: #"{"id":0,"name":"none"}"#))
    let user = try await client.send(Endpoint<User>(.get, "/u", acceptableStatusCodes: [200, 404]))
    #expect(user.name == "none")
  }

  @Test func applicationAndDecodingAndEmptyBodyAndInvalidRequest() async {
    let ng = makeClient(
      StubTransport(statusCode: 200, body: #"{"status":"NG","message":"Nope"}"#),
      envelope: StatusResultEnvelope())
    let app = await apiError { () async throws(APIError) in try await ng.send(GetUser(id: 1)) }
    #expect(app?.caseName == "application")
    #expect(app?.errorDescription == "Nope")
    #expect(app?.response?.statusCode == 200)

    let bad = makeClient(StubTransport(statusCode: 200, body: #"{"id":1}"#))
    let decoding = await apiError { () async throws(APIError) in try await bad.send(GetUser(id: 1)) }
    guard case .decoding(let failure, let response)? = decoding else {
      Issue.record("expected .decoding, got \(String(describing: decoding))")
      return
    }
    #expect(failure.codingPath == "name")
    #expect(response.bodyExcerpt == #"{"id":1}"#)
    #expect(decoding?.description.contains("name") == true)

    let empty = makeClient(StubTransport(statusCode: 204))
    #expect(
      await apiError { () async throws(APIError) in try await empty.send(GetUser(id: 1)) }?.caseName
        == "emptyBody")

    let noHost = APIClient(baseURL: URL(string: "file:///tmp")!, transport: StubTransport(statusCode: 200))
    #expect(
      await apiError { () async throws(APIError) in try await noHost.send(GetUser(id: 1)) }?.caseName
        == "invalidRequest")
  }

  @Test func longBodiesAreExcerpted() {
    let body = Data(String(repeating: "x", count: 2000).utf8)
    let response = ResponseInfo(request: Self.info, statusCode: 500, body: body)
    #expect(response.bodyExcerpt.count == 513)
    #expect(response.bodyExcerpt.hasSuffix("…"))
  }

  @Test func cancellingTheTaskCancelsTheRequest() async {
    let started = Counter()
    let stub = StubTransport { _ throws(APIError) in
      started.increment()
      do {
        try await Task.sleep(for: .seconds(30))
      } catch {
        throw .cancelled
      }
      return reply(200)
    }
    let client = makeClient(stub)
    let task = Task { () -> APIError? in
      await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    }
    while started.count == 0 { try? await Task.sleep(for: .milliseconds(5)) }
    task.cancel()
    let error = await task.value
    #expect(error?.caseName == "cancelled")
  }
}
