import CHiredis
import Foundation
import Synchronization

/// Where the shared state store is: `redis://[user:password@]host[:port][/db]` (the scheme of Redis's own
/// clients; Valkey speaks the same protocol). Every part is checked where it enters.
package struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
  package var host: String
  /// 1...65535 (6379 when the URL names none).
  package var port: Int
  /// For `AUTH user password` (Redis 6 ACLs); nil with a password alone means `AUTH password`.
  package var user: String?
  package var password: String?
  /// `SELECT` index, 0...1,000,000 (Redis's default configuration has 16).
  package var database: Int

  /// Parses a store URL.
  /// - Throws: ``RedisFailure/badURL(_:)`` naming what is wrong.
  package init(url text: String) throws(RedisFailure) {
    guard text.hasPrefix("redis://") else {
      throw .badURL("\(text): expected redis://[user:password@]host[:port][/db]")
    }
    var rest = Substring(text.dropFirst("redis://".count))
    var database = 0
    if let slash = rest.firstIndex(of: "/") {
      let path = rest[rest.index(after: slash)...]
      rest = rest[..<slash]
      if !path.isEmpty {
        guard let n = Int(path), (0...1_000_000).contains(n) else {
          throw .badURL("\(text): the database (after /) must be an integer 0...1000000, found '\(path)'")
        }
        database = n
      }
    }
    var user: String?
    var password: String?
    if let at = rest.lastIndex(of: "@") {
      let credentials = rest[..<at]
      rest = rest[rest.index(after: at)...]
      if let colon = credentials.firstIndex(of: ":") {
        let name = String(credentials[..<colon]).removingPercentEncoding ?? String(credentials[..<colon])
        user = name.isEmpty ? nil : name
        let secret = String(credentials[credentials.index(after: colon)...])
        password = secret.removingPercentEncoding ?? secret
      } else {
        password = String(credentials).removingPercentEncoding ?? String(credentials)
      }
    }
    var host = String(rest)
    var port = 6379
    if rest.hasPrefix("[") {
      // An IPv6 literal: [::1]:6379.
      guard let close = rest.firstIndex(of: "]") else { throw .badURL("\(text): unclosed [ in the host") }
      host = String(rest[rest.index(after: rest.startIndex)..<close])
      let after = rest[rest.index(after: close)...]
      if after.hasPrefix(":") { port = try Self.port(after.dropFirst(), in: text) }
    } else if let colon = rest.lastIndex(of: ":") {
      host = String(rest[..<colon])
      port = try Self.port(rest[rest.index(after: colon)...], in: text)
    }
    guard !host.isEmpty else { throw .badURL("\(text): no host") }
    self.host = host
    self.port = port
    self.user = user
    self.password = password
    self.database = database
  }

  private static func port(_ text: Substring, in url: String) throws(RedisFailure) -> Int {
    guard let n = Int(text), (1...65535).contains(n) else {
      throw .badURL("\(url): the port must be an integer 1...65535, found '\(text)'")
    }
    return n
  }

  /// The URL without its password (for logs and health answers).
  package var description: String {
    let credentials = password == nil ? "" : "\(user ?? ""):***@"
    let shownHost = host.contains(":") ? "[\(host)]" : host
    return "redis://\(credentials)\(shownHost):\(port)/\(database)"
  }
}

/// Why a store operation did not happen.
package enum RedisFailure: Error, Sendable, Equatable, CustomStringConvertible {
  /// The store URL is malformed (a usage error).
  case badURL(String)
  /// No connection: refused, timed out, reset, or waiting for the next reconnection attempt.
  case unavailable(String)
  /// The server answered with an error reply (`-ERR …`, a script error).
  case reply(String)
  /// A write was overtaken by other replicas' writes for as long as it may wait (the store is up, but this
  /// replica could not make its change).
  case overtaken(String)

  package var description: String {
    switch self {
    case .badURL(let text): return text
    case .unavailable(let text): return "the shared state store is unavailable: \(text)"
    case .reply(let text): return "the shared state store refused a command: \(text)"
    case .overtaken(let text): return "the shared state store did not take a write: \(text)"
    }
  }
}

