import Foundation
import Synchronization

/// The runtime stubs kept in the shared store (`--state-store`, issue 47; docs/scaling.md), so that a
/// stub created, edited or removed through the admin API of one replica is served by every replica.
///
/// The store holds each runtime stub's JSON by id, their order (a later stub outranks an earlier one of
/// equal priority) and a generation counter. A change is one server-side script: only when the store is
/// still at the generation this replica last read, it applies the change, bumps the generation and
/// publishes it on a channel; otherwise it changes nothing and the replica reads the store again and
/// applies its change to what it read. Every replica subscribes to the channel on a connection of its
/// own (a thread of its own, reconnecting with the connection's back-off) and, on a message or after
/// (re)subscribing, reads the store and swaps its runtime stubs for what it holds (``StubStore`` rebuilds
/// its immutable table), so plain stubs are matched and served with no store round trip.
///
/// Keys (with the prefix): `P:stubs` (hash: id → stub JSON), `P:stubs:order` (list of ids),
/// `P:stubs:generation` (integer); channel `P:stubs:changed`.
package final class SharedRuntimeStubs: Sendable {
  /// One runtime stub as the store holds it.
  package struct Entry: Sendable, Equatable {
    package var id: String
    /// The stub's JSON as the admin API shows it, compact.
    package var json: String
  }

  /// What this replica last read from (or wrote to) the store; owned by ``serialized(_:)``.
  package struct View: Sendable {
    package var generation = 0
    package var entries: [Entry] = []
  }

  /// What a write did.
  package enum WriteOutcome: Sendable, Equatable {
    /// Written at this generation (and published).
    case written(generation: Int)
    /// The store moved on since the view was read: nothing was written.
    case stale
  }

  /// The connection for commands (reads, writes, health).
  package let connection: RedisConnection
  /// The subscriber's own connection (held while subscribed).
  private let listener: RedisConnection
  private let hashKey: String
  private let orderKey: String
  private let generationKey: String
  package let channel: String
  /// The view, and the lock that makes a change of the runtime stubs (store write, then local swap) one
  /// step: changes and refreshes of one replica never interleave.
  private let view = Mutex(View())
  private let log: @Sendable (String) -> Void
  private let listening = Mutex(false)
  /// Reports a change between up and down, one log line per change for every connection of the replica.
  private let report: @Sendable (Bool, String) -> Void
  /// The breaks seen by every connection of the replica (each reconnects after any one's).
  private let breaks: RedisBreaks
  private let timeoutMilliseconds: Int
  /// The key prefix (a session's or a deployment's namespace).
  package let keyPrefix: String
  /// What a published change says before its generation: empty for the runtime stubs of every
  /// session, `session:<id>:` for one session's (``session(_:)``).
  private let messageTag: String

  /// - Parameters:
  ///   - keyPrefix: prepended to every key and to the channel.
  ///   - timeoutMilliseconds: connect and command timeout of the command connection.
  ///   - log: writes one line (a change between up and down, a stub in the store that does not parse).
  package init(
    endpoint: RedisEndpoint, keyPrefix: String = "mockserver", timeoutMilliseconds: Int = 1000,
    log: @escaping @Sendable (String) -> Void
  ) {
    // Whether the store was reachable at the last report, for both connections: one log line per change.
    let up = Flag()
    let report: @Sendable (Bool, String) -> Void = { isUp, detail in
      let changed = up.value.withLock { u in
        defer { u = isUp }
        return u != isUp
      }
      guard changed else { return }
      log(
        isUp
          ? "mockserver: shared state store \(endpoint) is up again"
          : "mockserver: shared state store \(endpoint) is down (\(detail)); retrying with back-off")
    }
    self.report = report
    self.timeoutMilliseconds = timeoutMilliseconds
    self.keyPrefix = keyPrefix
    let breaks = RedisBreaks()
    self.breaks = breaks
    connection = RedisConnection(
      endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds, onStateChange: report, breaks: breaks)
    listener = RedisConnection(
      endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds, onStateChange: report, breaks: breaks)
    hashKey = keyPrefix + ":stubs"
    orderKey = keyPrefix + ":stubs:order"
    generationKey = keyPrefix + ":stubs:generation"
    channel = keyPrefix + ":stubs:changed"
    messageTag = ""
    self.log = log
  }

  /// The runtime stubs of session `id`: keys under ``sessionKeyPrefix(_:_:)``, this instance's
  /// connections, and changes published on its channel as `session:<id>:<generation>`.
  private init(sessionOf parent: SharedRuntimeStubs, id: String) {
    report = parent.report
    breaks = parent.breaks
    timeoutMilliseconds = parent.timeoutMilliseconds
    keyPrefix = SharedRuntimeStubs.sessionKeyPrefix(parent.keyPrefix, id)
    connection = parent.connection
    listener = parent.listener
    hashKey = keyPrefix + ":stubs"
    orderKey = keyPrefix + ":stubs:order"
    generationKey = keyPrefix + ":stubs:generation"
    channel = parent.channel
    messageTag = SharedRuntimeStubs.sessionChangePrefix + id + ":"
    log = parent.log
  }

  /// Session `id`'s runtime stubs in the store (docs/scaling.md#sessions). It never listens: this
  /// instance's subscriber hears its changes.
  package func session(_ id: String) -> SharedRuntimeStubs { SharedRuntimeStubs(sessionOf: self, id: id) }

  /// The key prefix of session `id`'s keys under `prefix` (its stubs, scenario states and sequence
  /// positions).
  package static func sessionKeyPrefix(_ prefix: String, _ id: String) -> String { prefix + ":session:" + id }

  /// A published change of one session's runtime stubs: `session:<id>:<generation>`.
  package static let sessionChangePrefix = "session:"
  /// Published when a session ended (expired or reset): `session-ended:<id>`.
  package static let sessionEndedPrefix = "session-ended:"

  package var endpoint: RedisEndpoint { connection.endpoint }

  /// Another connection to the store, reporting up and down in the same log lines (for the scenario
  /// states and the journal: each owns its connection, so none waits behind another's commands).
  package func makeConnection() -> RedisConnection {
    RedisConnection(
      endpoint: endpoint, timeoutMilliseconds: timeoutMilliseconds, onStateChange: report, breaks: breaks)
  }

  /// Writes one line to the log.
  package func logLine(_ text: String) { log(text) }

  /// Runs `body` with the view, one change or refresh at a time.
  package func serialized<T: Sendable>(_ body: (inout View) throws(RedisFailure) -> T) throws(RedisFailure)
    -> T
  {
    let result: Result<T, RedisFailure> = view.withLock { v in
      do throws(RedisFailure) {
        return .success(try body(&v))
      } catch {
        return .failure(error)
      }
    }
    return try result.get()
  }

  /// The store's runtime stubs and generation, in one round trip.
  package func read() throws(RedisFailure) -> View {
    let reply = try connection.command(["EVAL", Self.readScript, "3", hashKey, orderKey, generationKey])
    guard let items = reply.array, let generation = items.first?.integer, items.count % 2 == 1 else {
      throw .reply("unexpected runtime stubs reply \(reply)")
    }
    var entries: [Entry] = []
    entries.reserveCapacity(items.count / 2)
    var i = 1
    while i + 1 < items.count {
      if let id = items[i].text, let json = items[i + 1].text { entries.append(Entry(id: id, json: json)) }
      i += 2
    }
    return View(generation: generation, entries: entries)
  }

  /// Writes `entries` as the runtime stubs over `base` (only what differs is sent), when the store is
  /// still at `base.generation`; then publishes the new generation.
  package func write(_ entries: [Entry], over base: View) throws(RedisFailure) -> WriteOutcome {
    let wanted = Dictionary(entries.map { ($0.id, $0.json) }, uniquingKeysWith: { _, last in last })
    let had = Dictionary(base.entries.map { ($0.id, $0.json) }, uniquingKeysWith: { _, last in last })
    let deleted = had.keys.filter { wanted[$0] == nil }
    let changed = entries.filter { had[$0.id] != $0.json }
    var arguments = [
      "EVAL", Self.writeScript, "3", hashKey, orderKey, generationKey, String(base.generation), channel,
      messageTag, String(deleted.count),
    ]
    arguments += deleted
    arguments.append(String(changed.count))
    for entry in changed { arguments += [entry.id, entry.json] }
    arguments += entries.map(\.id)
    let reply = try connection.command(arguments)
    guard let items = reply.array, items.count == 2, let done = items[0].integer,
      let generation = items[1].integer
    else { throw .reply("unexpected runtime stubs write reply \(reply)") }
    return done == 1 ? .written(generation: generation) : .stale
  }

  /// True when the store answers `PING` now.
  package var isReachable: Bool { connection.isReachable }

  /// Starts the subscriber thread (once): it calls `refresh` with each message (a generation for a change
  /// of the stubs, ``SharedSettings/changeMessage`` for one of the settings) and with nil after every
  /// (re)subscription (refresh everything: messages may have been missed); a refresh that fails ends the
  /// subscription, which is made again after the back-off.
  package func startListening(_ refresh: @escaping @Sendable (_ message: String?) -> Bool) {
    let first = listening.withLock { started in
      defer { started = true }
      return !started
    }
    guard first else { return }
    let listener = listener
    let connection = connection
    let channel = channel
    let thread = Thread {
      while true {
        _ = listener.subscribe(
          channel,
          onSubscribed: {
            // The command connection may still be in its back-off from the outage: a few tries.
            for _ in 0..<5 {
              if refresh(nil) { return true }
              let wait = max(connection.retryDelayNanoseconds, 50_000_000)
              usleep(UInt32(min(wait, 5_000_000_000) / 1000))
            }
            return false
          },
          onMessage: { refresh($0) })
        let wait = max(listener.retryDelayNanoseconds, 50_000_000)
        usleep(UInt32(min(wait, 5_000_000_000) / 1000))
      }
    }
    thread.name = "mockserver-state-store-listener"
    thread.start()
  }

  private final class Flag: Sendable {
    let value = Mutex(true)
  }

  /// KEYS: hash, order, generation. Returns {generation, id, json, id, json, …} in order.
  static let readScript = """
    local out = {tonumber(redis.call('GET', KEYS[3]) or '0')}
    for _, id in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
      local json = redis.call('HGET', KEYS[1], id)
      if json then
        out[#out + 1] = id
        out[#out + 1] = json
      end
    end
    return out
    """

  /// KEYS: hash, order, generation. ARGV: expected generation, channel, the message's tag (what comes
  /// before the generation), number of deleted ids, the ids,
  /// number of changed stubs, their (id, json) pairs, then every id in order. Returns {1, new
  /// generation} when written (and published), {0, generation} when the store had moved on.
  static let writeScript = """
    local generation = tonumber(redis.call('GET', KEYS[3]) or '0')
    if generation ~= tonumber(ARGV[1]) then return {0, generation} end
    local i = 4
    local deleted = tonumber(ARGV[i])
    i = i + 1
    for _ = 1, deleted do
      redis.call('HDEL', KEYS[1], ARGV[i])
      i = i + 1
    end
    local changed = tonumber(ARGV[i])
    i = i + 1
    for _ = 1, changed do
      redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
      i = i + 2
    end
    redis.call('DEL', KEYS[2])
    local ids = {}
    for k = i, #ARGV do ids[#ids + 1] = ARGV[k] end
    for k = 1, #ids, 1000 do
      redis.call('RPUSH', KEYS[2], unpack(ids, k, math.min(k + 999, #ids)))
    end
    generation = redis.call('INCR', KEYS[3])
    redis.call('PUBLISH', ARGV[2], ARGV[3] .. tostring(generation))
    return {1, generation}
    """
}
