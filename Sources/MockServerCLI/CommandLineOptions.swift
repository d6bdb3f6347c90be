import Foundation
import MockServer
import Templating

/// Parsed `mockserver` command line. See `docs/cli.md` and `mockserver --help`.
public struct CommandLineOptions: Sendable, Equatable {
  /// What to do.
  public enum Command: Sendable, Equatable {
    /// Serve fixtures (default).
    case serve
    /// Validate fixtures and exit.
    case lint
    /// Print help and exit.
    case help
    /// Print the version and exit.
    case version
    /// Write a local CA and server/client certificates (`mockserver cert [--out DIR]`) and exit.
    case cert
    /// A recording proxy to `--upstream` until SIGINT/SIGTERM, then fixtures written to `--out`
    /// (`mockserver record`).
    case record
  }

  /// The command to run (default `serve`).
  public var command: Command = .serve
  /// Address to bind (`--host`, default 127.0.0.1).
  public var host = "127.0.0.1"
  /// Port (`--port`, default 8080; 0 picks a free port).
  public var port = 8080
  /// Fixtures folder (`--fixtures`, or `lint DIR`; default `Fixtures`).
  public var fixturesDirectory = "Fixtures"
  /// `--idle-timeout-ms` (default 60 000).
  public var idleTimeoutMilliseconds = 60_000
  /// `--header-timeout-ms` (default 15 000).
  public var requestHeadTimeoutMilliseconds = 15_000
  /// `--max-connections` (default 10 000).
  public var maxConnections = 10_000
  /// `--threads`: event-loop threads (default 1).
  public var eventLoops = 1
  /// `--event-loop epoll|poll`: the event loops' readiness mechanism; nil takes `MOCKSERVER_EVENT_LOOP`,
  /// else the system's own (epoll on Linux).
  public var eventLoopBackend: EventLoopBackend?
  /// `--max-header-bytes` (default 65 536).
  public var maxHeaderSectionBytes = 65_536
  /// `--max-body-bytes` (default 64 MiB).
  public var maxBodyBytes = 64 << 20
  /// `--max-buffered-request-bytes` (default 256 MiB): request content buffered by all connections together.
  public var maxBufferedRequestBytes = 256 << 20
  /// `--max-xml-expansion-bytes` (default 1 MiB): text the entities of one XML document may expand to.
  public var maxXMLExpansionBytes = 1 << 20
  /// `--skip-invalid`: start with the valid fixtures and warn about the rest.
  public var skipInvalid = false
  /// `--allow-empty`: for `lint`, a fixtures folder without `mappings/` is not an error (`serve` starts
  /// with no stubs from such a folder either way, and says so).
  public var allowEmpty = false
  /// `--verbose`: log headers and bodies too.
  public var verbose = false
  /// `--quiet`: no per-request log lines.
  public var quiet = false
  /// `--log-format json|text`.
  public var logJSON = false
  /// `--seed N`: reproducible random delays and fault data.
  public var seed: UInt64?
  /// Response templating: `--global-response-templating`, `--local-response-templating`,
  /// `--template-escaping`, `--fixed-time ISO8601`, `--template-env NAME,...`.
  public var templating = TemplatingConfiguration()
  /// `--state-expiration-seconds`: how long a state-extension context lives after its last write.
  public var stateExpirationSeconds = StateStore.defaultExpirationSeconds
  /// `--journal-size N` (default 10 000); `--no-journal` sets 0.
  public var journalSize = 10_000
  /// `--journal-max-bytes N`: most bytes the journal holds (default 256 MiB).
  public var journalMaxBytes = 256 << 20
  /// `--global-delay-ms N`: added to every stub response.
  public var globalDelayMilliseconds = 0
  /// `--shutdown-grace-ms N`: how long responses in flight may take to finish after SIGINT/SIGTERM or
  /// `POST /__admin/shutdown` before they are cut (default 5 000).
  public var shutdownGraceMilliseconds = 5_000
  /// `--max-websocket-message-bytes N`: the largest WebSocket message accepted (default 16 MiB, 1…2³¹);
  /// a larger one closes the connection with 1009.
  public var maxWebSocketMessageBytes = 16 << 20
  /// `--websocket-any-path`: accept a WebSocket upgrade to any path, as WireMock 4 does (default: only
  /// paths an `x-websocket` stub or a message stub mapping names; others get 404).
  public var webSocketAnyPath = false
  /// `--max-hold-ms N`: bound for NO_RESPONSE / HEADERS_THEN_STALL (default 300 000).
  public var maxHoldMilliseconds = 300_000
  /// `--no-admin`.
  public var adminEnabled = true
  /// `--admin-token TOKEN`.
  public var adminToken: String?
  /// `--state-store redis://[user:password@]host[:port][/db]`: the shared state store (docs/scaling.md).
  package var stateStore: RedisEndpoint?
  /// `--session-header NAME`: the header naming a request's session (default `X-Mock-Session`).
  public var sessionHeader = SessionBook.defaultHeaderName
  /// `--session-idle-seconds N`: a session ends N s after its last request or admin call.
  public var sessionIdleSeconds = SessionBook.defaultIdleSeconds
  /// `--admin-host ADDR`: accept admin requests from this address too (default loopback only).
  public var adminHost: String?
  /// `--admin-allow-origin ORIGIN` (repeatable): web origins allowed to drive the admin API.
  public var adminAllowedOrigins: [String] = []
  /// `--https-port N`: also serve HTTPS on N (0 picks a free port); nil for no HTTPS.
  public var httpsPort: Int?
  /// `--tls-cert FILE`: server certificate chain PEM (default: one generated at startup).
  public var tlsCertificateFile: String?
  /// `--tls-key FILE`: private key PEM of `--tls-cert`.
  public var tlsKeyFile: String?
  /// `--tls-client-ca FILE`: require client certificates issued by these CAs (mutual TLS).
  public var tlsClientCAFile: String?
  /// `--tls-fault expired|wrong-host|untrusted`: serve such a certificate instead.
  public var tlsFault: String?
  /// `--tls-ca FILE` / `--tls-ca-key FILE`: the CA that signs fault certificates when `--tls-cert` is used.
  public var tlsCAFile: String?
  /// See ``tlsCAFile``.
  public var tlsCAKeyFile: String?
  /// `cert --out DIR` (default `certs`).
  public var certOutputDirectory = "certs"
  /// False with `--no-watch`: no hot reload of the fixtures folder.
  public var watch = true
  /// `--openapi SPEC`: serve stubs generated from an OpenAPI document (with `lint`: check the fixtures
  /// against it). See docs/contracts.md.
  public var openAPISpec: String?
  /// `--validate-requests` (with `--openapi`): requests that break the document get Prism's answer: the
  /// document's 401, 415, 422 or 400 response when it declares one, else 401, 415 or 422 with a
  /// problem+json report.
  public var validateRequests = false
  /// `--invalid-request-status 400|422` (with `--validate-requests`): 400 keeps the check of before (a
  /// `400` report, no security schemes, no declared responses); 422, the default, is Prism's.
  public var invalidRequestStatus = 422
  /// `--validate-responses` (with `--openapi`): stub answers that break the document are logged and carry
  /// an `x-contract-violation` header; the document's own answers that break their schema are logged and
  /// carry `sl-violations`.
  public var validateResponses = false
  /// `--errors` (Prism's flag, with `--openapi`): a document answer that breaks its own schema becomes a
  /// 500 problem+json listing the violations (implies checking the document's answers).
  public var answerViolationsAreErrors = false
  /// `--openapi-cors false` (Prism's `--cors=false`): the document's answers carry no CORS headers and
  /// preflights go to the document. On by default under `--openapi`.
  public var openAPICORS = true
  /// True when `--openapi-cors`/`--cors` was given (it needs `--openapi`).
  var openAPICORSGiven = false

