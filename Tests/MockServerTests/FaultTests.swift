import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import MockServer

#if canImport(Glibc)
  import Glibc
#endif

private let faultStubs = """
  [
    {"request": {"method": "GET", "urlPath": "/warmup"}, "response": {"status": 200, "body": "warm"}},
    {"request": {"method": "GET", "urlPath": "/slow"},
     "response": {"status": 200, "body": "slow", "fixedDelayMilliseconds": 600}},
    {"request": {"method": "GET", "urlPath": "/long"},
     "response": {"status": 200, "body": "long", "fixedDelayMilliseconds": 3000}},
    {"request": {"method": "GET", "urlPath": "/two-seconds"},
     "response": {"status": 200, "body": "late", "fixedDelayMilliseconds": 2000}},
    {"request": {"method": "GET", "urlPath": "/reset"}, "response": {"fault": "CONNECTION_RESET_BY_PEER"}},
    {"request": {"method": "POST", "urlPath": "/oauth/token"}, "response": {"fault": "CONNECTION_RESET_BY_PEER"}},
    {"request": {"method": "GET", "urlPath": "/empty"}, "response": {"fault": "EMPTY_RESPONSE"}},
    {"request": {"method": "GET", "urlPath": "/malformed"}, "response": {"fault": "MALFORMED_RESPONSE_CHUNK"}},
    {"request": {"method": "GET", "urlPath": "/random"}, "response": {"fault": "RANDOM_DATA_THEN_CLOSE"}},
    {"request": {"method": "GET", "urlPath": "/silent"}, "response": {"fault": "NO_RESPONSE"}},
    {"request": {"method": "GET", "urlPath": "/truncated"},
     "response": {"status": 200, "body": "0123456789012345678901234567890123456789", "fault": "TRUNCATED_BODY"}},
    {"request": {"method": "GET", "urlPath": "/stall"},
     "response": {"status": 200, "body": "never", "fault": "HEADERS_THEN_STALL"}},
    {"request": {"method": "GET", "urlPath": "/corrupt-gzip"},
     "response": {"status": 200, "jsonBody": {"status": "OK"}, "fault": "CORRUPT_GZIP"}},
    {"request": {"method": "GET", "urlPath": "/drip"},
     "response": {"status": 200, "body": "aaaaabbbbbcccccddddd", "chunkedDribbleDelay": {"numberOfChunks": 4, "totalDuration": 800}}},
    {"request": {"method": "GET", "urlPath": "/uniform"},
     "response": {"status": 200, "delayDistribution": {"type": "uniform", "lower": 10, "upper": 500}}},
    {"request": {"method": "GET", "urlPath": "/lognormal"},
     "response": {"status": 200, "delayDistribution": {"type": "lognormal", "median": 80, "sigma": 3, "maxValue": 200}}},
    {"request": {"method": "GET", "urlPath": "/catalog"},
     "response": {"status": 200, "headers": {"Content-Type": "application/json"}, "bodyFileName": "catalog.json"}},
    {"request": {"method": "GET", "urlPath": "/always-gzip"},
     "response": {"status": 200, "body": "tiny", "x-compression": "always"}},
    {"request": {"method": "GET", "urlPath": "/never-gzip"},
     "response": {"status": 200, "bodyFileName": "catalog.json", "x-compression": "never"}},
    {"request": {"method": "POST", "urlPath": "/gzipped",
                 "bodyPatterns": [{"equalToJson": {"id": 1}}]}, "response": {"status": 201}},
    {"request": {"method": "GET", "urlPath": "/cached"},
     "response": {"status": 200, "body": "cached body", "x-conditional": true,
                  "headers": {"Last-Modified": "Sun, 06 Nov 1994 08:49:37 GMT"}}}
  ]
  """

private let catalog =
  "{\"items\":[" + (0..<2000).map { "{\"id\":\($0),\"name\":\"item \($0)\"}" }.joined(separator: ",") + "]}"

