import Contracts
import Dispatch
import Foundation
import HTTPCore
import MockServer
import XMLSupport

#if canImport(Glibc)
  import Glibc
#endif

/// The `mockserver` program, as a library function so tests and harnesses can run it in-process.
public enum MockServerMain {
  /// Runs the command line `arguments` (without the program name) and returns the exit code
  /// (0 ok, 1 invalid fixtures, 2 usage, 3 cannot start). `serve` blocks until SIGINT/SIGTERM.
  public static func run(arguments: [String]) -> Int32 {
    if let first = arguments.first, ContractCommands.commands.contains(first) {
      return ContractCommands.run(arguments)
    }
    let options: CommandLineOptions
    do {
      options = try CommandLineOptions.parse(arguments)
    } catch {
      printError("mockserver: \(error.description)")
      return 2
    }
    switch options.command {
    case .help:
      print(CommandLineOptions.helpText)
      return 0
    case .version:
      print("mockserver \(MockServerInfo.version)")
      return 0
    case .lint:
      return lint(options)
    case .serve, .record:
      return serve(options)
    case .cert:
      return writeCertificates(options)
    }
  }

  /// Writes `message` and a newline to standard error with `write(2)`: a closed or unread standard error
  /// never kills or blocks the program (see ``StandardError``).
  static func printError(_ message: String) {
    StandardError.line(message)
  }

  static func lint(_ options: CommandLineOptions) -> Int32 {
    if let spec = options.openAPISpec { return ContractCommands.lintOpenAPI(options, spec: spec) }
    let (output, code) = FixtureLoader.runLint(
      directory: options.fixturesDirectory, allowEmpty: options.allowEmpty)
    // One stream (standard error, as `serve` reports them) for errors and warnings alike, one
    // `file: path: message` line each, then the summary.
    printError(output)
    return code
  }

