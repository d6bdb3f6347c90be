import Foundation
import HTTPCore
import Mappings
import MockJSON
import NativeSupport

/// The dashboard: `GET /__admin/dashboard` (one self-contained HTML page), `GET /__admin/dashboard/state`
/// (what the page shows besides the journal: stubs with their origin and hit counts, scenarios, settings,
/// the last reload) and `GET /__admin/events` (the live request log as Server-Sent Events). They pass the
/// same checks as every admin route first (loopback client, `Host`, `Origin`, token); see
/// docs/dashboard.md.
///
/// Browser hardening on top of those: the page is sent with a Content-Security-Policy that allows only its
/// own inline script and style (by hash), connections to its own origin and no framing, so it cannot
/// load anything from elsewhere, be clickjacked, or run injected markup; the data routes refuse requests
/// a browser marks as coming from another site (`Sec-Fetch-Site: cross-site` or `same-site`, e.g. an
/// `<img>` or `<script>` of another page, which sends no `Origin`), and every answer carries
/// `Cross-Origin-Resource-Policy: same-origin`.
extension AdminAPI {
  /// Routes `dashboard`, `dashboard/state` and `events`.
  func dashboardRoute(_ call: Call) -> ResponsePlan {
    let s = call.segments
    let readable = call.method == "GET" || call.method == "HEAD"
    switch (s.count, s.first ?? "") {
    case (1, "dashboard") where readable:
      return AdminAPI.dashboardPage()
    case (2, "dashboard") where readable && s[1] == "state":
      if let refusal = AdminAPI.crossSiteRefusal(call) { return refusal }
      let api = self
      return ResponsePlan(steps: [
        .deferred { AdminAPI.withBrowserHeaders(AdminAPI.json(api.dashboardStateJSON())) }
      ])
    case (1, "events") where readable:
      if let refusal = AdminAPI.crossSiteRefusal(call) { return refusal }
      return eventStream(call)
    default:
      return notFound(call)
    }
  }

  /// `GET /__admin/events`: the live request log. `Last-Event-ID` (header, as `EventSource` sends it on
  /// reconnection) replays the events after it that are still kept; `?heartbeat=MS` (100…300000, default
  /// 15000) sets the interval of comment lines.
  func eventStream(_ call: Call) -> ResponsePlan {
    var heartbeat = 15_000
    if let text = call.parameter("heartbeat") {
      guard let ms = Int(text), (100...300_000).contains(ms) else {
        return AdminAPI.error(
          .badRequest, title: "Invalid query parameter",
          detail: "heartbeat: expected milliseconds from 100 to 300000, found \(JSONValue.quoted(text))")
      }
      heartbeat = ms
    }
    // WHATWG: the last event ID is any string; ours are decimal counters, and anything else (another
    // server's id) is treated as no id.
    let last = call.request.headers.first("Last-Event-ID").flatMap { UInt64($0.trimmingOWS()) }
    switch dashboard.events.subscribe(
      lastEventID: last, heartbeatMilliseconds: heartbeat, recent: { journal.snapshot() })
    {
    case .tooManyViewers:
      return AdminAPI.error(
        .serviceUnavailable, title: "Too many viewers",
        detail: "at most \(dashboard.events.maxViewers) event streams are served at once")
    case .subscribed(let subscription):
      return ResponsePlan(
        steps: [
          .streamedResponse(EventStreamSubscription.head, framing: .untilClose, source: subscription)
        ], keepAlive: false)
    }
  }

  /// 403 for a request the browser says another site made (`Sec-Fetch-Site` other than `same-origin`
  /// or `none`); nil to go on. Clients that are not browsers send no `Sec-Fetch-Site`.
  static func crossSiteRefusal(_ call: Call) -> ResponsePlan? {
    guard let site = call.request.headers.first("Sec-Fetch-Site")?.trimmingOWS().lowercased(),
      site == "cross-site" || site == "same-site"
    else { return nil }
    return AdminAPI.error(
      .forbidden, title: "Forbidden",
      detail: "the dashboard's data is only for the dashboard page itself (Sec-Fetch-Site: \(site))")
  }

  /// Adds the headers every dashboard answer carries.
  static func withBrowserHeaders(_ plan: ResponsePlan) -> ResponsePlan {
    var plan = plan
    plan.steps = plan.steps.map { step in
      guard case .response(var head, let body) = step else { return step }
      for (name, value) in browserHeaders { head.headers.add(name: name, value: value) }
      return .response(head, body: body)
    }
    return plan
  }