/// A reply (RESP2, what hiredis 0.14 reads), copied out of hiredis's reply object.
package enum RedisReply: Sendable, Equatable {
  case status(String)
  case integer(Int)
  case bulk([UInt8])
  case null
  case array([RedisReply])

  /// The bulk string's text, or the status text.
  package var text: String? {
    switch self {
    case .bulk(let bytes): return String(decoding: bytes, as: UTF8.self)
    case .status(let text): return text
    default: return nil
    }
  }

  package var integer: Int? {
    if case .integer(let n) = self { return n }
    return nil
  }

  package var array: [RedisReply]? {
    if case .array(let items) = self { return items }
    return nil
  }
}

/// One command's arguments as bytes in one buffer (binary-safe: hiredis is given each length): an
/// argument can be written in place (a batch of journal entries is one command, its entries written into
/// the buffer without a `String` or an allocation each), and a buffer kept by its owner is reused with
/// its capacity.
package struct RedisArguments: Sendable {
  /// Every argument's bytes, one after another.
  package private(set) var bytes: [UInt8] = []
  /// Where each argument ends in ``bytes``.
  package private(set) var ends: [Int] = []

  package init() {}

  package init(_ arguments: [String]) {
    for argument in arguments { append(argument) }
  }

  /// The number of arguments.
  package var count: Int { ends.count }

  package mutating func append(_ argument: String) {
    bytes.append(contentsOf: argument.utf8)
    ends.append(bytes.count)
  }

  /// Appends one argument: the bytes `write` appends.
  package mutating func append(writing write: (inout [UInt8]) -> Void) {
    write(&bytes)
    ends.append(bytes.count)
  }

  /// Removes every argument, keeping the capacity.
  package mutating func removeAll() {
    bytes.removeAll(keepingCapacity: true)
    ends.removeAll(keepingCapacity: true)
  }
}

/// The breaks seen by one replica's connections to its store. When one connection's socket breaks (the
/// store stopped or restarted, a command timed out), every other connection made with the same
/// `RedisBreaks` drops its socket before its next command and connects afresh: a connection idle through
/// an outage would otherwise find out only on a command after the store is back (`Server closed the
/// connection`, and a 503 for the request that sent it).
package final class RedisBreaks: Sendable {
  private let count = Atomic<UInt64>(0)

  package init() {}

  /// How many breaks were seen so far.
  var current: UInt64 { count.load(ordering: .acquiring) }

  /// Counts a break.
  func record() { count.add(1, ordering: .releasing) }
}

