import Foundation
import MockServerTesting
import TestSupport
import Testing

/// No web page can drive the admin API on localhost (cross-site requests and DNS
/// rebinding), unless its origin is allowed by name.
@Suite("Robustness: admin API and web pages", .serialized)
struct AdminSecurityTests {
  static let stub = stubJSON("/made")

  /// Sends one admin request with the given extra header lines; returns the response text.
  static func admin(
    _ port: Int, _ method: String, _ path: String, body: String = "", host: String? = nil,
    _ headers: [String] = []
  ) throws -> String {
    let socket = try RawClient(port: port)
    var text = "\(method) \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\n"
    for line in headers { text += line + "\r\n" }
    text += "Content-Length: \(body.utf8.count)\r\n\r\n" + body
    socket.send(text)
    return socket.readResponse().text
  }

  @Test func crossSiteAndRebindingRequestsAreRefused() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let port = server.port
    // A cross-site form post (no preflight): text/plain content created stubs.
    let plain = try AdminSecurityTests.admin(
      port, "POST", "/__admin/mappings", body: AdminSecurityTests.stub, ["Content-Type: text/plain"])
    #expect(status(plain) == 403, "\(plain)")
    #expect(plain.contains("application/json") && plain.contains(#""errors""#))
    #expect(status(get(port, "/made")) == 404)
    // Another origin, even with JSON: shutdown and settings were obeyed.
    let evil = ["Origin: http://evil.example", "Content-Type: application/json"]
    #expect(status(try AdminSecurityTests.admin(port, "POST", "/__admin/shutdown", evil)) == 403)
    #expect(status(try AdminSecurityTests.admin(port, "POST", "/__admin/settings", body: "{}", evil)) == 403)
    #expect(
      status(
        try AdminSecurityTests.admin(port, "POST", "/__admin/mappings", body: AdminSecurityTests.stub, evil))
        == 403)
    #expect(server.isRunning)
    // DNS rebinding: a page on attacker.example resolved to 127.0.0.1 read the journal.
    let rebound = try AdminSecurityTests.admin(
      port, "GET", "/__admin/requests", host: "attacker.example:\(port)")
    #expect(status(rebound) == 403, "\(rebound)")
    #expect(rebound.contains("Host: attacker.example"))
    // What stays allowed: loopback hosts, the server's own origin, JSON, and requests without a body type.
    #expect(
      status(try AdminSecurityTests.admin(port, "GET", "/__admin/requests", host: "localhost:\(port)")) == 200
    )
    #expect(
      status(try AdminSecurityTests.admin(port, "GET", "/__admin/mappings", host: "[::1]:\(port)")) == 200)
    let own = try AdminSecurityTests.admin(
      port, "POST", "/__admin/mappings", body: AdminSecurityTests.stub,
      ["Origin: http://127.0.0.1:\(port)", "Content-Type: application/json; charset=utf-8"])
    #expect(status(own) == 201, "\(own)")
    #expect(status(try AdminSecurityTests.admin(port, "DELETE", "/__admin/requests")) == 200)
  }

  /// `--admin-allow-origin` lets a named origin in, and `--admin-host` a named host.
  @Test func namedOriginAndHostAreAllowed() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--admin-allow-origin",
      "http://app.example:3000",
      "--admin-host", "devbox.internal",
    ])
    defer { server.stop() }
    let port = server.port
    let allowed = try AdminSecurityTests.admin(
      port, "POST", "/__admin/mappings", body: AdminSecurityTests.stub,
      ["Origin: http://app.example:3000", "Content-Type: application/json"])
    #expect(status(allowed) == 201, "\(allowed)")
    #expect(
      status(
        try AdminSecurityTests.admin(
          port, "GET", "/__admin/mappings", ["Origin: http://other.example:3000"])) == 403)
    #expect(
      status(try AdminSecurityTests.admin(port, "GET", "/__admin/requests", host: "devbox.internal:\(port)"))
        == 200)
  }

  /// Issue 42: `PUT /__admin/files/{name}` takes any content type (a page cannot send a cross-origin
  /// `PUT` without a preflight); simple cross-site `POST`s stay refused by content type, `Origin` and
  /// `Sec-Fetch-Site`.
  @Test func bodyFilesTakeAnyContentTypeAndSimplePostsStaySafe() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let port = server.port
    let text = try AdminSecurityTests.admin(
      port, "PUT", "/__admin/files/notes/hello.txt", body: "hello, file", ["Content-Type: text/plain"])
    #expect(status(text) == 200, "\(text)")
    #expect(
      try String(contentsOfFile: fixtures.fixtures + "/__files/notes/hello.txt", encoding: .utf8)
        == "hello, file")
    let binary = try AdminSecurityTests.admin(
      port, "PUT", "/__admin/files/blob.bin", body: "\u{01}\u{02}binary",
      ["Content-Type: application/octet-stream"])
    #expect(status(binary) == 200, "\(binary)")
    #expect(get(port, "/__admin/files/blob.bin").hasSuffix("\u{01}\u{02}binary"))
    // A PUT from a page of another origin is still refused (by its Origin).
    #expect(
      status(
        try AdminSecurityTests.admin(
          port, "PUT", "/__admin/files/x.txt", body: "x",
          ["Origin: http://evil.example", "Content-Type: text/plain"])) == 403)
    // Simple POSTs a page can send without a preflight: non-JSON refused, and a cross-site one without
    // Origin refused by Sec-Fetch-Site, even as JSON.
    let form = try AdminSecurityTests.admin(
      port, "POST", "/__admin/mappings", body: AdminSecurityTests.stub,
      ["Content-Type: application/x-www-form-urlencoded"])
    #expect(status(form) == 403, "\(form)")
    let crossSite = try AdminSecurityTests.admin(
      port, "POST", "/__admin/mappings", body: AdminSecurityTests.stub,
      ["Sec-Fetch-Site: cross-site", "Content-Type: application/json"])
    #expect(status(crossSite) == 403, "\(crossSite)")
    #expect(crossSite.contains("Sec-Fetch-Site: cross-site"))
    #expect(status(get(port, "/made")) == 404)
    let sameOrigin = try AdminSecurityTests.admin(
      port, "POST", "/__admin/mappings", body: AdminSecurityTests.stub,
      ["Sec-Fetch-Site: same-origin", "Content-Type: application/json"])
    #expect(status(sameOrigin) == 201, "\(sameOrigin)")
  }
}
