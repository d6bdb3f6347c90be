import ClientKit
import Foundation
import MockServerTesting
import Testing

/// Issue 19 "wrong answers", against the real `mockserver` binary over both transports: envelopes for
/// every response type, charsets, an HTML 502, the overall deadline and the body size limit.
@Suite("Contract: response types, deadline, size limit (binary)")
struct ResponseTypeContractTests {
  func launch() async throws -> MockServerProcess {
    let server = try MockServerProcess.launch(arguments: ["--quiet"])
    try await server.stub(
      .get("/ng").willReturn(json: #"{"status":"NG","message":"Out of stock","code":"E42"}"#))
    try await server.stub(.get("/text").willReturn(json: #"{"status":"OK","result":"hello"}"#))
    try await server.stub(.get("/number").willReturn(json: #"{"status":"OK","result":42}"#))
    try await server.stub(.get("/list").willReturn(json: #"{"status":"OK","result":[1,2,3]}"#))
    try await server.stub(.get("/none").willReturn(json: #"{"status":"OK","result":null}"#))
    return server
  }

  func client(_ server: MockServerProcess, _ kind: TransportKind) -> APIClient {
    makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())
  }

  func expectNG(_ error: APIError?, _ type: String, sourceLocation: SourceLocation = #_sourceLocation) {
    guard case .application(let failure, let response)? = error else {
      Issue.record(
        "\(type): expected .application, got \(String(describing: error))", sourceLocation: sourceLocation)
      return
    }
    #expect(response.statusCode == 200, sourceLocation: sourceLocation)
    #expect(failure.message == "Out of stock", sourceLocation: sourceLocation)
    #expect(failure.code == "E42", sourceLocation: sourceLocation)
  }

  @Test(
    "NG under HTTP 200 is an application error for String, Data, Int, optional and array",
    arguments: TransportKind.allCases)
  func ngForEveryType(kind: TransportKind) async throws {
    let server = try await launch()
    defer { server.stop() }
    let client = client(server, kind)
    expectNG(
      await apiError { () async throws(APIError) in try await client.send(Endpoint<String>(.get, "/ng")) },
      "String")
    expectNG(
      await apiError { () async throws(APIError) in try await client.send(Endpoint<Data>(.get, "/ng")) },
      "Data")
    expectNG(
      await apiError { () async throws(APIError) in try await client.send(Endpoint<Int>(.get, "/ng")) }, "Int"
    )
    expectNG(
      await apiError { () async throws(APIError) in try await client.send(Endpoint<Int?>(.get, "/ng")) },
      "Int?")
    expectNG(
      await apiError { () async throws(APIError) in try await client.send(Endpoint<[Int]>(.get, "/ng")) },
      "[Int]")
    expectNG(
      await apiError { () async throws(APIError) in try await client.send(Endpoint<String?>(.get, "/ng")) },
      "String?")
  }

  @Test("OK payloads are unwrapped for String, Int, optional and array", arguments: TransportKind.allCases)
  func okForEveryType(kind: TransportKind) async throws {
    let server = try await launch()
    defer { server.stop() }
    let client = client(server, kind)
    #expect(try await client.send(Endpoint<String>(.get, "/text")) == "hello")
    #expect(try await client.send(Endpoint<Int>(.get, "/number")) == 42)
    #expect(try await client.send(Endpoint<[Int]>(.get, "/list")) == [1, 2, 3])
    #expect(try await client.send(Endpoint<Int?>(.get, "/none")) == nil)
    let raw = makeClient(server.baseURL, kind.make())
    #expect(try await raw.send(Endpoint<String>(.get, "/text")) == #"{"status":"OK","result":"hello"}"#)
  }

  @Test(
    "ISO-8859-1 text decodes to café crème; an HTML 502 is a status error, not a decoding error",
    arguments: TransportKind.allCases)
  func charsetAndHTMLError(kind: TransportKind) async throws {
    let server = try await launch()
    let latin1 = Data([0x63, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65]).base64EncodedString()
    try await server.stub(
      .get("/latin1").willReturn(
        responseJSON:
          #"{"status":200,"base64Body":"\#(latin1)","headers":{"Content-Type":"text/plain; charset=ISO-8859-1"}}"#
      ))
    try await server.stub(
      .get("/gateway").willReturn(
        responseJSON:
          #"{"status":502,"body":"<html><body>Bad Gateway</body></html>","headers":{"Content-Type":"text/html"}}"#
      ))
    defer { server.stop() }
    let raw = makeClient(server.baseURL, kind.make())
    #expect(try await raw.send(Endpoint<String>(.get, "/latin1")) == "café crème")
    let error = await apiError { () async throws(APIError) in
      try await client(server, kind).send(Endpoint<Item>(.get, "/gateway"))
    }
    guard case .unacceptableStatus(let response, let application)? = error else {
      Issue.record("expected .unacceptableStatus, got \(String(describing: error))")
      return
    }
    #expect(response.statusCode == 502)
    #expect(application == nil)
  }

  @Test(
    "charsets by their IANA names from the platform; an unknown charset is a decoding error naming it",
    arguments: TransportKind.allCases)
  func charsetNames(kind: TransportKind) async throws {
    let server = try await launch()
    defer { server.stop() }
    // "€ 5" in Windows-1252 (0x80 is € there, a control character in ISO-8859-1).
    let cp1252 = Data([0x80, 0x20, 0x35]).base64EncodedString()
    try await server.stub(
      .get("/cp1252").willReturn(
        responseJSON:
          #"{"status":200,"base64Body":"\#(cp1252)","headers":{"Content-Type":"text/plain; charset=windows-1252"}}"#
      ))
    try await server.stub(
      .get("/klingon").willReturn(
        responseJSON:
          #"{"status":200,"body":"x","headers":{"Content-Type":"text/plain; charset=x-klingon-9"}}"#))
    let raw = makeClient(server.baseURL, kind.make())
    #expect(try await raw.send(Endpoint<String>(.get, "/cp1252")) == "€ 5")
    let error = await apiError { () async throws(APIError) in
      try await raw.send(Endpoint<String>(.get, "/klingon"))
    }
    guard case .decoding(let failure, let response)? = error else {
      Issue.record("expected .decoding, got \(String(describing: error))")
      return
    }
    #expect(failure.reason.contains("x-klingon-9"))
    #expect(response.statusCode == 200)
  }

  @Test(
    "a 700 ms timeout with default retries stops at the overall deadline and says so",
    arguments: TransportKind.allCases)
  func overallDeadline(kind: TransportKind) async throws {
    let server = try await launch()
    defer { server.stop() }
    try await server.stub(.get("/slow").willReturn(json: #"{"id":1}"#, delayMilliseconds: 5000))
    let client = APIClient(
      baseURL: server.baseURL, retryPolicy: .default, transport: kind.make(), timeout: .milliseconds(700))
    let (error, elapsed) = await timedError { () async throws(APIError) in
      try await client.send(Endpoint<Item>(.get, "/slow"))
    }
    guard case .deadlineExceeded(let report)? = error else {
      Issue.record("expected .deadlineExceeded, got \(String(describing: error))")
      return
    }
    #expect(report.attempts == 1)
    #expect(report.totalLimit == .milliseconds(700))
    // Before the 5 s delay, and long before the 3 attempts of the old behaviour.
    #expect(elapsed >= 0.63 && elapsed < 5, "elapsed \(elapsed) s")
    let text = error?.description ?? ""
    #expect(text.contains("1 attempt") && text.contains("700 ms overall"), "\(text)")

    // With room for retries: 3 attempts of 400 ms inside a 10 s deadline, then the report counts them.
    let retrying = APIClient(
      baseURL: server.baseURL, retryPolicy: RetryPolicy(maxRetries: 2, baseDelay: .milliseconds(50)),
      transport: kind.make(), timeout: .milliseconds(400), totalTimeout: .seconds(10))
    let (again, elapsedAgain) = await timedError { () async throws(APIError) in
      try await retrying.send(Endpoint<Item>(.get, "/slow"))
    }
    guard case .deadlineExceeded(let report3)? = again else {
      Issue.record("expected .deadlineExceeded, got \(String(describing: again))")
      return
    }
    #expect(report3.attempts == 3)
    #expect(elapsedAgain >= 1.2 && elapsedAgain < 5, "elapsed \(elapsedAgain) s")
    #expect(again?.description.contains("3 attempts") == true)
  }

  @Test("a body over the socket transport's limit is .responseTooLarge naming the limit")
  func sizeLimit() async throws {
    let server = try await launch()
    defer { server.stop() }
    let big = String(repeating: "x", count: 2 << 20)
    try await server.stub(.get("/big").willReturn(responseJSON: #"{"status":200,"body":"\#(big)"}"#))
    let transport = SocketTransport(limits: ParserLimits(maxBodyBytes: 1 << 20))
    let client = makeClient(server.baseURL, transport)
    let error = await apiError { () async throws(APIError) in
      try await client.send(Endpoint<Data>(.get, "/big"))
    }
    guard case .responseTooLarge(_, let limit)? = error else {
      Issue.record("expected .responseTooLarge, got \(String(describing: error))")
      return
    }
    #expect(limit == 1 << 20)
    #expect(error?.description.contains("1 MiB") == true, "\(error?.description ?? "")")
    // The same body under the default limit (64 MiB) arrives whole.
    #expect(
      try await makeClient(server.baseURL, SocketTransport()).send(Endpoint<Data>(.get, "/big")).count == 2
        << 20)
  }
}
