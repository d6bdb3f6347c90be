import ClientKit
import Foundation
import HTTPCore
import Synchronization
import Testing

@Suite("Building requests")
struct RequestBuildingTests {
  struct CreateUser: Request {
    typealias Response = User
    var method: HTTPMethod { .post }
    var path: String { "users/" }
    var body: RequestBody? { .json(User(id: 0, name: "Zoë")) }
    var headers: HTTPHeaders { ["accept": "application/vnd.api+json", "X-Trace": "t1"] }
    var queryItems: [URLQueryItem] { [URLQueryItem(name: "q", value: "a+b&c=d é")] }
  }

  /// The documented grouping: an endpoint enum.
  enum UsersAPI {
    static func user(_ id: Int) -> Endpoint<User> { Endpoint(.get, "/users/\(id)") }
    static func delete(_ id: Int) -> Endpoint<EmptyResponse> { Endpoint(.delete, "/users/\(id)") }
  }

  func built<R: Request>(
    _ request: R, base: String = "http://api.test/v1", client configure: (URL) -> APIClient
  )
    async throws -> TransportRequest
  {
    let client = configure(URL(string: base)!)
    return try await client.makeTransportRequest(request).0
  }

  @Test(arguments: ["http://api.test/v1", "http://api.test/v1/"])
  func pathJoinedWithOneSlashAndQueryStrictlyEncoded(base: String) async throws {
    let client = APIClient(
      baseURL: URL(string: base)!, defaultQueryItems: { [URLQueryItem(name: "app", value: "1.2")] },
      transport: StubTransport(statusCode: 200))
    let request = try await client.makeTransportRequest(CreateUser()).0
    #expect(request.url.absoluteString == "http://api.test/v1/users/?app=1.2&q=a%2Bb%26c%3Dd%20%C3%A9")
    #expect(request.target == "/v1/users/?app=1.2&q=a%2Bb%26c%3Dd%20%C3%A9")
  }

  @Test func requestHeadersReplaceDefaultsCaseInsensitivelyAndJSONBodySetsContentType() async throws {
    let client = APIClient(
      baseURL: baseURL, defaultHeaders: ["Accept": "application/json", "User-Agent": "Kit/1"],
      transport: StubTransport(statusCode: 200))
    let request = try await client.makeTransportRequest(CreateUser()).0
    #expect(request.headers.values("Accept") == ["application/vnd.api+json"])
    #expect(request.headers["user-agent"] == "Kit/1")
    #expect(request.headers["content-type"] == "application/json")
    let decoded = try JSONDecoder().decode(User.self, from: request.body)
    #expect(decoded.name == "Zoë")
  }

