import HTTPCore
import Mappings
import MockJSON

/// The admin API under `/__admin` (WireMock's paths and JSON shapes). See `docs/admin-api.md`.
///
/// Runs on the event-loop thread: every handler works on snapshots and never holds a lock while doing
/// I/O (only reset-to-files and save touch the disk). Malformed input gets 400 with WireMock's error shape
/// `{"errors":[{"title","detail","source":{"pointer"}}]}` and changes nothing.
struct AdminAPI: Sendable {
  var configuration: MockServiceConfiguration
  /// The stubs the calls change: the server's, or in a session (``session``) the session's own.
  var store: StubStore
  /// The scenario states: the server's, or the session's.
  var scenarioBook: ScenarioBook
  let journal: RequestJournal
  let logger: RequestLogger
  let settings: MockSettings
  /// Monotonic time the service was created, for `/__admin/health` uptime.
  let createdAt: UInt64
  /// The host's hook for `POST /__admin/shutdown`, if any.
  let shutdownHandler: @Sendable () -> (@Sendable () -> Void)?
  /// The dashboard's live feed and last reload result (`AdminAPI+Dashboard.swift`).
  let dashboard: DashboardState
  /// Upstream exchanges and the recorder (`/__admin/recordings`), or nil.
  var forwarder: ProxyForwarder? = nil
  /// The state extension's contexts (`/__admin/state-extension/contexts`), or nil.
  var stateStore: StateStore? = nil
  /// WebSocket channels, message stub mappings and the message journal (`/__admin/channels`,
  /// `/__admin/message-mappings`, `/__admin/messages`), or nil.
  var webSockets: WebSocketHub? = nil
  /// Every replica's journal in the shared state store (`--state-store`): the journal queries answer
  /// from it; nil without the store.
  var sharedJournal: SharedJournal? = nil
  /// The sessions (docs/scaling.md#sessions), or nil.
  var sessions: SessionBook? = nil
  /// The session a call is scoped to (its `X-Mock-Session` or `/__session/{id}/` prefix), or nil: set on
  /// the copy that answers it, whose ``store`` and ``scenarioBook`` are then the session's.
  var session: SessionBook.Session? = nil
  /// With a ``session``: the server's stubs (those without a session), seen by the session below its own.
  var serverStore: StubStore? = nil
  /// The recording in progress in the shared state store (`--state-store`): the recording API answers
  /// from it; nil without the store.
  var sharedRecordings: SharedRecordings? = nil

  /// One decoded admin request: method, path segments after `/__admin`, query parameters, body.
  struct Call {
    var method: String
    var segments: [String]
    var query: [(name: String, value: String)]
    var request: HTTPRequest
    var context: RequestContext

    /// The last value of query parameter `name`.
    func parameter(_ name: String) -> String? { query.last(where: { $0.name == name })?.value }
  }

  /// Authorizes, routes and logs one admin request. Reads that can be heavy (journal listings, finds,
  /// counts, near misses, the mappings list) run off the event loop (``ResponsePlan/Step/deferred(_:)``),
  /// so serving requests never waits for admin traffic; changes stay on the loop, in request order.
  /// With a shared state store (`--state-store`), changes of the stubs and the health check talk to the
  /// store, so they run off the event loop too.
  func handle(_ request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    guard AdminAPI.isHeavyRead(request) || (store.shared != nil && AdminAPI.talksToStore(request)) else {
      return routeAndLog(request, context: context)
    }
    let api = self
    return ResponsePlan(steps: [.deferred { api.routeAndLog(request, context: context) }])
  }

  /// True for the requests that talk to the shared state store: changes of the stubs (mappings, reset)
  /// and of the settings, the health check, the scenarios, the journal, the recording and the state
  /// extension's contexts.
  static func talksToStore(_ request: HTTPRequest) -> Bool {
    let path = request.head.rawPath
    if path.hasPrefix("/__admin/scenarios") || path.hasPrefix("/__admin/requests")
      || path.hasPrefix("/__admin/recordings") || path.hasPrefix("/__admin/state-extension")
    {
      return true
    }
    if request.method.rawValue == "GET" { return path == "/__admin/health" }
    return path.hasPrefix("/__admin/mappings") || path == "/__admin/reset"
      || path == "/__admin/settings"
  }

  /// True for reads whose cost grows with the journal or the stubs.
  static func isHeavyRead(_ request: HTTPRequest) -> Bool {
    let path = request.head.rawPath
    switch request.method.rawValue {
    case "GET":
      return path.hasPrefix("/__admin/requests") || path == "/__admin/mappings"
        || path == "/__admin/mappings/"
    case "POST":
      return path == "/__admin/requests/find" || path == "/__admin/requests/count"
        || path.hasPrefix("/__admin/near-misses/") || path == "/__admin/mappings/find-by-metadata"
    default:
      return false
    }
  }

