@preconcurrency import Dispatch
import Foundation
import HTTPCore
import MockJSON
import Synchronization

/// Writes one log line per request to standard error, batched: lines are appended to a buffer under a
/// lock (no I/O on the event loop) and flushed from a background queue 100 ms after the first line of a
/// batch. An idle logger schedules nothing: no timer wakes the process while no line is written.
///
/// Logging never kills or blocks the server: bytes go out with `write(2)` after `poll` says there is
/// room (``StandardError``), so a broken pipe is an outcome, not a trap, and a full one is not waited
/// on. The buffer is bounded (``bufferLimit``): when standard error is a pipe nobody reads, or is gone,
/// new lines are dropped and counted (``droppedLines``); once it drains again a line says how many were
/// lost.
///
public final class RequestLogger: Sendable {
  /// How much to log.
  public enum Level: Sendable {
    /// Nothing per request (warnings and reload reports still go out).
    case quiet
    /// One line per request: method, path, status, stub or "no match", duration.
    case normal
    /// The line plus request and response headers and bodies.
    case verbose
  }

  /// The level in effect.
  public let level: Level
  /// True for `--log-format json`: one JSON object per line.
  public let json: Bool
  /// Most bytes kept waiting for standard error; lines beyond it are dropped and counted.
  public let bufferLimit: Int
  private let buffer: LogBuffer
  private let flushQueue = DispatchQueue(label: "mockserver.log")
  /// Milliseconds from the first line of a batch to its flush (and between retries while standard error
  /// is full).
  static let flushDelayMilliseconds = 100

  /// Creates a logger.
  /// - Parameters:
  ///   - bufferLimit: bytes kept while standard error does not take them (default 1 MiB).
  ///   - output: the descriptor written (default 2, standard error).
  public init(level: Level = .normal, json: Bool = false, bufferLimit: Int = 1 << 20, output: Int32 = 2) {
    self.level = level
    self.json = json
    self.bufferLimit = max(4096, bufferLimit)
    buffer = LogBuffer(limit: self.bufferLimit, fd: output)
  }

  deinit {
    RequestLogger.flush(buffer, waitMilliseconds: 200)
  }

  /// Queues a flush of `buffer` on `queue` after ``flushDelayMilliseconds``; the caller has set
  /// `flushScheduled` under the lock, so one flush is pending at a time.
  private static func scheduleFlush(_ buffer: LogBuffer, on queue: DispatchQueue) {
    queue.asyncAfter(deadline: .now() + .milliseconds(flushDelayMilliseconds)) {
      if RequestLogger.flush(buffer) { scheduleFlush(buffer, on: queue) }
    }
  }

  /// Writes anything buffered now, waiting at most about a second for a full standard error.
  public func flush() { RequestLogger.flush(buffer, waitMilliseconds: 1000) }

  /// Lines dropped since start because standard error did not take them (a full pipe nobody reads, or a
  /// closed one).
  public var droppedLines: Int { buffer.state.withLock { $0.droppedTotal } }

  /// Flushes since start that found standard error full: an event a test waits on instead of sleeping
  /// past the flush delay.
  package var fullFlushes: Int { buffer.state.withLock { $0.fullFlushes } }

  /// Bytes waiting to be written right now (at most ``bufferLimit``).
  public var pendingBytes: Int { buffer.state.withLock { $0.bytes.count } }

