import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Issue 21: the dashboard's live request log, `GET /__admin/events` (Server-Sent Events), tested over
/// real sockets against the binary, without a browser.
@Suite("Dashboard: the event stream", .serialized)
struct EventStreamTests {
  /// One parsed event-stream frame (WHATWG HTML, "event stream interpretation").
  struct Frame {
    var id: String?
    var event = "message"
    var data: [String] = []
    var comment: String?
    var json: [String: Any]? {
      guard let text = data.first,
        let value = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
      else { return nil }
      return value
    }
  }

  /// Opens `GET /__admin/events` and returns the socket after the response head, with its head text.
  static func openStream(_ port: Int, query: String = "", lastEventID: String? = nil) throws -> (
    RawClient, String, [UInt8]
  ) {
    let socket = try RawClient(port: port)
    var text =
      "GET /__admin/events\(query) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
    if let lastEventID { text += "Last-Event-ID: \(lastEventID)\r\n" }
    socket.send(text + "\r\n")
    let (bytes, _) = socket.read(timeout: 10) { bytes in
      String(decoding: bytes, as: UTF8.self).contains("\r\n\r\n")
    }
    let all = String(decoding: bytes, as: UTF8.self)
    guard let range = all.range(of: "\r\n\r\n") else { throw RobustnessError("no head: \(all)") }
    let head = String(all[..<range.lowerBound])
    let rest = Array(all[range.upperBound...].utf8)
    return (socket, head, rest)
  }

