import Foundation
import HTTPCore
import Mappings
import MockJSON
import Templating

extension AdminAPI {
  /// `/__admin/requests…`. With a shared state store, every query answers from every replica's
  /// entries (the store's stream, read after this replica's queued entries are sent), a removal
  /// removes from the stream too, and while the store cannot answer the answer is 503, never this
  /// replica's entries alone.
  func requests(_ call: Call, _ rest: [String]) -> ResponsePlan {
    if let session { return sessionRequests(call, rest, session: session.id) }
    guard let sharedJournal else { return requests(call, rest, in: journal) }
    if (call.method == "DELETE" && rest.isEmpty) || (call.method == "POST" && rest == ["reset"]) {
      do {
        try sharedJournal.clear()
      } catch {
        return AdminAPI.sharedStateUnavailable(error)
      }
      journal.clear()
      return AdminAPI.empty
    }
    let view: SharedJournal.View
    do {
      view = try sharedJournal.read()
    } catch {
      return AdminAPI.sharedStateUnavailable(error, changed: false)
    }
    let everyReplica = journal(of: view.entries, nearMisses: rest == ["unmatched", "near-misses"])
    let plan = requests(call, rest, in: everyReplica, lost: view.lost)
    guard AdminAPI.isRemoval(call, rest) else { return plan }
    // A removal: what left the view leaves the stream, and this replica's journal.
    let kept = Set(everyReplica.snapshot().map(\.id))
    let gone = view.streamIDs.filter { !kept.contains($0.key) }
    do {
      try sharedJournal.remove(streamIDs: Array(gone.values))
    } catch {
      return AdminAPI.sharedStateUnavailable(error)
    }
    let goneIDs = Set(gone.keys)
    _ = journal.removeAll { goneIDs.contains($0.id) }
    return plan
  }

  /// True for the calls that remove entries (`DELETE`, `reset`, `remove…`).
  static func isRemoval(_ call: Call, _ rest: [String]) -> Bool {
    call.method == "DELETE"
      || (call.method == "POST" && (rest == ["reset"] || rest.first?.hasPrefix("remove") == true))
  }

  /// `/__admin/requests…` in a session: the queries see the session's entries only (every replica's with
  /// a shared store), a count is exact only while no entry was evicted or lost, and a removal removes
  /// only the session's entries (a clear or reset, all of them).
  func sessionRequests(_ call: Call, _ rest: [String], session id: String) -> ResponsePlan {
    let entries: [JournalEntry]
    var lost = 0
    var streamIDs: [String: String] = [:]
    if let sharedJournal {
      do {
        let view = try sharedJournal.read()
        entries = view.entries.filter { $0.session == id }
        (lost, streamIDs) = (view.lost, view.streamIDs)
      } catch {
        return AdminAPI.sharedStateUnavailable(error, changed: false)
      }
    } else {
      entries = journal.snapshot().filter { $0.session == id }
      lost = journal.evictedCount
    }
    let scoped = journal(of: entries, nearMisses: rest == ["unmatched", "near-misses"])
    let plan = requests(call, rest, in: scoped, lost: lost)
    guard AdminAPI.isRemoval(call, rest) else { return plan }
    let gone = Set(entries.map(\.id)).subtracting(scoped.snapshot().map(\.id))
    if let sharedJournal {
      do {
        // A clear also drops what other replicas send later of requests received before it.
        if call.method == "DELETE" && rest.isEmpty || rest == ["reset"] {
          try sharedJournal.markCleared(session: id)
        }
        try sharedJournal.remove(streamIDs: gone.compactMap { streamIDs[$0] })
      } catch {
        return AdminAPI.sharedStateUnavailable(error)
      }
    }
    _ = journal.removeAll { gone.contains($0.id) }
    return plan
  }

  /// A journal holding `entries` (every replica's, or a session's), for the queries to run on as on this
  /// replica's own; with `nearMisses`, unmatched entries get their near misses against this replica's
  /// stubs (the stream does not carry them).
  func journal(of entries: [JournalEntry], nearMisses: Bool) -> RequestJournal {
    let everyReplica = RequestJournal(
      capacity: max(entries.count, 1), maxBytes: Int.max / 2, maxBodyBytesPerEntry: Int.max / 2)
    let table = (serverStore ?? store).table
    let scenarios = scenarioBook.states
    for var entry in entries {
      if nearMisses, entry.stubID == nil, let request = try? RequestView(entry.request) {
        entry.nearMisses =
          table.nearMisses(request, scenarioState: { scenarios[$0] ?? StubMapping.scenarioStarted }, limit: 3)
          .nearMisses
      }
      everyReplica.record(entry)
    }
    return everyReplica
  }

