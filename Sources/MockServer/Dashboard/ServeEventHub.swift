import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// The live feed of serve events behind `GET /__admin/events` (the dashboard's request log), as
/// Server-Sent Events (WHATWG HTML, "Server-sent events": `text/event-stream`).
///
/// The journal hands every completed request to ``publish(_:)`` (on the event-loop thread that served
/// it). The hub frames it once (`id:`, `event: request`, one `data:` line of JSON, a blank line), keeps
/// the newest ``ringCapacity`` frames for replay, and offers the frame to every viewer. Nothing here
/// blocks or waits for a viewer: each viewer has a bounded queue (``viewerQueueCapacity`` frames); a full
/// queue drops the frame and counts the drop (the viewer is told how many with an `event: dropped`
/// before its next frame), so a slow or stalled viewer costs at most its queue and its connection's
/// bounded output buffer, never the serving of requests.
///
/// Until the first viewer subscribes, ``publish(_:)`` is one relaxed atomic load: a server nobody
/// watches pays nothing. The first subscription seeds the ring with the journal's retained entries, and
/// from then on events are kept in the ring, so the page shows requests made before it was opened, and a
/// viewer that reconnects with `Last-Event-ID` gets the events it missed (those still in the ring).
final class ServeEventHub: Sendable {
  /// Frames kept for replay to reconnecting viewers.
  let ringCapacity: Int
  /// Frames queued per viewer before new ones are dropped for it.
  let viewerQueueCapacity: Int
  /// Most simultaneous viewers; more get 503.
  let maxViewers: Int

  private struct State {
    /// The newest frames, oldest first.
    var ring: BoundedRing<(id: UInt64, frame: [UInt8])>
    /// Id of the next event (ids start at 1 per server run).
    var nextID: UInt64 = 1
    var viewers: [UInt64: EventStreamSubscription] = [:]
    var nextViewer: UInt64 = 1
    /// Where a stub id was last found in the table's stub list, to name stubs without a scan per event.
    var stubIndex: [String: Int] = [:]
  }

  private let state: Mutex<State>
  /// Set at the first subscription: from then on events are framed and kept.
  private let active = Atomic<Bool>(false)
  /// Frames dropped for slow viewers since start.
  private let droppedTotal = Atomic<Int>(0)
  private let store: StubStore

  init(store: StubStore, ringCapacity: Int = 512, viewerQueueCapacity: Int = 256, maxViewers: Int = 32) {
    self.store = store
    self.ringCapacity = max(1, ringCapacity)
    state = Mutex(State(ring: BoundedRing(capacity: ringCapacity)))
    self.viewerQueueCapacity = max(1, viewerQueueCapacity)
    self.maxViewers = max(1, maxViewers)
  }

  /// Viewers connected now.
  var viewerCount: Int { state.withLock { $0.viewers.count } }
  /// Frames dropped for slow viewers since start (each viewer's drops counted).
  var droppedCount: Int { droppedTotal.load(ordering: .relaxed) }
  /// Id of the newest event, 0 when none.
  var lastEventID: UInt64 { state.withLock { $0.nextID - 1 } }

  /// Frames and fans out one completed request (called by the journal, on any loop thread).
  func publish(_ entry: JournalEntry) {
    guard active.load(ordering: .relaxed) else { return }
    let stubName = entry.stubID.map { name(ofStub: $0) }
    let data = ServeEventHub.eventJSON(entry, stubName: stubName ?? nil).serializedBytes(pretty: false)
    let (frame, viewers) = state.withLock { s -> ([UInt8], [EventStreamSubscription]) in
      let id = s.nextID
      s.nextID += 1
      let f = ServeEventHub.frame(id: id, data: data)
      s.ring.append((id, f))
      return (f, Array(s.viewers.values))
    }
    for viewer in viewers where !viewer.offer(frame) {
      droppedTotal.wrappingAdd(1, ordering: .relaxed)
    }
  }

  /// One `request` event: `id:`, `event: request`, the JSON on one `data:` line, a blank line.
  static func frame(id: UInt64, data: [UInt8]) -> [UInt8] {
    var f: [UInt8] = []
    f.reserveCapacity(data.count + 40)
    f.append(contentsOf: "id: \(id)\nevent: request\ndata: ".utf8)
    f.append(contentsOf: data)
    f.append(contentsOf: "\n\n".utf8)
    return f
  }

  /// The outcome of a subscription request.
  enum Subscription {
    case subscribed(EventStreamSubscription)
    case tooManyViewers
  }

