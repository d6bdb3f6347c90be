import HTTPCore
import Mappings
import NativeSupport
import Synchronization

/// One request as the server received and answered it (WireMock's "logged request" / serve event).
public struct JournalEntry: Sendable {
  /// The fields, in one copy-on-write box: copying the value (into match results, plans, the journal)
  /// is one retain instead of one per field.
  struct Fields: Sendable {
    /// The id as text when it was given as text; nil when it is formatted from ``idWords`` on demand.
    var idText: String?
    /// The random words a server-assigned id is formatted from (a 36-byte UUID string allocated per
    /// request and freed at eviction was most of recording an entry).
    var idWords: (UInt64, UInt64) = (0, 0)
    var request: HTTPRequest
    /// The peer as accepted, formatted when ``JournalEntry/clientAddress`` is read.
    var client: ClientAddress
    var isTLS: Bool
    var clientCertificateSubject: String?
    var loggedAt: Double
    var stubID: String?
    var nearMisses: [NearMiss]
    var responseStatus: Int?
    var fault: String?
    var served: Bool?
    var durationMilliseconds: Double?
    var addedDelayMilliseconds: Int?
    var sequence: UInt64
    /// When the journal kept only a prefix of the content: its full length and SHA-256 (hex).
    var truncatedBody: (size: Int, sha256: String)?
    /// Outcomes of the stub's webhooks, as they complete (`POST http://… -> 204`, `… failed: …`).
    var webhooks: [String] = []
    /// Problems of the stub's `recordState`/`deleteState` listeners found while serving.
    var stateProblems: [String] = []
    /// The upstream the request was proxied to (a proxy stub, `--proxy-all`, a recording session).
    var proxyBaseURL: String? = nil
    /// The session the request belonged to (docs/scaling.md#sessions), or nil.
    var session: String? = nil
  }

  /// Copy-on-write: copies of the value share one box (one retain instead of one per field), and the first
  /// change to a shared box copies it. A final class per type, not a generic box: a generic class has no
  /// static metadata, and its every access looked the metadata up at run time.
  /// `@unchecked Sendable`: a box is only changed while uniquely referenced, so no two threads ever see it
  /// change.
  private final class FieldsBox: @unchecked Sendable {
    /// Reached only through `fields`, which gives exclusive access: no dynamic exclusivity check.
    @exclusivity(unchecked) var value: Fields
    init(_ value: Fields) { self.value = value }
  }

  private var box: FieldsBox
  private var fields: Fields {
    _read { yield box.value }
    _modify {
      if !isKnownUniquelyReferenced(&box) { box = FieldsBox(box.value) }
      yield &box.value
    }
  }