  /// Every retained entry the journal queries see: every replica's with a shared state store (or the
  /// 503 to send while it cannot answer), else this replica's.
  func queriedEntries() -> Result<[JournalEntry], AdminFailure> {
    let id = session?.id
    guard let sharedJournal else {
      return .success(id == nil ? journal.snapshot() : journal.snapshot().filter { $0.session == id })
    }
    do {
      let entries = try sharedJournal.read().entries
      return .success(id == nil ? entries : entries.filter { $0.session == id })
    } catch {
      return .failure(AdminFailure(AdminAPI.sharedStateUnavailable(error, changed: false)))
    }
  }

  /// `/__admin/requests…` answered from `journal`; `lost` entries (the shared stream's, trimmed or
  /// dropped) make a count inexact as evicted ones do.
  private func requests(_ call: Call, _ rest: [String], in journal: RequestJournal, lost: Int = 0)
    -> ResponsePlan
  {
    switch (call.method, rest.count, rest.first ?? "") {
    case ("GET", 0, _): return listRequests(call, in: journal)
    case ("DELETE", 0, _), ("POST", 1, "reset"):
      journal.clear()
      return AdminAPI.empty
    case ("POST", 1, "count"):
      switch requestPattern(call) {
      case .failure(let f): return f.plan
      case .success(let pattern):
        let result = journal.count(matching: pattern)
        var pairs: [(String, JSONValue)] = [("count", .number(JSONNumber(result.count)))]
        if !result.exact || lost > 0 {
          pairs.append(("exact", .bool(false)))
          pairs.append(("evicted", .number(JSONNumber(journal.evictedCount + lost))))
        }
        return AdminAPI.json(.object(JSONObject(pairs: pairs)))
      }
    case ("POST", 1, "find"):
      switch requestPattern(call) {
      case .failure(let f): return f.plan
      case .success(let pattern):
        return AdminAPI.json(requestsObject(journal.entries(matching: pattern).map(\.requestJSON)))
      }
    case ("POST", 1, "remove"):
      switch requestPattern(call) {
      case .failure(let f): return f.plan
      case .success(let pattern):
        let removed = journal.entries(matching: pattern)
        let ids = Set(removed.map(\.id))
        journal.removeAll { ids.contains($0.id) }
        let stubs = stubLookup()
        return AdminAPI.json(requestsObject(removed.map { $0.json(stub: stubs($0.stubID)) }))
      }
    case ("POST", 1, "remove-by-metadata"): return removeRequestsByMetadata(call, in: journal)
    case ("GET", 1, "unmatched"):
      // Newest first, as WireMock's findUnmatchedRequests reads its journal.
      return AdminAPI.json(requestsObject(journal.entries(unmatchedOnly: true).map(\.requestJSON)))
    case ("GET", 2, "unmatched") where rest[1] == "near-misses":
      return unmatchedNearMisses(in: journal)
    case ("GET", 1, let id):
      guard let entry = journal.entry(id: id) else { return noRequest(id) }
      return AdminAPI.json(entry.json(stub: stubLookup()(entry.stubID)))
    case ("DELETE", 1, let id):
      return journal.remove(id: id) ? AdminAPI.empty : noRequest(id)
    default: return notFound(call)
    }
  }

  func noRequest(_ id: String) -> ResponsePlan {
    AdminAPI.error(
      .notFound, title: "Request not found",
      detail: "no journal entry has id \(id) (it may have been evicted)")
  }

  func requestsObject(_ list: [JSONValue]) -> JSONValue {
    .object(JSONObject(pairs: [("requests", .array(list))]))
  }

  /// Stub JSON by id, for journal entries: a stub of the store, the catch-all proxy stub of `--proxy-all`
  /// or a recording session, or `{"id"}` for a stub that is gone.
  func stubLookup() -> (String?) -> JSONValue? {
    var byID: [String: StubMapping] = [:]
    for stub in visibleStubs { byID[stub.id] = stub }
    let catchAll = forwarder?.catchAllStubs
    return { id in
      guard let id else { return nil }
      return byID[id].map(AdminAPI.stubJSON) ?? catchAll?.stub(id: id)?.json
        ?? .object(JSONObject(pairs: [("id", .string(id))]))
    }
  }