  @Test func defaultQueryItemsAreEvaluatedPerRequest() async throws {
    let counter = Counter()
    let stub = StubTransport(statusCode: 200, body: #"{"id":1,"name":"A"}"#)
    let client = makeClient(
      stub, defaultQueryItems: { [URLQueryItem(name: "ts", value: "\(counter.increment())")] })
    _ = try await client.send(GetUser(id: 1))
    _ = try await client.send(GetUser(id: 1))
    #expect(stub.requests.map { $0.url.query } == ["ts=1", "ts=2"])
  }

  @Test func formAndRawBodies() async throws {
    let client = makeClient(StubTransport(statusCode: 200))
    let form = Endpoint<EmptyResponse>(
      .post, "/login",
      body: .form([URLQueryItem(name: "user name", value: "a&b"), URLQueryItem(name: "pw", value: "x~*")]))
    let built = try await client.makeTransportRequest(form).0
    #expect(String(decoding: built.body, as: UTF8.self) == "user+name=a%26b&pw=x%7E*")
    #expect(built.headers["Content-Type"] == "application/x-www-form-urlencoded")
    let raw = Endpoint<EmptyResponse>(
      .put, "/blob", body: .data(Data([1, 2, 3]), contentType: "application/octet-stream"))
    let rawBuilt = try await client.makeTransportRequest(raw).0
    #expect(rawBuilt.body == Data([1, 2, 3]))
    #expect(rawBuilt.headers["content-type"] == "application/octet-stream")
  }

  @Test func endpointEnum() async throws {
    let stub = StubTransport { request throws(APIError) in
      request.method == .delete ? reply(204) : reply(200, #"{"id":9,"name":"N"}"#)
    }
    let client = makeClient(stub)
    #expect(try await client.send(UsersAPI.user(9)).name == "N")
    #expect(try await client.send(UsersAPI.delete(9)) == EmptyResponse())
    #expect(stub.requests.map { "\($0.method) \($0.target)" } == ["GET /v1/users/9", "DELETE /v1/users/9"])
  }

  @Test func basicAndBearerAuthentication() async throws {
    let basic = APIClient(
      baseURL: baseURL, authentication: .basic(username: "Aladdin", password: "open sesame"),
      transport: StubTransport(statusCode: 200))
    #expect(
      try await basic.makeTransportRequest(GetUser(id: 1)).0.headers["Authorization"]
        == "Basic QWxhZGRpbjpvcGVuIHNlc2FtZQ==")
    let bearer = APIClient(
      baseURL: baseURL, authentication: .bearer(BearerTokenAuthenticator(token: "tok")),
      transport: StubTransport(statusCode: 200))
    let (request, token) = try await bearer.makeTransportRequest(GetUser(id: 1))
    #expect(request.headers["authorization"] == "Bearer tok")
    #expect(token == "tok")
    let anonymous = Endpoint<EmptyResponse>(.post, "/oauth/token", requiresAuthentication: false)
    #expect(try await bearer.makeTransportRequest(anonymous).0.headers.contains("Authorization") == false)
  }

  @Test func adaptersRunInOrderOnEveryAttempt() async throws {
    let calls = Counter()
    let first = ClosureAdapter { request in
      var r = request
      r.headers.add(name: "X-Order", value: "first-\(calls.increment())")
      return r
    }
    let second = ClosureAdapter { request in
      var r = request
      r.headers.add(name: "X-Order", value: "second")
      return r
    }
    let stub = StubTransport { _ throws(APIError) in reply(503) }
    let client = makeClient(stub, adapters: [first, second], retryPolicy: RetryPolicy(maxRetries: 1))
    _ = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    #expect(
      stub.requests.map { $0.headers.values("X-Order") } == [["first-1", "second"], ["first-2", "second"]])
  }

  struct Refusal: Error {}

  @Test func adapterFailureIsInvalidRequestAndNothingIsSent() async {
    let stub = StubTransport(statusCode: 200)
    let client = makeClient(stub, adapters: [ClosureAdapter { _ in throw Refusal() }])
    let error = await apiError { () async throws(APIError) in try await client.send(GetUser(id: 1)) }
    #expect(error?.caseName == "invalidRequest")
    #expect(stub.requests.isEmpty)
  }

  @Test func timeoutDefaultsAndOverrides() async throws {
    let client = makeClient(StubTransport(statusCode: 200))
    #expect(try await client.makeTransportRequest(GetUser(id: 1)).0.timeout == .seconds(20))
    let quick = Endpoint<User>(.get, "/u", timeout: .milliseconds(1500))
    #expect(try await client.makeTransportRequest(quick).0.timeout == .milliseconds(1500))
  }

  @Test func responseVariantCarriesStatusHeadersBodyAndDuration() async throws {
    let stub = StubTransport { _ throws(APIError) in
      reply(
        200, #"{"id":1,"name":"A"}"#,
        headers: [("x-trace", "a"), ("X-Trace", "b"), ("x-request-id", "42")].reduce(into: HTTPHeaders()) {
          $0.add(name: $1.0, value: $1.1)
        })
    }
    let response = try await makeClient(stub).response(GetUser(id: 1))
    #expect(response.value.id == 1)
    #expect(response.statusCode == 200)
    #expect(response.header("X-TRACE") == "a, b")
    #expect(response.header("X-REQUEST-ID") == "42")
    #expect(response.body.count == 19)
    #expect(response.duration >= .zero)
    #expect(response.attempts == 1)
    #expect(response.source == .network)
  }
}
