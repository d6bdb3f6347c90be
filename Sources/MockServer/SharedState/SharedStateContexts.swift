import Synchronization

/// The state extension's contexts kept in the shared store (`--state-store`, issue 47; docs/scaling.md,
/// docs/stateful.md), so that a context written through one replica is read through every replica.
///
/// One key per context (`P:state:<name>`), its value the context as compact JSON (``StateStore`` encodes
/// and decodes it), its expiry a Redis TTL set by every write (reads do not extend it, as in one process).
/// A write is a compare-and-set script: it sets the new value only when the key still holds the value the
/// replica read (or still does not exist), so writes to one context through different replicas are atomic
/// per context: the loser reads again and applies its change to what the winner wrote.
package final class SharedStateContexts: Sendable {
  private let connection: RedisConnection
  private let prefix: String
  /// The TTL of a written context, in seconds (the caller's range-checked `--state-expiration-seconds`).
  package let expirationSeconds: Int

  /// Turns of this replica's writers: one lock per stripe of context names.
  private let writeTurns: [Turn] = (0..<64).map { _ in Turn() }

  /// One stripe's lock (a class: a `Mutex` cannot sit in an array).
  private final class Turn: Sendable {
    let lock = Mutex(())
  }

  package init(_ shared: SharedRuntimeStubs, expirationSeconds: Int) {
    connection = shared.makeConnection()
    prefix = shared.keyPrefix + ":state:"
    self.expirationSeconds = expirationSeconds
  }

  /// The stored JSON of context `name`, nil when there is none (or it expired).
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func value(of name: String) throws(RedisFailure) -> String? {
    try connection.command(["GET", prefix + name]).text
  }

  /// Runs `body` (a read-change-write of context `name`) while no other writer of this replica to a
  /// context of the same stripe runs: writers of one replica then never overtake each other, only
  /// other replicas' writers can (a few, however many requests each replica serves at once).
  package func withWriteTurn<T>(_ name: String, _ body: () throws(RedisFailure) -> T) throws(RedisFailure)
    -> T
  {
    var hasher = Hasher()
    hasher.combine(name)
    let turn = writeTurns[Int(UInt(bitPattern: hasher.finalize()) % UInt(writeTurns.count))]
    return try turn.lock.withLock { _ throws(RedisFailure) -> T in try body() }
  }

  /// What a compare-and-set write did.
  package enum Outcome: Equatable {
    /// The value was set.
    case written
    /// Another write came first: nothing was written; what the context holds now (nil: none).
    case overtaken(current: String?)
  }

  /// Sets context `name` to `value` (with the TTL) when it still holds `expected` (nil: does not exist).
  /// One round trip: when another write came first, the reply carries what it wrote, so that the caller
  /// applies its change to that without reading again.
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func set(_ name: String, to value: String, ifStill expected: String?) throws(RedisFailure)
    -> Outcome
  {
    let reply = try connection.command([
      "EVAL", Self.compareAndSetScript, "1", prefix + name, expected == nil ? "0" : "1", expected ?? "",
      value,
      String(expirationSeconds),
    ])
    if reply.integer == 1 { return .written }
    guard let items = reply.array, items.count == 2, items[0].integer == 0 else {
      throw .reply("unexpected compare-and-set reply \(reply)")
    }
    return .overtaken(current: items[1].text)
  }

  /// Deletes the contexts named.
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func delete(_ names: [String]) throws(RedisFailure) {
    var commands: [[String]] = []
    var start = 0
    while start < names.count {
      let end = min(start + 1000, names.count)
      commands.append(["DEL"] + names[start..<end].map { prefix + $0 })
      start = end
    }
    _ = try connection.pipeline(commands)
  }

  /// The names of every stored context (unsorted), by `SCAN` (it does not block the store as `KEYS`
  /// would).
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func names() throws(RedisFailure) -> [String] {
    var names: [String] = []
    var cursor = "0"
    let pattern = Self.globEscaped(prefix) + "*"
    repeat {
      let reply = try connection.command(["SCAN", cursor, "MATCH", pattern, "COUNT", "1000"])
      guard let items = reply.array, items.count == 2, let next = items[0].text, let keys = items[1].array
      else { throw .reply("unexpected SCAN reply \(reply)") }
      for key in keys {
        if let text = key.text, text.hasPrefix(prefix) { names.append(String(text.dropFirst(prefix.count))) }
      }
      cursor = next
    } while cursor != "0"
    // SCAN may return a key twice; names are told apart by their bytes (as the keys are), not by
    // `String`'s equality, which would merge `é` and `e` + U+0301.
    var seen: Set<[UInt8]> = []
    return names.filter { seen.insert(Array($0.utf8)).inserted }
  }

  /// The stored JSON of each context named, in order (nil for one that is gone).
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func values(of names: [String]) throws(RedisFailure) -> [String?] {
    guard !names.isEmpty else { return [] }
    var out: [String?] = []
    out.reserveCapacity(names.count)
    var start = 0
    while start < names.count {
      let end = min(start + 1000, names.count)
      let reply = try connection.command(["MGET"] + names[start..<end].map { prefix + $0 })
      guard let items = reply.array, items.count == end - start else {
        throw .reply("unexpected MGET reply \(reply)")
      }
      out += items.map(\.text)
      start = end
    }
    return out
  }

  /// The prefix with the glob characters of `SCAN … MATCH` escaped.
  private static func globEscaped(_ text: String) -> String {
    var out = ""
    for c in text {
      if "*?[]\\".contains(c) { out.append("\\") }
      out.append(c)
    }
    return out
  }

  /// KEYS: the context. ARGV: 1 when a value is expected (0: the key must not exist), the expected
  /// value, the new value, the TTL in seconds. 1 when set; otherwise {0, the current value} (`GET`'s
  /// false for a missing key, which Redis replies as a nil element).
  static let compareAndSetScript = """
    local current = redis.call('GET', KEYS[1])
    if ARGV[1] == '1' then
      if current ~= ARGV[2] then return {0, current} end
    elseif current then
      return {0, current}
    end
    redis.call('SET', KEYS[1], ARGV[3], 'EX', ARGV[4])
    return 1
    """
}
