/// When each session was last active, kept in the shared store so that a session ends once it is idle
/// on every replica (docs/scaling.md#sessions), and the one script that ends a session there.
///
/// Each replica sends the sessions it served since its last sweep (``touch(_:atMilliseconds:)``), then
/// asks for the sessions idle on all of them (``idle(before:)``) and ends each (``end(_:idleBefore:)``):
/// a server-side script that, only while the session is still idle, removes it, deletes its keys (its
/// runtime stubs, scenario states and sequence positions) and publishes `session-ended:<id>` on the
/// runtime stubs' channel, so every replica forgets it. Of replicas sweeping at once, one ends it.
///
/// Keys (with the prefix): `P:sessions` (sorted set: session id → last activity, ms since 1970); a
/// session's own keys are under `P:session:<id>` (``SharedRuntimeStubs/sessionKeyPrefix(_:_:)``).
package final class SharedSessions: Sendable {
  private let connection: RedisConnection
  private let key: String
  private let keyPrefix: String
  private let channel: String

  /// - Parameters:
  ///   - keyPrefix: the deployment's prefix (sessions' keys are under it).
  ///   - channel: the runtime stubs' channel, where the end of a session is published.
  package init(connection: RedisConnection, keyPrefix: String, channel: String) {
    self.connection = connection
    self.keyPrefix = keyPrefix
    self.channel = channel
    key = keyPrefix + ":sessions"
  }

  /// Records that `ids` were active at `milliseconds` (since 1970); a later time already recorded stays.
  /// - Throws: ``RedisFailure`` when the store cannot take it.
  package func touch(_ ids: [String], atMilliseconds milliseconds: Int64) throws(RedisFailure) {
    guard !ids.isEmpty else { return }
    var arguments = ["ZADD", key, "GT"]
    arguments.reserveCapacity(3 + 2 * ids.count)
    for id in ids { arguments += [String(milliseconds), id] }
    _ = try connection.command(arguments)
  }

  /// Up to `limit` sessions last active before `milliseconds` (since 1970), on every replica.
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func idle(before milliseconds: Int64, limit: Int = 100) throws(RedisFailure) -> [String] {
    let reply = try connection.command([
      "ZRANGEBYSCORE", key, "-inf", "(\(milliseconds)", "LIMIT", "0", String(limit),
    ])
    return (reply.array ?? []).compactMap(\.text)
  }

  /// Every session the store knows of.
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func all() throws(RedisFailure) -> [String] {
    (try connection.command(["ZRANGE", key, "0", "-1"]).array ?? []).compactMap(\.text)
  }

  /// Ends session `id` in the store: removes it, deletes its keys and publishes its end, only while it
  /// is still idle since before `idleBefore` (ms since 1970; nil: at once, as a reset does).
  /// - Returns: true when this call ended it (false: it was active again, or another replica ended it).
  /// - Throws: ``RedisFailure`` when the store cannot take it.
  package func end(_ id: String, idleBefore: Int64?) throws(RedisFailure) -> Bool {
    let reply = try connection.command([
      "EVAL", Self.endScript, "1", key, id, idleBefore.map(String.init) ?? "",
      SharedRuntimeStubs.sessionKeyPrefix(keyPrefix, id), channel, SharedRuntimeStubs.sessionEndedPrefix + id,
    ])
    return reply.integer == 1
  }

  /// KEYS: the sessions' sorted set. ARGV: id, idle-before (ms, or empty for at once), the session's key
  /// prefix, channel, message. Returns 1 when it ended the session.
  static let endScript = """
    local score = redis.call('ZSCORE', KEYS[1], ARGV[1])
    if ARGV[2] ~= '' then
      if not score or tonumber(score) >= tonumber(ARGV[2]) then return 0 end
    end
    redis.call('ZREM', KEYS[1], ARGV[1])
    local p = ARGV[3]
    redis.call('DEL', p .. ':stubs', p .. ':stubs:order', p .. ':stubs:generation', p .. ':scenarios',
      p .. ':scenarios:version', p .. ':sequences')
    redis.call('PUBLISH', ARGV[4], ARGV[5])
    return 1
    """
}