/// One connection to a Redis (or Valkey) server through hiredis, the Redis project's own C client:
/// blocking commands with a timeout, so it is used off the event loop (a deferred plan's queue, the journal
/// writer, the change listener's own connection: ``subscribe(_:onSubscribed:onMessage:)``), never on it.
///
/// One owner: the hiredis context lives behind a `Mutex`, one command (or pipeline) at a time. A failed
/// command drops the context; the next command reconnects, but not before the back-off has passed
/// (100 ms, doubling to 5 s, reset by a success), so a store that is down costs a caller one failed
/// connect per back-off period, not one per request. Each change between up and down is reported once
/// through `onStateChange` (the log line the replica writes). Connections that share a ``RedisBreaks``
/// reconnect before their next command once any of them saw its socket break.
package final class RedisConnection: Sendable {
  private struct State {
    var context: UnsafeMutablePointer<redisContext>?
    /// Monotonic ns before which no reconnection is tried.
    var nextAttemptAt: UInt64 = 0
    var backoffMilliseconds = 0
    var lastProblem = ""
    /// Whether the last command reached the store (for the state-change report).
    var up = true
    /// ``RedisBreaks/current`` when the context was connected.
    var connectedAtBreak: UInt64 = 0
  }

  package let endpoint: RedisEndpoint
  /// Command timeout, and connect timeout, in milliseconds (1...60,000).
  package let timeoutMilliseconds: Int
  private let state: Mutex<State>
  private let onStateChange: @Sendable (_ up: Bool, _ detail: String) -> Void
  private let breaks: RedisBreaks?

  /// Backs off from 100 ms up to this after consecutive failures.
  package static let maxBackoffMilliseconds = 5000

  /// Creates a connection; nothing is connected until the first command.
  /// - Parameters:
  ///   - timeoutMilliseconds: connect and command timeout, clamped to 1...60,000.
  ///   - onStateChange: called (outside the lock) when the store goes down or comes back.
  ///   - breaks: shared by the replica's connections (nil: this one reconnects only after its own break).
  package init(
    endpoint: RedisEndpoint, timeoutMilliseconds: Int = 1000,
    onStateChange: @escaping @Sendable (_ up: Bool, _ detail: String) -> Void = { _, _ in },
    breaks: RedisBreaks? = nil
  ) {
    self.endpoint = endpoint
    self.timeoutMilliseconds = min(max(timeoutMilliseconds, 1), 60_000)
    self.onStateChange = onStateChange
    self.breaks = breaks
    state = Mutex(State())
  }

  deinit {
    state.withLock { s in
      if let context = s.context { redisFree(context) }
      s.context = nil
    }
  }

  /// Runs one command.
  /// - Throws: ``RedisFailure/unavailable(_:)`` without a connection (the command may or may not have
  ///   run when the connection broke during it), ``RedisFailure/reply(_:)`` for an error reply.
  package func command(_ arguments: [String]) throws(RedisFailure) -> RedisReply {
    try pipeline([RedisArguments(arguments)])[0]
  }

  /// Runs one command given as bytes (see ``RedisArguments``).
  package func command(_ arguments: RedisArguments) throws(RedisFailure) -> RedisReply {
    try pipeline([arguments])[0]
  }

  /// Runs commands in one round trip (pipelined, RESP2): their replies in order. An error reply of one
  /// command is thrown after every reply is read, so the connection stays in step.
  package func pipeline(_ commands: [[String]]) throws(RedisFailure) -> [RedisReply] {
    try pipeline(commands.map { RedisArguments($0) })
  }

  /// Runs commands given as bytes (see ``RedisArguments``) in one round trip, as the other `pipeline`.
  package func pipeline(_ commands: [RedisArguments]) throws(RedisFailure) -> [RedisReply] {
    guard !commands.isEmpty else { return [] }
    var change: (Bool, String)?
    let result = state.withLock { s -> Result<[RedisReply], RedisFailure> in
      let outcome = run(commands, &s)
      switch outcome {
      case .success:
        if !s.up { change = (true, "reconnected to \(endpoint)") }
        s.up = true
        s.backoffMilliseconds = 0
      case .failure(.unavailable(let detail)):
        if s.up { change = (false, detail) }
        s.up = false
      case .failure:
        break
      }
      return outcome
    }
    if let (up, detail) = change { onStateChange(up, detail) }
    return try result.get()
  }

  /// Subscribes to `channel` on this connection and waits for messages: dedicate a connection to it (it
  /// holds the connection, and blocks its thread, until the subscription ends). `onSubscribed` runs once
  /// the subscription is in place, so that what the caller reads then misses nothing published later;
  /// `onMessage` runs for each message. Either returning false ends the subscription. While subscribed
  /// the connection waits without a read timeout (a store that goes away closes the socket; TCP
  /// keepalive covers a peer that vanishes silently).
  /// - Returns: why the subscription ended; the caller waits ``retryDelayNanoseconds`` and subscribes
  ///   again. Up and down are reported through `onStateChange` as for commands.
  package func subscribe(
    _ channel: String, onSubscribed: () -> Bool, onMessage: (String) -> Bool
  ) -> RedisFailure {
    state.withLock { s -> RedisFailure in
      let context: UnsafeMutablePointer<redisContext>
      switch connected(&s) {
      case .success(let c): context = c
      case .failure(let failure):
        report(&s, up: false, failure)
        return failure
      }
      _ = redisEnableKeepAlive(context)
      let sent = Self.withArgv(RedisArguments(["SUBSCRIBE", channel])) { argc, argv, lengths in
        redisAppendCommandArgv(context, argc, argv, lengths)
      }
      var raw: UnsafeMutableRawPointer?
      guard sent == REDIS_OK, redisGetReply(context, &raw) == REDIS_OK, let confirmation = raw else {
        let failure = drop(&s, context)
        report(&s, up: false, failure)
        return failure
      }
      let confirmed = Self.copy(confirmation.assumingMemoryBound(to: redisReply.self))
      freeReplyObject(confirmation)
      guard confirmed.array?.first?.text == "subscribe" else {
        redisFree(context)
        s.context = nil
        return .reply("SUBSCRIBE \(channel) answered \(confirmed)")
      }
      report(&s, up: true, nil)
      s.backoffMilliseconds = 0
      _ = redisSetTimeout(context, timeval(tv_sec: 0, tv_usec: 0))
      guard onSubscribed() else {
        redisFree(context)
        s.context = nil
        return .unavailable("\(endpoint): the subscriber stopped")
      }
      while true {
        var message: UnsafeMutableRawPointer?
        guard redisGetReply(context, &message) == REDIS_OK, let message else {
          let failure = drop(&s, context)
          report(&s, up: false, failure)
          return failure
        }
        let reply = Self.copy(message.assumingMemoryBound(to: redisReply.self))
        freeReplyObject(message)
        // ["message", channel, payload]
        guard let items = reply.array, items.count == 3, items[0].text == "message" else { continue }
        guard onMessage(items[2].text ?? "") else {
          redisFree(context)
          s.context = nil
          return .unavailable("\(endpoint): the subscriber stopped")
        }
      }
    }
  }

  /// How long until the next connection attempt may be made (0 when it may be made now).
  package var retryDelayNanoseconds: UInt64 {
    state.withLock { s in
      let now = SocketOps.monotonicNanos()
      return s.context == nil && s.nextAttemptAt > now ? s.nextAttemptAt - now : 0
    }
  }

  /// Reports a change between up and down (the subscriber's path: it reports with the lock held, as it
  /// holds the lock for as long as it is subscribed).
  private func report(_ s: inout State, up: Bool, _ failure: RedisFailure?) {
    guard s.up != up else { return }
    s.up = up
    if up {
      onStateChange(true, "reconnected to \(endpoint)")
    } else if case .unavailable(let detail)? = failure {
      onStateChange(false, detail)
    } else {
      onStateChange(false, failure?.description ?? "")
    }
  }

  /// Closes the socket, if open: the next command connects again (at once, unless a back-off runs).
  package func disconnect() {
    state.withLock { s in
      if let context = s.context { redisFree(context) }
      s.context = nil
    }
  }

  /// True when the store answers `PING` now.
  package var isReachable: Bool {
    (try? command(["PING"])) == .status("PONG")
  }

  private func run(_ commands: [RedisArguments], _ s: inout State) -> Result<[RedisReply], RedisFailure> {
    let context: UnsafeMutablePointer<redisContext>
    switch connected(&s) {
    case .success(let c): context = c
    case .failure(let failure): return .failure(failure)
    }
    for command in commands {
      let appended = Self.withArgv(command) { argc, argv, lengths in
        redisAppendCommandArgv(context, argc, argv, lengths)
      }
      guard appended == REDIS_OK else { return .failure(drop(&s, context)) }
    }
    var replies: [RedisReply] = []
    replies.reserveCapacity(commands.count)
    var firstError: String?
    for _ in commands {
      var raw: UnsafeMutableRawPointer?
      guard redisGetReply(context, &raw) == REDIS_OK, let raw else { return .failure(drop(&s, context)) }
      let reply = raw.assumingMemoryBound(to: redisReply.self)
      if reply.pointee.type == REDIS_REPLY_ERROR, firstError == nil {
        firstError = Self.text(reply)
      }
      replies.append(Self.copy(reply))
      freeReplyObject(raw)
    }
    if let firstError { return .failure(.reply(firstError)) }
    return .success(replies)
  }

  /// The live context, or a new one (authenticated and on the configured database), unless the back-off
  /// has not passed.
  private func connected(_ s: inout State) -> Result<UnsafeMutablePointer<redisContext>, RedisFailure> {
    let breaksNow = breaks?.current ?? 0
    if let context = s.context {
      if breaksNow == s.connectedAtBreak { return .success(context) }
      // Another connection's socket broke since this one connected: this one may be as dead.
      redisFree(context)
      s.context = nil
    }
    let now = SocketOps.monotonicNanos()
    guard now >= s.nextAttemptAt else { return .failure(.unavailable(s.lastProblem)) }
    let timeout = timeval(tv_sec: timeoutMilliseconds / 1000, tv_usec: (timeoutMilliseconds % 1000) * 1000)
    guard let context = redisConnectWithTimeout(endpoint.host, Int32(endpoint.port), timeout) else {
      return .failure(backOff(&s, "\(endpoint): cannot allocate a connection"))
    }
    if context.pointee.err != 0 {
      let detail = Self.errorText(context)
      redisFree(context)
      return .failure(backOff(&s, "\(endpoint): \(detail)"))
    }
    _ = redisSetTimeout(context, timeout)
    s.connectedAtBreak = breaksNow
    var setup: [[String]] = []
    if let password = endpoint.password {
      setup.append(endpoint.user.map { ["AUTH", $0, password] } ?? ["AUTH", password])
    }
    if endpoint.database != 0 { setup.append(["SELECT", String(endpoint.database)]) }
    s.context = context
    for command in setup {
      var raw: UnsafeMutableRawPointer?
      let sent = Self.withArgv(RedisArguments(command)) { argc, argv, lengths in
        redisAppendCommandArgv(context, argc, argv, lengths)
      }
      guard sent == REDIS_OK, redisGetReply(context, &raw) == REDIS_OK, let raw else {
        return .failure(drop(&s, context))
      }
      let reply = raw.assumingMemoryBound(to: redisReply.self)
      let refused = reply.pointee.type == REDIS_REPLY_ERROR ? Self.text(reply) : nil
      freeReplyObject(raw)
      if let refused {
        redisFree(context)
        s.context = nil
        return .failure(backOff(&s, "\(endpoint): \(command[0]) refused: \(refused)"))
      }
    }
    return .success(context)
  }

  /// Frees a context whose connection failed and starts the back-off.
  private func drop(_ s: inout State, _ context: UnsafeMutablePointer<redisContext>) -> RedisFailure {
    let detail = Self.errorText(context)
    redisFree(context)
    s.context = nil
    breaks?.record()
    return backOff(&s, "\(endpoint): \(detail)")
  }

  private func backOff(_ s: inout State, _ detail: String) -> RedisFailure {
    s.backoffMilliseconds = min(max(100, s.backoffMilliseconds * 2), Self.maxBackoffMilliseconds)
    s.nextAttemptAt = SocketOps.monotonicNanos() + UInt64(s.backoffMilliseconds) * 1_000_000
    s.lastProblem = detail
    return .unavailable(detail)
  }

  private static func errorText(_ context: UnsafeMutablePointer<redisContext>) -> String {
    let text = withUnsafeBytes(of: context.pointee.errstr) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
    return text.isEmpty ? "connection error \(context.pointee.err)" : text
  }

  private static func text(_ reply: UnsafeMutablePointer<redisReply>) -> String {
    guard let str = reply.pointee.str else { return "" }
    return String(
      decoding: UnsafeRawBufferPointer(start: str, count: Int(reply.pointee.len)), as: UTF8.self)
  }

  /// A Swift copy of a reply tree (hiredis frees its own).
  private static func copy(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
    switch reply.pointee.type {
    case REDIS_REPLY_STRING:
      guard let str = reply.pointee.str else { return .bulk([]) }
      return .bulk(Array(UnsafeRawBufferPointer(start: str, count: Int(reply.pointee.len))))
    case REDIS_REPLY_STATUS, REDIS_REPLY_ERROR:
      return .status(text(reply))
    case REDIS_REPLY_INTEGER:
      return .integer(Int(reply.pointee.integer))
    case REDIS_REPLY_ARRAY:
      guard let elements = reply.pointee.element else { return .array([]) }
      return .array(
        (0..<Int(reply.pointee.elements)).compactMap { i in elements[i].map { copy($0) } })
    default:
      return .null
    }
  }

  /// Calls `body` with C argument vectors for `arguments` (binary-safe: lengths are passed), pointing into
  /// its one buffer (the vectors in temporary storage: no allocation for a command of a few arguments).
  private static func withArgv(
    _ arguments: RedisArguments,
    _ body: (Int32, UnsafeMutablePointer<UnsafePointer<CChar>?>, UnsafePointer<Int>) -> Int32
  ) -> Int32 {
    let count = arguments.count
    return arguments.bytes.withUnsafeBufferPointer { bytes in
      // An empty buffer (every argument empty) may have no base address; hiredis reads no byte then.
      let base = UnsafeRawPointer(bytes.baseAddress ?? UnsafePointer(bitPattern: 1)!)
        .assumingMemoryBound(to: CChar.self)
      return withUnsafeTemporaryAllocation(of: UnsafePointer<CChar>?.self, capacity: count) { argv in
        withUnsafeTemporaryAllocation(of: Int.self, capacity: count) { lengths in
          var start = 0
          for (i, end) in arguments.ends.enumerated() {
            argv[i] = base + start
            lengths[i] = end - start
            start = end
          }
          return body(Int32(count), argv.baseAddress!, UnsafePointer(lengths.baseAddress!))
        }
      }
    }
  }
}
