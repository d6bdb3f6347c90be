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
    journalCapacity: Int = 10_000
  ) {
    self.maxMessageBytes = min(max(maxMessageBytes, 1), 1 << 31)
    self.acceptsAnyPath = acceptsAnyPath
    journal = MessageJournal(capacity: journalCapacity)
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
    if delay == 0 {
      run()
    } else {
      DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(delay), execute: run)
    }
  }
}

/// WireMock 4's message journal: every message received and sent, bounded (the oldest go first).
final class MessageJournal: Sendable {
  struct Event: Sendable {
    var id: String
    var eventType: String
    var channelID: String
    var upgrade: HTTPRequest
    var context: RequestContext
    var message: WebSocketMessage
    var mappingID: String?
    var timestamp: Double
  }

  /// The events in arrival order, as a ring: `slots` grows to `capacity`, then each new event overwrites the
  /// oldest (at `oldest`). Recording is constant time however large the journal; removing the first of
  /// 10,000 events moved all the others on every message once the journal was full.
  private struct Ring {
    var slots: [Event] = []
    var oldest = 0
    /// The events, oldest first.
    var ordered: [Event] { oldest == 0 ? slots : Array(slots[oldest...]) + slots[..<oldest] }
  }

  private let capacity: Int
  private let events = Mutex<Ring>(Ring())

  init(capacity: Int) { self.capacity = max(capacity, 1) }

  func record(channel: WebSocketSession, eventType: String, message: WebSocketMessage, mappingID: String?) {
    record(
      Event(
        id: SplitMix64.uuidString(.random(in: .min ... .max), .random(in: .min ... .max)),
        eventType: eventType, channelID: channel.id,
        upgrade: channel.upgrade, context: channel.context, message: message, mappingID: mappingID,
        timestamp: Date().timeIntervalSince1970))
  }

  /// Records `event`; when the journal is full, the oldest event goes.
  func record(_ event: Event) {
    events.withLock { ring in
      if ring.slots.count < capacity {
        ring.slots.append(event)
      } else {
        ring.slots[ring.oldest] = event
        ring.oldest = (ring.oldest + 1) % capacity
      }
    }
  }

  /// The events, oldest first.
  func all() -> [Event] { events.withLock { $0.ordered } }
  func clear() { events.withLock { $0 = Ring() } }
  /// Removes the events `matching` says; returns them.
  func remove(where matching: (Event) -> Bool) -> [Event] {
    events.withLock { ring in
      var list = ring.ordered
      let removed = list.filter(matching)
      list.removeAll(where: matching)
      ring = Ring(slots: list, oldest: 0)
      return removed
    }
  }
}
