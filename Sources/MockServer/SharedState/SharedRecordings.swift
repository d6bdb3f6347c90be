import Dispatch
import Foundation
import HTTPCore
import MockJSON
import Synchronization

/// The recording in progress kept in the shared store (`--state-store`, issue 47; docs/scaling.md), so
/// that `POST /__admin/recordings/start` on one replica makes every replica record, and `stop` on any
/// replica answers with the stubs of every replica's exchanges.
///
/// The store holds the recording's status and spec (`P:recording`, a hash: `status`, `spec` as the start
/// body's compact JSON), the exchanges captured while it records (`P:recording:captured`, a list of
/// ``encode(_:)``'s JSON, bounded by ``ProxyRecorder/maxCaptured`` and ``ProxyRecorder/maxCapturedBytes``
/// of stored JSON, the overflow counted in `P:recording:dropped`), and the most recent proxied exchanges
/// whatever the status, for snapshots (`P:recording:recent`, bounded by ``ProxyRecorder/maxRecent`` and
/// ``ProxyRecorder/maxRecentBytes``). A start or stop is one server-side script that changes the status
/// and publishes ``changeMessage`` on the runtime stubs' channel (``SharedRuntimeStubs/channel``); each
/// replica's subscriber then reads the status and mirrors it in its ``ProxyRecorder``
/// (``ProxyRecorder/mirror(status:spec:)``), so the proxy path reads only the recorder's atomics, never
/// the store, to know whether it records. While this replica knows the recording runs, each proxied
/// exchange is sent to the store by its exchange thread (``send(_:)``: one round trip, off the event
/// loop) before the client sees the end of the answer, so a `stop` the client sends after it finds it;
/// otherwise it is queued (``enqueue(_:)``) and a writer thread sends the queue in batches (one round
/// trip per batch). The script captures an exchange only while the store's status is `Recording`, so
/// an exchange is never captured by a replica after a stop it has not heard of yet; a queued one of a
/// replica that has not heard of a start yet is captured too, when its batch arrives.
package final class SharedRecordings: Sendable {
  let shared: SharedRuntimeStubs
  /// The connection the exchange threads send on (the admin calls use it too).
  private let connection: RedisConnection
  private let statusKey: String
  private let capturedKey: String
  private let capturedBytesKey: String
  private let droppedKey: String
  private let recentKey: String
  private let recentBytesKey: String

  /// What a start or stop publishes on the channel.
  package static let changeMessage = "recording"

  /// Exchanges waiting for the writer thread (the newest ``ProxyRecorder/maxRecent``: older ones would
  /// leave the store's recent list as these arrive), and whether the thread runs.
  private let queue = Mutex<(exchanges: [RecordedExchange], writing: Bool)>(([], false))
  private let wake = DispatchSemaphore(value: 0)
  /// Most exchanges in one script call of the writer.
  static let batchExchanges = 100

  package init(_ shared: SharedRuntimeStubs) {
    self.shared = shared
    connection = shared.makeConnection()
    let prefix = shared.keyPrefix + ":recording"
    statusKey = prefix
    capturedKey = prefix + ":captured"
    capturedBytesKey = prefix + ":captured:bytes"
    droppedKey = prefix + ":dropped"
    recentKey = prefix + ":recent"
    recentBytesKey = prefix + ":recent:bytes"
  }

  /// The store's recording status, and the spec's JSON while it records.
  package struct Status: Sendable, Equatable {
    package var status: ProxyRecorder.Status
    package var spec: JSONObject?
  }

  /// What a stop took from the store.
  package struct Stopped: Sendable {
    package var spec: JSONObject
    package var exchanges: [RecordedExchange]
    /// Exchanges over the bounds, not captured.
    package var dropped: Int
    /// Stored exchanges that did not decode (left out).
    package var unreadable: Int
  }

  /// The store's status.
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func status() throws(RedisFailure) -> Status {
    let reply = try connection.command(["HMGET", statusKey, "status", "spec"])
    guard let items = reply.array, items.count == 2 else {
      throw .reply("unexpected recording status reply \(reply)")
    }
    let status = items[0].text.flatMap(ProxyRecorder.Status.init(rawValue:)) ?? .neverStarted
    let spec = items[1].text.flatMap { try? JSONValue.parse($0) }?.objectValue
    return Status(status: status == .recording && spec == nil ? .stopped : status, spec: spec)
  }

  /// Reads the store's status into `recorder` (``ProxyRecorder/mirror(status:spec:)``).
  /// - Returns: the status read.
  /// - Throws: ``RedisFailure`` when the store cannot answer (the recorder is left as it is).
  @discardableResult
  package func refresh(_ recorder: ProxyRecorder) throws(RedisFailure) -> ProxyRecorder.Status {
    let now = try status()
    var spec: RecordingSpec?
    if let o = now.spec {
      switch RecordingSpec.parse(o, requireTarget: true) {
      case .success(let s): spec = s
      case .failure(let p):
        shared.logLine("mockserver: shared state store: record spec not read: \(p.pointer): \(p.detail)")
      }
    }
    recorder.mirror(status: now.status, spec: spec)
    return now.status
  }

  /// Starts recording with `spec` (the start body), everywhere; false when a recording is running.
  /// - Throws: ``RedisFailure`` when the store cannot take it (nothing started).
  package func start(_ spec: JSONObject) throws(RedisFailure) -> Bool {
    let reply = try connection.command([
      "EVAL", Self.startScript, "4", statusKey, capturedKey, capturedBytesKey, droppedKey,
      JSONValue.object(spec).serialized(), shared.channel, Self.changeMessage,
    ])
    return reply.integer == 1
  }

  /// Stops the recording everywhere and takes what every replica captured; nil when none was running.
  /// - Throws: ``RedisFailure`` when the store cannot answer (nothing stopped).
  package func stop() throws(RedisFailure) -> Stopped? {
    let reply = try connection.command([
      "EVAL", Self.stopScript, "4", statusKey, capturedKey, capturedBytesKey, droppedKey, shared.channel,
      Self.changeMessage,
    ])
    guard let items = reply.array, let first = items.first else { return nil }
    guard items.count >= 3, let specText = first.text,
      let spec = (try? JSONValue.parse(specText))?.objectValue
    else { throw .reply("unexpected recording stop reply") }
    let dropped = items[1].text.flatMap { Int($0) } ?? items[1].integer ?? 0
    var exchanges: [RecordedExchange] = []
    var unreadable = 0
    for item in items.dropFirst(2) {
      if let text = item.text, let json = try? JSONValue.parse(text), let exchange = Self.decode(json) {
        exchanges.append(exchange)
      } else {
        unreadable += 1
      }
    }
    return Stopped(spec: spec, exchanges: exchanges, dropped: dropped, unreadable: unreadable)
  }

  /// Every replica's recent proxied exchanges, oldest first.
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func recent() throws(RedisFailure) -> [RecordedExchange] {
    let reply = try connection.command(["LRANGE", recentKey, "0", "-1"])
    return (reply.array ?? []).compactMap { item in
      item.text.flatMap { try? JSONValue.parse($0) }.flatMap(Self.decode)
    }
  }

  /// Sends proxied exchanges now, in one round trip: kept among the recent ones, and captured when the
  /// store's status is `Recording` (or counted as dropped over the bounds).
  /// - Throws: ``RedisFailure`` when the store cannot take them.
  package func send(_ exchanges: [RecordedExchange]) throws(RedisFailure) {
    guard !exchanges.isEmpty else { return }
    var commands: [[String]] = []
    var start = 0
    while start < exchanges.count {
      let end = min(start + Self.batchExchanges, exchanges.count)
      commands.append(
        [
          "EVAL", Self.sendScript, "6", statusKey, capturedKey, capturedBytesKey, droppedKey, recentKey,
          recentBytesKey, String(ProxyRecorder.maxCaptured), String(ProxyRecorder.maxCapturedBytes),
          String(ProxyRecorder.maxRecent), String(ProxyRecorder.maxRecentBytes),
        ] + exchanges[start..<end].map { Self.encode($0).serialized() })
      start = end
    }
    _ = try connection.pipeline(commands)
  }

  /// Queues a proxied exchange for the writer thread (started on the first one), which sends what is
  /// queued as ``send(_:)`` does, a batch per round trip; a batch the store does not take is logged.
  package func enqueue(_ exchange: RecordedExchange) {
    let first = queue.withLock { q -> Bool in
      q.exchanges.append(exchange)
      // The newest ones: older ones would leave the store's recent list as these arrive.
      if q.exchanges.count > ProxyRecorder.maxRecent {
        q.exchanges.removeFirst(q.exchanges.count - ProxyRecorder.maxRecent)
      }
      defer { q.writing = true }
      return !q.writing
    }
    if first {
      let thread = Thread { [self] in
        while true {
          wake.wait()
          let batch = queue.withLock { q -> [RecordedExchange] in
            defer { q.exchanges = [] }
            return q.exchanges
          }
          guard !batch.isEmpty else { continue }
          do throws(RedisFailure) {
            try send(batch)
          } catch {
            shared.logLine("mockserver: \(batch.count) proxied exchange(s) not recorded: \(error)")
          }
        }
      }
      thread.name = "mockserver-recording-writer"
      thread.start()
    }
    wake.signal()
  }

  /// Forgets the recent exchanges (with the journal: a snapshot only sees exchanges still in it).
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func clearRecent() throws(RedisFailure) {
    _ = try connection.command(["DEL", recentKey, recentBytesKey])
  }

  /// KEYS: status, captured, captured bytes, dropped. ARGV: spec, channel, message. 1 when started.
  static let startScript = """
    if redis.call('HGET', KEYS[1], 'status') == 'Recording' then return 0 end
    redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
    redis.call('HSET', KEYS[1], 'status', 'Recording', 'spec', ARGV[1])
    redis.call('PUBLISH', ARGV[2], ARGV[3])
    return 1
    """

  /// KEYS: status, captured, captured bytes, dropped. ARGV: channel, message. {spec, dropped, exchange…}
  /// when stopped, {} when not recording.
  static let stopScript = """
    if redis.call('HGET', KEYS[1], 'status') ~= 'Recording' then return {} end
    local out = {redis.call('HGET', KEYS[1], 'spec') or '{}', redis.call('GET', KEYS[4]) or '0'}
    for _, exchange in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do out[#out + 1] = exchange end
    redis.call('DEL', KEYS[2], KEYS[3], KEYS[4])
    redis.call('HSET', KEYS[1], 'status', 'Stopped')
    redis.call('HDEL', KEYS[1], 'spec')
    redis.call('PUBLISH', ARGV[1], ARGV[2])
    return out
    """

  /// KEYS: status, captured, captured bytes, dropped, recent, recent bytes. ARGV: most captured, most
  /// captured bytes, most recent, most recent bytes, then the exchanges. Returns how many were captured.
  static let sendScript = """
    local recording = redis.call('HGET', KEYS[1], 'status') == 'Recording'
    local captured = 0
    for i = 5, #ARGV do
      local exchange = ARGV[i]
      local size = #exchange
      if size <= tonumber(ARGV[4]) then
        redis.call('RPUSH', KEYS[5], exchange)
        local bytes = redis.call('INCRBY', KEYS[6], size)
        while redis.call('LLEN', KEYS[5]) > tonumber(ARGV[3]) or bytes > tonumber(ARGV[4]) do
          local old = redis.call('LPOP', KEYS[5])
          if not old then break end
          bytes = redis.call('DECRBY', KEYS[6], #old)
        end
      end
      if recording then
        local held = tonumber(redis.call('GET', KEYS[3]) or '0')
        if redis.call('LLEN', KEYS[2]) >= tonumber(ARGV[1]) or held + size > tonumber(ARGV[2]) then
          redis.call('INCR', KEYS[4])
        else
          redis.call('RPUSH', KEYS[2], exchange)
          redis.call('INCRBY', KEYS[3], size)
          captured = captured + 1
        end
      end
    end
    return captured
    """

  /// An exchange as the store holds it: compact JSON, contents in base64.
  static func encode(_ exchange: RecordedExchange) -> JSONValue {
    func fields(_ headers: HTTPHeaders) -> JSONValue {
      .array(headers.fields.map { .array([.string($0.name), .string($0.value)]) })
    }
    let request = exchange.request.head
    let response = exchange.response.head
    var pairs: [(String, JSONValue)] = [
      ("journalID", .string(exchange.journalID)), ("upstream", .string(exchange.upstream)),
      ("method", .string(request.method.rawValue)), ("target", .string(request.target)),
      ("version", .string("\(request.version.major).\(request.version.minor)")),
      ("headers", fields(request.headers)),
      ("body", .string(Data(exchange.request.body).base64EncodedString())),
      ("status", .number(JSONNumber(response.status.code))),
      ("reason", .string(response.status.reasonPhrase)),
      ("responseHeaders", fields(response.headers)),
      ("responseBody", .string(Data(exchange.response.body).base64EncodedString())),
      ("trailers", fields(exchange.response.trailers)),
    ]
    if let whole = exchange.truncatedFrom { pairs.append(("truncatedFrom", .number(JSONNumber(whole)))) }
    return .object(JSONObject(pairs: pairs))
  }

  /// ``encode(_:)``'s exchange back (nil for what does not have its shape).
  static func decode(_ json: JSONValue) -> RecordedExchange? {
    // The journal's stored form's readers: the same shapes.
    let fields = SharedJournal.fields
    func bytes(_ value: JSONValue?) -> [UInt8]? {
      value?.stringValue.flatMap { Data(base64Encoded: $0) }.map { [UInt8]($0) }
    }
    guard let o = json.objectValue, let journalID = o["journalID"]?.stringValue,
      let upstream = o["upstream"]?.stringValue, let method = o["method"]?.stringValue,
      let target = o["target"]?.stringValue, let code = o["status"]?.numberValue?.intValue,
      (100...999).contains(code), let body = bytes(o["body"]), let responseBody = bytes(o["responseBody"])
    else { return nil }
    let version = SharedJournal.version(o["version"])
    var truncatedFrom: Int?
    if let whole = o["truncatedFrom"]?.numberValue?.intValue, whole >= 0 { truncatedFrom = whole }
    return RecordedExchange(
      journalID: journalID,
      request: HTTPRequest(
        head: HTTPRequestHead(
          method: HTTPMethod(rawValue: method), target: target, version: version,
          headers: fields(o["headers"])),
        body: body),
      response: HTTPResponse(
        head: HTTPResponseHead(
          status: HTTPStatus(code: code, reasonPhrase: o["reason"]?.stringValue ?? ""),
          headers: fields(o["responseHeaders"])),
        body: responseBody, trailers: fields(o["trailers"])),
      upstream: upstream, truncatedFrom: truncatedFrom)
  }
}
