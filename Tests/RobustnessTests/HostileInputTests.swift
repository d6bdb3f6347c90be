import Foundation
import MockServerTesting
import Synchronization
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Input from a client or a fixture author at the edges of every range: no request, template, file or
/// admin call may stop the process, freeze a loop or grow memory without bound (found by trying to
/// break the binary: each case below killed or froze it before).
@Suite("Robustness: hostile input", .serialized)
struct HostileInputTests {
  /// Sends `text` on a new connection and returns the response ("" when none came in `timeout` s).
  private func exchange(_ port: Int, _ text: String, timeout: Double = 20) -> String {
    guard let socket = try? RawClient(port: port) else { return "" }
    socket.send(text)
    return socket.readResponse(timeout: timeout).text
  }

  private func body(_ response: String) -> String {
    guard let end = response.range(of: "\r\n\r\n") else { return "" }
    return String(response[end.upperBound...])
  }

  private func post(_ port: Int, _ path: String, _ json: String, method: String = "POST") -> String {
    exchange(
      port,
      "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(json.utf8.count)\r\n\r\n\(json)")
  }

  /// A date matcher reading `unix` or `epoch` values, given the extremes of Int64: the value is not a
  /// date (no match, a near miss), where `* 1000` and the near-miss distance trapped (SIGILL).
  @Test func dateMatcherAtInt64EdgesIsNoMatch() throws {
    let stub = #"""
      {"request":{"method":"GET","urlPath":"/dated","headers":{"X-When":{"after":"2020-01-01T00:00:00Z","actualFormat":"unix"}},
       "queryParameters":{"at":{"before":"now","actualFormat":"epoch"}}},"response":{"status":200,"body":"dated"}}
      """#
    let fixtures = try TemporaryFixtures([("dated.json", stub)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    for value in ["9223372036854775807", "-9223372036854775808", "9223372036854776", "-9223372036854776"] {
      let response = exchange(
        server.port, "GET /dated?at=\(value) HTTP/1.1\r\nHost: localhost\r\nX-When: \(value)\r\n\r\n")
      #expect(status(response) == 404, "\(value): \(response.prefix(200))")
      #expect(server.isRunning, "the server died on \(value)")
    }
    // A value in range still matches: the guard is not "every date fails".
    let ok = exchange(
      server.port, "GET /dated?at=1000 HTTP/1.1\r\nHost: localhost\r\nX-When: 1700000000\r\n\r\n")
    #expect(status(ok) == 200 && body(ok) == "dated", "\(ok)")
  }

  /// Template helpers given Int64's edges answer exactly or with a helper error, never a trap; lists and
  /// strings a helper builds from a number are bounded.
  @Test func templateHelpersAtInt64EdgesAnswer() throws {
    let cases: [(String, String, (String) -> Bool)] = [
      ("minOverMinusOne", "{{math -9223372036854775808 '/' -1}}", { $0 == "9223372036854775808" }),
      ("minModMinusOne", "{{math -9223372036854775808 '%' -1}}", { $0 == "0" }),
      ("maxPlusOne", "{{math 9223372036854775807 '+' 1}}", { $0 == "9223372036854775808" }),
      ("minMinusOne", "{{math -9223372036854775808 '-' 1}}", { $0 == "-9223372036854775809" }),
      ("maxTimesTwo", "{{math 9223372036854775807 '*' 2}}", { $0 == "18446744073709551614" }),
      (
        "randomIntWide", "{{randomInt lower=-9223372036854775808 upper=9223372036854775807}}",
        { Int($0) != nil }
      ),
      ("randomIntHalf", "{{randomInt lower=-1 upper=9223372036854775807}}", { (Int($0) ?? -2) >= -1 }),
      ("abbreviateMin", "{{abbreviate 'abcdef' -9223372036854775808}}", { $0 == "..." }),
      ("centerMin", "{{center 'abc' size=-9223372036854775808}}", { $0 == "abc" }),
      ("parseUnixMax", "{{parseDate '9223372036854775807' format='unix'}}", { $0.hasPrefix("[ERROR: ") }),
      ("parseEpochMin", "{{parseDate '-9223372036854775808' format='epoch'}}", { $0.hasPrefix("[ERROR: ") }),
      ("rangeHuge", "{{range 0 9223372036854775807}}", { $0.hasPrefix("[ERROR: ") }),
      ("rangeLong", "{{range 1 100000000}}", { $0.hasPrefix("[ERROR: ") }),
      ("rangeLoop", "{{#each (range 1 100000000)}}x{{/each}}", { !$0.contains("x") }),
      ("randomValueHuge", "{{randomValue length=1000000000}}", { $0.hasPrefix("[ERROR: ") }),
      ("dateOffsetHuge", "{{now offset='9223372036854775807 days'}}", { $0.hasPrefix("[ERROR: ") }),
    ]
    let stubs = cases.map { name, template, _ in
      (
        "\(name).json",
        #"{"request":{"method":"GET","url":"/\#(name)"},"response":{"status":200,"body":"\#(template)","transformers":["response-template"]}}"#
      )
    }
    let fixtures = try TemporaryFixtures(stubs)
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    for (name, template, expected) in cases {
      let response = get(server.port, "/\(name)", timeout: 30)
      #expect(status(response) == 200, "\(template): \(response.prefix(300))")
      #expect(expected(body(response)), "\(template) rendered \(body(response).prefix(200))")
      #expect(server.isRunning, "the server died on \(template)")
    }
  }

  /// A template whose loop writes more than 16 MiB stops there and is answered with 500 naming the limit
  /// (later requests are served and the process stays small), where it grew without bound.
  @Test func renderingIsBoundedAt16MiB() throws {
    let line = String(repeating: "0123456789", count: 40)
    let stub =
      #"{"request":{"method":"GET","url":"/big"},"response":{"status":200,"body":"{{#each (range 1 99999)}}{{#each (range 1 99)}}\#(line){{/each}}{{/each}}","transformers":["response-template"]}}"#
    let fixtures = try TemporaryFixtures([("big.json", stub), ("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let socket = try RawClient(port: server.port)
    socket.send("GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let read = socket.read(timeout: 120) { RawClient.responseCount($0) >= 1 }
    #expect(RawClient.responseCount(read.bytes) == 1, "no whole response: \(read.bytes.count) bytes")
    // 99,999 × 99 × 400 bytes would be 3.9 GB; the rendering stops at 16 MiB and is not served.
    let answer = String(decoding: read.bytes, as: UTF8.self)
    #expect(status(answer) == 500, "\(answer.prefix(300))")
    #expect(answer.contains("more than 16777216 bytes"), "\(answer.prefix(600))")
    #expect(status(get(server.port, "/fast")) == 200)
    #expect(ProcStat.residentBytes(server.processIdentifier) < 512 << 20)
  }

  /// A named pipe as a `bodyFileName` is refused as "no file", without waiting: at start-up (the
  /// server says so and exits) and through the admin API (which answers; later requests are served).
  /// Opening it waited for a writer forever.
  @Test func fifoAsBodyFileIsRefusedWithoutWaiting() throws {
    let stub = #"{"request":{"method":"GET","url":"/pipe"},"response":{"status":200,"bodyFileName":"pipe"}}"#
    let withPipe = try TemporaryFixtures([("pipe.json", stub)])
    defer { withPipe.remove() }
    try FileManager.default.createDirectory(
      atPath: withPipe.fixtures + "/__files", withIntermediateDirectories: true)
    #expect(mkfifo(withPipe.fixtures + "/__files/pipe", 0o644) == 0)
    do {
      let server = try MockServerProcess.launch(arguments: ["--fixtures", withPipe.fixtures, "--no-watch"])
      server.stop()
      Issue.record("the server started with a named pipe as a body file")
    } catch {
      #expect("\(error)".contains("$.response.bodyFileName"), "\(error)")
    }
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    try FileManager.default.createDirectory(
      atPath: fixtures.fixtures + "/__files", withIntermediateDirectories: true)
    #expect(mkfifo(fixtures.fixtures + "/__files/pipe", 0o644) == 0)
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let created = post(server.port, "/__admin/mappings", stub)
    #expect(status(created) == 422, "\(created.prefix(300))")
    #expect(created.contains("bodyFileName"), "\(created.prefix(300))")
    #expect(status(get(server.port, "/fast")) == 200)
  }

  /// `(a+)+$` against 40 `a`s and a `b` backtracks 2^40 times; ICU's time limit makes it a no match
  /// within seconds instead of freezing the loop for hours.
  @Test func catastrophicRegexIsCutByTheTimeLimit() throws {
    let stub =
      #"{"request":{"method":"POST","url":"/re","bodyPatterns":[{"matches":"(a+)+$"}]},"response":{"status":200,"body":"re"}}"#
    let needle =
      #"{"request":{"method":"POST","url":"/needle","bodyPatterns":[{"matches":".*needle.*"}]},"response":{"status":200}}"#
    let fixtures = try TemporaryFixtures([
      ("re.json", stub), ("needle.json", needle), ("fast.json", stubJSON("/fast")),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let text = String(repeating: "a", count: 40) + "b"
    let response = exchange(
      server.port,
      "POST /re HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(text.utf8.count)\r\n\r\n\(text)",
      timeout: 60)
    #expect(status(response) == 404, "\(response.prefix(200))")
    #expect(status(get(server.port, "/fast")) == 200)
    // The limit grows with the text: a backtracking but linear match over a large body still matches.
    let big = String(repeating: "x", count: 3_000_000) + "needle" + String(repeating: "y", count: 3_000_000)
    let matched = exchange(
      server.port,
      "POST /needle HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(big.utf8.count)\r\n\r\n\(big)",
      timeout: 60)
    #expect(status(matched) == 200, "\(matched.prefix(200))")
  }

  /// An id left out of an admin path is a 404, not "every stub"; an empty id in a stub is no id.
  @Test func emptyIdsNeverNameEveryStub() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let deleted = exchange(server.port, "DELETE /__admin/mappings/ HTTP/1.1\r\nHost: localhost\r\n\r\n")
    #expect(status(deleted) == 404, "\(deleted)")
    #expect(
      status(exchange(server.port, "DELETE /__admin/mappings// HTTP/1.1\r\nHost: localhost\r\n\r\n")) == 404)
    #expect(status(get(server.port, "/fast")) == 200, "the stubs were deleted")
    // A trailing slash on a read is still the listing.
    #expect(get(server.port, "/__admin/mappings/").contains("\"total\": 1"))
    let created = post(
      server.port, "/__admin/mappings", #"{"id":"","request":{"url":"/new"},"response":{"status":201}}"#)
    #expect(status(created) == 201, "\(created)")
    #expect(!created.contains(#""id": """#), "\(created)")
    #expect(status(get(server.port, "/new")) == 201)
  }

