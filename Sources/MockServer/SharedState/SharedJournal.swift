import Dispatch
import Foundation
import HTTPCore
import MockJSON
import Synchronization

/// The request journal shared by the replicas (`--state-store`, issue 47; docs/scaling.md): every
/// completed journal entry of this replica is appended to a capped Redis stream, so that the admin
/// journal queries of any replica answer for all.
///
/// Off the serving path: serving only queues the entry (``append(_:)``, one lock); a writer thread
/// encodes the queued entries and sends them in one round trip (one script running `XADD … MAXLEN ~
/// capacity` per entry) at least every second and whenever ``batchEntries`` are queued. A query first sends what is
/// queued (``flush()``), so that a count made right after traffic includes this replica's own requests;
/// other replicas' entries are there once their writer sent them (within a second). Entries that could
/// not be sent stay queued (at most `capacity`, the oldest dropped first) and are sent again: an entry
/// sent twice (its reply lost) is read once, as reads drop repeated entry ids.
///
/// What the stream no longer holds is counted, so that a count is never passed off as exact when it is
/// not: entries trimmed by the cap and entries a replica's queue dropped add to `P:journal:lost` (in the
/// script that sends a batch), and a count answered from the stream says `"exact": false` with that number
/// while it is not zero (as the local journal says so once it evicted entries). Clearing the journal
/// clears it.
///
/// Keys (with the prefix): `P:journal`, a stream whose entries have one field, `e`, the entry's JSON;
/// `P:journal:lost`, the number of entries lost to the cap or to a full queue since the last clear.
package final class SharedJournal: Sendable {
  /// The entries queued for the store, and how many were dropped (queue over capacity).
  private struct Queue {
    var entries: [JournalEntry] = []
    var bytes = 0
    var dropped = 0
    /// Dropped entries not yet added to the store's lost count.
    var droppedUnreported = 0

    /// Drops the oldest entries beyond `capacity` entries or `maxBytes` bytes (the journal's bounds).
    mutating func bound(capacity: Int, maxBytes: Int) {
      var over = 0
      var freed = 0
      while over < entries.count - 1, entries.count - over > capacity || bytes - freed > maxBytes {
        freed += entries[over].approximateBytes
        over += 1
      }
      guard over > 0 else { return }
      entries.removeFirst(over)
      bytes -= freed
      dropped += over
      droppedUnreported += over
    }
  }

  /// One read of the stream.
  package struct View: Sendable {
    /// Every replica's entries, oldest first, each once.
    package var entries: [JournalEntry]
    /// The stream id of each entry, by entry id (to remove entries from the stream).
    package var streamIDs: [String: String]
    /// Entries the stream no longer holds since the last clear (trimmed by the cap, or dropped by a
    /// replica's full queue): counts over ``entries`` are exact only while this is 0.
    package var lost = 0
  }

  private let connection: RedisConnection
  private let key: String
  private let lostKey: String
  /// When the journal was last cleared (ms since 1970), and when each session's entries were: an entry
  /// of a request received before is not read, though its replica sent it after the clear.
  private let clearedKey: String
  private let sessionsClearedKey: String
  /// The stream's bound (the journal's configured capacity, 1...).
  package let capacity: Int
  /// The queue's bound in bytes (the journal's).
  private let maxBytes: Int
  private let queue = Mutex(Queue())
  /// Sends happen one at a time, in order (the writer's and a query's alike).
  private let sending = Mutex(())
  private let wake = DispatchSemaphore(value: 0)
  private let started = Mutex(false)

  /// Queued entries that wake the writer before its second is up.
  package static let batchEntries = 256
  /// The writer sends at least this often (ms).
  package static let flushIntervalMilliseconds = 1000

  /// - Parameters:
  ///   - capacity: the stream's bound, clamped to 1...10,000,000 (the journal's capacity); entries queued
  ///     while the store is down are bounded by it too, and by `maxBytes` (the journal's byte bound).
  ///   - keyPrefix: prepended to the key (a session's or a deployment's namespace).
  package init(
    connection: RedisConnection, capacity: Int, maxBytes: Int = RequestJournal.defaultMaxBytes,
    keyPrefix: String = "mockserver"
  ) {
    self.connection = connection
    self.capacity = min(max(capacity, 1), 10_000_000)
    self.maxBytes = max(0, maxBytes)
    key = keyPrefix + ":journal"
    lostKey = keyPrefix + ":journal:lost"
    clearedKey = keyPrefix + ":journal:cleared"
    sessionsClearedKey = keyPrefix + ":journal:sessions-cleared"
  }

  /// Queues a completed entry for the store (the serving thread: one lock, no I/O).
  package func append(_ entry: JournalEntry) {
    let queued = queue.withLock { q in
      q.entries.append(entry)
      q.bytes += entry.approximateBytes
      if q.entries.count > capacity || q.bytes > maxBytes { q.bound(capacity: capacity, maxBytes: maxBytes) }
      return q.entries.count
    }
    if queued == Self.batchEntries { wake.signal() }
  }

  /// Entries dropped because the store could not take them while `capacity` more were queued.
  package var droppedCount: Int { queue.withLock { $0.dropped } }

  /// Starts the writer thread (once).
  package func startWriting() {
    let first = started.withLock { s in
      defer { s = true }
      return !s
    }
    guard first else { return }
    let thread = Thread { [self] in
      while true {
        _ = wake.wait(timeout: .now() + .milliseconds(Self.flushIntervalMilliseconds))
        try? flush()
      }
    }
    thread.name = "mockserver-journal-writer"
    thread.start()
  }

  /// Sends every queued entry now.
  /// - Throws: ``RedisFailure`` when the store did not take them (they stay queued).
  package func flush() throws(RedisFailure) {
    let outcome: Result<Void, RedisFailure> = sending.withLock { _ in
      let (batch, dropped) = queue.withLock { q in
        defer {
          q.entries = []
          q.droppedUnreported = 0
        }
        q.bytes = 0
        return (q.entries, q.droppedUnreported)
      }
      guard !batch.isEmpty || dropped > 0 else { return .success(()) }
      var arguments = ["EVAL", Self.appendScript, "2", key, lostKey, String(capacity), String(dropped)]
      arguments.reserveCapacity(arguments.count + batch.count)
      for entry in batch { arguments.append(SharedJournal.encode(entry).serialized()) }
      do throws(RedisFailure) {
        _ = try connection.command(arguments)
        return .success(())
      } catch {
        // Back in front of what was queued meanwhile, within the bound.
        queue.withLock { q in
          q.entries.insert(contentsOf: batch, at: 0)
          q.bytes += batch.reduce(0) { $0 + $1.approximateBytes }
          q.droppedUnreported += dropped
          q.bound(capacity: capacity, maxBytes: maxBytes)
        }
        return .failure(error)
      }
    }
    try outcome.get()
  }

  /// Every replica's entries (this replica's queued ones sent first).
  /// - Throws: ``RedisFailure`` when the store cannot answer: the caller answers 503, never with this
  ///   replica's entries alone.
  package func read() throws(RedisFailure) -> View {
    try flush()
    let replies = try connection.pipeline([
      ["XRANGE", key, "-", "+"], ["GET", lostKey], ["GET", clearedKey], ["HGETALL", sessionsClearedKey],
    ])
    guard replies.count == 4, let items = replies[0].array else {
      throw .reply("unexpected XRANGE reply \(replies)")
    }
    var view = View(entries: [], streamIDs: [:])
    view.lost = replies[1].text.flatMap { Int($0) } ?? 0
    let cleared = replies[2].text.flatMap { Double($0) }.map { $0 / 1000 } ?? 0
    var sessionsCleared: [String: Double] = [:]
    let pairs = replies[3].array ?? []
    for i in stride(from: 0, to: pairs.count - 1, by: 2) {
      if let id = pairs[i].text, let ms = pairs[i + 1].text.flatMap({ Double($0) }) {
        sessionsCleared[id] = ms / 1000
      }
    }
    view.entries.reserveCapacity(items.count)
    for item in items {
      // [stream id, [field, value, …]]
      guard let pair = item.array, pair.count == 2, let streamID = pair[0].text,
        let fields = pair[1].array, fields.count >= 2, let text = fields[1].text,
        let json = try? JSONValue.parse(text), let entry = SharedJournal.decode(json),
        view.streamIDs[entry.id] == nil, entry.loggedAt >= cleared,
        entry.session.flatMap({ sessionsCleared[$0] }).map({ entry.loggedAt >= $0 }) ?? true
      else { continue }
      view.streamIDs[entry.id] = streamID
      view.entries.append(entry)
    }
    return view
  }

  /// Removes entries from the stream by their stream ids.
  package func remove(streamIDs: [String]) throws(RedisFailure) {
    guard !streamIDs.isEmpty else { return }
    var commands: [[String]] = []
    var start = 0
    while start < streamIDs.count {
      let end = min(start + 1000, streamIDs.count)
      commands.append(["XDEL", key] + streamIDs[start..<end])
      start = end
    }
    _ = try connection.pipeline(commands)
  }

  /// Empties the stream, and this replica's queue.
  package func clear() throws(RedisFailure) {
    let outcome: Result<Void, RedisFailure> = sending.withLock { _ in
      queue.withLock { q in
        q.entries = []
        q.bytes = 0
      }
      do throws(RedisFailure) {
        _ = try connection.pipeline([
          ["DEL", key, lostKey, sessionsClearedKey], ["SET", clearedKey, SharedJournal.nowMilliseconds()],
        ])
        return .success(())
      } catch {
        return .failure(error)
      }
    }
    try outcome.get()
  }

  /// Marks session `id`'s entries as cleared now: those of requests received before are not read, though
  /// a replica sends them later (``clear()`` does so for every entry). Its removal from the stream is the
  /// caller's (``remove(streamIDs:)``).
  package func markCleared(session id: String) throws(RedisFailure) {
    _ = try connection.command(["HSET", sessionsClearedKey, id, SharedJournal.nowMilliseconds()])
  }

  /// Forgets session `id`'s clear mark (the session ended).
  package func forgetCleared(session id: String) throws(RedisFailure) {
    _ = try connection.command(["HDEL", sessionsClearedKey, id])
  }

  /// Now, in ms since 1970, as text (the entries' `loggedAt` is this replica's wall clock too: replicas'
  /// clocks are taken to agree, as NTP keeps them).
  static func nowMilliseconds() -> String { String(Int64(Date().timeIntervalSince1970 * 1000)) }

  /// KEYS: stream, lost count. ARGV: the cap, entries a queue dropped, then each entry's JSON. Appends
  /// them (trimming to about the cap) and adds what the stream lost (trimmed or dropped) to the count.
  static let appendScript = """
    local before = redis.call('XLEN', KEYS[1])
    for i = 3, #ARGV do
      redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'e', ARGV[i])
    end
    local lost = before + (#ARGV - 2) - redis.call('XLEN', KEYS[1]) + tonumber(ARGV[2])
    if lost > 0 then redis.call('INCRBY', KEYS[2], lost) end
    return lost
    """

  /// An entry as the stream holds it: compact JSON with the request's parts (content in base64).
  static func encode(_ entry: JournalEntry) -> JSONValue {
    let head = entry.request.head
    var pairs: [(String, JSONValue)] = [
      ("id", .string(entry.id)), ("method", .string(head.method.rawValue)), ("target", .string(head.target)),
      ("version", .string("\(head.version.major).\(head.version.minor)")),
      (
        "headers",
        .array(head.headers.fields.map { .array([.string($0.name), .string($0.value)]) })
      ),
      ("body", .string(Data(entry.request.body).base64EncodedString())),
      ("client", .string(entry.clientAddress)), ("tls", .bool(entry.isTLS)),
      ("loggedAt", .number(JSONNumber(text: String(entry.loggedAt)) ?? JSONNumber(0))),
    ]
    func add(_ name: String, _ value: JSONValue?) { if let value { pairs.append((name, value)) } }
    add("clientCertificateSubject", entry.clientCertificateSubject.map { .string($0) })
    add("stubID", entry.stubID.map { .string($0) })
    add("status", entry.responseStatus.map { .number(JSONNumber($0)) })
    add("fault", entry.fault.map { .string($0) })
    add("served", entry.served.map { .bool($0) })
    add("duration", entry.durationMilliseconds.flatMap { JSONNumber(text: String($0)) }.map { .number($0) })
    add("addedDelay", entry.addedDelayMilliseconds.map { .number(JSONNumber($0)) })
    add("proxyBaseURL", entry.proxyBaseURL.map { .string($0) })
    add("session", entry.session.map { .string($0) })
    add("truncatedSize", entry.truncatedBody.map { .number(JSONNumber($0.size)) })
    add("truncatedSHA256", entry.truncatedBody.map { .string($0.sha256) })
    if !entry.webhooks.isEmpty { pairs.append(("webhooks", .array(entry.webhooks.map { .string($0) }))) }
    if !entry.stateProblems.isEmpty {
      pairs.append(("stateProblems", .array(entry.stateProblems.map { .string($0) })))
    }
    return .object(JSONObject(pairs: pairs))
  }

  /// ``encode(_:)``'s entry back (nil for what does not have its shape: left out of a read).
  static func decode(_ json: JSONValue) -> JournalEntry? {
    guard let o = json.objectValue, let id = o["id"]?.stringValue, let method = o["method"]?.stringValue,
      let target = o["target"]?.stringValue, let client = o["client"]?.stringValue,
      let loggedAt = o["loggedAt"]?.numberValue?.doubleValue
    else { return nil }
    var version = HTTPVersion.http1_1
    if let text = o["version"]?.stringValue, let dot = text.firstIndex(of: "."),
      let major = Int(text[..<dot]), let minor = Int(text[text.index(after: dot)...]),
      (0...9).contains(major), (0...9).contains(minor)
    {
      version = HTTPVersion(major: major, minor: minor)
    }
    var headers = HTTPHeaders()
    for field in o["headers"]?.arrayValue ?? [] {
      guard let pair = field.arrayValue, pair.count == 2, let name = pair[0].stringValue,
        let value = pair[1].stringValue
      else { continue }
      headers.add(name: name, value: value)
    }
    let body = o["body"]?.stringValue.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) } ?? []
    var entry = JournalEntry(
      id: id,
      request: HTTPRequest(
        head: HTTPRequestHead(
          method: HTTPMethod(rawValue: method), target: target, version: version, headers: headers),
        body: body),
      clientAddress: client, isTLS: o["tls"]?.boolValue ?? false,
      clientCertificateSubject: o["clientCertificateSubject"]?.stringValue, loggedAt: loggedAt,
      stubID: o["stubID"]?.stringValue, nearMisses: [], responseStatus: o["status"]?.numberValue?.intValue,
      fault: o["fault"]?.stringValue, served: o["served"]?.boolValue,
      durationMilliseconds: o["duration"]?.numberValue?.doubleValue)
    entry.addedDelayMilliseconds = o["addedDelay"]?.numberValue?.intValue
    entry.proxyBaseURL = o["proxyBaseURL"]?.stringValue
    entry.session = o["session"]?.stringValue
    if let size = o["truncatedSize"]?.numberValue?.intValue, let sha = o["truncatedSHA256"]?.stringValue {
      entry.truncatedBody = (size, sha)
    }
    entry.webhooks = (o["webhooks"]?.arrayValue ?? []).compactMap(\.stringValue)
    entry.stateProblems = (o["stateProblems"]?.arrayValue ?? []).compactMap(\.stringValue)
    return entry
  }
}