  /// `GET /__admin/requests?limit=&since=&unmatched=&matchingStub=` → newest first,
  /// `{"requests":[…],"meta":{"total":N},"requestJournalDisabled":false}`.
  /// Entries a journal listing returns when `limit` is not given (newest first; `meta.total` tells how
  /// many retained entries pass `unmatched` and `matchingStub`, `limit` and `since` page through them).
  /// Bounds the answer's size.
  static let defaultPageSize = 1000

  func listRequests(_ call: Call, in journal: RequestJournal) -> ResponsePlan {
    let limit: Int?
    switch AdminAPI.integerParameter(call, "limit") {
    case .failure(let f): return f.plan
    case .success(let l): limit = l ?? AdminAPI.defaultPageSize
    }
    var since: Double?
    if let text = call.parameter("since") {
      guard let t = AdminAPI.parseTime(text) else {
        return AdminAPI.error(
          .badRequest, title: "Invalid query parameter",
          detail:
            "since: expected an ISO 8601 time such as 2024-05-01T12:00:00Z or milliseconds since 1970, found \(JSONValue.quoted(text))"
        )
      }
      since = t
    }
    var unmatchedOnly = false
    if let text = call.parameter("unmatched") {
      guard text == "true" || text == "false" else {
        return AdminAPI.error(
          .badRequest, title: "Invalid query parameter",
          detail: "unmatched: expected true or false, found \(JSONValue.quoted(text))")
      }
      unmatchedOnly = text == "true"
    }
    let matchingStub = call.parameter("matchingStub")
    let (entries, total) = journal.page(
      limit: limit, since: since, unmatchedOnly: unmatchedOnly, matchingStub: matchingStub)
    let stubs = stubLookup()
    return AdminAPI.json(
      .object(
        JSONObject(pairs: [
          ("requests", .array(entries.map { $0.json(stub: stubs($0.stubID)) })),
          ("meta", .object(JSONObject(pairs: [("total", .number(JSONNumber(total)))]))),
          ("requestJournalDisabled", .bool(journal.capacity == 0)),
        ])))
  }

  /// The body parsed as a request pattern, or the 400 to send.
  func requestPattern(_ call: Call) -> Result<RequestPattern, AdminFailure> {
    switch AdminAPI.body(call) {
    case .failure(let f): return .failure(f)
    case .success(let json):
      let (pattern, problems) = StubParser.parseRequestPattern(json ?? .null)
      guard let pattern else {
        return .failure(AdminFailure(AdminAPI.invalid(problems, title: "Invalid request pattern")))
      }
      return .success(pattern)
    }
  }

  /// `GET /__admin/requests/unmatched/near-misses`: for each retained unmatched request (newest first),
  /// its nearest stubs as `{"request","stubMapping","matchResult":{"distance"},"mismatches"}`.
  func unmatchedNearMisses(in journal: RequestJournal) -> ResponsePlan {
    let stubs = stubLookup()
    var list: [JSONValue] = []
    for entry in journal.entries(unmatchedOnly: true) {
      let request = entry.requestJSON
      for miss in entry.nearMisses {
        list.append(
          AdminAPI.nearMissJSON(
            request: request, stub: stubs(miss.stubID), pattern: nil, distance: miss.distance,
            mismatches: miss.mismatches))
      }
    }
    return AdminAPI.json(.object(JSONObject(pairs: [("nearMisses", .array(list))])))
  }

