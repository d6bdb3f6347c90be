import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import Testing

/// Both envelope styles, OK and NG, against the bundled fixtures and in-process stubs (brief §4), and
/// empty bodies that never reach the JSON decoder, over both transports.
@Suite("Contract: envelopes and decoding")
struct EnvelopeContractTests {
  @Test("status/result OK unwraps the payload", arguments: TransportKind.allCases)
  func statusResultOK(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let friends = try await friendsClient(server.baseURL, kind).send(friendsList())
    #expect(
      friends == [
        Friend(id: 101, name: "Aiko", online: true, score: 12.5),
        Friend(id: 102, name: "Bruno", online: false, score: 7),
      ])
  }

  @Test("status NG under HTTP 200 is an application error", arguments: TransportKind.allCases)
  func statusResultNGUnder200(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let error = await apiError { () async throws(APIError) in
      try await friendsClient(server.baseURL, kind).send(friendsList(page: 999))
    }
    guard case .application(let failure, let response)? = error else {
      Issue.record("expected .application, got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 200)
    #expect(failure.message == "page out of range")
    #expect(failure.code == "NG")
    #expect(error?.presentation == .alert)
  }

  @Test("code/data success unwraps data", arguments: TransportKind.allCases)
  func codeDataOK(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let user = try await usersClient(server.baseURL, kind).send(Endpoint<User>(.get, "/api/v2/users/42"))
    #expect(user == User(id: 42, name: "Aiko Tanaka", email: "aiko@example.com", balance: 1250))
  }

  @Test("code/data failure under 404 carries the application error", arguments: TransportKind.allCases)
  func codeDataFailureWith404(kind: TransportKind) async throws {
    let server = try startWithBundledFixtures()
    defer { server.stop() }
    let error = await apiError { () async throws(APIError) in
      try await usersClient(server.baseURL, kind).send(Endpoint<User>(.get, "/api/v2/users/0"))
    }
    guard case .unacceptableStatus(let response, let application?)? = error else {
      Issue.record("expected .unacceptableStatus with an application error, got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 404)
    #expect(application.code == "40400")
    #expect(application.message == "user 0 not found")
    #expect(error?.isNotFound == true)
  }

  @Test("code/data failure under HTTP 200 is an application error", arguments: TransportKind.allCases)
  func codeDataFailureUnder200(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(
      .get("/api/v2/balance").willReturn(
        status: 200, json: #"{"code":40901,"data":null,"info":"account frozen","presentation":"toast"}"#))
    let client = makeClient(server.baseURL, kind.make(), envelope: CodeDataEnvelope())
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<Double>(.get, "/api/v2/balance"))
    }
    guard case .application(let failure, let response)? = error else {
      Issue.record("expected .application, got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 200)
    #expect(failure == ApplicationError(code: "40901", message: "account frozen", presentation: .toast))
    #expect(error?.presentation == .toast)
  }

  @Test("an undecodable payload is a decoding error naming the path", arguments: TransportKind.allCases)
  func undecodablePayload(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/items/1").willReturn(json: #"{"status":"OK","result":{"id":"one"}}"#))
    try server.stub(.get("/items/2").willReturn(json: #"{"status":"OK","result":{"id":2"#))
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())
    let wrongType = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/items/1"))
    }
    guard case .decoding(let failure, let response)? = wrongType else {
      Issue.record("expected .decoding, got \(String(describing: wrongType))")
      return
    }
    #expect(failure.codingPath == "result.id")
    #expect(response.statusCode == 200)
    let notJSON = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/items/2"))
    }
    guard case .decoding(let failure, _)? = notJSON else {
      Issue.record("expected .decoding, got \(String(describing: notJSON))")
      return
    }
    #expect(failure.reason.contains("not JSON"))
  }

  // MARK: Empty 2xx bodies never reach the JSON decoder

  @Test(
    "204 and an empty 200 succeed as EmptyResponse, fail as .emptyBody for a model",
    arguments: TransportKind.allCases)
  func emptyBodies(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(
      .delete("/items/7").willReturn(
        responseJSON: #"{"status":204,"headers":{"Content-Type":"application/json"}}"#))
    try server.stub(
      .post("/items/7/touch").willReturn(
        responseJSON: #"{"status":200,"headers":{"Content-Type":"application/json"},"body":""}"#))
    try server.stub(.put("/items/7").willReturn(status: 201, json: "{}"))
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())

    let deleted = try await client.response(Endpoint<EmptyResponse>(.delete, "/items/7"))
    #expect(deleted.statusCode == 204)
    #expect(deleted.body.isEmpty)
    let touched = try await client.response(Endpoint<EmptyResponse>(.post, "/items/7/touch"))
    #expect(touched.statusCode == 200)
    #expect(touched.body.isEmpty)
    let updated = try await client.response(Endpoint<EmptyResponse>(.put, "/items/7"))
    #expect(updated.statusCode == 201)
    #expect(updated.body == Data("{}".utf8))

    for (method, path, status) in [
      (HTTPMethod.delete, "/items/7", 204), (HTTPMethod.post, "/items/7/touch", 200),
    ] {
      let error = await apiError { () async throws(APIError) in
        try await client.send(Endpoint<Item>(method, path))
      }
      guard case .emptyBody(let response)? = error else {
        Issue.record("\(path): expected .emptyBody, got \(String(describing: error))")
        continue
      }
      #expect(response.statusCode == status)
    }
    // An optional model reads "no content" as nil.
    let optional = try await client.send(Endpoint<Item?>(.delete, "/items/7"))
    #expect(optional == nil)
  }

  @Test(
    "an NG envelope is still an application error for EmptyResponse",
    arguments: TransportKind.allCases)
  func emptyResponseStillSeesNG(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.delete("/items/8").willReturn(json: #"{"status":"NG","message":"locked"}"#))
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<EmptyResponse>(.delete, "/items/8"))
    }
    guard case .application(let failure, _)? = error else {
      Issue.record("expected .application, got \(String(describing: error))")
      return
    }
    #expect(failure.message == "locked")
  }
}
