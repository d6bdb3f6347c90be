import ClientKit
import Foundation
import Testing

/// The event stream interpreter against WHATWG HTML §9.2.6 "Interpreting an event stream" and the examples of
/// §9.2.5 / §9.2.6 (https://html.spec.whatwg.org/multipage/server-sent-events.html), restated here: each
/// test names the rule or example it checks. Every stream is also fed one byte at a time, so no rule
/// depends on where the network cut the chunks.
@Suite("ServerSentEventParser")
struct ServerSentEventParserTests {
  /// Parses `text` whole and byte by byte; both must give the same events.
  func events(_ text: String, lastEventID: String = "") throws -> [ServerSentEvent] {
    try events(Array(text.utf8), lastEventID: lastEventID)
  }

  func events(_ bytes: [UInt8], lastEventID: String = "") throws -> [ServerSentEvent] {
    var whole = ServerSentEventParser(lastEventID: lastEventID)
    let all = try whole.parse(bytes)
    var split = ServerSentEventParser(lastEventID: lastEventID)
    var one: [ServerSentEvent] = []
    for byte in bytes { one += try split.parse([byte]) }
    #expect(all == one)
    #expect(whole.lastEventID == split.lastEventID)
    return all
  }

  @Test("§9.2.6 example: data lines are joined with LF")
  func multiLineData() throws {
    #expect(try events("data: YHOO\ndata: +2\ndata: 10\n\n") == [ServerSentEvent(data: "YHOO\n+2\n10")])
  }

  @Test("§9.2.6 example: a comment, ids, an id field with no value resets the last event ID")
  func commentsAndIDs() throws {
    let got = try events(
      ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n")
    #expect(
      got == [
        ServerSentEvent(id: "1", data: "first event"),
        ServerSentEvent(id: "", data: "second event"),
        ServerSentEvent(id: "", data: " third event"),
      ])
  }

  @Test(
    "§9.2.6 example: 'data' with no colon is an empty line of data; a final block without a blank line is discarded"
  )
  func emptyDataAndTrailingBlock() throws {
    #expect(
      try events("data\n\ndata\ndata\n\ndata:") == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
  }

  @Test("§9.2.6 example: one space after the colon is removed, only one")
  func leadingSpace() throws {
    #expect(
      try events("data:test\n\ndata: test\n\n") == [
        ServerSentEvent(data: "test"), ServerSentEvent(data: "test"),
      ])
  }

  @Test("event sets the type; the type resets after each dispatch; unknown fields are ignored")
  func eventType() throws {
    let got = try events("event: add\nfoo: bar\ndata: 73857293\n\ndata: plain\n\n")
    #expect(got == [ServerSentEvent(event: "add", data: "73857293"), ServerSentEvent(data: "plain")])
  }

  @Test("CRLF, CR and LF all end lines, and a CRLF split across chunks is one line end")
  func lineEnds() throws {
    #expect(try events("data: a\r\ndata: b\rdata: c\n\r\n") == [ServerSentEvent(data: "a\nb\nc")])
    var parser = ServerSentEventParser()
    #expect(try parser.parse(Array("data: x\r".utf8)).isEmpty)
    // The LF completes the CR's line end: it is not a second, blank line.
    #expect(try parser.parse(Array("\ndata: y\r\n\r\n".utf8)) == [ServerSentEvent(data: "x\ny")])
  }

  @Test("one byte order mark at the start of the stream is skipped, a second one is data")
  func byteOrderMark() throws {
    let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    #expect(try events(bom + Array("data: a\n\n".utf8)) == [ServerSentEvent(data: "a")])
    // The second BOM starts the field name, so the line is the unknown field "\u{FEFF}data".
    #expect(try events(bom + bom + Array("data: a\n\ndata: b\n\n".utf8)) == [ServerSentEvent(data: "b")])
  }

  @Test("an id containing U+0000 is ignored; an id with no data is kept for the next event")
  func idRules() throws {
    #expect(
      try events("id: 1\ndata: a\n\nid: 2\u{0}x\ndata: b\n\nid: 9\n\ndata: c\n\n") == [
        ServerSentEvent(id: "1", data: "a"), ServerSentEvent(id: "1", data: "b"),
        ServerSentEvent(id: "9", data: "c"),
      ])
  }

  @Test("retry with ASCII digits only sets the reconnection time; anything else is ignored")
  func retryRules() throws {
    var parser = ServerSentEventParser()
    let got = try parser.parse(
      Array("retry: 2500\ndata: a\n\nretry: 1e3\nretry: -5\nretry: \nretry:  7\ndata: b\n\n".utf8))
    #expect(got == [ServerSentEvent(data: "a", retry: .milliseconds(2500)), ServerSentEvent(data: "b")])
    #expect(parser.reconnectionTime == .milliseconds(2500))
    _ = try parser.parse(Array("retry: 99999999999999999999999\n\n".utf8))
    #expect(parser.reconnectionTime == ServerSentEventParser.maxReconnectionTime)
  }

  @Test("invalid UTF-8 becomes U+FFFD; a lone colon line is a comment")
  func decoding() throws {
    #expect(
      try events([0x64, 0x61, 0x74, 0x61, 0x3A, 0x20, 0xFF, 0x0A, 0x3A, 0x0A, 0x0A]) == [
        ServerSentEvent(data: "\u{FFFD}")
      ])
  }

  @Test("a line longer than the limit throws instead of growing without bound")
  func lineLimit() {
    var parser = ServerSentEventParser(maxLineBytes: 16)
    #expect(throws: ServerSentEventParser.LineTooLong(limit: 16)) {
      try parser.parse(Array(repeating: UInt8(ascii: "a"), count: 17))
    }
  }

  @Test("reset drops a partial event but keeps the last event ID and reconnection time")
  func resetKeepsID() throws {
    var parser = ServerSentEventParser()
    _ = try parser.parse(Array("id: 5\nretry: 10\ndata: a\n\ndata: partial".utf8))
    parser.reset()
    #expect(parser.lastEventID == "5")
    #expect(parser.reconnectionTime == .milliseconds(10))
    #expect(try parser.parse(Array("data: b\n\n".utf8)) == [ServerSentEvent(id: "5", data: "b")])
  }
}
