import Dispatch
import Foundation
import HTTPCore
import Mappings
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
  /// What a send reuses: the command's buffer and the array the queue's entries are swapped into, both
  /// kept with their capacity, so a batch in the steady state allocates nothing of its own.
  private struct Sending {
    var command = RedisArguments()
    var batch: [JournalEntry] = []
  }
  /// Sends happen one at a time, in order (the writer's and a query's alike).
  private let sending = Mutex(Sending())
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

  /// Sends every queued entry now: one `EVAL` of ``appendScript`` with every entry's JSON as an argument,
  /// written straight into the command's buffer (``encode(_:into:)``).
  /// - Throws: ``RedisFailure`` when the store did not take them (they stay queued).
  package func flush() throws(RedisFailure) {
    let outcome: Result<Void, RedisFailure> = sending.withLock { s in
      let dropped = queue.withLock { q in
        defer { q.droppedUnreported = 0 }
        q.bytes = 0
        // The queue goes on in the array the last batch left empty (its capacity kept).
        swap(&q.entries, &s.batch)
        return q.droppedUnreported
      }
      guard !s.batch.isEmpty || dropped > 0 else { return .success(()) }
      s.command.removeAll()
      for argument in ["EVAL", Self.appendScript, "2", key, lostKey, String(capacity), String(dropped)] {
        s.command.append(argument)
      }
      for entry in s.batch { s.command.append { SharedJournal.encode(entry, into: &$0) } }
      let result: Result<Void, RedisFailure>
      do throws(RedisFailure) {
        _ = try connection.command(s.command)
        result = .success(())
      } catch {
        // Back in front of what was queued meanwhile, within the bound.
        queue.withLock { q in
          q.entries.insert(contentsOf: s.batch, at: 0)
          q.bytes += s.batch.reduce(0) { $0 + $1.approximateBytes }
          q.droppedUnreported += dropped
          q.bound(capacity: capacity, maxBytes: maxBytes)
        }
        result = .failure(error)
      }
      s.batch.removeAll(keepingCapacity: true)
      // A batch with a large content must not keep its buffer for good.
      if s.command.bytes.capacity > Self.retainedCommandBytes { s.command = RedisArguments() }
      return result
    }
    try outcome.get()
  }

  /// The most bytes of a sent command kept for the next batch (4 MiB).
  static let retainedCommandBytes = 4 << 20

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
    let cleared = replies[2].text.flatMap { Double($0) }.map { $0 / 1000 }
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
        let fields = pair[1].array, fields.count >= 2, case .bulk(let bytes) = fields[1],
        let json = try? JSONValue.parse(bytes: bytes), let entry = SharedJournal.decode(json),
        view.streamIDs[entry.id] == nil, cleared.map({ entry.loggedAt >= $0 }) ?? true,
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
        q.entries.removeAll()
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

  /// Forgets the clear marks of the sessions `ids` (they ended), in one command.
  package func forgetCleared(sessions ids: some Collection<String>) throws(RedisFailure) {
    guard !ids.isEmpty else { return }
    _ = try connection.command(["HDEL", sessionsClearedKey] + ids)
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

  /// Appends an entry as the stream holds it to `out`: compact JSON with the request's parts (content in
  /// base64), written straight as bytes (no JSON value tree, no `String` per field). Members: `id`,
  /// `method`, `target`, `version` (`"1.1"`), `headers` (`[[name, value], …]`), `body`, `client`, `tls`,
  /// `loggedAt`, then those of the optional fields that are set (``decode(_:)`` reads what is absent as
  /// not set); a new optional field is one line here and one in ``decode(_:)``.
  static func encode(_ entry: JournalEntry, into out: inout [UInt8]) {
    // Literals through their static bytes and text through its contiguous UTF-8: appending a `String`'s
    // UTF-8 view went through a generic copy of hundreds of instructions per call.
    func raw(_ literal: StaticString) { literal.withUTF8Buffer { out.append(contentsOf: $0) } }
    func text(_ value: String) {
      var value = value
      value.withUTF8 { out.append(contentsOf: $0) }
    }
    func key(_ name: StaticString) {
      raw(",\"")
      raw(name)
      raw("\":")
    }
    func string(_ name: StaticString, _ value: String?) {
      guard let value else { return }
      key(name)
      JSONValue.writeString(value, to: &out)
    }
    func integer(_ name: StaticString, _ value: Int?) {
      guard let value else { return }
      key(name)
      text(String(value))
    }
    func double(_ value: Double) {
      // JSON has no infinity or NaN: such a value is written as 0.
      text(value.isFinite ? String(value) : "0")
    }
    func bool(_ name: StaticString, _ value: Bool?) {
      guard let value else { return }
      key(name)
      if value { raw("true") } else { raw("false") }
    }
    func strings(_ name: StaticString, _ values: [String]) {
      guard !values.isEmpty else { return }
      key(name)
      out.append(UInt8(ascii: "["))
      for (i, value) in values.enumerated() {
        if i > 0 { out.append(UInt8(ascii: ",")) }
        JSONValue.writeString(value, to: &out)
      }
      out.append(UInt8(ascii: "]"))
    }

    let head = entry.request.head
    raw("{\"id\":")
    entry.withIDBytes { JSONValue.writeString(utf8: $0, to: &out) }
    string("method", head.method.rawValue)
    string("target", head.target)
    key("version")
    out.append(UInt8(ascii: "\""))
    text(String(head.version.major))
    out.append(UInt8(ascii: "."))
    text(String(head.version.minor))
    out.append(UInt8(ascii: "\""))
    key("headers")
    out.append(UInt8(ascii: "["))
    var first = true
    head.headers.forEachFieldBytes { name, value in
      if first { raw("[") } else { raw(",[") }
      first = false
      JSONValue.writeString(utf8: name, to: &out)
      out.append(UInt8(ascii: ","))
      JSONValue.writeString(utf8: value, to: &out)
      out.append(UInt8(ascii: "]"))
    }
    out.append(UInt8(ascii: "]"))
    key("body")
    out.append(UInt8(ascii: "\""))
    Base64.encode(entry.request.body, into: &out)
    out.append(UInt8(ascii: "\""))
    string("client", entry.clientAddress)
    bool("tls", entry.isTLS)
    key("loggedAt")
    double(entry.loggedAt)
    string("clientCertificateSubject", entry.clientCertificateSubject)
    string("stubID", entry.stubID)
    integer("status", entry.responseStatus)
    string("fault", entry.fault)
    bool("served", entry.served)
    if let duration = entry.durationMilliseconds, duration.isFinite {
      key("duration")
      double(duration)
    }
    integer("addedDelay", entry.addedDelayMilliseconds)
    string("proxyBaseURL", entry.proxyBaseURL)
    string("session", entry.session)
    integer("truncatedSize", entry.truncatedBody?.size)
    string("truncatedSHA256", entry.truncatedBody?.sha256)
    strings("webhooks", entry.webhooks)
    strings("stateProblems", entry.stateProblems)
    out.append(UInt8(ascii: "}"))
  }

  /// ``encode(_:into:)``'s bytes as text.
  static func encode(_ entry: JournalEntry) -> String {
    var out: [UInt8] = []
    encode(entry, into: &out)
    return String(decoding: out, as: UTF8.self)
  }

  /// An HTTP version as the stored forms write it (`"1.1"`); HTTP/1.1 when absent or not of that shape.
  static func version(_ json: JSONValue?) -> HTTPVersion {
    guard let text = json?.stringValue, let dot = text.firstIndex(of: "."),
      let major = Int(text[..<dot]), let minor = Int(text[text.index(after: dot)...]),
      (0...9).contains(major), (0...9).contains(minor)
    else { return .http1_1 }
    return HTTPVersion(major: major, minor: minor)
  }

  /// Header fields as the stored forms write them (`[[name, value], …]`); pairs of another shape are
  /// left out.
  static func fields(_ json: JSONValue?) -> HTTPHeaders {
    var headers = HTTPHeaders()
    for field in json?.arrayValue ?? [] {
      guard let pair = field.arrayValue, pair.count == 2, let name = pair[0].stringValue,
        let value = pair[1].stringValue
      else { continue }
      headers.add(name: name, value: value)
    }
    return headers
  }

  /// ``encode(_:into:)``'s entry back (nil for what does not have its shape: left out of a read).
  static func decode(_ json: JSONValue) -> JournalEntry? {
    guard let o = json.objectValue, let id = o["id"]?.stringValue, let method = o["method"]?.stringValue,
      let target = o["target"]?.stringValue, let client = o["client"]?.stringValue,
      let loggedAt = o["loggedAt"]?.numberValue?.doubleValue
    else { return nil }
    let version = SharedJournal.version(o["version"])
    let headers = SharedJournal.fields(o["headers"])
    let body = o["body"]?.stringValue.flatMap { Base64.decode($0) } ?? []
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
