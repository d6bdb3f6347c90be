#if os(Linux)
  import ClientKit
  import Foundation
  import HTTPCore
  import Testing

  /// A WebSocket echo server written with Python's `websockets` package (an independent RFC 6455
  /// implementation; Tests/setup.sh installs it), run as a child process on a free port.
  final class PythonWebSocketServer: Sendable {
    let process: Process
    let port: Int

    static let script = """
      import asyncio, sys, websockets
      async def handler(ws, path=None):
          async for message in ws:
              if message == "close-4001":
                  await ws.close(4001, "bye now")
                  return
              if message == "subprotocol":
                  await ws.send(ws.subprotocol or "none")
              elif message == "ping-me":
                  await (await ws.ping(b"from-server"))
                  await ws.send("pong received")
              else:
                  await ws.send(message)
      def select(connection, offered):
          # The server's preference among those offered; none offered is accepted without one (the
          # default selection answers 400 when the server has subprotocols and the client offers none).
          return next((p for p in ["chat.v2", "chat.v1"] if p in offered), None)
      async def main():
          async with websockets.serve(handler, "127.0.0.1", 0, select_subprotocol=select,
                                      ping_interval=None) as server:
              print(server.sockets[0].getsockname()[1], flush=True)
              await asyncio.Future()
      asyncio.run(main())
      """

    /// A peer that completes the opening handshake (Python's standard library only), then reads and
    /// discards every byte and never answers a close frame; when the client closes TCP it prints
    /// `eof first=XX` (XX the first byte it received, in hex: 88 for a close frame) and exits. With
    /// `HANG_UP_ON_CLOSE = True` it closes TCP instead as soon as bytes arrive, without a close frame.
    static let silentPeerScript = """
      import base64, hashlib, socket, sys
      HANG_UP_ON_CLOSE = False
      server = socket.socket()
      server.bind(("127.0.0.1", 0))
      server.listen(1)
      print(server.getsockname()[1], flush=True)
      connection, _ = server.accept()
      head = b""
      while b"\\r\\n\\r\\n" not in head:
          chunk = connection.recv(4096)
          if not chunk:
              sys.exit(0)
          head += chunk
      key = next(line.split(b":", 1)[1].strip() for line in head.split(b"\\r\\n")
                 if line.lower().startswith(b"sec-websocket-key:"))
      accept = base64.b64encode(hashlib.sha1(key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
      connection.sendall(b"HTTP/1.1 101 Switching Protocols\\r\\nUpgrade: websocket\\r\\n"
                         b"Connection: Upgrade\\r\\nSec-WebSocket-Accept: " + accept + b"\\r\\n\\r\\n")
      received = b""
      while True:
          chunk = connection.recv(4096)
          if not chunk:
              break
          received += chunk
          if HANG_UP_ON_CLOSE:
              print("hung up first=%02x" % received[0], flush=True)
              connection.close()
              sys.exit(0)
      print("eof first=%02x" % (received[0] if received else 0), flush=True)
      """

    private let output: FileHandle

    init(script: String = PythonWebSocketServer.script) throws {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
      process.arguments = ["python3", "-c", script]
      let output = Pipe()
      process.standardOutput = output
      try process.run()
      var line = Data()
      while !line.contains(UInt8(ascii: "\n")) {
        let chunk = output.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        line.append(chunk)
      }
      guard
        let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
      else {
        process.terminate()
        throw POSIXError(.EIO)
      }
      self.process = process
      self.port = port
      self.output = output.fileHandleForReading
    }

    /// The next line the script prints (waits for it; empty when the script exited first).
    func nextLine() -> String {
      var line = Data()
      while !line.contains(UInt8(ascii: "\n")) {
        let chunk = output.availableData
        if chunk.isEmpty { break }
        line.append(chunk)
      }
      return String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// SIGKILL, then waits: a child of the test process inherits its blocked signals (SIGTERM among
    /// them), so `terminate()` never ended the server and `waitUntilExit()` hung the first test.
    func stop() {
      kill(process.processIdentifier, SIGKILL)
      while process.isRunning { usleep(10_000) }
    }

    func client() -> APIClient {
      APIClient(baseURL: URL(string: "http://127.0.0.1:\(port)")!, transport: SocketTransport())
    }
  }

  struct ChatMessage: Codable, Sendable, Equatable {
    let user: String
    let text: String
    let sequence: Int
  }

  /// ClientKit's WebSocket client (the socket transport, HTTPCore's endpoint) against Python's
  /// `websockets`: handshake and subprotocol, text and binary echo, a Codable round trip, the server's
  /// close code, the client's close, pings both ways.
  @Suite("WebSocketClient", .serialized)
  struct WebSocketClientTests {
    let endpoint = Endpoint<EmptyResponse>(.get, "/chat")

    @Test("handshake with a subprotocol the server chooses, then text and binary echo")
    func echo() async throws {
      let server = try PythonWebSocketServer()
      defer { server.stop() }
      let socket = try await server.client().webSocket(for: endpoint, subprotocols: ["chat.v1"])
      #expect(socket.subprotocol == "chat.v1")
      var messages = socket.messages.makeAsyncIterator()
      try await socket.send(text: "héllo")
      #expect(try await messages.next() == .text("héllo"))
      try await socket.send(data: Data([0, 1, 2, 255]))
      #expect(try await messages.next() == .binary([0, 1, 2, 255]))
      let large = String(repeating: "x", count: 70_000)
      try await socket.send(text: large)
      #expect(try await messages.next() == .text(large))
      try await socket.send(text: "subprotocol")
      #expect(try await messages.next() == .text("chat.v1"))
      socket.close()
    }

    @Test("Codable values are sent as JSON text and decoded back")
    func codableRoundTrip() async throws {
      let server = try PythonWebSocketServer()
      defer { server.stop() }
      let socket = try await server.client().webSocket(for: endpoint)
      #expect(socket.subprotocol == nil)
      let sent = [
        ChatMessage(user: "aiko", text: "hi", sequence: 1),
        ChatMessage(user: "bruno", text: "yo", sequence: 2),
      ]
      for message in sent { try await socket.send(message) }
      var received: [ChatMessage] = []
      for try await message in socket.decoded(as: ChatMessage.self) {
        received.append(message)
        if received.count == 2 { break }
      }
      #expect(received == sent)
    }

    @Test("the server's close code and reason end the messages")
    func serverClose() async throws {
      let server = try PythonWebSocketServer()
      defer { server.stop() }
      let socket = try await server.client().webSocket(for: endpoint)
      try await socket.send(text: "close-4001")
      var received: [WebSocketMessage] = []
      for try await message in socket.messages { received.append(message) }
      #expect(received.isEmpty)
      #expect(socket.closeCode == 4001)
      #expect(socket.closeReason == "bye now")
      #expect(socket.isClosed)
    }

    @Test("the client's close is answered by the server and finishes the messages")
    func clientClose() async throws {
      let server = try PythonWebSocketServer()
      defer { server.stop() }
      let socket = try await server.client().webSocket(for: endpoint)
      socket.close(code: 4100, reason: "done")
      for try await _ in socket.messages {}
      #expect(socket.closeCode == 4100)
      await #expect(throws: APIError.self) { try await socket.send(text: "late") }
    }

    @Test("a peer that never answers the close: the client closes TCP after the close timeout")
    func closeTimeout() async throws {
      let server = try PythonWebSocketServer(script: PythonWebSocketServer.silentPeerScript)
      defer { server.stop() }
      let socket = try await server.client().webSocket(for: endpoint, closeTimeout: .milliseconds(300))
      socket.close(code: 4200, reason: "leaving")
      // The event: the stream ends without the peer's close frame, with no error.
      for try await _ in socket.messages {}
      #expect(socket.isClosed)
      #expect(socket.closeCode == nil)
      // The peer saw our close frame, then the end of the TCP connection.
      #expect(server.nextLine() == "eof first=88")
      await #expect(throws: APIError.self) { try await socket.send(text: "late") }
    }

    @Test("a peer that ends TCP without a close frame after ours ends the messages without an error")
    func peerHangsUpAfterOurClose() async throws {
      let script = PythonWebSocketServer.silentPeerScript.replacingOccurrences(
        of: "HANG_UP_ON_CLOSE = False", with: "HANG_UP_ON_CLOSE = True")
      let server = try PythonWebSocketServer(script: script)
      defer { server.stop() }
      // A close timeout far beyond the test: the stream must end because the peer hung up.
      let socket = try await server.client().webSocket(for: endpoint, closeTimeout: .seconds(3600))
      socket.close()
      for try await _ in socket.messages {}
      #expect(socket.isClosed)
      #expect(socket.closeCode == nil)
      #expect(server.nextLine() == "hung up first=88")
    }

    @Test("pings: the client's ping keeps the connection working, the server's ping is answered")
    func pings() async throws {
      let server = try PythonWebSocketServer()
      defer { server.stop() }
      let socket = try await server.client().webSocket(for: endpoint)
      var messages = socket.messages.makeAsyncIterator()
      try await socket.ping(Data("are you there".utf8))
      try await socket.send(text: "after ping")
      #expect(try await messages.next() == .text("after ping"))
      try await socket.send(text: "ping-me")
      #expect(try await messages.next() == .text("pong received"))
      socket.close()
    }

    @Test("a server that is not a WebSocket server fails the handshake with its status")
    func refusedHandshake() async throws {
      let server = try LoopbackServer { c in
        guard c.readRequest() != nil else { return }
        c.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
      }
      defer { server.stop() }
      let client = APIClient(baseURL: URL(string: server.url)!, transport: SocketTransport())
      let error = await apiError { () async throws(APIError) in try await client.webSocket(for: endpoint) }
      #expect(error?.statusCode == 404)
    }

    @Test("a wrong Sec-WebSocket-Accept fails the handshake as malformed")
    func wrongAccept() async throws {
      let server = try LoopbackServer { c in
        guard c.readRequest() != nil else { return }
        c.write(
          "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            + "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n")
        _ = c.waitForPeerClose(within: 10)
      }
      defer { server.stop() }
      let client = APIClient(baseURL: URL(string: server.url)!, transport: SocketTransport())
      let error = await apiError { () async throws(APIError) in try await client.webSocket(for: endpoint) }
      #expect(error?.caseName == "malformedResponse")
    }
  }
#endif
