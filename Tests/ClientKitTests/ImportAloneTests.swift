import ClientKit
import Testing

// This file imports ClientKit (and the test framework) only: everything a request names must come from it.

private struct Upload: Request {
  typealias Response = [String: Int]
  var method: HTTPMethod { .put }
  var path: String { "/files" }
  var headers: HTTPHeaders { ["X-Trace": "1", "Accept": "application/json"] }
  var queryItems: [URLQueryItem] { [URLQueryItem(name: "a", value: "b")] }
  var body: RequestBody? { .data(Data("x".utf8), contentType: "text/plain") }
  var timeout: Duration? { .seconds(3) }
  var decoder: JSONDecoder? { JSONDecoder() }
}

@Suite("import ClientKit alone")
struct ImportAloneTests {
  @Test func requestsHeadersAndTransportsNeedNoOtherImport() async throws {
    let stub = StubTransport(
      statusCode: 200, headers: ["Content-Type": "application/json"], body: #"{"n":1}"#)
    let client = APIClient(baseURL: URL(string: "http://h.test")!, transport: stub)
    let value = try await client.send(Upload())
    #expect(value == ["n": 1])
    let sent = try #require(stub.requests.first)
    #expect(sent.method == HTTPMethod.put)
    #expect(sent.headers["x-trace"] == "1")
    let limits = ParserLimits(maxBodyBytes: 1 << 20)
    #expect(limits.maxBodyBytes == 1 << 20)
  }
}
