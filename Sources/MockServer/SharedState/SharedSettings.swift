import MockJSON

/// The settings of `/__admin/settings` kept in the shared store (`--state-store`, issue 47;
/// docs/scaling.md), so that a global delay set through one replica delays every replica's answers.
///
/// The store holds the settings object as `GET /__admin/settings` shows it (`P:settings`, compact JSON). A
/// change writes it and publishes on the runtime stubs' channel (``SharedRuntimeStubs/channel``), so each
/// replica's one subscriber reads it again. Writes and reads run inside ``SharedRuntimeStubs/serialized(_:)``
/// and a replica only ever applies what it read from the store: after a change through two replicas at
/// once, every replica ends with the store's value (the last write), never its own.
package struct SharedSettings: Sendable {
  let shared: SharedRuntimeStubs
  private var key: String { shared.keyPrefix + ":settings" }

  package init(_ shared: SharedRuntimeStubs) { self.shared = shared }

  /// What a change of the settings publishes on the channel (a change of the stubs publishes a number).
  package static let changeMessage = "settings"

  /// Writes `settings` (the settings object) and publishes the change, then hands what the store holds
  /// to `apply`.
  /// - Throws: ``RedisFailure`` when the store cannot take it: nothing changed, here or there.
  package func write(_ settings: JSONValue, then apply: (JSONValue) -> Void) throws(RedisFailure) {
    try shared.serialized { _ throws(RedisFailure) in
      _ = try shared.connection.command([
        "EVAL", Self.writeScript, "1", key, settings.serialized(), shared.channel, Self.changeMessage,
      ])
      try read(then: apply)
    }
  }

  /// Hands the store's settings to `apply` (none stored: `apply` is not called, and the replica keeps its
  /// own flags' values).
  /// - Throws: ``RedisFailure`` when the store cannot answer (nothing changed).
  package func refresh(_ apply: (JSONValue) -> Void) throws(RedisFailure) {
    try shared.serialized { _ throws(RedisFailure) in try read(then: apply) }
  }

  private func read(then apply: (JSONValue) -> Void) throws(RedisFailure) {
    guard let text = try shared.connection.command(["GET", key]).text else { return }
    guard let json = try? JSONValue.parse(bytes: Array(text.utf8)) else {
      shared.logLine("mockserver: shared state store: settings left as they are: not JSON: \(text)")
      return
    }
    apply(json)
  }

  /// KEYS: settings. ARGV: the settings JSON, the channel, the message. Sets and publishes.
  static let writeScript = """
    redis.call('SET', KEYS[1], ARGV[1])
    redis.call('PUBLISH', ARGV[2], ARGV[3])
    return 1
    """
}
