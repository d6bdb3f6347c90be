import Dispatch
import Foundation
import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// WireMock 4's messaging routes (docs/streaming.md, "WireMock 4 messaging"): message stub mappings
/// (`/__admin/message-mappings`), the open channels (`/__admin/channels`, with `POST /__admin/channels/send`
/// to push to connected clients) and the message journal (`/__admin/messages`).
extension AdminAPI {
  /// The longest `POST /__admin/messages/wait` and `wait-for-count` may wait: 5 minutes.
  static let maxMessageWaitMilliseconds = 300_000

  // MARK: /__admin/message-mappings

  /// `/__admin/message-mappings…`
  func messageMappings(_ call: Call, _ rest: [String]) -> ResponsePlan {
    guard let hub = webSockets else { return notFound(call) }
    switch (call.method, rest.count, rest.first ?? "") {
    case ("GET", 0, _):
      return AdminAPI.messageMappingsJSON(hub.globalMappings())
    case ("POST", 0, _):
      switch parseMessageMapping(call, id: nil) {
      case .failure(let f): return f.plan
      case .success(let mapping):
        hub.upsertMapping(mapping)
        return AdminAPI.json(mapping.source, status: .created)
      }
    case ("DELETE", 0, _):
      hub.removeMappings { _ in true }
      return AdminAPI.empty
    case ("POST", 1, "find-by-metadata"), ("POST", 1, "remove-by-metadata"):
      let pattern: StringValuePattern
      switch AdminAPI.metadataMatcher(call) {
      case .failure(let f): return f.plan
      case .success(let p): pattern = p
      }
      let matches: (WebSocketDefinition.MessageMapping) -> Bool = { mapping in
        mapping.metadata.map { pattern.match($0.serialized()) } ?? false
      }
      if rest[0] == "remove-by-metadata" {
        hub.removeMappings(where: matches)
        return AdminAPI.empty
      }
      return AdminAPI.messageMappingsJSON(hub.globalMappings().filter(matches))
    case ("GET", 1, let id):
      guard let mapping = hub.mapping(id: id) else { return noMessageMapping(id) }
      return AdminAPI.json(mapping.source)
    case ("PUT", 1, let id):
      guard hub.mapping(id: id) != nil else { return noMessageMapping(id) }
      switch parseMessageMapping(call, id: id) {
      case .failure(let f): return f.plan
      case .success(let mapping):
        hub.upsertMapping(mapping)
        return AdminAPI.json(mapping.source)
      }
    case ("DELETE", 1, let id):
      guard hub.removeMappings(where: { $0.id == id }) > 0 else { return noMessageMapping(id) }
      return AdminAPI.empty
    default:
      return notFound(call)
    }
  }

  private func noMessageMapping(_ id: String) -> ResponsePlan {
    AdminAPI.error(
      .notFound, title: "Message stub mapping not found", detail: "no message stub mapping has id \(id)")
  }

  /// One message stub mapping from the body (`id`: the path's, which wins over the body's), or 422 in
  /// WireMock's shape naming each problem's JSON path.
  private func parseMessageMapping(_ call: Call, id: String?) -> Result<
    WebSocketDefinition.MessageMapping, AdminFailure
  > {
    let json: JSONValue
    switch AdminAPI.stubBody(call) {
    case .failure(let f): return .failure(f)
    case .success(let v): json = id.map { AdminAPI.withID(v, $0) } ?? v
    }
    if case .bool(true)? = json["persistent"] {
      return .failure(
        AdminFailure(
          AdminAPI.error(
            HTTPStatus(code: 422), title: "Not supported",
            detail:
              "$.persistent: message stub mappings added through the admin API are not written to "
              + "message-mappings/ (write the file; the server loads it)")))
    }
    var d = Diagnostics(file: "")
    let context = parsingContext()
    guard json.objectValue != nil,
      let mapping = StubParser.parseMessageMapping(json, "$", context, &d, allowsHTTPTriggers: true),
      d.errorCount == 0
    else {
      if json.objectValue == nil {
        d.error("$", expected: "a message stub mapping object", found: json)
      }
      return .failure(AdminFailure(AdminAPI.invalidStub(d.problems)))
    }
    return .success(mapping)
  }

  static func messageMappingsJSON(_ list: [WebSocketDefinition.MessageMapping]) -> ResponsePlan {
    json(
      .object(
        JSONObject(pairs: [
          ("messageMappings", .array(list.map(\.source))),
          ("meta", .object(JSONObject(pairs: [("total", .number(JSONNumber(list.count)))]))),
        ])))
  }

