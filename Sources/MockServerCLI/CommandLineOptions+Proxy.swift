import MockServer

/// The proxy and recording options (docs/cli.md, docs/recording.md).
public struct ProxyOptions: Sendable, Equatable {
  /// `--proxy-timeout-ms N` (default 30 000): longest wait for an upstream without progress.
  public var timeoutMilliseconds = 30_000
  /// `--proxy-ca FILE`: extra CA certificates (PEM) trusted for upstream HTTPS.
  public var caFile: String?
  /// `--proxy-insecure`: accept any upstream certificate.
  public var insecure = false
  /// `--proxy-all URL`: forward what no stub matches to URL.
  public var proxyAll: String?
  /// `--record-mappings`: record what is proxied and write it to the fixtures folder on exit.
  public var recordMappings = false
  /// `record --upstream URL`.
  public var upstream: String?
  /// `record --out DIR` (default `Fixtures`).
  public var outputDirectory: String?
  /// `--match-headers H,...`: request headers the recorded stubs match on.
  public var matchHeaders: [String] = []
  /// `--redact name,...`: headers and JSON fields replaced by a placeholder in written fixtures (on top of
  /// Authorization, Cookie, Set-Cookie and Proxy-Authorization).
  public var redact: [String] = []
  /// `--no-scenarios`: requests that got different answers keep the first instead of becoming a scenario
  /// (WireMock's `repeatsAsScenarios: false`).
  public var noScenarios = false

  /// Defaults.
  public init() {}
}

extension CommandLineOptions {
  /// Parses one proxy or recording option; false when `name` is not one.
  mutating func parseProxyOption(
    _ name: String, value: (String) throws(UsageError) -> String,
    integer: (String, ClosedRange<Int>) throws(UsageError) -> Int
  ) throws(UsageError) -> Bool {
    func list(_ text: String) -> [String] {
      text.split(separator: ",").map { String($0).trimmingOWS() }.filter { !$0.isEmpty }
    }
    switch name {
    case "--proxy-timeout-ms": proxy.timeoutMilliseconds = try integer(name, 1...3_600_000)
    case "--proxy-ca": proxy.caFile = try value(name)
    case "--proxy-insecure": proxy.insecure = true
    case "--proxy-all":
      let url = try value(name)
      if let problem = ProxyDefinition.problem(baseURL: url) {
        throw UsageError(
          description: "--proxy-all expects an http:// or https:// base URL, got '\(url)': \(problem)")
      }
      proxy.proxyAll = url
    case "--record-mappings": proxy.recordMappings = true
    case "--upstream" where command == .record:
      let url = try value(name)
      if let problem = ProxyDefinition.problem(baseURL: url) {
        throw UsageError(
          description: "--upstream expects an http:// or https:// base URL, got '\(url)': \(problem)")
      }
      proxy.upstream = url
    case "--out" where command == .record:
      proxy.outputDirectory = try value(name)
      if proxy.outputDirectory?.isEmpty ?? true { throw UsageError(description: "--out needs a folder") }
    case "--match-headers":
      let names = list(try value(name))
      if let bad = names.first(where: { !$0.utf8.allSatisfy(Self.isTokenByte) }) {
        throw UsageError(description: "--match-headers expects header names, got '\(bad)'")
      }
      proxy.matchHeaders += names
    case "--redact": proxy.redact += list(try value(name))
    case "--no-scenarios": proxy.noScenarios = true
    default: return false
    }
    return true
  }

  /// `record` needs `--upstream`.
  func validateProxy() throws(UsageError) {
    if command == .record, proxy.upstream == nil {
      throw UsageError(description: "record needs --upstream URL (the API to record)")
    }
  }

  /// A token character (RFC 9110 §5.6.2).
  static func isTokenByte(_ b: UInt8) -> Bool {
    switch b {
    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
      UInt8(ascii: "0")...UInt8(ascii: "9"):
      return true
    default: return Array("!#$%&'*+-.^_`|~".utf8).contains(b)
    }
  }
}
