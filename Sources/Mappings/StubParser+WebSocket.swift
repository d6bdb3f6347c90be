import HTTPCore
import MockJSON
import Templating

/// `response.x-websocket` (docs/streaming.md, "WebSocket") and WireMock 4 message stub mappings, inline
/// (`messageMappings`) or in `message-mappings/` files.
extension StubParser {
  /// Response fields `x-websocket` excludes (a 101 carries no content).
  static let webSocketExcludedFields = [
    "body", "jsonBody", "base64Body", "bodyFileName", "x-envelope", "fault", "chunkedDribbleDelay",
    "proxyBaseUrl", "x-sse", "x-responseSequence",
  ]

  /// The stub's `x-websocket`, or nil when it has none (problems located under `path`).
  static func parseWebSocket(
    _ o: JSONObject, _ path: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> WebSocketDefinition? {
    guard let v = o["x-websocket"] else { return nil }
    let p = JSONPathText.child(path, "x-websocket")
    for key in webSocketExcludedFields where o[key] != nil {
      d.error(
        JSONPathText.child(path, key), expected: "no \(key) beside x-websocket (a 101 carries no content)",
        found: "both")
    }
    if let status = o["status"], status.numberValue?.intValue != 101 {
      d.error(
        JSONPathText.child(path, "status"), expected: "101 or no status beside x-websocket", found: status)
    }
    var w = WebSocketDefinition()
    guard let ws = object(v, p, "an object such as {\"messages\": [{\"text\": \"hello\"}]}", &d) else {
      return w
    }
    let known = [
      "subprotocol", "messages", "closeConnection", "closeStatus", "pingIntervalMilliseconds",
      "messageMappings",
    ]
    for key in ws.keys where !known.contains(key) {
      d.error(
        JSONPathText.child(p, key), expected: "an x-websocket field (" + known.joined(separator: ", ") + ")",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    if let s = string(ws, "subprotocol", p, &d) {
      if isToken(s) {
        w.subprotocol = s
      } else {
        d.error(
          JSONPathText.child(p, "subprotocol"), expected: "a token (RFC 6455 §4.1)",
          found: JSONValue.quoted(s))
      }
    }
    if let m = ws["messages"] {
      let mp = JSONPathText.child(p, "messages")
      if let list = m.arrayValue {
        for (k, item) in list.enumerated() {
          if let message = parseOpeningMessage(item, JSONPathText.index(mp, k), &d) {
            w.messages.append(message)
          }
        }
      } else {
        d.error(mp, expected: "an array of {\"text\": …} or {\"binary\": base64} messages", found: m)
      }
    }
    w.closeConnection = parseFlag(ws, "closeConnection", p, &d) ?? false
    if let c = ws["closeStatus"] {
      let cp = JSONPathText.child(p, "closeStatus")
      if let co = object(c, cp, "an object such as {\"code\": 1000, \"reason\": \"done\"}", &d),
        let status = parseCloseStatus(co, cp, &d)
      {
        w.closeStatus = status
      }
    }
    w.pingIntervalMilliseconds = nonNegativeInt(ws, "pingIntervalMilliseconds", p, &d) ?? 0
    if let m = ws["messageMappings"] {
      let mp = JSONPathText.child(p, "messageMappings")
      if let list = m.arrayValue {
        for (k, item) in list.enumerated() {
          if let mapping = parseMessageMapping(item, JSONPathText.index(mp, k), context, &d) {
            w.messageMappings.append(mapping)
          }
        }
      } else {
        d.error(mp, expected: "an array of message stub mappings", found: m)
      }
    }
    return w
  }

  static func parseOpeningMessage(_ v: JSONValue, _ p: String, _ d: inout Diagnostics)
    -> WebSocketDefinition.OpeningMessage?
  {
    guard let o = object(v, p, "{\"text\": …} or {\"binary\": base64}", &d) else { return nil }
    for key in o.keys where !["text", "binary", "delay"].contains(key) {
      d.error(
        JSONPathText.child(p, key), expected: "text, binary or delay",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    let delay = o["delay"].flatMap { parseTimeDelay($0, JSONPathText.child(p, "delay"), &d) } ?? 0
    switch (o["text"], o["binary"]) {
    case (let t?, nil):
      guard let s = t.stringValue else {
        d.error(JSONPathText.child(p, "text"), expected: "a string", found: t)
        return nil
      }
      guard let text = outgoingText(s, JSONPathText.child(p, "text"), &d) else { return nil }
      return .init(body: .text(text), delayMilliseconds: delay)
    case (nil, let b?):
      guard let s = b.stringValue, let bytes = Base64.decode(s) else {
        d.error(JSONPathText.child(p, "binary"), expected: "base64 text", found: b)
        return nil
      }
      return .init(body: .binary(bytes), delayMilliseconds: delay)
    default:
      d.error(p, expected: "exactly one of text or binary", found: v)
      return nil
    }
  }

  /// `{code, reason}`: a code an endpoint may send and a reason of at most 123 bytes.
  static func parseCloseStatus(_ o: JSONObject, _ p: String, _ d: inout Diagnostics)
    -> WebSocketDefinition.CloseStatus?
  {
    var status = WebSocketDefinition.CloseStatus(code: 1000, reason: "")
    if let c = o["code"] {
      guard let n = c.numberValue?.intValue, let code = UInt16(exactly: n),
        WebSocketEndpoint.isSendableCloseCode(code)
      else {
        d.error(
          JSONPathText.child(p, "code"),
          expected: "a close code 1000–1003, 1007–1014 or 3000–4999 (1004–1006 and 1015 are never sent)",
          found: c)
        return nil
      }
      status.code = code
    }
    if let reason = string(o, "reason", p, &d) {
      guard reason.utf8.count <= 123 else {
        d.error(
          JSONPathText.child(p, "reason"), expected: "a reason of at most 123 bytes of UTF-8 (RFC 6455 §5.5)",
          found: "\(reason.utf8.count) bytes")
        return nil
      }
      status.reason = reason
    }
    return status
  }

  /// A text to send: compiled as a template when it has tags; a template error is a load error.
  static func outgoingText(_ s: String, _ p: @autoclosure () -> String, _ d: inout Diagnostics)
    -> WebSocketDefinition.OutgoingText?
  {
    guard Template.mayContainTags(s) else { return .init(text: s, template: nil) }
    do {
      return .init(text: s, template: try Template(s))
    } catch {
      d.error(p(), message: "\(error.line):\(error.column): \(error.message)")
      return nil
    }
  }

  /// One WireMock 4 message stub mapping (`location` is its JSON path, prefixed with its file when it
  /// comes from one). `allowsHTTPTriggers`: `http-request` and `http-stub` triggers are accepted (a
  /// mapping of `message-mappings/` or the admin API; a stub's inline mappings answer its own messages).
  package static func parseMessageMapping(
    _ v: JSONValue, _ p: String, _ context: StubParsingContext, _ d: inout Diagnostics,
    allowsHTTPTriggers: Bool = false
  ) -> WebSocketDefinition.MessageMapping? {
    guard let o = object(v, p, "a message stub mapping {\"trigger\": …, \"actions\": […]}", &d) else {
      return nil
    }
    let known = ["id", "uuid", "name", "priority", "trigger", "actions", "metadata", "persistent"]
    for key in o.keys where !known.contains(key) {
      d.error(
        JSONPathText.child(p, key), expected: "a message stub field (" + known.joined(separator: ", ") + ")",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    var m = WebSocketDefinition.MessageMapping(
      id: string(o, "id", p, &d) ?? string(o, "uuid", p, &d) ?? context.makeID(),
      name: string(o, "name", p, &d),
      priority: 5, channelPattern: nil, bodyPattern: nil, actions: [], location: p)
    for key in ["id", "uuid"] where o[key]?.stringValue.map({ $0.isEmpty || $0.utf8.count > 256 }) == true {
      d.error(JSONPathText.child(p, key), expected: "an id of 1 to 256 bytes", found: o[key] ?? .null)
    }
    if let pr = o["priority"] {
      if let n = pr.numberValue?.intValue, (1...Int(Int32.max)).contains(n) {
        m.priority = n
      } else {
        d.error(JSONPathText.child(p, "priority"), expected: "a whole number of 1 or more", found: pr)
      }
    }
    if let metadata = o["metadata"] {
      if metadata.objectValue == nil {
        d.error(JSONPathText.child(p, "metadata"), expected: "an object", found: metadata)
      } else {
        m.metadata = metadata
      }
    }
    let tp = JSONPathText.child(p, "trigger")
    if let t = o["trigger"], let to = object(t, tp, "{\"type\": \"message\", \"message\": {…}}", &d) {
      parseTrigger(to, tp, allowsHTTPTriggers: allowsHTTPTriggers, into: &m, &d)
    }
    let ap = JSONPathText.child(p, "actions")
    if let a = o["actions"] {
      if let list = a.arrayValue {
        for (k, item) in list.enumerated() {
          guard let action = parseAction(item, JSONPathText.index(ap, k), context, &d) else { continue }
          if m.httpTrigger != nil {
            // An HTTP request has no channel of its own: nothing "originating" to send to or close.
            switch action {
            case .send(_, .originating, _, _):
              d.error(
                JSONPathText.child(JSONPathText.index(ap, k), "channelTarget"),
                expected:
                  "{\"type\": \"request-initiated\", \"requestPattern\": …} (an HTTP trigger has no originating channel)",
                found: "none (originating)")
            case .close:
              d.error(
                JSONPathText.child(JSONPathText.index(ap, k), "type"),
                expected: "\"send\" (an HTTP trigger has no originating channel to close)",
                found: "\"x-close\"")
            case .send: m.actions.append(action)
            }
          } else {
            m.actions.append(action)
          }
        }
      } else {
        d.error(ap, expected: "an array of actions such as [{\"type\": \"send\", …}]", found: a)
      }
    }
    if var source = v.objectValue, source["id"] == nil {
      source.members.insert(JSONObject.Member(key: "id", value: .string(m.id)), at: 0)
      m.source = .object(source)
    } else {
      m.source = v
    }
    return m
  }

  /// `trigger`: `message` (default; `channel.initiatingRequestPattern`, `message.body`), `http-request`
  /// (`requestPattern`) or `http-stub` (`stubId`).
  static func parseTrigger(
    _ to: JSONObject, _ tp: String, allowsHTTPTriggers: Bool,
    into m: inout WebSocketDefinition.MessageMapping, _ d: inout Diagnostics
  ) {
    let given = to["type"]
    let type = given == nil ? "message" : given?.stringValue ?? ""
    let allowed = ["message", "http-request", "http-stub"]
    guard allowed.contains(type), type == "message" || allowsHTTPTriggers else {
      d.error(
        JSONPathText.child(tp, "type"),
        expected: allowsHTTPTriggers
          ? "\"message\", \"http-request\" or \"http-stub\""
          : "\"message\" (HTTP triggers belong in message-mappings/ or /__admin/message-mappings)",
        found: given?.stringValue.map { JSONValue.quoted($0) } ?? given?.kindDescription ?? "nothing")
      return
    }
    let fields: [String: [String]] = [
      "message": ["type", "channel", "message"], "http-request": ["type", "requestPattern"],
      "http-stub": ["type", "stubId"],
    ]
    for key in to.keys where !(fields[type] ?? []).contains(key) {
      d.error(
        JSONPathText.child(tp, key),
        expected: "a field of a \(type) trigger (" + (fields[type] ?? []).joined(separator: ", ") + ")",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    switch type {
    case "http-request":
      guard let r = to["requestPattern"] else {
        d.error(JSONPathText.child(tp, "requestPattern"), expected: "a request pattern", found: "nothing")
        return
      }
      m.httpTrigger = .request(parseRequest(r, JSONPathText.child(tp, "requestPattern"), &d))
    case "http-stub":
      guard let id = string(to, "stubId", tp, &d) else {
        if to["stubId"] == nil {
          d.error(
            JSONPathText.child(tp, "stubId"), expected: "the id of an HTTP stub mapping", found: "nothing")
        }
        return
      }
      m.httpTrigger = .stub(id: id)
    default:
      if let c = to["channel"],
        let co = object(c, JSONPathText.child(tp, "channel"), "a channel pattern", &d)
      {
        for key in co.keys where key != "type" && key != "initiatingRequestPattern" {
          d.error(
            JSONPathText.child(JSONPathText.child(tp, "channel"), key),
            expected: "type or initiatingRequestPattern",
            found: "unknown field \(JSONValue.quoted(key))")
        }
      }
      if let co = to["channel"]?.objectValue, let r = co["initiatingRequestPattern"] {
        m.channelPattern = parseRequest(
          r, JSONPathText.child(JSONPathText.child(tp, "channel"), "initiatingRequestPattern"), &d)
      }
      if let message = to["message"],
        let mo = object(message, JSONPathText.child(tp, "message"), "{\"body\": {\"equalTo\": …}}", &d),
        let body = mo["body"]
      {
        m.bodyPattern = parseMatcher(body, JSONPathText.child(JSONPathText.child(tp, "message"), "body"), &d)
      }
    }
  }

  static func parseAction(
    _ v: JSONValue, _ p: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> WebSocketDefinition.Action? {
    guard let o = object(v, p, "{\"type\": \"send\", \"message\": {\"body\": …}}", &d) else { return nil }
    let delay = o["x-delay"].flatMap { parseTimeDelay($0, JSONPathText.child(p, "x-delay"), &d) } ?? 0
    switch o["type"]?.stringValue {
    case "send":
      for key in o.keys
      where !["type", "message", "channelTarget", "transformerParameters", "x-delay"].contains(key) {
        d.error(
          JSONPathText.child(p, key), expected: "message, channelTarget, transformerParameters or x-delay",
          found: "unknown field \(JSONValue.quoted(key))")
      }
      let mp = JSONPathText.child(p, "message")
      guard let message = o["message"], let mo = object(message, mp, "{\"body\": …}", &d) else {
        if o["message"] == nil { d.error(mp, expected: "{\"body\": …}", found: "nothing") }
        return nil
      }
      guard let body = mo["body"] else {
        d.error(JSONPathText.child(mp, "body"), expected: "a text or an entity", found: "nothing")
        return nil
      }
      guard let outgoing = parseEntity(body, JSONPathText.child(mp, "body"), context, &d) else { return nil }
      var target = WebSocketDefinition.ChannelTarget.originating
      if let t = o["channelTarget"] {
        let tp = JSONPathText.child(p, "channelTarget")
        if let to = object(t, tp, "{\"type\": \"originating\"}", &d) {
          switch to["type"]?.stringValue {
          case "originating"?: break
          case "request-initiated"?:
            if let r = to["requestPattern"] {
              target = .requestInitiated(parseRequest(r, JSONPathText.child(tp, "requestPattern"), &d))
            } else {
              target = .requestInitiated(RequestPattern())
            }
          default:
            d.error(
              JSONPathText.child(tp, "type"), expected: "\"originating\" or \"request-initiated\"",
              found: to["type"] ?? .null)
          }
        }
      }
      var parameters: JSONValue?
      if let params = o["transformerParameters"] {
        if params.objectValue == nil {
          d.error(JSONPathText.child(p, "transformerParameters"), expected: "an object", found: params)
        } else {
          parameters = params
        }
      }
      return .send(outgoing, target: target, parameters: parameters, delayMilliseconds: delay)
    case "x-close":
      guard let status = parseCloseStatus(o, p, &d) else {
        return nil
      }
      return .close(status, delayMilliseconds: delay)
    default:
      d.error(
        JSONPathText.child(p, "type"), expected: "\"send\" or \"x-close\"",
        found: o["type"].map { $0.stringValue.map { JSONValue.quoted($0) } ?? $0.kindDescription }
          ?? "nothing")
      return nil
    }
  }

  /// WireMock's entity: `"text"`, `{"data": "text"}`, `{"data": {JSON}}` (written compactly),
  /// `{"base64Data": "…"}` (binary), `{"filePath": "…"}` (under `__files/`; text when it is UTF-8). Also
  /// reads admin input (`POST /__admin/channels/send`'s `message.body`).
  package static func parseEntity(
    _ v: JSONValue, _ p: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> WebSocketDefinition.Outgoing? {
    if let s = v.stringValue { return outgoingText(s, p, &d).map { .text($0) } }
    guard let o = object(v, p, "a text, {\"data\": …}, {\"base64Data\": …} or {\"filePath\": …}", &d) else {
      return nil
    }
    if let data = o["data"] {
      let text = data.stringValue ?? String(decoding: data.serializedBytes(), as: UTF8.self)
      return outgoingText(text, JSONPathText.child(p, "data"), &d).map { .text($0) }
    }
    if let b = o["base64Data"] {
      guard let s = b.stringValue, let bytes = Base64.decode(s) else {
        d.error(JSONPathText.child(p, "base64Data"), expected: "base64 text", found: b)
        return nil
      }
      return .binary(bytes)
    }
    if let f = o["filePath"] {
      guard let bytes = parseBodyFile(f, JSONPathText.child(p, "filePath"), context, &d) else { return nil }
      if let text = String(validating: bytes, as: UTF8.self) {
        return outgoingText(text, JSONPathText.child(p, "filePath"), &d).map { .text($0) }
      }
      return .binary(bytes)
    }
    d.error(p, expected: "an entity with data, base64Data or filePath", found: v)
    return nil
  }
}

extension StubParser {
  /// A `message-mappings/` file or an admin body: one message stub mapping, or
  /// `{"messageMappings": [...]}` (with an optional `meta`). HTTP triggers are allowed. A mapping with an
  /// error is left out (its problems are in `d`).
  package static func parseMessageMappings(
    _ json: JSONValue, context: StubParsingContext, _ d: inout Diagnostics
  ) -> [WebSocketDefinition.MessageMapping] {
    guard let o = json.objectValue else {
      d.error("$", expected: "a message stub mapping object or {\"messageMappings\": [ … ]}", found: json)
      return []
    }
    var items: [(JSONValue, String)] = [(json, "$")]
    if let list = o["messageMappings"] {
      for key in o.keys where key != "messageMappings" && key != "meta" {
        d.error(
          JSONPathText.child("$", key),
          expected: "only messageMappings (and meta) beside a messageMappings list",
          found: "unknown field \(JSONValue.quoted(key))")
      }
      guard let array = list.arrayValue else {
        d.error("$.messageMappings", expected: "an array of message stub mappings", found: list)
        return []
      }
      items = array.enumerated().map { ($1, JSONPathText.index("$.messageMappings", $0)) }
    }
    var out: [WebSocketDefinition.MessageMapping] = []
    for (item, location) in items {
      let before = d.errorCount
      guard let m = parseMessageMapping(item, location, context, &d, allowsHTTPTriggers: true),
        d.errorCount == before
      else { continue }
      out.append(m)
    }
    return out
  }
}
