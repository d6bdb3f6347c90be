import ClientKit
import Foundation
import HTTPCore
import Testing

/// Responses without content never reach the JSON decoder.
@Suite("Empty bodies never reach the JSON decoder")
struct EmptyBodyTests {
  static let cases: [(method: HTTPMethod, status: Int, headers: HTTPHeaders)] = [
    (.delete, 204, [:]),
    (.post, 200, ["Content-Type": "application/json", "Content-Length": "0"]),
    (.head, 200, ["Content-Length": "120"]),
    (.put, 205, [:]),
  ]

  @Test(arguments: 0..<cases.count)
  func emptyResponseSucceedsWithoutDecoding(index: Int) async throws {
    let c = Self.cases[index]
    let client = makeClient(
      StubTransport(statusCode: c.status, headers: c.headers), envelope: StatusResultEnvelope())
    let value = try await client.send(Endpoint<EmptyResponse>(c.method, "/items/7"))
    #expect(value == EmptyResponse())
  }

  @Test(arguments: 0..<cases.count)
  func valueExpectedGivesTypedEmptyBody(index: Int) async {
    let c = Self.cases[index]
    let client = makeClient(
      StubTransport(statusCode: c.status, headers: c.headers), envelope: StatusResultEnvelope())
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<User>(c.method, "/items/7"))
    }
    guard case .emptyBody(let response)? = error else {
      Issue.record("expected .emptyBody, got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == c.status)
    #expect(error?.errorDescription?.contains("no content") == true)
  }

  @Test func emptyResponseIgnoresABody() async throws {
    let client = makeClient(StubTransport(statusCode: 201, body: "{}"))
    #expect(try await client.send(Endpoint<EmptyResponse>(.put, "/items/7")) == EmptyResponse())
  }

  @Test func emptyResponseStillReportsAnNGEnvelope() async {
    let client = makeClient(
      StubTransport(statusCode: 200, body: #"{"status":"NG","message":"locked"}"#),
      envelope: StatusResultEnvelope())
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<EmptyResponse>(.post, "/x"))
    }
    #expect(error?.applicationError?.message == "locked")
  }

  @Test func whitespaceOnlyBodyIsEmptyAndOptionalGetsNil() async throws {
    let client = makeClient(StubTransport(statusCode: 200, body: " \r\n"))
    let value = try await client.send(Endpoint<User?>(.get, "/x"))
    #expect(value == nil)
  }

  @Test func rawDataAndStringResponses() async throws {
    let client = makeClient(StubTransport(statusCode: 200, body: "plain text"))
    #expect(try await client.send(Endpoint<String>(.get, "/t")) == "plain text")
    #expect(try await client.send(Endpoint<Data>(.get, "/t")) == Data("plain text".utf8))
  }
}