  /// Unique id (UUID text), stable for the entry's lifetime.
  public var id: String {
    get { fields.idText ?? SplitMix64.uuidString(fields.idWords.0, fields.idWords.1) }
    set { fields.idText = newValue }
  }
  /// The request as received: head with the original framing fields, content with the transfer coding
  /// and any request `Content-Encoding` removed (what the matcher saw).
  public var request: HTTPRequest {
    get { fields.request }
    set { fields.request = newValue }
  }
  /// `body` applied to the UTF-8 bytes of ``id`` (a server-assigned id formatted into a buffer, no
  /// `String` made).
  package func withIDBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    if var text = fields.idText { return text.withUTF8(body) }
    return SplitMix64.withUUIDBytes(fields.idWords.0, fields.idWords.1, body)
  }
  /// Peer address `ip:port`.
  public var clientAddress: String {
    get { fields.client.text }
    set { fields.client = .text(newValue) }
  }
  /// True when the request arrived over HTTPS.
  public var isTLS: Bool {
    get { fields.isTLS }
    set { fields.isTLS = newValue }
  }
  /// Subject of the client certificate (mutual TLS), or nil.
  public var clientCertificateSubject: String? {
    get { fields.clientCertificateSubject }
    set { fields.clientCertificateSubject = newValue }
  }
  /// Time the request completed, seconds since 1970.
  public var loggedAt: Double {
    get { fields.loggedAt }
    set { fields.loggedAt = newValue }
  }
  /// Id of the stub that answered, or nil when none matched.
  public var stubID: String? {
    get { fields.stubID }
    set { fields.stubID = newValue }
  }
  /// When nothing matched: the nearest stubs and what failed.
  public var nearMisses: [NearMiss] {
    get { fields.nearMisses }
    set { fields.nearMisses = newValue }
  }
  /// Status code sent (nil for a fault that sent no status, or before the response went out).
  public var responseStatus: Int? {
    get { fields.responseStatus }
    set { fields.responseStatus = newValue }
  }
  /// The fault executed instead of a response, if any (WireMock names, e.g. `CONNECTION_RESET_BY_PEER`).
  public var fault: String? {
    get { fields.fault }
    set { fields.fault = newValue }
  }
  /// Outcomes of the served stub's webhooks, added as each completes (at most one line per webhook):
  /// `POST http://host/hook -> 204` or `POST http://host/hook failed: cannot connect …`.
  public var webhooks: [String] {
    get { fields.webhooks }
    set { fields.webhooks = newValue }
  }
  /// Problems of the served stub's `recordState` and `deleteState` listeners (a context that rendered
  /// blank, a write the store refused), empty when there were none.
  public var stateProblems: [String] {
    get { fields.stateProblems }
    set { fields.stateProblems = newValue }
  }
  /// Whether the response was served completely (false when the client went away first).
  public var served: Bool? {
    get { fields.served }
    set { fields.served = newValue }
  }
  /// Time from request complete to plan complete, in milliseconds (nil while in flight).
  public var durationMilliseconds: Double? {
    get { fields.durationMilliseconds }
    set { fields.durationMilliseconds = newValue }
  }
  /// The delay added before the response (the stub's delay and the global one), in milliseconds; nil or
  /// 0 when none (WireMock's `timing.addedDelay`).
  public var addedDelayMilliseconds: Int? {
    get { fields.addedDelayMilliseconds }
    set { fields.addedDelayMilliseconds = newValue }
  }
  /// When the journal kept only the first bytes of a large request content: the content's full length in
  /// bytes and its SHA-256 digest (lower-case hex); `request.body` then holds the prefix. Nil when the
  /// whole content is kept.
  public internal(set) var truncatedBody: (size: Int, sha256: String)? {
    get { fields.truncatedBody }
    set { fields.truncatedBody = newValue }
  }
  /// The base URL the request was forwarded to (WireMock's `responseDefinition.proxyBaseUrl`), or nil when
  /// it was not proxied.
  public internal(set) var proxyBaseURL: String? {
    get { fields.proxyBaseURL }
    set { fields.proxyBaseURL = newValue }
  }
  /// The session the request belonged to (`X-Mock-Session` or a `/__session/{id}/` prefix), or nil.
  public internal(set) var session: String? {
    get { fields.session }
    set { fields.session = newValue }
  }
  /// Position in the journal's history (1 for the first request ever recorded); set by ``RequestJournal``.
  public internal(set) var sequence: UInt64 {
    get { fields.sequence }
    set { fields.sequence = newValue }
  }

  /// Creates an entry; `sequence` is assigned when the journal records it.
  public init(
    id: String, request: HTTPRequest, clientAddress: String, isTLS: Bool, clientCertificateSubject: String?,
    loggedAt: Double, stubID: String?, nearMisses: [NearMiss], responseStatus: Int? = nil,
    fault: String? = nil, served: Bool? = nil, durationMilliseconds: Double? = nil
  ) {
    box = FieldsBox(
      Fields(
        idText: id, request: request, client: .text(clientAddress), isTLS: isTLS,
        clientCertificateSubject: clientCertificateSubject, loggedAt: loggedAt, stubID: stubID,
        nearMisses: nearMisses, responseStatus: responseStatus, fault: fault, served: served,
        durationMilliseconds: durationMilliseconds, addedDelayMilliseconds: nil, sequence: 0,
        truncatedBody: nil))
  }

  /// Creates an entry whose id is the version-4 UUID of two random words
  /// (``SplitMix64/uuidString(_:_:)``), formatted when it is read.
  init(
    idWords: (UInt64, UInt64), request: HTTPRequest, client: ClientAddress, isTLS: Bool,
    clientCertificateSubject: String?, loggedAt: Double, stubID: String?, nearMisses: [NearMiss],
    responseStatus: Int? = nil, fault: String? = nil, served: Bool? = nil,
    durationMilliseconds: Double? = nil,
    addedDelayMilliseconds: Int? = nil
  ) {
    box = FieldsBox(
      Fields(
        idText: nil, idWords: idWords, request: request, client: client, isTLS: isTLS,
        clientCertificateSubject: clientCertificateSubject, loggedAt: loggedAt, stubID: stubID,
        nearMisses: nearMisses, responseStatus: responseStatus, fault: fault, served: served,
        durationMilliseconds: durationMilliseconds, addedDelayMilliseconds: addedDelayMilliseconds,
        sequence: 0, truncatedBody: nil))
  }

  /// Bytes the entry holds, roughly: content, target, header fields and a fixed overhead for the rest.
  var approximateBytes: Int {
    let size = 512 + request.body.count + request.head.target.utf8.count
    let headers = request.headers
    return size + headers.nameAndValueBytes + 32 * headers.count
  }

  /// True when no stub matched.
  public var wasMatched: Bool { stubID != nil }
}