  /// Proxying and recording: `--proxy-timeout-ms`, `--proxy-ca`, `--proxy-insecure`, `--proxy-all`,
  /// `--record-mappings`, and `record`'s `--upstream`, `--out`, `--match-headers`, `--redact`, `--no-scenarios`.
  public var proxy = ProxyOptions()
  /// `--enable-stub-cors` (WireMock's flag): CORS preflights and `Access-Control-*` headers for every stub.
  public var stubCORS = false
  /// `--disable-gzip` (WireMock's flag): responses are not compressed unless a stub forces it.
  public var gzipDisabled = false
  /// `--disable-banner` (WireMock's flag): accepted; mockserver prints no banner either way.
  public var bannerDisabled = false
  /// True when `--fixtures`/`--root-dir` (or `lint DIR`) named the folder; false for the default.
  public var fixturesDirectoryGiven = false
  /// `--async-response-enabled` (WireMock's flag): accepted and has no effect (responses are always
  /// asynchronous here); said once at start.
  public var asyncResponseFlagGiven = false

  /// Defaults.
  public init() {}

  /// A usage error: the message names the offending argument.
  public struct UsageError: Error, CustomStringConvertible, Equatable {
    /// A one-line, human-readable explanation.
    public var description: String
  }

  /// Parses arguments (without the program name).
  /// - Throws: ``UsageError`` for unknown options, missing or malformed values.
  public static func parse(_ arguments: [String]) throws(UsageError) -> CommandLineOptions {
    var options = CommandLineOptions()
    var rest = arguments[...]
    if let first = rest.first, !first.hasPrefix("-") {
      switch first {
      case "serve": options.command = .serve
      case "lint": options.command = .lint
      case "help": options.command = .help
      case "version": options.command = .version
      case "cert": options.command = .cert
      case "record": options.command = .record
      default:
        throw UsageError(
          description:
            "unknown command '\(first)' "
            + "(expected serve, lint, record, cert, import, export, verify, help or version)")
      }
      rest = rest.dropFirst()
    }
    func value(_ name: String) throws(UsageError) -> String {
      guard let v = rest.popFirst() else { throw UsageError(description: "\(name) needs a value") }
      return v
    }
    func integer(_ name: String, _ range: ClosedRange<Int>) throws(UsageError) -> Int {
      let v = try value(name)
      guard let n = Int(v), range.contains(n) else {
        throw UsageError(
          description: "\(name) expects an integer in \(range.lowerBound)...\(range.upperBound), got '\(v)'")
      }
      return n
    }
    /// A WireMock switch, which WireMock's start lines also write as `--name true|false` or
    /// `--name=true|false`: true unless the value says false.
    func switchValue(_ name: String, inline: Bool) throws(UsageError) -> Bool {
      guard inline || rest.first == "true" || rest.first == "false" else { return true }
      let v = try value(name)
      guard v == "true" || v == "false" else {
        throw UsageError(description: "\(name) expects true or false, got '\(v)'")
      }
      return v == "true"
    }
    var lintDirectoryGiven = false
    while let argument = rest.popFirst() {
      var name = argument
      var inlineValue = false
      if let eq = argument.firstIndex(of: "="), argument.hasPrefix("--") {
        name = String(argument[..<eq])
        rest.insert(String(argument[argument.index(after: eq)...]), at: rest.startIndex)
        inlineValue = true
      }
      switch name {
      case "-h", "--help": options.command = .help
      case "-V", "--version": options.command = .version
      case "--host", "--bind-address":
        options.host = try value(name)
        guard !options.host.isEmpty else { throw UsageError(description: "--host needs an address") }
      case "-p", "--port": options.port = try integer(name, 0...65535)
      case "--fixtures", "--root-dir":
        options.fixturesDirectory = try value(name)
        options.fixturesDirectoryGiven = true
        guard !options.fixturesDirectory.isEmpty else {
          throw UsageError(description: "\(name) needs a folder")
        }
      case "--idle-timeout-ms": options.idleTimeoutMilliseconds = try integer(name, 1...86_400_000)
      case "--header-timeout-ms": options.requestHeadTimeoutMilliseconds = try integer(name, 1...86_400_000)
      case "--max-connections": options.maxConnections = try integer(name, 1...1_000_000)
      case "--threads": options.eventLoops = try integer(name, 1...64)
      case "--event-loop":
        let v = try value(name)
        do throws(IOError) {
          options.eventLoopBackend = try EventLoopBackend.named(v, source: name)
        } catch {
          throw UsageError(description: error.description)
        }
      case "--max-header-bytes": options.maxHeaderSectionBytes = try integer(name, 1024...(64 << 20))
      case "--max-body-bytes": options.maxBodyBytes = try integer(name, 0...(4 << 30))
      case "--max-buffered-request-bytes":
        options.maxBufferedRequestBytes = try integer(name, 0...(1 << 40))
      case "--max-xml-expansion-bytes": options.maxXMLExpansionBytes = try integer(name, 0...(1 << 30))
      case "--skip-invalid": options.skipInvalid = true
      case "--allow-empty": options.allowEmpty = true
      case "--seed":
        let v = try value(name)
        guard let n = UInt64(v) else {
          throw UsageError(description: "--seed expects an unsigned integer, got '\(v)'")
        }
        options.seed = n
      case "--global-response-templating":
        options.templating.global = try switchValue(name, inline: inlineValue)
      case "--local-response-templating":
        options.templating.local = try switchValue(name, inline: inlineValue)
      case "--template-escaping": options.templating.environment.escapesHTML = true
      case "--fixed-time":
        let v = try value(name)
        guard let ms = TemplateDate.epochMilliseconds(iso8601: v) else {
          throw UsageError(
            description: "--fixed-time expects an ISO 8601 date-time such as 2024-01-02T03:04:05Z, got '\(v)'"
          )
        }
        options.templating.environment.fixedTimeMilliseconds = ms
      case "--max-template-bytes":
        options.templating.environment.maximumOutputBytes = try integer(name, 1_024...(1 << 30))
      case "--max-template-steps":
        options.templating.environment.maximumSteps = try integer(name, 1_000...1_000_000_000)
      case "--state-expiration-seconds":
        options.stateExpirationSeconds = try integer(name, 1...StateStore.maximumExpirationSeconds)
      case "--template-env":
        let names = try value(name).split(separator: ",").map {
          String($0).trimmingCharacters(in: .whitespaces)
        }
        options.templating.environment.allowedEnvironment.formUnion(names.filter { !$0.isEmpty })
      case "--journal-size": options.journalSize = try integer(name, 0...10_000_000)
      case "--no-journal", "--no-request-journal":
        if try switchValue(name, inline: inlineValue) { options.journalSize = 0 }
      case "--max-request-journal-entries": options.journalSize = try integer(name, 0...10_000_000)
      case "--enable-stub-cors": options.stubCORS = try switchValue(name, inline: inlineValue)
      case "--disable-gzip": options.gzipDisabled = try switchValue(name, inline: inlineValue)
      case "--disable-banner": options.bannerDisabled = try switchValue(name, inline: inlineValue)
      case "--async-response-enabled":
        options.asyncResponseFlagGiven = try switchValue(name, inline: inlineValue)
      case "--journal-max-bytes": options.journalMaxBytes = try integer(name, 0...(64 << 30))
      case "--global-delay-ms": options.globalDelayMilliseconds = try integer(name, 0...3_600_000)
      case "--max-hold-ms": options.maxHoldMilliseconds = try integer(name, 0...86_400_000)
      case "--max-websocket-message-bytes":
        options.maxWebSocketMessageBytes = try integer(name, 1...(1 << 31))
      case "--websocket-any-path": options.webSocketAnyPath = true
      case "--shutdown-grace-ms": options.shutdownGraceMilliseconds = try integer(name, 0...600_000)
      case "--no-admin": options.adminEnabled = false
      case "--admin-token": options.adminToken = try value(name)
      case "--state-store":
        let url = try value(name)
        do {
          options.stateStore = try RedisEndpoint(url: url)
        } catch {
          throw UsageError(description: "--state-store: \(error)")
        }
      case "--session-header":
        let header = try value(name)
        guard StubParser.isToken(header) else {
          throw UsageError(
            description: "--session-header expects a header field name (RFC 9110 token), got '\(header)'")
        }
        options.sessionHeader = header
      case "--session-idle-seconds":
        options.sessionIdleSeconds = try integer(name, 1...SessionBook.maximumIdleSeconds)
      case "--admin-host": options.adminHost = try value(name)
      case "--admin-allow-origin": options.adminAllowedOrigins.append(try value(name))
      case "--no-watch": options.watch = false
      case "-v", "--verbose": options.verbose = try switchValue(name, inline: inlineValue)
      case "-q", "--quiet": options.quiet = true
      case "--log-format":
        let v = try value(name)
        guard v == "json" || v == "text" else {
          throw UsageError(description: "--log-format expects json or text, got '\(v)'")
        }
        options.logJSON = v == "json"
      case "--https-port": options.httpsPort = try integer(name, 0...65535)
      case "--tls-cert": options.tlsCertificateFile = try value(name)
      case "--tls-key": options.tlsKeyFile = try value(name)
      case "--tls-client-ca": options.tlsClientCAFile = try value(name)
      case "--tls-ca": options.tlsCAFile = try value(name)
      case "--tls-ca-key": options.tlsCAKeyFile = try value(name)
      case "--tls-fault":
        let v = try value(name)
        guard ["expired", "wrong-host", "untrusted"].contains(v) else {
          throw UsageError(description: "--tls-fault expects expired, wrong-host or untrusted, got '\(v)'")
        }
        options.tlsFault = v
      case "--openapi": options.openAPISpec = try value(name)
      case "--validate-requests": options.validateRequests = true
      case "--validate-responses": options.validateResponses = true
      case "--errors": options.answerViolationsAreErrors = try switchValue(name, inline: inlineValue)
      case "--openapi-cors", "--cors":
        options.openAPICORS = try switchValue(name, inline: inlineValue)
        options.openAPICORSGiven = true
      case "--invalid-request-status":
        let status = try integer(name, 400...422)
        guard status == 400 || status == 422 else {
          throw UsageError(description: "--invalid-request-status expects 400 or 422, got \(status)")
        }
        options.invalidRequestStatus = status
      case "--out" where options.command == .cert: options.certOutputDirectory = try value(name)
      default:
        if try options.parseProxyOption(name, value: value, integer: integer) {
          continue
        }
        if options.command == .lint, !argument.hasPrefix("-"), !lintDirectoryGiven {
          lintDirectoryGiven = true
          options.fixturesDirectory = argument
        } else if !argument.hasPrefix("-") {
          throw UsageError(description: "unexpected argument '\(argument)' (see --help)")
        } else {
          throw UsageError(description: "unknown option '\(argument)' (see --help)")
        }
      }
    }
    try options.validateTLS()
    try options.validateProxy()
    if options.validateRequests || options.validateResponses, options.openAPISpec == nil {
      throw UsageError(description: "--validate-requests and --validate-responses need --openapi SPEC")
    }
    if options.answerViolationsAreErrors || options.openAPICORSGiven, options.openAPISpec == nil {
      throw UsageError(description: "--errors and --openapi-cors need --openapi SPEC")
    }
    return options
  }

