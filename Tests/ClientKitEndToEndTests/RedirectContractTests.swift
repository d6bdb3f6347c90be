import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import Testing

@Suite("Redirects over SocketTransport (RFC 9110 §15.4): any Location case, methods, credentials, limits")
struct RedirectContractTests {
  func send(
    _ transport: SocketTransport, _ method: HTTPMethod, _ url: URL, body: String = "",
    headers: HTTPHeaders = [:]
  )
    async throws -> TransportResponse
  {
    try await transport.send(
      TransportRequest(
        method: method, url: url, headers: headers, body: Data(body.utf8), timeout: .seconds(5)),
      progress: nil)
  }

  @Test func lowerCaseLocationIsFollowed() async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(
      json:
        #"{"request":{"method":"GET","urlPath":"/old"},"response":{"status":302,"headers":{"location":"/new"}}}"#
    )
    try server.stub(.get("/new").willReturn(status: 200, json: #"{"status":"OK"}"#))
    let response = try await send(SocketTransport(), .get, server.baseURL.appendingPathComponent("old"))
    #expect(response.statusCode == 200)
    #expect(String(decoding: response.body, as: UTF8.self) == #"{"status":"OK"}"#)
    try server.verify(count: 1, .get("/old"))
    try server.verify(count: 1, .get("/new"))
  }

  @Test func methodRules() async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    for (code, path) in [(303, "/see-other"), (307, "/temporary"), (302, "/found")] {
      try server.stub(
        json:
          #"{"request":{"method":"POST","urlPath":"\#(path)"},"response":{"status":\#(code),"headers":{"Location":"/target"}}}"#
      )
    }
    try server.stub(.any("/target").willReturn(status: 200))
    let transport = SocketTransport()
    for path in ["see-other", "temporary", "found"] {
      let response = try await send(
        transport, .post, server.baseURL.appendingPathComponent(path), body: "payload")
      #expect(response.statusCode == 200)
    }
    let targets = server.requests.filter { $0.request.head.rawPath == "/target" }
    #expect(targets.map(\.request.method) == [.get, .post, .get])
    #expect(targets.map { String(decoding: $0.request.body, as: UTF8.self) } == ["", "payload", ""])
  }

  @Test func leavingTheOriginDropsCredentials() async throws {
    let a = try TestMockServer.start()
    let b = try TestMockServer.start()
    defer {
      a.stop()
      b.stop()
    }
    try a.stub(
      json:
        #"{"request":{"method":"GET","urlPath":"/go"},"response":{"status":301,"headers":{"Location":"\#(b.baseURL.absoluteString)/land"}}}"#
    )
    try b.stub(.get("/land").willReturn(status: 200))
    let response = try await send(
      SocketTransport(), .get, a.baseURL.appendingPathComponent("go"),
      headers: ["Authorization": "Bearer secret"])
    #expect(response.statusCode == 200)
    #expect(a.requests.first?.request.headers.first("Authorization") == "Bearer secret")
    #expect(b.requests.first?.request.headers.contains("Authorization") == false)
  }

  @Test func redirectsOffOrTooManyReturnTheRedirect() async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(
      json:
        #"{"request":{"method":"GET","urlPath":"/loop"},"response":{"status":302,"headers":{"LOCATION":"/loop"}}}"#
    )
    let off = try await send(
      SocketTransport(followsRedirects: false), .get, server.baseURL.appendingPathComponent("loop"))
    #expect(off.statusCode == 302)
    #expect(off.headers.first("location") == "/loop")
    let looping = try await send(
      SocketTransport(maxRedirects: 3), .get, server.baseURL.appendingPathComponent("loop"))
    #expect(looping.statusCode == 302)
    try server.verify(count: 5, .get("/loop"))
  }
}
