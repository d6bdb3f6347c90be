import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import TestSupport
import Testing

/// The transports that open WebSocket connections on Linux: ``SocketTransport`` and
/// ``AutomaticTransport`` (through its socket transport, `ws` and `wss` alike). `URLSessionTransport`'s
/// `URLSessionWebSocketTask` needs a libcurl built with WebSocket support, which Debian's is not.
enum WebSocketTransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
  case socket
  case automatic

  var testDescription: String { rawValue }

  func make(trust: TrustConfiguration = .system) -> any Transport {
    switch self {
    case .socket: return SocketTransport(trust: trust)
    case .automatic: return AutomaticTransport(trust: trust)
    }
  }
}

/// A chat message of the stub below, sent and received as JSON text.
struct ChatLine: Codable, Sendable, Equatable {
  var user: String
  var text: String
  var sequence: Int
}

/// An `x-websocket` stub (docs/streaming.md §2) exercising what the client must surface: messages on
/// open (a template, a binary one, a JSON one), replies chosen by message mappings (text, JSON built
/// from the received message, binary), and an `x-close` action with its code and reason.
private let chatStub = #"""
  {
    "name": "client chat",
    "request": { "method": "GET", "urlPath": "/ws/client" },
    "response": {
      "x-websocket": {
        "subprotocol": "chat.v1",
        "messages": [
          { "text": "welcome, {{request.query.user}}" },
          { "binary": "AAEC/w==" },
          { "text": "{\"user\":\"server\",\"text\":\"ready\",\"sequence\":0}" }
        ],
        "messageMappings": [
          { "name": "ping",
            "trigger": { "type": "message", "message": { "body": { "equalTo": "ping" } } },
            "actions": [ { "type": "send", "message": { "body": "pong" } } ] },
          { "name": "chat",
            "trigger": { "type": "message", "message": { "body": { "matchesJsonPath": "$.user" } } },
            "actions": [ { "type": "send", "message": { "body": { "data":
              "{\"user\":\"server\",\"text\":\"got {{jsonPath message.body '$.text'}}\",\"sequence\":{{jsonPath message.body '$.sequence'}}}"
            } } } ] },
          { "name": "upload",
            "trigger": { "type": "message", "message": { "body": { "binaryEqualTo": "3q2+7w==" } } },
            "actions": [ { "type": "send", "message": { "body": { "base64Data": "AAEC/w==" } } } ] },
          { "name": "bye",
            "trigger": { "type": "message", "message": { "body": { "equalTo": "bye" } } },
            "actions": [ { "type": "send", "message": { "body": "see you" } },
                         { "type": "x-close", "code": 4000, "reason": "bye" } ] }
        ]
      }
    }
  }
  """#

private let chatEndpoint = Endpoint<EmptyResponse>(
  .get, "/ws/client", query: [URLQueryItem(name: "user", value: "aiko")])

/// ClientKit's WebSocket client against MockServer's own `x-websocket` stubs, end to end over real
/// sockets: in process (plain and TLS) and the shipped binary with the bundled fixtures.
@Suite("Contract: WebSocket client against x-websocket stubs")
struct WebSocketContractTests {
  /// The conversation every test below has with ``chatStub``: the messages on open in order, a mapped
  /// text reply, a Codable round trip, a binary reply, then the server's `x-close` (4000 "bye").
  func converse(with client: APIClient) async throws {
    let socket = try await client.webSocket(for: chatEndpoint, subprotocols: ["chat.v1"])
    #expect(socket.subprotocol == "chat.v1")
    var messages = socket.messages.makeAsyncIterator()
    // On open, in order.
    #expect(try await messages.next() == .text("welcome, aiko"))
    #expect(try await messages.next() == .binary([0, 1, 2, 255]))
    let ready = try #require(try await messages.next())
    guard case .text(let readyText) = ready else {
      Issue.record("expected a text message, got \(ready)")
      return
    }
    #expect(
      try JSONDecoder().decode(ChatLine.self, from: Data(readyText.utf8))
        == ChatLine(user: "server", text: "ready", sequence: 0))
    // A reply chosen by a message mapping.
    try await socket.send(text: "ping")
    #expect(try await messages.next() == .text("pong"))
    // A Codable value out, the mapping's JSON reply built from it back.
    try await socket.send(ChatLine(user: "aiko", text: "hi", sequence: 7))
    let reply = try #require(try await messages.next())
    guard case .text(let replyText) = reply else {
      Issue.record("expected a text message, got \(reply)")
      return
    }
    #expect(
      try JSONDecoder().decode(ChatLine.self, from: Data(replyText.utf8))
        == ChatLine(user: "server", text: "got hi", sequence: 7))
    // Binary out, binary back.
    try await socket.send(data: Data([0xDE, 0xAD, 0xBE, 0xEF]))
    #expect(try await messages.next() == .binary([0, 1, 2, 255]))
    // The server's x-close: the reply, then the close code and reason end the stream.
    try await socket.send(text: "bye")
    #expect(try await messages.next() == .text("see you"))
    #expect(try await messages.next() == nil)
    #expect(socket.isClosed)
    #expect(socket.closeCode == 4000)
    #expect(socket.closeReason == "bye")
    await #expect(throws: APIError.self) { try await socket.send(text: "late") }
  }

  @Test(
    "ws://: messages on open, mapped replies, Codable, binary, the server's close",
    arguments: WebSocketTransportKind.allCases)
  func plain(kind: WebSocketTransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    _ = try server.stub(json: chatStub)
    try await converse(with: APIClient(baseURL: server.baseURL, retryPolicy: .never, transport: kind.make()))
    // The handshake was journaled as a 101.
    #expect(
      server.requests.contains { $0.request.head.rawPath.hasPrefix("/ws/client") && $0.responseStatus == 101 }
    )
  }

  @Test(
    "wss://: the same conversation over TLS, trusting the server's certificate",
    arguments: WebSocketTransportKind.allCases)
  func secure(kind: WebSocketTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    _ = try server.stub(json: chatStub)
    let trust = TrustConfiguration.onlyCertificates(try #require(server.certificatePEM))
    let client = APIClient(
      baseURL: try #require(server.httpsBaseURL), retryPolicy: .never, transport: kind.make(trust: trust))
    try await converse(with: client)
    #expect(server.requests.contains { $0.isTLS && $0.responseStatus == 101 })
  }

  /// Sends and reads at once over TLS: the writes (from a task) and the reader thread share one OpenSSL
  /// session, which must never be used by two threads at once.
  @Test("wss://: 300 messages sent while their replies are read", arguments: WebSocketTransportKind.allCases)
  func secureInterleaved(kind: WebSocketTransportKind) async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    _ = try server.stub(json: chatStub)
    let trust = TrustConfiguration.onlyCertificates(try #require(server.certificatePEM))
    let client = APIClient(
      baseURL: try #require(server.httpsBaseURL), retryPolicy: .never, transport: kind.make(trust: trust))
    let socket = try await client.webSocket(for: chatEndpoint)
    let count = 300
    let sender = Task {
      for sequence in 1...count {
        try await socket.send(ChatLine(user: "aiko", text: "n\(sequence)", sequence: sequence))
      }
    }
    var sequences: [Int] = []
    // The three messages on open come first (a text, a binary and the "ready" line, sequence 0).
    for try await message in socket.messages {
      guard case .text(let text) = message,
        let line = try? JSONDecoder().decode(ChatLine.self, from: Data(text.utf8)), line.sequence > 0
      else { continue }
      sequences.append(line.sequence)
      if sequences.count == count { break }
    }
    try await sender.value
    #expect(sequences == Array(1...count))
  }

  @Test("wss:// with a certificate the client does not trust fails the handshake as a TLS failure")
  func untrustedCertificate() async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    _ = try server.stub(json: chatStub)
    let client = APIClient(
      baseURL: try #require(server.httpsBaseURL), retryPolicy: .never, transport: SocketTransport())
    let error = await apiError { () async throws(APIError) in try await client.webSocket(for: chatEndpoint) }
    #expect(error?.kind == .tlsFailure, "\(String(describing: error))")
  }

  @Test(
    "the client's close is answered by the stub and ends the stream",
    arguments: WebSocketTransportKind.allCases)
  func clientClose(kind: WebSocketTransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    _ = try server.stub(json: chatStub)
    let client = APIClient(baseURL: server.baseURL, retryPolicy: .never, transport: kind.make())
    let socket = try await client.webSocket(for: chatEndpoint)
    #expect(socket.subprotocol == nil)  // not offered, so not chosen
    socket.close(code: 4100, reason: "done")
    for try await _ in socket.messages {}
    #expect(socket.closeCode == 4100)  // the server's echo of our code
  }

  @Test("the bundled chat socket through the mockserver binary: welcome, echo, bye")
  func bundledChatSocket() async throws {
    let server = try MockServerProcess.launch(arguments: ["--fixtures", bundledFixtures, "--quiet"])
    defer { server.stop() }
    let client = APIClient(baseURL: server.baseURL, retryPolicy: .never, transport: SocketTransport())
    let socket = try await client.webSocket(
      for: Endpoint<EmptyResponse>(.get, "/ws/echo", query: [URLQueryItem(name: "user", value: "bruno")]))
    var received: [WebSocketMessage] = []
    try await socket.send(text: "hello")
    try await socket.send(text: "bye")
    for try await message in socket.messages { received.append(message) }
    #expect(received == [.text("welcome, bruno"), .text("echo: hello"), .text("bye, bruno")])
    #expect(socket.closeCode == 1000)
    #expect(socket.closeReason == "bye")
  }

  /// swift-corelibs-foundation's `URLSessionWebSocketTask` runs over libcurl, which has WebSocket support
  /// only when built with it (Debian 12's 7.88 is not): then the client says so instead of a lost
  /// connection; with a libcurl that has it, the conversation holds.
  @Test("URLSessionTransport: the conversation, or a clear error where libcurl has no WebSocket support")
  func urlSession() async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    _ = try server.stub(json: chatStub)
    let client = APIClient(baseURL: server.baseURL, retryPolicy: .never, transport: URLSessionTransport())
    let socket = try await client.webSocket(for: chatEndpoint, subprotocols: ["chat.v1"])
    var messages = socket.messages.makeAsyncIterator()
    do {
      let first = try await messages.next()
      #expect(first == .text("welcome, aiko"))
    } catch let error as APIError {
      #expect(error.kind == .invalidRequest, "\(error)")
      #expect("\(error)".contains("WebSockets not supported by libcurl"), "\(error)")
    }
  }
}