  /// Flush-queue thread (or shutdown): takes the buffered bytes out under the lock and writes them
  /// outside it; what standard error does not take goes back to the front of the buffer, within the limit.
  /// Returns true when bytes are left waiting and another flush has been claimed for them.
  @discardableResult
  private static func flush(_ buffer: LogBuffer, waitMilliseconds: Int32 = 0) -> Bool {
    let (bytes, dropped) = buffer.state.withLock { b -> ([UInt8], Int) in
      b.flushScheduled = false
      guard !b.broken else { return ([], 0) }
      let out = b.bytes
      b.bytes.removeAll(keepingCapacity: true)
      let dropped = b.droppedUnreported
      b.droppedUnreported = 0
      return (out, dropped)
    }
    var payload = bytes
    if dropped > 0 {
      let note = "mockserver: \(dropped) log line(s) dropped: standard error was not being read"
      payload += Array(((StandardError.logsJSON ? StandardError.jsonLines(note) : note) + "\n").utf8)
    }
    guard !payload.isEmpty else { return false }
    let outcome = StandardError.write(payload, to: buffer.fd, waitMilliseconds: waitMilliseconds)
    switch outcome {
    case .written:
      return false
    case .full(let written):
      // Keep what was not written ahead of newer lines, and drop from the newest end past the limit.
      return buffer.state.withLock { b in
        b.fullFlushes += 1
        var rest = Array(payload[written...])
        rest.append(contentsOf: b.bytes)
        if rest.count > buffer.limit {
          let cut = rest[buffer.limit...]
          let lines = cut.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
          b.droppedTotal += lines
          b.droppedUnreported += lines
          rest.removeSubrange(buffer.limit...)
          if let lastNewline = rest.lastIndex(of: 10) { rest.removeSubrange((lastNewline + 1)...) }
        }
        b.bytes = rest
        // Retry later unless a line written meanwhile has already scheduled a flush.
        let retry = !b.flushScheduled && (!rest.isEmpty || b.droppedUnreported > 0)
        if retry { b.flushScheduled = true }
        return retry
      }
    case .broken:
      buffer.state.withLock { b in
        let lines =
          payload.reduce(0) { $0 + ($1 == 10 ? 1 : 0) } + b.bytes.reduce(0) { $0 + ($1 == 10 ? 1 : 0) }
        b.droppedTotal += lines
        b.bytes = []
        b.broken = true
      }
      return false
    }
  }

  /// Appends a line (a newline is added), or drops and counts it when the buffer is full or standard
  /// error is gone.
  public func line(_ text: String) {
    // --log-format json: every line one JSON object with a time, plain-text ones (reloads, templates)
    // as {"time", "message"}.
    let text = json ? StandardError.jsonLines(text) : text
    let limit = bufferLimit
    let schedule = buffer.state.withLock { b -> Bool in
      let size = text.utf8.count + 1
      if !b.broken, b.bytes.count + size <= limit {
        b.bytes.append(contentsOf: text.utf8)
        b.bytes.append(10)
      } else {
        b.droppedTotal += 1
        if !b.broken { b.droppedUnreported += 1 }
      }
      guard !b.broken, !b.flushScheduled else { return false }
      b.flushScheduled = true
      return true
    }
    if schedule { RequestLogger.scheduleFlush(buffer, on: flushQueue) }
  }

  /// Logs a request the parser rejected (the server answered `status` and closed).
  func rejected(client: String, status: Int, reason: String) {
    guard level != .quiet else { return }
    if json {
      line(
        #"{"rejected":true,"client":\#(JSONValue.quoted(client)),"status":\#(status),"error":\#(JSONValue.quoted(reason))}"#
      )
    } else {
      line("rejected request from \(client): \(status) \(reason)")
    }
  }