  /// RFC 9112 §3.2.2: with an absolute-form target the server uses the target's authority and ignores
  /// Host, for matching and for the journal.
  @Test func absoluteFormTargetNamesTheHost() throws {
    let stub =
      #"{"request":{"method":"GET","url":"/abs","host":{"equalTo":"target.example"},"port":8081},"response":{"status":200,"body":"{{request.host}}:{{request.port}}","transformers":["response-template"]}}"#
    let fixtures = try TemporaryFixtures([("abs.json", stub)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let response = exchange(
      server.port, "GET http://target.example:8081/abs HTTP/1.1\r\nHost: other.example\r\n\r\n")
    #expect(status(response) == 200, "\(response.prefix(300))")
    #expect(body(response) == "target.example:8081")
    let origin = exchange(server.port, "GET /abs HTTP/1.1\r\nHost: target.example:8081\r\n\r\n")
    #expect(status(origin) == 200, "origin-form with the same Host still matches")
    let wrong = exchange(
      server.port, "GET http://other.example:8081/abs HTTP/1.1\r\nHost: target.example:8081\r\n\r\n")
    #expect(status(wrong) == 404, "the Host field was used instead of the target")
  }

  /// RFC 9110 §7.6.3: a proxied request carries Via, and a proxy stub leading back to this server
  /// answers 508 instead of forwarding to itself until descriptors run out.
  @Test func proxyAddsViaAndRefusesLoops() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let base = "http://127.0.0.1:\(server.port)"
    let stubs = [
      #"{"request":{"urlPath":"/through"},"response":{"proxyBaseUrl":"\#(base)/echo"}}"#,
      #"{"request":{"urlPath":"/echo/through"},"response":{"status":200,"body":"via={{request.headers.Via}}","transformers":["response-template"]}}"#,
      #"{"request":{"urlPath":"/loop"},"response":{"proxyBaseUrl":"\#(base)"}}"#,
    ]
    for stub in stubs { #expect(status(post(server.port, "/__admin/mappings", stub)) == 201) }
    let through = get(server.port, "/through", timeout: 30)
    #expect(status(through) == 200, "\(through.prefix(300))")
    #expect(body(through).hasPrefix("via=1.1 mockserver-"), "\(body(through))")
    let loop = get(server.port, "/loop", timeout: 30)
    #expect(status(loop) == 508, "\(loop.prefix(300))")
    #expect(server.isRunning)
  }

  /// An XML body whose one 50 KB entity is referenced 20,000 times (1 GB once expanded) is matched against
  /// its text cut at 1 MiB: the server answers and stays small (it took 2 GB and 12 s), while a document
  /// with a small entity still matches on its expanded text.
  @Test func xmlEntityExpansionIsBounded() throws {
    let stub =
      #"{"request":{"method":"POST","urlPath":"/x","bodyPatterns":[{"matchesXPath":{"expression":"/a/b","equalTo":"x"}}]},"response":{"status":200,"body":"ok"}}"#
    let fixtures = try TemporaryFixtures([("x.json", stub), ("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    func send(_ xml: String) -> String {
      exchange(
        server.port,
        "POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/xml\r\nContent-Length: \(xml.utf8.count)\r\n\r\n\(xml)",
        timeout: 60)
    }
    let entity = String(repeating: "y", count: 50_000)
    let bomb =
      "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY e \"\(entity)\">]><a><b>"
      + String(repeating: "&e;", count: 20_000) + "</b></a>"
    #expect(status(send(bomb)) == 404)
    #expect(server.isRunning)
    #expect(ProcStat.residentBytes(server.processIdentifier) < 512 << 20)
    #expect(status(get(server.port, "/fast")) == 200)
    let small = "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY e \"x\">]><a><b>&e;</b></a>"
    #expect(status(send(small)) == 200)
  }

  /// libxml2 prints some diagnostics itself: an XPath naming an unknown function wrote
  /// "xmlXPathCompOpEval: function boom not found" to stderr on every request it was evaluated for. Its
  /// generic error channel is silenced (errors are read from xmlGetLastError), so the log holds only the
  /// server's own lines.
  @Test func libxml2WritesNothingToStandardError() throws {
    let stub =
      #"{"request":{"method":"POST","urlPath":"/x","bodyPatterns":[{"matchesXPath":"boom(//a)"}]},"response":{"status":200,"body":"ok"}}"#
    let fixtures = try TemporaryFixtures([("x.json", stub)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    for xml in ["<a><b>x</b></a>", "<a/>"] {
      let response = exchange(
        server.port,
        "POST /x HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/xml\r\nContent-Length: "
          + "\(xml.utf8.count)\r\n\r\n\(xml)", timeout: 30)
      #expect(status(response) == 404, "\(response.prefix(300))")
    }
    server.stop()
    let log = server.standardErrorText
    #expect(!log.contains("xmlXPath"), "\(log)")
  }

  /// `chunkedDribbleDelay` with 1,000,000 chunks sends the body whole in at most as many pieces as there
  /// are milliseconds, and the process stays small (one plan step per chunk took 219 MB per request).
  @Test func dribbleWithAMillionChunksIsBounded() throws {
    let body = String(repeating: "d", count: 300_000)
    let stub =
      #"{"request":{"urlPath":"/drip"},"response":{"status":200,"body":"\#(body)","chunkedDribbleDelay":{"numberOfChunks":1000000,"totalDuration":1000}}}"#
    let fixtures = try TemporaryFixtures([("drip.json", stub)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let socket = try RawClient(port: server.port)
    socket.send("GET /drip HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let read = socket.read(timeout: 60) { RawClient.responseCount($0) >= 1 }
    #expect(RawClient.responseCount(read.bytes) == 1, "\(read.bytes.count) bytes")
    #expect(String(decoding: read.bytes, as: UTF8.self).hasSuffix(body))
    #expect(ProcStat.residentBytes(server.processIdentifier) < 128 << 20)
  }

  /// A webhook aimed at its own stub stops after 10 rounds (it ran until the journal was full, and on).
  @Test func webhookLoopStopsAfterTenHops() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let stub =
      #"{"request":{"urlPath":"/hook"},"response":{"status":200},"serveEventListeners":[{"name":"webhook","parameters":{"method":"GET","url":"http://127.0.0.1:\#(server.port)/hook"}}]}"#
    #expect(status(post(server.port, "/__admin/mappings", stub)) == 201)
    #expect(status(get(server.port, "/hook")) == 200)
    func count() -> Int {
      let response = post(server.port, "/__admin/requests/count", #"{"url":"/hook"}"#)
      guard let range = response.range(of: #""count": "#) else { return -1 }
      return Int(response[range.upperBound...].prefix { $0.isNumber }) ?? -1
    }
    // The client's request and 10 webhook hops; the 11th request fires nothing.
    #expect(eventually(timeout: 30) { count() == 11 }, "journal has \(count()) requests for /hook")
    usleep(1_000_000)
    #expect(count() == 11, "the loop went on: \(count())")
  }

  /// One client pipelining 30,000 requests does not hold the loop: another client's request is answered
  /// while the pipelined answers are still coming (the loop answered the whole buffered input first, and
  /// other clients waited seconds). An order, not a time: the pipeliner has not had all its answers yet.
  @Test func pipeliningClientTakesTurns() throws {
    let fixtures = try TemporaryFixtures([("ping.json", stubJSON("/ping", body: "pong"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--threads", "1",
    ])
    defer { server.stop() }
    let total = 30_000
    nonisolated(unsafe) let pipeliner = try RawClient(port: server.port)
    // Every answer has the same length (same stub, fixed-width Date): learn it from one.
    pipeliner.send("GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let size = pipeliner.readResponse().text.utf8.count
    #expect(size > 0)
    let burst = Array(String(repeating: "GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n", count: total).utf8)
    let received = Mutex(0)
    let reader = Thread {
      while received.withLock({ $0 }) < total * size {
        let chunk = pipeliner.read(timeout: 30) { !$0.isEmpty }
        if chunk.bytes.isEmpty { break }
        received.withLock { $0 += chunk.bytes.count }
      }
    }
    reader.start()
    _ = pipeliner.send(burst)
    let other = get(server.port, "/ping", timeout: 60)
    let seen = received.withLock { $0 }
    #expect(status(other) == 200)
    #expect(seen < total * size, "the other client was answered only after all \(total) pipelined requests")
    #expect(eventually(timeout: 60) { received.withLock { $0 } == total * size })
  }
}