  /// Registers a viewer. Its first bytes (`retry:` and the replay) are prepared under the same lock that
  /// registers it, so no event is missed or sent twice between the replay and the live feed.
  /// - Parameters:
  ///   - lastEventID: the `Last-Event-ID` the viewer sent (reconnection): events after it still in the
  ///     ring are replayed. Nil (a new viewer): the ring is replayed whole, so the page starts with the
  ///     recent requests. An id that is not ours (a restarted server) replays the ring whole too.
  ///   - heartbeatMilliseconds: the interval of `:` comment lines that keep the connection alive.
  ///   - recent: the journal's retained entries, oldest first, asked for at the first subscription only:
  ///     events are kept from then on, so the page opened after a request (a 404 seen, then the
  ///     dashboard opened) still shows it, with its near misses.
  func subscribe(
    lastEventID: UInt64?, heartbeatMilliseconds: Int, recent: () -> [JournalEntry] = { [] }
  ) -> Subscription {
    // An entry completed between this and the seeding below may come twice (from the journal and
    // live); none is lost.
    let wasActive = active.exchange(true, ordering: .relaxed)
    let seed =
      wasActive
      ? []
      : recent().suffix(ringCapacity).map { entry in
        ServeEventHub.eventJSON(entry, stubName: entry.stubID.flatMap { name(ofStub: $0) })
          .serializedBytes(pretty: false)
      }
    return state.withLock { s in
      for data in seed {
        let id = s.nextID
        s.nextID += 1
        s.ring.append((id, ServeEventHub.frame(id: id, data: data)))
      }
      guard s.viewers.count < maxViewers else { return .tooManyViewers }
      var initial = Array("retry: 2000\n".utf8)
      let newest = s.nextID - 1
      var after: UInt64 = 0
      if let lastEventID, lastEventID <= newest {
        after = lastEventID
        let oldest = s.ring.first?.id ?? newest + 1
        if lastEventID + 1 < oldest {
          // Events between the viewer's last one and the oldest kept are gone: say how many.
          let missed = oldest - lastEventID - 1
          initial.append(
            contentsOf: "event: dropped\ndata: {\"count\":\(missed),\"reason\":\"replay\"}\n\n".utf8)
        }
      }
      for event in s.ring.elements where event.id > after { initial.append(contentsOf: event.frame) }
      if initial.count == 12 { initial.append(contentsOf: ": connected\n\n".utf8) }
      let id = s.nextViewer
      s.nextViewer += 1
      let viewer = EventStreamSubscription(
        hub: self, viewerID: id, initial: initial, capacity: viewerQueueCapacity,
        heartbeatMilliseconds: heartbeatMilliseconds)
      s.viewers[id] = viewer
      return .subscribed(viewer)
    }
  }

  /// Forgets a viewer (its connection closed).
  func unsubscribe(_ viewerID: UInt64) {
    _ = state.withLock { $0.viewers.removeValue(forKey: viewerID) }
  }

  /// The stub's name (or nil when it has none or is gone), from the current table.
  private func name(ofStub id: String) -> String? {
    let stubs = store.table.stubs
    let cached = state.withLock { $0.stubIndex[id] }
    if let i = cached, i < stubs.count, stubs[i].id == id { return stubs[i].name }
    guard let i = stubs.firstIndex(where: { $0.id == id }) else { return nil }
    state.withLock { s in
      if s.stubIndex.count > 100_000 { s.stubIndex.removeAll() }
      s.stubIndex[id] = i
    }
    return stubs[i].name
  }

  /// One event's JSON: `{"id","time","method","url","status","matched","stubId","stubName","latencyMs",
  /// "delayMs","fault","served"}` (`status` null for a fault that sent none or a response not sent).
  static func eventJSON(_ entry: JournalEntry, stubName: String?) -> JSONValue {
    var pairs: [(String, JSONValue)] = [
      ("id", .string(entry.id)),
      ("time", .string(HTTPDate.iso8601(entry.loggedAt))),
      ("method", .string(entry.request.method.rawValue)),
      ("url", .string(entry.request.head.target)),
      ("status", entry.responseStatus.map { .number(JSONNumber($0)) } ?? .null),
      ("matched", .bool(entry.wasMatched)),
    ]
    if let stub = entry.stubID { pairs.append(("stubId", .string(stub))) }
    if let stubName { pairs.append(("stubName", .string(stubName))) }
    let latency = entry.durationMilliseconds ?? 0
    pairs.append(("latencyMs", .number(JSONNumber(text: ServeEventHub.tenths(latency)) ?? JSONNumber(0))))
    if let delay = entry.addedDelayMilliseconds, delay > 0 {
      pairs.append(("delayMs", .number(JSONNumber(delay))))
    }
    if let fault = entry.fault { pairs.append(("fault", .string(fault))) }
    pairs.append(("served", .bool(entry.served ?? false)))
    return .object(JSONObject(pairs: pairs))
  }

  /// A duration in ms with one decimal, as text (`12.3`); non-finite or negative values give `0`.
  static func tenths(_ ms: Double) -> String {
    guard ms.isFinite, ms > 0 else { return "0" }
    let tenths = Int(min(ms, 1e12) * 10 + 0.5)
    return "\(tenths / 10).\(tenths % 10)"
  }
}

