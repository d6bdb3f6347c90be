import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 41, "a request alone": what one ordinary client can do to the binary with ordinary stubs, over
/// sockets. Each test measures what a client sees (answers, their order, another client served), never a
/// wall-clock upper bound.
@Suite("Robustness: no request stalls the server", .serialized)
struct RequestStallTests {
  /// 300 pipelined requests, then the client shuts its sending side: every one of them is answered, in
  /// order, before the server closes (the connection was closed after 128 answers, two turns of 64).
  @Test func pipelinedRequestsBeforeAHalfCloseAreAllAnswered() throws {
    let fixtures = try TemporaryFixtures([("ping.json", stubJSON("/ping", body: "pong"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let total = 300
    let socket = try RawClient(port: server.port)
    socket.send(String(repeating: "GET /ping HTTP/1.1\r\nHost: localhost\r\n\r\n", count: total))
    shutdown(socket.fd, Int32(SHUT_WR))
    let read = socket.read(timeout: 60)
    #expect(read.end.closed, "the server did not close after the last answer")
    #expect(
      RawClient.responseCount(read.bytes) == total,
      "\(RawClient.responseCount(read.bytes)) of \(total) answered")
    #expect(server.isRunning)
  }

  /// A stray CRLF before a request (RFC 9112 §2.2: ignored) does not start the head timeout: a client that
  /// sent one, stayed idle past the timeout, then sent its head in two pieces gets its answer, not 408.
  /// Time is read from events: a second client's unfinished head timing out says the timeout has passed
  /// since the CRLF, and a delayed stub's answer says the sweep (every 250 ms) has looked at the
  /// half-sent head.
  @Test func strayCRLFDoesNotStartTheHeadTimeout() throws {
    let fixtures = try TemporaryFixtures([
      ("ping.json", stubJSON("/ping", body: "pong")),
      ("tick.json", stubJSON("/tick", extra: #","fixedDelayMilliseconds":600"#)),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--header-timeout-ms", "3000",
    ])
    defer { server.stop() }
    let client = try RawClient(port: server.port)
    let clock = try RawClient(port: server.port)
    client.send("\r\n")
    clock.send("GET /ping HTTP/1.1\r\n")
    // The clock's head is cut off by the timeout: at least 3 s have passed since the client's CRLF.
    #expect(status(clock.readResponse(timeout: 60).text) == 408)
    client.send("GET /ping HTTP/1.1\r\n")
    // At least 600 ms, so the sweep has seen the half-sent head at least twice.
    #expect(status(get(server.port, "/tick", timeout: 60)) == 200)
    client.send("Host: localhost\r\n\r\n")
    let answer = client.readResponse(timeout: 60).text
    #expect(status(answer) == 200, "\(answer.prefix(200))")
  }

  /// 24 uploads each sending 9 MiB of a 10 MiB body, with a 20 MiB budget for the content buffered by all
  /// connections: at most two are kept, the others get 503 naming the flag (or are closed), another client
  /// is answered meanwhile, RSS stays under 112 MiB (measured about 70 MiB: the debug binary, the budget
  /// twice for array growth; all 216 MiB were kept before), the kept ones complete, and once the uploads
  /// are closed the budget is free again.
  @Test func bufferedRequestContentHasATotalBudget() throws {
    let upload =
      #"{"request":{"method":"POST","urlPath":"/upload"},"response":{"status":200,"body":"stored"}}"#
    let fixtures = try TemporaryFixtures([("upload.json", upload), ("ping.json", stubJSON("/ping"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--max-buffered-request-bytes", "20971520",
    ])
    defer { server.stop() }
    func head(_ length: Int) -> String {
      "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(length)\r\n\r\n"
    }
    var uploads: [RawClient] = []
    for _ in 0..<24 {
      let socket = try RawClient(port: server.port)
      socket.send(head(10 << 20))
      socket.send([UInt8](repeating: UInt8(ascii: "u"), count: 9 << 20))
      uploads.append(socket)
    }
    #expect(status(get(server.port, "/ping")) == 200)
    let resident = ProcStat.residentBytes(server.processIdentifier)
    #expect(resident < 112 << 20, "RSS \(resident >> 20) MiB")
    var kept = 0
    var refusals: [String] = []
    for socket in uploads {
      socket.send([UInt8](repeating: UInt8(ascii: "u"), count: 1 << 20))
      let answer = socket.readResponse(timeout: 30).text
      if status(answer) == 200 { kept += 1 } else { refusals.append(answer) }
    }
    #expect((1...2).contains(kept), "\(kept) of 24 uploads kept")
    #expect(refusals.allSatisfy { $0.isEmpty || status($0) == 503 }, "\(refusals.map { $0.prefix(100) })")
    #expect(refusals.contains { $0.contains("over --max-buffered-request-bytes (20971520)") })
    uploads.removeAll()
    // The closed uploads gave their bytes back: a whole 19 MiB upload fits again.
    #expect(
      eventually {
        guard let socket = try? RawClient(port: server.port) else { return false }
        socket.send(head(19 << 20))
        socket.send([UInt8](repeating: UInt8(ascii: "u"), count: 19 << 20))
        return status(socket.readResponse(timeout: 30).text) == 200
      })
  }

  /// A 50 KB XML body of nested internal entities (1 GB once expanded) sent to a path no stub has, while a
  /// stub elsewhere takes the string value of the document in XPath (`contains(., 'x')`, which libxml2
  /// expands without a bound): the near-miss evaluation refuses the document before any XPath runs, the
  /// process's peak RSS stays under 256 MiB (979 MiB with the budget raised to 1 GiB, as before it
  /// existed), and a document whose entities expand to little still matches.
  @Test func xmlEntityExpansionHasATotalBudget() throws {
    let stub =
      #"{"request":{"method":"POST","urlPath":"/xml","bodyPatterns":[{"matchesXPath":"/a[contains(., 'x')]"}]},"response":{"status":200,"body":"matched"}}"#
    let fixtures = try TemporaryFixtures([("xml.json", stub), ("ping.json", stubJSON("/ping"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    func post(_ path: String, _ xml: String) -> String {
      guard let socket = try? RawClient(port: server.port) else { return "" }
      socket.send(
        "POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/xml\r\n"
          + "Content-Length: \(xml.utf8.count)\r\n\r\n\(xml)")
      return socket.readResponse(timeout: 120).text
    }
    let bomb =
      "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY e1 \"\(String(repeating: "y", count: 50_000))\">"
      + "<!ENTITY e2 \"\(String(repeating: "&e1;", count: 100))\">]><a>"
      + String(repeating: "&e2;", count: 200) + "</a>"
    #expect(status(post("/elsewhere", bomb)) == 404)
    #expect(status(post("/xml", bomb)) == 404)
    #expect(server.isRunning)
    let peak = ProcStat.residentBytes(server.processIdentifier, peak: true)
    #expect(peak < 256 << 20, "peak RSS \(peak >> 20) MiB")
    #expect(status(get(server.port, "/ping")) == 200)
    let small = "<?xml version=\"1.0\"?><!DOCTYPE a [<!ENTITY e \"x\">]><a>&e;&e;</a>"
    #expect(status(post("/xml", small)) == 200)
  }

  /// An unmatched request with a 7 KB path and a 4 KB header next to 200 stubs whose 500-byte path and
  /// header differ from it: its near-miss report computes at most one request's budget of distance cells,
  /// not 5.5 million per stub. Measured as the server's CPU time (work, not wall-clock time): under 5 s
  /// for three such requests; it was about a second per request for 500 stubs in release, many times that
  /// in the debug build the tests run.
  @Test func nearMissWorkIsBoundedPerRequest() throws {
    var stubs: [(String, String)] = [("ping.json", stubJSON("/ping"))]
    for k in 0..<200 {
      let path = "/p/\(k)-" + String(repeating: "abcdefghij", count: 50)
      let token = "\(k)" + String(repeating: "ZYXWVUTSRQ", count: 50)
      stubs.append(
        (
          "s\(k).json",
          #"{"request":{"method":"GET","urlPath":"\#(path)","headers":{"X-Token":{"equalTo":"\#(token)"}}},"response":{"status":200}}"#
        ))
    }
    let fixtures = try TemporaryFixtures(stubs)
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    #expect(status(get(server.port, "/ping")) == 200)
    let before = ProcStat.cpuSeconds(server.processIdentifier)
    let path = "/q/" + String(repeating: "klmnopqrst", count: 700)
    let header = String(repeating: "0123456789", count: 400)
    for _ in 0..<3 {
      let socket = try RawClient(port: server.port)
      socket.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\nX-Token: \(header)\r\n\r\n")
      #expect(status(socket.readResponse(timeout: 600).text) == 404)
    }
    let used = ProcStat.cpuSeconds(server.processIdentifier) - before
    #expect(used < 5, "three unmatched requests took \(used) s of CPU")
    #expect(status(get(server.port, "/ping")) == 200)
  }

  /// `--validate-requests` with a recursive `oneOf` (three branches, each with a `next` of the same schema)
  /// and one whose `oneOf` refers to itself: valid data nested 16 levels is accepted (the 64-step schema
  /// depth refused it), data nested 13 levels with a mistake at the bottom is refused with 400 (each level
  /// tripled the work: 37 s at 13), the self-reference is decided instead of looping, data nested past
  /// 64 levels gets 400 naming the validation depth limit, and another client is answered after them.
  @Test func recursiveOneOfValidationIsBounded() throws {
    let document = #"""
      {"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{
       "/tree":{"post":{"requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Node"}}}},"responses":{"200":{"description":"ok"}}}},
       "/loop":{"post":{"requestBody":{"required":true,"content":{"application/json":{"schema":{"$ref":"#/components/schemas/Loop"}}}},"responses":{"200":{"description":"ok"}}}}},
       "components":{"schemas":{
        "Node":{"oneOf":[
         {"type":"object","required":["kind"],"properties":{"kind":{"const":"a"},"next":{"$ref":"#/components/schemas/Node"}},"additionalProperties":false},
         {"type":"object","required":["kind"],"properties":{"kind":{"const":"b"},"next":{"$ref":"#/components/schemas/Node"}},"additionalProperties":false},
         {"type":"object","required":["kind"],"properties":{"kind":{"const":"c"},"next":{"$ref":"#/components/schemas/Node"}},"additionalProperties":false}]},
        "Loop":{"oneOf":[{"$ref":"#/components/schemas/Loop"},{"type":"string"}]}}}}
      """#
    let tree = #"{"request":{"method":"POST","urlPath":"/tree"},"response":{"status":200,"body":"tree"}}"#
    let loop = #"{"request":{"method":"POST","urlPath":"/loop"},"response":{"status":200,"body":"loop"}}"#
    let fixtures = try TemporaryFixtures([
      ("tree.json", tree), ("loop.json", loop), ("ping.json", stubJSON("/ping")),
    ])
    defer { fixtures.remove() }
    let spec = fixtures.root + "/api.json"
    try document.write(toFile: spec, atomically: true, encoding: .utf8)
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--openapi", spec, "--validate-requests",
    ])
    defer { server.stop() }
    func post(_ path: String, _ json: String) -> String {
      guard let socket = try? RawClient(port: server.port) else { return "" }
      socket.send(
        "POST \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
          + "Content-Length: \(json.utf8.count)\r\n\r\n\(json)")
      return socket.readResponse(timeout: 120).text
    }
    func nested(_ levels: Int, bottom: String) -> String {
      String(repeating: #"{"kind":"b","next":"#, count: levels - 1) + bottom
        + String(repeating: "}", count: levels - 1)
    }
    let valid = post("/tree", nested(16, bottom: #"{"kind":"c"}"#))
    #expect(status(valid) == 200, "\(valid.prefix(400))")
    #expect(status(post("/tree", nested(13, bottom: #"{"kind":"z"}"#))) == 422)
    #expect(status(post("/loop", #""text""#)) == 200)
    #expect(status(post("/loop", "5")) == 422)
    let deep = post("/tree", nested(70, bottom: #"{"kind":"c"}"#))
    #expect(status(deep) == 422 && deep.contains("validation depth limit"), "\(deep.prefix(400))")
    #expect(status(get(server.port, "/ping")) == 200)
  }

  /// Response templates have a budget of 1,000,000 steps and 16 MiB per rendering, enforced in loops,
  /// sub-expressions and XPath helpers: a loop nested three deep over 1,000 items (10^9 passes; it kept the
  /// loop busy for hours), a `join` inside a `join` (100 GB of text that no write ever counted) and an
  /// XPath of quadratic cost on a 20,000-element body are each answered 500 naming the budget, a client
  /// that asks after the first one is answered, and the peak RSS stays under 128 MiB (measured 44 MiB).
  @Test func templateRenderingHasAStepAndByteBudget() throws {
    func templated(_ method: String, _ url: String, _ body: String) -> String {
      #"{"request":{"method":"\#(method)","url":"\#(url)"},"response":{"status":200,"body":"\#(body)","transformers":["response-template"]}}"#
    }
    let fixtures = try TemporaryFixtures([
      (
        "loops.json",
        templated(
          "GET", "/loops",
          "{{#each (range 0 999)}}{{#each (range 0 999)}}{{#each (range 0 999)}}x{{/each}}{{/each}}{{/each}}")
      ),
      (
        "bytes.json",
        templated("GET", "/bytes", "{{size (join (range 0 99999) (join (range 0 99999) 'xxxxxxxxxx'))}}")
      ),
      ("xpath.json", templated("POST", "/xpath", "{{xPath request.body 'count(//b[count(//b) > 0])'}}")),
      ("ping.json", stubJSON("/ping", body: "pong")),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let loops = try RawClient(port: server.port)
    loops.send("GET /loops HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let ping = get(server.port, "/ping", timeout: 120)
    #expect(status(ping) == 200 && ping.hasSuffix("pong"), "\(ping.prefix(200))")
    let loopAnswer = loops.readResponse(timeout: 120).text
    #expect(status(loopAnswer) == 500, "\(loopAnswer.prefix(300))")
    #expect(loopAnswer.contains("it took more than 1000000 steps"), "\(loopAnswer.prefix(600))")
    let bytes = get(server.port, "/bytes", timeout: 120)
    #expect(status(bytes) == 500, "\(bytes.prefix(300))")
    #expect(bytes.contains("more than the 16777216 bytes one rendering may"), "\(bytes.prefix(600))")
    let xml = "<a>" + String(repeating: "<b/>", count: 20_000) + "</a>"
    let socket = try RawClient(port: server.port)
    socket.send(
      "POST /xpath HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/xml\r\n"
        + "Content-Length: \(xml.utf8.count)\r\n\r\n\(xml)")
    let xpath = socket.readResponse(timeout: 120).text
    #expect(status(xpath) == 500 && xpath.contains("XPath evaluation"), "\(xpath.prefix(600))")
    #expect(status(get(server.port, "/ping")) == 200)
    let peak = ProcStat.residentBytes(server.processIdentifier, peak: true)
    #expect(peak < 128 << 20, "peak RSS \(peak >> 20) MiB")
  }

  /// The two budgets are flags: `--max-template-steps 1000` stops a 40 × 40 loop that the default lets
  /// through, `--max-template-bytes 1024` 2,100 random characters in 21 passes; values out of range are refused at start.
  @Test func templateBudgetsAreSetByFlags() throws {
    func templated(_ url: String, _ body: String) -> String {
      #"{"request":{"method":"GET","url":"\#(url)"},"response":{"status":200,"body":"\#(body)","transformers":["response-template"]}}"#
    }
    let fixtures = try TemporaryFixtures([
      ("loops.json", templated("/loops", "{{#each (range 0 40)}}{{#each (range 0 40)}}x{{/each}}{{/each}}")),
      (
        "bytes.json",
        templated("/bytes", "{{#each (range 0 20)}}{{randomValue length=100 type='ALPHABETIC'}}{{/each}}")
      ),
    ])
    defer { fixtures.remove() }
    let defaults = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { defaults.stop() }
    #expect(status(get(defaults.port, "/loops")) == 200)
    #expect(status(get(defaults.port, "/bytes")) == 200)
    let tight = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--max-template-steps", "1000",
      "--max-template-bytes", "1024",
    ])
    defer { tight.stop() }
    let loops = get(tight.port, "/loops")
    #expect(status(loops) == 500 && loops.contains("it took more than 1000 steps"), "\(loops.prefix(400))")
    let bytes = get(tight.port, "/bytes")
    #expect(status(bytes) == 500 && bytes.contains("1024 bytes"), "\(bytes.prefix(400))")
    for (flag, value) in [("--max-template-steps", "999"), ("--max-template-bytes", "1073741825")] {
      let (exitStatus, text) = try runBinary([flag, value, "--fixtures", fixtures.fixtures])
      #expect(exitStatus == 2 && text.contains(flag), "\(flag) \(value): \(text)")
    }
  }

  /// A 27 MB JSON body sent to an `equalToJson` stub is matched off the event loop: once the server has
  /// spent half a second of CPU on it (read from /proc, so the matching has begun), another client's
  /// `GET /ping` is answered while the large request's answer has still not come (before, the loop parsed
  /// the body and every other client waited the seconds it took: the ping's answer came after it). The
  /// large request is then answered (404, the body differs) and the journal holds both.
  @Test func largeBodiesAreMatchedOffTheLoop() throws {
    let stub =
      #"{"request":{"method":"POST","url":"/json","bodyPatterns":[{"equalToJson":{"items":[1,2,3]}}]},"response":{"status":200,"body":"matched"}}"#
    let fixtures = try TemporaryFixtures([
      ("json.json", stub), ("ping.json", stubJSON("/ping", body: "pong")),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    var json = #"{"items":["#
    for k in 0..<400_000 {
      if k > 0 { json += "," }
      json += #"{"id":\#(k),"name":"n\#(k)","tags":["a","b"],"v":\#(k).5}"#
    }
    json += "]}"
    let before = ProcStat.cpuSeconds(server.processIdentifier)
    let large = try RawClient(port: server.port)
    large.send(
      "POST /json HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
        + "Content-Length: \(json.utf8.count)\r\n\r\n")
    large.send(json)
    #expect(eventually(timeout: 120) { ProcStat.cpuSeconds(server.processIdentifier) - before >= 0.5 })
    let ping = get(server.port, "/ping", timeout: 120)
    #expect(status(ping) == 200 && ping.hasSuffix("pong"), "\(ping.prefix(200))")
    var pending = pollfd(fd: large.fd, events: Int16(POLLIN), revents: 0)
    #expect(poll(&pending, 1, 0) == 0, "the large request was answered before the ping")
    let answer = large.readResponse(timeout: 300).text
    #expect(status(answer) == 404, "\(answer.prefix(300))")
    #expect(server.isRunning)
  }

  /// Serves the OpenAPI `document` (JSON) with no fixtures, from the binary.
  private func serveOpenAPI(_ document: String) throws -> (MockServerProcess, TemporaryFixtures) {
    let fixtures = try TemporaryFixtures([])
    let spec = fixtures.root + "/api.json"
    try document.write(toFile: spec, atomically: true, encoding: .utf8)
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--allow-empty", "--no-watch", "--quiet", "--openapi", spec,
    ])
    return (server, fixtures)
  }

  /// `--openapi` with int64 and uint64 bounds, `1e19` and ±1e308: the server starts (it trapped, SIGILL,
  /// converting the bounds to `Int`) and answers with a value in range.
  @Test func openAPINumbersAreRangeChecked() throws {
    let (server, fixtures) = try serveOpenAPI(
      #"""
      {"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{
       "/big":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
        "type":"object","required":["a","b","c","d","e"],"properties":{
         "a":{"type":"integer","format":"int64","maximum":9223372036854775807},
         "b":{"type":"integer","format":"uint64","maximum":18446744073709551615},
         "c":{"type":"integer","minimum":1e19},
         "d":{"type":"number","minimum":-1e308,"maximum":1e308},
         "e":{"type":"integer","minimum":-9223372036854775808,"exclusiveMaximum":9223372036854775807,"multipleOf":9223372036854775807}}}}}}}}}}}
      """#)
    defer {
      server.stop()
      fixtures.remove()
    }
    let big = get(server.port, "/big")
    #expect(status(big) == 200, "\(big.prefix(400))")
    #expect(server.isRunning)
  }

  /// `minItems` and `minLength` of 100,000,000 (nested, too): the generated answer is cut at the
  /// generation budget (100,000 items and characters), and the process's peak RSS stays under 256 MiB
  /// (it ran out of memory at start).
  @Test func openAPIGenerationHasABudget() throws {
    let (server, fixtures) = try serveOpenAPI(
      #"""
      {"openapi":"3.1.0","info":{"title":"t","version":"1"},"paths":{
       "/many":{"get":{"responses":{"200":{"description":"ok","content":{"application/json":{"schema":{
        "type":"object","required":["list","text"],"properties":{
         "list":{"type":"array","minItems":100000000,"items":{"type":"string","minLength":100000000}},
         "text":{"type":"string","minLength":100000000}}}}}}}}}}}
      """#)
    defer {
      server.stop()
      fixtures.remove()
    }
    #expect(status(get(server.port, "/many", timeout: 60)) == 200)
    #expect(server.isRunning)
    let peak = ProcStat.residentBytes(server.processIdentifier, peak: true)
    #expect(peak < 256 << 20, "peak RSS \(peak >> 20) MiB")
  }

  /// Stub ids are ASCII and compare as bytes: a stub with id `é` (precomposed) is refused with 422 naming
  /// the rule, so it cannot replace one with `e` + U+0301 or the reverse; and a request for the Kelvin sign
  /// (U+212A, canonically equivalent to `K`) names no stub, so deleting it leaves stub `K` in place.
  @Test func stubIDsCompareAsExactBytes() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--allow-empty", "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    func send(_ method: String, _ path: String, _ json: String = "") -> String {
      guard let socket = try? RawClient(port: server.port) else { return "" }
      socket.send(
        "\(method) \(path) HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
          + "Content-Length: \(json.utf8.count)\r\n\r\n\(json)")
      return socket.readResponse(timeout: 30).text
    }
    func stub(_ id: String, _ body: String) -> String {
      #"{"id":"\#(id)","request":{"method":"GET","url":"/\#(body)"},"response":{"status":200,"body":"\#(body)"}}"#
    }
    let accented = send("POST", "/__admin/mappings", stub("\u{E9}", "one"))
    #expect(status(accented) == 422 && accented.contains("an ASCII id"), "\(accented.prefix(400))")
    #expect(status(send("POST", "/__admin/mappings", stub("e\u{301}", "two"))) == 422)
    #expect(status(send("POST", "/__admin/mappings", stub("K", "kelvin"))) == 201)
    #expect(status(send("DELETE", "/__admin/mappings/%E2%84%AA")) == 404)
    #expect(status(send("GET", "/__admin/mappings/%E2%84%AA")) == 404)
    #expect(status(send("GET", "/__admin/mappings/K")) == 200)
    #expect(status(get(server.port, "/kelvin")) == 200)
  }

  /// A proxy stub's upstream connection goes back to the pool after the answer and is closed once its
  /// documented 4 s of idleness are up, with no further exchange (it stayed open until the upstream closed
  /// it, 60 s later here): the proxy's open sockets come back to the listener alone.
  @Test func idleUpstreamConnectionsAreClosed() throws {
    let upstreamFixtures = try TemporaryFixtures([("ping.json", stubJSON("/ping", body: "upstream"))])
    defer { upstreamFixtures.remove() }
    let upstream = try MockServerProcess.launch(arguments: [
      "--fixtures", upstreamFixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { upstream.stop() }
    let proxy =
      #"{"request":{"method":"GET","urlPath":"/ping"},"response":{"proxyBaseUrl":"http://127.0.0.1:\#(upstream.port)"}}"#
    let fixtures = try TemporaryFixtures([("proxy.json", proxy)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let idle = ProcStat.openSockets(server.processIdentifier)
    let answer = get(server.port, "/ping")
    #expect(status(answer) == 200 && answer.hasSuffix("upstream"), "\(answer.prefix(300))")
    #expect(
      eventually(timeout: 30) { ProcStat.openSockets(server.processIdentifier) == idle },
      "\(ProcStat.openSockets(server.processIdentifier)) sockets open, \(idle) when idle")
  }
}
