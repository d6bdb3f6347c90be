import Mappings
import RegularExpressions
import Synchronization
import Templating

/// The one owner of the state extension's contexts (docs/stateful.md): each context's properties, list
/// and update count, under one lock. A write to one context is atomic; nothing is transactional across
/// contexts. A context expires ``expirationNanoseconds`` after its last write (reads do not extend it).
///
/// Bounded: at most ``maximumContexts`` contexts and ``maximumListEntries`` entries per list; a write that
/// would pass a bound is refused with a reason (logged and journaled), never dropped silently.
public final class StateStore: TemplateStateLookup, Sendable {
  /// Most contexts kept at once.
  public static let maximumContexts = 1_000_000
  /// Most entries in one context's list.
  public static let maximumListEntries = 100_000
  /// Default `--state-expiration-seconds`: one hour, as the extension's store.
  public static let defaultExpirationSeconds = 3600
  /// Largest `--state-expiration-seconds`: 10 years.
  public static let maximumExpirationSeconds = 315_360_000

  struct Context {
    var properties: [StateField] = []
    var list: [[StateField]] = []
    var updateCount = 1
    /// When it was last written (monotonic ns).
    var written: UInt64
    /// The write (request) that last changed it: further writes of that request do not count again.
    var lastWrite: UInt64

    func snapshot(_ name: String) -> StateContextSnapshot {
      StateContextSnapshot(name: name, properties: properties, list: list, updateCount: updateCount)
    }
  }

  struct Contents {
    var contexts: [String: Context] = [:]
    /// When expired contexts were last removed (monotonic ns).
    var swept: UInt64 = 0
  }

  private let contents = Mutex(Contents())
  private let writes = Atomic<UInt64>(0)
  /// How long a context lives after its last write, in ns.
  public let expirationNanoseconds: UInt64
  private let clock: @Sendable () -> UInt64

  /// Creates an empty store whose contexts expire `expirationSeconds` after their last write.
  /// - Parameter clock: monotonic nanoseconds (tests may pass their own).
  public init(
    expirationSeconds: Int = StateStore.defaultExpirationSeconds,
    clock: (@Sendable () -> UInt64)? = nil
  ) {
    let seconds = min(max(expirationSeconds, 1), StateStore.maximumExpirationSeconds)
    expirationNanoseconds = UInt64(seconds) * 1_000_000_000
    self.clock = clock ?? { SocketOps.monotonicNanos() }
  }

  /// A new write token: every write of one request to one context made with the same token adds 1 to the
  /// context's update count once.
  func newWriteToken() -> UInt64 { writes.add(1, ordering: .relaxed).newValue }

  private func live(_ c: Context, now: UInt64) -> Bool { now &- c.written < expirationNanoseconds }

  /// The context named `name`, nil when it does not exist or expired.
  public func stateContext(named name: String) -> StateContextSnapshot? {
    let now = clock()
    return contents.withLock { s in
      guard let c = s.contexts[name], live(c, now: now) else { return nil }
      return c.snapshot(name)
    }
  }

  /// The names of the live contexts, sorted.
  public func names() -> [String] {
    let now = clock()
    return contents.withLock { s in s.contexts.filter { live($0.value, now: now) }.map(\.key) }.sorted()
  }

  /// Every live context, sorted by name.
  public func snapshots() -> [StateContextSnapshot] {
    let now = clock()
    return contents.withLock { s in
      s.contexts.compactMap { live($0.value, now: now) ? $0.value.snapshot($0.key) : nil }
    }.sorted { $0.name < $1.name }
  }

  /// Changes context `name` (created when missing) with `change`, counting the update once per `token`.
  /// `change` returns why it refuses before changing anything, or nil. The context is changed in place
  /// (no copy of its list per write).
  /// - Returns: nil, or why nothing was written (a bound of the store).
  func write(
    _ name: String, token: UInt64, _ change: (inout Context) -> String?
  ) -> String? {
    let now = clock()
    return contents.withLock { s -> String? in
      sweep(&s, now: now)
      if let i = s.contexts.index(forKey: name), live(s.contexts.values[i], now: now) {
        if let refused = change(&s.contexts.values[i]) { return refused }
        StateStore.written(&s.contexts.values[i], token: token, now: now)
        return nil
      }
      guard s.contexts.count < StateStore.maximumContexts || s.contexts[name] != nil else {
        return "context \(name) not created: the store holds \(StateStore.maximumContexts) contexts, "
          + "the most it keeps"
      }
      // New, or replacing an expired one.
      var context = Context(written: now, lastWrite: token)
      if let refused = change(&context) { return refused }
      s.contexts[name] = context
      return nil
    }
  }

  /// Changes the list of context `name` when it exists (an unknown context is not created), counting the
  /// update once per `token` even when nothing was removed.
  func changeExisting(_ name: String, token: UInt64, _ change: (inout Context) -> Void) -> Bool {
    let now = clock()
    return contents.withLock { s -> Bool in
      guard let i = s.contexts.index(forKey: name), live(s.contexts.values[i], now: now) else { return false }
      change(&s.contexts.values[i])
      StateStore.written(&s.contexts.values[i], token: token, now: now)
      return true
    }
  }

  /// Records a write of request `token` to `context` at `now`: its update count grows once per request.
  private static func written(_ context: inout Context, token: UInt64, now: UInt64) {
    if context.lastWrite != token { context.updateCount += 1 }
    context.written = now
    context.lastWrite = token
  }

  /// Deletes context `name` (an unknown one is no error).
  public func delete(_ name: String) {
    _ = contents.withLock { $0.contexts.removeValue(forKey: name) }
  }

  /// Deletes every context whose whole name `regex` matches; returns how many.
  @discardableResult
  package func delete(matching regex: CompiledRegex) -> Int {
    contents.withLock { s -> Int in
      let names = s.contexts.keys.filter { regex.matches($0) }
      for n in names { s.contexts.removeValue(forKey: n) }
      return names.count
    }
  }

  /// Deletes every context.
  public func deleteAll() {
    contents.withLock { $0.contexts.removeAll() }
  }

  /// Removes expired contexts, at most once a second (under the lock, from a write).
  private func sweep(_ s: inout Contents, now: UInt64) {
    guard now &- s.swept >= 1_000_000_000 else { return }
    s.swept = now
    s.contexts = s.contexts.filter { live($0.value, now: now) }
  }
}
