import Foundation
import Testing

@testable import MockServerCLI

/// Issue 18: WireMock's start flags parse to the same meaning; unknown flags stay usage errors.
@Suite("Command line: WireMock's start flags")
struct WireMockCommandLineTests {
  @Test("each WireMock flag sets what it means")
  func wireMockFlags() throws {
    let o = try CommandLineOptions.parse([
      "--port", "0", "--https-port", "0", "--bind-address", "0.0.0.0", "--root-dir", "wm", "--verbose",
      "--global-response-templating", "--local-response-templating", "--disable-banner",
      "--max-request-journal-entries", "7", "--enable-stub-cors", "--disable-gzip", "--record-mappings",
      "--proxy-all", "https://api.example.com", "--async-response-enabled",
    ])
    #expect(o.port == 0)
    #expect(o.httpsPort == 0)
    #expect(o.host == "0.0.0.0")
    #expect(o.fixturesDirectory == "wm")
    #expect(o.fixturesDirectoryGiven)
    #expect(o.verbose)
    #expect(o.templating.global)
    #expect(o.templating.local)
    #expect(o.bannerDisabled)
    #expect(o.journalSize == 7)
    #expect(o.stubCORS)
    #expect(o.gzipDisabled)
    #expect(o.proxy.recordMappings)
    #expect(o.proxy.proxyAll == "https://api.example.com")
    #expect(o.asyncResponseFlagGiven)
    #expect(try CommandLineOptions.parse(["--no-request-journal"]).journalSize == 0)
    #expect(try CommandLineOptions.parse(["--async-response-enabled=true"]).asyncResponseFlagGiven)
    #expect(try !CommandLineOptions.parse([]).fixturesDirectoryGiven)
    #expect(MockServerMain.startNotes(o).count == 1)
    #expect(CommandLineOptions.helpText.contains("--root-dir DIR"))
    #expect(CommandLineOptions.helpText.contains("--enable-stub-cors"))
  }

  @Test("unknown flags and bad values stay usage errors")
  func usageErrors() {
    for arguments in [
      ["--no-such-flag"], ["--proxy-all", "ftp://x"], ["--max-request-journal-entries", "-1"],
      ["--async-response-enabled=maybe"], ["--bind-address"],
    ] {
      #expect(throws: CommandLineOptions.UsageError.self, "\(arguments)") {
        try CommandLineOptions.parse(arguments)
      }
    }
  }
}
