import Foundation
import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// Settings of the mock application behind the HTTP server. Times in milliseconds.
public struct MockServiceConfiguration: Sendable {
  /// Fixtures folder the file stubs came from (for reset-to-files, save and hot reload), or nil.
  public var fixturesDirectory: String?
  /// Journal entries kept (default 10,000); 0 turns the journal off (`--no-journal`).
  public var journalCapacity = 10_000
  /// Seed for random delays and random fault data; nil seeds from the system (`--seed`).
  public var seed: UInt64?
  /// Delay added to every stub response (`settings.fixedDelay`), ≥ 0.
  public var globalDelayMilliseconds = 0
  /// Upper bound for `NO_RESPONSE` / `HEADERS_THEN_STALL` holds.
  public var maxHoldMilliseconds = 300_000
  /// Per-request log level and format.
  public var logLevel = RequestLogger.Level.normal
  /// `--log-format json`.
  public var logJSON = false
  /// Serve the admin API under `/__admin` (`--no-admin` turns it off).
  public var adminEnabled = true
  /// Bearer token the admin API requires (`--admin-token`), or nil.
  public var adminToken: String?
  /// Accept admin requests from any client address, not only loopback (`--admin-host` other than loopback).
  public var adminAllowsRemote = false
  /// Response templating (`--global-response-templating`, `--template-escaping`, `--fixed-time`, …).
  public var templating = TemplatingConfiguration()
  /// Creates the defaults.
  public init() {}
}

/// The mock application: matches requests against the stub table, builds response plans (delays,
/// faults, compression), runs scenarios and response sequences, records the journal, logs, and serves
/// the admin API. An ``HTTPResponder``, so an ``HTTPServer`` can serve it.
///
/// Stubs live in an immutable ``StubTable`` snapshot swapped under a `Mutex` when stubs change; matching
/// reads the snapshot and never holds the lock while building a response.
public final class MockService: HTTPResponder, Sendable {
  struct State {
    var fileStubs: [StubMapping]
    var runtimeStubs: [StubMapping] = []
    var envelopes: EnvelopeSet
    var table: StubTable
    var scenarios: [String: String] = [:]
    var serveCounts: [String: Int] = [:]
    var globalDelayMilliseconds: Int
    /// Serialized responses of stubs answered before, by stub id; cleared when stubs change.
    var prepared: [String: PreparedResponse] = [:]
  }

  /// The configuration.
  public let configuration: MockServiceConfiguration
  /// Every request received (bounded).
  public let journal: RequestJournal
  /// The per-request logger.
  public let logger: RequestLogger
  let state: Mutex<State>
  let builder: ResponsePlanBuilder
  private let random: Mutex<SplitMix64>
  /// Set by the host (`MockServerMain`) to stop the server on `POST /__admin/shutdown`.
  let shutdownHandler = Mutex<(@Sendable () -> Void)?>(nil)
  /// Monotonic time the service was created, for `/__admin/health` uptime.
  let createdAt = SocketOps.monotonicNanos()

  /// Creates the service serving `fixtures` (already loaded and validated by the caller).
  public init(configuration: MockServiceConfiguration = MockServiceConfiguration(), fixtures: FixtureSet) {
    self.configuration = configuration
    journal = RequestJournal(capacity: configuration.journalCapacity)
    logger = RequestLogger(level: configuration.logLevel, json: configuration.logJSON)
    builder = ResponsePlanBuilder(maxHoldMilliseconds: configuration.maxHoldMilliseconds)
    random = Mutex(SplitMix64(seed: configuration.seed ?? UInt64.random(in: .min ... .max)))
    state = Mutex(
      State(
        fileStubs: fixtures.stubs, envelopes: fixtures.envelopes, table: StubTable(fixtures.stubs),
        globalDelayMilliseconds: configuration.globalDelayMilliseconds))
  }

  // MARK: HTTPResponder

  /// Answers before the content when the matching stub opts in with `x-respondBeforeBody`.
  public func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan? {
    if isAdmin(head) { return nil }
    let request = HTTPRequest(head: head)
    let (table, scenarios) = state.withLock { ($0.table, $0.scenarios) }
    guard
      case .matched(let stub, _) = table.match(
        request, scenarioState: { scenarios[$0] ?? StubMapping.scenarioStarted }, nearMissLimit: 0),
      stub.response.respondBeforeContent
    else { return nil }
    var plan = serve(stub, request: request, context: context)
    plan.keepAlive = false
    return plan
  }