/// A bounded ring of journal entries behind a lock, with exact counters that survive eviction.
///
/// Bounded by bytes as well as entries: the content of a request beyond ``maxBodyBytesPerEntry`` is kept
/// as its first bytes plus its length and SHA-256 (``JournalEntry/truncatedBody``, said in the entry's
/// JSON), and the oldest entries are evicted while the entries held exceed ``maxBytes``.
///
/// The ring keeps the newest `capacity` entries; `totalRecorded`, the per-stub serve counts and the
/// unmatched count are kept for every request ever recorded (since the last reset), so counts by stub stay
/// exact when entries are evicted.
///
/// Counting by a request pattern (``count(matching:)``) uses *tracked patterns*: the first count of a
/// pattern counts the retained entries and registers the pattern; from then on every recorded request is
/// tested against it as it is recorded, so its count stays exact however many entries are evicted later.
/// The count is exact from the start (``PatternCount/exact``) when no entry recorded before the
/// registration had been evicted. At most ``maxTrackedPatterns`` are tracked (least recently counted
/// dropped first). Memory stays bounded: the ring, the id index, one counter per stub and per tracked
/// pattern. No I/O happens while the lock is held.
public final class RequestJournal: Sendable {
  /// The result of counting requests by pattern.
  public struct PatternCount: Sendable, Equatable {
    /// Requests that match, since the last clear (see ``exact``).
    public var count: Int
    /// True when `count` covers every request since the last clear; false when requests recorded before
    /// the pattern was first counted had already been evicted (they could not be examined).
    public var exact: Bool
  }

  struct Tracked {
    var pattern: RequestPattern
    var count: Int
    var exact: Bool
    var pending: Bool
    var lastUsed: UInt64
  }

  private struct State {
    var ring: [JournalEntry?]
    /// ``JournalEntry/approximateBytes`` of each slot's entry (0 for an empty slot).
    var sizes: [Int] = []
    /// Sum of `sizes`.
    var bytes = 0
    var next = 0
    var stored = 0
    var totalRecorded = 0
    var unmatched = 0
    /// Requests answered per stub id.
    var perStub = PerStubCounts()
    /// Entries in the ring (slots emptied by remove are not counted).
    var retained = 0
    var sequence: UInt64 = 0
    var firstEvictedSequence: UInt64?
    var tracked: [Tracked] = []
    var clock: UInt64 = 0
  }

