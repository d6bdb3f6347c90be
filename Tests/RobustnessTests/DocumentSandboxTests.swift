import Foundation
import MockServerTesting
import TestSupport
import Testing

/// Issue 41 item 2, over sockets against the binary: which answers carry the CSP `sandbox` that keeps
/// pages the mock serves off the admin API's origin (the browser proof is
/// `CORSBrowserTests.pagesTheMockServesCannotDriveTheAdminAPI`).
@Suite("Documents the mock serves are sandboxed while the admin API is open")
struct DocumentSandboxTests {
  static let policy = "Content-Security-Policy: sandbox allow-scripts allow-forms allow-popups allow-modals"

  @Test func documentsStubsFilesAndAdminFilesAreSandboxedOthersAreNot() throws {
    func stub(_ url: String, type: String?, body: String, extra: String = "") -> String {
      let headers = type.map { #""headers":{"Content-Type":"\#($0)"},"# } ?? ""
      return #"{"request":{"method":"GET","url":"\#(url)"},"response":{"status":200,\#(headers)"#
        + #""body":"\#(body)"\#(extra)}}"#
    }
    let fixtures = try TemporaryFixtures([
      ("html.json", stub("/page", type: "text/html; charset=utf-8", body: "<p>x</p>")),
      ("svg.json", stub("/img", type: "image/svg+xml", body: "<svg/>")),
      ("xml.json", stub("/feed", type: "application/atom+xml", body: "<feed/>")),
      ("untyped.json", stub("/untyped", type: nil, body: "<p>sniffed</p>")),
      ("json.json", stub("/json", type: "application/json", body: "{}")),
      ("text.json", stub("/text", type: "text/plain", body: "x")),
      ("unknown.json", stub("/unknown", type: "unknown/unknown", body: "<p>sniffed</p>")),
      ("spaced.json", stub("/spaced", type: "text / html", body: "<p>x</p>")),
      ("listed.json", stub("/listed", type: "application/json, text/html", body: "<p>x</p>")),
      (
        "two.json",
        #"{"request":{"method":"GET","url":"/two"},"response":{"status":200,"headers":{"#
          + #""Content-Type":["application/json","text/html"]},"body":"<p>x</p>"}}"#
      ),
      (
        "templated.json",
        #"{"request":{"method":"GET","urlPath":"/templated"},"response":{"status":200,"headers":{"#
          + #""Content-Type":"{{request.query.t}}"},"body":"{{request.query.b}}","#
          + #""transformers":["response-template"]}}"#
      ),
      ("png.json", stub("/png", type: "image/png", body: "x")),
      ("optout.json", stub("/optout", type: "text/html", body: "<p>x</p>", extra: #","x-sandbox":false"#)),
      (
        "own.json",
        #"{"request":{"method":"GET","url":"/own"},"response":{"status":200,"headers":{"#
          + #""Content-Type":"text/html","Content-Security-Policy":"default-src 'self'"},"body":"<p>x</p>"}}"#
      ),
    ])
    defer { fixtures.remove() }
    try FileManager.default.createDirectory(
      atPath: fixtures.fixtures + "/__files", withIntermediateDirectories: true)
    try "<p>file</p>".write(
      toFile: fixtures.fixtures + "/__files/file.html", atomically: true, encoding: .utf8)
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { _ = server.stop() }
    // Found by an attack round: a type browsers sniff, one that does not parse, and a list whose last
    // valid type is HTML (WHATWG Fetch, "extract a MIME type"), also from a template.
    for path in [
      "/page", "/img", "/feed", "/untyped", "/file.html", "/__admin/files/file.html", "/unknown", "/spaced",
      "/listed", "/two", "/templated?t=unknown/unknown&b=x", "/templated?t=text/html",
    ] {
      let response = get(server.port, path)
      #expect(status(response) == 200 && response.contains(Self.policy), "\(path): \(response)")
    }
    for path in ["/json", "/text", "/optout", "/png", "/templated?t=application/json&b=1"] {
      let response = get(server.port, path)
      #expect(
        status(response) == 200 && !response.contains("Content-Security-Policy"), "\(path): \(response)")
    }
    // The author's own policy stays, and ours is added beside it (a browser enforces both).
    let own = get(server.port, "/own")
    #expect(
      own.contains("Content-Security-Policy: default-src 'self'") && own.contains(Self.policy), "\(own)")

    // With --admin-token the admin API is closed to pages: nothing is sandboxed but admin files.
    let closed = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--admin-token", "t0ken",
    ])
    defer { _ = closed.stop() }
    #expect(!get(closed.port, "/page").contains("Content-Security-Policy"))
    #expect(!get(closed.port, "/file.html").contains("Content-Security-Policy"))
  }

  @Test func xSandboxMustBeABoolean() throws {
    let fixtures = try TemporaryFixtures([
      ("bad.json", stubJSON("/bad", body: "x", extra: #","x-sandbox":"no""#))
    ])
    defer { fixtures.remove() }
    let (status, text) = try runBinary(["lint", fixtures.fixtures])
    #expect(status != 0)
    #expect(text.contains("$.response.x-sandbox: expected true or false"), "\(text)")
  }
}
