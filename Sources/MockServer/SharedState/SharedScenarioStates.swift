import Mappings
import Synchronization

/// Scenario states and response-sequence positions kept in the shared store, so that replicas advance
/// them together (issue 47; docs/scaling.md).
///
/// Matching stays in each process, against a snapshot of the states that carries the store's version
/// (a counter bumped by every change of a state). Serving a stub whose answer depended on that snapshot
/// is one round trip, ``commit(basedOn:stubID:countsServes:transition:)``: a server-side script that,
/// only when the store is still at the snapshot's version, takes the response-sequence position and
/// applies the scenario transition, atomically. When another replica moved a state meanwhile, the script
/// changes nothing and returns the fresh states instead; the caller matches again against them. So of
/// concurrent requests to one scenario step, exactly one is answered by that step's stub and moves the
/// state; the others are answered as the new state dictates.
///
/// Keys (with the configured prefix): `P:scenarios` (hash: scenario → state; absent = `Started`),
/// `P:scenarios:version` (integer), `P:sequences` (hash: stub id → serves so far).
package final class SharedScenarioStates: Sendable {
  /// The states as one replica last read them, and the version they were read at.
  package struct Snapshot: Sendable, Equatable {
    package var version: Int
    /// Scenarios not in `Started`.
    package var states: [String: String]

    /// The state of scenario `name`.
    package func state(of name: String) -> String { states[name] ?? StubMapping.scenarioStarted }
  }

  /// What a commit did.
  package enum Outcome: Sendable, Equatable {
    /// The store was at the snapshot's version: the serve counted and the transition (if its required
    /// state held) applied. `serveIndex` is the response-sequence position this serve takes (0-based; 0
    /// when the serve is not counted); `snapshot` the states after it.
    case committed(serveIndex: Int, snapshot: Snapshot)
    /// Another replica moved a state first: nothing changed; match again against `snapshot`.
    case stale(Snapshot)
  }

  /// The connections commits go out on, up to ``commitConnections`` at a time.
  private let pool: RedisConnectionPool
  /// The newest snapshot this replica read (from a snapshot or a commit): what requests are matched
  /// against first, so a request whose states did not move meanwhile costs one round trip (its commit).
  /// Version -1 until the first read, and again after a failure (the store may come back empty).
  private let newest = Mutex(Snapshot(version: -1, states: [:]))
  private let statesKey: String
  private let versionKey: String
  private let sequencesKey: String
  private let keyPrefix: String

  /// How many connections a replica's commits use at most (4): commits of different requests go out
  /// concurrently on as many, so that one slow round trip does not hold the others back. Small, as every
  /// replica holds them open against the one store.
  package static let commitConnections = 4

  /// - Parameter keyPrefix: prepended to every key (a session's or a deployment's namespace).
  package convenience init(connection: RedisConnection, keyPrefix: String = "mockserver") {
    self.init(pool: RedisConnectionPool([connection]), keyPrefix: keyPrefix)
  }

  /// - Parameters:
  ///   - pool: the connections commands go out on (concurrent commits, one per connection).
  ///   - keyPrefix: prepended to every key (a session's or a deployment's namespace).
  package init(pool: RedisConnectionPool, keyPrefix: String = "mockserver") {
    self.pool = pool
    self.keyPrefix = keyPrefix
    statesKey = keyPrefix + ":scenarios"
    versionKey = keyPrefix + ":scenarios:version"
    sequencesKey = keyPrefix + ":sequences"
  }

  /// Session `id`'s scenario states and sequence positions (keys under
  /// ``SharedRuntimeStubs/sessionKeyPrefix(_:_:)``), on this instance's pool of connections.
  package func session(_ id: String) -> SharedScenarioStates {
    SharedScenarioStates(pool: pool, keyPrefix: SharedRuntimeStubs.sessionKeyPrefix(keyPrefix, id))
  }

  /// The current states and their version, in one round trip.
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func snapshot() throws(RedisFailure) -> Snapshot {
    let reply = try run(["EVAL", Self.snapshotScript, "2", statesKey, versionKey])
    let snapshot = try Self.snapshot(from: reply)
    remember(snapshot)
    return snapshot
  }

  /// The newest snapshot this replica read (no round trip; version -1 when none is known).
  package var latest: Snapshot { newest.withLock { $0 } }

  /// Keeps `snapshot` as the newest unless a newer one is known: replies of concurrent commits arrive
  /// in any order, and the version only grows while the store keeps its data (a failure forgets the
  /// newest, ``forget()``; a store emptied without a failure is seen by a stale commit: see ``commit``).
  private func remember(_ snapshot: Snapshot) {
    newest.withLock { if snapshot.version >= $0.version { $0 = snapshot } }
  }

  /// Forgets the newest snapshot (after a failure: the store may come back empty, its version counting
  /// from 0 again).
  private func forget() { newest.withLock { $0 = Snapshot(version: -1, states: [:]) } }

  /// One command on a connection of the pool; a failure forgets the newest snapshot.
  private func run(_ arguments: [String]) throws(RedisFailure) -> RedisReply {
    try pipeline([arguments])[0]
  }

  private func pipeline(_ commands: [[String]]) throws(RedisFailure) -> [RedisReply] {
    do {
      return try pool.withConnection { connection throws(RedisFailure) in try connection.pipeline(commands) }
    } catch {
      forget()
      throw error
    }
  }

  /// Commits a serve matched against the snapshot at `version` (see the type's description); a nil
  /// `version` (a match that read no state) commits whatever the version.
  /// - Parameters:
  ///   - stubID: the stub served.
  ///   - countsServes: the stub has a response sequence, whose position this serve takes.
  ///   - transition: its scenario move: the scenario's name, the state it requires (any state when nil)
  ///     and the state it moves to.
  /// - Throws: ``RedisFailure`` when the store cannot answer (the serve must then not be answered from
  ///   one replica's view: the caller answers 503).
  package func commit(
    basedOn version: Int?, stubID: String, countsServes: Bool,
    transition: (name: String, required: String?, next: String)?
  ) throws(RedisFailure) -> Outcome {
    let reply = try run([
      "EVAL", Self.commitScript, "3", statesKey, versionKey, sequencesKey,
      version.map { String($0) } ?? "", stubID, countsServes ? "1" : "0",
      transition?.name ?? "", transition.map { $0.required == nil ? "0" : "1" } ?? "0",
      transition?.required ?? "", transition?.next ?? "",
    ])
    guard let items = reply.array, items.count == 4, let committed = items[0].integer else {
      throw .reply("unexpected commit reply \(reply)")
    }
    let snapshot = try Self.snapshot(from: .array(Array(items[1...2])))
    if let version, snapshot.version < version {
      // The store went back to an earlier version (emptied without a failure seen here): start over.
      forget()
    }
    remember(snapshot)
    if committed == 1 {
      return .committed(serveIndex: items[3].integer ?? 0, snapshot: snapshot)
    }
    return .stale(snapshot)
  }

  /// Sets scenario `name` to `state` (the admin API's `PUT /__admin/scenarios/{name}/state`).
  package func set(_ name: String, to state: String) throws(RedisFailure) {
    _ = try pipeline([["HSET", statesKey, name, state], ["INCR", versionKey]])
  }

  /// Every scenario back to `Started`, every sequence to its first response.
  package func reset() throws(RedisFailure) {
    _ = try pipeline([["DEL", statesKey, sequencesKey], ["INCR", versionKey]])
  }

  /// `{version, [name, state, …]}` → a snapshot.
  private static func snapshot(from reply: RedisReply) throws(RedisFailure) -> Snapshot {
    guard let items = reply.array, items.count == 2, let version = items[0].integer,
      let pairs = items[1].array, pairs.count % 2 == 0
    else { throw .reply("unexpected snapshot reply \(reply)") }
    var states: [String: String] = [:]
    var i = 0
    while i < pairs.count {
      if let name = pairs[i].text, let state = pairs[i + 1].text { states[name] = state }
      i += 2
    }
    return Snapshot(version: version, states: states)
  }

  /// KEYS: states, version. Returns {version, HGETALL states}.
  static let snapshotScript = """
    return {tonumber(redis.call('GET', KEYS[2]) or '0'), redis.call('HGETALL', KEYS[1])}
    """

  /// KEYS: states, version, sequences. ARGV: expected version ('' for any), stub id, counts (1/0), scenario name ('' for
  /// none), has a required state (1/0), required state, next state. Returns {1 or 0, version, HGETALL
  /// states, serve index}: 1 when committed, 0 (nothing changed) when the version moved.
  static let commitScript = """
    local version = tonumber(redis.call('GET', KEYS[2]) or '0')
    if ARGV[1] ~= '' and version ~= tonumber(ARGV[1]) then
      return {0, version, redis.call('HGETALL', KEYS[1]), 0}
    end
    local index = 0
    if ARGV[3] == '1' then
      index = redis.call('HINCRBY', KEYS[3], ARGV[2], 1) - 1
    end
    if ARGV[4] ~= '' then
      local current = redis.call('HGET', KEYS[1], ARGV[4]) or 'Started'
      if ARGV[5] == '0' or ARGV[6] == current then
        if ARGV[7] ~= current then
          redis.call('HSET', KEYS[1], ARGV[4], ARGV[7])
          version = redis.call('INCR', KEYS[2])
        end
      end
    end
    return {1, version, redis.call('HGETALL', KEYS[1]), index}
    """
}