  /// Most entries kept; 0 disables the journal (counters still run).
  public let capacity: Int
  /// Most bytes the retained entries may hold (``JournalEntry/approximateBytes``); the oldest go first.
  public let maxBytes: Int
  /// Longest request content kept whole in an entry; longer content keeps this many bytes, its length
  /// and its digest.
  public let maxBodyBytesPerEntry: Int
  /// Default ``maxBytes``: 256 MiB.
  public static let defaultMaxBytes = 256 << 20
  /// Default ``maxBodyBytesPerEntry``: 64 KiB.
  public static let defaultMaxBodyBytesPerEntry = 64 << 10
  /// Most request patterns counted live (see the type's documentation).
  public let maxTrackedPatterns: Int
  private let state: Mutex<State>
  private let trackedCount = Atomic<Int>(0)
  /// Told of every entry once its response is complete (recorded final, or updated to final).
  private let onCompleted: (@Sendable (JournalEntry) -> Void)?
  private let onFinal: (@Sendable (JournalEntry) -> Void)?

  /// Creates a journal holding at most `capacity` entries (default 10,000; 0 keeps none) and at most
  /// `maxBytes` bytes of them, each request content cut to `maxBodyBytesPerEntry`. `onCompleted` is
  /// called (outside the lock, on the recording thread) with each entry once its response is complete:
  /// at ``record(_:)`` when the entry is already final (`served` set), else at ``update(_:_:)``.
  public convenience init(
    capacity: Int = 10_000, maxBytes: Int = RequestJournal.defaultMaxBytes,
    maxBodyBytesPerEntry: Int = RequestJournal.defaultMaxBodyBytesPerEntry, maxTrackedPatterns: Int = 256,
    onCompleted: (@Sendable (JournalEntry) -> Void)? = nil
  ) {
    self.init(
      capacity: capacity, maxBytes: maxBytes, maxBodyBytesPerEntry: maxBodyBytesPerEntry,
      maxTrackedPatterns: maxTrackedPatterns, onCompleted: onCompleted, onFinal: nil)
  }

  /// The same, with every entry also handed to `onFinal`, once, when its response is complete (`served`
  /// set for the first time): the shared journal's queue (`--state-store`).
  package init(
    capacity: Int, maxBytes: Int, maxBodyBytesPerEntry: Int, maxTrackedPatterns: Int = 256,
    onCompleted: (@Sendable (JournalEntry) -> Void)?, onFinal: (@Sendable (JournalEntry) -> Void)?
  ) {
    self.onCompleted = onCompleted
    self.onFinal = onFinal
    self.capacity = max(0, capacity)
    self.maxBytes = max(0, maxBytes)
    self.maxBodyBytesPerEntry = max(0, maxBodyBytesPerEntry)
    self.maxTrackedPatterns = max(1, maxTrackedPatterns)
    state = Mutex(State(ring: []))
  }

  /// Where a recorded entry sits, for a cheap ``update(_:_:)`` once its response completes.
  public struct Ticket: Sendable {
    let slot: Int
    let sequence: UInt64
  }

