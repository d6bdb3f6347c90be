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
  /// The sessions: each one's own stubs and scenario states (docs/scaling.md#sessions).
  package let sessions: SessionBook
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
      shared: shared.map { s in
        SharedScenarioStates(
          pool: RedisConnectionPool(
            (0..<SharedScenarioStates.commitConnections).map { _ in s.makeConnection() }),
          keyPrefix: s.keyPrefix)
      })
    sessions = SessionBook(
      headerName: configuration.sessionHeader, idleSeconds: configuration.sessionIdleSeconds, parent: store,
      sharedStates: scenarioBook.shared)
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
      sessions: sessions, sharedRecordings: sharedRecordings)
    if sessions.shared != nil {
      // A replica sweeps from the start: sessions other replicas served end through it too.
      MockService.startSweepingSessions(
        sessions, journal: journal, sharedJournal: sharedJournal, logger: logger)
    } else {
      // Without a store, only once a session is made: a server that never sees one runs no sweeper.
      sessions.whenFirstSessionIsMade { [weak sessions, weak journal, logger] in
        guard let sessions, let journal else { return }
        MockService.startSweepingSessions(sessions, journal: journal, sharedJournal: nil, logger: logger)
      }
    }
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
      let sessions = sessions
      let journal = journal
      shared.startListening { message in
        // A message says what changed; after a (re)subscription (nil) everything is read again.
        if let message, message.hasPrefix(SharedRuntimeStubs.sessionChangePrefix) {
          // `session:<id>:<generation>`: that session's stubs, when this replica serves it.
          let id = message.dropFirst(SharedRuntimeStubs.sessionChangePrefix.count).prefix { $0 != ":" }
          guard let session = sessions.existing(String(id)), session.isLoaded else { return true }
          return (try? session.store.refreshFromSharedStore()) != nil
        }
        if let message, message.hasPrefix(SharedRuntimeStubs.sessionEndedPrefix) {
          let id = String(message.dropFirst(SharedRuntimeStubs.sessionEndedPrefix.count))
          sessions.forget(id)
          _ = journal.removeAll { $0.session == id }
          return true
        }
        let settingsChanged = message == SharedSettings.changeMessage
        let recordingChanged = message == SharedRecordings.changeMessage
        do {
          if message == nil {
            // Messages may have been missed: the sessions this replica serves are read again when used.
            _ = sessions.forgetAll()
          }
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

  /// Answers before the content when the matching stub opts in with `x-respondBeforeBody` (a request in a
  /// session is answered once its content is read).
  public func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan? {
    isAdmin(head) || namesSession(head) ? nil : responder.respondBeforeContent(to: head, context: context)
  }

  /// True when `head` may name a session: a `/__session/` prefix or the session header.
  private func namesSession(_ head: HTTPRequestHead) -> Bool {
    let underscored = head.target.utf8.withContiguousStorageIfAvailable { b in
      b.count > 3 && b[1] == UInt8(ascii: "_") && b[2] == UInt8(ascii: "_")
    }
    if underscored != false, SessionBook.hasPathPrefix(head.target) { return true }
    return head.headers.contains(sessions.headerName)
  }

  /// Answers a request that names a session: the prefix is stripped, the session made or found (read
  /// from the shared store first when this replica has not served it yet, off the event loop), and the
  /// request answered by the admin API or the session's responder.
  private func respondInSession(_ request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    var request = request
    var context = context
    let session: SessionBook.Session
    do {
      guard let id = try sessions.identify(&request.head) else {
        return respond(to: request, context: context)
      }
      context.session = id
      session = try sessions.session(id)
    } catch {
      let status: HTTPStatus
      let title: String
      let detail: String
      switch error {
      case .invalid(let reason): (status, title, detail) = (.badRequest, "Invalid session", reason)
      case .tooMany:
        (status, title, detail) = (
          HTTPStatus(code: 503), "Too many sessions",
          "\(SessionBook.maximumSessions) sessions are live; a session ends \(configuration.sessionIdleSeconds) s after its last request"
        )
      }
      logger.rejected(client: context.clientAddress, status: status.code, reason: detail)
      return .errors(status, [(title, detail, nil)])
    }
    guard session.isLoaded else {
      return ResponsePlan(steps: [
        .deferred { [self, request, context] in
          do throws(RedisFailure) {
            try session.load()
          } catch {
            if isAdmin(request.head) { return AdminAPI.sharedStateUnavailable(error, changed: false) }
            return responder.responder(for: session).sharedStateUnavailable(
              request, context: context, problem: error.description)
          }
          return respondLoaded(request, context: context, session: session)
        }
      ])
    }
    return respondLoaded(request, context: context, session: session)
  }

  /// ``respondInSession(_:context:)`` once the session's stubs are known here.
  private func respondLoaded(_ request: HTTPRequest, context: RequestContext, session: SessionBook.Session)
    -> ResponsePlan
  {
    if isAdmin(request.head) { return admin.scoped(to: session).handle(request, context: context) }
    if request.head.target.utf8.count == 1, request.head.target == "*" {
      return .respond(status: .ok, headers: ["Allow": "GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS"])
    }
    return responder.responder(for: session).respond(to: request, context: context)
  }

  /// Starts the thread that ends idle sessions (every quarter of `--session-idle-seconds`, at most every
  /// 30 s): their stubs, scenario states and journal entries go. With a shared store a session ends once
  /// it is idle on every replica: the store's script ends it once and tells every replica.
  /// The thread holds the sessions and the journal weakly: it ends at its next sweep once the service is
  /// gone (an in-process server of a test suite).
  private static func startSweepingSessions(
    _ sessions: SessionBook, journal: RequestJournal, sharedJournal: SharedJournal?, logger: RequestLogger
  ) {
    let interval = sessions.sweepIntervalNanoseconds
    let idleMilliseconds = Int64(sessions.idleNanoseconds / 1_000_000)
    let thread = Thread { [weak sessions, weak journal] in
      while true {
        usleep(UInt32(interval / 1000))
        guard let sessions, let journal else { return }
        let (idle, active) = sessions.sweep()
        guard let shared = sessions.shared else {
          // One pass over the journal for every session that ended (not one per session).
          let ended = Set(idle)
          if !ended.isEmpty { _ = journal.removeAll { $0.session.map(ended.contains) ?? false } }
          continue
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        do {
          try shared.touch(active, atMilliseconds: now)
          var ended: Set<String> = []
          for id in try shared.idle(before: now - idleMilliseconds)
          where try shared.end(id, idleBefore: now - idleMilliseconds) {
            ended.insert(id)
            logger.line(
              "mockserver: session \(id) ended: idle for \(idleMilliseconds / 1000) s on every replica")
          }
          // The replica that ended them removes their entries from the shared journal: one read of the
          // stream for every session this sweep ended.
          if let sharedJournal, !ended.isEmpty {
            let view = try sharedJournal.read()
            try sharedJournal.remove(
              streamIDs: view.entries.filter { $0.session.map(ended.contains) ?? false }.compactMap {
                view.streamIDs[$0.id]
              })
            try sharedJournal.forgetCleared(sessions: ended)
          }
        } catch {
          // The store is down: idle sessions end at a sweep once it is back.
        }
      }
    }
    thread.name = "mockserver-session-sweeper"
    thread.start()
  }

  /// Answers one request: the admin API, `OPTIONS *`, or a stub; in its session when it names one.
  public func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    if namesSession(request.head) { return respondInSession(request, context: context) }
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
