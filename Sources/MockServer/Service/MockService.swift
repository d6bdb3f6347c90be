import Foundation
import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// The mock application behind the HTTP server: routes `/__admin` to the ``AdminAPI`` and everything else
/// to the ``MockResponder``. It builds and owns the parts, each the one owner of its state:
/// - ``store``: stubs, envelopes, the stub table and prepared responses;
/// - ``scenarioBook``: scenario states and response-sequence serve counts;
/// - ``journal``: every request received (bounded);
/// - ``settings``: what the admin API may change while serving.
/// The admin API talks to these, never to the responder.
public final class MockService: HTTPResponder, Sendable {
  /// The configuration.
  public let configuration: MockServiceConfiguration
  /// The stubs.
  public let store: StubStore
  /// Scenario states and sequence counts.
  public let scenarioBook: ScenarioBook
  /// Every request received (bounded).
  public let journal: RequestJournal
  /// The per-request logger.
  public let logger: RequestLogger
  /// Settings changed at runtime.
  public let settings: MockSettings
  /// The state extension's contexts (`recordState`, `deleteState`, `state-matcher`, `{{state}}`).
  public let stateStore: StateStore
  /// Open WebSocket channels, the message journal and the global message mappings.
  public let webSockets: WebSocketHub
  /// Decodes, matches, plans and journals stub requests.
  public let responder: MockResponder
  let admin: AdminAPI
  /// The dashboard's live feed and last reload result.
  let dashboard: DashboardState
  /// Set by the host (`MockServerMain`) to stop the server on `POST /__admin/shutdown`.
  let shutdownHook = ShutdownHook()

  /// Creates the service serving `fixtures` (already loaded and validated by the caller).
  public init(configuration: MockServiceConfiguration = MockServiceConfiguration(), fixtures: FixtureSet) {
    self.configuration = configuration
    let logger = RequestLogger(level: configuration.logLevel, json: configuration.logJSON)
    self.logger = logger
    let shared = configuration.stateStore.map { endpoint in
      SharedRuntimeStubs(endpoint: endpoint, log: { logger.line($0) })
    }
    store = StubStore(fixtures: fixtures, fixturesDirectory: configuration.fixturesDirectory, shared: shared)
    scenarioBook = ScenarioBook(
      shared: shared.map { SharedScenarioStates(connection: $0.makeConnection(), keyPrefix: $0.keyPrefix) })
    let dashboard = DashboardState(
      store: store, initialLoad: configuration.fixturesDirectory == nil ? nil : fixtures,
      fixturesDirectory: configuration.fixturesDirectory)
    self.dashboard = dashboard
    let events = dashboard.events
    // With the store, every completed entry is also queued for the shared journal's stream.
    let sharedJournal = shared.flatMap { s in
      configuration.journalCapacity > 0
        ? SharedJournal(
          connection: s.makeConnection(), capacity: configuration.journalCapacity,
          maxBytes: configuration.journalMaxBytes, keyPrefix: s.keyPrefix)
        : nil
    }
    journal = RequestJournal(
      capacity: configuration.journalCapacity, maxBytes: configuration.journalMaxBytes,
      maxBodyBytesPerEntry: configuration.journalMaxBodyBytesPerEntry, onCompleted: { events.publish($0) },
      onFinal: sharedJournal.map { queue -> @Sendable (JournalEntry) -> Void in { queue.append($0) } })
    sharedJournal?.startWriting()
    settings = MockSettings(globalDelayMilliseconds: configuration.globalDelayMilliseconds)
    // With the store, the state extension's contexts live there (SharedStateContexts).
    stateStore =
      shared.map { StateStore(expirationSeconds: configuration.stateExpirationSeconds, sharedIn: $0) }
      ?? StateStore(expirationSeconds: configuration.stateExpirationSeconds)
    webSockets = WebSocketHub(
      maxMessageBytes: configuration.maxWebSocketMessageBytes, acceptsAnyPath: configuration.webSocketAnyPath,
      journalMaxBytes: configuration.journalMaxBytes,
      journalMaxMessageBytes: configuration.journalMaxBodyBytesPerEntry)
    webSockets.replaceFileMappings(fixtures.messageMappings)
    responder = MockResponder(
      configuration: configuration, store: store, scenarioBook: scenarioBook, journal: journal,
      logger: logger,
      settings: settings, stateStore: stateStore, webSockets: webSockets)
    let shutdown = shutdownHook
    let sharedRecordings = shared.map { SharedRecordings($0) }
    admin = AdminAPI(
      configuration: configuration, store: store, scenarioBook: scenarioBook, journal: journal,
      logger: logger,
      settings: settings, createdAt: SocketOps.monotonicNanos(),
      shutdownHandler: { shutdown.handler }, dashboard: dashboard, forwarder: responder.forwarder,
      stateStore: stateStore, webSockets: webSockets, sharedJournal: sharedJournal,
      sharedRecordings: sharedRecordings)
    if let shared, let sharedRecordings {
      // The store's runtime stubs before serving, then every change published after the subscription.
      let store = store
      let sharedSettings = SharedSettings(shared)
      let settings = settings
      let recorder = responder.forwarder.recorder
      recorder.sendExchanges { exchange, recording in
        // While this replica records, at once (a stop sent after the answer finds it); else batched.
        guard recording else { return sharedRecordings.enqueue(exchange) }
        do throws(RedisFailure) {
          try sharedRecordings.send([exchange])
        } catch {
          logger.line(
            "mockserver: proxied exchange \(exchange.request.method.rawValue) \(exchange.request.head.target) not recorded: \(error)"
          )
        }
      }
      do {
        try store.refreshFromSharedStore()
        try sharedSettings.refresh { settings.apply(json: $0, log: shared.logLine) }
        try sharedRecordings.refresh(recorder)
      } catch {
        logger.line(
          "mockserver: runtime stubs, settings and recording not loaded from the shared state store yet: \(error)"
        )
      }
      shared.startListening { message in
        // A message says what changed; after a (re)subscription (nil) everything is read again.
        let settingsChanged = message == SharedSettings.changeMessage
        let recordingChanged = message == SharedRecordings.changeMessage
        do {
          if !settingsChanged && !recordingChanged { try store.refreshFromSharedStore() }
          if message == nil || settingsChanged {
            try sharedSettings.refresh { settings.apply(json: $0, log: shared.logLine) }
          }
          if message == nil || recordingChanged { try sharedRecordings.refresh(recorder) }
          return true
        } catch {
          return false
        }
      }
    }
  }