  /// Records an entry, evicting the oldest when full, and counts it for every tracked pattern.
  /// - Returns: a ticket for ``update(_:_:)``.
  @discardableResult
  public func record(_ entry: consuming JournalEntry) -> Ticket {
    var entry = entry
    // The matcher's view is built outside the lock when patterns are tracked (the usual case: none),
    // from the whole content, before it is cut.
    // Boxed: an optional view (280 bytes) was copied twice and destroyed on every record, tracked or not.
    let view =
      trackedCount.load(ordering: .relaxed) > 0 ? (try? RequestView(entry.request)).map(ViewBox.init) : nil
    if capacity > 0, entry.request.body.count > maxBodyBytesPerEntry {
      let whole = entry.request.body
      let digest = LibcryptoDigest.hash(.sha256, whole)
      entry.truncatedBody = (
        whole.count,
        digest.map { byte in
          let hex = String(byte, radix: 16)
          return byte < 16 ? "0" + hex : hex
        }.joined()
      )
      entry.request.body = Array(whole.prefix(maxBodyBytesPerEntry))
    }
    let size = entry.approximateBytes
    let maxBytes = self.maxBytes
    let ticket = state.withLock { s in
      s.sequence += 1
      entry.sequence = s.sequence
      s.totalRecorded += 1
      if let stub = entry.stubID { s.perStub.increment(stub) } else { s.unmatched += 1 }
      if !s.tracked.isEmpty, let view = view?.view ?? (try? RequestView(entry.request)) {
        for i in s.tracked.indices where s.tracked[i].pattern.matches(view).0 { s.tracked[i].count += 1 }
      }
      guard capacity > 0 else {
        if s.firstEvictedSequence == nil { s.firstEvictedSequence = entry.sequence }
        return Ticket(slot: -1, sequence: entry.sequence)
      }
      if s.stored == capacity, s.firstEvictedSequence == nil {
        let oldest = (s.next - s.stored + capacity) % capacity
        s.firstEvictedSequence = s.ring[oldest]?.sequence ?? entry.sequence
      }
      if s.next == s.ring.count {
        s.ring.append(entry)  // the ring grows to its capacity as requests arrive
        s.sizes.append(size)
      } else {
        if s.ring[s.next] != nil { s.retained -= 1 }
        s.ring[s.next] = entry
        s.bytes -= s.sizes[s.next]
        s.sizes[s.next] = size
      }
      s.bytes += size
      s.retained += 1
      let ticket = Ticket(slot: s.next, sequence: entry.sequence)
      s.next = (s.next + 1) % capacity
      s.stored = min(s.stored + 1, capacity)
      // Over the byte bound: evict the oldest entries (never the one just recorded).
      while s.bytes > maxBytes, s.stored > 1 {
        let oldest = (s.next - s.stored + capacity) % capacity
        if let evicted = s.ring[oldest] {
          if s.firstEvictedSequence == nil { s.firstEvictedSequence = evicted.sequence }
          s.retained -= 1
        }
        s.ring[oldest] = nil
        s.bytes -= s.sizes[oldest]
        s.sizes[oldest] = 0
        s.stored -= 1
      }
      return ticket
    }
    // After the entry got its sequence: a hook that keeps the entry (the shared journal's queue) made
    // the change of the sequence copy the entry's whole box.
    if entry.served != nil {
      if let onCompleted { onCompleted(entry) }
      if let onFinal { onFinal(entry) }
    }
    return ticket
  }

  /// Updates the entry recorded with `ticket` in place; no-op if it was evicted or removed.
  public func update(_ ticket: Ticket, _ change: (inout JournalEntry) -> Void) {
    guard ticket.slot >= 0 else { return }
    let (updated, wasFinal) = state.withLock { s -> (JournalEntry?, Bool) in
      guard ticket.slot < s.ring.count, var entry = s.ring[ticket.slot], entry.sequence == ticket.sequence
      else { return (nil, false) }
      s.ring[ticket.slot] = nil
      let wasFinal = entry.served != nil
      change(&entry)
      s.ring[ticket.slot] = entry
      return (entry, wasFinal)
    }
    guard let updated, updated.served != nil else { return }
    if let onCompleted { onCompleted(updated) }
    if let onFinal, !wasFinal { onFinal(updated) }
  }

