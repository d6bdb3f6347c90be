import Dispatch
import Foundation
import HTTPCore
import Mappings
import MockJSON
import Synchronization
import Templating

/// The server's WebSocket side shared by the responder and the admin API: the open channels, the message
/// journal, the global message mappings (`message-mappings/`, `/__admin/message-mappings`) and the message
/// size limit. Each part is one `Mutex`.
public final class WebSocketHub: Sendable {
  /// The largest message a connection accepts (`--max-websocket-message-bytes`); a larger one closes 1009.
  public let maxMessageBytes: Int
  /// Messages received and sent (WireMock 4's message journal).
  let journal: MessageJournal
  private let open = Mutex<[String: WebSocketSession]>([:])
  private let mappings = Mutex(GlobalMappings())
  private let hasHTTPTriggersFlag = Atomic<Bool>(false)
  /// HTTP-triggered actions waiting for their `x-delay`, and those refused because
  /// ``maxPendingHTTPTriggered`` were already waiting (`/__admin/health`'s `refusedDelayedMessageActions`).
  private let pendingHTTPTriggered = Atomic<Int>(0)
  private let refusedHTTPTriggered = Atomic<Int>(0)
  /// The most HTTP-triggered delayed actions waiting at once: 10,000.
  static let maxPendingHTTPTriggered = 10_000

  /// HTTP-triggered actions not run because ``maxPendingHTTPTriggered`` were waiting.
  var refusedDelayedActions: Int { refusedHTTPTriggered.load(ordering: .relaxed) }

  /// `message-mappings/`'s mappings and those added through the admin API.
  private struct GlobalMappings {
    var file: [WebSocketDefinition.MessageMapping] = []
    var runtime: [WebSocketDefinition.MessageMapping] = []
    var hasHTTPTriggers: Bool { (file + runtime).contains { $0.httpTrigger != nil } }
  }

  /// Default message size limit: 16 MiB.
  public static let defaultMaxMessageBytes = 16 << 20

  /// Accept an upgrade to any path no stub answers (`--websocket-any-path`, WireMock 4's behaviour).
  public let acceptsAnyPath: Bool

  /// A hub; `maxMessageBytes` is clamped to 1…2³¹.
  public init(
    maxMessageBytes: Int = WebSocketHub.defaultMaxMessageBytes, acceptsAnyPath: Bool = false,
    journalCapacity: Int = 10_000, journalMaxBytes: Int = 256 << 20, journalMaxMessageBytes: Int = 64 << 10
  ) {
    self.maxMessageBytes = min(max(maxMessageBytes, 1), 1 << 31)
    self.acceptsAnyPath = acceptsAnyPath
    journal = MessageJournal(
      capacity: journalCapacity, maxBytes: journalMaxBytes, maxMessageBytes: journalMaxMessageBytes)
  }

  func register(_ session: WebSocketSession) { open.withLock { $0[session.id] = session } }
  func unregister(_ session: WebSocketSession) { _ = open.withLock { $0.removeValue(forKey: session.id) } }

  /// The open channels, oldest first by id order.
  func channels() -> [WebSocketSession] { open.withLock { Array($0.values) }.sorted { $0.id < $1.id } }

  /// The open channel with `id`.
  func channel(id: String) -> WebSocketSession? { open.withLock { $0[id] } }

  /// The open channels whose upgrade request matches `pattern`.
  func channels(matching pattern: RequestPattern) -> [WebSocketSession] {
    channels().filter { session in
      guard let view = try? RequestView(session.upgrade, connection: session.context.connection) else {
        return false
      }
      return pattern.matches(view).0
    }
  }

  /// The global message mappings: the files' (`message-mappings/`), then those added at run time (later =
  /// newer, so a runtime mapping wins a priority tie).
  func globalMappings() -> [WebSocketDefinition.MessageMapping] {
    mappings.withLock { $0.file + $0.runtime }
  }

  /// The global mapping `id`, or nil.
  func mapping(id: String) -> WebSocketDefinition.MessageMapping? {
    mappings.withLock { m in m.runtime.last { $0.id == id } ?? m.file.first { $0.id == id } }
  }

  /// Replaces the file mappings (a load or reload of `message-mappings/`); `keepRuntime` false drops the
  /// ones added at run time too (`POST /__admin/reset`).
  func replaceFileMappings(_ list: [WebSocketDefinition.MessageMapping], keepRuntime: Bool = true) {
    mappings.withLock { m in
      m.file = list
      if !keepRuntime { m.runtime = [] }
      hasHTTPTriggersFlag.store(m.hasHTTPTriggers, ordering: .releasing)
    }
  }

