import Mappings
import MockJSON
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

    /// Adds one to ``updateCount``, staying at `Int.max` (a count read from the shared store may be any
    /// number another writer put there).
    mutating func countUpdate() {
      updateCount = updateCount == .max ? .max : updateCount + 1
    }

    func snapshot(_ name: String) -> StateContextSnapshot {
      StateContextSnapshot(name: name, properties: properties, list: list, updateCount: updateCount)
    }
  }

  /// A context's name as a dictionary key: names are equal when their bytes are (as WireMock's Java
  /// strings are), not when Swift's `String` would call them equal (`é` and `e` + U+0301 are two
  /// contexts, as they are two keys in the shared store).
  struct Name: Hashable {
    let text: String
    init(_ text: String) { self.text = text }
    static func == (a: Name, b: Name) -> Bool { a.text.utf8.elementsEqual(b.text.utf8) }
    func hash(into hasher: inout Hasher) {
      hasher.combine(text.utf8.count)
      for byte in text.utf8 { hasher.combine(byte) }
    }
  }

  struct Contents {
    var contexts: [Name: Context] = [:]
    /// When expired contexts were last removed (monotonic ns).
    var swept: UInt64 = 0
  }

  private let contents = Mutex(Contents())
  private let writes = Atomic<UInt64>(0)
  /// How long a context lives after its last write, in ns.
  public let expirationNanoseconds: UInt64
  private let clock: @Sendable () -> UInt64

  /// The contexts in the shared state store (`--state-store`), or nil: they live in this process.
  package let shared: SharedStateContexts?

  /// Creates an empty store whose contexts expire `expirationSeconds` after their last write.
  /// - Parameter clock: monotonic nanoseconds (tests may pass their own).
  public init(
    expirationSeconds: Int = StateStore.defaultExpirationSeconds,
    clock: (@Sendable () -> UInt64)? = nil
  ) {
    expirationNanoseconds = UInt64(StateStore.clampedExpiration(expirationSeconds)) * 1_000_000_000
    self.clock = clock ?? { SocketOps.monotonicNanos() }
    shared = nil
  }

  /// Creates a store whose contexts live in the shared state store, each expiring (a Redis TTL)
  /// `expirationSeconds` after its last write.
  package init(expirationSeconds: Int, sharedIn store: SharedRuntimeStubs) {
    let seconds = StateStore.clampedExpiration(expirationSeconds)
    expirationNanoseconds = UInt64(seconds) * 1_000_000_000
    clock = { SocketOps.monotonicNanos() }
    shared = SharedStateContexts(store, expirationSeconds: seconds)
  }

  /// `--state-expiration-seconds` in 1 ... ``maximumExpirationSeconds``.
  static func clampedExpiration(_ seconds: Int) -> Int {
    min(max(seconds, 1), StateStore.maximumExpirationSeconds)
  }

  /// A new write token: every write of one request to one context made with the same token adds 1 to the
  /// context's update count once. With the shared store a random one, so that tokens of different
  /// replicas do not meet.
  func newWriteToken() -> UInt64 {
    shared == nil ? writes.add(1, ordering: .relaxed).newValue : UInt64.random(in: 1 ... .max)
  }

  private func live(_ c: Context, now: UInt64) -> Bool { now &- c.written < expirationNanoseconds }

  /// The context named `name`, nil when it does not exist or expired.
  public func stateContext(named name: String) -> StateContextSnapshot? {
    if shared != nil { return try? checkedContext(named: name) }
    let now = clock()
    return contents.withLock { s in
      guard let c = s.contexts[Name(name)], live(c, now: now) else { return nil }
      return c.snapshot(name)
    }
  }

  /// The names of the live contexts, sorted.
  public func names() -> [String] {
    if shared != nil { return (try? checkedNames()) ?? [] }
    let now = clock()
    return contents.withLock { s in s.contexts.filter { live($0.value, now: now) }.map(\.key.text) }.sorted()
  }

  /// Every live context, sorted by name.
  public func snapshots() -> [StateContextSnapshot] {
    if shared != nil { return (try? checkedSnapshots()) ?? [] }
    let now = clock()
    return contents.withLock { s in
      s.contexts.compactMap { live($0.value, now: now) ? $0.value.snapshot($0.key.text) : nil }
    }.sorted { $0.name < $1.name }
  }

  /// Changes context `name` (created when missing) with `change`, counting the update once per `token`.
  /// `change` returns why it refuses before changing anything, or nil. The context is changed in place
  /// (no copy of its list per write).
  /// - Returns: nil, or why nothing was written (a bound of the store).
  func write(
    _ name: String, token: UInt64, _ change: (inout Context) -> String?
  ) -> String? {
    if shared != nil {
      do throws(RedisFailure) {
        return try checkedChange(name, token: token, creating: true, change).refusal
      } catch {
        return "context \(name) not written: \(error)"
      }
    }
    let now = clock()
    return contents.withLock { s -> String? in
      sweep(&s, now: now)
      if let i = s.contexts.index(forKey: Name(name)), live(s.contexts.values[i], now: now) {
        if let refused = change(&s.contexts.values[i]) { return refused }
        StateStore.written(&s.contexts.values[i], token: token, now: now)
        return nil
      }
      guard s.contexts.count < StateStore.maximumContexts || s.contexts[Name(name)] != nil else {
        return "context \(name) not created: the store holds \(StateStore.maximumContexts) contexts, "
          + "the most it keeps"
      }
      // New, or replacing an expired one.
      var context = Context(written: now, lastWrite: token)
      if let refused = change(&context) { return refused }
      s.contexts[Name(name)] = context
      return nil
    }
  }

  /// Changes the list of context `name` when it exists (an unknown context is not created), counting the
  /// update once per `token` even when nothing was removed.
  func changeExisting(_ name: String, token: UInt64, _ change: (inout Context) -> Void) -> Bool {
    if shared != nil {
      return
        (try? checkedChange(
          name, token: token, creating: false,
          { c in
            change(&c)
            return nil
          }
        ).done) ?? false
    }
    let now = clock()
    return contents.withLock { s -> Bool in
      guard let i = s.contexts.index(forKey: Name(name)), live(s.contexts.values[i], now: now) else {
        return false
      }
      change(&s.contexts.values[i])
      StateStore.written(&s.contexts.values[i], token: token, now: now)
      return true
    }
  }

  /// Records a write of request `token` to `context` at `now`: its update count grows once per request.
  private static func written(_ context: inout Context, token: UInt64, now: UInt64) {
    if context.lastWrite != token { context.countUpdate() }
    context.written = now
    context.lastWrite = token
  }

  /// Deletes context `name` (an unknown one is no error).
  public func delete(_ name: String) {
    if shared != nil {
      try? checkedDelete([name])
      return
    }
    _ = contents.withLock { $0.contexts.removeValue(forKey: Name(name)) }
  }

  /// Deletes every context whose whole name `regex` matches; returns how many.
  @discardableResult
  package func delete(matching regex: CompiledRegex) -> Int {
    if shared != nil { return (try? checkedDelete(matching: regex)) ?? 0 }
    return contents.withLock { s -> Int in
      let names = s.contexts.keys.filter { regex.matches($0.text) }
      for n in names { s.contexts.removeValue(forKey: n) }
      return names.count
    }
  }

  /// Deletes every context.
  public func deleteAll() {
    if shared != nil {
      try? checkedDeleteAll()
      return
    }
    contents.withLock { $0.contexts.removeAll() }
  }

  // MARK: With the shared state store

  /// Context `name`, nil when it does not exist (or expired).
  /// - Throws: ``RedisFailure`` when the shared store cannot answer.
  func checkedContext(named name: String) throws(RedisFailure) -> StateContextSnapshot? {
    guard let shared else { return stateContext(named: name) }
    return try shared.value(of: name).flatMap(StateStore.decode)?.snapshot(name)
  }

  /// The live contexts' names, sorted.
  /// - Throws: ``RedisFailure`` when the shared store cannot answer.
  func checkedNames() throws(RedisFailure) -> [String] {
    guard let shared else { return names() }
    return try shared.names().sorted()
  }

  /// Every live context, sorted by name.
  /// - Throws: ``RedisFailure`` when the shared store cannot answer.
  func checkedSnapshots() throws(RedisFailure) -> [StateContextSnapshot] {
    guard let shared else { return snapshots() }
    let names = try shared.names().sorted()
    let values = try shared.values(of: names)
    return zip(names, values).compactMap { name, value in value.flatMap(StateStore.decode)?.snapshot(name) }
  }

  /// Deletes the contexts named.
  /// - Throws: ``RedisFailure`` when the shared store cannot answer (nothing deleted).
  func checkedDelete(_ names: [String]) throws(RedisFailure) {
    guard let shared else {
      for name in names { delete(name) }
      return
    }
    try shared.delete(names)
  }

  /// Deletes every context whose whole name `regex` matches; returns how many.
  /// - Throws: ``RedisFailure`` when the shared store cannot answer.
  func checkedDelete(matching regex: CompiledRegex) throws(RedisFailure) -> Int {
    guard let shared else { return delete(matching: regex) }
    let names = try shared.names().filter { regex.matches($0) }
    try shared.delete(names)
    return names.count
  }

  /// Deletes every context.
  /// - Throws: ``RedisFailure`` when the shared store cannot answer.
  func checkedDeleteAll() throws(RedisFailure) {
    guard let shared else { return deleteAll() }
    try shared.delete(try shared.names())
  }

  /// Changes context `name` with `change` (creating it when missing and `creating`), counting the update
  /// once per `token`: ``write(_:token:_:)`` and ``changeExisting(_:token:_:)`` in one.
  ///
  /// With the shared store, a compare-and-set loop: this replica's writers to one context take turns
  /// (``SharedStateContexts/withWriteTurn(_:_:)``), so they never overtake each other; a write overtaken
  /// by another replica's applies its change to what that one wrote (the reply carries it), as
  /// ``OvertakenRetry`` says. `change` may run more than once, on fresh copies.
  /// - Returns: whether it was written, and why not when `change` refused.
  /// - Throws: ``RedisFailure`` when the shared store cannot answer, or (`.overtaken`) when every attempt
  ///   until the deadline was overtaken (nothing written either way).
  func checkedChange(
    _ name: String, token: UInt64, creating: Bool, _ change: (inout Context) -> String?
  ) throws(RedisFailure) -> (done: Bool, refusal: String?) {
    guard let shared else {
      if creating {
        let refusal = write(name, token: token, change)
        return (refusal == nil, refusal)
      }
      var refusal: String?
      let done = changeExisting(name, token: token) { c in refusal = change(&c) }
      return (done && refusal == nil, refusal)
    }
    return try shared.withWriteTurn(name) { () throws(RedisFailure) -> (done: Bool, refusal: String?) in
      var retry = OvertakenRetry()
      var stored = try shared.value(of: name)
      while true {
        var context: Context
        if let stored, let existing = StateStore.decode(stored) {
          context = existing
          if let refused = change(&context) { return (false, refused) }
          // The store's TTL, not `written`, says when it expires.
          StateStore.written(&context, token: token, now: 0)
        } else {
          guard creating else { return (false, nil) }
          context = Context(written: 0, lastWrite: token)
          if let refused = change(&context) { return (false, refused) }
        }
        switch try shared.set(name, to: StateStore.encode(context), ifStill: stored) {
        case .written: return (true, nil)
        case .overtaken(let current): stored = current
        }
        guard retry.waitForNextAttempt() else {
          throw .overtaken(
            "context \(name): every write for \(OvertakenRetry.deadlineText) was overtaken by other "
              + "replicas' writes; nothing written")
        }
      }
    }
  }

  /// A context as the shared store holds it: compact JSON (`p` properties and `l` list entries as
  /// [key, value] pairs, `n` the update count, `w` the last write's token).
  static func encode(_ context: Context) -> String {
    func fields(_ f: [StateField]) -> JSONValue {
      .array(f.map { .array([.string($0.key), .string($0.value)]) })
    }
    return JSONValue.object(
      JSONObject(pairs: [
        ("p", fields(context.properties)), ("l", .array(context.list.map(fields))),
        ("n", .number(JSONNumber(context.updateCount))), ("w", .string(String(context.lastWrite))),
      ])
    ).serialized()
  }

  /// ``encode(_:)``'s context back, nil for what does not have its shape.
  static func decode(_ text: String) -> Context? {
    func fields(_ value: JSONValue?) -> [StateField]? {
      guard let items = value?.arrayValue else { return nil }
      var out: [StateField] = []
      out.reserveCapacity(items.count)
      for item in items {
        guard let pair = item.arrayValue, pair.count == 2, let key = pair[0].stringValue,
          let value = pair[1].stringValue
        else { return nil }
        out.append(StateField(key, value))
      }
      return out
    }
    guard let o = (try? JSONValue.parse(text))?.objectValue, let properties = fields(o["p"]),
      let entries = o["l"]?.arrayValue, let count = o["n"]?.numberValue?.intValue, count >= 1,
      let token = o["w"]?.stringValue.flatMap({ UInt64($0) })
    else { return nil }
    var list: [[StateField]] = []
    list.reserveCapacity(entries.count)
    for entry in entries {
      guard let e = fields(entry) else { return nil }
      list.append(e)
    }
    return Context(properties: properties, list: list, updateCount: count, written: 0, lastWrite: token)
  }

  /// Removes expired contexts, at most once a second (under the lock, from a write).
  private func sweep(_ s: inout Contents, now: UInt64) {
    guard now &- s.swept >= 1_000_000_000 else { return }
    s.swept = now
    s.contexts = s.contexts.filter { live($0.value, now: now) }
  }
}