  /// Counts requests matching `pattern` since the last clear (see the type's documentation for when the
  /// count is exact). Registers the pattern for live counting. Does the matching of retained entries
  /// outside the lock.
  public func count(matching pattern: RequestPattern) -> PatternCount {
    enum Start {
      case known(PatternCount)
      case registered(baseline: UInt64, exact: Bool, [JournalEntry])
      case untracked([JournalEntry], exact: Bool)
    }
    let start: Start = state.withLock { s in
      s.clock += 1
      if let i = s.tracked.firstIndex(where: { $0.pattern == pattern }) {
        s.tracked[i].lastUsed = s.clock
        if !s.tracked[i].pending {
          return .known(PatternCount(count: s.tracked[i].count, exact: s.tracked[i].exact))
        }
        return .untracked(retained(s), exact: s.firstEvictedSequence == nil)
      }
      if s.tracked.count >= maxTrackedPatterns,
        let oldest = s.tracked.indices.min(by: { s.tracked[$0].lastUsed < s.tracked[$1].lastUsed })
      {
        s.tracked.remove(at: oldest)
      }
      let baseline = s.sequence + 1
      let exact = s.firstEvictedSequence == nil
      s.tracked.append(Tracked(pattern: pattern, count: 0, exact: exact, pending: true, lastUsed: s.clock))
      trackedCount.store(s.tracked.count, ordering: .relaxed)
      return .registered(baseline: baseline, exact: exact, retained(s))
    }
    switch start {
    case .known(let result):
      return result
    case .untracked(let entries, let exact):
      return PatternCount(count: entries.count { RequestJournal.matches(pattern, $0) }, exact: exact)
    case .registered(let baseline, let exact, let entries):
      let before = entries.count { $0.sequence < baseline && RequestJournal.matches(pattern, $0) }
      return state.withLock { s in
        guard let i = s.tracked.firstIndex(where: { $0.pattern == pattern && $0.pending }) else {
          return PatternCount(count: before, exact: exact)
        }
        s.tracked[i].count += before
        s.tracked[i].pending = false
        return PatternCount(count: s.tracked[i].count, exact: s.tracked[i].exact)
      }
    }
  }

  /// Retained entries matching `pattern`, oldest first.
  public func entries(matching pattern: RequestPattern) -> [JournalEntry] {
    snapshot().filter { RequestJournal.matches(pattern, $0) }
  }

  /// Patterns currently counted live.
  public var trackedPatternCount: Int { state.withLock { $0.tracked.count } }

  static func matches(_ pattern: RequestPattern, _ entry: JournalEntry) -> Bool {
    guard let view = try? RequestView(entry.request) else { return false }
    return pattern.matches(view).0
  }

  private func retained(_ s: State) -> [JournalEntry] {
    guard capacity > 0, s.stored > 0 else { return [] }
    var out: [JournalEntry] = []
    out.reserveCapacity(s.stored)
    let start = (s.next - s.stored + capacity) % capacity
    for i in 0..<s.stored {
      if let e = s.ring[(start + i) % capacity] { out.append(e) }
    }
    return out
  }

  /// Takes a removed entry out of the tracked counts (called with the lock held).
  private static func uncount(_ entry: JournalEntry, _ s: inout State) {
    guard !s.tracked.isEmpty, let view = try? RequestView(entry.request) else { return }
    for i in s.tracked.indices where s.tracked[i].pattern.matches(view).0 {
      s.tracked[i].count = max(0, s.tracked[i].count - 1)
    }
  }

  /// Updates the entry `id` in place (e.g. with the response status once served); no-op if evicted.
  public func update(id: String, _ change: (inout JournalEntry) -> Void) {
    state.withLock { s in
      guard let index = RequestJournal.slot(of: id, in: s), var entry = s.ring[index] else { return }
      change(&entry)
      s.ring[index] = entry
    }
  }

  /// Retained entries, newest first.
  /// - Parameters:
  ///   - limit: at most this many (nil: all).
  ///   - since: only entries logged at or after this time (seconds since 1970).
  ///   - unmatchedOnly: only requests no stub matched.
  ///   - matchingStub: only requests the stub with this id answered.
  public func entries(
    limit: Int? = nil, since: Double? = nil, unmatchedOnly: Bool = false, matchingStub: String? = nil
  ) -> [JournalEntry] {
    page(limit: limit, since: since, unmatchedOnly: unmatchedOnly, matchingStub: matchingStub).entries
  }

