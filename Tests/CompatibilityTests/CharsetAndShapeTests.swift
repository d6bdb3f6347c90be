import Foundation
import MockServerTesting
import TestSupport
import Testing

/// Charsets, a non-UTF-8 query, the journal's shape and plain HTTP on the HTTPS port (issue 17).
@Suite("Charsets, queries and journal shape over sockets")
struct CharsetAndShapeTests {
  @Test func contentTypeCharsetDecidesTextBothWays() throws {
    let fixtures = try TemporaryFixtures([
      (
        "latin1-request.json",
        stubJSON(["method": "POST", "url": "/latin1", "bodyPatterns": [["equalTo": "café"]]])
      ),
      (
        "latin1-response.json",
        stubJSON(
          ["method": "GET", "url": "/latin1"],
          ["status": 200, "body": "café", "headers": ["Content-Type": "text/plain; charset=iso-8859-1"]])
      ),
      (
        "utf8-response.json",
        stubJSON(
          ["method": "GET", "url": "/utf8"],
          ["status": 200, "body": "café", "headers": ["Content-Type": "text/plain"]])
      ),
      (
        "templated.json",
        stubJSON(
          ["method": "POST", "url": "/echo"],
          [
            "status": 200, "body": "{{request.body}}", "transformers": ["response-template"],
            "headers": ["Content-Type": "text/plain; charset=ISO-8859-1"],
          ])
      ),
    ])
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let p = server.port
    let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]
    #expect(
      try request(
        p, "POST", "/latin1", headers: [("Content-Type", "text/plain; charset=ISO-8859-1")], body: latin1
      )
      .status == 200)
    // Without a charset the bytes are UTF-8: 0xE9 alone is not "é".
    #expect(
      try request(p, "POST", "/latin1", headers: [("Content-Type", "text/plain")], body: latin1).status == 404
    )
    #expect(try request(p, "POST", "/latin1", body: Array("café".utf8)).status == 200)

    #expect(try request(p, "GET", "/latin1").body == latin1)
    #expect(try request(p, "GET", "/utf8").body == Array("café".utf8))
    let echoed = try request(
      p, "POST", "/echo", headers: [("Content-Type", "text/plain; charset=iso-8859-1")], body: latin1)
    #expect(echoed.body == latin1)

    // The journal: body as text in its charset, bodyAsBase64 the bytes.
    let journal = try request(p, "GET", "/__admin/requests")
    let json = try JSONSerialization.jsonObject(with: Data(journal.body)) as? [String: Any]
    let requests = json?["requests"] as? [[String: Any]] ?? []
    let first = requests.compactMap { $0["request"] as? [String: Any] }.first {
      ($0["url"] as? String) == "/latin1" && ($0["method"] as? String) == "POST"
        && (($0["headers"] as? [String: Any])?["Content-Type"] as? String)?.contains("ISO") == true
    }
    #expect(first?["body"] as? String == "café")
    #expect(first?["bodyAsBase64"] as? String == Data(latin1).base64EncodedString())
  }

  @Test func aQueryThatIsNotUTF8OnlyFailsMatchersThatReadIt() throws {
    let fixtures = try TemporaryFixtures([
      ("path.json", stubJSON(["method": "GET", "urlPath": "/p"], ["status": 200, "body": "path"])),
      (
        "pattern.json",
        stubJSON(["method": "GET", "urlPathPattern": "/q/.*"], ["status": 200, "body": "pattern"])
      ),
      (
        "query.json",
        stubJSON(["method": "GET", "urlPath": "/withquery", "queryParameters": ["q": ["matches": ".*"]]])
      ),
      ("url.json", stubJSON(["method": "GET", "urlPattern": "/u.*"])),
    ])
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let p = server.port
    #expect(try request(p, "GET", "/p?q=caf%E9").status == 200)
    #expect(try request(p, "GET", "/q/x?q=caf%E9").status == 200)
    #expect(try request(p, "GET", "/withquery?q=caf%E9").status == 404)
    #expect(try request(p, "GET", "/withquery?q=caf%C3%A9").status == 200)
    #expect(try request(p, "GET", "/u?q=caf%E9").status == 404)
    #expect(try request(p, "GET", "/u?q=cafe").status == 200)
  }

  @Test func journalShapeHasEmptyQueryParamsAndTheStatusSent() throws {
    let fixtures = try TemporaryFixtures([
      ("plain.json", stubJSON(["method": "GET", "url": "/plain"])),
      (
        "conditional.json",
        stubJSON(
          ["method": "GET", "url": "/etag"],
          ["status": 200, "body": "v1", "headers": ["ETag": "\"v1\""], "x-conditional": true])
      ),
    ])
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let p = server.port
    #expect(try request(p, "GET", "/plain").status == 200)
    #expect(try request(p, "GET", "/etag", headers: [("If-None-Match", "\"v1\"")]).status == 304)
    let journal = try request(p, "GET", "/__admin/requests")
    let json = try JSONSerialization.jsonObject(with: Data(journal.body)) as? [String: Any]
    let events = json?["requests"] as? [[String: Any]] ?? []
    let plain = events.first { (($0["request"] as? [String: Any])?["url"] as? String) == "/plain" }
    let plainQuery = (plain?["request"] as? [String: Any])?["queryParams"] as? [String: Any]
    #expect(plainQuery != nil && plainQuery?.isEmpty == true)
    let etag = events.first { (($0["request"] as? [String: Any])?["url"] as? String) == "/etag" }
    #expect((etag?["response"] as? [String: Any])?["status"] as? Int == 304, "\(String(describing: etag))")
  }

  @Test func plainHTTPOnTheHTTPSPortGets400AndALogLine() throws {
    let fixtures = try TemporaryFixtures([("plain.json", stubJSON(["method": "GET", "url": "/plain"]))])
    defer { fixtures.remove() }
    let httpsPort = freePort()
    let server = try launch(fixtures, extra: ["--https-port", String(httpsPort)])
    defer { server.stop() }
    let reply = try request(httpsPort, "GET", "/plain")
    #expect(reply.status == 400)
    #expect(reply.header("content-type") == "text/plain")
    #expect(reply.text == "The plain HTTP request was sent to HTTPS port\n")
    #expect(eventually { server.standardErrorText.contains("plain HTTP request arrived on the HTTPS port") })
    // The HTTP port still answers.
    #expect(try request(server.port, "GET", "/plain").status == 200)
  }

  /// libssl and libcrypto are not mapped into a server without HTTPS (issue 20's idle memory): the first
  /// call that needs them, a digest of a request body too large for the journal, loads them and gives the
  /// same answer as a linked library would; a server started with HTTPS loads them for its TLS context and serves.
  @Test func openSSLIsLoadedOnFirstUse() throws {
    let fixtures = try TemporaryFixtures([
      ("plain.json", stubJSON(["method": "GET", "url": "/plain"])),
      ("upload.json", stubJSON(["method": "POST", "url": "/upload"])),
    ])
    defer { fixtures.remove() }
    let server = try launch(fixtures)
    defer { server.stop() }
    let maps = {
      (try? String(contentsOfFile: "/proc/\(server.processIdentifier)/maps", encoding: .utf8)) ?? ""
    }
    #expect(try request(server.port, "GET", "/plain").status == 200)
    #expect(!maps().contains("libssl"), "libssl is mapped before any TLS or digest use")
    #expect(!maps().contains("libcrypto"), "libcrypto is mapped before any TLS or digest use")
    // 100 KiB: above the journal's 64 KiB per entry, so the entry keeps a SHA-256 of the whole content.
    let body = [UInt8](repeating: UInt8(ascii: "a"), count: 100 * 1024)
    #expect(try request(server.port, "POST", "/upload", body: body).status == 200)
    #expect(maps().contains("libcrypto"))
    let journal = try request(server.port, "GET", "/__admin/requests")
    #expect(journal.status == 200)
    // SHA-256 of 102,400 × "a", as `printf 'a%.0s' $(seq 102400) | sha256sum` gives it.
    let digest = "4c3e1e462b642a6229bc69c0e89572ec69b37fb53078f9512dd811426261070c"
    let listing = try JSONSerialization.jsonObject(with: Data(journal.body)) as? [String: Any]
    let entries = listing?["requests"] as? [[String: Any]] ?? []
    let logged = entries.first { ($0["request"] as? [String: Any])?["url"] as? String == "/upload" }
    let entry = logged?["request"] as? [String: Any]
    #expect(entry?["bodySha256"] as? String == digest, "\(journal.text.prefix(600))")
    #expect(entry?["bodySize"] as? Int == body.count)

    let httpsPort = freePort()
    let secure = try launch(fixtures, extra: ["--https-port", String(httpsPort)])
    defer { secure.stop() }
    // A server with HTTPS serves it with the library loaded at start (its TLS context is made there).
    #expect(try request(httpsPort, "GET", "/plain").status == 400)
    #expect(try request(secure.port, "GET", "/plain").status == 200)
  }
}
