import HTTPCore
import Testing

@testable import Mappings
@testable import MockServer

/// The dashboard feed's bookkeeping without sockets: replay after `Last-Event-ID`, gaps, per-viewer
/// bounds and drop notices (the socket behaviour is in RobustnessTests/EventStreamTests).
@Suite("Dashboard: serve event hub")
struct ServeEventHubTests {
  static func entry(_ k: Int) -> JournalEntry {
    JournalEntry(
      id: "id-\(k)", request: HTTPRequest(head: HTTPRequestHead(method: .get, target: "/r/\(k)")),
      clientAddress: "127.0.0.1:1", isTLS: false, clientCertificateSubject: nil, loggedAt: Double(k),
      stubID: nil, nearMisses: [], responseStatus: 404, served: true, durationMilliseconds: 0)
  }

  static func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

  static func hub(ring: Int = 4, queue: Int = 3, viewers: Int = 2) -> ServeEventHub {
    ServeEventHub(
      store: StubStore(fixtures: FixtureSet(), fixturesDirectory: nil), ringCapacity: ring,
      viewerQueueCapacity: queue, maxViewers: viewers)
  }

  @Test func nothingIsKeptBeforeTheFirstViewer() throws {
    let hub = ServeEventHubTests.hub()
    hub.publish(ServeEventHubTests.entry(1))
    #expect(hub.lastEventID == 0)
    guard case .subscribed(let viewer) = hub.subscribe(lastEventID: nil, heartbeatMilliseconds: 1000) else {
      Issue.record("not subscribed")
      return
    }
    #expect(ServeEventHubTests.text(viewer.initial) == "retry: 2000\n: connected\n\n")
    viewer.cancel()
  }

  @Test func replayAfterLastEventIDAndGaps() throws {
    let hub = ServeEventHubTests.hub()
    guard case .subscribed(let first) = hub.subscribe(lastEventID: nil, heartbeatMilliseconds: 1000) else {
      Issue.record("not subscribed")
      return
    }
    first.cancel()
    for k in 1...6 { hub.publish(ServeEventHubTests.entry(k)) }  // ring of 4 keeps ids 3...6
    #expect(hub.lastEventID == 6)
    guard case .subscribed(let again) = hub.subscribe(lastEventID: 4, heartbeatMilliseconds: 1000) else {
      Issue.record("not subscribed")
      return
    }
    let replay = ServeEventHubTests.text(again.initial)
    #expect(replay.contains("id: 5\nevent: request\ndata: {") && replay.contains("id: 6\n"))
    #expect(!replay.contains("id: 4\n") && !replay.contains("id: 3\n"))
    again.cancel()
    guard case .subscribed(let late) = hub.subscribe(lastEventID: 1, heartbeatMilliseconds: 1000) else {
      Issue.record("not subscribed")
      return
    }
    let gap = ServeEventHubTests.text(late.initial)
    #expect(gap.contains("event: dropped\ndata: {\"count\":1,\"reason\":\"replay\"}\n\n"))
    #expect(gap.contains("id: 3\n") && gap.contains("id: 6\n"))
    late.cancel()
    // An id this run never sent (another server's): the kept events, as for a new viewer.
    guard case .subscribed(let foreign) = hub.subscribe(lastEventID: 99, heartbeatMilliseconds: 1000) else {
      Issue.record("not subscribed")
      return
    }
    #expect(ServeEventHubTests.text(foreign.initial).contains("id: 3\n"))
    foreign.cancel()
  }

  @Test func aFullQueueDropsAndTellsTheViewer() throws {
    let hub = ServeEventHubTests.hub(queue: 3)
    guard case .subscribed(let viewer) = hub.subscribe(lastEventID: nil, heartbeatMilliseconds: 1000) else {
      Issue.record("not subscribed")
      return
    }
    for k in 1...10 { hub.publish(ServeEventHubTests.entry(k)) }
    #expect(viewer.pendingCount == 3)
    #expect(hub.droppedCount == 7)
    // The first take starts with the subscription's initial bytes.
    let taken = ServeEventHubTests.text(viewer.take(maxBytes: 1 << 20).bytes)
    #expect(
      taken.hasPrefix(
        "retry: 2000\n: connected\n\nevent: dropped\ndata: {\"count\":7,\"reason\":\"slow\"}\n\n"))
    #expect(taken.contains("id: 1\n") && taken.contains("id: 3\n") && !taken.contains("id: 4\n"))
    #expect(viewer.pendingCount == 0)
    // One frame at least per take, then at most about maxBytes.
    for k in 11...13 { hub.publish(ServeEventHubTests.entry(k)) }
    let one = ServeEventHubTests.text(viewer.take(maxBytes: 1).bytes)
    #expect(one.components(separatedBy: "event: request").count == 2)
    #expect(viewer.pendingCount == 2)
    viewer.cancel()
    #expect(hub.viewerCount == 0)
  }

  @Test func viewersAreLimited() throws {
    let hub = ServeEventHubTests.hub(viewers: 2)
    var held: [EventStreamSubscription] = []
    for _ in 0..<2 {
      if case .subscribed(let v) = hub.subscribe(lastEventID: nil, heartbeatMilliseconds: 1000) {
        held.append(v)
      }
    }
    #expect(held.count == 2)
    guard case .tooManyViewers = hub.subscribe(lastEventID: nil, heartbeatMilliseconds: 1000) else {
      Issue.record("a third viewer was accepted")
      return
    }
    held[0].cancel()
    guard case .subscribed(let v) = hub.subscribe(lastEventID: nil, heartbeatMilliseconds: 1000) else {
      Issue.record("a freed place was not reused")
      return
    }
    v.cancel()
    held[1].cancel()
  }

  @Test func eventJSONFields() {
    var e = ServeEventHubTests.entry(1)
    e.stubID = "s1"
    e.responseStatus = nil
    e.fault = "CONNECTION_RESET_BY_PEER"
    e.addedDelayMilliseconds = 150
    e.durationMilliseconds = 151.26
    let json = ServeEventHub.eventJSON(e, stubName: "reset").serializedBytes(pretty: false)
    let text = String(decoding: json, as: UTF8.self)
    #expect(text.contains(#""status":null"#) && text.contains(#""matched":true"#))
    #expect(text.contains(#""stubName":"reset""#) && text.contains(#""latencyMs":151.3"#))
    #expect(text.contains(#""delayMs":150"#) && text.contains(#""fault":"CONNECTION_RESET_BY_PEER""#))
    #expect(ServeEventHub.tenths(.nan) == "0" && ServeEventHub.tenths(-1) == "0")
    #expect(ServeEventHub.tenths(1e300) == "1000000000000.0")
  }
}
