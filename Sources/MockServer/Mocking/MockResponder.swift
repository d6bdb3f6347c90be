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
  let requestCheck: (@Sendable (HTTPRequest) -> (response: HTTPResponse, note: String)?)?
  /// Response templating settings (`--global-response-templating`, …).
  let templating: TemplatingConfiguration
  private let random: Mutex<SplitMix64>

  init(
    configuration: MockServiceConfiguration, store: StubStore, scenarioBook: ScenarioBook,
    journal: RequestJournal, logger: RequestLogger, settings: MockSettings
  ) {
    self.store = store
    self.scenarioBook = scenarioBook
    self.journal = journal
    self.logger = logger
    self.settings = settings
    builder = ResponsePlanBuilder(maxHoldMilliseconds: configuration.maxHoldMilliseconds)
    requestCheck = configuration.requestCheck
    templating = configuration.templating
    random = Mutex(SplitMix64(seed: configuration.seed ?? UInt64.random(in: .min ... .max)))
  }

  /// The answer of a stub that opts in with `x-respondBeforeBody`, before the request's content is read.
  public func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan? {
    let request = HTTPRequest(head: head)
    let table = store.table
    let scenarios = scenarioBook.states
    guard
      case .matched(let stub, _) = table.match(
        request, scenarioState: { scenarios[$0] ?? StubMapping.scenarioStarted }, nearMissLimit: 0,
        connection: context.connection),
      stub.response.respondBeforeContent
    else { return nil }
    var plan = serve(stub, table: table, request: request, context: context)
    plan.keepAlive = false
    return plan
  }

  /// Matches and answers one stub request.
  public func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    var request = request
    if let coding = request.headers.first("Content-Encoding").map({ $0.trimmingOWS().lowercasedASCII() }),
      let decoder = ContentCoding(rawValue: coding == "x-gzip" ? "gzip" : coding), decoder != .identity
    {
      do {
        request.body = try decoder.decode(request.body)
      } catch {
        return .json(
          status: .badRequest,
          #"{"error":"request content could not be decoded (\#(coding)): \#(error.description)","status":400}"#
        )
      }
    }
    if let requestCheck, let (response, note) = requestCheck(request) {
      var entry = makeEntry(request, context: context, stubID: nil, nearMisses: [])
      entry.responseStatus = response.status.code
      entry.served = true
      journal.record(entry)
      logger.request(
        request, status: response.status.code, fault: nil, stub: note, durationMilliseconds: 0,
        responseHead: response.head, responseBody: response.body)
      return .respond(status: response.status, headers: response.head.headers, body: response.body)
    }
    let table = store.table
    let scenarios = scenarioBook.states
    let scenarioState = { (name: String) in scenarios[name] ?? StubMapping.scenarioStarted }
    var outcome = table.match(request, scenarioState: scenarioState, connection: context.connection)
    if request.method == .head {
      // RFC 9110 §9.3.2: HEAD is GET without the content. Unless a stub names HEAD itself, the request is
      // matched as the GET it stands for (headers and framing included); the connection sends no content.
      var namesHead = false
      if case .matched(let stub, _) = outcome { namesHead = stub.request.method == .head }
      if !namesHead {
        var asGet = request
        asGet.head.method = .get
        if case .matched(let stub, let parameters) = table.match(
          asGet, scenarioState: scenarioState, nearMissLimit: 0, connection: context.connection)
        {
          outcome = .matched(stub, pathParameters: parameters)
        }
      }
    }
    switch outcome {
    case .matched(let stub, let parameters):
      return serve(stub, table: table, request: request, context: context, pathParameters: parameters)
    case .unmatched(let report):
      let entry = makeEntry(request, context: context, stubID: nil, nearMisses: report.nearMisses)
      var entryWithStatus = entry
      entryWithStatus.responseStatus = 404
      entryWithStatus.served = true
      entryWithStatus.durationMilliseconds = 0
      journal.record(consume entryWithStatus)
      if logger.level != .quiet {
        logger.request(
          request, status: 404, fault: nil, stub: nil, durationMilliseconds: 0, nearMisses: report.text())
      }
      return .respond(
        status: .notFound, headers: ["Content-Type": "application/json"], body: report.jsonBody())
    case .invalidRequest(let error):
      var entry = makeEntry(request, context: context, stubID: nil, nearMisses: [])
      entry.responseStatus = 400
      entry.served = true
      journal.record(entry)
      logger.request(request, status: 400, fault: nil, stub: nil, durationMilliseconds: 0)
      return .json(status: .badRequest, #"{"error":\#(JSONValue.quoted(error.description)),"status":400}"#)
    }
  }

  // MARK: Serving a stub

  private func serve(
    _ stub: StubMapping, table: StubTable, request: HTTPRequest, context: RequestContext,
    pathParameters: [String: String] = [:]
  ) -> ResponsePlan {
    let serveCount = stub.responseSequence == nil ? 0 : scenarioBook.serveCount(stubID: stub.id)
    let globalDelay = settings.globalDelayMilliseconds
    var definition = stub.response(serveCount: serveCount)
    // A templated response is rendered per request; every other stub keeps its prepared response.
    let templated = templating.applies(to: definition)
    var prepared = templated ? nil : store.prepared(stubID: stub.id, table: table)
    if prepared == nil, !templated, stub.responseSequence == nil, let made = builder.prepare(definition) {
      prepared = made
      store.storePrepared(made, stubID: stub.id, table: table)
    }
    let (delay, seed, idWords, templateSeed) = random.withLock {
      rng -> (Double, UInt64, (UInt64, UInt64), UInt64) in
      (
        definition.sampleDelayMilliseconds { rng.nextDouble() }, rng.next(), (rng.next(), rng.next()),
        templated ? rng.next() : 0
      )
    }
    if templated {
      let problems: [String]
      (definition, problems) = ResponseTemplating.render(
        definition, request: request, context: context, pathParameters: pathParameters,
        requestID: SplitMix64.uuidString(idWords.0, idWords.1), seed: templateSeed, configuration: templating)
      for p in problems where logger.level != .quiet {
        logger.line("template \(stub.name ?? stub.id): \(p)")
      }
    }
    var fruitful = SplitMix64(seed: seed)
    var plan = builder.plan(
      for: definition, request: request,
      delayMilliseconds: MockResponder.totalDelay(sampled: delay, global: globalDelay),
      prepared: prepared, random: { fruitful.next() })
    // A plan without pauses or holds completes while this request is handled (its bytes are queued before
    // the next request is read), so its journal entry can be final at once.
    let immediate = !plan.steps.contains { step in
      switch step {
      case .pause, .hold: return true
      default: return false
      }
    }
    let status = definition.fault == nil ? definition.status : nil
    var entry = makeEntry(request, context: context, stubID: stub.id, nearMisses: [], idWords: idWords)
    entry.fault = definition.fault?.rawValue
    entry.responseStatus = status
    if immediate {
      entry.served = true
      entry.durationMilliseconds = 0
    }
    let ticket = journal.record(consume entry)
    let started = SocketOps.monotonicNanos()
    // Capture only what completion needs: copying whole stubs and definitions per request is costly.
    let stubID = stub.id
    let countsServes = stub.responseSequence != nil
    let transition = stub.scenarioName.flatMap { name in
      stub.newScenarioState.map {
        ScenarioBook.Transition(name: name, required: stub.requiredScenarioState, next: $0)
      }
    }
    let label = stub.name ?? stub.id
    let fault = definition.fault?.rawValue
    let logged: ResponseDefinition? = logger.level == .verbose ? definition : nil
    let logs = logger.level != .quiet
    if immediate, !countsServes, transition == nil, !logs { return plan }  // nothing left to do afterwards
    plan.onComplete = { [self] served in
      let ms = Double(SocketOps.monotonicNanos() - started) / 1e6
      if served, countsServes || transition != nil {
        scenarioBook.recordServed(stubID: stubID, countsServes: countsServes, transition: transition)
      }
      if !immediate {
        journal.update(ticket) { e in
          e.served = served
          e.durationMilliseconds = ms
          if !served { e.responseStatus = nil }  // the client went away before the response was sent
        }
      }
      if logs {
        logger.request(
          request, status: served ? status : nil, fault: fault, stub: label, durationMilliseconds: ms,
          served: served,
          responseHead: logged.map {
            HTTPResponseHead(status: HTTPStatus(code: $0.status), headers: $0.headers)
          },
          responseBody: logged?.body ?? [])
      }
    }
    return plan
  }

  private func makeEntry(
    _ request: HTTPRequest, context: RequestContext, stubID: String?, nearMisses: [NearMiss],
    idWords: (UInt64, UInt64)? = nil
  ) -> JournalEntry {
    let (a, b) = idWords ?? random.withLock { ($0.next(), $0.next()) }
    return JournalEntry(
      id: SplitMix64.uuidString(a, b), request: request, clientAddress: context.clientAddress,
      isTLS: context.isTLS, clientCertificateSubject: context.clientCertificateSubject,
      loggedAt: context.receivedAt, stubID: stubID, nearMisses: nearMisses)
  }

  /// A sampled delay plus the global delay, in ms, clamped to 0...``MockServiceConfiguration/maxDelayMilliseconds``
  /// (a lognormal sample can be any size, and either may be out of range).
  static func totalDelay(sampled: Double, global: Int) -> Int {
    let limit = MockServiceConfiguration.maxDelayMilliseconds
    let ms = sampled.isFinite ? Int(min(max(sampled, 0), Double(limit)).rounded()) : limit
    return min(limit, ms + min(max(global, 0), limit))
  }
}
