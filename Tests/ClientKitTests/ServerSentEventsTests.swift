import ClientKit
import Foundation
import HTTPCore
import Synchronization
import Testing

/// `APIClient.events(for:)` against a scripted loopback server, over both streaming transports: events
/// delivered as they arrive, reconnection after the server's `retry` with `Last-Event-ID`, 204 ending the
/// stream, failures that are not retried, and cancellation closing the connection.
@Suite("ServerSentEvents", .serialized)
struct ServerSentEventsTests {
  static let transports: [String] = ["socket", "urlsession"]

  func transport(_ name: String) -> any Transport {
    #if os(Linux)
      if name == "socket" { return SocketTransport() }
    #endif
    return URLSessionTransport()
  }

  func client(_ server: LoopbackServer, _ transport: String, sleeps: SleepRecorder = SleepRecorder())
    -> APIClient
  {
    APIClient(
      baseURL: URL(string: server.url)!, transport: self.transport(transport),
      sleep: { try await sleeps.sleep($0) })
  }

  static let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
  static let chunkedHead =
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\nTransfer-Encoding: chunked\r\n\r\n"

  func chunk(_ text: String) -> String { String(text.utf8.count, radix: 16) + "\r\n" + text + "\r\n" }

  @Test("events arrive one by one while the response is still open (chunked)", arguments: transports)
  func eventsArriveAsSent(transport: String) async throws {
    let gate = Mutex<[String]>([])
    let server = try LoopbackServer { c in
      guard let request = c.readRequest() else { return }
      gate.withLock { $0.append(request.headers["accept"] ?? "") }
      c.write(Self.chunkedHead + chunk("event: greeting\nid: 1\ndata: hello\n\n"))
      // The second event is only written after the client received the first (the server waits on it).
      while gate.withLock({ $0.count }) < 2 { usleep(5_000) }
      c.write(chunk("data: a\ndata: b\n\n") + "0\r\n\r\n")
    }
    defer { server.stop() }
    let events = client(server, transport).events(
      for: Endpoint<EmptyResponse>(.get, "/feed"), configuration: EventStreamConfiguration(reconnects: false))
    var received: [ServerSentEvent] = []
    for try await event in events {
      received.append(event)
      if received.count == 1 { gate.withLock { $0.append("got first") } }
    }
    #expect(
      received == [
        ServerSentEvent(id: "1", event: "greeting", data: "hello"), ServerSentEvent(id: "1", data: "a\nb"),
      ])
    #expect(gate.withLock { $0.first } == "text/event-stream")
  }

  @Test(
    "after the response ends: waits the server's retry, reconnects with Last-Event-ID; 204 ends the stream",
    arguments: transports)
  func reconnection(transport: String) async throws {
    let seen = Mutex<[String]>([])
    let server = try LoopbackServer { c in
      guard let request = c.readRequest() else { return }
      let lastID = request.headers["last-event-id"] ?? "(none)"
      seen.withLock { $0.append(lastID) }
      switch lastID {
      case "(none)": c.write(Self.head + "retry: 40\nid: 1\ndata: one\n\n")
      case "1": c.write(Self.head + "id: 2\ndata: two\n\ndata: cut")
      default: c.write("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
      }
    }
    defer { server.stop() }
    let sleeps = SleepRecorder()
    var received: [ServerSentEvent] = []
    for try await event in client(server, transport, sleeps: sleeps).events(
      for: Endpoint<EmptyResponse>(.get, "/feed"))
    {
      received.append(event)
    }
    #expect(received.map(\.data) == ["one", "two"])
    #expect(received.map(\.id) == ["1", "2"])
    #expect(received.first?.retry == .milliseconds(40))
    #expect(seen.withLock { $0 } == ["(none)", "1", "2"])
    #expect(sleeps.recorded == [.milliseconds(40), .milliseconds(40)])
  }

  @Test(
    "a configured last event ID is sent on the first connection; the default reconnection time applies",
    arguments: transports)
  func configuredLastEventID(transport: String) async throws {
    let seen = Mutex<[String]>([])
    let server = try LoopbackServer { c in
      guard let request = c.readRequest() else { return }
      seen.withLock { $0.append(request.headers["last-event-id"] ?? "(none)") }
      if seen.withLock({ $0.count }) == 1 {
        c.write(Self.head + "data: resumed\n\n")
      } else {
        c.write("HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
      }
    }
    defer { server.stop() }
    let sleeps = SleepRecorder()
    let configuration = EventStreamConfiguration(reconnectionTime: .milliseconds(1500), lastEventID: "41")
    var received: [ServerSentEvent] = []
    for try await event in client(server, transport, sleeps: sleeps).events(
      for: Endpoint<EmptyResponse>(.get, "/feed"), configuration: configuration)
    {
      received.append(event)
    }
    #expect(received == [ServerSentEvent(id: "41", data: "resumed")])
    #expect(seen.withLock { $0 } == ["41", "41"])
    #expect(sleeps.recorded == [.milliseconds(1500)])
  }

  @Test("a status other than 200 or 204 fails the stream without reconnecting", arguments: transports)
  func errorStatusIsNotRetried(transport: String) async throws {
    let server = try LoopbackServer { c in
      guard c.readRequest() != nil else { return }
      c.write("HTTP/1.1 503 Service Unavailable\r\nContent-Length: 4\r\nConnection: close\r\n\r\nbusy")
    }
    defer { server.stop() }
    let sleeps = SleepRecorder()
    var caught: (any Error)?
    do {
      for try await _ in client(server, transport, sleeps: sleeps).events(
        for: Endpoint<EmptyResponse>(.get, "/feed"))
      {}
    } catch {
      caught = error
    }
    #expect((caught as? APIError)?.statusCode == 503)
    #expect(server.accepted.count == 1)
    #expect(sleeps.recorded.isEmpty)
  }

  @Test("a 200 that is not text/event-stream fails the stream as malformed", arguments: transports)
  func wrongContentType(transport: String) async throws {
    let server = try LoopbackServer { c in
      guard c.readRequest() != nil else { return }
      c.write(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
      )
    }
    defer { server.stop() }
    var caught: (any Error)?
    do {
      for try await _ in client(server, transport).events(for: Endpoint<EmptyResponse>(.get, "/feed")) {}
    } catch {
      caught = error
    }
    #expect((caught as? APIError)?.caseName == "malformedResponse")
    #expect(server.accepted.count == 1)
  }

  @Test("connection failures are retried up to maxReconnectionAttempts, then thrown")
  func refusedConnections() async throws {
    let port = LoopbackServer.closedPort()
    let sleeps = SleepRecorder()
    let client = APIClient(
      baseURL: URL(string: "http://127.0.0.1:\(port)")!, transport: transport("socket"),
      sleep: { try await sleeps.sleep($0) })
    var caught: (any Error)?
    do {
      for try await _ in client.events(
        for: Endpoint<EmptyResponse>(.get, "/feed"),
        configuration: EventStreamConfiguration(
          reconnectionTime: .milliseconds(7), maxReconnectionAttempts: 2))
      {}
    } catch {
      caught = error
    }
    #expect((caught as? APIError)?.caseName == "cannotConnect")
    #expect(sleeps.recorded == [.milliseconds(7), .milliseconds(7)])
  }

  @Test("leaving the loop closes the connection while the server still streams", arguments: transports)
  func cancellationClosesConnection(transport: String) async throws {
    let hangUps = HangUps()
    let server = try LoopbackServer { c in
      guard c.readRequest() != nil else { return }
      c.write(Self.chunkedHead + chunk("data: first\n\n"))
      hangUps.wait(c, within: 60)
    }
    defer { server.stop() }
    var received: [String] = []
    for try await event in client(server, transport).events(for: Endpoint<EmptyResponse>(.get, "/feed")) {
      received.append(event.data)
      break
    }
    #expect(received == ["first"])
    #expect(await hangUps.clientHungUpFirst())
  }

  @Test("cancelling the consuming task closes the connection", arguments: transports)
  func taskCancellation(transport: String) async throws {
    let hangUps = HangUps()
    let server = try LoopbackServer { c in
      guard c.readRequest() != nil else { return }
      c.write(Self.chunkedHead + chunk("data: first\n\n"))
      hangUps.wait(c, within: 60)
    }
    defer { server.stop() }
    let first = Counter()
    let events = client(server, transport).events(for: Endpoint<EmptyResponse>(.get, "/feed"))
    let consumer = Task {
      for try await _ in events { first.increment() }
    }
    while first.count == 0 { try await Task.sleep(for: .milliseconds(5)) }
    consumer.cancel()
    _ = await consumer.result
    #expect(await hangUps.clientHungUpFirst())
  }
}