  static func serve(_ options: CommandLineOptions) -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    // --log-format json: every line on standard error is a JSON object, from the first one on.
    StandardError.logsJSON = options.logJSON
    defer { StandardError.logsJSON = false }
    var configuration = ServerConfiguration()
    configuration.host = options.host
    configuration.port = options.port
    configuration.idleTimeoutMilliseconds = options.idleTimeoutMilliseconds
    configuration.requestHeadTimeoutMilliseconds = options.requestHeadTimeoutMilliseconds
    configuration.maxConnections = options.maxConnections
    configuration.eventLoops = options.eventLoops
    configuration.eventLoopBackend = options.eventLoopBackend
    configuration.limits.maxHeaderSectionBytes = options.maxHeaderSectionBytes
    configuration.limits.maxBodyBytes = options.maxBodyBytes
    configuration.maxBufferedRequestBytes = options.maxBufferedRequestBytes
    XMLSupport.maximumExpansionBytes.store(options.maxXMLExpansionBytes, ordering: .relaxed)
    // `record` starts with no stubs: everything goes to the upstream.
    var fixtures =
      options.command == .record
      ? FixtureSet()
      // A folder without mappings/ starts with no stubs and says so, as WireMock does (only lint
      // calls it an error without --allow-empty).
      : FixtureLoader.load(directory: options.fixturesDirectory, allowEmpty: true)
    var isDirectory: ObjCBool = false
    if options.command != .record, !options.fixturesDirectoryGiven,
      !FileManager.default.fileExists(atPath: options.fixturesDirectory, isDirectory: &isDirectory)
    {
      // Started outside a project: serve no stubs rather than refuse, and say how to add some.
      fixtures = FixtureSet()
      printError(
        "mockserver: no \(options.fixturesDirectory)/ folder in \(FileManager.default.currentDirectoryPath); "
          + "starting with no stubs. Add stubs with POST /__admin/mappings, create "
          + "\(options.fixturesDirectory)/mappings/*.json (picked up while running), or pass --fixtures DIR")
    }
    for line in startNotes(options) { printError(line) }
    var openAPIDocument: OpenAPIDocument?
    // With --openapi, what a reload of the fixtures folder gets before it is served: the folder's stubs
    // flagged by --validate-responses.
    var adjustReload: (@Sendable (FixtureSet) -> FixtureSet)?
    if let spec = options.openAPISpec {
      // --openapi: the fixtures folder's stubs (when there is one) first; the document answers the rest.
      if !FileManager.default.fileExists(atPath: options.fixturesDirectory) { fixtures = FixtureSet() }
      let document: OpenAPIDocument
      do {
        document = try OpenAPIDocument.load(path: spec)
      } catch {
        printError("mockserver: \(error)")
        return 1
      }
      openAPIDocument = document
      for warning in OpenAPIExampleCheck.warnings(document) { printError("mockserver: warning: \(warning)") }
      if options.validateResponses {
        let (flagged, findings) = ResponseValidation.flag(fixtures.stubs, document: document)
        fixtures.stubs = flagged
        for finding in findings { printError("contract violation: \(finding)") }
        adjustReload = { reloaded in
          var set = reloaded
          let (flagged, findings) = ResponseValidation.flag(set.stubs, document: document)
          set.stubs = flagged
          for finding in findings { printError("contract violation: \(finding)") }
          return set
        }
      }
    }
    if fixtures.hasErrors {
      printError(fixtures.report())
      if !options.skipInvalid {
        printError(
          "mockserver: \(fixtures.errors.count) error(s) in \(options.fixturesDirectory); fix them or pass --skip-invalid"
        )
        return 1
      }
      printError("mockserver: --skip-invalid: starting with \(fixtures.stubs.count) valid stub(s)")
    } else if !fixtures.warnings.isEmpty {
      printError(fixtures.report())
    }
    var serviceConfiguration = MockServiceConfiguration()
    serviceConfiguration.adminResponseCheck = AdminResponseCheck.fromEnvironment
    serviceConfiguration.fixturesDirectory = options.fixturesDirectory
    serviceConfiguration.journalCapacity = options.journalSize
    serviceConfiguration.journalMaxBytes = options.journalMaxBytes
    serviceConfiguration.seed = options.seed
    serviceConfiguration.globalDelayMilliseconds = options.globalDelayMilliseconds
    serviceConfiguration.templating = options.templating
    serviceConfiguration.stateExpirationSeconds = options.stateExpirationSeconds
    serviceConfiguration.maxHoldMilliseconds = options.maxHoldMilliseconds
    serviceConfiguration.maxWebSocketMessageBytes = options.maxWebSocketMessageBytes
    serviceConfiguration.webSocketAnyPath = options.webSocketAnyPath
    serviceConfiguration.logLevel = options.quiet ? .quiet : options.verbose ? .verbose : .normal
    serviceConfiguration.logJSON = options.logJSON
    serviceConfiguration.adminEnabled = options.adminEnabled
    serviceConfiguration.adminToken = options.adminToken
    serviceConfiguration.stateStore = options.stateStore
    serviceConfiguration.sessionHeader = options.sessionHeader
    serviceConfiguration.sessionIdleSeconds = options.sessionIdleSeconds
    serviceConfiguration.adminAllowsRemote =
      options.adminHost.map { !["127.0.0.1", "::1", "localhost"].contains($0) } ?? false
    serviceConfiguration.adminAllowedHosts = options.adminHost.map { [$0] } ?? []
    serviceConfiguration.adminAllowedOrigins = options.adminAllowedOrigins
    configuration.maxHoldMilliseconds = options.maxHoldMilliseconds
    configuration.shutdownGraceMilliseconds = options.shutdownGraceMilliseconds
    if let openAPIDocument {
      OpenAPIServing.configure(&serviceConfiguration, document: openAPIDocument, options: options)
    }
    switch RecordingSession.configuration(options) {
    case .success(let proxy): serviceConfiguration.proxy = proxy
    case .failure(let message):
      printError("mockserver: \(message)")
      return 2
    }
    if options.command == .record { serviceConfiguration.fixturesDirectory = nil }
    serviceConfiguration.stubCORS = options.stubCORS
    serviceConfiguration.gzipDisabled = options.gzipDisabled
    let service = MockService(configuration: serviceConfiguration, fixtures: fixtures)
    let server = HTTPServer(configuration: configuration, responder: service)
    var tls: TLSSetup.Prepared?
    if options.httpsPort != nil {
      do {
        tls = try TLSSetup.prepare(options)
      } catch {
        printError("mockserver: cannot start HTTPS: \(error)")
        return 3
      }
    }
    // SIGINT and SIGTERM are handled from here on, before anything announces readiness: a signal sent
    // right after the `listening on` line was lost while the handlers were not yet installed.
    let done = DispatchSemaphore(value: 0)
    guard let signals = TerminationSignals.install({ done.signal() }) else {
      printError("mockserver: cannot start: no descriptor left for the signal pipe")
      return 3
    }
    defer { signals.cancel() }
    do {
      try server.start()
    } catch {
      printError("mockserver: cannot start: \(error)")
      return 3
    }
    if let limit = HTTPServer.openFileLimitBelow(maxConnections: options.maxConnections) {
      printError(
        "mockserver: warning: --max-connections \(options.maxConnections) is above the open-file limit (\(limit)); "
          + "past about \(max(0, limit - HTTPServer.reservedDescriptors)) connections new ones get 503 (raise it with ulimit -n)"
      )
    }
    // The portable platform throughout: with poll event loops the folder is compared every 250 ms
    // instead of watched through the system's change notifications.
    let polls = server.eventLoopBackend == .poll
    let watcher =
      adjustReload.map {
        FixtureWatcher(directory: options.fixturesDirectory, service: service, polls: polls, adjust: $0)
      } ?? FixtureWatcher(directory: options.fixturesDirectory, service: service, polls: polls)
    // With --openapi the folder is watched when there is one (it was not watched at all before).
    if options.watch, options.command != .record,
      options.openAPISpec == nil || FileManager.default.fileExists(atPath: options.fixturesDirectory)
    {
      watcher.start(loaded: fixtures)
    }
    // The store and the watcher keep what they need; the load's file stamps (a dictionary over every
    // mapping file) and the freed pages of the load go back.
    fixtures = FixtureSet()
    ProcessResources.releaseFreedMemory()
    RecordingSession.startProgress(service, options)
    service.onShutdownRequested = { done.signal() }
    print("listening on \(server.baseURL)")
    if let tls, !startHTTPS(server, tls, port: options.httpsPort ?? 0) {
      server.shutdown(graceful: false)
      return 3
    }
    fflush(nil)
    done.wait()
    watcher.stop()
    printError("mockserver: shutting down")
    let cut = server.shutdown(graceful: true)
    if cut > 0 {
      printError(
        "mockserver: \(cut) connection(s) still busy after the \(configuration.shutdownGraceMilliseconds) ms grace were closed"
      )
    }
    service.logger.flush()
    // With --state-store the runtime stubs live in the store, not in this process.
    let unsaved = options.stateStore == nil ? service.store.runtimeStubs.count : 0
    let edits = service.store.unsavedFileEditCount
    if unsaved + edits > 0 {
      printError(
        "mockserver: \(unsaved) runtime stub(s) and \(edits) runtime edit(s) of file stubs were not saved "
          + "and are lost (POST /__admin/mappings/save writes them to \(options.fixturesDirectory)/mappings)")
    }
    if let tls, tls.isGenerated {
      // The certificate and the private folder made for it.
      try? FileManager.default.removeItem(atPath: tls.trustPath)
      try? FileManager.default.removeItem(atPath: (tls.trustPath as NSString).deletingLastPathComponent)
    }
    return RecordingSession.finish(service, options)
  }

  /// What the start says about WireMock flags that are accepted but do nothing here.
  static func startNotes(_ options: CommandLineOptions) -> [String] {
    var notes: [String] = []
    if options.asyncResponseFlagGiven {
      notes.append(
        "mockserver: --async-response-enabled has no effect: responses are always asynchronous here")
    }
    return notes
  }
}

extension MockServerMain {
  /// Adds the HTTPS listener (`--https-port`) and prints `listening on https://HOST:PORT` and
  /// `certificate: PATH`. Returns false (after printing why) when the port cannot be bound.
  static func startHTTPS(_ server: HTTPServer, _ tls: TLSSetup.Prepared, port: Int) -> Bool {
    do {
      let port = try server.addHTTPSListener(port: port, context: tls.context)
      let host = server.boundAddress
      print("listening on https://\(host.contains(":") ? "[\(host)]" : host):\(port)")
      print("certificate: \(tls.trustPath)")
      return true
    } catch {
      printError("mockserver: cannot start HTTPS: \(error)")
    }
    return false
  }

  /// `mockserver cert [--out DIR]`: exit code 0, or 3 when the files cannot be written.
  static func writeCertificates(_ options: CommandLineOptions) -> Int32 {
    do {
      for line in try TLSSetup.writeCertificateSet(to: options.certOutputDirectory) { print(line) }
      return 0
    } catch {
      printError("mockserver: cert: \(error)")
      return 3
    }
  }
}
