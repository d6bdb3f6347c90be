import Foundation
import MockServerTesting
import TestSupport
import Testing

/// Issue 45: the browser's view of streaming stubs. A page served by a stub connects, in headless Chromium,
/// to an `x-sse` stub with `EventSource` and to an `x-websocket` stub with `WebSocket`, and reports what it
/// received (Tests/Browser/cors_fetch.py runs the script). Restates the WHATWG HTML standard's
/// EventSource behaviour (events dispatched by type with `lastEventId`; a reconnection sends
/// `Last-Event-ID`; a 204 answer stops reconnecting) and RFC 6455 as a browser speaks it (subprotocol
/// negotiation, text and binary messages, the server's close code and reason).
@Suite("Streaming in headless Chromium", .serialized)
struct StreamingBrowserTests {
  static let feed = """
    {"request":{"method":"GET","urlPathTemplate":"/feeds/{symbol}"},
     "response":{"status":200,"transformers":["response-template"],
      "x-sse":{"events":[
        {"event":"price","id":"1","data":"{\\"symbol\\":\\"{{request.path.symbol}}\\",\\"price\\":100}"},
        {"event":"price","id":"2","data":"{\\"symbol\\":\\"{{request.path.symbol}}\\",\\"price\\":101}",
         "delay":{"timeUnit":"MILLISECONDS","value":50}},
        {"id":"3","data":"line one\\nline two","retry":100}],
      "closeConnection":true,"resumeFromLastEventId":true}}}
    """
  static let chat = """
    {"request":{"method":"GET","urlPath":"/ws/chat","queryParameters":{"room":{"matches":"[a-z]+"}}},
     "response":{"x-websocket":{"subprotocol":"chat.v1",
      "messages":[{"text":"welcome to {{request.query.room}}"},{"binary":"AAEC/w=="}],
      "messageMappings":[
        {"name":"ping","trigger":{"type":"message","message":{"body":{"equalTo":"ping"}}},
         "actions":[{"type":"send","message":{"body":"pong"}}]},
        {"name":"join","priority":1,
         "trigger":{"type":"message","message":{"body":{"matchesJsonPath":{"expression":"$.op","equalTo":"join"}}}},
         "actions":[{"type":"send","message":{"body":{"data":"{\\"joined\\":\\"{{jsonPath message.body '$.user'}}\\"}"}}}]},
        {"name":"bye","trigger":{"type":"message","message":{"body":{"equalTo":"bye"}}},
         "actions":[{"type":"send","message":{"body":"see you"}},{"type":"x-close","code":4000,"reason":"bye"}]}]}}}
    """
  static let page = """
    {"request":{"method":"GET","url":"/streams.html"},
     "response":{"status":200,"x-sandbox":false,"headers":{"Content-Type":"text/html"},
      "body":"<!doctype html><title>streams</title><p>streams</p>"}}
    """

  @Test(
    .enabled(
      if: CORSBrowserTests.browserInstalled || CORSBrowserTests.required,
      "Chromium and chromedriver are not installed"))
  func aPageReceivesServerSentEventsAndTalksOverAWebSocket() throws {
    let fixtures = try TemporaryFixtures([
      ("feed.json", StreamingBrowserTests.feed), ("chat.json", StreamingBrowserTests.chat),
      ("page.json", StreamingBrowserTests.page),
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures, "--no-watch"])
    defer { _ = server.stop() }
    let script = """
      const done = arguments[arguments.length - 1];
      const out = { events: [], ws: [] };
      const sse = new Promise((resolve) => {
        const source = new EventSource("/feeds/ACME");
        source.addEventListener("price", (e) => out.events.push({ type: "price", id: e.lastEventId, data: e.data }));
        source.onmessage = (e) => out.events.push({ type: e.type, id: e.lastEventId, data: e.data });
        // After the three events the stream ends; the browser reconnects with Last-Event-ID: 3, gets 204 and
        // stops (readyState CLOSED).
        source.onerror = () => {
          if (source.readyState === EventSource.CLOSED) { out.sseState = "closed"; resolve(); }
        };
        setTimeout(() => { out.sseState = "timeout:" + source.readyState; source.close(); resolve(); }, 20000);
      });
      const ws = new Promise((resolve) => {
        const socket = new WebSocket("ws://" + location.host + "/ws/chat?room=lobby", ["other", "chat.v1"]);
        socket.binaryType = "arraybuffer";
        let step = 0;
        socket.onopen = () => { out.protocol = socket.protocol; };
        socket.onmessage = (e) => {
          out.ws.push(typeof e.data === "string" ? e.data : "binary:" + Array.from(new Uint8Array(e.data)).join(","));
          step += 1;
          if (step === 2) socket.send("ping");
          if (step === 3) socket.send(JSON.stringify({ op: "join", user: "ann" }));
          if (step === 4) socket.send("bye");
        };
        socket.onclose = (e) => { out.closeCode = e.code; out.closeReason = e.reason; out.clean = e.wasClean; resolve(); };
        socket.onerror = () => { out.wsError = true; };
      });
      Promise.all([sse, ws]).then(() => done(out));
      """
    let (result, text) = try CORSBrowserTests.run(
      script, on: "http://127.0.0.1:\(server.port)/streams.html", scratch: fixtures.root)
    let events = result["events"] as? [[String: Any]] ?? []
    #expect(events.count == 3, "\(text)")
    #expect(events.first?["type"] as? String == "price" && events.first?["id"] as? String == "1", "\(text)")
    #expect(events.first?["data"] as? String == #"{"symbol":"ACME","price":100}"#, "\(text)")
    #expect(events.last?["type"] as? String == "message" && events.last?["id"] as? String == "3", "\(text)")
    #expect(events.last?["data"] as? String == "line one\nline two", "\(text)")
    #expect(result["sseState"] as? String == "closed", "a 204 stops the browser's reconnection: \(text)")
    #expect(result["protocol"] as? String == "chat.v1", "\(text)")
    #expect(
      result["ws"] as? [String] == [
        "welcome to lobby", "binary:0,1,2,255", "pong", #"{"joined":"ann"}"#, "see you",
      ], "\(text)")
    #expect(result["closeCode"] as? Int == 4000 && result["closeReason"] as? String == "bye", "\(text)")
    #expect(result["clean"] as? Bool == true, "\(text)")
    // The reconnection carried Last-Event-ID: 3 and was answered 204.
    let journal = get(server.port, "/__admin/requests")
    #expect(journal.contains("Last-Event-ID") || journal.contains("last-event-id"), "\(journal)")
    #expect(journal.contains("204"), "\(journal)")
  }
}
