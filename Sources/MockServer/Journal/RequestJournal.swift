import HTTPCore
import Synchronization

/// One request as the server received and answered it (WireMock's "logged request" / serve event).
public struct JournalEntry: Sendable {
  /// Unique id (UUID text), stable for the entry's lifetime.
  public var id: String
  /// The request as received: head with the original framing fields, content with the transfer coding
  /// and any request `Content-Encoding` removed (what the matcher saw).
  public var request: HTTPRequest
  /// Peer address `ip:port`.
  public var clientAddress: String
  /// True when the request arrived over HTTPS.
  public var isTLS: Bool
  /// Subject of the client certificate (mutual TLS), or nil.
  public var clientCertificateSubject: String?
  /// Time the request completed, seconds since 1970.
  public var loggedAt: Double
  /// Id of the stub that answered, or nil when none matched.
  public var stubID: String?
  /// When nothing matched: the nearest stubs and what failed.
  public var nearMisses: [NearMiss]
  /// Status code sent (nil for a fault that sent no status, or before the response went out).
  public var responseStatus: Int?
  /// The fault executed instead of a response, if any (WireMock names, e.g. `CONNECTION_RESET_BY_PEER`).
  public var fault: String?
  /// Whether the response was served completely (false when the client went away first).
  public var served: Bool?
  /// Time from request complete to plan complete, in milliseconds (nil while in flight).
  public var durationMilliseconds: Double?

  /// True when no stub matched.
  public var wasMatched: Bool { stubID != nil }
}

/// A bounded ring of journal entries behind a lock, with exact counters that survive eviction.
///
/// The ring keeps the newest `capacity` entries; `totalRecorded`, the per-stub serve counts and the
/// unmatched count are kept for every request ever recorded (since the last reset), so counts by stub stay
/// exact when entries are evicted. Counting by an arbitrary request pattern can only look at retained
/// entries; ``evictedCount`` says how many are gone. No I/O happens while the lock is held.
public final class RequestJournal: Sendable {
  private struct State {
    var ring: [JournalEntry?]
    var next = 0
    var stored = 0
    var totalRecorded = 0
    var unmatched = 0
    var perStub: [String: Int] = [:]
    var indexByID: [String: Int] = [:]
  }

  /// Most entries kept; 0 disables the journal (counters still run).
  public let capacity: Int
  private let state: Mutex<State>

  /// Creates a journal holding at most `capacity` entries (default 10,000; 0 keeps none).
  public init(capacity: Int = 10_000) {
    self.capacity = max(0, capacity)
    state = Mutex(State(ring: Array(repeating: nil, count: max(0, capacity))))
  }

  /// Records an entry, evicting the oldest when full.
  public func record(_ entry: JournalEntry) {
    state.withLock { s in
      s.totalRecorded += 1
      if let stub = entry.stubID { s.perStub[stub, default: 0] += 1 } else { s.unmatched += 1 }
      guard capacity > 0 else { return }
      if let old = s.ring[s.next] { s.indexByID.removeValue(forKey: old.id) }
      s.ring[s.next] = entry
      s.indexByID[entry.id] = s.next
      s.next = (s.next + 1) % capacity
      s.stored = min(s.stored + 1, capacity)
    }
  }

  /// Updates the entry `id` in place (e.g. with the response status once served); no-op if evicted.
  public func update(id: String, _ change: (inout JournalEntry) -> Void) {
    state.withLock { s in
      guard let index = s.indexByID[id], var entry = s.ring[index] else { return }
      change(&entry)
      s.ring[index] = entry
    }
  }

  /// Retained entries, newest first.
  /// - Parameters:
  ///   - limit: at most this many (nil: all).
  ///   - since: only entries logged at or after this time (seconds since 1970).
  ///   - unmatchedOnly: only requests no stub matched.
  public func entries(limit: Int? = nil, since: Double? = nil, unmatchedOnly: Bool = false) -> [JournalEntry]
  {
    let all = snapshot()
    var result: [JournalEntry] = []
    for entry in all.reversed() {
      if let since, entry.loggedAt < since { continue }
      if unmatchedOnly, entry.wasMatched { continue }
      result.append(entry)
      if let limit, result.count >= limit { break }
    }
    return result
  }

  /// Retained entries, oldest first.
  public func snapshot() -> [JournalEntry] {
    state.withLock { s in
      guard capacity > 0, s.stored > 0 else { return [] }
      var out: [JournalEntry] = []
      out.reserveCapacity(s.stored)
      let start = (s.next - s.stored + capacity) % capacity
      for i in 0..<s.stored {
        if let e = s.ring[(start + i) % capacity] { out.append(e) }
      }
      return out
    }
  }

  /// The retained entry with this id.
  public func entry(id: String) -> JournalEntry? {
    state.withLock { s in s.indexByID[id].flatMap { s.ring[$0] } }
  }

  /// Removes the entry `id`. Returns false if it is not retained.
  @discardableResult
  public func remove(id: String) -> Bool {
    state.withLock { s in
      guard let index = s.indexByID.removeValue(forKey: id) else { return false }
      s.ring[index] = nil
      return true
    }
  }

  /// Removes retained entries for which `predicate` is true; returns how many.
  @discardableResult
  public func removeAll(where predicate: (JournalEntry) -> Bool) -> Int {
    state.withLock { s in
      var removed = 0
      for i in s.ring.indices {
        if let e = s.ring[i], predicate(e) {
          s.ring[i] = nil
          s.indexByID.removeValue(forKey: e.id)
          removed += 1
        }
      }
      return removed
    }
  }

  /// Forgets every entry and resets all counters.
  public func clear() {
    state.withLock { s in
      s = State(ring: Array(repeating: nil, count: capacity))
    }
  }

  /// Requests recorded since the last clear, retained or not.
  public var totalRecorded: Int { state.withLock { $0.totalRecorded } }
  /// Requests no stub matched, since the last clear.
  public var unmatchedCount: Int { state.withLock { $0.unmatched } }
  /// Requests that stub `id` answered since the last clear (exact past eviction).
  public func count(stubID: String) -> Int { state.withLock { $0.perStub[stubID] ?? 0 } }
  /// Requests recorded but no longer retained.
  public var evictedCount: Int {
    state.withLock { s in s.totalRecorded - s.ring.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }
  }
}
