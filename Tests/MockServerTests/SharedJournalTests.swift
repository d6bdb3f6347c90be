import Foundation
import MockJSON
import TestSupport
import Testing

@testable import MockServer

/// The shared journal's stored form (issue 47): an entry written straight as JSON bytes
/// (`SharedJournal.encode(_:into:)`) is valid JSON and reads back (`SharedJournal.decode`) as the same
/// entry, for odd bytes too: content that is not UTF-8, control characters, quotes and backslashes in
/// the target and in field names and values, received values with bytes that are not UTF-8, a large
/// content; and the same entries through a real `redis-server` in one batch.
@Suite("Shared journal", .serialized)
struct SharedJournalTests {
  struct NoHead: Error {}

  /// Entries with every kind of odd byte the stored form must carry.
  static func oddEntries() throws -> [JournalEntry] {
    var authored = HTTPRequestHead(
      method: HTTPMethod(rawValue: "PATCH"), target: "/a\"b\\c/\u{01}\u{1F}\t?q=\"x\"&e=\u{E9}\u{1F600}",
      version: HTTPVersion(major: 1, minor: 0))
    authored.headers.add(name: "X-Quote", value: "say \"hi\" \\ back")
    authored.headers.add(name: "X-Control", value: "a\u{00}b\u{07}c\u{08}\u{0C}\n\r\u{1B}\u{7F}")
    authored.headers.add(name: "X-Unicode", value: "caf\u{E9} \u{2028} \u{1F600}")
    authored.headers.add(name: "X-Empty", value: "")
    var wire = Array("GET /r?x=%22 HTTP/1.1\r\nHost: example.com\r\nX-Raw: ".utf8)
    wire += [0xFF, 0x41, 0xC3, 0x28, 0x22, 0x5C] + Array("\r\nX-Tab: a\tb\r\n\r\n".utf8)
    var parser = HTTPParser(mode: .request)
    parser.append(wire)
    guard case .requestHead(let received) = try parser.next() else { throw NoHead() }
    let notUTF8 = (0...255).map { UInt8($0) } + [0xC3, 0x28, 0xE2, 0x82, 0xF0]
    let huge = (0..<3_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) }
    var full = JournalEntry(
      id: "id \"1\"\\\u{01}", request: HTTPRequest(head: authored, body: notUTF8),
      clientAddress: "[::1]:8080", isTLS: true, clientCertificateSubject: "CN=\"x\",O=\\y\u{01}",
      loggedAt: 1_765_121_234.123_456_7, stubID: "stub\n1", nearMisses: [], responseStatus: 418,
      fault: "CONNECTION_RESET_BY_PEER", served: false, durationMilliseconds: 0.012_345_678_9)
    full.addedDelayMilliseconds = 250
    full.proxyBaseURL = "http://up\"stream"
    full.truncatedBody = (size: 9_999_999, sha256: String(repeating: "ab", count: 32))
    full.webhooks = ["POST http://h/\"hook\" -> 204", "GET x failed: \u{01}"]
    full.stateProblems = ["context \"a\" rendered blank"]
    let receivedEntry = JournalEntry(
      id: UUID().uuidString, request: HTTPRequest(head: received, body: huge), clientAddress: "127.0.0.1:1",
      isTLS: false, clientCertificateSubject: nil, loggedAt: 1e16, stubID: nil, nearMisses: [])
    let bare = JournalEntry(
      id: "", request: HTTPRequest(head: HTTPRequestHead(method: .get, target: "/")), clientAddress: "",
      isTLS: false, clientCertificateSubject: nil, loggedAt: -0.5, stubID: nil, nearMisses: [],
      durationMilliseconds: .infinity)
    return [full, receivedEntry, bare]
  }

  /// Every field the stored form carries, equal between `a` and `b`.
  static func expectSame(
    _ a: JournalEntry, _ b: JournalEntry, sourceLocation: SourceLocation = #_sourceLocation
  ) {
    #expect(a.id == b.id, sourceLocation: sourceLocation)
    #expect(a.request.head.method == b.request.head.method, sourceLocation: sourceLocation)
    #expect(a.request.head.target == b.request.head.target, sourceLocation: sourceLocation)
    #expect(a.request.head.version == b.request.head.version, sourceLocation: sourceLocation)
    #expect(a.request.head.headers.fields == b.request.head.headers.fields, sourceLocation: sourceLocation)
    #expect(a.request.body == b.request.body, sourceLocation: sourceLocation)
    #expect(a.clientAddress == b.clientAddress, sourceLocation: sourceLocation)
    #expect(a.isTLS == b.isTLS, sourceLocation: sourceLocation)
    #expect(a.clientCertificateSubject == b.clientCertificateSubject, sourceLocation: sourceLocation)
    #expect(a.loggedAt == b.loggedAt, sourceLocation: sourceLocation)
    #expect(a.stubID == b.stubID, sourceLocation: sourceLocation)
    #expect(a.responseStatus == b.responseStatus, sourceLocation: sourceLocation)
    #expect(a.fault == b.fault, sourceLocation: sourceLocation)
    #expect(a.served == b.served, sourceLocation: sourceLocation)
    let finite = a.durationMilliseconds.flatMap { $0.isFinite ? $0 : nil }
    #expect(
      finite == b.durationMilliseconds, "a duration JSON cannot hold is left out",
      sourceLocation: sourceLocation)
    #expect(a.addedDelayMilliseconds == b.addedDelayMilliseconds, sourceLocation: sourceLocation)
    #expect(a.proxyBaseURL == b.proxyBaseURL, sourceLocation: sourceLocation)
    #expect(a.truncatedBody?.size == b.truncatedBody?.size, sourceLocation: sourceLocation)
    #expect(a.truncatedBody?.sha256 == b.truncatedBody?.sha256, sourceLocation: sourceLocation)
    #expect(a.webhooks == b.webhooks, sourceLocation: sourceLocation)
    #expect(a.stateProblems == b.stateProblems, sourceLocation: sourceLocation)
  }

  @Test func entriesWithOddBytesRoundTripThroughTheStoredForm() throws {
    for entry in try Self.oddEntries() {
      var bytes: [UInt8] = []
      SharedJournal.encode(entry, into: &bytes)
      #expect(String(validating: bytes, as: UTF8.self) != nil, "the stored form is UTF-8")
      #expect(!bytes.contains { $0 < 0x20 }, "no raw control character")
      let json = try JSONValue.parse(bytes: bytes)
      guard let decoded = SharedJournal.decode(json) else {
        Issue.record("not read back: \(String(decoding: bytes.prefix(300), as: UTF8.self))")
        continue
      }
      Self.expectSame(entry, decoded)
      // Written again, the decoded entry gives the same bytes (the form is stable).
      var again: [UInt8] = []
      SharedJournal.encode(decoded, into: &again)
      if entry.durationMilliseconds?.isFinite != false { #expect(again == bytes) }
    }
  }

  @Test(.enabled(if: RedisServer.installed, "redis-server is not installed (make test installs it)"))
  func entriesWithOddBytesRoundTripThroughTheStoreInOneBatch() throws {
    let redis = try RedisServer()
    defer { redis.stop() }
    let journal = SharedJournal(
      connection: RedisConnection(endpoint: try RedisEndpoint(url: redis.url)), capacity: 100,
      maxBytes: 64 << 20)
    let entries = try Self.oddEntries()
    for entry in entries { journal.append(entry) }
    try journal.flush()
    let view = try journal.read()
    #expect(view.entries.count == entries.count)
    #expect(view.lost == 0)
    for (sent, read) in zip(entries, view.entries) { Self.expectSame(sent, read) }
    // A second batch reuses the command's buffer: what it sends is only its own entries.
    journal.append(entries[2])
    try journal.flush()
    #expect(try journal.read().entries.count == entries.count, "an entry sent twice is read once")
  }
}