  // MARK: /__admin/channels

  /// `/__admin/channels…`
  func channels(_ call: Call, _ rest: [String]) -> ResponsePlan {
    guard let hub = webSockets else { return notFound(call) }
    switch (call.method, rest.count) {
    case ("GET", 0):
      let list = hub.channels().map(AdminAPI.channelJSON)
      return AdminAPI.json(
        .object(
          JSONObject(pairs: [
            ("channels", .array(list)),
            ("meta", .object(JSONObject(pairs: [("total", .number(JSONNumber(list.count)))]))),
          ])))
    case ("POST", 1) where rest[0] == "send":
      return sendToChannels(call, hub)
    case ("GET", 1):
      guard let channel = hub.channel(id: rest[0]) else { return noChannel(rest[0]) }
      return AdminAPI.json(AdminAPI.channelJSON(channel))
    case ("DELETE", 1):
      guard let channel = hub.channel(id: rest[0]) else { return noChannel(rest[0]) }
      channel.close(code: 1001, reason: "closed through the admin API")
      return AdminAPI.empty
    default:
      return notFound(call)
    }
  }

  private func noChannel(_ id: String) -> ResponsePlan {
    AdminAPI.error(.notFound, title: "Channel not found", detail: "no open channel has id \(id)")
  }

  /// `POST /__admin/channels/send`: `{"type": "websocket", "initiatingRequest": <request pattern>,
  /// "message": {"body": ENTITY}}` → `{"channelsMessaged": N, "channels": [...]}`. Texts are templates over
  /// each channel's upgrade request.
  private func sendToChannels(_ call: Call, _ hub: WebSocketHub) -> ResponsePlan {
    let json: JSONValue
    switch AdminAPI.body(call) {
    case .failure(let f): return f.plan
    case .success(let v): json = v ?? .null
    }
    var d = Diagnostics(file: "")
    guard let o = json.objectValue else {
      d.error(
        "$", expected: "{\"type\": \"websocket\", \"initiatingRequest\": …, \"message\": {\"body\": …}}",
        found: json)
      return AdminAPI.invalid(d.problems, title: "Invalid message")
    }
    for key in o.keys where !["type", "initiatingRequest", "message"].contains(key) {
      d.error(
        JSONPathText.child("$", key), expected: "type, initiatingRequest or message",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    if let type = o["type"], type.stringValue != "websocket" {
      d.error("$.type", expected: "\"websocket\" (the only channel type served)", found: type)
    }
    var pattern = RequestPattern()
    if let r = o["initiatingRequest"] {
      pattern = StubParser.parseRequest(r, "$.initiatingRequest", &d)
    }
    var entity: WebSocketDefinition.Outgoing?
    if let body = o["message"]?["body"] {
      entity = StubParser.parseEntity(body, "$.message.body", parsingContext(), &d)
    } else {
      d.error("$.message.body", expected: "a text or an entity such as {\"data\": …}", found: "nothing")
    }
    guard d.errorCount == 0, let entity else { return AdminAPI.invalid(d.problems, title: "Invalid message") }
    let channels = hub.channels(matching: pattern)
    for channel in channels { channel.send(channel.render(entity, message: nil, parameters: nil)) }
    return AdminAPI.json(
      .object(
        JSONObject(pairs: [
          ("channelsMessaged", .number(JSONNumber(channels.count))),
          ("channels", .array(channels.map(AdminAPI.channelJSON))),
        ])))
  }

  /// A channel as WireMock logs it: `{id, type, initiatingRequest (a logged request), open}`.
  static func channelJSON(_ channel: WebSocketSession) -> JSONValue {
    .object(
      JSONObject(pairs: [
        ("id", .string(channel.id)),
        ("type", .string("websocket")),
        ("initiatingRequest", loggedUpgrade(channel.upgrade, channel.context)),
        ("open", .bool(channel.isOpen)),
      ]))
  }

  static func loggedUpgrade(_ request: HTTPRequest, _ context: RequestContext) -> JSONValue {
    JournalEntry(
      idWords: (0, 0), request: request, client: context.client, isTLS: context.isTLS,
      clientCertificateSubject: context.clientCertificateSubject, loggedAt: context.receivedAt, stubID: nil,
      nearMisses: []
    ).requestJSON
  }

  // MARK: /__admin/messages

  /// `/__admin/messages…`
  func messages(_ call: Call, _ rest: [String]) -> ResponsePlan {
    guard let hub = webSockets else { return notFound(call) }
    switch (call.method, rest.count, rest.first ?? "") {
    case ("GET", 0, _):
      // `?limit=N`: the newest N events (ours; the dashboard's panel asks for 50).
      switch AdminAPI.integerParameter(call, "limit") {
      case .failure(let f): return f.plan
      case .success(let limit):
        let all = hub.journal.all()
        return AdminAPI.messageEventsJSON(Array(all.suffix(limit ?? all.count)))
      }
    case ("DELETE", 0, _):
      hub.journal.clear()
      return AdminAPI.empty
    case ("POST", 1, "count"), ("POST", 1, "find"), ("POST", 1, "remove"):
      let json: JSONValue
      switch AdminAPI.body(call, allowEmpty: true) {
      case .failure(let f): return f.plan
      case .success(let v): json = v ?? .object(JSONObject())
      }
      var d = Diagnostics(file: "")
      guard let pattern = MessagePattern.parse(json, "$", &d) else {
        return AdminAPI.invalid(d.problems, title: "Invalid message pattern")
      }
      switch rest[0] {
      case "count":
        let count = hub.journal.all().filter(pattern.matches).count
        return AdminAPI.json(.object(JSONObject(pairs: [("count", .number(JSONNumber(count)))])))
      case "find": return AdminAPI.messageEventsJSON(hub.journal.all().filter(pattern.matches))
      default: return AdminAPI.messageEventsJSON(hub.journal.remove(where: pattern.matches))
      }
    case ("POST", 1, "remove-by-metadata"):
      let metadata: StringValuePattern
      switch AdminAPI.metadataMatcher(call) {
      case .failure(let f): return f.plan
      case .success(let p): metadata = p
      }
      let ids = Set(
        hub.globalMappings().filter { $0.metadata.map { metadata.match($0.serialized()) } ?? false }.map(\.id)
      )
      return AdminAPI.messageEventsJSON(hub.journal.remove { $0.mappingID.map(ids.contains) ?? false })
    case ("POST", 1, "wait"), ("POST", 1, "wait-for-count"):
      return waitForMessages(call, hub, forCount: rest[0] == "wait-for-count")
    case ("GET", 1, let id):
      guard let event = hub.journal.all().first(where: { $0.id == id }) else { return noMessageEvent(id) }
      return AdminAPI.json(AdminAPI.messageEventJSON(event))
    case ("DELETE", 1, let id):
      guard !hub.journal.remove(where: { $0.id == id }).isEmpty else { return noMessageEvent(id) }
      return AdminAPI.empty
    default:
      return notFound(call)
    }
  }

  private func noMessageEvent(_ id: String) -> ResponsePlan {
    AdminAPI.error(.notFound, title: "Message event not found", detail: "no message event has id \(id)")
  }

  /// `POST /__admin/messages/wait` (`{"pattern", "timeoutMillis"}` → the first matching event, or `{}`
  /// when none came in time) and `wait-for-count` (`{"pattern", "timeoutMillis", "count"}` →
  /// `{"messageServeEvents": [...]}`, the matching events when `count` were there, else those there at the
  /// deadline). Waits without holding a thread: the journal is looked at every 10 ms.
  private func waitForMessages(_ call: Call, _ hub: WebSocketHub, forCount: Bool) -> ResponsePlan {
    let json: JSONValue
    switch AdminAPI.body(call) {
    case .failure(let f): return f.plan
    case .success(let v): json = v ?? .null
    }
    var d = Diagnostics(file: "")
    guard let o = json.objectValue else {
      d.error("$", expected: "{\"pattern\": …, \"timeoutMillis\": 1000}", found: json)
      return AdminAPI.invalid(d.problems, title: "Invalid wait")
    }
    let pattern = o["pattern"].map { MessagePattern.parse($0, "$.pattern", &d) } ?? MessagePattern()
    var timeout = 0
    if let t = o["timeoutMillis"] {
      if let n = t.numberValue?.intValue, (0...AdminAPI.maxMessageWaitMilliseconds).contains(n) {
        timeout = n
      } else {
        d.error(
          "$.timeoutMillis", expected: "milliseconds from 0 to \(AdminAPI.maxMessageWaitMilliseconds)",
          found: t)
      }
    }
    var count = 1
    if forCount, let c = o["count"] {
      if let n = c.numberValue?.intValue, (1...1_000_000).contains(n) {
        count = n
      } else {
        d.error("$.count", expected: "a whole number from 1 to 1000000", found: c)
      }
    }
    guard d.errorCount == 0, let pattern else { return AdminAPI.invalid(d.problems, title: "Invalid wait") }
    let journal = hub.journal
    let wanted = count
    let deadline = DispatchTime.now() + .milliseconds(timeout)
    // The journal is filtered again only when it changed (or at the deadline).
    let seen = Mutex<UInt64?>(nil)
    let answer: @Sendable (Bool) -> ResponsePlan? = { atDeadline in
      let generation = journal.generation
      let changed = seen.withLock { last in
        defer { last = generation }
        return last != generation
      }
      guard changed || atDeadline else { return nil }
      let found = journal.all().filter(pattern.matches)
      guard found.count >= wanted || atDeadline else { return nil }
      if forCount { return AdminAPI.messageEventsJSON(found) }
      return AdminAPI.json(found.first.map(AdminAPI.messageEventJSON) ?? .object(JSONObject()))
    }
    if let now = answer(timeout == 0) { return now }
    return ResponsePlan(steps: [
      .awaiting { resume in
        @Sendable func look() {
          let expired = DispatchTime.now() >= deadline
          if let plan = answer(expired) { return resume(plan) }
          DispatchQueue.global().asyncAfter(deadline: min(.now() + .milliseconds(10), deadline)) { look() }
        }
        look()
      }
    ])
  }

  static func messageEventsJSON(_ events: [MessageJournal.Event]) -> ResponsePlan {
    json(.object(JSONObject(pairs: [("messageServeEvents", .array(events.map(messageEventJSON)))])))
  }

  /// An event as WireMock 4 writes it: `message` is the body as text (a binary message's bytes read as
  /// UTF-8, as WireMock does; ours add `x-base64`, the bytes exactly).
  static func messageEventJSON(_ event: MessageJournal.Event) -> JSONValue {
    var pairs: [(String, JSONValue)] = [
      ("id", .string(event.id)), ("eventType", .string(event.eventType)),
      (
        "channel",
        .object(
          JSONObject(pairs: [
            ("id", .string(event.channelID)), ("type", .string("websocket")),
            ("initiatingRequest", loggedUpgrade(event.upgrade, event.context)),
          ]))
      ),
    ]
    switch event.message {
    case .text(let text): pairs.append(("message", .string(text)))
    case .binary(let bytes):
      pairs.append(("message", .string(String(decoding: bytes, as: UTF8.self))))
      pairs.append(("x-base64", .string(Base64.encode(bytes))))
    }
    if event.truncated {
      pairs.append(("x-truncated", .bool(true)))
      pairs.append(("x-size", .number(JSONNumber(event.size))))
    }
    pairs.append(("wasMatched", .bool(event.mappingID != nil)))
    if let id = event.mappingID {
      pairs.append(("stubMapping", .object(JSONObject(pairs: [("id", .string(id))]))))
    }
    pairs.append(("timestamp", .string(HTTPDate.iso8601(event.timestamp))))
    return .object(JSONObject(pairs: pairs))
  }
}

/// WireMock 4's message pattern: `{"channel"?: <request pattern>, "body"?: <content pattern>}`, matched
/// against journaled message events (the channel's upgrade request, the message).
struct MessagePattern: Sendable {
  var channel: RequestPattern?
  var body: StringValuePattern?

  /// Parses `json`, reporting problems under `path`; nil when it has errors.
  static func parse(_ json: JSONValue, _ path: String, _ d: inout Diagnostics) -> MessagePattern? {
    guard let o = json.objectValue else {
      d.error(path, expected: "a message pattern {\"channel\"?: …, \"body\"?: …}", found: json)
      return nil
    }
    let before = d.errorCount
    var pattern = MessagePattern()
    for key in o.keys where key != "channel" && key != "body" {
      d.error(
        JSONPathText.child(path, key), expected: "channel or body",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    if let c = o["channel"] {
      pattern.channel = StubParser.parseRequest(c, JSONPathText.child(path, "channel"), &d)
    }
    if let b = o["body"] { pattern.body = StubParser.parseMatcher(b, JSONPathText.child(path, "body"), &d) }
    return d.errorCount == before ? pattern : nil
  }

  func matches(_ event: MessageJournal.Event) -> Bool {
    if let channel {
      guard let view = try? RequestView(event.upgrade, connection: event.context.connection),
        channel.matches(view).0
      else { return false }
    }
    return WebSocketDefinition.MessageMapping.message(event.message, matches: body)
  }
}
