import Foundation
import HTTPCore
import Mappings
import MockJSON
import MockServer
import MockServerTesting
import Synchronization
import TestSupport
import Testing

/// Proxy stubs (issue 15) over real sockets: the `mockserver` binary in front of a Python `http.server`
/// upstream and of a second `mockserver`.
@Suite("Proxy stubs")
struct ProxyTests {
  @Test func forwardsWithoutHopByHopFieldsAndWithTheUpstreamsHost() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let folder = try TemporaryFolder(files: [
      (
        "proxy.json",
        proxyStub(
          "/py/.*", to: "http://127.0.0.1:\(upstream.port)",
          extra:
            #","proxyUrlPrefixToRemove":"/py","additionalProxyRequestHeaders":{"X-Added":"yes"},"removeProxyRequestHeaders":["X-Secret-Internal"]"#
        )
      )
    ])
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"])
    defer { server.stop() }
    // Raw bytes, so the client's own Connection field reaches the server as written.
    let raw = try rawExchange(
      server.port,
      "GET /py/headers HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: X-Hop, close\r\nX-Hop: 1\r\n"
        + "Keep-Alive: timeout=5\r\nTE: trailers\r\nUpgrade: websocket\r\nProxy-Authorization: Basic eA==\r\n"
        + "X-Secret-Internal: s\r\nX-Kept: kept\r\n\r\n")
    #expect(raw.hasPrefix("HTTP/1.1 200 "), "\(raw)")
    let body = raw.components(separatedBy: "\r\n\r\n").dropFirst().joined(separator: "\r\n\r\n")
    let seen = try JSONValue.parse(body).objectValue ?? JSONObject()
    let names = Set(seen.keys.map { $0.lowercased() })
    for gone in ["x-hop", "keep-alive", "te", "upgrade", "proxy-authorization", "x-secret-internal"] {
      #expect(!names.contains(gone), "\(gone) was forwarded: \(seen.keys)")
    }
    #expect(seen["X-Kept"]?.stringValue == "kept")
    #expect(seen["X-Added"]?.stringValue == "yes")
    #expect(seen["Host"]?.stringValue == "127.0.0.1:\(upstream.port)")
  }

  @Test func relaysTenMegabytesAndChunkedResponsesWhole() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let folder = try TemporaryFolder(files: [
      ("proxy.json", proxyStub(".*", to: "http://127.0.0.1:\(upstream.port)"))
    ])
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"])
    defer { server.stop() }
    let size = 10 << 20
    let big = try exchange(server.port, "GET", "/big?size=\(size)")
    #expect(big.status.code == 200)
    #expect(big.body.count == size)
    let direct = try exchange(upstream.port, "GET", "/big?size=\(size)")
    #expect(big.body == direct.body)
    #expect(big.headers.first("Content-Length") == String(size))
    // A chunked upstream response is relayed with its whole content, framed again by the server: with a
    // Content-Length when it had all of it with the head, in chunks as it comes otherwise.
    let chunked = try exchange(server.port, "GET", "/chunked")
    let expected = (0..<50).map { String(repeating: "chunk \($0);", count: 100) }.joined()
    #expect(chunked.status.code == 200)
    #expect(String(decoding: chunked.body, as: UTF8.self) == expected)
    #expect(
      chunked.headers.first("Content-Length") == String(expected.utf8.count)
        || chunked.headers.first("Transfer-Encoding") == "chunked")
    // A 10 MB request body goes upstream whole too (POST /echo sends it back).
    let upload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
    let echoed = try exchange(
      server.port, "POST", "/echo", headers: [("Content-Type", "application/octet-stream")], body: upload)
    #expect(echoed.status.code == 201)
    #expect(echoed.body == upload)
  }

  @Test func upstreamDownGives502NamingTheUpstreamAndTheReasonAndIsJournaled() throws {
    let port = freePort()
    let folder = try TemporaryFolder(files: [
      ("proxy.json", proxyStub("/down.*", to: "http://127.0.0.1:\(port)"))
    ])
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"])
    defer { server.stop() }
    let response = try exchange(server.port, "GET", "/down/here")
    #expect(response.status.code == 502)
    let body = try JSONValue.parse(bytes: response.body)
    #expect(body["upstream"]?.stringValue == "http://127.0.0.1:\(port)")
    #expect(body["reason"]?.stringValue == "connection refused")
    #expect(body["status"]?.numberValue?.intValue == 502)
    let journal = try JSONValue.parse(bytes: exchange(server.port, "GET", "/__admin/requests").body)
    let entry = journal["requests"]?.arrayValue?.first
    #expect(entry?["request"]?["url"]?.stringValue == "/down/here")
    #expect(entry?["response"]?["status"]?.numberValue?.intValue == 502, "\(journal)")
  }

  @Test func silentUpstreamGives504AfterTheProxyTimeoutWithoutBlockingOtherRequests() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let folder = try TemporaryFolder(files: [
      ("proxy.json", proxyStub("/slow", to: "http://127.0.0.1:\(upstream.port)")),
      ("local.json", #"{"request":{"url":"/local"},"response":{"status":200,"body":"here"}}"#),
    ])
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", folder.path, "--no-watch", "--quiet", "--proxy-timeout-ms", "4000",
    ])
    defer { server.stop() }
    let slowDone = Mutex(false)
    let slowResult = Mutex<HTTPResponse?>(nil)
    let thread = Thread {
      let response = try? exchange(server.port, "GET", "/slow")
      slowResult.withLock { $0 = response }
      slowDone.withLock { $0 = true }
    }
    thread.start()
    Thread.sleep(forTimeInterval: 0.2)
    // The event loop keeps serving while the upstream exchange waits on its own thread.
    let local = try exchange(server.port, "GET", "/local")
    #expect(local.status.code == 200)
    #expect(slowDone.withLock { $0 } == false)
    #expect(eventually(timeout: 60) { slowDone.withLock { $0 } })
    let slow = try #require(slowResult.withLock { $0 })
    #expect(slow.status.code == 504)
    let reason = try JSONValue.parse(bytes: slow.body)["reason"]?.stringValue ?? ""
    #expect(reason.contains("timed out after 4000 ms"), "\(reason)")
  }

  @Test func lowPriorityCatchAllProxyToASecondMockserver() throws {
    let upstreamFolder = try TemporaryFolder(files: [
      (
        "users.json",
        #"{"request":{"method":"GET","url":"/api/users"},"response":{"status":200,"jsonBody":[{"id":1}],"headers":{"X-From":"upstream"}}}"#
      ),
      (
        "local.json",
        #"{"request":{"method":"GET","url":"/api/local"},"response":{"status":200,"body":"upstream copy"}}"#
      ),
    ])
    defer { upstreamFolder.remove() }
    let upstream = try MockServerProcess.launch(arguments: [
      "--fixtures", upstreamFolder.path, "--no-watch", "--quiet",
    ])
    defer { upstream.stop() }
    let folder = try TemporaryFolder(files: [
      ("catch-all.json", proxyStub(".*", to: "http://127.0.0.1:\(upstream.port)", priority: 10)),
      (
        "local.json",
        #"{"priority":1,"request":{"method":"GET","url":"/api/local"},"response":{"status":200,"body":"local"}}"#
      ),
    ])
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"])
    defer { server.stop() }
    #expect(String(decoding: try exchange(server.port, "GET", "/api/local").body, as: UTF8.self) == "local")
    let users = try exchange(server.port, "GET", "/api/users")
    #expect(users.status.code == 200)
    #expect(users.headers.first("X-From") == "upstream")
    #expect(String(decoding: users.body, as: UTF8.self) == #"[{"id":1}]"#)
    // The upstream's 404 (a near-miss report) is relayed as it is.
    #expect(try exchange(server.port, "GET", "/api/nothing").status.code == 404)
  }

  /// WireMock's templated proxy URL: `"proxyBaseUrl": "{{request.headers.X-WM-Proxy-Url}}"` with the
  /// `response-template` transformer picks the upstream per request.
  @Test func templatedProxyBaseUrlChoosesTheUpstreamPerRequest() throws {
    let upstreamFolder = try TemporaryFolder(files: [
      (
        "t.json",
        #"{"request":{"method":"GET","url":"/templated"},"response":{"status":200,"body":"from upstream"}}"#
      )
    ])
    defer { upstreamFolder.remove() }
    let upstream = try MockServerProcess.launch(arguments: [
      "--fixtures", upstreamFolder.path, "--no-watch", "--quiet",
    ])
    defer { upstream.stop() }
    let folder = try TemporaryFolder(files: [
      (
        "templated.json",
        #"{"request":{"urlPath":"/templated"},"response":{"proxyBaseUrl":"{{request.headers.X-WM-Proxy-Url}}","transformers":["response-template"]}}"#
      )
    ])
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"])
    defer { server.stop() }
    let relayed = try exchange(
      server.port, "GET", "/templated", headers: [("X-WM-Proxy-Url", "http://127.0.0.1:\(upstream.port)")])
    #expect(relayed.status.code == 200)
    #expect(String(decoding: relayed.body, as: UTF8.self) == "from upstream")
    // A URL that renders to nothing usable is the proxy's 502, naming what it rendered to.
    let broken = try exchange(server.port, "GET", "/templated")
    #expect(broken.status.code == 502)
  }

  @Test func httpsUpstreamIsVerifiedAgainstProxyCAOrRefusedOrAcceptedWhenInsecure() throws {
    let certs = try TemporaryFolder()
    defer { certs.remove() }
    #expect(try runMockserver(["cert", "--out", certs.path]).0 == 0)
    let upstreamFolder = try TemporaryFolder(files: [
      ("hello.json", #"{"request":{"url":"/hello"},"response":{"status":200,"body":"over TLS"}}"#)
    ])
    defer { upstreamFolder.remove() }
    let upstream = try RecordingRun([
      "--fixtures", upstreamFolder.path, "--no-watch", "--quiet", "--https-port", "0", "--tls-cert",
      certs.path + "/server.pem", "--tls-key", certs.path + "/server-key.pem",
    ])
    defer { _ = upstream.interrupt() }
    let line = try #require(
      upstream.outputText.split(separator: "\n").first { $0.hasPrefix("listening on https://") })
    let httpsPort = try #require(line.split(separator: ":").last.flatMap { Int($0) })
    let folder = try TemporaryFolder(files: [
      ("proxy.json", proxyStub(".*", to: "https://localhost:\(httpsPort)"))
    ])
    defer { folder.remove() }
    for (extra, expected) in [
      (["--proxy-ca", certs.path + "/ca.pem"], 200), ([], 502), (["--proxy-insecure"], 200),
    ] {
      let server = try MockServerProcess.launch(
        arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"] + extra)
      defer { server.stop() }
      let response = try exchange(server.port, "GET", "/hello")
      #expect(response.status.code == expected, "\(extra): \(String(decoding: response.body, as: UTF8.self))")
      if expected == 200 {
        #expect(String(decoding: response.body, as: UTF8.self) == "over TLS")
      } else {
        let reason = try JSONValue.parse(bytes: response.body)["reason"]?.stringValue ?? ""
        #expect(reason.contains("certificate"), "\(reason)")
      }
    }
  }

  @Test func proxyFieldsAreParsedAndCheckedByLint() throws {
    let context = StubParsingContext(makeID: { UUID().uuidString })
    let good = try JSONValue.parse(
      #"{"request":{"urlPattern":".*"},"response":{"proxyBaseUrl":"https://api.example.com/v1/","additionalProxyRequestHeaders":{"X-A":"1"},"removeProxyRequestHeaders":["Cookie"],"proxyUrlPrefixToRemove":"/mock"}}"#
    )
    let (stub, problems) = StubParser.parse(good, file: "p.json", context: context)
    #expect(problems.filter(\.isError).isEmpty, "\(problems)")
    let proxy = try #require(stub?.response.proxy)
    #expect(proxy.baseURL == "https://api.example.com/v1")
    #expect(proxy.additionalRequestHeaders.first("X-A") == "1")
    #expect(proxy.removedRequestHeaders == ["Cookie"])
    #expect(proxy.urlPrefixToRemove == "/mock")
    for (bad, expected) in [
      (#"{"proxyBaseUrl":"ftp://x"}"#, "$.response.proxyBaseUrl"),
      (#"{"proxyBaseUrl":"http://x?q=1"}"#, "$.response.proxyBaseUrl"),
      (#"{"proxyBaseUrl":"http://x:99999"}"#, "$.response.proxyBaseUrl"),
      (
        #"{"proxyBaseUrl":"http://x","removeProxyRequestHeaders":"Cookie"}"#,
        "$.response.removeProxyRequestHeaders"
      ),
      (#"{"additionalProxyRequestHeaders":{"X":"1"}}"#, "$.response.additionalProxyRequestHeaders"),
    ] {
      let json = try JSONValue.parse(#"{"request":{"url":"/"},"response":\#(bad)}"#)
      let (_, found) = StubParser.parse(json, file: "p.json", context: context)
      #expect(found.contains { $0.isError && $0.path == expected }, "\(bad): \(found)")
    }
  }

  @Test func upstreamURLsAndHopByHopFiltering() {
    let url = UpstreamURL("https://[::1]:8443/base/")
    #expect(url?.host == "::1")
    #expect(url?.port == 8443)
    #expect(url?.basePath == "/base")
    #expect(url?.hostField == "[::1]:8443")
    #expect(UpstreamURL("http://example.com")?.hostField == "example.com")
    #expect(UpstreamURL("http://example.com:0") == nil)
    #expect(UpstreamURL("http://user@example.com") == nil)
    let upper = UpstreamURL("HTTPS://Example.com:8443/v1/")
    #expect(upper?.isTLS == true && upper?.host == "Example.com" && upper?.port == 8443)
    #expect(upper?.basePath == "/v1" && upper?.description == "https://Example.com:8443/v1")
    #expect(UpstreamURL("http://[::1]")?.port == 80)
    #expect(UpstreamURL("http://h//")?.basePath == "/")
    #expect(UpstreamURL("https://h")?.origin == "https://h")
    for bad in [
      "http://h/a?x", "http://h#f", "http://:80", "http://[::1", "http://[::1]x", "http://[]", "http://h:",
      "http://h:65536", "http://h:x", "ftp://h", "http://", "http:/h", "https:/", "", "h",
    ] {
      #expect(UpstreamURL(bad) == nil, "\(bad)")
    }
    let headers = HTTPHeaders([
      ("Connection", "close, X-Private"), ("X-Private", "1"), ("Transfer-Encoding", "chunked"),
      ("Content-Type", "text/plain"), ("KEEP-ALIVE", "5"), ("x-private", "2"), ("Proxy-Authorization", "a"),
      ("TE", "trailers"), ("Upgrade", "h2c"), ("Trailer", "X"), ("Proxy-Connection", "x"), ("Te-X", "kept"),
    ])
    #expect(headers.endToEnd.fields.map(\.name) == ["Content-Type", "Te-X"])
  }
}