  /// Matches and answers one request.
  public func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    if isAdmin(request.head) {
      return AdminAPI(service: self).handle(request, context: context)
    }
    if request.head.target == "*" {
      // OPTIONS * asks about the server itself (RFC 9110 §9.3.7): no stub can be addressed by it.
      return .respond(status: .ok, headers: ["Allow": "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"])
    }
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
    let (table, scenarios) = state.withLock { ($0.table, $0.scenarios) }
    let scenarioState = { (name: String) in scenarios[name] ?? StubMapping.scenarioStarted }
    var outcome = table.match(request, scenarioState: scenarioState)
    if request.method == .head {
      // RFC 9110 §9.3.2: HEAD is GET without the content. Unless a stub names HEAD itself, the request is
      // matched as the GET it stands for (headers and framing included); the connection sends no content.
      var namesHead = false
      if case .matched(let stub, _) = outcome { namesHead = stub.request.method == .head }
      if !namesHead {
        var asGet = request
        asGet.head.method = .get
        if case .matched(let stub, let parameters) = table.match(
          asGet, scenarioState: scenarioState, nearMissLimit: 0)
        {
          outcome = .matched(stub, pathParameters: parameters)
        }
      }
    }
    switch outcome {
    case .matched(let stub, let parameters):
      return serve(stub, request: request, context: context, pathParameters: parameters)
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

  /// Logs a request the parser rejected.
  public func didReject(head: HTTPRequestHead?, error: HTTPParserError, context: RequestContext) {
    logger.rejected(client: context.clientAddress, status: error.status.code, reason: error.description)
  }

  private func isAdmin(_ head: HTTPRequestHead) -> Bool {
    guard configuration.adminEnabled else { return false }
    // Cheap test first: an origin-form target that does not start with "/__" is never admin.
    if head.target.utf8.first == UInt8(ascii: "/"), !head.target.utf8.starts(with: "/__".utf8) {
      return false
    }
    let path = head.rawPath
    return path.hasPrefix("/__admin")
      && (path.utf8.count == 8 || path.utf8.dropFirst(8).first == UInt8(ascii: "/"))
  }

  // MARK: Serving a stub

  private func serve(
    _ stub: StubMapping, request: HTTPRequest, context: RequestContext, pathParameters: [String: String] = [:]
  ) -> ResponsePlan {
    let (serveCount, globalDelay, cached) = state.withLock {
      ($0.serveCounts[stub.id] ?? 0, $0.globalDelayMilliseconds, $0.prepared[stub.id])
    }
    var definition = stub.response(serveCount: serveCount)
    // A templated response is rendered per request; every other stub keeps its prepared response.
    let templated = configuration.templating.applies(to: definition)
    var prepared = templated ? nil : cached
    if prepared == nil, !templated, stub.responseSequence == nil, let made = builder.prepare(definition) {
      prepared = made
      state.withLock { $0.prepared[stub.id] = made }
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
        requestID: SplitMix64.uuidString(idWords.0, idWords.1), seed: templateSeed,
        configuration: configuration.templating)
      for p in problems where logger.level != .quiet {
        logger.line("template \(stub.name ?? stub.id): \(p)")
      }
    }
    var fruitful = SplitMix64(seed: seed)
    var plan = builder.plan(
      for: definition, request: request, delayMilliseconds: Int(delay.rounded()) + globalDelay,
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
      stub.newScenarioState.map { (name: name, required: stub.requiredScenarioState, next: $0) }
    }
    let label = stub.name ?? stub.id
    let fault = definition.fault?.rawValue
    let logged: ResponseDefinition? = logger.level == .verbose ? definition : nil
    let logs = logger.level != .quiet
    if immediate, !countsServes, transition == nil, !logs { return plan }  // nothing left to do afterwards
    plan.onComplete = { [self] served in
      let ms = Double(SocketOps.monotonicNanos() - started) / 1e6
      if served, countsServes || transition != nil {
        state.withLock { s in
          if countsServes { s.serveCounts[stubID, default: 0] += 1 }
          if let transition {
            let current = s.scenarios[transition.name] ?? StubMapping.scenarioStarted
            if transition.required == nil || transition.required == current {
              s.scenarios[transition.name] = transition.next
            }
          }
        }
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

  // MARK: Stub management (admin API, MockServerTesting, hot reload)

  /// Every stub, file stubs first then runtime stubs, in addition order.
  public var stubs: [StubMapping] { state.withLock { $0.fileStubs + $0.runtimeStubs } }

  /// Stubs added at runtime (admin API or test code), in addition order.
  public var runtimeStubs: [StubMapping] { state.withLock { $0.runtimeStubs } }

  /// The envelope templates in effect.
  public var envelopes: EnvelopeSet { state.withLock { $0.envelopes } }

  /// Adds a runtime stub (it outranks earlier stubs of equal priority). Replaces a stub with the same id.
  public func addStub(_ stub: StubMapping) {
    mutateStubs { s in
      s.fileStubs.removeAll { $0.id == stub.id }
      s.runtimeStubs.removeAll { $0.id == stub.id }
      s.runtimeStubs.append(stub)
    }
  }

  /// Replaces the stub with `stub.id` in place (keeping its rank). Returns false when there is none.
  @discardableResult
  public func replaceStub(_ stub: StubMapping) -> Bool {
    var found = false
    mutateStubs { s in
      if let i = s.fileStubs.firstIndex(where: { $0.id == stub.id }) {
        s.fileStubs[i] = stub
        found = true
      } else if let i = s.runtimeStubs.firstIndex(where: { $0.id == stub.id }) {
        s.runtimeStubs[i] = stub
        found = true
      }
    }
    return found
  }

  /// Removes the stub `id`. Returns false when there is none.
  @discardableResult
  public func removeStub(id: String) -> Bool {
    var found = false
    mutateStubs { s in
      let before = s.fileStubs.count + s.runtimeStubs.count
      s.fileStubs.removeAll { $0.id == id }
      s.runtimeStubs.removeAll { $0.id == id }
      found = before != s.fileStubs.count + s.runtimeStubs.count
    }
    return found
  }

  /// Removes every stub (file and runtime).
  public func removeAllStubs() {
    mutateStubs { s in
      s.fileStubs = []
      s.runtimeStubs = []
    }
  }

  /// Swaps in a new set of file stubs (hot reload or reset to files); runtime stubs are kept.
  public func replaceFileStubs(_ fixtures: FixtureSet, keepRuntimeStubs: Bool = true) {
    mutateStubs { s in
      s.fileStubs = fixtures.stubs
      s.envelopes = fixtures.envelopes
      if !keepRuntimeStubs { s.runtimeStubs = [] }
    }
  }

  /// Applies `change` to the stubs and swaps in the rebuilt table (the one way stubs change).
  func mutateStubs(_ change: (inout State) -> Void) {
    state.withLock { s in
      change(&s)
      s.table = StubTable(s.fileStubs + s.runtimeStubs)
      s.prepared = [:]
    }
  }

  // MARK: Scenarios and settings

  /// Every scenario named by a stub, with its current state (`Started` until it moves).
  public var scenarios: [(name: String, state: String, possibleStates: [String])] {
    state.withLock { s in
      var names: [String] = []
      var possible: [String: Set<String>] = [:]
      for stub in s.fileStubs + s.runtimeStubs {
        guard let name = stub.scenarioName else { continue }
        if possible[name] == nil { names.append(name) }
        possible[name, default: [StubMapping.scenarioStarted]].formUnion(
          [stub.requiredScenarioState, stub.newScenarioState].compactMap { $0 })
      }
      return names.map { name in
        (name, s.scenarios[name] ?? StubMapping.scenarioStarted, possible[name, default: []].sorted())
      }
    }
  }

  /// Sets scenario `name` to `newState`. Returns false when no stub names that scenario.
  @discardableResult
  public func setScenario(_ name: String, state newState: String) -> Bool {
    state.withLock { s in
      guard (s.fileStubs + s.runtimeStubs).contains(where: { $0.scenarioName == name }) else { return false }
      s.scenarios[name] = newState
      return true
    }
  }

  /// Puts every scenario back to `Started` and restarts every response sequence.
  public func resetScenarios() {
    state.withLock { s in
      s.scenarios = [:]
      s.serveCounts = [:]
    }
  }

  /// The delay added to every stub response, in ms.
  public var globalDelayMilliseconds: Int {
    get { state.withLock { $0.globalDelayMilliseconds } }
    set { state.withLock { $0.globalDelayMilliseconds = max(0, newValue) } }
  }

  /// Clears the journal, resets scenarios and sequences (stubs stay).
  public func resetRequestsAndScenarios() {
    journal.clear()
    resetScenarios()
  }
}

/// A small, fast, seedable generator (SplitMix64), for reproducible delays and fault data.
struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  /// Uniform in [0, 1).
  mutating func nextDouble() -> Double { Double(next() >> 11) / Double(1 << 53) }

  /// A version-4 UUID string (lower-case, 36 characters) from two random words.
  static func uuidString(_ a: UInt64, _ b: UInt64) -> String {
    let a = (a & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
    let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
    var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)  // 40 bytes of room for 36
    return withUnsafeMutableBytes(of: &bytes) { raw -> String in
      var out = 0
      // 16 nibbles of `word`, most significant first; a dash before nibble k when bit k of `dashes` is set.
      func put(_ word: UInt64, dashes: Int) {
        for k in 0..<16 {
          if dashes & (1 << k) != 0 {
            raw[out] = 45
            out += 1
          }
          let nibble = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * k)) & 0xF
          raw[out] = nibble < 10 ? 48 + nibble : 87 + nibble
          out += 1
        }
      }
      put(a, dashes: 0x1100)
      put(b, dashes: 0x0011)
      return String(decoding: UnsafeRawBufferPointer(rebasing: raw[0..<out]), as: UTF8.self)
    }
  }

}
