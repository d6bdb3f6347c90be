import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import TestSupport
import Testing

/// `APIClient.events(for:)` against the shipped `mockserver` binary's own event stream, the dashboard's
/// live request feed (`GET /__admin/events`: `retry: 2000`, one `event: request` per served request with
/// a decimal `id`, `Last-Event-ID` replaying what came after it). Over both transports.
@Suite("Contract: server-sent events from the mockserver binary")
struct ServerSentEventsContractTests {
  func launch() throws -> MockServerProcess {
    try MockServerProcess.launch(arguments: ["--fixtures", bundledFixtures, "--quiet"])
  }

  /// Reads `/__admin/events` in a task until cancelled, recording every event.
  func follow(_ server: MockServerProcess, _ kind: TransportKind, lastEventID: String = "") -> (
    Recorder<ServerSentEvent>, Task<Void, any Error>
  ) {
    let client = makeClient(server.baseURL, kind.make())
    let recorder = Recorder<ServerSentEvent>()
    let events = client.events(
      for: Endpoint<EmptyResponse>(.get, "/__admin/events"),
      configuration: EventStreamConfiguration(lastEventID: lastEventID))
    let task = Task {
      for try await event in events { recorder.append(event) }
    }
    return (recorder, task)
  }

  @Test(
    "each served request arrives as a 'request' event while the stream stays open",
    arguments: TransportKind.allCases)
  func liveFeed(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    // A new viewer first gets the requests served before it connected (the feed's replay): one such
    // request shows the stream is open; then two more, each expected as an event of its own.
    _ = try? await usersClient(server.baseURL, kind).send(Endpoint<User>(.get, "/api/v2/users/42"))
    let (recorder, task) = follow(server, kind)
    defer { task.cancel() }
    #expect(await eventually(within: .seconds(20)) { !recorder.all.isEmpty })
    let before = recorder.all.count
    _ = try await friendsClient(server.baseURL, kind).send(friendsList())
    _ = try await friendsClient(server.baseURL, kind).send(friendsList(page: 2))
    #expect(await eventually(within: .seconds(20)) { recorder.all.count >= before + 2 })
    let events = recorder.all
    #expect(events.allSatisfy { $0.event == "request" })
    #expect(events.allSatisfy { UInt64($0.id) != nil })
    #expect(events.suffix(2).allSatisfy { $0.data.contains("/friends") })
    let ids = events.compactMap { UInt64($0.id) }
    #expect(ids == ids.sorted() && Set(ids).count == ids.count)
  }

  @Test(
    "a stream opened with a last event ID gets only what came after it (the server's replay)",
    arguments: TransportKind.allCases)
  func resumeWithLastEventID(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    for path in ["/api/v2/users/42", "/api/v2/users/0", "/api/v2/users/42"] {
      _ = try? await usersClient(server.baseURL, kind).send(Endpoint<User>(.get, path))
    }
    let (all, first) = follow(server, kind)
    #expect(await eventually(within: .seconds(20)) { all.all.count >= 3 })
    first.cancel()
    let firstID = try #require(all.all.first?.id)
    let (resumed, second) = follow(server, kind, lastEventID: firstID)
    defer { second.cancel() }
    #expect(await eventually(within: .seconds(20)) { resumed.all.count >= 2 })
    #expect(resumed.all.prefix(2).map(\.id) == all.all.dropFirst().prefix(2).map(\.id))
    #expect(resumed.all.first?.data.contains("/api/v2/users/0") == true)
  }

  /// The bundled `x-sse` price feed (Fixtures/mappings/price-feed.json): three templated events, the last
  /// with `retry: 5000`; then the response ends, the client reconnects after the server's retry with
  /// `Last-Event-ID: 3`, nothing is left, and the server's 204 ends the stream (WHATWG HTML: a 204 stops
  /// reconnection), so the loop over the events finishes by itself.
  @Test(
    "an x-sse stub's events arrive in order and its 204 on reconnection ends the stream",
    arguments: TransportKind.allCases)
  func xSSEStubThenNoContentEndsTheStream(kind: TransportKind) async throws {
    let server = try launch()
    defer { server.stop() }
    let client = makeClient(server.baseURL, kind.make())
    var received: [ServerSentEvent] = []
    for try await event in client.events(for: Endpoint<EmptyResponse>(.get, "/api/v1/feeds/ACME")) {
      received.append(event)
    }
    #expect(received.map(\.id) == ["1", "2", "3"])
    #expect(received.map(\.event) == ["price", "price", "note"])
    #expect(received.first?.data == #"{"symbol":"ACME","price":100}"#)
    #expect(received.last?.data == "market closed\nsee you tomorrow")
    #expect(received.last?.retry == .milliseconds(5000))
    // The reconnection carried the last id and was answered 204.
    let data = try await adminClient(server.baseURL).send(Endpoint<Data>(.get, "/__admin/requests"))
    let entries =
      (try JSONSerialization.jsonObject(with: data) as? [String: Any])?["requests"] as? [[String: Any]] ?? []
    let feed = entries.filter {
      (($0["request"] as? [String: Any])?["url"] as? String) == "/api/v1/feeds/ACME"
    }
    let statuses = feed.compactMap { ($0["response"] as? [String: Any])?["status"] as? Int }.sorted()
    #expect(statuses == [200, 204], "\(feed)")
    let lastEventIDs = feed.compactMap { entry -> String? in
      let headers = (entry["request"] as? [String: Any])?["headers"] as? [String: Any]
      return headers?.first { $0.key.lowercased() == "last-event-id" }.map { "\($0.value)" }
    }
    #expect(lastEventIDs == ["3"], "\(feed)")
  }
}
