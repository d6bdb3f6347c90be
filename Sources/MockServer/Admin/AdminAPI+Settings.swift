import Dispatch
import Foundation
import HTTPCore
import Mappings
import MockJSON

extension AdminAPI {
  /// `GET /__admin/settings` → `{"settings":{"fixedDelay":ms,"delayDistribution":{…},"extended":{…}}}`;
  /// `POST`/`PUT` replace the settings with that shape or its inner object (`fixedDelay: null` means 0;
  /// `delayDistribution` as in stubs: fixed, uniform, lognormal; `extended` any object); `PATCH` changes
  /// only the fields given.
  func settings(_ call: Call) -> ResponsePlan {
    switch call.method {
    case "GET":
      return AdminAPI.json(settingsJSON())
    case "POST", "PUT", "PATCH":
      let o: JSONObject
      switch AdminAPI.objectBody(call, describing: #"an object {"fixedDelay": ms}"#) {
      case .failure(let f): return f.plan
      case .success(let v): o = v
      }
      var fields = o
      var base = "$"
      if o["settings"] != nil, let unknown = o.keys.first(where: { $0 != "settings" }) {
        return AdminAPI.error(
          .badRequest, title: "Invalid settings",
          detail:
            "$.\(unknown): expected only \"settings\" next to the settings object, found an unknown field",
          pointer: AdminAPI.pointer("$." + unknown))
      }
      if let inner = o["settings"] {
        guard let io = inner.objectValue else {
          return AdminAPI.error(
            .badRequest, title: "Invalid settings",
            detail: "$.settings: expected an object, found \(inner.kindDescription)", pointer: "/settings")
        }
        fields = io
        base = "$.settings"
      }
      let known: Set<String> = ["fixedDelay", "delayDistribution", "extended"]
      if let unknown = fields.keys.first(where: { !known.contains($0) }) {
        return AdminAPI.error(
          .badRequest, title: "Invalid settings",
          detail:
            "\(base).\(unknown): expected a supported setting (fixedDelay, delayDistribution, extended), found an unknown field",
          pointer: AdminAPI.pointer(base + "." + unknown))
      }
      var delay: Int?
      if let v = fields["fixedDelay"] {
        if case .null = v {
          delay = 0
        } else if let n = v.numberValue?.intValue, n >= 0, n <= 3_600_000 {
          delay = n
        } else {
          return AdminAPI.error(
            .badRequest, title: "Invalid settings",
            detail:
              "\(base).fixedDelay: expected an integer number of milliseconds in 0...3600000, found \(v.kindDescription)",
            pointer: AdminAPI.pointer(base + ".fixedDelay"))
        }
      }
      var distribution: DelayDistribution?
      let distributionJSON = fields["delayDistribution"].flatMap { $0 == .null ? nil : $0 }
      if let v = distributionJSON {
        var d = Diagnostics(file: "")
        distribution = StubParser.parseDistribution(v, base + ".delayDistribution", &d)
        if d.errorCount > 0 || distribution == nil {
          return AdminAPI.invalid(d.problems, title: "Invalid settings")
        }
      }
      var extended: JSONValue?
      if let v = fields["extended"], v != .null {
        guard v.objectValue != nil else {
          return AdminAPI.error(
            .badRequest, title: "Invalid settings",
            detail: "\(base).extended: expected an object, found \(v.kindDescription)",
            pointer: AdminAPI.pointer(base + ".extended"))
        }
        extended = v
      }
      // POST and PUT replace the settings (WireMock's semantics: a field left out is unset); PATCH
      // changes only the fields given.
      let patch = call.method == "PATCH"
      var next = settings.values
      if !patch || delay != nil { next.fixedDelayMilliseconds = delay ?? 0 }
      if !patch || fields["delayDistribution"] != nil {
        next.delayDistribution = distribution
        next.delayDistributionJSON = distribution == nil ? nil : distributionJSON
      }
      if !patch || fields["extended"] != nil { next.extended = extended }
      if let shared = store.shared {
        // Every replica serves the store's settings: written there first, then read back from it.
        do {
          let settings = settings
          try SharedSettings(shared).write(next.json) { settings.apply(json: $0, log: shared.logLine) }
        } catch {
          return AdminAPI.sharedStateUnavailable(error)
        }
      } else {
        settings.apply(next)
      }
      return AdminAPI.json(settingsJSON())
    default:
      return notFound(call)
    }
  }

  func settingsJSON() -> JSONValue {
    .object(JSONObject(pairs: [("settings", settings.values.json)]))
  }

