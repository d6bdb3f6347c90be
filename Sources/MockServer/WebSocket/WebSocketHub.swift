import Foundation
import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// The server's WebSocket side shared by the responder and the admin API: the open channels, the message
/// journal, the global message mappings (`message-mappings/`, `/__admin/message-mappings`) and the message
/// size limit. Each part is one `Mutex`.
public final class WebSocketHub: Sendable {
  /// The largest message a connection accepts (`--max-websocket-message-bytes`); a larger one closes 1009.
  public let maxMessageBytes: Int
  /// Messages received and sent (WireMock 4's message journal).
  let journal: MessageJournal
  private let open = Mutex<[String: WebSocketSession]>([:])
  private let mappings = Mutex<[WebSocketDefinition.MessageMapping]>([])

  /// Default message size limit: 16 MiB.
  public static let defaultMaxMessageBytes = 16 << 20

  /// A hub; `maxMessageBytes` is clamped to 1…2³¹.
  public init(maxMessageBytes: Int = WebSocketHub.defaultMaxMessageBytes, journalCapacity: Int = 10_000) {
    self.maxMessageBytes = min(max(maxMessageBytes, 1), 1 << 31)
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

  /// The global message mappings.
  func globalMappings() -> [WebSocketDefinition.MessageMapping] { mappings.withLock { $0 } }

  /// Replaces the global message mappings (a load or reload of `message-mappings/`).
  func replaceMappings(_ list: [WebSocketDefinition.MessageMapping]) { mappings.withLock { $0 = list } }

  /// Adds or replaces (same id) a global message mapping.
  func upsertMapping(_ mapping: WebSocketDefinition.MessageMapping) {
    mappings.withLock { list in
      if let i = list.firstIndex(where: { $0.id == mapping.id }) {
        list[i] = mapping
      } else {
        list.append(mapping)
      }
    }
  }

  /// Removes the global message mapping `id`; false when there is none.
  func removeMapping(id: String) -> Bool {
    mappings.withLock { list in
      guard let i = list.firstIndex(where: { $0.id == id }) else { return false }
      list.remove(at: i)
      return true
    }
  }

  /// True when some global mapping names a channel pattern `request` matches, or has none (an upgrade no
  /// `x-websocket` stub matches is accepted then: WireMock 4's fixtures run unchanged).
  func acceptsUpgrade(_ request: HTTPRequest, connection: RequestView.Connection) -> Bool {
    let list = globalMappings()
    guard !list.isEmpty, let view = try? RequestView(request, connection: connection) else { return false }
    return list.contains { $0.channelPattern?.matches(view).0 ?? false }
  }
}

/// WireMock 4's message journal: every message received and sent, bounded (the oldest go first).
final class MessageJournal: Sendable {
  struct Event: Sendable {
    var id: String
    var eventType: String
    var channelID: String
    var upgrade: HTTPRequest
    var connection: RequestView.Connection
    var message: WebSocketMessage
    var mappingID: String?
    var timestamp: Double
  }

  private let capacity: Int
  private let events = Mutex<[Event]>([])
  /// Woken waiters of `/__admin/messages/wait`: polled, so nothing to keep here.

  init(capacity: Int) { self.capacity = max(capacity, 1) }

  func record(channel: WebSocketSession, eventType: String, message: WebSocketMessage, mappingID: String?) {
    let event = Event(
      id: UUID().uuidString.lowercased(), eventType: eventType, channelID: channel.id,
      upgrade: channel.upgrade,
      connection: channel.context.connection, message: message, mappingID: mappingID,
      timestamp: Date().timeIntervalSince1970)
    events.withLock { list in
      if list.count >= capacity { list.removeFirst(list.count - capacity + 1) }
      list.append(event)
    }
  }

  func all() -> [Event] { events.withLock { $0 } }
  func clear() { events.withLock { $0 = [] } }
  /// Removes the events `matching` says; returns them.
  func remove(where matching: (Event) -> Bool) -> [Event] {
    events.withLock { list in
      let removed = list.filter(matching)
      list.removeAll(where: matching)
      return removed
    }
  }
}
