import Foundation
import MockJSON
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 45, server-sent events: `x-sse` stubs (docs/streaming.md, "Server-sent events"), over real sockets
/// against the binary.
@Suite("Server-sent events (x-sse stubs)", .serialized)
struct ServerSentEventsTests {
  /// A stub `GET url` whose response has `x-sse` (a JSON object's text) and `extra` response fields.
  static func stub(_ url: String, _ sse: String, extra: String = "") -> String {
    #"{"request":{"method":"GET","urlPath":"\#(url)"},"response":{"status":200\#(extra),"x-sse":\#(sse)}}"#
  }

  static func launch(_ stubs: [(String, String)], _ extra: [String] = []) throws -> (
    TemporaryFixtures, MockServerProcess
  ) {
    let fixtures = try TemporaryFixtures(stubs)
    do {
      let server = try MockServerProcess.launch(
        arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--quiet"] + extra)
      return (fixtures, server)
    } catch {
      fixtures.remove()
      throw error
    }
  }

  /// An open stream: the socket, the response head and the bytes read after it.
  struct Stream {
    var socket: RawClient
    var head: String
    var rest: [UInt8]
    var lowerHead: String { head.lowercased() }
  }

  /// Sends `GET path` (or `method`) with `headers` and reads the response head.
  static func open(
    _ port: Int, _ path: String, method: String = "GET", version: String = "HTTP/1.1", headers: [String] = []
  ) throws -> Stream {
    let socket = try RawClient(port: port)
    var text = "\(method) \(path) \(version)\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
    for h in headers { text += h + "\r\n" }
    socket.send(text + "\r\n")
    let (bytes, _) = socket.read(timeout: 10) { String(decoding: $0, as: UTF8.self).contains("\r\n\r\n") }
    let all = String(decoding: bytes, as: UTF8.self)
    guard let range = all.range(of: "\r\n\r\n") else { throw RobustnessError("no head: \(all)") }
    return Stream(
      socket: socket, head: String(all[..<range.lowerBound]), rest: Array(all[range.upperBound...].utf8))
  }

  /// The content of chunked bytes so far and whether the last chunk came.
  static func dechunk(_ bytes: [UInt8]) -> (content: String, ended: Bool) {
    var out: [UInt8] = []
    var i = 0
    func lineEnd(from start: Int) -> Int? {
      var k = start
      while k + 1 < bytes.count {
        if bytes[k] == 13, bytes[k + 1] == 10 { return k }
        k += 1
      }
      return nil
    }
    while let lineEnd = lineEnd(from: i) {
      guard let size = Int(String(decoding: bytes[i..<lineEnd], as: UTF8.self), radix: 16) else { break }
      if size == 0 { return (String(decoding: out, as: UTF8.self), true) }
      let start = lineEnd + 2
      guard start + size + 2 <= bytes.count else { break }
      out += bytes[start..<start + size]
      i = start + size + 2
    }
    return (String(decoding: out, as: UTF8.self), false)
  }

  /// Reads the chunked stream until `enough` holds for its content (or it ends, or 10 s pass).
  static func readChunked(_ s: inout Stream, timeout: Double = 10, until enough: (String) -> Bool) -> (
    content: String, ended: Bool, end: RawClient.ReadEnd
  ) {
    let (bytes, end) = s.socket.read(timeout: timeout) { more in
      let (content, ended) = dechunk(s.rest + more)
      return ended || enough(content)
    }
    s.rest += bytes
    let (content, ended) = dechunk(s.rest)
    return (content, ended, end)
  }

  /// The events of event-stream text: (event, id, data lines) per blank-line-ended block; comments skipped.
  static func events(_ text: String) -> [(event: String?, id: String?, data: [String])] {
    var out: [(String?, String?, [String])] = []
    var blocks = text.components(separatedBy: "\n\n")
    blocks.removeLast()
    for block in blocks {
      var e: (String?, String?, [String]) = (nil, nil, [])
      var any = false
      for line in block.split(separator: "\n", omittingEmptySubsequences: false) where !line.hasPrefix(":") {
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        var value = parts.count > 1 ? String(parts[1]) : ""
        if value.hasPrefix(" ") { value.removeFirst() }
        any = true
        switch parts[0] {
        case "event": e.0 = value
        case "id": e.1 = value
        case "data": e.2.append(value)
        default: break
        }
      }
      if any { out.append(e) }
    }
    return out
  }

  /// The journal's entries for `url` (`GET /__admin/requests`).
  static func journal(_ port: Int, url: String) throws -> [JSONObject] {
    let text = get(port, "/__admin/requests")
    guard let r = text.range(of: "\r\n\r\n") else { return [] }
    let json = try JSONValue.parse(String(text[r.upperBound...]))
    return (json["requests"]?.arrayValue ?? []).compactMap(\.objectValue).filter {
      $0["request"]?["url"]?.stringValue == url
    }
  }

  // MARK: Load errors

  /// Every rule of the format is a load error naming the file, the JSON path and what was expected.
  @Test func loadErrorsNameFileAndPath() throws {
    let ok = #"{"events":[{"data":"x"}]}"#
    let cases: [(String, String, String)] = [
      (
        Self.stub("/e0", #"{"events":[{"id":"a\nb","data":"x"}]}"#), "$.response.x-sse.events[0].id",
        "without CR, LF or NUL"
      ),
      (
        Self.stub("/e1", #"{"events":[{"id":"a\u0000b","data":"x"}]}"#), "$.response.x-sse.events[0].id",
        "without CR, LF or NUL"
      ),
      (
        Self.stub("/e2", #"{"events":[{"id":"a\rb"}]}"#), "$.response.x-sse.events[0].id",
        "without CR, LF or NUL"
      ),
      (
        #"{"request":{"method":"GET","urlPath":"/e3"},"response":{"status":500,"x-sse":\#(ok)}}"#,
        "$.response.status", "2xx"
      ),
      (Self.stub("/e4", ok, extra: #","body":"b""#), "$.response.body", "x-sse"),
      (Self.stub("/e5", ok, extra: #","jsonBody":{}"#), "$.response.jsonBody", "x-sse"),
      (Self.stub("/e6", ok, extra: #","base64Body":"AA==""#), "$.response.base64Body", "x-sse"),
      (Self.stub("/e7", ok, extra: #","bodyFileName":"a.txt""#), "$.response.bodyFileName", "x-sse"),
      (Self.stub("/e8", ok, extra: #","fault":"EMPTY_RESPONSE""#), "$.response.fault", "x-sse"),
      (
        Self.stub("/e9", ok, extra: #","chunkedDribbleDelay":{"numberOfChunks":2,"totalDuration":10}"#),
        "$.response.chunkedDribbleDelay", "x-sse"
      ),
      (
        Self.stub("/e10", ok, extra: #","proxyBaseUrl":"http://127.0.0.1:1""#), "$.response.proxyBaseUrl",
        "x-sse"
      ),
      (Self.stub("/e11", ok, extra: #","x-websocket":{}"#), "$.response.x-websocket", "x-sse"),
      (Self.stub("/e12", ok, extra: #","x-envelope":{"name":"ok"}"#), "$.response.x-envelope", "x-sse"),
      (
        Self.stub("/e13", #"{"events":[{"data":"x","delay":{"timeUnit":"WEEKS","value":1}}]}"#),
        "$.response.x-sse.events[0].delay.timeUnit", "MILLISECONDS"
      ),
      (
        Self.stub("/e14", #"{"events":[{"data":"x","delay":{"timeUnit":"HOURS","value":25}}]}"#),
        "$.response.x-sse.events[0].delay.value", "24 hours"
      ),
      (
        Self.stub("/e15", #"{"events":[{"data":"x","delay":{"timeUnit":"SECONDS","value":-1}}]}"#),
        "$.response.x-sse.events[0].delay.value", "0 or more"
      ),
      (Self.stub("/e16", #"{"events":[],"repeat":0}"#), "$.response.x-sse.repeat", "1 or more"),
      (
        Self.stub("/e17", #"{"events":[],"heartbeatMilliseconds":-5}"#),
        "$.response.x-sse.heartbeatMilliseconds",
        "0 or more"
      ),
      (
        Self.stub("/e18", #"{"events":[],"heartbeatMilliseconds":86400001}"#),
        "$.response.x-sse.heartbeatMilliseconds", "0...86400000"
      ),
      (Self.stub("/e19", #"{"events":[],"bogus":1}"#), "$.response.x-sse.bogus", "x-sse field"),
      (Self.stub("/e20", #"{"events":{"data":"x"}}"#), "$.response.x-sse.events", "array of events"),
      (
        Self.stub("/e21", #"{"events":[{"data":"x","retry":-1}]}"#), "$.response.x-sse.events[0].retry",
        "0 or more"
      ),
      (Self.stub("/e22", #"{"events":[{"data":1}]}"#), "$.response.x-sse.events[0].data", "a string"),
      (
        Self.stub("/e23", #"{"events":[{"event":"a\nb"}]}"#), "$.response.x-sse.events[0].event", "without CR"
      ),
      (Self.stub("/e24", #"{"events":[],"loop":"yes"}"#), "$.response.x-sse.loop", "true or false"),
      (
        Self.stub("/e25", #"{"events":[],"closeConnection":1}"#), "$.response.x-sse.closeConnection",
        "true or false"
      ),
      (
        Self.stub("/e26", #"{"events":[],"resumeFromLastEventId":null}"#),
        "$.response.x-sse.resumeFromLastEventId", "true or false"
      ),
      (
        Self.stub("/e27", #"{"events":[{"data":"x","delay":{"value":1}}]}"#),
        "$.response.x-sse.events[0].delay.timeUnit", "SECONDS"
      ),
      (
        Self.stub(
          "/e28", #"{"events":[{"data":"{{#each}}"}]}"#, extra: #","transformers":["response-template"]"#),
        "$.response.x-sse.events[0].data", "1:"
      ),
      (Self.stub("/e29", "[]"), "$.response.x-sse", "an object"),
    ]
    let files =
      cases.enumerated().map { ("s\($0.offset).json", $0.element.0) } + [
        ("good.json", Self.stub("/good", #"{"events":[{"data":"x","delay":{"timeUnit":"DAYS","value":1}}]}"#))
      ]
    let fixtures = try TemporaryFixtures(files)
    defer { fixtures.remove() }
    let (code, output) = try runBinary(["lint", fixtures.fixtures])
    #expect(code != 0)
    let lines = output.split(separator: "\n").map(String.init)
    for (k, c) in cases.enumerated() {
      #expect(
        lines.contains { $0.contains("s\(k).json") && $0.contains(c.1) && $0.contains(c.2) },
        "s\(k): \(output)")
    }
    #expect(!lines.contains { $0.contains("good.json") }, "\(output)")
  }

  // MARK: Serving

  /// The head, the framing of every field (data split on CRLF, LF and CR; an empty data line; retry alone)
  /// and the end: the last chunk, then the connection closes. Never compressed.
  @Test func headAndEventFraming() throws {
    let sse = #"""
      {"events":[
        {"event":"price","id":"1","data":"{\"p\":100}"},
        {"data":"a\r\nb\nc\rd"},
        {"data":""},
        {"retry":5000},
        {"event":"note","id":"4","data":"bye","retry":10}
      ]}
      """#
    let (fixtures, server) = try Self.launch([
      ("feed.json", Self.stub("/feed", sse, extra: #","headers":{"X-Feed":"prices"}"#)),
      (
        "own.json",
        Self.stub(
          "/own", #"{"events":[{"data":"x"}]}"#,
          extra: #","headers":{"Content-Type":"text/event-stream; charset=utf-8","Cache-Control":"no-store"}"#
        )
      ),
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    var s = try Self.open(server.port, "/feed", headers: ["Accept-Encoding: gzip, deflate"])
    #expect(s.head.hasPrefix("HTTP/1.1 200"), "\(s.head)")
    #expect(s.lowerHead.contains("content-type: text/event-stream"))
    #expect(s.lowerHead.contains("cache-control: no-cache"))
    #expect(s.lowerHead.contains("x-accel-buffering: no"))
    #expect(s.lowerHead.contains("x-feed: prices"))
    #expect(s.lowerHead.contains("transfer-encoding: chunked"))
    #expect(s.lowerHead.contains("matched-stub-id: "))
    #expect(!s.lowerHead.contains("content-length"))
    #expect(!s.lowerHead.contains("content-encoding"))
    let (content, ended, end) = Self.readChunked(&s) { _ in false }
    #expect(ended)
    #expect(
      content
        == "event: price\nid: 1\ndata: {\"p\":100}\n\n" + "data: a\ndata: b\ndata: c\ndata: d\n\n"
        + "data: \n\n"
        + "retry: 5000\n" + "event: note\nid: 4\nretry: 10\ndata: bye\n\n")
    if end != .eof { #expect(s.socket.read(timeout: 10).end == .eof) }
    // The stub's own Content-Type and Cache-Control are kept.
    let own = try Self.open(server.port, "/own")
    #expect(own.lowerHead.contains("content-type: text/event-stream; charset=utf-8"))
    #expect(own.lowerHead.contains("cache-control: no-store"))
    #expect(!own.lowerHead.contains("no-cache"))
  }

  /// Events come in order, each after its delay (`timeUnit` in several units); `repeat` plays the list
  /// again, delays included.
  @Test func delaysOrderAndRepeat() throws {
    let sse = #"""
      {"events":[
        {"id":"1","data":"one"},
        {"id":"2","data":"two","delay":{"timeUnit":"MILLISECONDS","value":150}},
        {"id":"3","data":"three","delay":{"timeUnit":"MICROSECONDS","value":100000}}
      ],"repeat":2}
      """#
    let (fixtures, server) = try Self.launch([("feed.json", Self.stub("/feed", sse))])
    defer {
      server.stop()
      fixtures.remove()
    }
    var s = try Self.open(server.port, "/feed")
    // Read as they come: the first event is there before the stream ends.
    let first = Self.readChunked(&s) { Self.events($0).count >= 1 }
    #expect(Self.events(first.content).first?.data == ["one"])
    let (content, ended, _) = Self.readChunked(&s) { _ in false }
    #expect(ended)
    let all = Self.events(content)
    #expect(all.map(\.id) == ["1", "2", "3", "1", "2", "3"])
    #expect(all.map { $0.data.joined() } == ["one", "two", "three", "one", "two", "three"])
  }

  /// `loop` plays the list until the client leaves; the journal has the request once the client left
  /// (not before), with its status.
  @Test func loopUntilClientLeavesThenJournaled() throws {
    let sse =
      #"{"events":[{"data":"a"},{"data":"b","delay":{"timeUnit":"MILLISECONDS","value":5}}],"loop":true}"#
    let (fixtures, server) = try Self.launch([("feed.json", Self.stub("/feed", sse))])
    defer {
      server.stop()
      fixtures.remove()
    }
    var s = try Self.open(server.port, "/feed")
    let read = Self.readChunked(&s) { Self.events($0).count >= 12 }
    let datas = Self.events(read.content).map { $0.data.joined() }
    #expect(!read.ended)
    #expect(datas.count >= 12)
    #expect(datas.enumerated().allSatisfy { $0.element == ($0.offset % 2 == 0 ? "a" : "b") })
    #expect(try Self.journal(server.port, url: "/feed").isEmpty, "journaled while the stream is open")
    s.socket.close()
    #expect(try eventually(timeout: 10) { try !Self.journal(server.port, url: "/feed").isEmpty })
    let entries = try Self.journal(server.port, url: "/feed")
    #expect(entries.count == 1)
    #expect(entries.first?["response"]?["status"]?.numberValue?.intValue == 200)
    #expect(entries.first?["served"]?.boolValue == true)
  }

  /// `Last-Event-ID` skips through the event of that (rendered) id; nothing left is 204; an unknown id
  /// starts from the beginning; `resumeFromLastEventId: false` ignores the header.
  @Test func lastEventIDResumption() throws {
    let events =
      #"[{"id":"{{request.query.s}}-1","data":"one"},{"id":"{{request.query.s}}-2","data":"two"},{"id":"{{request.query.s}}-3","data":"three"}]"#
    let (fixtures, server) = try Self.launch([
      (
        "feed.json",
        Self.stub("/feed", #"{"events":\#(events)}"#, extra: #","transformers":["response-template"]"#)
      ),
      (
        "plain.json",
        Self.stub(
          "/plain", #"{"events":\#(events),"resumeFromLastEventId":false}"#,
          extra: #","transformers":["response-template"]"#)
      ),
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    func datas(_ path: String, _ lastID: String?) throws -> (String, [String]) {
      var s = try Self.open(server.port, path, headers: lastID.map { ["Last-Event-ID: \($0)"] } ?? [])
      guard s.head.hasPrefix("HTTP/1.1 200") else { return (s.head, []) }
      return (s.head, Self.events(Self.readChunked(&s) { _ in false }.content).map { $0.data.joined() })
    }
    #expect(try datas("/feed?s=x", "x-1").1 == ["two", "three"])
    #expect(try datas("/feed?s=x", "x-2").1 == ["three"])
    #expect(try datas("/feed?s=x", "y-2").1 == ["one", "two", "three"])
    #expect(try datas("/feed?s=x", nil).1 == ["one", "two", "three"])
    let (head, rest) = try datas("/feed?s=x", "x-3")
    #expect(head.hasPrefix("HTTP/1.1 204"), "\(head)")
    #expect(rest.isEmpty)
    #expect(try datas("/plain?s=x", "x-3").1 == ["one", "two", "three"])
  }

  /// `event`, `id` and `data` are templates with `response-template` or global templating; without
  /// either they are sent as written.
  @Test func templatedEvents() throws {
    let sse =
      #"{"events":[{"event":"{{request.path.symbol}}","id":"{{parameters.n}}","data":"{\"symbol\":\"{{request.path.symbol}}\"}"}]}"#
    func stub(_ transformers: Bool) -> String {
      #"{"request":{"method":"GET","urlPathTemplate":"/feeds/{symbol}"},"response":{"status":200,"#
        + (transformers ? #""transformers":["response-template"],"# : "")
        + #""transformerParameters":{"n":"7"},"x-sse":\#(sse)}}"#
    }
    for (transformers, global, templated) in [
      (true, false, true), (false, true, true), (false, false, false),
    ] {
      let (fixtures, server) = try Self.launch(
        [("feed.json", stub(transformers))], global ? ["--global-response-templating"] : [])
      defer {
        server.stop()
        fixtures.remove()
      }
      var s = try Self.open(server.port, "/feeds/ACME")
      let got = Self.events(Self.readChunked(&s) { _ in false }.content)
      try #require(got.count == 1)
      if templated {
        #expect(got[0].event == "ACME")
        #expect(got[0].id == "7")
        #expect(got[0].data == [#"{"symbol":"ACME"}"#])
      } else {
        #expect(got[0].event == "{{request.path.symbol}}")
        #expect(got[0].data == [#"{"symbol":"{{request.path.symbol}}"}"#])
      }
    }
  }

  /// An idle open stream gets `:` comment lines after `heartbeatMilliseconds`.
  @Test func heartbeatOnIdleStream() throws {
    let (fixtures, server) = try Self.launch([
      (
        "feed.json",
        Self.stub(
          "/feed", #"{"events":[{"data":"first"}],"closeConnection":false,"heartbeatMilliseconds":50}"#)
      )
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    var s = try Self.open(server.port, "/feed")
    let read = Self.readChunked(&s) { $0.contains("data: first\n\n:\n:\n") }
    #expect(read.content.hasPrefix("data: first\n\n:\n:\n"), "\(read.content)")
    #expect(!read.ended)
  }

  /// `HEAD` gets the head alone; an HTTP/1.0 client gets a close-delimited stream (no chunks).
  @Test func headAndHTTP10() throws {
    let (fixtures, server) = try Self.launch([
      ("feed.json", Self.stub("/feed", #"{"events":[{"data":"a"},{"data":"b"}]}"#))
    ])
    defer {
      server.stop()
      fixtures.remove()
    }
    let head = try Self.open(server.port, "/feed", method: "HEAD", headers: ["Connection: close"])
    #expect(head.head.hasPrefix("HTTP/1.1 200"))
    #expect(head.lowerHead.contains("content-type: text/event-stream"))
    let after = head.socket.read(timeout: 10)
    #expect(after.end == .eof)
    #expect((head.rest + after.bytes).isEmpty)
    let old = try Self.open(server.port, "/feed", version: "HTTP/1.0")
    #expect(!old.lowerHead.contains("transfer-encoding"))
    #expect(!old.lowerHead.contains("content-length"))
    let rest = old.socket.read(timeout: 10)
    #expect(rest.end == .eof)
    #expect(String(decoding: old.rest + rest.bytes, as: UTF8.self) == "data: a\n\ndata: b\n\n")
  }

  /// `closeConnection: false` holds the stream after the last event until `--max-hold-ms`, then ends it
  /// properly; the head waits for `fixedDelayMilliseconds`.
  @Test func openStreamEndsAtMaxHold() throws {
    let (fixtures, server) = try Self.launch(
      [
        (
          "feed.json",
          Self.stub(
            "/feed", #"{"events":[{"data":"a"}],"closeConnection":false,"heartbeatMilliseconds":0}"#,
            extra: #","fixedDelayMilliseconds":20"#)
        )
      ], ["--max-hold-ms", "300"])
    defer {
      server.stop()
      fixtures.remove()
    }
    var s = try Self.open(server.port, "/feed")
    let read = Self.readChunked(&s) { _ in false }
    #expect(read.ended)
    #expect(read.content == "data: a\n\n")
    #expect(try eventually(timeout: 10) { try !Self.journal(server.port, url: "/feed").isEmpty })
    let entries = try Self.journal(server.port, url: "/feed")
    #expect(entries.first?["served"]?.boolValue == true)
    // The head waited for the stub's delay.
    #expect(entries.first?["timing"]?["addedDelay"]?.numberValue?.intValue == 20)
  }

  /// Stopping the server ends every open stream with the last chunk; 200 simultaneous open streams are
  /// served by the event loop (no thread each).
  @Test func manyOpenStreamsThenShutdown() throws {
    let (fixtures, server) = try Self.launch([
      (
        "feed.json",
        Self.stub(
          "/feed", #"{"events":[{"data":"hello"}],"closeConnection":false,"heartbeatMilliseconds":0}"#)
      )
    ])
    defer {
      if server.isRunning { server.stop() }
      fixtures.remove()
    }
    let pid = server.processIdentifier
    let threadsBefore = Self.threads(pid)
    var streams: [Stream] = []
    for _ in 0..<200 { streams.append(try Self.open(server.port, "/feed")) }
    for k in streams.indices {
      let read = Self.readChunked(&streams[k]) { $0.contains("data: hello\n\n") }
      #expect(read.content == "data: hello\n\n", "stream \(k)")
    }
    // Still serving, and no thread per stream.
    #expect(status(get(server.port, "/__admin/health")) == 200)
    let threadsOpen = Self.threads(pid)
    #expect(
      threadsOpen < threadsBefore + 20, "\(threadsBefore) threads before, \(threadsOpen) with 200 streams")
    // Shutdown ends them all properly.
    let code = server.stop()
    #expect(code == 0)
    var ended = 0
    for k in streams.indices {
      let read = Self.readChunked(&streams[k], timeout: 5) { _ in false }
      if read.ended { ended += 1 }
    }
    #expect(ended == 200)
  }

  /// Threads of process `pid` (`/proc/<pid>/status`).
  static func threads(_ pid: Int32) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Threads:") })
    else { return 0 }
    return Int(line.dropFirst(8).trimmingCharacters(in: .whitespaces)) ?? 0
  }
}
