import Foundation
import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// Answers requests from stubs: decodes the content, matches against the store's current table, plans the
/// response (delays, faults, compression, conditional requests) and tickets the journal. It owns only its
/// random generator; stubs, scenario states, settings and the journal belong to their own types.
public final class MockResponder: Sendable {
  let store: StubStore
  let scenarioBook: ScenarioBook
  let journal: RequestJournal
  let logger: RequestLogger
  let settings: MockSettings
  let builder: ResponsePlanBuilder
  /// True while the admin API is open: documents the mock serves get ``DocumentSandbox/policy``.
  let sandboxesDocuments: Bool
  let requestCheck: (@Sendable (HTTPRequest) -> (response: HTTPResponse, note: String)?)?
  let unmatchedAnswer: (@Sendable (HTTPRequest) -> (response: HTTPResponse, note: String)?)?
  /// Response templating settings (`--global-response-templating`, …).
  let templating: TemplatingConfiguration
  /// Upstream exchanges: proxy stubs, `--proxy-all`, recording.
  package let forwarder: ProxyForwarder
  /// `--enable-stub-cors`: every stub answers CORS requests (otherwise only stubs with `"x-cors": true`).
  let stubCORS: Bool
  /// `--disable-gzip`: responses are never compressed unless a stub forces it.
  let gzipDisabled: Bool
  /// The fixtures folder's `__files/`, served to unmatched `GET`s; nil without a fixtures folder.
  let filesRoot: String?
  /// Sends the webhooks of served stubs (`serveEventListeners`, `postServeActions`).
  let webhooks: WebhookDispatcher
  /// The state extension's contexts, and the runner of `recordState`/`deleteState` listeners.
  let stateStore: StateStore
  let stateListeners: StateListenerRunner
  /// Open WebSocket channels, the message journal and the global message mappings.
  let webSockets: WebSocketHub
  /// Draws of every request (`--seed`); internal for the `x-sse` answer (MockResponder+SSE).
  let random: Mutex<SplitMix64>
  /// Ids of the stubs whose unknown helpers were logged (once per stub; global templating).
  private let unknownHelpersLogged = Mutex<Set<String>>([])
  /// For a session's responder (``responder(for:)``): the session's own stubs, matched before `store`'s;
  /// nil for the responder of requests without a session.
  let sessionStore: StubStore?

  init(
    configuration: MockServiceConfiguration, store: StubStore, scenarioBook: ScenarioBook,
    journal: RequestJournal, logger: RequestLogger, settings: MockSettings,
    stateStore: StateStore = StateStore(), webSockets: WebSocketHub = WebSocketHub()
  ) {
    self.store = store
    self.webSockets = webSockets
    self.scenarioBook = scenarioBook
    self.journal = journal
    self.logger = logger
    self.settings = settings
    sandboxesDocuments = configuration.adminEnabled && configuration.adminToken == nil
    builder = ResponsePlanBuilder(
      maxHoldMilliseconds: configuration.maxHoldMilliseconds, sandboxesDocuments: sandboxesDocuments)
    requestCheck = configuration.requestCheck
    unmatchedAnswer = configuration.unmatchedAnswer
    var templating = configuration.templating
    templating.stateLookup = stateStore
    self.templating = templating
    self.stateStore = stateStore
    stateListeners = StateListenerRunner(store: stateStore, templating: templating)
    forwarder = ProxyForwarder(configuration: configuration.proxy)
    stubCORS = configuration.stubCORS
    gzipDisabled = configuration.gzipDisabled
    filesRoot = configuration.fixturesDirectory.map { FileTree.standardized($0) + "/__files" }
    webhooks = WebhookDispatcher(logger: logger, templating: templating)
    random = Mutex(SplitMix64(seed: configuration.seed ?? UInt64.random(in: .min ... .max)))
    sessionStore = nil
  }