/// One viewer of ``ServeEventHub``: its bounded queue of frames and the wake-up of the connection that
/// writes them. Frames are offered from any thread; the connection takes them on its event loop.
public final class EventStreamSubscription: ContentSource {
  private struct Queue {
    var frames: [[UInt8]] = []
    var head = 0
    /// Frames dropped since the viewer was last told.
    var droppedUntold = 0
    /// A wake-up is posted and not yet handled.
    var wakePending = false
    var wake: (@Sendable () -> Void)?
    var cancelled = false
    /// ``initial`` is not taken yet.
    var initialPending = true
  }

  private let queue = Mutex(Queue())
  /// Strong: the hub holds the subscription until ``cancel()``, which breaks the cycle.
  private let hub: ServeEventHub
  let viewerID: UInt64
  /// `retry:` and the replayed events: the first bytes after the head.
  let initial: [UInt8]
  let capacity: Int
  /// Interval of heartbeat comments, ms.
  let heartbeatMilliseconds: Int

  init(hub: ServeEventHub, viewerID: UInt64, initial: [UInt8], capacity: Int, heartbeatMilliseconds: Int) {
    self.hub = hub
    self.viewerID = viewerID
    self.initial = initial
    self.capacity = capacity
    self.heartbeatMilliseconds = heartbeatMilliseconds
  }

  /// The response head: `200`, `text/event-stream`, not cached, not buffered by proxies.
  static let head = HTTPResponseHead(
    status: .ok,
    headers: [
      "Content-Type": "text/event-stream; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Accel-Buffering": "no",
      "X-Content-Type-Options": "nosniff",
    ])

  /// Most unsent output the connection keeps before it stops taking events (they wait, then drop, in the
  /// bounded queue).
  public var outputBound: Int { 64 << 10 }

  /// A `:` comment line every ``heartbeatMilliseconds`` while the output is idle (WHATWG: lines starting
  /// with a colon are ignored).
  public var heartbeat: ContentHeartbeat? {
    ContentHeartbeat(bytes: Array(": heartbeat\n\n".utf8), intervalMilliseconds: heartbeatMilliseconds)
  }

  /// Frames waiting now.
  var pendingCount: Int { queue.withLock { $0.frames.count - $0.head } }

  /// Queues a frame; false (and counted) when the queue is full. Wakes the connection when the queue
  /// was idle.
  func offer(_ frame: [UInt8]) -> Bool {
    let (accepted, wake) = queue.withLock { q -> (Bool, (@Sendable () -> Void)?) in
      guard !q.cancelled else { return (true, nil) }
      guard q.frames.count - q.head < capacity else {
        q.droppedUntold += 1
        return (false, nil)
      }
      q.frames.append(frame)
      guard !q.wakePending, let wake = q.wake else { return (true, nil) }
      q.wakePending = true
      return (true, wake)
    }
    wake?()
    return accepted
  }

  /// Loop thread: sets how to wake the connection; true when bytes (the initial ones, frames) already wait.
  public func attach(wake: @escaping @Sendable () -> Void) -> Bool {
    queue.withLock { q in
      q.wake = wake
      let waiting = q.initialPending || q.frames.count > q.head || q.droppedUntold > 0
      q.wakePending = waiting
      return waiting
    }
  }

  /// Loop thread: takes ``initial`` the first time, then queued frames, at most about `maxBytes` (always
  /// at least one frame), preceded by an `event: dropped` frame when frames were dropped since the last
  /// take. Empty when nothing waits; the stream never ends by itself.
  public func take(maxBytes: Int) -> (bytes: [UInt8], end: ContentEnd?) {
    queue.withLock { q in
      var out: [UInt8] = []
      if q.initialPending {
        out = initial
        q.initialPending = false
      }
      if q.droppedUntold > 0 {
        out.append(
          contentsOf: "event: dropped\ndata: {\"count\":\(q.droppedUntold),\"reason\":\"slow\"}\n\n".utf8)
        q.droppedUntold = 0
      }
      while q.head < q.frames.count, out.isEmpty || out.count + q.frames[q.head].count <= maxBytes {
        out.append(contentsOf: q.frames[q.head])
        q.frames[q.head] = []
        q.head += 1
      }
      if q.head == q.frames.count {
        q.frames.removeAll(keepingCapacity: q.frames.capacity <= 2 * capacity)
        q.head = 0
        q.wakePending = false
      } else if q.head > capacity {
        q.frames.removeFirst(q.head)
        q.head = 0
      }
      return (out, nil)
    }
  }

  /// Stops the feed (the connection closed or never streamed); idempotent.
  public func cancel() {
    let wasLive = queue.withLock { q -> Bool in
      defer {
        q.cancelled = true
        q.frames = []
        q.head = 0
        q.wake = nil
      }
      return !q.cancelled
    }
    if wasLive { hub.unsubscribe(viewerID) }
  }
}