  /// Logs a served request.
  /// - Parameters:
  ///   - stub: the matched stub's name or id, or nil for no match.
  ///   - durationMilliseconds: request complete to response complete.
  func request(
    _ request: HTTPRequest, status: Int?, fault: String?, stub: String?, durationMilliseconds: Double,
    served: Bool = true, responseHead: HTTPResponseHead? = nil, responseBody: [UInt8] = [],
    nearMisses: String? = nil, nearMissReport: NearMissReport? = nil
  ) {
    guard level != .quiet else { return }
    let ms = (durationMilliseconds * 10).rounded() / 10
    let outcome = served ? (fault ?? status.map(String.init) ?? "-") : "client-closed"
    if json {
      var fields = [
        "\"method\":\(JSONValue.quoted(request.method.rawValue))",
        "\"url\":\(JSONValue.quoted(request.head.target))",
        "\"status\":\(status.map(String.init) ?? "null")",
        "\"stub\":" + (stub.map { "\(JSONValue.quoted($0))" } ?? "null"),
        "\"durationMs\":\(ms)",
      ]
      if let fault { fields.append("\"fault\":\"\(fault)\"") }
      if let nearMissReport {
        // Structured: the near misses as the 404 body carries them; a note (e.g. an unserved CORS
        // preflight) as its own field.
        let misses = nearMissReport.json.objectValue?["nearMisses"] ?? .array([])
        fields.append("\"nearMisses\":" + misses.serialized())
        if let nearMisses, let first = nearMisses.split(separator: "\n").first,
          first.hasPrefix("CORS preflight")
        {
          fields.append("\"note\":\(JSONValue.quoted(String(first)))")
        }
      } else if let nearMisses {
        fields.append("\"nearMisses\":\(JSONValue.quoted(nearMisses))")
      }
      if !served { fields.append("\"served\":false") }
      if level == .verbose {
        fields.append("\"requestHeaders\":\(JSONValue.quoted(request.headers.description))")
        fields.append("\"requestBody\":\(JSONValue.quoted(RequestLogger.bodyText(request.body)))")
        fields.append("\"responseBody\":\(JSONValue.quoted(RequestLogger.bodyText(responseBody)))")
      }
      line("{" + fields.joined(separator: ",") + "}")
    } else {
      line("\(request.method.rawValue) \(request.head.target) \(outcome) \(stub ?? "no match") \(ms)ms")
      if let nearMisses { line(nearMisses) }
      if level == .verbose {
        var detail = "  > " + request.headers.description.replacingOccurrences(of: "\n", with: "\n  > ")
        if !request.body.isEmpty { detail += "\n  > " + RequestLogger.bodyText(request.body) }
        if let responseHead {
          detail += "\n  < " + responseHead.headers.description.replacingOccurrences(of: "\n", with: "\n  < ")
        }
        if !responseBody.isEmpty { detail += "\n  < " + RequestLogger.bodyText(responseBody) }
        line(detail)
      }
    }
  }
}

/// The logger's pending bytes and what was dropped.
final class LogBuffer: Sendable {
  struct State {
    var bytes: [UInt8] = []
    /// Lines dropped since start.
    var droppedTotal = 0
    /// Lines dropped since the last report line.
    var droppedUnreported = 0
    /// Standard error is closed or broken: nothing is buffered any more.
    var broken = false
    /// A flush is queued (``RequestLogger`` queues one for the first line of a batch).
    var flushScheduled = false
    /// Flushes that found standard error full (and kept the rest for a retry).
    var fullFlushes = 0
  }
  let state = Mutex(State())
  let limit: Int
  let fd: Int32
  init(limit: Int, fd: Int32) {
    self.limit = limit
    self.fd = fd
  }
}

extension RequestLogger {
  /// A body as log text: UTF-8 text as it is; anything else (invalid UTF-8, control characters other
  /// than tab, CR and LF) as `<N bytes binary: hex 1f8b0800… base64 H4sIAA…>` with the first 32 bytes.
  static func bodyText(_ body: [UInt8]) -> String {
    var isText = true
    for b in body where b < 0x20 && b != 0x09 && b != 0x0A && b != 0x0D || b == 0x7F {
      isText = false
      break
    }
    if isText, let text = String(validating: body, as: UTF8.self) { return text }
    let excerpt = body.prefix(32)
    let hexDigits = Array("0123456789abcdef".utf8)
    var hex: [UInt8] = []
    for b in excerpt {
      hex.append(hexDigits[Int(b >> 4)])
      hex.append(hexDigits[Int(b & 0xF)])
    }
    let more = body.count > excerpt.count ? "…" : ""
    let base64 = Data(excerpt).base64EncodedString()
    return
      "<\(body.count) bytes binary: hex \(String(decoding: hex, as: UTF8.self))\(more) base64 \(base64)\(more)>"
  }
}
