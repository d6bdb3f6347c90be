/// One event of a `text/event-stream` response, as an `EventSource` dispatches it (WHATWG HTML §9.2,
/// "Server-sent events").
///
/// ```
/// event: price
/// id: 7
/// data: {"symbol":"ACME",
/// data: "price":101}
///
/// ```
/// is `ServerSentEvent(id: "7", event: "price", data: "{\"symbol\":\"ACME\",\n\"price\":101}")`.
public struct ServerSentEvent: Sendable, Hashable {
  /// The stream's last event ID when the event was dispatched: the value of the most recent `id` field,
  /// from this event or an earlier one (WHATWG's `lastEventId`); empty when none was sent. This is what
  /// the next connection sends as `Last-Event-ID`.
  public var id: String
  /// The event type: the `event` field, `"message"` when the event had none.
  public var event: String
  /// The `data` fields' values joined with `\n` (a final `\n` is not added).
  public var data: String
  /// The reconnection time the event's block set with a valid `retry` field (digits only), or nil.
  public var retry: Duration?

  /// Creates an event.
  public init(id: String = "", event: String = "message", data: String, retry: Duration? = nil) {
    self.id = id
    self.event = event
    self.data = data
    self.retry = retry
  }
}

/// The WHATWG event stream interpreter ("Interpreting an event stream", HTML §9.2.6): bytes in, events
/// out, with no I/O.
///
/// Lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the next are one
/// line end); one UTF-8 byte order mark at the very start is skipped; invalid UTF-8 becomes U+FFFD; a
/// blank line dispatches the event being built; a line starting with `:` is a comment; `field: value`
/// loses one space after the colon, and a line with no colon is a field with an empty value. Fields:
/// `event` sets the type, `data` appends a line, `id` sets the last event ID unless it contains U+0000,
/// `retry` sets the reconnection time when it is ASCII digits only; others are ignored. An event whose
/// data is empty is not dispatched (its `id` still counts); bytes after the last blank line at the end of
/// the stream are discarded (``finish()``).
package struct ServerSentEventParser: Sendable {
  /// The last event ID buffer: kept across events and connections (the reconnection sends it).
  package private(set) var lastEventID: String
  /// The reconnection time set by the last valid `retry` field, or nil when none came.
  package private(set) var reconnectionTime: Duration?
  /// The longest line accepted, in bytes; a longer one makes ``parse(_:)`` throw.
  package let maxLineBytes: Int

  private var line: [UInt8] = []
  private var sawCR = false
  private var atStart = true
  private var bomBytesSeen = 0
  private var eventType = ""
  private var data = ""
  private var hasData = false
  private var retryInBlock: Duration?

  /// The longest reconnection time a `retry` field can set (larger values are clamped to it): 24 hours.
  package static let maxReconnectionTime = Duration.seconds(24 * 3600)

  /// A line longer than ``maxLineBytes``.
  package struct LineTooLong: Error, Sendable, Equatable {
    /// The limit that was passed.
    package var limit: Int

    /// Creates the error for `limit`.
    package init(limit: Int) { self.limit = limit }
  }

  /// Creates a parser; `lastEventID` is the ID a reconnection resumes from.
  package init(lastEventID: String = "", maxLineBytes: Int = 1 << 20) {
    self.lastEventID = lastEventID
    self.maxLineBytes = max(1, maxLineBytes)
  }

  /// Starts a new connection: the stream's first bytes may carry a byte order mark again, and a partial
  /// line or event from the previous connection is dropped. The last event ID and reconnection time stay.
  package mutating func reset() {
    line = []
    sawCR = false
    atStart = true
    bomBytesSeen = 0
    eventType = ""
    data = ""
    hasData = false
    retryInBlock = nil
  }

  /// Feeds bytes as they arrived; returns the events they completed, in order.
  /// - Throws: ``LineTooLong`` when a line grows past ``maxLineBytes``.
  package mutating func parse(_ bytes: some Sequence<UInt8>) throws(LineTooLong) -> [ServerSentEvent] {
    var events: [ServerSentEvent] = []
    for byte in bytes {
      if atStart {
        // U+FEFF as UTF-8: EF BB BF, skipped once at the start of the stream.
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        if byte == bom[bomBytesSeen] {
          bomBytesSeen += 1
          if bomBytesSeen == 3 { atStart = false }
          continue
        }
        atStart = false
        if bomBytesSeen > 0 {
          line.append(contentsOf: bom[0..<bomBytesSeen])
          bomBytesSeen = 0
        }
      }
      switch byte {
      case UInt8(ascii: "\n"):
        if sawCR {
          sawCR = false
          continue
        }
        endLine(into: &events)
      case UInt8(ascii: "\r"):
        sawCR = true
        endLine(into: &events)
      default:
        sawCR = false
        guard line.count < maxLineBytes else { throw LineTooLong(limit: maxLineBytes) }
        line.append(byte)
      }
    }
    return events
  }

  /// The stream ended: a partly received event is discarded (WHATWG: "once the end of the file is
  /// reached, any pending data must be discarded").
  package mutating func finish() {
    reset()
  }

  private mutating func endLine(into events: inout [ServerSentEvent]) {
    defer { line.removeAll(keepingCapacity: true) }
    if line.isEmpty {
      dispatch(into: &events)
      return
    }
    if line[0] == UInt8(ascii: ":") { return }
    let name: String
    let value: String
    if let colon = line.firstIndex(of: UInt8(ascii: ":")) {
      name = String(decoding: line[..<colon], as: UTF8.self)
      var start = colon + 1
      if start < line.count, line[start] == UInt8(ascii: " ") { start += 1 }
      value = String(decoding: line[start...], as: UTF8.self)
    } else {
      name = String(decoding: line, as: UTF8.self)
      value = ""
    }
    switch name {
    case "event":
      eventType = value
    case "data":
      if hasData { data += "\n" }
      data += value
      hasData = true
    case "id":
      if !value.unicodeScalars.contains("\u{0}") { lastEventID = value }
    case "retry":
      guard !value.isEmpty, value.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") })
      else { return }
      let limit = Int64(Self.maxReconnectionTime.components.seconds) * 1000
      // Digits only, so a failed conversion is an overflow: clamped like any value over the limit.
      let milliseconds = Int64(value).map { min($0, limit) } ?? limit
      let time = Duration.milliseconds(milliseconds)
      reconnectionTime = time
      retryInBlock = time
    default:
      break
    }
  }

  private mutating func dispatch(into events: inout [ServerSentEvent]) {
    defer {
      eventType = ""
      data = ""
      hasData = false
      retryInBlock = nil
    }
    guard hasData else { return }
    events.append(
      ServerSentEvent(
        id: lastEventID, event: eventType.isEmpty ? "message" : eventType, data: data, retry: retryInBlock))
  }
}
