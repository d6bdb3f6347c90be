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
        default: throw CommandLineOptions.UsageError(description: "import expects openapi SPEC or pact FILE...")
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

    init(_ arguments: [String], valued: Set<String>, flags allowed: Set<String>) throws(CommandLineOptions.UsageError) {
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
    let a = try Arguments(arguments, valued: ["--out", "--seed"], flags: [])
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
      for operation in generated {
        guard !operation.mappings.isEmpty else {
          print("skipped \(operation.name): it declares no responses")
          continue
        }
        let file = folder + "/" + operation.name + ".json"
        try Data((operation.file.serialized(pretty: true) + "\n").utf8).write(to: URL(fileURLWithPath: file))
        print("wrote \(file) (\(operation.mappings.count) stub\(operation.mappings.count == 1 ? "" : "s"))")
        total += operation.mappings.count
      }
      print("\(document.title): \(generated.count) operation\(generated.count == 1 ? "" : "s"), \(total) stubs")
    } catch {
      MockServerMain.printError("mockserver: cannot write \(folder): \(error.localizedDescription)")
      return 3
    }
    return 0
  }

  /// The stubs `--openapi SPEC` serves, parsed like fixture files (file `openapi:<name>`).
  package static func openAPIFixtures(_ spec: String, seed: UInt64) -> Result<(OpenAPIDocument, FixtureSet), OpenAPILoadError> {
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
    let fixtures = FixtureLoader.load(directory: options.fixturesDirectory)
    let findings = OpenAPILinter(document: document).check(fixtures.stubs)
    let problems = fixtures.problems + findings
    let checked = fixtures.stubs.count - findings.filter { !$0.isError && $0.message.hasSuffix("not checked") }.count
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

  // MARK: - Pact and verify (below)

  static func importPact(_ arguments: [String]) throws(CommandLineOptions.UsageError) -> Int32 {
    throw CommandLineOptions.UsageError(description: "import pact is not available yet")
  }

  static func exportPact(_ arguments: [String]) throws(CommandLineOptions.UsageError) -> Int32 {
    throw CommandLineOptions.UsageError(description: "export pact is not available yet")
  }

  static func verify(_ arguments: [String]) throws(CommandLineOptions.UsageError) -> Int32 {
    throw CommandLineOptions.UsageError(description: "verify is not available yet")
  }
}
