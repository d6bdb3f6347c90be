import Foundation
import HTTPCore
import Mappings
import MockJSON

/// Settings of the mock application behind the HTTP server. Times in milliseconds.
public struct MockServiceConfiguration: Sendable {
  /// Fixtures folder the file stubs came from (for reset-to-files, save and hot reload), or nil.
  public var fixturesDirectory: String?
  /// The shared state store (`--state-store redis://…`) whose runtime stubs every replica serves, or nil
  /// (the default: all state stays in this process). See docs/scaling.md.
  package var stateStore: RedisEndpoint?
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
  /// Accept a WebSocket upgrade to any path no stub answers, as WireMock 4 does (`--websocket-any-path`;
  /// default false: only paths an `x-websocket` stub or a message stub mapping names).
  public var webSocketAnyPath = false
  /// The request header that names a request's session (`--session-header`, default `X-Mock-Session`;
  /// docs/scaling.md#sessions). A request may also name it with the path prefix `/__session/{id}/`.
  public var sessionHeader = SessionBook.defaultHeaderName
  /// How long a session lives after its last request or admin call, in seconds
  /// (`--session-idle-seconds`, default 3600; 1 ... ``SessionBook/maximumIdleSeconds``): then its stubs,
  /// scenario states and journal entries are removed.
  public var sessionIdleSeconds = SessionBook.defaultIdleSeconds
  /// Creates the defaults.
  public init() {}
}

/// A check of an admin answer before it is sent: given the request's method and raw path and the answer's
/// status, header fields and content, why the answer does not fit the admin API's contract, or nil when it
/// does. MockServerCLI's `AdminResponseCheck` checks against `/__admin/openapi.json`.
package typealias AdminAnswerCheck =
  @Sendable (_ method: String, _ rawPath: String, _ status: Int, _ headers: HTTPHeaders, _ body: [UInt8])
  -> String?
