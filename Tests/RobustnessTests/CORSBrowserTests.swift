import Foundation
import MockServerTesting
import TestSupport
import Testing

/// Issue 18: CORS in a real browser. A page served by one mockserver (one origin) calls another
/// mockserver (another origin) with `fetch`, in headless Chromium driven through chromedriver
/// (Tests/Browser/cors_fetch.py). Runs in `make test` when Chromium is installed; `make test-browser`
/// installs it and sets MOCKSERVER_REQUIRE_BROWSER=1, so a missing browser fails instead of skipping.
@Suite("CORS in headless Chromium", .serialized)
struct CORSBrowserTests {
  static var browserInstalled: Bool {
    let paths = ProcessInfo.processInfo.environment["PATH"]?.split(separator: ":") ?? ["/usr/bin"]
    func installed(_ name: String) -> Bool {
      paths.contains { FileManager.default.isExecutableFile(atPath: "\($0)/\(name)") }
    }
    return installed("chromedriver") && (installed("chromium") || installed("google-chrome"))
  }
  static var required: Bool { ProcessInfo.processInfo.environment["MOCKSERVER_REQUIRE_BROWSER"] == "1" }
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

  @Test(.enabled(if: browserInstalled || required, "Chromium and chromedriver are not installed"))
  func fetchFromAnotherOriginPassesThePreflight() throws {
    #expect(CORSBrowserTests.browserInstalled, "make test-browser needs chromium and chromium-driver")
    let api = try TemporaryFixtures([
      (
        "items.json",
        #"{"x-cors":true,"request":{"method":"PUT","urlPath":"/api/items"},"response":{"status":200,"#
          + #""headers":{"X-Total":"3","Content-Type":"text/plain"},"body":"ok"}}"#
      ),
      ("private.json", stubJSON("/api/private", body: "no cors")),
    ])
    defer { api.remove() }
    let page = try TemporaryFixtures([
      (
        "page.json",
        #"{"request":{"method":"GET","url":"/page.html"},"response":{"status":200,"#
          + #""headers":{"Content-Type":"text/html"},"body":"<!doctype html><title>page</title><p>page</p>"}}"#
      )
    ])
    defer { page.remove() }
    let apiServer = try MockServerProcess.launch(arguments: ["--fixtures", api.fixtures, "--no-watch"])
    let pageServer = try MockServerProcess.launch(arguments: ["--fixtures", page.fixtures, "--no-watch"])
    defer {
      _ = apiServer.stop()
      _ = pageServer.stop()
    }
    // localhost vs 127.0.0.1 and two ports: two different origins.
    let apiBase = "http://127.0.0.1:\(apiServer.port)"
    let pageURL = "http://localhost:\(pageServer.port)/page.html"
    let script = """
      const done = arguments[arguments.length - 1];
      (async () => {
        const out = { origin: location.origin };
        try {
          const r = await fetch("\(apiBase)/api/items", { method: "PUT",
            headers: { "Content-Type": "application/json", "X-Trace": "t1" }, body: '{"a":1}' });
          out.status = r.status; out.body = await r.text(); out.total = r.headers.get("X-Total");
        } catch (e) { out.corsError = String(e); }
        try { await fetch("\(apiBase)/api/private"); out.privateReadable = true; }
        catch (e) { out.privateError = String(e); }
        done(out);
      })();
      """
    let (result, text) = try CORSBrowserTests.run(script, on: pageURL, scratch: api.root)
    #expect(result["origin"] as? String == "http://localhost:\(pageServer.port)", "\(text)")
    #expect(result["status"] as? Int == 200, "\(text)")
    #expect(result["body"] as? String == "ok", "\(text)")
    #expect(result["total"] as? String == "3", "exposed header: \(text)")
    #expect(result["corsError"] == nil, "\(text)")
    // The stub without CORS: the browser refuses to hand the answer to the page.
    #expect(result["privateError"] != nil, "\(text)")
    // The actual request (after the preflight) reached the stub with its custom header.
    let journal = get(apiServer.port, "/__admin/requests")
    #expect(journal.contains("X-Trace") || journal.contains("x-trace"), "\(journal)")
  }

  /// Opens `pageURL` in headless Chromium and runs `script` there (Tests/Browser/cors_fetch.py); returns
  /// the object the script passed to its callback, and the printed line.
  static func run(_ script: String, on pageURL: String, scratch: String) throws -> ([String: Any], String) {
    let scriptFile = scratch + "/script-\(UUID().uuidString).js"
    try script.write(toFile: scriptFile, atomically: true, encoding: .utf8)
    let run = try runProcess(
      "python3", [CORSBrowserTests.root.path + "/Tests/Browser/cors_fetch.py", pageURL, scriptFile])
    let text = run.stdout
    #expect(run.status == 0, "\(text)")
    let result = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
    return (result, text)
  }