  /// The responder of `session`'s requests: `parent`'s parts, with the session's scenario states and
  /// its own stubs matched first; its draws seeded from `parent`'s.
  private init(scopedFrom parent: MockResponder, session: SessionBook.Session) {
    store = parent.store
    scenarioBook = session.scenarioBook
    sessionStore = session.store
    journal = parent.journal
    logger = parent.logger
    settings = parent.settings
    builder = parent.builder
    sandboxesDocuments = parent.sandboxesDocuments
    requestCheck = parent.requestCheck
    unmatchedAnswer = parent.unmatchedAnswer
    templating = parent.templating
    forwarder = parent.forwarder
    stubCORS = parent.stubCORS
    gzipDisabled = parent.gzipDisabled
    filesRoot = parent.filesRoot
    webhooks = parent.webhooks
    stateStore = parent.stateStore
    stateListeners = parent.stateListeners
    webSockets = parent.webSockets
    random = Mutex(SplitMix64(seed: parent.random.withLock { $0.next() }))
  }

  /// The responder of `session`'s requests (made once per session and kept with it).
  package func responder(for session: SessionBook.Session) -> MockResponder {
    session.responder.withLock { kept in
      if let kept { return kept }
      let made = MockResponder(scopedFrom: self, session: session)
      kept = made
      return made
    }
  }

  /// The winner for `request` and the table it is in: with a session, the session's own stubs first,
  /// then `store`'s (the near misses of an unmatched request are the nearest of both).
  func matchScoped(
    _ request: HTTPRequest, scenarioState: (String) -> String, connection: RequestView.Connection?,
    stateAccess: StateAccess? = nil
  ) -> (StubTable, StubMatch, Int?) {
    let table = store.table
    guard let own = sessionStore?.table, !own.stubs.isEmpty else {
      let (outcome, index) = match(
        request, table: table, scenarioState: scenarioState, connection: connection, stateAccess: stateAccess)
      return (table, outcome, index)
    }
    let (first, firstIndex) = match(
      request, table: own, scenarioState: scenarioState, connection: connection, stateAccess: stateAccess)
    guard case .unmatched(let ownReport) = first else { return (own, first, firstIndex) }
    let (outcome, index) = match(
      request, table: table, scenarioState: scenarioState, connection: connection, stateAccess: stateAccess)
    guard case .unmatched(var report) = outcome else { return (table, outcome, index) }
    let limit = max(report.nearMisses.count, ownReport.nearMisses.count)
    report.nearMisses = Array(
      (ownReport.nearMisses + report.nearMisses).sorted { $0.distance < $1.distance }.prefix(limit))
    return (table, .unmatched(report), index)
  }

  /// The answer of a stub that opts in with `x-respondBeforeBody`, before the request's content is read.
  public func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan? {
    let request = HTTPRequest(head: head)
    let table = store.table
    // With the contexts in the shared store, state is read off the event loop: after the content.
    if stateStore.shared != nil, table.hasStateMatchers { return nil }
    let scenarios = scenarioBook.states
    let (outcome, index) = table.matchIndexed(
      request, scenarioState: { scenarios[$0] ?? StubMapping.scenarioStarted }, nearMissLimit: 0,
      connection: context.connection, deferringPathParameters: true, state: stateSource(table))
    guard case .matched(let stub, _) = outcome, let index, stub.response.respondBeforeContent else {
      return nil
    }
    // With a shared state store, a scenario or sequence stub is committed there: the usual way.
    if scenarioBook.shared != nil, stub.scenarioName != nil || stub.responseSequence != nil { return nil }
    if stateStore.shared != nil, MockResponder.usesStateContexts(outcome) { return nil }
    var plan = serve(stub, index: index, table: table, request: request, context: context)
    plan.keepAlive = false
    return plan
  }

  /// Content from this size on (1 MiB, as received or once decoded) is matched, validated and answered
  /// off the event loop (``ResponsePlan/Step/deferred(_:)``): parsing a 58 MB JSON body for `equalToJson`
  /// kept every other connection of the loop waiting for seconds.
  static let offLoopContentBytes = 1 << 20