  /// Adds a runtime mapping, or replaces the mapping with the same id where it is.
  func upsertMapping(_ mapping: WebSocketDefinition.MessageMapping) {
    mappings.withLock { m in
      if let i = m.runtime.firstIndex(where: { $0.id == mapping.id }) {
        m.runtime[i] = mapping
      } else if let i = m.file.firstIndex(where: { $0.id == mapping.id }) {
        var replaced = mapping
        replaced.file = m.file[i].file
        m.file[i] = replaced
      } else {
        m.runtime.append(mapping)
      }
      hasHTTPTriggersFlag.store(m.hasHTTPTriggers, ordering: .releasing)
    }
  }

  /// Removes the global mappings `remove` selects; returns how many.
  @discardableResult
  func removeMappings(where remove: (WebSocketDefinition.MessageMapping) -> Bool) -> Int {
    mappings.withLock { m in
      let before = m.file.count + m.runtime.count
      m.file.removeAll(where: remove)
      m.runtime.removeAll(where: remove)
      hasHTTPTriggersFlag.store(m.hasHTTPTriggers, ordering: .releasing)
      return before - m.file.count - m.runtime.count
    }
  }

  /// True when some global mapping has an HTTP trigger (one relaxed load on the request path).
  var hasHTTPTriggers: Bool { hasHTTPTriggersFlag.load(ordering: .acquiring) }

  /// True when a global mapping names the channel `request` would open: its channel pattern, or the
  /// request pattern of a `request-initiated` target, matches (an upgrade no `x-websocket` stub matches is
  /// accepted then: WireMock 4's fixtures run unchanged). A mapping naming no channel accepts nothing.
  func acceptsUpgrade(_ request: HTTPRequest, connection: RequestView.Connection) -> Bool {
    if acceptsAnyPath { return true }
    let list = globalMappings()
    guard !list.isEmpty, let view = try? RequestView(request, connection: connection) else { return false }
    let any = RequestPattern()
    return list.contains { mapping in
      if let pattern = mapping.channelPattern, pattern.matches(view).0 { return true }
      return mapping.actions.contains { action in
        guard case .send(_, .requestInitiated(let pattern), _, _) = action, pattern != any else {
          return false
        }
        return pattern.matches(view).0
      }
    }
  }

  /// An HTTP request arrived (`stubID`: the stub that answers it): runs the global mappings whose HTTP
  /// trigger it satisfies, each action after its `x-delay`, texts rendered over `request`.
  func httpRequestArrived(
    _ request: HTTPRequest, context: RequestContext, stubID: String?, templating: TemplatingConfiguration
  ) {
    let triggered = globalMappings().filter { mapping in
      switch mapping.httpTrigger {
      case nil: return false
      case .stub(let id)?: return id == stubID
      case .request(let pattern)?:
        guard let view = try? RequestView(request, connection: context.connection) else { return false }
        return pattern.matches(view).0
      }
    }
    for mapping in triggered {
      runHTTPTriggered(mapping.actions[...], request: request, context: context, templating: templating)
    }
  }

  private func runHTTPTriggered(
    _ actions: ArraySlice<WebSocketDefinition.Action>, request: HTTPRequest, context: RequestContext,
    templating: TemplatingConfiguration
  ) {
    guard let first = actions.first else { return }
    let rest = actions.dropFirst()
    let run: @Sendable () -> Void = { [self] in
      if case .send(let body, .requestInitiated(let pattern), let parameters, _) = first {
        let message = WebSocketSession.render(
          body,
          model: {
            WebSocketSession.model(
              of: request, context: context,
              requestID: SplitMix64.uuidString(.random(in: .min ... .max), .random(in: .min ... .max)),
              pathParameters: [])
          }, message: nil, parameters: parameters, templating: templating)
        for channel in channels(matching: pattern) { channel.send(message) }
      }
      runHTTPTriggered(rest, request: request, context: context, templating: templating)
    }
    let delay: Int
    switch first {
    case .send(_, _, _, let d), .close(_, let d): delay = d
    }
    if delay > 0 {
      // Bounded: requests that trigger actions waiting 24 h must not pile up timers without end.
      guard pendingHTTPTriggered.add(1, ordering: .relaxed).newValue <= WebSocketHub.maxPendingHTTPTriggered
      else {
        pendingHTTPTriggered.subtract(1, ordering: .relaxed)
        refusedHTTPTriggered.add(1, ordering: .relaxed)
        return
      }
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay)) { [self] in
        pendingHTTPTriggered.subtract(1, ordering: .relaxed)
        run()
      }
      return
    }
    run()
  }
}