  /// Routes and logs one admin request where it is called.
  func routeAndLog(_ request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    let started = SocketOps.monotonicNanos()
    var plan = authorizeAndRoute(request, context: context)
    if let check = configuration.adminResponseCheck {
      plan = plan.checkingAdminAnswers(check, method: request.method.rawValue, rawPath: request.head.rawPath)
    }
    if logger.level != .quiet {
      let ms = Double(SocketOps.monotonicNanos() - started) / 1e6
      var status: Int?
      for step in plan.steps {
        if case .response(let head, _) = step { status = head.status.code }
      }
      logger.request(request, status: status, fault: nil, stub: "admin", durationMilliseconds: ms)
    }
    return plan
  }

  func authorizeAndRoute(_ request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    if !configuration.adminAllowsRemote, !JournalEntry.isLoopback(context.clientAddress) {
      return AdminAPI.error(
        .forbidden, title: "Forbidden",
        detail: "the admin API only accepts loopback clients (start with --admin-host to allow others)")
    }
    if configuration.adminToken == nil, let refusal = browserRefusal(request, context: context) {
      return refusal
    }
    if let token = configuration.adminToken {
      let given = request.headers.first("Authorization").map { $0.trimmingOWS() } ?? ""
      let parts = given.split(separator: " ", maxSplits: 1)
      let ok =
        parts.count == 2 && parts[0].equalsIgnoringASCIICase("Bearer")
        && AdminAPI.constantTimeEqual(Array(parts[1].trimmingOWS().utf8), Array(token.utf8))
      if !ok {
        var plan = AdminAPI.error(
          .unauthorized, title: "Unauthorized",
          detail: "the admin API needs the header Authorization: Bearer <token given with --admin-token>")
        plan.steps = plan.steps.map { step in
          guard case .response(var head, let body) = step else { return step }
          head.headers.add(name: "WWW-Authenticate", value: #"Bearer realm="mockserver-admin""#)
          return .response(head, body: body)
        }
        return plan
      }
    }
    var segments: [String] = []
    var rest = request.head.rawPath.dropFirst("/__admin".count).dropFirst()
    // A trailing slash reads as the folder (`GET /__admin/mappings/`); any other empty segment is an id or
    // name left out (`DELETE /__admin/mappings/` + "" must not reach "delete every stub").
    if request.method == .get, rest.hasSuffix("/") { rest = rest.dropLast() }
    for raw in rest.isEmpty ? [] : rest.split(separator: "/", omittingEmptySubsequences: false) {
      guard !raw.isEmpty else {
        return AdminAPI.error(
          .notFound, title: "Not found",
          detail:
            "\(request.method.rawValue) \(request.head.rawPath) has an empty path segment (an id or name is missing)"
        )
      }
      guard let s = try? PercentDecoding.decode(raw, component: "path") else {
        return AdminAPI.error(
          .badRequest, title: "Invalid path", detail: "path segment \(raw) has invalid percent-encoding")
      }
      segments.append(s)
    }
    var query: [(name: String, value: String)] = []
    if let raw = request.head.rawQuery {
      do {
        query = try PercentDecoding.queryParameters(raw).map { (name: $0.0, value: $0.1) }
      } catch {
        return AdminAPI.error(.badRequest, title: "Invalid query", detail: error.description)
      }
    }
    let call = Call(
      method: request.method.rawValue, segments: segments, query: query, request: request, context: context)
    return route(call)
  }

  /// This API scoped to `session`: its stubs and scenario states, its journal entries; nothing written to
  /// the fixtures folder.
  func scoped(to session: SessionBook.Session) -> AdminAPI {
    var api = self
    api.serverStore = store
    api.store = session.store
    api.scenarioBook = session.scenarioBook
    api.configuration.fixturesDirectory = nil
    api.session = session
    return api
  }

  /// The stubs calls see: the server's, and in a session the server's below the session's own.
  var visibleStubs: [StubMapping] { (serverStore?.stubs ?? []) + store.stubs }

  /// The routes a call in a session may take: the session's stubs, scenarios, journal and reset, and
  /// the reads that describe the server. The others act on the whole server and are refused in a
  /// session (``sessionRefusal(_:)``).
  static func servesInSession(_ call: Call) -> Bool {
    let s = call.segments
    switch (call.method, s.first ?? "") {
    case (_, "mappings"): return s.count < 2 || s[1] != "save"
    case (_, "requests"), ("POST", "near-misses"), (_, "scenarios"), ("POST", "reset"): return true
    case ("GET", "health"), ("GET", "version"), ("GET", "openapi.json"), ("GET", "docs"), ("GET", "settings"):
      return true
    default: return false
    }
  }

  /// The 400 of a call that acts on the whole server, sent in a session.
  func sessionRefusal(_ call: Call) -> ResponsePlan {
    AdminAPI.error(
      .badRequest, title: "Not available in a session",
      detail:
        "\(call.method) \(call.request.head.rawPath) acts on the whole server, not on session \(session?.id ?? ""): send it without the \(sessions?.headerName ?? SessionBook.defaultHeaderName) header and the /__session/{id}/ prefix"
    )
  }

  func route(_ call: Call) -> ResponsePlan {
    if session != nil, !AdminAPI.servesInSession(call) { return sessionRefusal(call) }
    let s = call.segments
    switch (call.method, s.first ?? "") {
    case (_, "mappings"): return mappings(call, Array(s.dropFirst()))
    case (_, "requests"): return requests(call, Array(s.dropFirst()))
    case ("POST", "near-misses") where s.count == 2: return nearMisses(call, kind: s[1])
    case (_, "scenarios"): return scenarios(call, Array(s.dropFirst()))
    case (_, "files"): return files(call, Array(s.dropFirst()))
    case ("GET", "openapi.json") where s.count == 1, ("GET", "docs") where s.count == 1:
      return AdminAPI.openAPIDocument()
    case (_, "settings") where s.count == 1: return settings(call)
    case ("POST", "reset") where s.count == 1: return session == nil ? resetAll() : resetSession(call)
    case ("GET", "health") where s.count == 1: return health()
    case ("GET", "version") where s.count == 1: return version()
    case ("POST", "shutdown") where s.count == 1: return shutdown()
    case (_, "dashboard"), (_, "events"): return dashboardRoute(call)
    case (_, "recordings"): return recordings(call, Array(s.dropFirst()))
    case (_, "state-extension"): return stateExtension(call, Array(s.dropFirst()))
    case (_, "channels"): return channels(call, Array(s.dropFirst()))
    case (_, "messages"): return messages(call, Array(s.dropFirst()))
    case (_, "message-mappings"): return messageMappings(call, Array(s.dropFirst()))
    default: return notFound(call)
    }
  }

  func notFound(_ call: Call) -> ResponsePlan {
    AdminAPI.error(
      .notFound, title: "Not found",
      detail: "no admin endpoint \(call.method) \(call.request.head.rawPath) (see docs/admin-api.md)")
  }

  // MARK: - Responses

  /// A JSON response (pretty, as WireMock sends it).
  static func json(_ value: JSONValue, status: HTTPStatus = .ok) -> ResponsePlan {
    .respond(
      status: status, headers: ["Content-Type": "application/json"], body: value.serializedBytes(pretty: true)
    )
  }

  /// `{}` with 200.
  static var empty: ResponsePlan { json(.object(JSONObject())) }

  /// WireMock's error shape: `{"errors":[{"title","detail"}]}`.
  static func error(_ status: HTTPStatus, title: String, detail: String, pointer: String? = nil)
    -> ResponsePlan
  {
    errors(status, [(title, detail, pointer)])
  }

  /// Several errors at once (``ResponsePlan/errors(_:_:code:)``).
  static func errors(
    _ status: HTTPStatus, _ list: [(title: String, detail: String, pointer: String?)], code: Int? = nil
  ) -> ResponsePlan {
    ResponsePlan.errors(status, list, code: code)
  }

  /// 400 for fixture problems in admin input: detail `JSON path: expected …, found …`.
  static func invalid(_ problems: [FixtureProblem], title: String) -> ResponsePlan {
    errors(
      .badRequest,
      problems.filter(\.isError).map { p in (title, "\(p.path): \(p.message)", pointer(p.path)) })
  }

  /// WireMock's answer to a stub mapping it cannot read (`POST`/`PUT /__admin/mappings`, `import`): 422,
  /// each error with code 10, title `Error parsing JSON`, its JSON Pointer and the problem as lint words it
  /// (`$.request.url: expected …, found …`).
  static func invalidStub(_ problems: [FixtureProblem]) -> ResponsePlan {
    errors(
      HTTPStatus(code: 422),
      problems.filter(\.isError).map { p in ("Error parsing JSON", "\(p.path): \(p.message)", pointer(p.path))
      },
      code: 10)
  }

  /// The stub JSON of a mapping request, or WireMock's 422 for a body that is not JSON.
  static func stubBody(_ call: Call) -> Result<JSONValue, AdminFailure> {
    do {
      return .success(try JSONValue.parse(bytes: call.request.body))
    } catch {
      return .failure(
        AdminFailure(
          errors(HTTPStatus(code: 422), [("Error parsing JSON", error.description, nil)], code: 10)))
    }
  }

  /// Adds one `MockServer-Warning: JSON-path: message` header field per warning (what lint prints for the
  /// same stub): WireMock accepts these stubs silently; here the client is told what has no effect.
  static func withWarnings(_ plan: ResponsePlan, _ problems: [FixtureProblem]) -> ResponsePlan {
    let warnings = problems.filter { !$0.isError }
    guard !warnings.isEmpty else { return plan }
    var plan = plan
    for k in plan.steps.indices {
      guard case .response(var head, let body) = plan.steps[k] else { continue }
      for w in warnings.prefix(50) {
        // Header values are one line of visible text.
        let line = "\(w.path): \(w.message)".map { $0.isASCII && ($0 == " " || !$0.isWhitespace) ? $0 : "?" }
        head.headers.add(name: "MockServer-Warning", value: String(line))
      }
      plan.steps[k] = .response(head, body: body)
    }
    return plan
  }

  /// `$.request.headers.X[0]` → `/request/headers/X/0` (JSON Pointer); nil for syntax positions.
  static func pointer(_ path: String) -> String? {
    guard path.hasPrefix("$") else { return nil }
    var out = ""
    var rest = Substring(path.dropFirst())
    while let c = rest.first {
      if c == "." {
        rest = rest.dropFirst()
        let name = rest.prefix { $0 != "." && $0 != "[" }
        out += "/" + name
        rest = rest.dropFirst(name.count)
      } else if c == "[" {
        rest = rest.dropFirst()
        var name = rest.prefix { $0 != "]" }
        rest = rest.dropFirst(name.count + 1)
        if name.hasPrefix("'"), name.hasSuffix("'"), name.count >= 2 { name = name.dropFirst().dropLast() }
        out += "/" + name
      } else {
        return nil
      }
    }
    return out.isEmpty ? "/" : out
  }

  /// Parses the request body as JSON, or the 400 to send.
  static func body(_ call: Call, allowEmpty: Bool = false) -> Result<JSONValue?, AdminFailure> {
    let bytes = call.request.body
    if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) {
      if allowEmpty { return .success(nil) }
      return .failure(
        AdminFailure(
          error(.badRequest, title: "Missing body", detail: "$: expected a JSON body, found an empty body")))
    }
    do {
      return .success(try JSONValue.parse(bytes: bytes))
    } catch {
      return .failure(
        AdminFailure(AdminAPI.error(.badRequest, title: "Error parsing JSON", detail: error.description)))
    }
  }