  /// Splits event-stream text into frames (blank-line separated); returns the frames and the unfinished
  /// tail.
  static func frames(_ text: String) -> (frames: [Frame], rest: String) {
    var frames: [Frame] = []
    var blocks = text.components(separatedBy: "\n\n")
    let rest = blocks.removeLast()
    for block in blocks {
      var frame = Frame()
      for line in block.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasPrefix(":") {
          frame.comment = String(line.dropFirst()).trimmingCharacters(in: .whitespaces)
          continue
        }
        let parts = line.split(separator: ":", maxSplits: 1, omittingEmptySubsequences: false)
        let field = String(parts[0])
        var value = parts.count > 1 ? String(parts[1]) : ""
        if value.hasPrefix(" ") { value.removeFirst() }
        switch field {
        case "id": frame.id = value
        case "event": frame.event = value
        case "data": frame.data.append(value)
        default: break
        }
      }
      frames.append(frame)
    }
    return (frames, rest)
  }

  /// Reads frames until `enough` holds or `timeout` seconds pass.
  static func readFrames(
    _ socket: RawClient, start: [UInt8] = [], timeout: Double = 10, until enough: ([Frame]) -> Bool
  ) -> [Frame] {
    var buffer = start
    var all: [Frame] = []
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
      let (parsed, rest) = frames(String(decoding: buffer, as: UTF8.self))
      all += parsed
      buffer = Array(rest.utf8)
      if enough(all) { break }
      let (bytes, end) = socket.read(timeout: 0.2) { !$0.isEmpty }
      buffer += bytes
      if end.closed { break }
    }
    return all
  }

  /// Answers `GET /a` whatever the query.
  static let stubA = #"{"request":{"method":"GET","urlPath":"/a"},"response":{"status":200,"body":"ok"}}"#

  /// The binary serving ``stubA`` from a temporary fixtures folder (stop it, then remove the folder).
  static func launchWithStubA() throws -> (MockServerProcess, TemporaryFixtures) {
    let fixtures = try TemporaryFixtures([("a.json", stubA)])
    do {
      let server = try MockServerProcess.launch(arguments: [
        "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
      ])
      return (server, fixtures)
    } catch {
      fixtures.remove()
      throw error
    }
  }

  static func requestEvents(_ frames: [Frame]) -> [Frame] { frames.filter { $0.event == "request" } }

  @Test func framingHeadAndHeartbeat() throws {
    let fixtures = try TemporaryFixtures([
      (
        "hello.json",
        #"{"name":"say hello","request":{"method":"GET","url":"/hello"},"response":{"status":200,"body":"hi","fixedDelayMilliseconds":20}}"#
      )
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let (socket, head, rest) = try EventStreamTests.openStream(server.port, query: "?heartbeat=200")
    let lower = head.lowercased()
    #expect(head.hasPrefix("HTTP/1.1 200"), "\(head)")
    #expect(lower.contains("content-type: text/event-stream"))
    #expect(lower.contains("cache-control: no-store"))
    #expect(!lower.contains("content-length"), "an event stream has no length: \(head)")
    #expect(!lower.contains("transfer-encoding"))
    // Served while the stream is open; one matched (with its delay), one unmatched.
    #expect(status(get(server.port, "/hello")) == 200)
    #expect(status(get(server.port, "/nothing-here?x=1")) == 404)
    let frames = EventStreamTests.readFrames(socket, start: rest) { frames in
      EventStreamTests.requestEvents(frames).count >= 2 && frames.contains { $0.comment == "heartbeat" }
    }
    let events = EventStreamTests.requestEvents(frames)
    try #require(events.count >= 2, "frames: \(frames)")
    let hello = try #require(events[0].json)
    #expect(hello["method"] as? String == "GET")
    #expect(hello["url"] as? String == "/hello")
    #expect(hello["status"] as? Int == 200)
    #expect(hello["matched"] as? Bool == true)
    #expect(hello["stubName"] as? String == "say hello")
    #expect(hello["delayMs"] as? Int == 20)
    #expect((hello["latencyMs"] as? Double ?? 0) >= 20)
    let miss = try #require(events[1].json)
    #expect(miss["url"] as? String == "/nothing-here?x=1")
    #expect(miss["status"] as? Int == 404)
    #expect(miss["matched"] as? Bool == false)
    // Every event has an id (increasing) and one data line; heartbeats are comments.
    let ids = events.compactMap { $0.id.flatMap { Int($0) } }
    #expect(ids.count == events.count && ids == ids.sorted() && Set(ids).count == ids.count)
    #expect(events.allSatisfy { $0.data.count == 1 })
    #expect(frames.contains { $0.comment == "heartbeat" }, "no heartbeat comment within the read")
    // The first bytes set the reconnection time.
    #expect(String(decoding: rest, as: UTF8.self).hasPrefix("retry: ") || frames.isEmpty == false)
    // Bad heartbeat values are refused, not trusted.
    let bad = try RawClient(port: server.port)
    bad.send("GET /__admin/events?heartbeat=5 HTTP/1.1\r\nHost: localhost\r\n\r\n")
    #expect(status(bad.readResponse().text) == 400)
  }

  @Test func reconnectionReplaysAfterLastEventID() throws {
    let (server, fixtures) = try EventStreamTests.launchWithStubA()
    defer {
      server.stop()
      fixtures.remove()
    }
    let port = server.port
    var (socket, _, rest) = try EventStreamTests.openStream(port)
    for _ in 0..<3 { #expect(status(get(port, "/a")) == 200) }
    let first = EventStreamTests.requestEvents(
      EventStreamTests.readFrames(socket, start: rest) { EventStreamTests.requestEvents($0).count >= 3 })
    try #require(first.count == 3)
    let lastID = try #require(first.last?.id)
    socket = try RawClient(port: port)  // the viewer goes away (the old socket closes when replaced)
    for i in 0..<2 { #expect(status(get(port, "/a?after=\(i)")) == 200) }
    // Reconnection: only what came after the last id seen, in order, then live events.
    (socket, _, rest) = try EventStreamTests.openStream(port, lastEventID: lastID)
    #expect(status(get(port, "/a?live=1")) == 200)
    let replay = EventStreamTests.requestEvents(
      EventStreamTests.readFrames(socket, start: rest) { EventStreamTests.requestEvents($0).count >= 3 })
    #expect(replay.compactMap { $0.json?["url"] as? String } == ["/a?after=0", "/a?after=1", "/a?live=1"])
    #expect(replay.compactMap { $0.id.flatMap { Int($0) } }.allSatisfy { $0 > Int(lastID) ?? 0 })
    // A new viewer (no Last-Event-ID) starts with the recent events kept.
    let (fresh, _, freshRest) = try EventStreamTests.openStream(port)
    let all = EventStreamTests.requestEvents(
      EventStreamTests.readFrames(fresh, start: freshRest, timeout: 5) {
        EventStreamTests.requestEvents($0).count >= 6
      })
    #expect(all.count == 6)
  }

  /// A viewer that never reads costs a bounded queue: events for it are dropped and counted, the server's
  /// memory does not grow with the traffic, serving goes on, and the stalled stream is closed after the
  /// idle timeout.
  @Test func slowViewerIsDroppedWithoutMemoryGrowth() throws {
    let fixtures = try TemporaryFixtures([
      ("any.json", #"{"request":{"method":"GET","urlPathPattern":"/big/.*"},"response":{"status":200}}"#)
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--no-journal", "--idle-timeout-ms", "15000",
    ])
    defer { server.stop() }
    let port = server.port
    let pid = server.processIdentifier
    let slow = try RawClient(port: port)
    slow.setReceiveBuffer(4096)
    slow.send("GET /__admin/events HTTP/1.1\r\nHost: localhost\r\n\r\n")
    usleep(200_000)
    // 3 KB URLs: 8,000 events are ~25 MB of frames a server buffering without bound would hold (the
    // stalled stream is closed only after 15 s without progress, longer than the traffic takes).
    let path = "/big/" + String(repeating: "x", count: 3000)
    let before = ProcStat.residentBytes(pid)
    let client = try RawClient(port: port)
    let batch = Array(String(repeating: "GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n", count: 200).utf8)
    var answered = 0
    var text = ""
    for _ in 0..<40 {
      client.send(batch)
      var got = 0
      while got < 200 {
        let (bytes, end) = client.read(timeout: 20) { !$0.isEmpty }
        // The responses have no content: each ends at its head's blank line.
        text += String(decoding: bytes, as: UTF8.self)
        var parts = text.components(separatedBy: "\r\n\r\n")
        text = parts.removeLast()
        got += parts.count
        if end.closed || bytes.isEmpty { break }
      }
      answered += got
    }
    let growth = ProcStat.residentBytes(pid) - before
    let dropped = EventStreamTests.number(get(port, "/__admin/dashboard/state"), "dropped") ?? 0
    print("slow viewer: RSS grew by \(growth >> 10) KiB over 8,000 requests, \(dropped) event(s) dropped")
    #expect(answered == 8_000)
    #expect(growth < 12 << 20, "RSS grew by \(growth >> 20) MiB with a stalled viewer")
    #expect(dropped > 2_000, "drops counted: \(dropped)")
    // The stalled stream is closed once its output made no progress for the idle timeout.
    #expect(
      eventually(timeout: 30) {
        EventStreamTests.number(get(port, "/__admin/dashboard/state"), "viewers") == 0
      })
  }

  /// Ten viewers reading: every request is still answered, every viewer sees every event.
  @Test func tenViewersDoNotStopServing() throws {
    let (server, fixtures) = try EventStreamTests.launchWithStubA()
    defer {
      server.stop()
      fixtures.remove()
    }
    let port = server.port
    var viewers: [(RawClient, [UInt8])] = []
    for _ in 0..<10 {
      let (socket, _, rest) = try EventStreamTests.openStream(port)
      viewers.append((socket, rest))
    }
    let client = try RawClient(port: port)
    let started = Date()
    var ok = 0
    for i in 0..<300 {
      client.send("GET /a?n=\(i) HTTP/1.1\r\nHost: localhost\r\n\r\n")
      if status(client.readResponse().text) == 200 { ok += 1 }
    }
    let perRequest = Date().timeIntervalSince(started) / 300 * 1000
    print(
      "serving with ten viewers: \(String(format: "%.3f", perRequest)) ms per request (sequential, debug build)"
    )
    #expect(ok == 300)
    for (socket, rest) in viewers {
      let events = EventStreamTests.requestEvents(
        EventStreamTests.readFrames(socket, start: rest, timeout: 20) {
          EventStreamTests.requestEvents($0).count >= 300
        })
      #expect(events.count == 300)
    }
  }

  /// The page and its data routes: security headers, and what a page of another site is refused.
  @Test func pageHeadersAndCrossSiteRefusals() throws {
    let (server, fixtures) = try EventStreamTests.launchWithStubA()
    defer {
      server.stop()
      fixtures.remove()
    }
    let port = server.port
    let page = get(port, "/__admin/dashboard")
    let lower = page.lowercased()
    #expect(status(page) == 200)
    #expect(lower.contains("content-type: text/html"))
    #expect(lower.contains("content-security-policy: default-src 'none'; script-src 'sha256-"))
    #expect(lower.contains("frame-ancestors 'none'"))
    #expect(lower.contains("x-frame-options: deny"))
    #expect(!lower.contains("http://") && !lower.contains("https://"), "the page names no outside URL")
    #expect(page.utf8.count < 64 << 10)
    func send(_ lines: [String], path: String) throws -> String {
      let socket = try RawClient(port: port)
      socket.send("GET \(path) HTTP/1.1\r\n" + lines.map { $0 + "\r\n" }.joined() + "\r\n")
      return socket.readResponse().text
    }
    // An <img> or <script> of another site sends no Origin, but the browser marks it.
    #expect(
      status(try send(["Host: localhost", "Sec-Fetch-Site: cross-site"], path: "/__admin/events")) == 403)
    #expect(
      status(try send(["Host: localhost", "Sec-Fetch-Site: same-site"], path: "/__admin/dashboard/state"))
        == 403)
    // EventSource from another origin sends Origin; a rebinding page another Host.
    #expect(
      status(try send(["Host: localhost", "Origin: http://evil.example"], path: "/__admin/events")) == 403)
    #expect(status(try send(["Host: evil.example"], path: "/__admin/dashboard")) == 403)
    let state = try send(
      ["Host: localhost", "Sec-Fetch-Site: same-origin"], path: "/__admin/dashboard/state")
    #expect(status(state) == 200)
    #expect(state.contains(#""stubs""#) && state.contains(#""hits""#))
  }

  /// The last reload result, located problems included, from the hot reload and from the reset routes.
  @Test func lastReloadResultIsReported() throws {
    let fixtures = try TemporaryFixtures([("a.json", EventStreamTests.stubA)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--quiet"])
    defer { server.stop() }
    let port = server.port
    let initial = get(port, "/__admin/dashboard/state")
    #expect(initial.contains(#""initial" : true"#) || initial.contains(#""initial": true"#), "\(initial)")
    let broken = #"{"request":{"method":"GET","url":5},"response":{"status":200}}"#
    try broken.write(toFile: fixtures.fixtures + "/mappings/b.json", atomically: true, encoding: .utf8)
    #expect(
      eventually(timeout: 20) {
        let state = get(port, "/__admin/dashboard/state")
        return state.contains("mappings/b.json") && state.contains("$.request.url")
      })
    let failed = get(port, "/__admin/dashboard/state")
    #expect(failed.contains(#""succeeded" : false"#) || failed.contains(#""succeeded": false"#), "\(failed)")
    #expect(status(get(port, "/a")) == 200, "the last good set keeps serving")
    // A reset with the folder fixed reports success.
    try FileManager.default.removeItem(atPath: fixtures.fixtures + "/mappings/b.json")
    let socket = try RawClient(port: port)
    socket.send("POST /__admin/mappings/reset HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n")
    #expect(status(socket.readResponse().text) == 200)
    let fixed = get(port, "/__admin/dashboard/state")
    #expect(fixed.contains(#""succeeded" : true"#) || fixed.contains(#""succeeded": true"#))
    #expect(!fixed.contains("mappings/b.json"))
  }

  /// A number field anywhere in a JSON response text (first occurrence).
  static func number(_ response: String, _ name: String) -> Int? {
    guard let range = response.range(of: "\"\(name)\" : ") ?? response.range(of: "\"\(name)\":") else {
      return nil
    }
    return Int(response[range.upperBound...].drop { $0 == " " }.prefix { $0.isNumber })
  }
}

extension EventStreamTests {
  /// Issue 42: the dashboard was empty until it was opened (a 404 seen, then the page opened: no
  /// request). The first viewer now gets the journal's retained entries, then live ones; an unmatched
  /// one's entry has its near misses.
  @Test func firstViewerGetsTheRequestsMadeBeforeIt() throws {
    let fixtures = try TemporaryFixtures([("hello.json", stubJSON("/hello", body: "hi"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    #expect(status(get(server.port, "/hello")) == 200)
    #expect(status(get(server.port, "/hellp")) == 404)
    let (socket, _, rest) = try EventStreamTests.openStream(server.port)
    var text = String(decoding: rest, as: UTF8.self)
    socket.read(timeout: 20) { bytes in
      let all = text + String(decoding: bytes, as: UTF8.self)
      return EventStreamTests.requestEvents(EventStreamTests.frames(all).frames).count >= 2
    }.bytes.withUnsafeBufferPointer { text += String(decoding: $0, as: UTF8.self) }
    let events = EventStreamTests.requestEvents(EventStreamTests.frames(text).frames)
    #expect(events.compactMap { $0.json?["url"] as? String } == ["/hello", "/hellp"], "\(text)")
    // Then live.
    #expect(status(get(server.port, "/hello")) == 200)
    let (live, _) = socket.read(timeout: 20) { bytes in
      String(decoding: bytes, as: UTF8.self).contains("event: request")
    }
    #expect(String(decoding: live, as: UTF8.self).contains(#""url":"/hello""#))
    let id = try #require(events.last?.json?["id"] as? String)
    let entry = get(server.port, "/__admin/requests/\(id)")
    #expect(entry.contains("nearMisses") && entry.contains("/hello"), "\(entry)")
  }
}
