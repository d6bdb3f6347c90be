import Contracts
import Foundation
import Mappings
import MockJSON
import MockServer

/// The contract commands: `import openapi|pact`, `export pact`, `verify`, and the `--openapi` parts of
/// `lint` and `serve`. See docs/contracts.md.
package enum ContractCommands {
  /// The first arguments that start a contract command.
  static let commands: Set<String> = ["import", "export", "verify"]

  /// Runs `import …`, `export …` or `verify …`; returns the exit code (0 ok, 1 failed check, 2 usage,
  /// 3 cannot read or write).
  static func run(_ arguments: [String]) -> Int32 {
    var rest = arguments[...]
    let command = rest.popFirst() ?? ""
    do {
      switch command {
      case "import":
        switch rest.popFirst() {
        case "openapi": return try importOpenAPI(Array(rest))
        case "pact": return try importPact(Array(rest))
        default:
          throw CommandLineOptions.UsageError(description: "import expects openapi SPEC or pact FILE...")
        }
      case "export":
        guard rest.popFirst() == "pact" else {
          throw CommandLineOptions.UsageError(description: "export expects pact --consumer C --provider P")
        }
        return try exportPact(Array(rest))
      case "verify": return try verify(Array(rest))
      default: throw CommandLineOptions.UsageError(description: "unknown command '\(command)'")
      }
    } catch {
      MockServerMain.printError("mockserver: \(error)")
      return 2
    }
  }

  /// Splits `--name value` and `--name=value` options from positional arguments.
  struct Arguments {
    var positional: [String] = []
    var values: [String: [String]] = [:]
    var flags: Set<String> = []

    init(_ arguments: [String], valued: Set<String>, flags allowed: Set<String>) throws(CommandLineOptions
      .UsageError)
    {
      var rest = arguments[...]
      while let argument = rest.popFirst() {
        var name = argument
        var inline: String?
        if argument.hasPrefix("--"), let eq = argument.firstIndex(of: "=") {
          name = String(argument[..<eq])
          inline = String(argument[argument.index(after: eq)...])
        }
        if valued.contains(name) {
          guard let v = inline ?? rest.popFirst() else {
            throw CommandLineOptions.UsageError(description: "\(name) needs a value")
          }
          values[name, default: []].append(v)
        } else if allowed.contains(name) {
          flags.insert(name)
        } else if argument.hasPrefix("-") && argument != "-" {
          throw CommandLineOptions.UsageError(description: "unknown option '\(argument)' (see --help)")
        } else {
          positional.append(argument)
        }
      }
    }

    func value(_ name: String) -> String? { values[name]?.last }
  }

  static func seed(_ a: Arguments) throws(CommandLineOptions.UsageError) -> UInt64 {
    guard let text = a.value("--seed") else { return 1 }
    guard let n = UInt64(text) else {
      throw CommandLineOptions.UsageError(description: "--seed expects an unsigned integer, got '\(text)'")
    }
    return n
  }

  // MARK: - OpenAPI

  /// `mockserver import openapi SPEC [--out DIR] [--seed N]`: writes `DIR/mappings/<operation>.json`.
  static func importOpenAPI(_ arguments: [String]) throws(CommandLineOptions.UsageError) -> Int32 {
    let a = try Arguments(arguments, valued: ["--out", "--seed"], flags: ["--force"])
    guard a.positional.count == 1 else {
      throw CommandLineOptions.UsageError(description: "import openapi expects one SPEC file")
    }
    let document: OpenAPIDocument
    do {
      document = try OpenAPIDocument.load(path: a.positional[0])
    } catch {
      MockServerMain.printError("mockserver: \(error)")
      return 1
    }
    let out = a.value("--out") ?? "Fixtures"
    let generated = OpenAPIStubGenerator(document: document, seed: try seed(a)).generate()
    let folder = out + "/mappings"
    do {
      try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      var total = 0
      var kept: [String] = []
      for operation in generated {
        guard !operation.mappings.isEmpty else {
          print("skipped \(operation.name): it declares no responses")
          continue
        }
        let file = folder + "/" + operation.name + ".json"
        let content = Data((operation.file.serialized(pretty: true) + "\n").utf8)
        // A file that differs from what this import writes was edited (by hand, or by an import of
        // another version of the document): it is kept unless --force says otherwise.
        if let existing = FileManager.default.contents(atPath: file), existing != content,
          !a.flags.contains("--force")
        {
          kept.append(file)
          continue
        }
        try content.write(to: URL(fileURLWithPath: file))
        print("wrote \(file) (\(operation.mappings.count) stub\(operation.mappings.count == 1 ? "" : "s"))")
        total += operation.mappings.count
      }
      print(
        "\(document.title): \(generated.count) operation\(generated.count == 1 ? "" : "s"), \(total) stubs")
      if !kept.isEmpty {
        for file in kept {
          MockServerMain.printError(
            "mockserver: \(file) differs from what import would write (changed since it was written); not overwritten"
          )
        }
        MockServerMain.printError(
          "mockserver: \(kept.count) changed file(s) kept; pass --force to overwrite them with the generated stubs"
        )
        return 1
      }
    } catch {
      MockServerMain.printError("mockserver: cannot write \(folder): \(error.localizedDescription)")
      return 3
    }
    return 0
  }

  /// The stubs `--openapi SPEC` serves, parsed like fixture files (file `openapi:<name>`).
  package static func openAPIFixtures(_ spec: String, seed: UInt64) -> Result<
    (OpenAPIDocument, FixtureSet), OpenAPILoadError
  > {
    let document: OpenAPIDocument
    do {
      document = try OpenAPIDocument.load(path: spec)
    } catch {
      return .failure(error)
    }
    let context = StubParsingContext(makeID: { UUID().uuidString.lowercased() })
    var stubs: [StubMapping] = []
    var problems: [FixtureProblem] = []
    for operation in OpenAPIStubGenerator(document: document, seed: seed).generate() {
      for (k, mapping) in operation.mappings.enumerated() {
        let (stub, found) = StubParser.parse(
          mapping, file: "openapi:\(operation.name)", location: "$.mappings[\(k)]", context: context)
        problems += found
        if let stub { stubs.append(stub) }
      }
    }
    return .success((document, FixtureSet(stubs: stubs, problems: problems)))
  }

  /// `mockserver lint --openapi SPEC [DIR]`: fixture problems plus contract findings; exit 1 on any error.
  static func lintOpenAPI(_ options: CommandLineOptions, spec: String) -> Int32 {
    let document: OpenAPIDocument
    do {
      document = try OpenAPIDocument.load(path: spec)
    } catch {
      MockServerMain.printError("mockserver: \(error)")
      return 1
    }
    for warning in OpenAPIExampleCheck.warnings(document) {
      MockServerMain.printError("\(spec): warning: \(warning)")
    }
    let fixtures = FixtureLoader.load(directory: options.fixturesDirectory)
    let findings = OpenAPILinter(document: document).check(fixtures.stubs)
    let problems = fixtures.problems + findings
    let checked =
      fixtures.stubs.count - findings.filter { !$0.isError && $0.message.hasSuffix("not checked") }.count
    let report =
      FixtureLoader.report(problems)
      + " (\(checked) of \(fixtures.stubs.count) stubs checked against \(document.title))"
    if problems.contains(where: \.isError) {
      MockServerMain.printError(report)
      return 1
    }
    print("\(options.fixturesDirectory): " + report)
    return 0
  }

  // MARK: - Pact

  /// `mockserver import pact FILE... [--out DIR] [--lenient]`: writes
  /// `DIR/mappings/pact-<consumer>-<provider>.json`. A rule or generator MockServer cannot honour fails the
  /// file, unless `--lenient` drops it with a warning naming it.
  static func importPact(_ arguments: [String]) throws(CommandLineOptions.UsageError) -> Int32 {
    let a = try Arguments(arguments, valued: ["--out"], flags: ["--lenient"])
    guard !a.positional.isEmpty else {
      throw CommandLineOptions.UsageError(description: "import pact expects one or more pact FILEs")
    }
    let folder = (a.value("--out") ?? "Fixtures") + "/mappings"
    var status: Int32 = 0
    for path in a.positional {
      guard let data = FileManager.default.contents(atPath: path) else {
        MockServerMain.printError("mockserver: \(path): cannot read the file")
        status = 1
        continue
      }
      do {
        let pact = try JSONValue.parse(bytes: Array(data))
        let (mappings, skipped, warnings) = try PactImporter.mappings(
          from: pact, file: (path as NSString).lastPathComponent, lenient: a.flags.contains("--lenient"))
        for warning in warnings { MockServerMain.printError("mockserver: warning: \(warning)") }
        let consumer = pact["consumer"]?["name"]?.stringValue ?? "consumer"
        let provider = pact["provider"]?["name"]?.stringValue ?? "provider"
        let file = folder + "/" + FixtureFileName.make("pact-\(consumer)-\(provider)") + ".json"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let json = JSONValue.object(JSONObject(pairs: [("mappings", .array(mappings))]))
        try Data((json.serialized(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: file))
        let interactions = pact["interactions"]?.arrayValue?.count ?? 0
        print(
          "wrote \(file) (\(mappings.count) stubs from \(interactions) interactions, v\(PactImporter.specificationVersion(pact))"
            + (skipped > 0 ? ", \(skipped) non-HTTP skipped" : "") + ")")
      } catch let error as JSONParseError {
        MockServerMain.printError("mockserver: \(path): \(error)")
        status = 1
      } catch let error as PactImportError {
        MockServerMain.printError("mockserver: \(path): \(error)")
        status = 1
      } catch {
        MockServerMain.printError("mockserver: cannot write \(folder): \(error.localizedDescription)")
        return 3
      }
    }
    return status
  }

  /// `mockserver export pact --consumer C --provider P [--fixtures DIR] [--from-journal URL] [--out FILE]`.
  static func exportPact(_ arguments: [String]) throws(CommandLineOptions.UsageError) -> Int32 {
    let a = try Arguments(
      arguments,
      valued: [
        "--consumer", "--provider", "--fixtures", "--from-journal", "--out", "--admin-token", "--spec",
        "--redact",
      ],
      flags: [])
    guard let consumer = a.value("--consumer"), let provider = a.value("--provider") else {
      throw CommandLineOptions.UsageError(
        description: "export pact needs --consumer NAME and --provider NAME")
    }
    guard a.positional.isEmpty else {
      throw CommandLineOptions.UsageError(
        description: "unexpected argument '\(a.positional[0])' (see --help)")
    }
    var specification = 4
    if let spec = a.value("--spec") {
      switch spec.lowercased() {
      case "v3", "3": specification = 3
      case "v4", "4": specification = 4
      default:
        throw CommandLineOptions.UsageError(description: "--spec expects v3 or v4, got '\(spec)'")
      }
    }
    let options = PactExportOptions(
      specification: specification, redactedNames: Set(a.values["--redact"] ?? []),
      generator: "mockserver \(MockServerInfo.version)")
    let pact: JSONValue
    if let server = a.value("--from-journal") {
      var headers: [(String, String)] = []
      if let token = a.value("--admin-token") { headers.append(("Authorization", "Bearer \(token)")) }
      let base = server.hasSuffix("/") ? String(server.dropLast()) : server
      let reply = UpstreamClient.send(
        base: base, ExampleRequest(method: "GET", url: "/__admin/requests", headers: headers))
      guard case .success(let (status, _, body)) = reply, status == 200,
        let journal = try? JSONValue.parse(bytes: body)
      else {
        MockServerMain.printError("mockserver: cannot read the journal at \(base)/__admin/requests")
        return 3
      }
      pact = PactExporter.pact(consumer: consumer, provider: provider, journal: journal, options: options)
    } else {
      let directory = a.value("--fixtures") ?? "Fixtures"
      let fixtures = FixtureLoader.load(directory: directory)
      if fixtures.hasErrors {
        MockServerMain.printError(fixtures.report())
        return 1
      }
      let (document, skipped) = PactExporter.pact(
        consumer: consumer, provider: provider, stubs: fixtures.stubs, options: options)
      for (name, reason) in skipped { MockServerMain.printError("mockserver: skipped \(name): \(reason)") }
      pact = document
    }
    let out = a.value("--out") ?? "pacts/\(consumer)-\(provider).json"
    do {
      let folder = (out as NSString).deletingLastPathComponent
      if !folder.isEmpty {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
      }
      try Data((pact.serialized(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: out))
    } catch {
      MockServerMain.printError("mockserver: cannot write \(out): \(error.localizedDescription)")
      return 3
    }
    print(
      "wrote \(out) (\(pact["interactions"]?.arrayValue?.count ?? 0) interactions, Pact v\(specification))")
    return 0
  }

  // MARK: - Drift

  /// `verify --pact FILE… --upstream URL [--provider-states-setup-url URL]`: each interaction replayed
  /// against the provider and its answer compared as Pact's verifier does; the same report, JUnit file and
  /// exit codes as the fixture drift check (3 when a pact cannot be read).
  static func verifyPacts(
    _ files: [String], upstream: String, setup: String?, extraHeaders: [(String, String)], timeout: Int,
    junit: String?
  ) -> Int32 {
    let base = upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream
    var results: [DriftResult] = []
    for file in files {
      let cases: [PactVerification.Case]
      do {
        guard let data = FileManager.default.contents(atPath: file) else {
          MockServerMain.printError("mockserver: \(file): cannot read the file")
          return 3
        }
        cases = try PactVerification.cases(from: try JSONValue.parse(bytes: Array(data)))
      } catch {
        MockServerMain.printError("mockserver: \(file): \(error)")
        return 3
      }
      let name = (file as NSString).lastPathComponent
      for c in cases {
        guard var request = c.request, c.skipped == nil else {
          results.append(
            DriftResult(file: name, name: c.description, request: c.request, skipped: c.skipped, findings: [])
          )
          continue
        }
        if !c.providerStates.isEmpty {
          guard let setup else {
            results.append(
              DriftResult(
                file: name, name: c.description, request: request,
                skipped: "it needs provider states (--provider-states-setup-url URL sets them up)",
                findings: []))
            continue
          }
          var failed: String?
          for state in c.providerStates {
            guard let url = URL(string: setup), let host = url.host else {
              failed = "not a URL: \(setup)"
              break
            }
            let origin = "\(url.scheme ?? "http")://\(host)" + (url.port.map { ":\($0)" } ?? "")
            let call = ExampleRequest(
              method: "POST", url: url.path.isEmpty ? "/" : url.path,
              headers: [("Content-Type", "application/json")], body: PactVerification.stateSetupBody(state))
            switch UpstreamClient.send(base: origin, call, timeoutMilliseconds: timeout) {
            case .success(let (status, _, _)) where status < 300: continue
            case .success(let (status, _, _)): failed = "the state set-up answered \(status)"
            case .failure(let message): failed = "the state set-up failed: \(message.description)"
            }
          }
          if let failed {
            results.append(
              DriftResult(
                file: name, name: c.description, request: request, skipped: nil,
                findings: [DriftFinding(kind: .unreachable, path: "provider state", message: failed)]))
            continue
          }
        }
        for (k, v) in extraHeaders {
          request.headers.removeAll { $0.0.lowercased() == k.lowercased() }
          request.headers.append((k, v))
        }
        switch UpstreamClient.send(base: base, request, timeoutMilliseconds: timeout) {
        case .success(let (status, headers, body)):
          results.append(
            DriftResult(
              file: name, name: c.description, request: c.request, skipped: nil,
              findings: PactVerification.compare(c, status: status, headers: headers, body: body)))
        case .failure(let message):
          results.append(
            DriftResult(
              file: name, name: c.description, request: c.request, skipped: nil,
              findings: [DriftFinding(kind: .unreachable, path: "upstream", message: message.description)]))
        }
      }
    }
    return report(results, upstream: base, junit: junit)
  }

  /// Prints the drift report, writes the JUnit file when asked; the exit code (0, 1 on drift, 3 when the
  /// file cannot be written).
  static func report(_ results: [DriftResult], upstream base: String, junit: String?) -> Int32 {
    print(DriftReport.text(results, upstream: base))
    if let junit {
      do {
        try Data(DriftReport.junit(results).utf8).write(to: URL(fileURLWithPath: junit))
      } catch {
        MockServerMain.printError("mockserver: cannot write \(junit): \(error.localizedDescription)")
        return 3
      }
    }
    return results.contains(where: \.drifted) ? 1 : 0
  }

  /// `mockserver verify --upstream URL [--fixtures DIR] [--only NAME]... [--junit FILE] [--header 'K: V']...
  /// [--timeout-ms N]`.
  /// Exit 0 when nothing drifted, 1 on drift or an unreachable provider, 3 when the fixtures cannot be
  /// loaded or the report cannot be written.
  static func verify(_ arguments: [String]) throws(CommandLineOptions.UsageError) -> Int32 {
    let a = try Arguments(
      arguments,
      valued: [
        "--upstream", "--fixtures", "--only", "--junit", "--header", "--timeout-ms", "--pact",
        "--provider-states-setup-url",
      ],
      flags: ["--strict", "--allow-unsafe"])
    guard let upstream = a.value("--upstream") else {
      throw CommandLineOptions.UsageError(description: "verify needs --upstream URL (the real provider)")
    }
    guard a.positional.isEmpty else {
      throw CommandLineOptions.UsageError(
        description: "unexpected argument '\(a.positional[0])' (see --help)")
    }
    var timeout = 20_000
    if let text = a.value("--timeout-ms") {
      guard let n = Int(text), n > 0 else {
        throw CommandLineOptions.UsageError(
          description: "--timeout-ms expects a positive integer, got '\(text)'")
      }
      timeout = n
    }
    var extraHeaders: [(String, String)] = []
    for h in a.values["--header"] ?? [] {
      guard let colon = h.firstIndex(of: ":") else {
        throw CommandLineOptions.UsageError(description: "--header expects 'Name: value'")
      }
      extraHeaders.append(
        (
          String(h[..<colon]).trimmingCharacters(in: .whitespaces),
          String(h[h.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        ))
    }
    if let auth = ProcessInfo.processInfo.environment["MOCKSERVER_UPSTREAM_AUTHORIZATION"], !auth.isEmpty,
      !extraHeaders.contains(where: { $0.0.lowercased() == "authorization" })
    {
      extraHeaders.append(("Authorization", auth))
    }
    if let pactFiles = a.values["--pact"] {
      return verifyPacts(
        pactFiles, upstream: upstream, setup: a.value("--provider-states-setup-url"),
        extraHeaders: extraHeaders,
        timeout: timeout, junit: a.value("--junit"))
    }
    let directory = a.value("--fixtures") ?? "Fixtures"
    let fixtures = FixtureLoader.load(directory: directory)
    if fixtures.hasErrors {
      MockServerMain.printError(fixtures.report())
      return 3
    }
    let only = a.values["--only"] ?? []
    let named = { (stub: StubMapping, wanted: String) -> Bool in
      wanted == (stub.name ?? stub.id) || wanted == stub.id || stub.file?.hasSuffix(wanted) == true
    }
    // An --only that names no stub checks nothing: refuse it, naming what exists.
    let unknown = only.filter { wanted in !fixtures.stubs.contains { named($0, wanted) } }
    if !unknown.isEmpty {
      let names = fixtures.stubs.map { $0.name ?? $0.id }
      MockServerMain.printError(
        "mockserver: --only \(unknown.joined(separator: ", ")) names no stub in \(directory); the stubs are: "
          + (names.isEmpty ? "(none)" : names.joined(separator: ", ")))
      return 2
    }
    let strict = a.flags.contains("--strict")
    let allowUnsafe = a.flags.contains("--allow-unsafe")
    let base = upstream.hasSuffix("/") ? String(upstream.dropLast()) : upstream
    var results: [DriftResult] = []
    for stub in fixtures.stubs {
      let name = stub.name ?? stub.id
      if !only.isEmpty, !only.contains(where: { named(stub, $0) }) { continue }
      // Per-state copies made by `import pact` are checked through their stateless twin.
      if stub.scenarioName?.hasPrefix("pact:") == true { continue }
      let file = stub.file ?? "(admin)"
      guard stub.response.fault == nil else {
        results.append(
          DriftResult(file: file, name: name, request: nil, skipped: "it answers with a fault", findings: []))
        continue
      }
      var request: ExampleRequest
      switch ExampleRequest.from(stub) {
      case .success(let r): request = r
      case .failure(let e):
        results.append(
          DriftResult(
            file: file, name: name, request: nil, skipped: e.reason + " (add metadata.x-example-request)",
            findings: []))
        continue
      }
      // Only safe methods reach the real provider unless the user or the stub says otherwise.
      let safe = ["GET", "HEAD", "OPTIONS"].contains(request.method.uppercased())
      let optedIn = stub.source["x-verify"] == .bool(true) || stub.metadata?["x-verify"] == .bool(true)
      if !safe, !allowUnsafe, !optedIn {
        results.append(
          DriftResult(
            file: file, name: name, request: request,
            skipped:
              "\(request.method) changes the provider's data (--allow-unsafe or \"x-verify\": true sends it)",
            findings: []))
        continue
      }
      var sent = request
      // Upstream headers replace the fixture's, except where the stub requires the header to be absent.
      let absent = Set(
        (stub.source["request"]?["headers"]?.objectValue ?? JSONObject()).members.filter {
          $0.value["absent"] != nil
        }
        .map { $0.key.lowercased() })
      for (k, v) in extraHeaders where !absent.contains(k.lowercased()) {
        sent.headers.removeAll { $0.0.lowercased() == k.lowercased() }
        sent.headers.append((k, v))
      }
      switch UpstreamClient.send(base: base, sent, timeoutMilliseconds: timeout) {
      case .success(let (status, headers, body)):
        results.append(
          DriftResult(
            file: file, name: name, request: request, skipped: nil,
            findings: DriftChecker.compare(
              stub: stub, status: status, headers: headers, body: body, strict: strict)))
      case .failure(let message):
        results.append(
          DriftResult(
            file: file, name: name, request: request, skipped: nil,
            findings: [DriftFinding(kind: .unreachable, path: "upstream", message: message.description)]))
      }
    }
    return report(results, upstream: base, junit: a.value("--junit"))
  }
}