  /// Parses the body as a JSON object, or the 400 to send.
  static func objectBody(_ call: Call, describing what: String) -> Result<JSONObject, AdminFailure> {
    switch body(call) {
    case .failure(let f): return .failure(f)
    case .success(let v):
      guard let v, let o = v.objectValue else {
        return .failure(
          AdminFailure(
            error(
              .badRequest, title: "Invalid request body",
              detail: "$: expected \(what), found \(v?.kindDescription ?? "nothing")", pointer: "/")))
      }
      return .success(o)
    }
  }

  /// A non-negative integer query parameter, or the 400 to send.
  /// The matcher a `…/find-by-metadata` or `…/remove-by-metadata` body holds (such as
  /// `{"matchesJsonPath": {"expression": "$.team", "equalTo": "payments"}}`), applied to a `metadata`
  /// object's JSON text; 400 naming the problem otherwise.
  static func metadataMatcher(_ call: Call) -> Result<StringValuePattern, AdminFailure> {
    let json: JSONValue
    switch body(call) {
    case .failure(let f): return .failure(f)
    case .success(let v): json = v ?? .null
    }
    var d = Diagnostics(file: "")
    guard let pattern = StubParser.parseMatcher(json, "$", &d), d.errorCount == 0 else {
      return .failure(AdminFailure(invalid(d.problems, title: "Invalid metadata pattern")))
    }
    return .success(pattern)
  }

  static func integerParameter(_ call: Call, _ name: String) -> Result<Int?, AdminFailure> {
    guard let text = call.parameter(name) else { return .success(nil) }
    guard let n = Int(text), n >= 0 else {
      return .failure(
        AdminFailure(
          error(
            .badRequest, title: "Invalid query parameter",
            detail: "\(name): expected a non-negative integer, found \(JSONValue.quoted(text))")))
    }
    return .success(n)
  }

  static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
    var diff = UInt8(a.count == b.count ? 0 : 1)
    for i in 0..<max(a.count, b.count) {
      diff |= (i < a.count ? a[i] : 0) ^ (i < b.count ? b[i] : 0)
    }
    return diff == 0
  }
}

/// A ready error response, carried through `Result`.
struct AdminFailure: Error {
  let plan: ResponsePlan
  init(_ plan: ResponsePlan) { self.plan = plan }
}