  /// One page of ``entries(limit:since:unmatchedOnly:matchingStub:)`` and `total`, how many entries pass
  /// `unmatchedOnly` and `matchingStub` before `since` and `limit` cut them (WireMock's
  /// `LimitAndSinceDatePaginator.getTotal()`, the listing's `meta.total`).
  public func page(
    limit: Int? = nil, since: Double? = nil, unmatchedOnly: Bool = false, matchingStub: String? = nil
  ) -> (entries: [JournalEntry], total: Int) {
    let all = snapshot()
    var result: [JournalEntry] = []
    var total = 0
    for entry in all.reversed() {
      if unmatchedOnly, entry.wasMatched { continue }
      if let matchingStub, entry.stubID != matchingStub { continue }
      total += 1
      if let since, entry.loggedAt < since { continue }
      if let limit, result.count >= limit { continue }
      result.append(entry)
    }
    return (result, total)
  }

  /// Retained entries, oldest first.
  public func snapshot() -> [JournalEntry] {
    state.withLock { s in retained(s) }
  }

  /// The retained entry with this id.
  public func entry(id: String) -> JournalEntry? {
    state.withLock { s in RequestJournal.slot(of: id, in: s).flatMap { s.ring[$0] } }
  }

  /// Removes the entry `id`. Returns false if it is not retained.
  @discardableResult
  public func remove(id: String) -> Bool {
    state.withLock { s in
      guard let index = RequestJournal.slot(of: id, in: s) else { return false }
      s.retained -= 1
      if let e = s.ring[index] { RequestJournal.uncount(e, &s) }
      s.ring[index] = nil
      s.bytes -= s.sizes[index]
      s.sizes[index] = 0
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
          RequestJournal.uncount(e, &s)
          s.ring[i] = nil
          s.bytes -= s.sizes[i]
          s.sizes[i] = 0
          s.retained -= 1
          removed += 1
        }
      }
      return removed
    }
  }

  /// Forgets every entry and resets all counters (tracked patterns stay tracked, at 0 and exact).
  public func clear() {
    state.withLock { s in
      var fresh = State(ring: [])
      fresh.sequence = s.sequence
      fresh.clock = s.clock
      fresh.tracked = s.tracked.map { t in
        var t = t
        t.count = 0
        t.exact = true
        t.pending = false
        return t
      }
      s = fresh
    }
  }

  /// Requests recorded since the last clear, retained or not.
  public var totalRecorded: Int { state.withLock { $0.totalRecorded } }
  /// Requests no stub matched, since the last clear.
  public var unmatchedCount: Int { state.withLock { $0.unmatched } }
  /// Requests that stub `id` answered since the last clear (exact past eviction).
  public func count(stubID: String) -> Int { state.withLock { $0.perStub[stubID] } }
  /// Requests recorded but no longer retained.
  public var evictedCount: Int {
    state.withLock { s in s.totalRecorded - s.retained }
  }
  /// Entries currently retained.
  public var retainedCount: Int { state.withLock { $0.retained } }
  /// Bytes the retained entries hold (``JournalEntry/approximateBytes``), at most ``maxBytes``.
  public var retainedBytes: Int { state.withLock { $0.bytes } }

  /// The ring slot holding entry `id`: a scan, since lookups by id are rare admin calls and an index
  /// would cost two string hashes on every request.
  private static func slot(of id: String, in s: State) -> Int? {
    s.ring.firstIndex { $0?.id == id }
  }
}

/// A matcher's view of a request made outside the journal's lock, passed in by reference.
private final class ViewBox {
  let view: RequestView
  init(_ view: RequestView) { self.view = view }
}

/// Counts by stub id, with the slot of the id counted last remembered: consecutive requests to one stub
/// compare its id (the same string storage, so a pointer comparison) instead of hashing 36 characters.
struct PerStubCounts {
  private var slots: [String: Int] = [:]
  private var counts: [Int] = []
  private var last: (id: String, slot: Int)?

  /// The count of stub `id` (0 when never counted).
  subscript(id: String) -> Int { slots[id].map { counts[$0] } ?? 0 }

  /// Adds one to the count of stub `id`.
  mutating func increment(_ id: String) {
    if let last, last.id == id {
      counts[last.slot] += 1
      return
    }
    let slot: Int
    if let known = slots[id] {
      slot = known
    } else {
      slot = counts.count
      slots[id] = slot
      counts.append(0)
    }
    counts[slot] += 1
    last = (id, slot)
  }
}