  /// Issue 41 item 2: a page the mock serves (a templated stub echoing a query parameter, a page relayed
  /// by `--proxy-all`) is on the admin API's origin. Without `--admin-token` such a page could read the
  /// journal (other clients' `Authorization` fields) and create stubs. Documents are now served with a CSP
  /// `sandbox` (an opaque origin, `Origin: null`), which the admin API refuses; a stub with
  /// `"x-sandbox": false` opts out, and that page can (the same script proves the attack is real).
  @Test(.enabled(if: browserInstalled || required, "Chromium and chromedriver are not installed"))
  func pagesTheMockServesCannotDriveTheAdminAPI() throws {
    let page = #"<!doctype html><title>p</title><p>{{request.query.q}}</p>"#
    let upstream = try TemporaryFixtures([
      (
        "relayed.json",
        #"{"request":{"method":"GET","url":"/relayed.html"},"response":{"status":200,"#
          + #""headers":{"Content-Type":"text/html; charset=utf-8"},"body":"<!doctype html><p>relayed</p>"}}"#
      )
    ])
    defer { upstream.remove() }
    let upstreamServer = try MockServerProcess.launch(arguments: [
      "--fixtures", upstream.fixtures, "--no-watch",
    ])
    defer { _ = upstreamServer.stop() }
    let fixtures = try TemporaryFixtures([
      (
        "echo.json",
        #"{"request":{"method":"GET","urlPath":"/echo.html"},"response":{"status":200,"#
          + #""headers":{"Content-Type":"text/html"},"body":"\#(page)","transformers":["response-template"]}}"#
      ),
      (
        "trusted.json",
        #"{"request":{"method":"GET","url":"/trusted.html"},"response":{"status":200,"x-sandbox":false,"#
          + #""headers":{"Content-Type":"text/html"},"body":"<!doctype html><p>trusted</p>"}}"#
      ),
      (
        "listed.json",
        #"{"request":{"method":"GET","url":"/listed.html"},"response":{"status":200,"#
          + #""headers":{"Content-Type":["application/json","text/html"]},"body":"<!doctype html><p>listed</p>"}}"#
      ),
      (
        "api.json", stubJSON("/api/me", body: "me", extra: #","headers":{"Content-Type":"application/json"}"#)
      ),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--proxy-all", "http://127.0.0.1:\(upstreamServer.port)",
    ])
    defer { _ = server.stop() }
    // Another client's request with a credential, now in the journal.
    let secret = "Bearer another-clients-secret-token"
    let socket = try RawClient(port: server.port)
    socket.send("GET /api/me HTTP/1.1\r\nHost: localhost\r\nAuthorization: \(secret)\r\n\r\n")
    #expect(status(socket.readResponse(timeout: 10).text) == 200)
    let echoed = get(server.port, "/echo.html?q=x")
    #expect(echoed.contains("Content-Security-Policy: sandbox allow-scripts"), "\(echoed)")
    #expect(!get(server.port, "/trusted.html").contains("Content-Security-Policy"))
    #expect(!get(server.port, "/api/me").contains("Content-Security-Policy"), "JSON is not a document")

    let attack = """
      const done = arguments[arguments.length - 1];
      (async () => {
        const out = { origin: self.origin };
        try {
          const r = await fetch("/__admin/requests");
          out.readStatus = r.status; out.journal = await r.text();
        } catch (e) { out.readError = String(e); }
        const stub = JSON.stringify({ request: { url: "/owned-" + location.pathname.slice(1) },
          response: { status: 200, body: "owned" } });
        try {
          const r = await fetch("/__admin/mappings", { method: "POST",
            headers: { "Content-Type": "application/json" }, body: stub });
          out.createStatus = r.status;
        } catch (e) { out.createError = String(e); }
        try {
          const r = await fetch("/__admin/mappings", { method: "POST",
            headers: { "Content-Type": "text/plain" }, body: stub });
          out.plainCreateStatus = r.status;
        } catch (e) { out.plainCreateError = String(e); }
        done(out);
      })();
      """
    let base = "http://localhost:\(server.port)"
    // /listed.html: two Content-Type fields, the last HTML (Chromium renders it as HTML).
    for path in ["/echo.html?q=hello", "/relayed.html", "/listed.html"] {
      let (result, text) = try CORSBrowserTests.run(attack, on: base + path, scratch: fixtures.root)
      // self.origin is the document's origin (location.origin is its URL's).
      #expect(result["origin"] as? String == "null", "an opaque origin: \(text)")
      #expect(result["readError"] != nil && result["journal"] == nil, "\(path): \(text)")
      #expect((result["createStatus"] as? Int).map { $0 >= 400 } ?? true, "\(path): \(text)")
      #expect((result["plainCreateStatus"] as? Int).map { $0 >= 400 } ?? true, "\(path): \(text)")
      #expect(!text.contains("another-clients-secret"), "\(path): \(text)")
    }
    let mappings = get(server.port, "/__admin/mappings")
    #expect(!mappings.contains("/owned-"), "no stub was created by a sandboxed page: \(mappings)")
    // The stub that opts out runs on the admin API's origin, and the same script can do everything.
    let (trusted, text) = try CORSBrowserTests.run(attack, on: base + "/trusted.html", scratch: fixtures.root)
    #expect(trusted["origin"] as? String == base, "\(text)")
    #expect(trusted["readStatus"] as? Int == 200, "\(text)")
    #expect((trusted["journal"] as? String)?.contains("another-clients-secret") == true, "\(text)")
    #expect(trusted["createStatus"] as? Int == 201, "\(text)")
    #expect(get(server.port, "/__admin/mappings").contains("/owned-trusted.html"))
  }
}