  /// Called (once, off the event loop) after `POST /__admin/shutdown` was answered; nil when the host
  /// does not support being stopped that way (the endpoint then answers 501).
  public var onShutdownRequested: (@Sendable () -> Void)? {
    get { shutdownHook.handler }
    set { shutdownHook.handler = newValue }
  }

  // MARK: HTTPResponder

  /// Answers before the content when the matching stub opts in with `x-respondBeforeBody`.
  public func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan? {
    isAdmin(head) ? nil : responder.respondBeforeContent(to: head, context: context)
  }

  /// Answers one request: the admin API, `OPTIONS *`, or a stub.
  public func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    if isAdmin(request.head) { return admin.handle(request, context: context) }
    if request.head.target.utf8.count == 1, request.head.target == "*" {
      // OPTIONS * asks about the server itself (RFC 9110 §9.3.7): no stub can be addressed by it.
      return .respond(status: .ok, headers: ["Allow": "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"])
    }
    return responder.respond(to: request, context: context)
  }

  /// Logs a request the parser rejected.
  public func didReject(head: HTTPRequestHead?, error: HTTPParserError, context: RequestContext) {
    logger.rejected(client: context.clientAddress, status: error.status.code, reason: error.description)
  }

  private func isAdmin(_ head: HTTPRequestHead) -> Bool {
    guard configuration.adminEnabled else { return false }
    // Cheap test first: an origin-form target that does not start with "/__" is never admin.
    let plainPath = head.target.utf8.withContiguousStorageIfAvailable { b in
      b.first == UInt8(ascii: "/")
        && !(b.count >= 3 && b[1] == UInt8(ascii: "_") && b[2] == UInt8(ascii: "_"))
    }
    if plainPath == true { return false }
    let path = head.rawPath
    return path.hasPrefix("/__admin")
      && (path.utf8.count == 8 || path.utf8.dropFirst(8).first == UInt8(ascii: "/"))
  }

  /// Clears the journal, resets scenarios and sequences (stubs stay).
  public func resetRequestsAndScenarios() {
    journal.clear()
    try? scenarioBook.resetEverywhere()
  }
}

/// The host's way to stop the server, set after the service is built and read by the admin API.
final class ShutdownHook: Sendable {
  private let stored = Mutex<(@Sendable () -> Void)?>(nil)
  var handler: (@Sendable () -> Void)? {
    get { stored.withLock { $0 } }
    set { stored.withLock { $0 = newValue } }
  }
}