  /// `POST /__admin/reset`: stubs and message stub mappings back to the fixtures folder (runtime ones
  /// dropped), request and message journals cleared, scenarios and sequences restarted; open WebSocket
  /// channels stay open. When the folder has errors now, nothing changes (500).
  func resetAll() -> ResponsePlan {
    do {
      if let directory = configuration.fixturesDirectory {
        let set = loadFixtures(directory)
        if set.hasErrors { return fixtureErrors(set) }
        try store.change { $0.replaceFileStubs(set, keepRuntimeStubs: false, changedFiles: nil) }
        webSockets?.replaceFileMappings(set.messageMappings, keepRuntime: false)
      } else {
        try store.change { $0.removeAll() }
        webSockets?.replaceFileMappings([], keepRuntime: false)
      }
    } catch {
      return AdminAPI.sharedStateUnavailable(error)
    }
    do {
      try scenarioBook.resetEverywhere()
      try sharedJournal?.clear()
      // Every session ends: its stubs and states go (here, in the store and on every replica).
      if let shared = sessions?.shared {
        for id in try shared.all() { _ = try shared.end(id, idleBefore: nil) }
      }
    } catch {
      return AdminAPI.sharedStateUnavailable(error, changed: false)
    }
    _ = sessions?.forgetAll()
    webSockets?.journal.clear()
    journal.clear()
    return AdminAPI.empty
  }

  /// `POST /__admin/reset` in a session: removes the session's stubs, puts its scenarios back to
  /// `Started` and its sequences to their first response, and removes its journal entries; the server's
  /// stubs and other sessions are untouched.
  func resetSession(_ call: Call) -> ResponsePlan {
    do {
      try store.change { $0.removeAll() }
      try scenarioBook.resetEverywhere()
    } catch {
      return AdminAPI.sharedStateUnavailable(error)
    }
    var clear = call
    clear.method = "DELETE"
    clear.segments = ["requests"]
    return requests(clear, [])
  }

  /// `GET /__admin/health`. With a shared state store (`--state-store`) it asks the store (`PING`, off
  /// the event loop): 200 with `"stateStore": {"url", "status": "up"}` while it answers, 503 with
  /// `"status": "unhealthy"` and `"stateStore": {"url", "status": "down", "detail"}` while it does not.
  func health() -> ResponsePlan {
    let uptime = (SocketOps.monotonicNanos() - createdAt) / 1_000_000_000
    var pairs: [(String, JSONValue)] = [
      ("status", .string("healthy")),
      ("message", .string("Mock server is ok")),
      ("version", .string(MockServerInfo.version)),
      ("uptimeInSeconds", .number(JSONNumber(Int(uptime)))),
      ("timestamp", .string(HTTPDate.iso8601(Date().timeIntervalSince1970))),
      ("droppedLogLines", .number(JSONNumber(logger.droppedLines))),
    ]
    if let refused = webSockets?.refusedDelayedActions, refused > 0 {
      pairs.append(("refusedDelayedMessageActions", .number(JSONNumber(refused))))
    }
    guard let shared = store.shared else { return AdminAPI.json(.object(JSONObject(pairs: pairs))) }
    var problem: RedisFailure?
    do {
      if try shared.connection.command(["PING"]) != .status("PONG") {
        problem = .reply("PING not answered PONG")
      }
    } catch {
      problem = error
    }
    var storePairs: [(String, JSONValue)] = [
      ("url", .string(shared.endpoint.description)), ("status", .string(problem == nil ? "up" : "down")),
    ]
    guard let problem else {
      pairs.append(("stateStore", .object(JSONObject(pairs: storePairs))))
      return AdminAPI.json(.object(JSONObject(pairs: pairs)))
    }
    storePairs.append(("detail", .string(problem.description)))
    pairs[0].1 = .string("unhealthy")
    pairs[1].1 = .string(
      "the shared state store \(shared.endpoint) is down; plain stubs are served, changes of stubs are refused"
    )
    pairs.append(("stateStore", .object(JSONObject(pairs: storePairs))))
    return AdminAPI.json(.object(JSONObject(pairs: pairs)), status: .serviceUnavailable)
  }

  /// `GET /__admin/version`.
  func version() -> ResponsePlan {
    AdminAPI.json(.object(JSONObject(pairs: [("version", .string(MockServerInfo.version))])))
  }

  /// `POST /__admin/shutdown`: answers `{}`, closes the connection, then asks the host to stop (501 when
  /// the host gave no way to stop).
  func shutdown() -> ResponsePlan {
    guard let handler = shutdownHandler() else {
      return AdminAPI.error(
        .notImplemented, title: "Shutdown not available",
        detail: "this server was started without a shutdown hook (embedded in a test?)")
    }
    var plan = AdminAPI.empty
    plan.keepAlive = false
    plan.onComplete = { _ in DispatchQueue.global().async { handler() } }
    return plan
  }
}
