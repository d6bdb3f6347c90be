import Foundation
import MockServer
import Synchronization

/// The command line's side of proxying and recording: `mockserver record`, `--proxy-all`,
/// `--record-mappings` and the `--proxy-*` settings (docs/recording.md).
enum RecordingSession {
  /// True when the run records from the start and writes fixtures on exit.
  static func records(_ options: CommandLineOptions) -> Bool {
    options.command == .record || options.proxy.recordMappings
  }

  /// The upstream settings for `options`, or a usage message (an unreadable `--proxy-ca`).
  static func configuration(_ options: CommandLineOptions) -> Result<ProxyConfiguration, UpstreamFailure> {
    var proxy = ProxyConfiguration()
    proxy.timeoutMilliseconds = options.proxy.timeoutMilliseconds
    proxy.caFile = options.proxy.caFile
    proxy.insecure = options.proxy.insecure
    proxy.maxBodyBytes = options.maxBodyBytes
    proxy.proxyAllBaseURL = options.command == .record ? options.proxy.upstream : options.proxy.proxyAll
    proxy.recordFromStart = records(options)
    // An unreadable --proxy-ca is a usage error now rather than a 502 later (the system trust store
    // itself is only loaded on the first HTTPS exchange).
    do {
      if let caFile = proxy.caFile { _ = try UpstreamTLSContext(caFile: caFile, insecure: proxy.insecure) }
    } catch {
      return .failure(UpstreamFailure(message: "cannot use --proxy-ca: \(error)"))
    }
    return .success(proxy)
  }

  /// Where the fixtures go: `record --out DIR` (default Fixtures) or the fixtures folder.
  static func outputDirectory(_ options: CommandLineOptions) -> String {
    options.command == .record ? options.proxy.outputDirectory ?? "Fixtures" : options.fixturesDirectory
  }

  /// Prints a progress line to standard error for each exchange recorded.
  static func startProgress(_ service: MockService, _ options: CommandLineOptions) {
    guard records(options) else { return }
    if options.command == .record {
      print(
        "recording \(options.proxy.upstream ?? "") into \(outputDirectory(options)) (Ctrl-C to stop and write the fixtures)"
      )
    }
    let recorder = service.responder.forwarder.recorder
    let folder = RecordingSession.folder(options)
    let spec = spec(options)
    recorder.onCapture { count, exchange in
      // Written before the progress line: a line seen means the exchange is on disk.
      let stubs = RecordedStubBuilder.stubs(
        from: recorder.captured, spec: spec, makeID: { UUID().uuidString.lowercased() }
      ).stubs
      do {
        try folder.update(stubs)
      } catch {
        MockServerMain.printError(
          "mockserver: cannot write the recording to \(outputDirectory(options)): \(error)")
      }
      MockServerMain.printError(
        "recorded \(count) request(s): \(exchange.request.method.rawValue) \(exchange.request.head.originForm) → \(exchange.response.status.code)"
      )
    }
  }

  /// The session's output folder (one per process: its files are rewritten, never duplicated).
  private static let sessionFolder = Mutex<RecordingFolder?>(nil)

  static func folder(_ options: CommandLineOptions) -> RecordingFolder {
    sessionFolder.withLock { folder in
      if let folder { return folder }
      let made = RecordingFolder(directory: outputDirectory(options))
      folder = made
      return made
    }
  }

  /// The spec the written fixtures follow: match on `--match-headers`, redact the default headers and
  /// `--redact` names.
  static func spec(_ options: CommandLineOptions) -> RecordingSpec {
    var spec = RecordingSpec()
    spec.persist = false
    spec.captureHeaders = options.proxy.matchHeaders.map { ($0, false) }
    spec.redactedHeaders = RecordingSpec.defaultRedactedHeaders.union(
      options.proxy.redact.map { $0.lowercased() })
    spec.redactedFields = Set(options.proxy.redact)
    spec.repeatsAsScenarios = !options.proxy.noScenarios
    return spec
  }

  /// The summary line of a recording's redaction, checked on the files themselves: `redaction: the N
  /// credential value(s) seen (Authorization header, …) appear in none of the M file(s) written`, or a
  /// warning naming each file that still holds one (a binary body, a URL).
  static func redactionSummary(
    _ written: [String], in directory: String, secrets: [RecordedStubBuilder.Secret]
  )
    -> String
  {
    var holding: [String] = []
    for path in written {
      guard let data = FileManager.default.contents(atPath: directory + "/" + path) else { continue }
      let bytes = [UInt8](data)
      for secret in secrets where bytes.firstRange(of: Array(secret.value.utf8)) != nil {
        holding.append("\(directory)/\(path) (a value of the \(secret.origin))")
        break
      }
    }
    let origins = Array(Set(secrets.map(\.origin))).sorted()
    guard holding.isEmpty else {
      return "warning: redaction: credential values are still in " + holding.joined(separator: ", ")
        + ": edit them out before committing"
    }
    return "redaction: the \(secrets.count) credential value(s) seen"
      + (origins.isEmpty ? "" : " (\(origins.joined(separator: ", ")))")
      + " appear in none of the \(written.count) file(s) written"
  }

  /// After the server stopped: writes what was recorded and prints the files and redactions. Returns the
  /// exit code (0, or 3 when the files cannot be written).
  static func finish(_ service: MockService, _ options: CommandLineOptions) -> Int32 {
    guard records(options) else { return 0 }
    let recorder = service.responder.forwarder.recorder
    let exchanges = recorder.captured
    let directory = outputDirectory(options)
    guard !exchanges.isEmpty else {
      print("recorded nothing: no file written")
      return 0
    }
    let spec = Self.spec(options)
    let recorded = RecordedStubBuilder.stubs(
      from: exchanges, spec: spec, makeID: { UUID().uuidString.lowercased() })
    let stubs = recorded.stubs
    do {
      let written = try folder(options).update(stubs)
      print("recorded \(exchanges.count) request(s) as \(stubs.count) stub(s) in \(directory):")
      for path in written { print("  wrote \(directory)/\(path)") }
      for line in recorded.notes { print("note: \(line)") }
      if recorded.redactions.isEmpty {
        print(
          "redacted: nothing (no Authorization, Cookie, Set-Cookie, Proxy-Authorization or --redact names seen)"
        )
      } else {
        print("redacted (written as \(RecordingSpec.placeholder)):")
        for line in recorded.redactions { print("  \(line)") }
      }
      print(
        redactionSummary(
          written, in: directory, secrets: RecordedStubBuilder.secretValues(exchanges, spec: spec)))
      for line in RecordedStubBuilder.truncationNotes(exchanges, spec: spec) {
        print("warning: \(line)")
      }
      print("next: mockserver lint \(directory)")
      return 0
    } catch {
      MockServerMain.printError("mockserver: cannot write the recording to \(directory): \(error)")
      return 3
    }
  }
}
