import Foundation
import MockServerTesting
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
    let scriptFile = api.root + "/script.js"
    try script.write(toFile: scriptFile, atomically: true, encoding: .utf8)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [
      "python3", CORSBrowserTests.root.path + "/Tests/Browser/cors_fetch.py", pageURL, scriptFile,
    ]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    #expect(process.terminationStatus == 0, "\(text)")
    let result = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] ?? [:]
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
}