  /// `POST /__admin/near-misses/request-pattern` (retained requests nearest to a pattern) and
  /// `POST /__admin/near-misses/request` (stubs nearest to a logged request).
  func nearMisses(_ call: Call, kind: String) -> ResponsePlan {
    switch kind {
    case "request-pattern":
      let patternJSON: JSONValue
      let pattern: RequestPattern
      switch AdminAPI.body(call) {
      case .failure(let f): return f.plan
      case .success(let json):
        patternJSON = json ?? .null
        let (p, problems) = StubParser.parseRequestPattern(patternJSON)
        guard let p else { return AdminAPI.invalid(problems, title: "Invalid request pattern") }
        pattern = p
      }
      var scored: [(Double, JournalEntry, [NearMiss.Mismatch])] = []
      let entries: [JournalEntry]
      switch queriedEntries() {
      case .failure(let f): return f.plan
      case .success(let list): entries = list
      }
      for entry in entries {
        guard var view = try? RequestView(entry.request) else { continue }
        if pattern.stateMatcher != nil { readsState(&view, entry.request) }
        let (result, _) = pattern.evaluate(view, detailed: true)
        scored.append((result.distance, entry, result.failures))
      }
      scored.sort { $0.0 < $1.0 }
      let list = scored.prefix(3).map { s in
        AdminAPI.nearMissJSON(
          request: s.1.requestJSON, stub: nil, pattern: patternJSON, distance: s.0, mismatches: s.2)
      }
      return AdminAPI.json(.object(JSONObject(pairs: [("nearMisses", .array(list))])))
    case "request":
      let o: JSONObject
      switch AdminAPI.objectBody(call, describing: #"a logged request {"method", "url", …}"#) {
      case .failure(let f): return f.plan
      case .success(let v): o = v
      }
      guard let url = o["url"]?.stringValue, url.hasPrefix("/") else {
        return AdminAPI.error(
          .badRequest, title: "Invalid request",
          detail: "$.url: expected a string starting with /, found \(o["url"]?.kindDescription ?? "nothing")",
          pointer: "/url")
      }
      let method = o["method"]?.stringValue ?? "GET"
      var headers = HTTPHeaders()
      if let h = o["headers"]?.objectValue {
        for m in h {
          for v in m.value.arrayValue ?? [m.value] {
            if let s = v.stringValue { headers.add(name: m.key, value: s) }
          }
        }
      }
      let body = o["body"]?.stringValue.map { Array($0.utf8) } ?? []
      let request = HTTPRequest(
        head: HTTPRequestHead(method: HTTPMethod(rawValue: method), target: url, headers: headers), body: body
      )
      let (table, scenarios) = ((serverStore ?? store).table, scenarioBook.states)
      guard var view = try? RequestView(request) else {
        return AdminAPI.error(
          .badRequest, title: "Invalid request",
          detail: "$.url: expected valid percent-encoding, found \(url)",
          pointer: "/url")
      }
      if table.hasStateMatchers { readsState(&view, request) }
      let report = table.nearMisses(
        view, scenarioState: { scenarios[$0] ?? StubMapping.scenarioStarted }, limit: 3)
      let stubs = stubLookup()
      let requestJSON = JSONValue.object(o)
      let list = report.nearMisses.map { m in
        AdminAPI.nearMissJSON(
          request: requestJSON, stub: stubs(m.stubID), pattern: nil, distance: m.distance,
          mismatches: m.mismatches)
      }
      return AdminAPI.json(.object(JSONObject(pairs: [("nearMisses", .array(list))])))
    default:
      return notFound(call)
    }
  }

  /// Lets `view`'s state matchers read the state extension's contexts as they are now (near misses asked
  /// through the admin API are evaluated as serving evaluates them).
  func readsState(_ view: inout RequestView, _ request: HTTPRequest) {
    guard let stateStore else { return }
    view.stateEnvironment = StateMatchEnvironment(
      lookup: stateStore,
      request: TemplateRequest.model(
        request, scheme: view.scheme, port: view.port, clientIP: view.clientIP ?? ""),
      environment: configuration.templating.environment)
  }

  static func nearMissJSON(
    request: JSONValue, stub: JSONValue?, pattern: JSONValue?, distance: Double,
    mismatches: [NearMiss.Mismatch]
  ) -> JSONValue {
    var pairs: [(String, JSONValue)] = [("request", request)]
    if let stub { pairs.append(("stubMapping", stub)) }
    if let pattern { pairs.append(("requestPattern", pattern)) }
    let rounded = (distance * 1000).rounded() / 1000
    pairs.append(
      (
        "matchResult",
        .object(
          JSONObject(pairs: [("distance", .number(JSONNumber(text: String(rounded)) ?? JSONNumber(0)))]))
      ))
    pairs.append(
      (
        "mismatches",
        .array(
          mismatches.map {
            .object(
              JSONObject(pairs: [
                ("part", .string($0.label)), ("expected", .string($0.expected)),
                ("actual", .string($0.actual)),
              ]))
          })
      ))
    return .object(JSONObject(pairs: pairs))
  }

  /// ISO 8601 (`2024-05-01T12:00:00Z`, with fraction or offset) or milliseconds since 1970 → seconds.
  static func parseTime(_ text: String) -> Double? {
    if let ms = Double(text), ms.isFinite { return ms / 1000 }
    return HTTPDate.parseISO8601(text)
  }
}