@Suite("Faults, delays and compression over real sockets")
struct FaultTests {
  func serve<T>(
    configure: (inout MockServiceConfiguration) -> Void = { $0.maxHoldMilliseconds = 20_000 },
    _ body: (HTTPServer, MockService) async throws -> T
  ) async throws -> T {
    try await withMockServer(
      mappings: faultStubs, files: ["catalog.json": catalog], configure: configure, body)
  }

  @Test func delayIsPerRequestNotPerConnection() async throws {
    // A delay applies to every request, also the later ones on a kept-alive connection.
    try await serve { server, _ in
      let client = try RawClient(port: server.port)
      var timings: [Double] = []
      for path in ["/warmup", "/slow", "/slow"] {
        let start = Date()
        client.send("GET \(path) HTTP/1.1\r\nHost: x\r\n\r\n")
        let (text, _) = client.readResponse(timeout: 5)
        #expect(text.hasSuffix(String(path.dropFirst(1).prefix(4))))
        timings.append(Date().timeIntervalSince(start))
      }
      // /warmup only opens the connection; both /slow on it wait their 0.6 s.
      #expect(timings[1] >= 0.59)
      #expect(timings[2] >= 0.59)
    }
  }

  @Test func resetSendsRSTPromptlyOnFreshAndReusedConnections() async throws {
    // A reset fault sends RST at once, on a fresh and on a reused connection.
    try await serve { server, _ in
      let fresh = try RawClient(port: server.port)
      fresh.send(
        "POST /oauth/token HTTP/1.1\r\nHost: x\r\nContent-Type: application/x-www-form-urlencoded\r\n"
          + "Content-Length: 29\r\n\r\ngrant_type=client_credentials")
      let (bytes, end) = fresh.read(timeout: 20)
      // A reset, not what one of the server's timeouts would send (a 408 or a plain close).
      #expect(bytes.isEmpty)
      #expect(end == .reset)

      let reused = try RawClient(port: server.port)
      reused.send("GET /warmup HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(reused.readResponse().0.hasSuffix("warm"))
      reused.send("GET /reset HTTP/1.1\r\nHost: x\r\n\r\n")
      let (_, end2) = reused.read(timeout: 20)
      #expect(end2 == .reset)
    }
  }

  @Test func emptyResponseClosesWithFINAndNoBytes() async throws {
    try await serve { server, _ in
      let client = try RawClient(port: server.port)
      client.send("GET /empty HTTP/1.1\r\nHost: x\r\n\r\n")
      let (bytes, end) = client.read(timeout: 3)
      #expect(bytes.isEmpty)
      #expect(end == .eof)
    }
  }

  @Test func malformedChunkAndRandomData() async throws {
    try await serve { server, _ in
      let malformed = try RawClient(port: server.port)
      malformed.send("GET /malformed HTTP/1.1\r\nHost: x\r\n\r\n")
      let (bytes, end) = malformed.read(timeout: 3)
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.hasPrefix("HTTP/1.1 200 OK\r\n"))
      #expect(text.contains("Transfer-Encoding: chunked\r\n"))
      var parser = HTTPParser(mode: .response)
      parser.expectResponse(to: .get)
      parser.append(bytes)
      #expect(throws: HTTPParserError.self) {
        while try parser.next() != nil {}
        _ = try parser.finish()
      }
      #expect(end == .eof)

      let random = try RawClient(port: server.port)
      random.send("GET /random HTTP/1.1\r\nHost: x\r\n\r\n")
      let (noise, randomEnd) = random.read(timeout: 3)
      #expect(noise.count >= 1024)
      #expect(!noise.starts(with: Array("HTTP/".utf8)))
      #expect(randomEnd == .eof)
    }
  }

  @Test func truncatedBodyAnnouncesMoreThanItSends() async throws {
    try await serve { server, _ in
      let client = try RawClient(port: server.port)
      client.send("GET /truncated HTTP/1.1\r\nHost: x\r\n\r\n")
      let (bytes, end) = client.read(timeout: 3)
      let text = String(decoding: bytes, as: UTF8.self)
      #expect(text.contains("Content-Length: 40\r\n"))
      let body = text.components(separatedBy: "\r\n\r\n").last ?? ""
      #expect(body == "01234567890123456789")
      #expect(end == .eof)
    }
  }

  @Test func noResponseAndStallHoldUntilTheClientGivesUp() async throws {
    try await serve { server, _ in
      let silent = try RawClient(port: server.port)
      silent.send("GET /silent HTTP/1.1\r\nHost: x\r\n\r\n")
      let (nothing, end) = silent.read(timeout: 0.8)
      #expect(nothing.isEmpty)
      #expect(end == .timeout)

      let stall = try RawClient(port: server.port)
      stall.send("GET /stall HTTP/1.1\r\nHost: x\r\n\r\n")
      let (head, _) = stall.read(timeout: 10) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
      let text = String(decoding: head, as: UTF8.self)
      #expect(text.hasPrefix("HTTP/1.1 200 OK") && text.hasSuffix("\r\n\r\n"))
      #expect(text.contains("Content-Length: 5"))
      let (body, stallEnd) = stall.read(timeout: 0.8)
      #expect(body.isEmpty)
      #expect(stallEnd == .timeout)

      // Meanwhile other clients are served, not kept waiting for the 20 s hold to end.
      let other = try RawClient(port: server.port)
      other.send("GET /warmup HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(other.readResponse(timeout: 10).0.hasSuffix("warm"))
    }
  }

  @Test func holdIsBoundedByTheServerMaximum() async throws {
    try await serve(configure: { $0.maxHoldMilliseconds = 300 }) { server, _ in
      let silent = try RawClient(port: server.port)
      let start = Date()
      silent.send("GET /silent HTTP/1.1\r\nHost: x\r\n\r\n")
      let (bytes, end) = silent.read(timeout: 20)
      #expect(bytes.isEmpty)
      #expect(end == .eof)
      // Held for the 0.3 s maximum, then closed (`.eof`): an unbounded hold would still be open when the
      // read gives up (`.timeout`).
      let held = Date().timeIntervalSince(start)
      #expect(held >= 0.29, "held \(held) s")
    }
  }

  @Test func dribbleSendsTheBodyInPiecesOverTheDuration() async throws {
    try await serve { server, _ in
      // A request delayed 2 s, sent first: the 0.8 s drip ends before it is answered, which a drip of
      // 0.8 s per chunk (2.4 s or more) would not.
      let reference = try RawClient(port: server.port)
      reference.send("GET /two-seconds HTTP/1.1\r\nHost: x\r\n\r\n")
      let client = try RawClient(port: server.port)
      let start = Date()
      client.send("GET /drip HTTP/1.1\r\nHost: x\r\n\r\n")
      var arrivals: [Double] = []
      var received: [UInt8] = []
      let deadline = start.addingTimeInterval(10)
      while Date() < deadline, !String(decoding: received, as: UTF8.self).hasSuffix("ddddd") {
        let (bytes, end) = client.read(timeout: 0.05)
        if !bytes.isEmpty {
          arrivals.append(Date().timeIntervalSince(start))
          received += bytes
        }
        if end == .eof || end == .reset { break }
      }
      let text = String(decoding: received, as: UTF8.self)
      #expect(text.hasSuffix("\r\n\r\naaaaabbbbbcccccddddd"))
      #expect(text.contains("Content-Length: 20\r\n"))
      #expect(arrivals.count >= 4)
      #expect((arrivals.last ?? 0) >= 0.7)
      #expect(!reference.hasBytesWaiting, "the 2 s delay ended before the 0.8 s drip")
      #expect(reference.readResponse().text.hasSuffix("late"))
    }
  }

  @Test func corruptGzipCannotBeDecoded() async throws {
    try await serve { server, _ in
      let script = """
        import urllib.request, gzip, sys
        r = urllib.request.urlopen('http://127.0.0.1:\(server.port)/corrupt-gzip')
        data = r.read()
        print(r.headers['Content-Encoding'], len(data) == int(r.headers['Content-Length']))
        try:
            gzip.decompress(data); print('decoded')
        except Exception as e:
            print('corrupt')
        """
      let result = try runProcess("python3", ["-c", script])
      #expect(result.status == 0)
      #expect(result.stdout == "gzip True\ncorrupt\n")
    }
  }

  @Test func gzipResponseDecodedByPythonAndCurlEqualsTheFixture() async throws {
    try await serve { server, _ in
      let url = "http://127.0.0.1:\(server.port)/catalog"
      let script = """
        import urllib.request, gzip, sys
        req = urllib.request.Request('\(url)', headers={'Accept-Encoding': 'gzip'})
        r = urllib.request.urlopen(req)
        raw = r.read()
        assert len(raw) == int(r.headers['Content-Length'])
        sys.stdout.write(r.headers['Content-Encoding'] + ' ' + r.headers['Vary'] + '\\n')
        sys.stdout.write(gzip.decompress(raw).decode())
        """
      let python = try runProcess("python3", ["-c", script]).stdout
      let lines = python.split(separator: "\n", maxSplits: 1).map(String.init)
      #expect(lines.first == "gzip Accept-Encoding")
      #expect(lines.last == catalog)
      let curl = try runProcess("curl", ["-s", "--compressed", url])
      #expect(curl.status == 0)
      #expect(curl.stdout == catalog)
      let plain = try runProcess("curl", ["-s", "-H", "Accept-Encoding: identity", url])
      #expect(plain.stdout == catalog)
    }
  }

  @Test func compressionNegotiationAndStubOverrides() async throws {
    try await serve { server, _ in
      let client = try RawClient(port: server.port)
      client.send("GET /catalog HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip;q=0.2, deflate;q=0.9\r\n\r\n")
      let (deflated, _) = client.readResponse()
      #expect(deflated.contains("Content-Encoding: deflate\r\n"))
      client.send("GET /catalog HTTP/1.1\r\nHost: x\r\nAccept-Encoding: identity;q=0\r\n\r\n")
      let (refused, _) = client.readResponse()
      #expect(refused.hasPrefix("HTTP/1.1 406 "))
      client.send("GET /always-gzip HTTP/1.1\r\nHost: x\r\n\r\n")
      let (forced, _) = client.readResponse()
      #expect(forced.contains("Content-Encoding: gzip\r\n"))
      client.send("GET /never-gzip HTTP/1.1\r\nHost: x\r\nAccept-Encoding: gzip\r\n\r\n")
      let (never, _) = client.readResponse()
      #expect(!never.contains("Content-Encoding"))
      #expect(never.hasSuffix(catalog))
    }
  }

  @Test func gzipRequestBodyIsDecodedBeforeMatching() async throws {
    try await serve { server, service in
      let body = ContentCoding.gzip.encode(Array(#"{"id": 1}"#.utf8))
      let client = try RawClient(port: server.port)
      client.send(
        Array(
          "POST /gzipped HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Encoding: gzip\r\nContent-Length: \(body.count)\r\n\r\n"
            .utf8) + body)
      #expect(client.readResponse().0.hasPrefix("HTTP/1.1 201 "))
      #expect(service.journal.entries(limit: 1).first?.request.body == Array(#"{"id": 1}"#.utf8))
      client.send(
        "POST /gzipped HTTP/1.1\r\nHost: x\r\nContent-Encoding: gzip\r\nContent-Length: 4\r\n\r\nnope")
      // Matched on the bytes as received (issue 42; was 400): the body pattern does not match, and the
      // near miss says why.
      let undecodable = client.readResponse().0
      #expect(undecodable.hasPrefix("HTTP/1.1 404 "))
      #expect(undecodable.contains("content that does not decode: Content-Encoding gzip"), "\(undecodable)")
    }
  }

  @Test func conditionalRequestsGet304() async throws {
    try await serve { server, _ in
      let client = try RawClient(port: server.port)
      client.send("GET /cached HTTP/1.1\r\nHost: x\r\n\r\n")
      let (first, _) = client.readResponse()
      let etagLine = try #require(first.components(separatedBy: "\r\n").first { $0.hasPrefix("ETag: ") })
      let etag = String(etagLine.dropFirst(6))
      client.send("GET /cached HTTP/1.1\r\nHost: x\r\nIf-None-Match: \(etag)\r\n\r\n")
      let (revalidated, _) = client.readResponse()
      #expect(revalidated.hasPrefix("HTTP/1.1 304 Not Modified\r\n"))
      #expect(revalidated.contains("ETag: \(etag)\r\n"))
      #expect(revalidated.hasSuffix("\r\n\r\n"))
      #expect(!revalidated.contains("Content-Length"))
      client.send("GET /cached HTTP/1.1\r\nHost: x\r\nIf-None-Match: W/\(etag), \"other\"\r\n\r\n")
      #expect(client.readResponse().0.hasPrefix("HTTP/1.1 304 "))
      client.send("GET /cached HTTP/1.1\r\nHost: x\r\nIf-None-Match: \"stale\"\r\n\r\n")
      #expect(client.readResponse().0.hasSuffix("cached body"))
      client.send(
        "GET /cached HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Mon, 07 Nov 1994 00:00:00 GMT\r\n\r\n")
      #expect(client.readResponse().0.hasPrefix("HTTP/1.1 304 "))
      client.send(
        "GET /cached HTTP/1.1\r\nHost: x\r\nIf-Modified-Since: Sat, 05 Nov 1994 00:00:00 GMT\r\n\r\n")
      #expect(client.readResponse().0.hasPrefix("HTTP/1.1 200 "))
    }
  }

  @Test func manyDelayedRequestsDoNotDelayOthers() async throws {
    try await serve { server, _ in
      var waiting: [RawClient] = []
      for _ in 0..<500 {
        let c = try RawClient(port: server.port)
        c.send("GET /long HTTP/1.1\r\nHost: x\r\n\r\n")
        waiting.append(c)
      }
      let fast = try RawClient(port: server.port)
      fast.send("GET /warmup HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(fast.readResponse(timeout: 10).0.hasSuffix("warm"))
      // Served while the 500 wait out their 3 s, not after them: the last ones sent have no answer yet.
      #expect(waiting.suffix(50).allSatisfy { !$0.hasBytesWaiting })
      var completed = 0
      for c in waiting where c.readResponse(timeout: 15).0.hasSuffix("long") { completed += 1 }
      #expect(completed == 500)
    }
  }

  @Test func seededDelaysAreReproducibleAndDistributionsBounded() async throws {
    func delays(seed: UInt64, path: String) async throws -> [Int] {
      try await serve(configure: { $0.seed = seed }) { _, service in
        (0..<20).map { _ in
          let plan = service.respond(
            to: HTTPRequest(head: HTTPRequestHead(method: .get, target: path, headers: ["Host": "x"])),
            context: RequestContext(
              client: .text("127.0.0.1:1"), localPort: 1, isTLS: false, clientCertificateSubject: nil,
              connectionID: 1, requestNumber: 1, receivedAt: 0))
          if case .pause(let ms) = plan.steps.first { return ms }
          return 0
        }
      }
    }
    let a = try await delays(seed: 42, path: "/uniform")
    let b = try await delays(seed: 42, path: "/uniform")
    let c = try await delays(seed: 43, path: "/uniform")
    #expect(a == b)
    #expect(a != c)
    #expect(a.allSatisfy { (10...500).contains($0) })
    let log = try await delays(seed: 7, path: "/lognormal")
    #expect(log.allSatisfy { $0 <= 200 })
  }

  @Test func globalDelayAppliesToEveryStub() async throws {
    try await serve(configure: { $0.globalDelayMilliseconds = 300 }) { server, _ in
      let client = try RawClient(port: server.port)
      let start = Date()
      client.send("GET /warmup HTTP/1.1\r\nHost: x\r\n\r\n")
      #expect(client.readResponse().0.hasSuffix("warm"))
      #expect(Date().timeIntervalSince(start) >= 0.29)
    }
  }
}
