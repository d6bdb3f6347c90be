import Foundation
import HTTPCore
import MockJSON
import Synchronization

/// The one owner of the sessions (issue 47; docs/scaling.md#sessions): each session's own runtime stubs
/// and scenario states, and when it was last active.
///
/// A request names its session with the `X-Mock-Session` header (``headerName``) or a `/__session/{id}/`
/// path prefix, stripped before matching and journaling (``identify(_:)``). A session's stubs are
/// matched first; the stubs without a session (file stubs and runtime stubs) after them. Its scenario
/// states and response-sequence positions are its own, for its stubs and the shared ones alike; its
/// journal entries carry its id. A session is made when first named and ends ``idleNanoseconds`` after
/// its last request or admin call (its stubs, states and journal entries are removed).
///
/// With a shared state store each session's stubs and states are in the store under its own keys (the
/// same scripts as those without a session), so a session spans replicas; a replica that has not served
/// a session yet reads its stubs before serving it (``Session/load()``).
///
/// Bounded: at most ``maximumSessions`` at once; a request naming another is refused with a reason.
package final class SessionBook: Sendable {
  /// Default `--session-header`.
  package static let defaultHeaderName = "X-Mock-Session"
  /// Default `--session-idle-seconds`: one hour.
  package static let defaultIdleSeconds = 3600
  /// Largest `--session-idle-seconds`: 10 years.
  package static let maximumIdleSeconds = 315_360_000
  /// Most sessions at once.
  package static let maximumSessions = 10_000
  /// Longest session id, in bytes.
  package static let maximumIDBytes = 64
  /// The path prefix that names a session: `/__session/{id}/…`.
  static let pathPrefix = "/__session/"

  /// One session's stubs and scenario states.
  package final class Session: Sendable {
    /// The id (1 to ``maximumIDBytes`` of `A-Z a-z 0-9 - . _ ~`).
    package let id: String
    /// Its runtime stubs (no file stubs).
    package let store: StubStore
    /// Its scenario states and sequence positions.
    package let scenarioBook: ScenarioBook
    /// The responder of its requests (``MockResponder/responder(for:)``), made when first needed.
    package let responder = Mutex<MockResponder?>(nil)
    /// Its last request or admin call (monotonic ns), and whether a sweep sent it to the store since.
    fileprivate let activity: Mutex<(seen: UInt64, sent: Bool)>
    private let loaded: Atomic<Bool>

    fileprivate init(id: String, store: StubStore, scenarioBook: ScenarioBook, now: UInt64) {
      self.id = id
      self.store = store
      self.scenarioBook = scenarioBook
      activity = Mutex((now, false))
      loaded = Atomic(store.shared == nil)
    }

    /// True once its stubs and states were read from the shared store (at once without one).
    package var isLoaded: Bool { loaded.load(ordering: .acquiring) }

    /// Reads its stubs and states from the shared store (blocking: off the event loop).
    /// - Throws: ``RedisFailure`` when the store cannot answer (it stays unloaded).
    package func load() throws(RedisFailure) {
      try store.refreshFromSharedStore()
      _ = try scenarioBook.currentStates()
      loaded.store(true, ordering: .releasing)
    }
  }

  /// Why a request's session could not be taken.
  package enum Refusal: Error, Sendable {
    /// The id is not 1 to ``maximumIDBytes`` unreserved characters, or the header and prefix disagree.
    case invalid(String)
    /// ``maximumSessions`` sessions are live.
    case tooMany
  }

  /// The header naming a request's session (`--session-header`).
  package let headerName: String
  /// How long a session lives after its last activity, in ns.
  package let idleNanoseconds: UInt64
  private let sessions = Mutex<[String: Session]>([:])
  private let parent: StubStore
  private let sharedStubs: SharedRuntimeStubs?
  private let sharedStates: SharedScenarioStates?
  /// The sessions' activity in the store, or nil without one.
  package let shared: SharedSessions?
  private let clock: @Sendable () -> UInt64
  /// Run once, when the first session is made (the sweeper's start).
  private let firstSessionMade = Mutex<(@Sendable () -> Void)?>(nil)

  /// - Parameters:
  ///   - parent: the store of the stubs without a session (its envelopes and body files).
  ///   - idleSeconds: 1 ... ``maximumIdleSeconds`` (clamped).
  ///   - clock: monotonic nanoseconds (tests may pass their own).
  package init(
    headerName: String = SessionBook.defaultHeaderName, idleSeconds: Int = SessionBook.defaultIdleSeconds,
    parent: StubStore, sharedStates: SharedScenarioStates?, clock: (@Sendable () -> UInt64)? = nil
  ) {
    self.headerName = headerName
    idleNanoseconds = UInt64(min(max(idleSeconds, 1), SessionBook.maximumIdleSeconds)) * 1_000_000_000
    self.parent = parent
    sharedStubs = parent.shared
    self.sharedStates = sharedStates
    shared = parent.shared.map {
      SharedSessions(connection: $0.makeConnection(), keyPrefix: $0.keyPrefix, channel: $0.channel)
    }
    self.clock = clock ?? { SocketOps.monotonicNanos() }
  }

  // MARK: Naming

  /// Reads the session `head` names: a `/__session/{id}/` prefix (removed from the target, so the rest is
  /// matched, routed and journaled as the request's path) or the ``headerName`` header. Nil when it names
  /// none.
  /// - Throws: ``Refusal/invalid(_:)`` for an id that is not 1 to ``maximumIDBytes`` characters of
  ///   `A-Z a-z 0-9 - . _ ~`, a header that appears more than once, or a prefix and a header that name
  ///   different sessions.
  package func identify(_ head: inout HTTPRequestHead) throws(Refusal) -> String? {
    var fromPath: String?
    if SessionBook.hasPathPrefix(head.target) {
      let rest = head.target.utf8.dropFirst(SessionBook.pathPrefix.utf8.count)
      let end =
        rest.firstIndex(where: { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") }) ?? rest.endIndex
      let id = String(decoding: rest[..<end], as: UTF8.self)
      try SessionBook.check(id, from: "the path prefix \(SessionBook.pathPrefix)")
      let remainder = String(decoding: rest[end...], as: UTF8.self)
      head.target = remainder.hasPrefix("/") ? remainder : "/" + remainder
      fromPath = id
    }
    guard let value = head.headers.first(headerName) else { return fromPath }
    let fields = head.headers.values(headerName).count
    if fields > 1 {
      throw .invalid("the header \(headerName) appears \(fields) times: name one session, once")
    }
    let id = value.trimmingOWS()
    try SessionBook.check(id, from: "the header \(headerName)")
    if let fromPath, fromPath != id {
      throw .invalid(
        "the path prefix names session \(fromPath) and the header \(headerName) names \(id): name one session"
      )
    }
    return id
  }

  /// True when `target` starts with ``pathPrefix`` (`/__session/`).
  static func hasPathPrefix(_ target: String) -> Bool {
    let prefix: StaticString = "/__session/"
    return target.utf8.withContiguousStorageIfAvailable { b in
      b.count >= prefix.utf8CodeUnitCount
        && memcmp(b.baseAddress!, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    } ?? target.utf8.starts(with: pathPrefix.utf8)
  }

  /// Throws unless `id` is 1 to ``maximumIDBytes`` bytes of `A-Z a-z 0-9 - . _ ~` (RFC 3986's
  /// unreserved characters: safe in a path segment, a header and a store key).
  static func check(_ id: String, from source: String) throws(Refusal) {
    let bytes = id.utf8
    let valid =
      (1...maximumIDBytes).contains(bytes.count)
      && bytes.allSatisfy { b in
        (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) || b == 0x2D
          || b == 0x2E || b == 0x5F || b == 0x7E
      }
    guard valid else {
      throw .invalid(
        "\(source): expected a session id of 1 to \(maximumIDBytes) characters A-Z a-z 0-9 - . _ ~, found \(JSONValue.quoted(id))"
      )
    }
  }

  // MARK: Sessions

  /// Session `id`, made when first named; marks it active now.
  /// - Throws: ``Refusal/tooMany`` when it is new and ``maximumSessions`` are live.
  package func session(_ id: String) throws(Refusal) -> Session {
    let now = clock()
    let result: Result<Session, Refusal> = sessions.withLock { all in
      if let known = all[id] {
        known.activity.withLock { $0 = (now, false) }
        return .success(known)
      }
      guard all.count < SessionBook.maximumSessions else { return .failure(.tooMany) }
      let made = Session(
        id: id, store: StubStore(sessionOf: parent, shared: sharedStubs?.session(id)),
        scenarioBook: ScenarioBook(shared: sharedStates?.session(id)), now: now)
      all[id] = made
      return .success(made)
    }
    let session = try result.get()
    if let first = firstSessionMade.withLock({ f in
      defer { f = nil }
      return f
    }) {
      first()
    }
    return session
  }

  /// Runs `body` once, when the first session is made.
  package func whenFirstSessionIsMade(_ body: @escaping @Sendable () -> Void) {
    firstSessionMade.withLock { $0 = body }
  }

  /// Session `id` if this process knows it (does not mark it active).
  package func existing(_ id: String) -> Session? { sessions.withLock { $0[id] } }

  /// Every session this process knows.
  package var all: [Session] { sessions.withLock { Array($0.values) } }

  /// Forgets session `id` here (its stubs and states in this process); returns it.
  @discardableResult
  package func forget(_ id: String) -> Session? { sessions.withLock { $0.removeValue(forKey: id) } }

  /// Forgets every session here; returns their ids.
  package func forgetAll() -> [String] {
    sessions.withLock { all in
      defer { all = [:] }
      return Array(all.keys)
    }
  }

  /// The sessions idle here for ``idleNanoseconds`` (forgotten here), and the ids of those active since
  /// the last sweep (for the store).
  package func sweep() -> (idle: [String], active: [String]) {
    let now = clock()
    return sessions.withLock { all in
      var idle: [String] = []
      var active: [String] = []
      for (id, session) in all {
        let (seen, sent) = session.activity.withLock { a in
          defer { a.sent = true }
          return a
        }
        if now &- seen >= idleNanoseconds {
          idle.append(id)
        } else if !sent {
          active.append(id)
        }
      }
      for id in idle { all[id] = nil }
      return (idle, active)
    }
  }

  /// How often a sweep runs: a quarter of the idle time, between 250 ms and 30 s (in ns).
  package var sweepIntervalNanoseconds: UInt64 { min(max(idleNanoseconds / 4, 250_000_000), 30_000_000_000) }
}