/// WireMock 4's message journal: every message received and sent, bounded by a count and by bytes (the
/// oldest go first). A message longer than the per-event bound is kept as its first bytes, and the event
/// says so (`truncated`, `size`), as the request journal keeps a long body.
final class MessageJournal: Sendable {
  struct Event: Sendable {
    var id: String
    var eventType: String
    var channelID: String
    var upgrade: HTTPRequest
    var context: RequestContext
    /// The message, or its first `maxMessageBytes` bytes when `truncated`.
    var message: WebSocketMessage
    var mappingID: String?
    var timestamp: Double
    /// The message's full length in bytes.
    var size: Int = 0
    /// True when `message` holds only the first bytes of a longer one.
    var truncated = false

    /// What the event costs the journal's byte budget: the message kept, plus a fixed share for the rest.
    var cost: Int {
      let kept: Int
      switch message {
      case .text(let text): kept = text.utf8.count
      case .binary(let bytes): kept = bytes.count
      }
      return kept + 256
    }
  }

  /// The events in arrival order, as a ring of `count` events from `head`: recording is constant time
  /// however large the journal (removing the first of 10,000 events moved all the others on every message
  /// once the journal was full).
  private struct Ring {
    var slots: [Event?] = []
    var head = 0
    var count = 0
    var bytes = 0

    /// The events, oldest first.
    var ordered: [Event] { (0..<count).compactMap { slots[(head + $0) % slots.count] } }

    init(_ events: [Event] = []) {
      slots = events
      count = events.count
      bytes = events.reduce(0) { $0 + $1.cost }
    }

    mutating func removeOldest() {
      bytes -= slots[head]?.cost ?? 0
      slots[head] = nil
      head = (head + 1) % slots.count
      count -= 1
      if count == 0 { head = 0 }
    }

    /// Appends `event` (the caller made room: `count` is below the capacity).
    mutating func append(_ event: Event) {
      if count == slots.count {
        if head != 0 {
          slots = ordered
          head = 0
        }
        slots.append(event)
      } else {
        slots[(head + count) % slots.count] = event
      }
      count += 1
      bytes += event.cost
    }
  }

  private let capacity: Int
  private let maxBytes: Int
  /// The longest message kept whole; a longer one keeps its first bytes.
  let maxMessageBytes: Int
  private let events = Mutex<Ring>(Ring())
  /// Moves whenever the events change: a waiter (`POST /__admin/messages/wait`) looks again only then.
  private let changes = Atomic<UInt64>(0)

  /// A journal of at most `capacity` events and `maxBytes` bytes, each message kept up to
  /// `maxMessageBytes` (each bound at least 1).
  init(capacity: Int, maxBytes: Int = 256 << 20, maxMessageBytes: Int = 64 << 10) {
    self.capacity = max(capacity, 1)
    self.maxBytes = max(maxBytes, 1)
    self.maxMessageBytes = max(maxMessageBytes, 1)
  }

  func record(channel: WebSocketSession, eventType: String, message: WebSocketMessage, mappingID: String?) {
    record(
      Event(
        id: SplitMix64.uuidString(.random(in: .min ... .max), .random(in: .min ... .max)),
        eventType: eventType, channelID: channel.id,
        upgrade: channel.upgrade, context: channel.context, message: message, mappingID: mappingID,
        timestamp: Date().timeIntervalSince1970))
  }

  /// Records `event` (its message cut to `maxMessageBytes`, `size` and `truncated` set); the oldest events
  /// go first when the journal is full by count or by bytes.
  func record(_ recorded: Event) {
    var event = recorded
    switch event.message {
    case .text(let text):
      event.size = text.utf8.count
      if event.size > maxMessageBytes {
        event.message = .text(String(decoding: Array(text.utf8.prefix(maxMessageBytes)), as: UTF8.self))
      }
    case .binary(let bytes):
      event.size = bytes.count
      if event.size > maxMessageBytes { event.message = .binary(Array(bytes.prefix(maxMessageBytes))) }
    }
    event.truncated = event.size > maxMessageBytes
    events.withLock { ring in
      while ring.count > 0, ring.count >= capacity || ring.bytes + event.cost > maxBytes {
        ring.removeOldest()
      }
      ring.append(event)
    }
    changes.wrappingAdd(1, ordering: .releasing)
  }

  /// A number that moves whenever the events change.
  var generation: UInt64 { changes.load(ordering: .acquiring) }

  /// The events, oldest first.
  func all() -> [Event] { events.withLock { $0.ordered } }

  func clear() {
    events.withLock { $0 = Ring() }
    changes.wrappingAdd(1, ordering: .releasing)
  }

  /// Removes the events `matching` says; returns them.
  func remove(where matching: (Event) -> Bool) -> [Event] {
    let removed = events.withLock { ring in
      let list = ring.ordered
      let removed = list.filter(matching)
      if !removed.isEmpty { ring = Ring(list.filter { !matching($0) }) }
      return removed
    }
    changes.wrappingAdd(1, ordering: .releasing)
    return removed
  }
}
