import MockJSON
import Templating

/// A stub's `x-sse` response (docs/streaming.md, "Server-sent events"): events written one by one, each
/// when due, as `text/event-stream` (WHATWG HTML, "Server-sent events"). MockServer's `httpSseResponse`
/// fields (`events`, `closeConnection`) and ours (`repeat`, `loop`, `heartbeatMilliseconds`,
/// `resumeFromLastEventId`).
public struct ServerSentEventsDefinition: Sendable, Hashable {
  /// One event of `events[]`.
  public struct Event: Sendable, Hashable {
    /// `event`: the event type (no CR, LF or NUL), or nil.
    public var event: String?
    /// `id` (no CR, LF or NUL), or nil.
    public var id: String?
    /// `data`, or nil (an event with neither `data` nor `event`/`id` sends only its `retry`).
    public var data: String?
    /// `retry`: the reconnection time in milliseconds (0...86,400,000), or nil.
    public var retry: Int?
    /// `delay`, in milliseconds (0...86,400,000): waited before this event, counted from the previous
    /// event's write (from the head for the first).
    public var delayMilliseconds: Int
    /// `event`, `id` and `data` compiled when they hold `{{`, rendered per request under templating.
    public var eventTemplate: Template?
    /// The template of `id`.
    public var idTemplate: Template?
    /// The template of `data`.
    public var dataTemplate: Template?

    /// Creates an event.
    public init(
      event: String? = nil, id: String? = nil, data: String? = nil, retry: Int? = nil,
      delayMilliseconds: Int = 0
    ) {
      self.event = event
      self.id = id
      self.data = data
      self.retry = retry
      self.delayMilliseconds = delayMilliseconds
    }

    /// True when a field is a template.
    public var isTemplated: Bool { eventTemplate != nil || idTemplate != nil || dataTemplate != nil }
  }

  /// `events[]`, in order.
  public var events: [Event]
  /// `closeConnection` (default true): the response ends after the last event; false: the stream stays open
  /// until the client leaves, the server stops, or `--max-hold-ms` passes.
  public var closeConnection = true
  /// `repeat` (≥ 1, default 1): the list is played this many times, delays included.
  public var repeatCount = 1
  /// `loop`: the list is played again and again until the client leaves.
  public var loop = false
  /// `heartbeatMilliseconds` (0...86,400,000, default 15,000; 0 = none): a `:` comment line after this
  /// long without output.
  public var heartbeatMilliseconds = 15_000
  /// `resumeFromLastEventId` (default true): `Last-Event-ID: X` skips through the event whose id is `X`.
  public var resumeFromLastEventId = true
  /// The stub names `response-template` in `transformers` (the events are templates without global
  /// templating).
  public var locallyTemplated = false
  /// The response's `transformerParameters` (`parameters` in the events' templates), or nil.
  public var parameters: JSONValue?

  /// Creates a definition.
  public init(events: [Event] = []) {
    self.events = events
  }

  /// True when an event field is a template.
  public var isTemplated: Bool { events.contains { $0.isTemplated } }

  /// The response fields `x-sse` excludes (a load error beside it).
  public static let excludedFields = [
    "body", "jsonBody", "base64Body", "bodyFileName", "x-envelope", "fault", "chunkedDribbleDelay",
    "proxyBaseUrl", "x-websocket",
  ]

  /// One event as `text/event-stream` lines: `event:`, `id:`, `retry:`, one `data:` line per line of
  /// `data` (split on CRLF, LF and CR; `""` is one empty `data:` line), then a blank line. CR, LF and NUL
  /// in `event` and `id` (a rendered template's) are dropped: they would end the line or (NUL in `id`)
  /// make the client ignore it. An event with only `retry` gets no blank line (it dispatches nothing).
  public static func frame(event: String?, id: String?, data: String?, retry: Int?) -> [UInt8] {
    var out: [UInt8] = []
    func line(_ field: String, _ value: Substring.UTF8View) {
      out.append(contentsOf: field.utf8)
      out.append(contentsOf: ": ".utf8)
      out.append(contentsOf: value)
      out.append(10)
    }
    func clean(_ s: String) -> Substring.UTF8View {
      guard s.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else { return s[...].utf8 }
      return Substring(String(decoding: s.utf8.filter { $0 != 13 && $0 != 10 && $0 != 0 }, as: UTF8.self))
        .utf8
    }
    if let event { line("event", clean(event)) }
    if let id { line("id", clean(id)) }
    if let retry { line("retry", String(retry)[...].utf8) }
    if let data {
      let bytes = Array(data.utf8)
      var start = 0
      var i = 0
      while i < bytes.count {
        if bytes[i] == 10 || bytes[i] == 13 {
          out.append(contentsOf: "data: ".utf8)
          out.append(contentsOf: bytes[start..<i])
          out.append(10)
          if bytes[i] == 13, i + 1 < bytes.count, bytes[i + 1] == 10 { i += 1 }
          start = i + 1
        }
        i += 1
      }
      out.append(contentsOf: "data: ".utf8)
      out.append(contentsOf: bytes[start...])
      out.append(10)
    }
    if data != nil || event != nil || id != nil { out.append(10) }
    return out
  }
}