/// One request's (or admin call's) use of the state extension's contexts: what ``StateStore`` answers,
/// with the first failure of the shared state store kept, so that the caller answers 503 rather than
/// from a read that did not happen. Without the shared store it never fails.
final class StateAccess: TemplateStateLookup, Sendable {
  let store: StateStore
  private let failed = Mutex<RedisFailure?>(nil)

  init(_ store: StateStore) { self.store = store }

  /// The first failure of the shared store, or nil.
  var failure: RedisFailure? { failed.withLock { $0 } }

  private func attempt<T>(_ fallback: T, _ body: () throws(RedisFailure) -> T) -> T {
    do throws(RedisFailure) {
      return try body()
    } catch {
      failed.withLock { if $0 == nil { $0 = error } }
      return fallback
    }
  }

  func stateContext(named name: String) -> StateContextSnapshot? {
    attempt(nil) { () throws(RedisFailure) in try store.checkedContext(named: name) }
  }

  func names() -> [String] { attempt([]) { () throws(RedisFailure) in try store.checkedNames() } }

  func snapshots() -> [StateContextSnapshot] {
    attempt([]) { () throws(RedisFailure) in try store.checkedSnapshots() }
  }

  /// ``StateStore/write(_:token:_:)``: nil, or why nothing was written.
  func write(_ name: String, token: UInt64, _ change: (inout StateStore.Context) -> String?) -> String? {
    attempt("context \(name) not written: the shared state store is unavailable") { () throws(RedisFailure) in
      try store.checkedChange(name, token: token, creating: true, change).refusal
    }
  }

  /// ``StateStore/changeExisting(_:token:_:)``.
  func changeExisting(_ name: String, token: UInt64, _ change: (inout StateStore.Context) -> Void) -> Bool {
    attempt(false) { () throws(RedisFailure) in
      try store.checkedChange(
        name, token: token, creating: false,
        { c in
          change(&c)
          return nil
        }
      ).done
    }
  }

  func delete(_ names: [String]) { attempt(()) { () throws(RedisFailure) in try store.checkedDelete(names) } }

  @discardableResult
  func delete(matching regex: CompiledRegex) -> Int {
    attempt(0) { () throws(RedisFailure) in try store.checkedDelete(matching: regex) }
  }

  func deleteAll() { attempt(()) { () throws(RedisFailure) in try store.checkedDeleteAll() } }
}