  /// Matches and answers one stub request; one with content of ``offLoopContentBytes`` or more is answered
  /// on a background thread, the connection taking the plan back on its loop.
  public func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    if request.body.count >= MockResponder.offLoopContentBytes {
      return ResponsePlan(steps: [.deferred { [self] in respondHere(to: request, context: context) }])
    }
    return respondHere(to: request, context: context)
  }

  /// ``respond(to:context:)`` on this thread: decodes the content and answers (off the loop when the
  /// decoded content is large).
  private func respondHere(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    if let coding = request.headers.first("Content-Encoding").map({ $0.trimmingOWS().lowercasedASCII() }),
      let decoder = ContentCoding(rawValue: coding == "x-gzip" ? "gzip" : coding), decoder != .identity
    {
      var decoded = request
      if !request.body.isEmpty {
        do {
          decoded.body = try decoder.decode(request.body)
        } catch {
          // Matched on the bytes as received, as WireMock does; body matchers of the decoded text do not
          // match it, and the near miss says why (RequestPattern.evaluate).
          decoded.contentCodingProblem = "Content-Encoding \(coding): \(error.description)"
        }
      }
      if decoded.body.count >= MockResponder.offLoopContentBytes,
        request.body.count < MockResponder.offLoopContentBytes
      {
        return ResponsePlan(steps: [
          .deferred { [self, decoded] in respondDecoded(to: decoded, context: context) }
        ])
      }
      return respondDecoded(to: decoded, context: context)
    }
    // Without a content coding the request is answered as it is (not copied into a `var` first: a copy of
    // a request retains and releases each of its parts).
    return respondDecoded(to: request, context: context)
  }

  /// Matches and answers a request whose content coding was removed; `sharedMatch` is the match made
  /// against the shared store's scenario states (MockResponder+SharedScenarios), when there is one.
  func respondDecoded(
    to request: HTTPRequest, context: RequestContext, sharedMatch: SharedMatch? = nil
  ) -> ResponsePlan {
    if let requestCheck, let (response, note) = requestCheck(request) {
      return answerWithoutStub(request, context: context, response: response, note: note)
    }
    if let target = forwarder.recorder.recordingTarget {
      // A recording session with a target proxies every request there (WireMock's recorder), journaled
      // as matched by the catch-all proxy stub WireMock adds for the session.
      return serveProxy(
        ProxyDefinition(baseURL: target), stub: nil, request: request, context: context,
        journalStubID: forwarder.catchAllStubs.stub(for: target).id)
    }
    let table: StubTable
    let scenarios: [String: String]
    let outcome: StubMatch
    let stubIndex: Int?
    if let sharedMatch {
      (table, scenarios, outcome, stubIndex) = (
        sharedMatch.table, sharedMatch.states, sharedMatch.outcome, sharedMatch.index
      )
    } else if let shared = scenarioBook.shared {
      return respondSharingScenarios(to: request, context: context, shared: shared)
    } else if sessionStore == nil {
      table = store.table
      scenarios = scenarioBook.states
      // Closures written at each call, not kept in a local: a closure value held in a `let` had its
      // context allocated on the heap for every request.
      (outcome, stubIndex) = match(
        request, table: table, scenarioState: { scenarios[$0] ?? StubMapping.scenarioStarted },
        connection: context.connection)
    } else {
      scenarios = scenarioBook.states
      (table, outcome, stubIndex) = matchScoped(
        request, scenarioState: { scenarios[$0] ?? StubMapping.scenarioStarted },
        connection: context.connection)
    }
    // WireMock 4's HTTP-triggered message stub mappings (one atomic load when there are none).
    if webSockets.hasHTTPTriggers, !MockResponder.asksForWebSocket(request) {
      var stubID: String?
      if case .matched(let stub, _) = outcome { stubID = stub.id }
      webSockets.httpRequestArrived(request, context: context, stubID: stubID, templating: templating)
    }
    switch outcome {
    case .matched(let stub, let parameters):
      return serve(
        stub, index: stubIndex ?? -1, table: table, request: request, context: context,
        pathParameters: parameters, sharedServeIndex: sharedMatch?.serveIndex,
        stateAccess: sharedMatch?.stateAccess)
    case .unmatched(let report):
      // A stub with CORS on answers its preflights ahead of an OpenAPI document's answer.
      if let preflight = corsPreflight(
        request, table: table, scenarioState: { scenarios[$0] ?? StubMapping.scenarioStarted })
      {
        return preflight
      }
      if let unmatchedAnswer, let (response, note) = unmatchedAnswer(request) {
        return answerWithoutStub(request, context: context, response: response, note: note)
      }
      // An upgrade a global message mapping's channel pattern names (WireMock 4's message-mappings/).
      if MockResponder.asksForWebSocket(request),
        webSockets.acceptsUpgrade(request, connection: context.connection)
      {
        return serveWebSocket(
          WebSocketDefinition(), stub: nil, request: request, context: context, pathParameters: [:])
      }
      if let base = forwarder.configuration.proxyAllBaseURL {
        // Journaled as matched by the catch-all proxy stub WireMock adds for --proxy-all.
        return serveProxy(
          ProxyDefinition(baseURL: base), stub: nil, request: request, context: context,
          journalStubID: forwarder.catchAllStubs.stub(for: base).id)
      }
      if let plan = serveBodyFile(request, context: context, nearMisses: report.nearMisses) { return plan }
      record(request, context: context, stubID: nil, status: 404, served: true, nearMisses: report.nearMisses)
      log(request, status: 404, label: nil, report: report)
      return .respond(
        status: .notFound, headers: ["Content-Type": "application/json"], body: report.jsonBody())
    case .invalidRequest(let error):
      record(request, context: context, stubID: nil, status: 400, served: true)
      log(request, status: 400, label: nil)
      return .json(status: .badRequest, #"{"error":\#(JSONValue.quoted(error.description)),"status":400}"#)
    }
  }

  /// Sends an answer that no stub made (`requestCheck`, `unmatchedAnswer`), journaled and logged with `note`.
  private func answerWithoutStub(
    _ request: HTTPRequest, context: RequestContext, response: HTTPResponse, note: String
  ) -> ResponsePlan {
    record(request, context: context, stubID: nil, status: response.status.code, served: true)
    log(request, status: response.status.code, label: note, logged: (response.head, response.body))
    let plan = ResponsePlan.respond(
      status: response.status, headers: response.head.headers, body: response.body)
    return sandboxesDocuments ? plan.sandboxingDocuments() : plan
  }

  /// The table's answer for `request`, and the winner's index in it. RFC 9110 §9.3.2: HEAD is GET without
  /// the content. Unless a stub names HEAD itself, a HEAD request is matched as the GET it stands for
  /// (headers and framing included); the connection sends no content.
  func match(
    _ request: HTTPRequest, table: StubTable, scenarioState: (String) -> String,
    connection: RequestView.Connection?, stateAccess: StateAccess? = nil
  ) -> (StubMatch, Int?) {
    let state = stateSource(table, stateAccess)
    let first = table.matchIndexed(
      request, scenarioState: scenarioState, connection: connection, deferringPathParameters: true,
      state: state)
    guard request.method == .head else { return first }
    if case .matched(let stub, _) = first.0, stub.request.method == .head { return first }
    var asGet = request
    asGet.head.method = .get
    let asGetMatch = table.matchIndexed(
      asGet, scenarioState: scenarioState, nearMissLimit: 0, connection: connection,
      deferringPathParameters: true, state: state)
    // A Pact interaction keeps the contract's method: its GET does not answer HEAD.
    if case .matched(let stub, _) = asGetMatch.0, !stub.request.keepsContractMethod { return asGetMatch }
    return first
  }

  /// What `state-matcher`s read, only for a table that has them (the others match as before).
  /// `access` is the request's use of the shared store's contexts (nil: this process's store).
  private func stateSource(_ table: StubTable, _ access: StateAccess? = nil) -> StateMatchSource? {
    guard table.hasStateMatchers else { return nil }
    return StateMatchSource(lookup: access ?? stateStore, environment: templating.environment)
  }

  // MARK: Serving a stub

  /// Answers with `stub`, the one at `index` in `table.stubs` (the key of its prepared response).
  /// `matchedParameters` are the match's path parameters; empty ones (a match that deferred them) are
  /// made from the request's path where a template reads them. `sharedServeIndex` is the response-sequence
  /// position the shared state store gave this serve (nil: this process's count); `stateAccess` the
  /// request's use of the shared store's contexts (off the event loop; nil: this process's store).
  private func serve(
    _ stub: StubMapping, index: Int, table: StubTable, request: HTTPRequest, context: RequestContext,
    pathParameters matchedParameters: [String: String] = [:], sharedServeIndex: Int? = nil,
    stateAccess: StateAccess? = nil
  ) -> ResponsePlan {
    // The cache of the table the stub is in: the server's, or (a session's own stub) the session's.
    let stored =
      store.prepared(stubIndex: index, table: table) ?? sessionStore?.prepared(stubIndex: index, table: table)
    // A plain stub's answer is the plan stored with its prepared response, unless this request or the
    // settings ask for more: compression, CORS headers, a global delay.
    if let stored, let plan = stored.plainPlan,
      stored.ignoresAcceptEncoding || !request.headers.contains("Accept-Encoding"), !settings.addsDelay,
      !corsEnabled(for: stub) || corsHeaders(for: stub, request: request) == nil
    {
      let draws = RequestDraws.draw(from: random, templated: false)
      record(
        request, context: context, stubID: stub.id, status: stored.response.status.code, served: true,
        addedDelayMilliseconds: 0, idWords: draws.idWords)
      return logger.level == .quiet
        ? plan : logging(plan, of: stub, status: stored.response.status.code, request)
    }
    var pathParameters: [String: String] {
      matchedParameters.isEmpty ? StubTable.pathParameters(of: stub, for: request.head) : matchedParameters
    }
    if stub.response.status == 101, let webSocket = stub.response.webSocket {
      return serveWebSocket(
        webSocket, stub: stub, request: request, context: context, pathParameters: pathParameters)
    }
    let serveCount =
      stub.responseSequence == nil ? 0 : sharedServeIndex ?? scenarioBook.serveCount(stubID: stub.id)
    let globalDelay = settings.globalDelayMilliseconds
    var definition = stub.response(serveCount: serveCount)
    if var proxy = definition.proxy {
      let globalDistribution = settings.delayDistribution
      let templatesURL = definition.template?.proxyBaseUrl != nil && templating.applies(to: definition)
      let draws = RequestDraws.draw(from: random, templated: templatesURL) { uniform in
        definition.sampleDelayMilliseconds(
          globalFixed: globalDelay, globalDistribution: globalDistribution, random: uniform)
      }
      // A templated `proxyBaseUrl` chooses the upstream for this request.
      if templatesURL {
        if let (url, problems, exceeded) = ResponseTemplating.proxyBaseURL(
          definition, request: request, context: context, pathParameters: pathParameters,
          requestID: { draws.requestID }, seed: draws.templateSeed, configuration: templating)
        {
          proxy.baseURL = url
          for p in problems where logger.level != .quiet || exceeded != nil {
            logger.line("template \(stub.name ?? stub.id): \(p)")
          }
          if let exceeded {
            // A cut URL is never proxied to: the budget's 500, journaled and logged as any answer.
            var answer = ResponseTemplating.budgetAnswer(
              definition, reason: exceeded, stub: MockResponder.label(stub))
            var named = false
            MockResponder.name(stub, in: &answer, once: &named)
            record(
              request, context: context, stubID: stub.id, status: 500, served: true, idWords: draws.idWords)
            log(request, status: 500, label: MockResponder.label(stub))
            return .respond(status: HTTPStatus(code: 500), headers: answer.headers, body: answer.body)
          }
        }
      }
      return serveProxy(
        proxy, stub: stub, request: request, context: context,
        delayMilliseconds: MockResponder.delayMilliseconds(draws.delayMilliseconds),
        sandbox: definition.sandbox,
        idWords: draws.idWords)
    }
    if let sse = definition.serverSentEvents {
      let plan = serveEventStream(
        sse, stub: stub, definition: definition, request: request, context: context,
        pathParameters: { pathParameters }, stateAccess: stateAccess)
      if let failure = stateAccess?.failure {
        return sharedStateUnavailable(request, context: context, problem: failure.description)
      }
      return plan
    }
    // WireMock names the stub that answered in every stubbed response (`StubResponseRenderer`). The fields
    // are appended last (a template's header indexes still fall on the stub's own fields) and only where
    // `definition.headers` is used: the prepared head has them from when it was made, so a request it
    // answers changes no header list.
    var named = false
    // A templated response is rendered per request; every other stub keeps its prepared response, and a
    // stub whose only templated field is the body keeps its head prepared (only the content is rendered).
    let templated = templating.applies(to: definition)
    if templated, let unknown = definition.template?.unknownHelpers, !unknown.isEmpty,
      unknownHelpersLogged.withLock({ $0.insert(stub.id).inserted })
    {
      // WireMock 3 answers 500; the text is served as written, and the log says so once per stub.
      logger.line(
        "template \(MockResponder.label(stub)): served as written: " + unknown.joined(separator: "; "))
    }
    let renders = templated && definition.template?.isEmpty == false
    let bodyOnly = renders && definition.template?.templatesBodyOnly == true
    let cors = corsHeaders(for: stub, request: request)
    if gzipDisabled, definition.compression == .auto { definition.compression = .never }
    if cors != nil || (renders && !bodyOnly) { MockResponder.name(stub, in: &definition, once: &named) }
    if let cors {
      // The answer depends on the request's Origin: not from (or into) the prepared-response cache.
      for (name, value) in cors { definition.headers.replaceOrAdd(name: name, value: value) }
      if !definition.headers.contains("Access-Control-Expose-Headers") {
        let names = definition.headers.map(\.name).filter { !$0.lowercased().hasPrefix("access-control-") }
        if !names.isEmpty {
          definition.headers.add(name: "Access-Control-Expose-Headers", value: names.joined(separator: ", "))
        }
      }
    }
    var prepared = (renders && !bodyOnly) || cors != nil ? nil : stored?.response
    // An uncached answer builds its head (and the prepared one) from the definition.
    if prepared == nil { MockResponder.name(stub, in: &definition, once: &named) }
    if prepared == nil, !renders || bodyOnly, cors == nil, stub.responseSequence == nil {
      // For a templated body, the head is prepared with the template's text standing in for the content.
      var shape = definition
      if bodyOnly, let body = definition.template?.body { shape.body = Array(body.source.utf8) }
      if let made = builder.prepare(shape) {
        prepared = made
        let plain =
          !templated && definition.fixedDelayMilliseconds == nil && definition.delayDistribution == nil
          && stub.newScenarioState == nil && Webhook.list(of: stub).isEmpty
          && stub.extensions.stateListeners.isEmpty
        let preparedStub = StubStore.PreparedStub(
          response: made,
          plainPlan: plain ? ResponsePlan(steps: [.prepared(made)], keepAlive: !made.closes) : nil,
          ignoresAcceptEncoding: definition.compression == .never)
        // Kept by the store whose table it is (the other drops it).
        store.storePrepared(preparedStub, stubIndex: index, table: table)
        sessionStore?.storePrepared(preparedStub, stubIndex: index, table: table)
      }
    }
    let globalDistribution = settings.delayDistribution
    let draws = RequestDraws.draw(from: random, templated: templated) { uniform in
      definition.sampleDelayMilliseconds(
        globalFixed: globalDelay, globalDistribution: globalDistribution, random: uniform)
    }
    if renders {
      let problems: [String]
      let failed: Bool
      (definition, problems, failed) = ResponseTemplating.render(
        definition, request: request, context: context, pathParameters: pathParameters,
        requestID: { draws.requestID }, seed: draws.templateSeed,
        configuration: stateAccess.map { access in
          var reading = templating
          reading.stateLookup = access
          return reading
        } ?? templating, stubLabel: MockResponder.label(stub))
      for p in problems where logger.level != .quiet || failed {
        logger.line("template \(stub.name ?? stub.id): \(p)")
      }
      // The prepared head with this request's content (its `Vary` is that of non-empty content, which an
      // empty rendering would not carry: that one takes the unprepared way). A rendering that passed its
      // budget is answered with its own 500, never the stub's head.
      prepared =
        failed
        ? nil
        : prepared.flatMap { head in
          definition.body.isEmpty && definition.compression != .never ? nil : head.answering(definition.body)
        }
      if failed { named = false }
    }
    // The prepared answer goes out as it is unless content negotiation (or an empty rendering, above) needs
    // a head built from the definition.
    if prepared != nil, !ResponsePlanBuilder.servesAsPrepared(definition, to: request) {
      prepared = nil
    }
    if prepared == nil { MockResponder.name(stub, in: &definition, once: &named) }
    var fruitful = SplitMix64(seed: draws.contentSeed)
    let addedDelay = MockResponder.delayMilliseconds(draws.delayMilliseconds)
    var plan = builder.plan(
      for: definition, request: request,
      delayMilliseconds: addedDelay,
      prepared: prepared, random: { fruitful.next() })
    // A plan without pauses or holds completes while this request is handled (its bytes are queued before
    // the next request is read), so its journal entry can be final at once.
    let immediate = !plan.steps.contains { step in
      switch step {
      case .pause, .hold: return true
      default: return false
      }
    }
    // The status actually sent: a 304 from `x-conditional` or a 406 is recorded as such.
    let status = definition.fault == nil ? (plan.sentStatus ?? definition.status) : nil
    var stateProblems: [String] = []
    // The state extension's listeners run after rendering and before sending (WireMock's
    // `beforeResponseSent`), so the next request sees their writes.
    let listeners = stub.extensions.stateListeners
    if !listeners.isEmpty {
      let problems = stateListeners.run(
        listeners, request: request, context: context,
        response: ServedResponse(
          status: status ?? definition.status, headers: definition.headers, body: definition.body),
        seed: draws.contentSeed, state: stateAccess ?? StateAccess(stateStore))
      for p in problems { logger.line("state of \(MockResponder.label(stub)): \(p)") }
      stateProblems = problems
    }
    if let failure = stateAccess?.failure {
      // A read or write of a context did not reach the shared store: no answer from a state not read.
      return sharedStateUnavailable(request, context: context, problem: failure.description)
    }
    let fault = definition.fault?.rawValue
    let ticket = record(
      request, context: context, stubID: stub.id, status: status, served: immediate ? true : nil,
      addedDelayMilliseconds: addedDelay, idWords: draws.idWords, fault: fault, stateProblems: stateProblems)
    let started = SocketOps.monotonicNanos()
    // Capture only what completion needs: copying whole stubs and definitions per request is costly.
    let stubID = stub.id
    let countsServes = stub.responseSequence != nil
    let transition = stub.scenarioName.flatMap { name in
      stub.newScenarioState.map {
        ScenarioBook.Transition(name: name, required: stub.requiredScenarioState, next: $0)
      }
    }
    let hooks = Webhook.list(of: stub)
    if !hooks.isEmpty || logger.level == .verbose { MockResponder.name(stub, in: &definition, once: &named) }
    let servedResponse: ServedResponse? =
      hooks.isEmpty
      ? nil
      : ServedResponse(
        status: status ?? definition.status, headers: definition.headers, body: definition.body)
    let logs = logger.level != .quiet
    // Nothing left to do afterwards:
    if immediate, !countsServes, transition == nil, !logs, hooks.isEmpty { return plan }
    let label = MockResponder.label(stub)
    let webhooks = webhooks
    let logged: ResponseDefinition? = logger.level == .verbose ? definition : nil
    plan.onComplete = { [self] served in
      let ms = Double(SocketOps.monotonicNanos() - started) / 1e6
      if served, countsServes || transition != nil {
        scenarioBook.recordServed(stubID: stubID, countsServes: countsServes, transition: transition)
      }
      if served, let servedResponse {
        let journal = journal
        webhooks.send(
          hooks, stubLabel: label, request: request, context: context, response: servedResponse
        ) { outcome in
          journal.update(ticket) { $0.webhooks.append(outcome) }
        }
      }
      if !immediate { recordCompletion(ticket, served: served, durationMilliseconds: ms) }
      if logs {
        log(
          request, status: served ? status : nil, fault: fault, label: label, durationMilliseconds: ms,
          served: served,
          logged: logged.map {
            (HTTPResponseHead(status: HTTPStatus(code: $0.status), headers: $0.headers), $0.body)
          })
      }
    }
    return plan
  }

  /// A plain stub's stored plan with this request's log line written when it completes: the fast path at
  /// every log level (a log line costs a log line; the answer is still the stored one).
  private func logging(_ plan: ResponsePlan, of stub: StubMapping, status: Int, _ request: HTTPRequest)
    -> ResponsePlan
  {
    var plan = plan
    let started = SocketOps.monotonicNanos()
    let label = MockResponder.label(stub)
    var definition: ResponseDefinition?
    if logger.level == .verbose {
      var named = false
      definition = stub.response(serveCount: 0)
      MockResponder.name(stub, in: &definition!, once: &named)
    }
    let logged = definition
    plan.onComplete = { [self] served in
      log(
        request, status: served ? status : nil, label: label,
        durationMilliseconds: Double(SocketOps.monotonicNanos() - started) / 1e6, served: served,
        logged: logged.map {
          (HTTPResponseHead(status: HTTPStatus(code: status), headers: $0.headers), $0.body)
        })
    }
    return plan
  }

  /// How logs name a stub: its name, else its file and JSON path (`mappings/users.json $.mappings[2]`),
  /// else (added at runtime without a name) its id.
  static func label(_ stub: StubMapping) -> String {
    // An empty name or file (a runtime stub posted with "name": "") is no name: the id, not "".
    if let name = stub.name, !name.isEmpty { return name }
    if let file = stub.file, !file.isEmpty {
      return stub.location == "$" ? file : "\(file) \(stub.location)"
    }
    return stub.id
  }

  /// Appends `Matched-Stub-Id` (and `Matched-Stub-Name` for a named stub) to `definition`'s headers, unless
  /// `done` says they were; sets `done`.
  static func name(_ stub: StubMapping, in definition: inout ResponseDefinition, once done: inout Bool) {
    guard !done else { return }
    done = true
    definition.headers.add(name: "Matched-Stub-Id", value: ResponseTemplating.fieldValue(stub.id))
    if let name = stub.name {
      definition.headers.add(name: "Matched-Stub-Name", value: ResponseTemplating.fieldValue(name))
    }
  }

  /// A sampled delay (``ResponseDefinition/sampleDelayMilliseconds(globalFixed:globalDistribution:random:)``)
  /// as whole ms, clamped to 0...``MockServiceConfiguration/maxDelayMilliseconds`` (a lognormal sample can
  /// be any size).
  static func delayMilliseconds(_ sampled: Double) -> Int {
    let limit = MockServiceConfiguration.maxDelayMilliseconds
    return sampled.isFinite ? Int(min(max(sampled, 0), Double(limit)).rounded()) : limit
  }
}