  /// Checks that the TLS options come in working combinations.
  private func validateTLS() throws(UsageError) {
    if (tlsCertificateFile == nil) != (tlsKeyFile == nil) {
      throw UsageError(description: "--tls-cert and --tls-key go together")
    }
    if (tlsCAFile == nil) != (tlsCAKeyFile == nil) {
      throw UsageError(description: "--tls-ca and --tls-ca-key go together")
    }
    let usesTLS =
      tlsCertificateFile != nil || tlsClientCAFile != nil || tlsFault != nil || tlsCAFile != nil
    if usesTLS, httpsPort == nil, command == .serve {
      throw UsageError(description: "TLS options need --https-port")
    }
  }

  /// The `--help` text.
  public static let helpText = """
    mockserver \(MockServerInfo.version) - a local mock API server for contract testing

    USAGE
      mockserver [serve] [options]     serve the fixtures folder
      mockserver lint [DIR]            validate fixtures (default DIR: Fixtures) and exit
      mockserver lint --openapi SPEC [DIR]   also check every stub against an OpenAPI document
      mockserver --openapi SPEC        serve an OpenAPI 3 or Swagger 2.0 document as Prism does (Prefer:
                                       code=404, example=x; ?__code=, ?__example=; Accept)
                 [--validate-requests [--invalid-request-status 400]] [--validate-responses]
                                       check traffic against the document (sl-violations lists what
                                       a served request or answer breaks)
                 [--errors]            an answer that breaks its own schema becomes a 500 listing why
                 [--openapi-cors false]   no CORS headers or preflight answers for the document's
                                       answers (on by default, as Prism; --cors=false is the same)
      mockserver import openapi SPEC [--out DIR] [--seed N] [--force]   write DIR/mappings/ from an OpenAPI
        document (a mapping file changed since it was written is kept unless --force; exit 1 then)
      mockserver import pact FILE... [--out DIR] [--lenient]   write DIR/mappings/ from Pact files (v1-v4)
      mockserver export pact --consumer C --provider P [--fixtures DIR] [--from-journal URL] [--out FILE]
                 [--spec v3|v4] [--redact NAME]...   a pact without secrets (default V4)
      mockserver verify --upstream URL [--fixtures DIR] [--only NAME]... [--junit FILE] [--header 'K: V']
                                       compare the fixtures with the running provider (docs/contracts.md)
      mockserver verify --pact FILE... --upstream URL [--provider-states-setup-url URL] [--junit FILE]
                                       replay a pact's interactions against the provider, as Pact's verifier
      mockserver record --upstream URL [--out DIR] [--port N] [--match-headers H,...] [--redact NAME,...]
                 [--no-scenarios]
                                       a recording proxy until Ctrl-C, then DIR/mappings/ and DIR/__files/
                                       (default DIR: Fixtures; docs/recording.md)
      mockserver cert [--out DIR]      write ca.pem, ca-key.pem, server.pem, server-key.pem, client.pem,
                                       client-key.pem into DIR (default certs; an existing CA is kept)

    OPTIONS
      --host ADDR              address to bind (default 127.0.0.1; ::1 and 0.0.0.0 work)
      --bind-address ADDR      the same as --host (WireMock's name)
      -p, --port N             port (default 8080; 0 picks a free port)
      --fixtures DIR           fixtures folder: mappings/, __files/, envelopes.json (default Fixtures;
                               started without it, mockserver serves no stubs and says so)
      --root-dir DIR           the same as --fixtures (WireMock's name)
      --skip-invalid           start with the valid fixtures, warn about invalid ones
      --allow-empty            lint: accept a fixtures folder without mappings/ (serve always does)
      --no-watch               do not reload the fixtures folder when its files change
      --seed N                 seed random delays, fault data and template random values (reproducible)
      --global-response-templating   render every stub's response as a template (docs/templating.md)
      --local-response-templating    render stubs naming "response-template" (the default)
      --template-escaping      HTML-escape {{expr}} output in templates (off by default, as WireMock 3)
      --fixed-time ISO8601     pin the templates' now, e.g. 2024-01-02T03:04:05Z
      --template-env NAME,...  environment variables systemValue may read (default none)
      --max-template-bytes N   bytes one template rendering may produce, 1024 to 2^30; past it the
                               answer is a 500 naming the stub (default 16777216)
      --max-template-steps N   steps (tags, expressions, loop passes) one rendering may take, 1000 to
                               10^9; past it the same 500 (default 1000000)
      --state-expiration-seconds N   a state-extension context is forgotten N s after its last
                               write, 1 to 315360000 (default 3600; docs/stateful.md)
      --global-delay-ms N      add N ms to every stub response (default 0)
      --max-hold-ms N          longest NO_RESPONSE / HEADERS_THEN_STALL hold, and open x-sse stream (default 300000)
      --max-websocket-message-bytes N
                               largest WebSocket message accepted, 1...2147483648 (default 16777216);
                               a larger one closes the connection with 1009
      --websocket-any-path     accept a WebSocket upgrade to any path, as WireMock 4 does (default:
                               only paths an x-websocket stub or a message stub mapping names)
      --shutdown-grace-ms N    on SIGINT/SIGTERM, responses in flight get N ms to finish (default 5000)
      --journal-size N         request journal entries kept (default 10000)
      --journal-max-bytes N    most bytes the journal holds, oldest evicted first (default 268435456);
                               request content beyond 64 KiB is kept as a prefix, its length and SHA-256
      --no-journal             keep no journal entries (counts by stub stay exact)
      --no-request-journal     the same as --no-journal (WireMock's name)
      --max-request-journal-entries N   the same as --journal-size N (WireMock's name)
      --enable-stub-cors       answer CORS preflights for every stub and add Access-Control-* headers
                               to stub responses (per stub: "x-cors": true); see docs/admin-api.md
      --disable-gzip           never compress responses (unless a stub says "x-compression": "always")
      --disable-banner         accepted for WireMock start lines (mockserver prints no banner)
      --async-response-enabled accepted for WireMock start lines; no effect (said once at start)
      --no-admin               turn the /__admin API off
      --admin-token TOKEN      require "Authorization: Bearer TOKEN" on /__admin requests
      --admin-host ADDR        also accept /__admin requests from ADDR (default: loopback clients only;
                               0.0.0.0 or :: accepts any client); ADDR is also accepted as Host
      --admin-allow-origin O   let web pages of origin O (http://host:port) drive /__admin (repeatable;
                               default: no other origin, see docs/admin-api.md)
      --state-store redis://[user:password@]host[:port][/db]
                               share runtime stubs with the other replicas through this Redis (or
                               Valkey) server; /__admin/health answers 503 while it is down (docs/scaling.md)
      --session-header NAME    the request header naming a request's session (default X-Mock-Session;
                               a /__session/{id}/ path prefix names one too; docs/scaling.md#sessions)
      --session-idle-seconds N a session's stubs, scenario states and requests are removed N s after
                               its last request, 1 to 315360000 (default 3600)
      --threads N              event-loop threads (default 1)
      --event-loop epoll|poll  readiness mechanism of the event loops: epoll (Linux, the default) or
                               poll(2) with a pipe (what systems without epoll use); poll also watches
                               the fixtures folder by comparing its files every 250 ms
      --idle-timeout-ms N      close idle keep-alive connections after N ms (default 60000)
      --header-timeout-ms N    408 and close when a request head takes longer (default 15000)
      --max-connections N      connections beyond N get 503 and are closed (default 10000)
      --max-header-bytes N     header section limit, 431 above (default 65536)
      --max-body-bytes N       content limit, 413 above (default 67108864)
      --max-buffered-request-bytes N
                               request content buffered by all connections at once; a request beyond
                               it gets 503 (default 268435456)
      --max-xml-expansion-bytes N
                               text the entity references of one XML document may expand to; a
                               document beyond it is not XML to any matcher or helper (default 1048576)
      -v, --verbose            log request and response headers and bodies
      -q, --quiet              no per-request log lines
      --log-format text|json   log line format (default text)
      --https-port N           also serve HTTPS on port N (0 picks a free port); see docs/tls.md
      --tls-cert FILE          server certificate chain PEM (default: a self-signed certificate for
                               localhost, 127.0.0.1 and ::1 generated at startup)
      --tls-key FILE           private key PEM of --tls-cert
      --tls-client-ca FILE     require client certificates issued by these CAs (mutual TLS)
      --tls-fault KIND         serve an expired, wrong-host or untrusted certificate instead
      --tls-ca FILE            with --tls-cert and --tls-fault: the CA (and --tls-ca-key FILE its key)
                               that signs the expired and wrong-host certificates
      --proxy-all URL          forward requests no stub matches to URL (proxy stubs: docs/recording.md)
      --record-mappings        record what is proxied; on exit write it to the fixtures folder
      --proxy-timeout-ms N     502/504 when an upstream makes no progress for N ms (default 30000)
      --proxy-ca FILE          also trust these CA certificates (PEM) for upstream HTTPS
      --proxy-insecure         accept any upstream certificate
      --match-headers H,...    (recording) request headers the recorded stubs match on (absent when not sent)
      --no-scenarios           (recording) requests answered differently keep the first answer, no scenario
      --redact NAME,...        (recording) headers and JSON fields written as REDACTED, besides
                               Authorization, Cookie, Set-Cookie and Proxy-Authorization
      -h, --help               this help
      -V, --version            print the version

    OUTPUT
      When ready, prints one line to stdout:  listening on http://HOST:PORT
      With --https-port, two more:            listening on https://HOST:PORT
                                              certificate: PATH   (the certificate clients trust)

    ENVIRONMENT
      MOCKSERVER_EVENT_LOOP=epoll|poll
                               the default of --event-loop (make test runs the server suites with poll too)
      MOCKSERVER_VALIDATE_ADMIN_RESPONSES=1
                               check every admin answer against /__admin/openapi.json; one that does not
                               fit becomes a 500 naming the operation (for test suites; off by default)

    EXIT CODES
      0  stopped normally (SIGINT/SIGTERM: responses in flight finish first), or lint found no problem
      1  invalid fixtures (each problem printed as FILE: JSON-PATH: expected ..., found ...)
      2  usage error (unknown option, bad value)
      3  the server could not start (address in use, cannot bind)
    """
}