  static let browserHeaders: [(String, String)] = [
    ("Cache-Control", "no-store"),
    ("X-Content-Type-Options", "nosniff"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Referrer-Policy", "no-referrer"),
  ]

  /// The page with its security headers.
  static func dashboardPage() -> ResponsePlan {
    var headers: HTTPHeaders = ["Content-Type": "text/html; charset=utf-8"]
    headers.add(name: "Content-Security-Policy", value: DashboardPage.contentSecurityPolicy)
    headers.add(name: "X-Frame-Options", value: "DENY")
    headers.add(name: "Cross-Origin-Opener-Policy", value: "same-origin")
    for (name, value) in browserHeaders { headers.add(name: name, value: value) }
    return .respond(status: .ok, headers: headers, body: DashboardPage.bytes)
  }

  /// `{"stubs":[…],"scenarios":[…],"settings":{…},"reload":{…}|null,"events":{…},"journal":{…},
  /// "version"}`: each stub as written (`request`, `response`) with `id`, `name`, its origin (`kind`
  /// `file` with `file` and JSON `path`, `runtime`, or `recording`), its priority, scenario and `hits`
  /// (requests it answered since the last journal reset).
  /// The most state-extension contexts the dashboard's state lists (by name).
  static let dashboardContextLimit = 200

  func dashboardStateJSON() -> JSONValue {
    let stubs = store.stubs
    let list: [JSONValue] = stubs.map { stub in
      var origin: [(String, JSONValue)]
      if let file = stub.file {
        origin = [("kind", .string("file")), ("file", .string(file)), ("path", .string(stub.location))]
      } else {
        origin = [("kind", .string(AdminAPI.isRecorded(stub) ? "recording" : "runtime"))]
      }
      var pairs: [(String, JSONValue)] = [("id", .string(stub.id))]
      if let name = stub.name { pairs.append(("name", .string(name))) }
      pairs.append(("origin", .object(JSONObject(pairs: origin))))
      pairs.append(("priority", .number(JSONNumber(stub.priority))))
      pairs.append(("hits", .number(JSONNumber(journal.count(stubID: stub.id)))))
      if let scenario = stub.scenarioName { pairs.append(("scenarioName", .string(scenario))) }
      pairs.append(("request", stub.source["request"] ?? .object(JSONObject())))
      pairs.append(("response", stub.source["response"] ?? .object(JSONObject())))
      if let sequence = stub.source["x-responseSequence"] { pairs.append(("x-responseSequence", sequence)) }
      return .object(JSONObject(pairs: pairs))
    }
    let scenarios: [JSONValue] = scenarioBook.scenarios(of: stubs).map { s in
      .object(
        JSONObject(pairs: [
          ("name", .string(s.name)), ("state", .string(s.state)),
          ("possibleStates", .array(s.possibleStates.map { .string($0) })),
        ]))
    }
    let events = dashboard.events
    // The state extension's contexts, at most ``dashboardContextLimit`` of them (the count says how many).
    let contexts = stateStore?.snapshots() ?? []
    return .object(
      JSONObject(pairs: [
        ("version", .string(MockServerInfo.version)),
        ("stubs", .array(list)),
        ("scenarios", .array(scenarios)),
        ("stateContexts", .array(contexts.prefix(AdminAPI.dashboardContextLimit).map(AdminAPI.contextJSON))),
        ("stateContextCount", .number(JSONNumber(contexts.count))),
        ("settings", settingsJSON()["settings"] ?? .object(JSONObject())),
        ("reload", dashboard.reload?.json ?? .null),
        (
          "events",
          .object(
            JSONObject(pairs: [
              ("viewers", .number(JSONNumber(events.viewerCount))),
              ("dropped", .number(JSONNumber(events.droppedCount))),
              ("lastEventId", .number(JSONNumber(Int(clamping: events.lastEventID)))),
            ]))
        ),
        (
          "journal",
          .object(
            JSONObject(pairs: [
              ("capacity", .number(JSONNumber(journal.capacity))),
              ("retained", .number(JSONNumber(journal.retainedCount))),
              ("total", .number(JSONNumber(journal.totalRecorded))),
              ("unmatched", .number(JSONNumber(journal.unmatchedCount))),
            ]))
        ),
      ]))
  }

  /// Loads the fixtures folder for a reset (`POST /__admin/reset`, `POST /__admin/mappings/reset`) and
  /// records the result as the last reload the dashboard shows.
  func loadFixtures(_ directory: String) -> FixtureSet {
    let set = FixtureLoader.load(directory: directory)
    dashboard.record(
      FixtureReloadResult(
        directory: directory, succeeded: !set.hasErrors, stubCount: set.hasErrors ? 0 : set.stubs.count,
        problems: set.problems, at: Date().timeIntervalSince1970))
    return set
  }

  /// True for a runtime stub made by recording (its metadata says so: `"recorded": true`, or a
  /// `"recordedFrom"` / `"x-recordedFrom"` entry).
  static func isRecorded(_ stub: StubMapping) -> Bool {
    guard let metadata = stub.metadata else { return false }
    if case .bool(true)? = metadata["recorded"] { return true }
    return metadata["recordedFrom"] != nil || metadata["x-recordedFrom"] != nil
  }
}

/// The dashboard page: ``html`` with its style and script inline, and the Content-Security-Policy that
/// allows exactly those (by SHA-256) and nothing from elsewhere.
enum DashboardPage {
  /// The whole page, UTF-8.
  static let bytes: [UInt8] = Array(html.utf8)

  static let html: String =
    DashboardPageSource.head + "<style>" + DashboardPageSource.style + "</style>\n</head>\n"
    + DashboardPageSource.body + "<script>" + DashboardPageSource.script + "</script>\n</body>\n</html>\n"

  /// `default-src 'none'`, the inline script and style by hash, fetches and the event stream to the
  /// page's own origin, images only as `data:` (the empty icon), no framing, no forms, no `<base>`.
  static let contentSecurityPolicy: String =
    "default-src 'none'; script-src '\(hash(DashboardPageSource.script))'; "
    + "style-src '\(hash(DashboardPageSource.style))'; connect-src 'self'; img-src data:; "
    + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

  /// `sha256-BASE64` of the text's UTF-8 bytes (CSP hash source).
  static func hash(_ text: String) -> String {
    "sha256-" + Base64.encode(LibcryptoDigest.hash(.sha256, Array(text.utf8)))
  }
}
