import MockJSON
import Templating

/// `response.x-sse`: a server-sent events stream (docs/streaming.md, "Server-sent events"). Every rule
/// of the format is a load error here, naming the file, the JSON path and what was expected.
extension StubParser {
  /// The fields of `x-sse`.
  static let sseFields: Set<String> = [
    "events", "closeConnection", "repeat", "loop", "heartbeatMilliseconds", "resumeFromLastEventId",
  ]
  /// The fields of one event of `x-sse.events`.
  static let sseEventFields: Set<String> = ["event", "id", "data", "retry", "delay"]

  /// Java's `TimeUnit` names with their length in nanoseconds (MockServer's `delay.timeUnit`).
  static let timeUnitNanoseconds: [(String, Double)] = [
    ("NANOSECONDS", 1), ("MICROSECONDS", 1e3), ("MILLISECONDS", 1e6), ("SECONDS", 1e9), ("MINUTES", 6e10),
    ("HOURS", 3.6e12), ("DAYS", 8.64e13),
  ]

  /// Parses `x-sse` of response object `o` at `path` (nil when absent, or with errors in `d`); `r` is the
  /// response parsed so far (its status is checked).
  package static func parseServerSentEvents(
    _ o: JSONObject, _ path: String, _ r: ResponseDefinition, _ d: inout Diagnostics
  ) -> ServerSentEventsDefinition? {
    guard let v = o["x-sse"] else { return nil }
    let sp = JSONPathText.child(path, "x-sse")
    for key in ServerSentEventsDefinition.excludedFields where o[key] != nil {
      d.error(
        JSONPathText.child(path, key), expected: "no \(key) beside x-sse (the events are the content)",
        found: "\(key) and x-sse")
    }
    if !(200...299).contains(r.status) {
      d.error(
        JSONPathText.child(path, "status"), expected: "a 2xx status for an x-sse stream",
        found: String(r.status))
    }
    guard let s = object(v, sp, "an object {\"events\": [ … ], \"closeConnection\": true, …}", &d) else {
      return nil
    }
    for key in s.keys where !sseFields.contains(key) {
      d.error(
        JSONPathText.child(sp, key),
        expected: "an x-sse field (\(sseFields.sorted().joined(separator: ", ")))",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    let local = isLocallyTemplated(o)
    var sse = ServerSentEventsDefinition()
    sse.locallyTemplated = local
    if let parameters = o["transformerParameters"], parameters.objectValue != nil {
      sse.parameters = parameters
    }
    if let e = s["events"] {
      let ep = JSONPathText.child(sp, "events")
      if let list = e.arrayValue {
        for (k, item) in list.enumerated() {
          if let event = parseServerSentEvent(item, JSONPathText.index(ep, k), local: local, &d) {
            sse.events.append(event)
          }
        }
      } else {
        d.error(
          ep, expected: "an array of events {\"event\", \"id\", \"data\", \"retry\", \"delay\"}", found: e)
      }
    }
    sse.closeConnection = parseFlag(s, "closeConnection", sp, &d) ?? sse.closeConnection
    sse.loop = parseFlag(s, "loop", sp, &d) ?? sse.loop
    sse.resumeFromLastEventId = parseFlag(s, "resumeFromLastEventId", sp, &d) ?? sse.resumeFromLastEventId
    if let n = s["repeat"] {
      if let count = n.numberValue?.intValue, count >= 1 {
        sse.repeatCount = count
      } else {
        d.error(JSONPathText.child(sp, "repeat"), expected: "a whole number of 1 or more", found: n)
      }
    }
    sse.heartbeatMilliseconds =
      nonNegativeInt(s, "heartbeatMilliseconds", sp, &d, maximum: ResponseDefinition.maxDelayMilliseconds)
      ?? sse.heartbeatMilliseconds
    return sse
  }

  /// One event of `events[]`.
  static func parseServerSentEvent(_ v: JSONValue, _ p: String, local: Bool, _ d: inout Diagnostics)
    -> ServerSentEventsDefinition.Event?
  {
    guard let o = object(v, p, "an event object {\"event\", \"id\", \"data\", \"retry\", \"delay\"}", &d)
    else {
      return nil
    }
    for key in o.keys where !sseEventFields.contains(key) {
      d.error(
        JSONPathText.child(p, key), expected: "an event field (data, delay, event, id, retry)",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    var e = ServerSentEventsDefinition.Event()
    let before = d.errorCount
    for key in ["event", "id"] {
      guard let text = string(o, key, p, &d) else { continue }
      if text.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
        d.error(
          JSONPathText.child(p, key), expected: "text without CR, LF or NUL (one line of text/event-stream)",
          found: JSONValue.quoted(text))
        continue
      }
      if key == "event" { e.event = text } else { e.id = text }
    }
    e.data = string(o, "data", p, &d)
    e.retry = nonNegativeInt(o, "retry", p, &d, maximum: ResponseDefinition.maxDelayMilliseconds)
    if let delay = o["delay"] {
      e.delayMilliseconds = parseTimeDelay(delay, JSONPathText.child(p, "delay"), &d) ?? 0
    }
    func compile(_ text: String?, _ key: String, _ d: inout Diagnostics) -> Template? {
      guard let text, Template.mayContainTags(text) else { return nil }
      do {
        return try Template(text)
      } catch {
        // As the response's other fields (StubParser+Templates): an error with `response-template`; under
        // global templating only, the text is sent as written.
        if local {
          d.error(JSONPathText.child(p, key), message: "\(error.line):\(error.column): \(error.message)")
        }
        return nil
      }
    }
    e.eventTemplate = compile(e.event, "event", &d)
    e.idTemplate = compile(e.id, "id", &d)
    e.dataTemplate = compile(e.data, "data", &d)
    return d.errorCount == before ? e : nil
  }

  /// MockServer's delay `{"timeUnit": "MILLISECONDS", "value": n}` in milliseconds (0...24 h; a part of a
  /// millisecond is rounded up): an `x-sse` event's `delay`, an `x-websocket` message's `delay` and a
  /// message mapping action's `x-delay` alike. Both fields are required, `value` a whole number.
  static func parseTimeDelay(_ v: JSONValue, _ p: String, _ d: inout Diagnostics) -> Int? {
    guard let o = object(v, p, "a delay {\"timeUnit\": \"MILLISECONDS\", \"value\": n}", &d) else {
      return nil
    }
    for key in o.keys where key != "timeUnit" && key != "value" {
      d.error(
        JSONPathText.child(p, key), expected: "timeUnit or value",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    let names = timeUnitNanoseconds.map(\.0)
    guard let unitName = o["timeUnit"]?.stringValue,
      let unit = timeUnitNanoseconds.first(where: { $0.0 == unitName })
    else {
      d.error(
        JSONPathText.child(p, "timeUnit"), expected: "one of \(names.joined(separator: ", "))",
        found: o["timeUnit"].map { $0.stringValue.map { JSONValue.quoted($0) } ?? $0.kindDescription }
          ?? "nothing")
      return nil
    }
    guard let value = o["value"], let n = value.numberValue?.intValue, n >= 0 else {
      d.error(
        JSONPathText.child(p, "value"), expected: "a whole number of 0 or more", found: o["value"] ?? .null)
      return nil
    }
    let ms = (Double(n) * unit.1 / 1e6).rounded(.up)
    guard ms <= Double(ResponseDefinition.maxDelayMilliseconds) else {
      d.error(
        JSONPathText.child(p, "value"), expected: "a delay of at most 24 hours (86,400,000 ms)",
        found: "\(n) \(unitName)")
      return nil
    }
    return Int(ms)
  }
}
