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
  /// Most bytes the journal's entries hold (`--journal-max-bytes`, default 256 MiB); oldest evicted first.
  public var journalMaxBytes = RequestJournal.defaultMaxBytes
  /// Longest request content a journal entry keeps whole (default 64 KiB); beyond it, a prefix, the
  /// length and the SHA-256.
  public var journalMaxBodyBytesPerEntry = RequestJournal.defaultMaxBodyBytesPerEntry
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
  /// `Host` names (or addresses) the admin API answers besides loopback ones (`--admin-host`).
  public var adminAllowedHosts: [String] = []
  /// Web origins (`scheme://host[:port]`) allowed to drive the admin API besides the server's own
  /// (`--admin-allow-origin`).
  public var adminAllowedOrigins: [String] = []
  /// The largest delay a stub, a setting or a flag can ask for: one day, in ms. Larger values are refused
  /// where they enter (fixtures, admin API, command line) and sampled delays are clamped to it.
  public static let maxDelayMilliseconds = ResponseDefinition.maxDelayMilliseconds
  /// A check of every stub request before matching (content already decoded), e.g. against an OpenAPI
  /// document (`--validate-requests`): a non-nil answer is sent instead of any stub, journaled and logged
  /// with `note`. Nil (the default) checks nothing.
  public var requestCheck: (@Sendable (HTTPRequest) -> (response: HTTPResponse, note: String)?)?
  /// The answer to a request no stub matches, before the near-miss `404` (e.g. the OpenAPI document's own
  /// answer under `--openapi`): a non-nil answer is sent, journaled and logged with `note`. Nil (the
  /// default) leaves unmatched requests to the near-miss report.
  public var unmatchedAnswer: (@Sendable (HTTPRequest) -> (response: HTTPResponse, note: String)?)?
  /// Response templating (`--global-response-templating`, `--template-escaping`, `--fixed-time`, …).
  public var templating = TemplatingConfiguration()
  /// How long a context of the state extension lives after its last write, in seconds
  /// (`--state-expiration-seconds`, default 3600; 1 ... ``StateStore/maximumExpirationSeconds``).
  public var stateExpirationSeconds = StateStore.defaultExpirationSeconds
  /// Upstream settings: `--proxy-timeout-ms`, `--proxy-ca`, `--proxy-insecure`, `--proxy-all`,
  /// `--record-mappings`.
  public var proxy = ProxyConfiguration()
  /// `--enable-stub-cors`: every stub answers CORS preflights and adds `Access-Control-*` headers for
  /// requests with `Origin` (without it, only stubs with `"x-cors": true` do).
  public var stubCORS = false
  /// `--disable-gzip`: never compress responses unless a stub forces it (`"x-compression": "always"`).
  public var gzipDisabled = false
  /// A check of every admin answer before it is sent, or nil (the default) for none; off, it costs
  /// nothing. An answer it finds a violation in is replaced by a 500 naming it (also written to standard
  /// error). The binary sets MockServerCLI's `AdminResponseCheck` (the admin API's own OpenAPI document)
  /// when the environment has `MOCKSERVER_VALIDATE_ADMIN_RESPONSES=1` (`make test` sets it);
  /// MockServerTesting's in-process servers always do.
  package var adminResponseCheck: AdminAnswerCheck?
  /// The largest WebSocket message a connection accepts (`--max-websocket-message-bytes`, default 16 MiB,
  /// 1…2³¹); a larger one closes the connection with 1009.
  public var maxWebSocketMessageBytes = WebSocketHub.defaultMaxMessageBytes
  /// Creates the defaults.
  public init() {}
}

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
    store = StubStore(fixtures: fixtures, fixturesDirectory: configuration.fixturesDirectory)
    scenarioBook = ScenarioBook()
    let dashboard = DashboardState(
      store: store, initialLoad: configuration.fixturesDirectory == nil ? nil : fixtures,
      fixturesDirectory: configuration.fixturesDirectory)
    self.dashboard = dashboard
    let events = dashboard.events
    journal = RequestJournal(
      capacity: configuration.journalCapacity, maxBytes: configuration.journalMaxBytes,
      maxBodyBytesPerEntry: configuration.journalMaxBodyBytesPerEntry, onCompleted: { events.publish($0) })
    logger = RequestLogger(level: configuration.logLevel, json: configuration.logJSON)
    settings = MockSettings(globalDelayMilliseconds: configuration.globalDelayMilliseconds)
    stateStore = StateStore(expirationSeconds: configuration.stateExpirationSeconds)
    webSockets = WebSocketHub(maxMessageBytes: configuration.maxWebSocketMessageBytes)
    responder = MockResponder(
      configuration: configuration, store: store, scenarioBook: scenarioBook, journal: journal,
      logger: logger,
      settings: settings, stateStore: stateStore, webSockets: webSockets)
    let shutdown = shutdownHook
    admin = AdminAPI(
      configuration: configuration, store: store, scenarioBook: scenarioBook, journal: journal,
      logger: logger,
      settings: settings, createdAt: SocketOps.monotonicNanos(),
      shutdownHandler: { shutdown.handler }, dashboard: dashboard, forwarder: responder.forwarder,
      stateStore: stateStore)
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
    scenarioBook.reset()
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
