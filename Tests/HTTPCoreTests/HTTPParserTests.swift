import HTTPCore
import Testing

/// What a parser made of a byte stream: the messages it completed, then the error (if any).
struct ParsedStream: Equatable {
  struct Message: Equatable {
    var requestHead: HTTPRequestHead?
    var responseHead: HTTPResponseHead?
    var body: [UInt8] = []
    var trailers = HTTPHeaders()
  }
  var messages: [Message] = []
  var error: HTTPParserError?
  var bodyString: String { String(decoding: messages.first?.body ?? [], as: UTF8.self) }
}

enum Feeding: CaseIterable, CustomStringConvertible {
  case whole, byteByByte
  var description: String { self == .whole ? "whole" : "byte by byte" }
}

func parse(
  _ text: String, mode: HTTPParser.Mode = .request, feeding: Feeding, limits: ParserLimits = ParserLimits(),
  methods: [HTTPMethod] = [], atEOF: Bool = false
) -> ParsedStream {
  parse(Array(text.utf8), mode: mode, feeding: feeding, limits: limits, methods: methods, atEOF: atEOF)
}

func parse(
  _ bytes: [UInt8], mode: HTTPParser.Mode = .request, feeding: Feeding,
  limits: ParserLimits = ParserLimits(), methods: [HTTPMethod] = [], atEOF: Bool = false
) -> ParsedStream {
  var parser = HTTPParser(mode: mode, limits: limits)
  for m in methods { parser.expectResponse(to: m) }
  var result = ParsedStream()
  var current: ParsedStream.Message?
  func handle(_ event: HTTPParserEvent) {
    switch event {
    case .requestHead(let h): current = .init(requestHead: h)
    case .responseHead(let h): current = .init(responseHead: h)
    case .body(let b): current?.body.append(contentsOf: b)
    case .end(let t):
      current?.trailers = t
      if let c = current { result.messages.append(c) }
      current = nil
    }
  }
  let pieces: [[UInt8]] = feeding == .whole ? [bytes] : bytes.map { [$0] }
  do {
    for piece in pieces {
      parser.append(piece)
      while let event = try parser.next() { handle(event) }
    }
    if atEOF, let event = try parser.finish() { handle(event) }
  } catch {
    result.error = error
  }
  return result
}

@Suite("HTTPParser request mode (RFC 9112)")
struct HTTPParserRequestTests {
  @Test(arguments: Feeding.allCases)
  func simpleGet(feeding: Feeding) {
    let r = parse("GET /a/b?x=1 HTTP/1.1\r\nHost: example\r\nAccept: */*\r\n\r\n", feeding: feeding)
    #expect(r.error == nil)
    #expect(r.messages.count == 1)
    let head = r.messages[0].requestHead
    #expect(head?.method == .get)
    #expect(head?.target == "/a/b?x=1")
    #expect(head?.rawPath == "/a/b")
    #expect(head?.rawQuery == "x=1")
    #expect(head?.version == .http1_1)
    #expect(head?.headers.first("host") == "example")
  }

  @Test(arguments: ["example.com", "example.com:8080", "127.0.0.1:1", "[::1]:8080", "[::1]", "", "a_b.c-d~e"])
  func validHostValues(host: String) {
    let r = parse("GET / HTTP/1.1\r\nHost: \(host)\r\n\r\n", feeding: .whole)
    #expect(r.error == nil)
  }

  @Test(arguments: Feeding.allCases)
  func absoluteFormAndAsterisk(feeding: Feeding) {
    let r = parse(
      "GET http://example.com:8080/p?q=1 HTTP/1.1\r\nHost: example.com:8080\r\n\r\n"
        + "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", feeding: feeding)
    #expect(r.error == nil)
    #expect(r.messages.count == 2)
    #expect(r.messages[0].requestHead?.rawPath == "/p")
    #expect(r.messages[0].requestHead?.originForm == "/p?q=1")
    #expect(r.messages[1].requestHead?.target == "*")
  }

  @Test(arguments: Feeding.allCases)
  func http10WithoutHostAndLeadingEmptyLines(feeding: Feeding) {
    let r = parse("\r\n\r\nGET / HTTP/1.0\r\n\r\n", feeding: feeding)
    #expect(r.error == nil)
    #expect(r.messages.first?.requestHead?.version == .http1_0)
    #expect(r.messages.first?.requestHead?.wantsKeepAlive == false)
  }

  @Test(arguments: Feeding.allCases)
  func fieldsKeepOrderDuplicatesAndSpelling(feeding: Feeding) {
    let r = parse(
      "GET / HTTP/1.1\r\nHost: h\r\nx-trace: a\r\nX-Trace:   b  \r\nCookie: c=1\r\n\r\n", feeding: feeding)
    let headers = r.messages.first?.requestHead?.headers
    #expect(headers?.values("X-TRACE") == ["a", "b"])
    #expect(headers?["x-trace"] == "a, b")
    #expect(headers?.fields.map(\.name) == ["Host", "x-trace", "X-Trace", "Cookie"])
  }

  @Test(arguments: Feeding.allCases)
  func contentLengthBodyAndPipelining(feeding: Feeding) {
    let r = parse(
      "POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello"
        + "GET /b HTTP/1.1\r\nHost: h\r\n\r\n", feeding: feeding)
    #expect(r.error == nil)
    #expect(r.messages.count == 2)
    #expect(r.bodyString == "hello")
    #expect(r.messages[1].requestHead?.target == "/b")
  }

  @Test(arguments: Feeding.allCases)
  func chunkedWithExtensionsAndTrailers(feeding: Feeding) {
    // Chunk extensions are ignored and trailers consumed; the body is decoded.
    let r = parse(
      "POST /orders HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Type: application/json\r\n"
        + "Transfer-Encoding: chunked\r\n\r\n7\r\n{\"id\":1\r\n8;ext=1\r\n,\"qty\":2\r\n1\r\n}\r\n0\r\n"
        + "X-Trailer: t\r\n\r\n"
        + "GET /ping HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      feeding: feeding)
    #expect(r.error == nil)
    #expect(r.messages.count == 2)
    #expect(r.bodyString == "{\"id\":1,\"qty\":2}")
    #expect(r.messages[0].trailers.first("x-trailer") == "t")
    #expect(r.messages[0].requestHead?.headers.first("Transfer-Encoding") == "chunked")
    #expect(r.messages[1].body.isEmpty)
  }

  @Test(arguments: Feeding.allCases)
  func chunkSizeUpperCaseHexAndBareLF(feeding: Feeding) {
    let r = parse(
      "POST / HTTP/1.1\nHost: h\nTransfer-Encoding: chunked\n\nA\n0123456789\n0\n\n", feeding: feeding)
    #expect(r.error == nil)
    #expect(r.bodyString == "0123456789")
  }

  @Test(arguments: Feeding.allCases)
  func repeatedEqualContentLengthIsAccepted(feeding: Feeding) {
    let r = parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n\r\nok", feeding: feeding)
    #expect(r.error == nil)
    #expect(r.bodyString == "ok")
  }

  static let rejected: [(String, String, Int)] = [
    ("HTTP/2.0 version", "GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505),
    ("HTTP/3.0 version", "GET / HTTP/3.0\r\nHost: h\r\n\r\n", 505),
    ("malformed version", "GET / HTTP/1.10\r\nHost: h\r\n\r\n", 400),
    ("lower-case protocol", "GET / http/1.1\r\nHost: h\r\n\r\n", 400),
    ("missing target", "GET HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    ("double space", "GET  / HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    ("relative target", "GET a/b HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    ("asterisk with GET", "GET * HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    ("missing Host", "GET / HTTP/1.1\r\nAccept: */*\r\n\r\n", 400),
    ("repeated Host", "GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400),
    ("Host with a space", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", 400),
    ("Host with a path", "GET / HTTP/1.1\r\nHost: a/b\r\n\r\n", 400),
    ("Host with a bad port", "GET / HTTP/1.1\r\nHost: a:8x\r\n\r\n", 400),
    ("Host with userinfo", "GET / HTTP/1.1\r\nHost: u@a\r\n\r\n", 400),
    ("repeated Host on 1.0", "GET / HTTP/1.0\r\nHost: a\r\nHost: a\r\n\r\n", 400),
    ("space before colon", "GET / HTTP/1.1\r\nHost: h\r\nX-A : 1\r\n\r\n", 400),
    ("obs-fold", "GET / HTTP/1.1\r\nHost: h\r\nX-A: 1\r\n  continued\r\n\r\n", 400),
    ("NUL in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\u{0}b\r\n\r\n", 400),
    ("bare CR in value", "GET / HTTP/1.1\r\nHost: h\r\nX-A: a\rb\r\n\r\n", 400),
    ("no colon", "GET / HTTP/1.1\r\nHost: h\r\nJunk\r\n\r\n", 400),
    ("empty name", "GET / HTTP/1.1\r\nHost: h\r\n: v\r\n\r\n", 400),
    ("invalid Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n", 400),
    ("negative Content-Length", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: -1\r\n\r\n", 400),
    (
      "conflicting Content-Length",
      "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", 400
    ),
    (
      "CL with TE", "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
      400
    ),
    ("TE on HTTP/1.0", "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n", 400),
    (
      "unknown transfer coding", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501
    ),
    ("TE not ending in chunked", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: zstd\r\n\r\n", 501),
    ("chunked twice", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", 400),
    ("bad chunk size", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400),
    (
      "missing chunk CRLF", "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabX\r\n",
      400
    ),
    ("control in method", "G\u{1}T / HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    ("fragment in target", "GET /a#frag HTTP/1.1\r\nHost: h\r\n\r\n", 400),
    ("absolute-form with userinfo", "GET http://u@x/a HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("absolute-form with a bad port", "GET http://x:abc/a HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("absolute-form without host", "GET http:///a HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("absolute-form, other scheme", "GET ftp://x/a HTTP/1.1\r\nHost: x\r\n\r\n", 400),
    ("overlong method", String(repeating: "X", count: 200) + " / HTTP/1.1\r\nHost: h\r\n\r\n", 501),
    ("no space in a long line", String(repeating: "Y", count: 100_000) + "\r\n\r\n", 501),
  ]

  @Test(arguments: rejected, Feeding.allCases)
  func rejectsMalformed(testCase: (String, String, Int), feeding: Feeding) {
    let r = parse(testCase.1, feeding: feeding)
    #expect(r.error?.status.code == testCase.2, "\(testCase.0)")
    #expect(r.messages.isEmpty)
  }

  @Test(arguments: Feeding.allCases)
  func limits(feeding: Feeding) {
    let limits = ParserLimits(
      maxRequestTargetBytes: 64, maxHeaderSectionBytes: 512, maxHeaderCount: 4, maxBodyBytes: 10)
    let longTarget = "GET /" + String(repeating: "a", count: 100) + " HTTP/1.1\r\nHost: h\r\n\r\n"
    #expect(parse(longTarget, feeding: feeding, limits: limits).error?.status.code == 414)
    let bigHeader = "GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "b", count: 600) + "\r\n\r\n"
    #expect(parse(bigHeader, feeding: feeding, limits: limits).error?.status.code == 431)
    let many = "GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 1\r\nC: 1\r\nD: 1\r\n\r\n"
    #expect(parse(many, feeding: feeding, limits: limits).error?.status.code == 431)
    let bigBody = "POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n"
    #expect(parse(bigBody, feeding: feeding, limits: limits).error?.status.code == 413)
    let bigChunked = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n6\r\naaaaaa\r\n6\r\n"
    #expect(parse(bigChunked, feeding: feeding, limits: limits).error?.status.code == 413)
  }

  /// Heads whose SP, `:` and LF fall at every offset of an eight-byte word (the parser scans a word at a
  /// time), one after another on one stream so that each later head starts unaligned.
  @Test(arguments: Feeding.allCases)
  func delimitersAtEveryWordOffset(feeding: Feeding) {
    var stream = ""
    var expected: [(String, String, String)] = []
    for k in 0..<17 {
      let target = "/" + String(repeating: "t", count: k)
      let name = "X" + String(repeating: "n", count: (k * 5) % 11)
      let value = String(repeating: "v", count: 1 + (k * 3) % 13) + (k % 2 == 0 ? "" : " w")
      let terminator = k % 3 == 0 ? "\n" : "\r\n"
      stream +=
        "GET \(target) HTTP/1.1\(terminator)Host: h\(terminator)\(name):  \(value) \(terminator)\(terminator)"
      expected.append((target, name, value))
    }
    let r = parse(stream, feeding: feeding)
    #expect(r.error == nil)
    #expect(r.messages.count == expected.count)
    for (message, (target, name, value)) in zip(r.messages, expected) {
      #expect(message.requestHead?.target == target)
      #expect(message.requestHead?.headers.fields.map(\.name) == ["Host", name])
      #expect(message.requestHead?.headers.first(name) == value)
    }
    // A control character past the first word of a value is still found.
    #expect(
      parse("GET / HTTP/1.1\r\nHost: h\r\nX: abcdefghij\u{01}k\r\n\r\n", feeding: feeding).error?.status.code
        == 400)
  }

  @Test func largeRealisticHeadersPassDefaultLimit() {
    // Real-world large headers pass the default limit: a 16 KiB bearer token and an 8 KiB cookie.
    let text =
      "GET /me HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer "
      + String(repeating: "a", count: 16384) + "\r\nCookie: s=" + String(repeating: "b", count: 8192)
      + "\r\n\r\n"
    let r = parse(text, feeding: .whole)
    #expect(r.error == nil)
    #expect(r.messages.first?.requestHead?.headers.first("Authorization")?.count == 16391)
  }

  @Test func errorsAreSticky() {
    var parser = HTTPParser(mode: .request)
    parser.append(Array("GET / HTTP/9.9\r\nHost: h\r\n\r\n".utf8))
    #expect(throws: HTTPParserError.self) { try parser.next() }
    parser.append(Array("GET / HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
    #expect(throws: HTTPParserError.self) { try parser.next() }
  }

  @Test func incompleteAtEOF() {
    var parser = HTTPParser(mode: .request)
    parser.append(Array("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 10\r\n\r\nabc".utf8))
    while (try? parser.next()) != nil {}
    #expect(throws: HTTPParserError.incompleteMessage(expectedBytes: 10, receivedBytes: 3)) {
      try parser.finish()
    }
  }

  @Test func neverCrashesOnRandomBytes() {
    var generator = SystemRandomNumberGenerator()
    for _ in 0..<2000 {
      let count = Int.random(in: 0..<200, using: &generator)
      var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
      if Bool.random() { bytes = Array("GET / HTTP/1.1\r\n".utf8) + bytes }
      _ = parse(bytes, feeding: .whole)
      _ = parse(bytes, mode: .response, feeding: .whole, atEOF: true)
    }
  }
}

@Suite("HTTPParser response mode (RFC 9112)")
struct HTTPParserResponseTests {
  @Test(arguments: Feeding.allCases)
  func contentLengthAndChunked(feeding: Feeding) {
    let r = parse(
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n"
        + "3\r\nabc\r\n0\r\n\r\n", mode: .response, feeding: feeding, methods: [.get, .post])
    #expect(r.error == nil)
    #expect(r.messages.count == 2)
    #expect(r.messages[0].responseHead?.status.code == 200)
    #expect(r.messages[1].body == Array("abc".utf8))
  }

  @Test(arguments: Feeding.allCases)
  func headAnd204And304HaveNoContent(feeding: Feeding) {
    let r = parse(
      "HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n"
        + "HTTP/1.1 304 Not Modified\r\nContent-Length: 5\r\n\r\n",
      mode: .response, feeding: feeding, methods: [.head, .delete, .get])
    #expect(r.error == nil)
    #expect(r.messages.count == 3)
    #expect(r.messages.allSatisfy { $0.body.isEmpty })
  }

  @Test(arguments: Feeding.allCases)
  func informationalThenFinal(feeding: Feeding) {
    let r = parse(
      "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx", mode: .response,
      feeding: feeding, methods: [.post])
    #expect(r.messages.map { $0.responseHead?.status.code } == [100, 200])
    #expect(r.messages[1].body == [120])
  }

  @Test(arguments: Feeding.allCases)
  func readUntilCloseAndEmptyReason(feeding: Feeding) {
    let r = parse(
      "HTTP/1.1 200 \r\n\r\nabcdef", mode: .response, feeding: feeding, methods: [.get], atEOF: true)
    #expect(r.error == nil)
    #expect(r.messages.first?.body == Array("abcdef".utf8))
    #expect(r.messages.first?.responseHead?.status.reasonPhrase == "")
  }

  @Test func truncatedBodyIsReportedWithCounts() {
    // A body shorter than its Content-Length is reported as truncated, with both counts.
    let r = parse(
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nConnection: close\r\n\r\n{\"status\":\"OK\"",
      mode: .response, feeding: .whole, methods: [.get], atEOF: true)
    #expect(r.error == .incompleteMessage(expectedBytes: 100, receivedBytes: 14))
    #expect(r.messages.isEmpty)
  }

  @Test func halfHeadAndGarbage() {
    let half = parse(
      "HTTP/1.1 200 OK\r\nContent-Ty", mode: .response, feeding: .whole, methods: [.get], atEOF: true)
    #expect(half.error == .incompleteMessage(expectedBytes: nil, receivedBytes: 0))
    let garbage = parse(
      [0, 0x17] + Array("garbage\r\n\r\n".utf8), mode: .response, feeding: .whole, methods: [.get])
    #expect(garbage.error == .invalidStatusLine)
  }
}

@Suite("HTTPSerializer framing")
struct HTTPSerializerTests {
  @Test func replacesFixtureFramingAndOmitsItWhereForbidden() {
    // The server frames responses itself: a fixture's framing headers are replaced, and left out
    // where a status forbids content.
    let authored = HTTPResponseHead(
      status: .ok, headers: ["Content-Length": "999", "Transfer-Encoding": "chunked", "X-A": "1"])
    let framed = HTTPSerializer.framed(authored, contentLength: 2, requestMethod: .get)
    #expect(framed.headers.values("Content-Length") == ["2"])
    #expect(!framed.headers.contains("Transfer-Encoding"))
    let noContent = HTTPSerializer.framed(
      HTTPResponseHead(status: .noContent, headers: ["Transfer-Encoding": "chunked"]), contentLength: 0,
      requestMethod: .delete)
    #expect(!noContent.headers.contains("Transfer-Encoding"))
    #expect(!noContent.headers.contains("Content-Length"))
  }

  @Test func headBytesKeepNameSpellingAndNeutraliseCRLF() {
    let head = HTTPResponseHead(status: .ok, headers: ["x-trace": "a", "X-Trace": "b\r\nInjected: 1"])
    let text = String(decoding: HTTPSerializer.responseHead(head), as: UTF8.self)
    #expect(text == "HTTP/1.1 200 OK\r\nx-trace: a\r\nX-Trace: b  Injected: 1\r\n\r\n")
  }

  @Test func chunkEncoding() {
    #expect(HTTPSerializer.chunk(Array("hello world!!!!!!".utf8)).prefix(4) == [0x31, 0x31, 13, 10])
    #expect(HTTPSerializer.lastChunk == Array("0\r\n\r\n".utf8))
  }
}

@Suite("HTTPDate (RFC 9110 §5.6.7)")
struct HTTPDateTests {
  @Test(arguments: [
    "Sun, 06 Nov 1994 08:49:37 GMT", "Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994",
  ])
  func acceptsAllThreeForms(text: String) {
    #expect(HTTPDate.parse(text) == 784_111_777)
  }

  @Test func formatsIMFFixdate() {
    #expect(HTTPDate.format(784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
    #expect(HTTPDate.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
    #expect(HTTPDate.parse(HTTPDate.format(1_800_000_000)) == 1_800_000_000)
  }

  @Test(arguments: ["", "yesterday", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 GMT"])
  func rejectsOthers(text: String) {
    #expect(HTTPDate.parse(text) == nil)
  }

  @Test func iso8601RoundTrips() {
    #expect(HTTPDate.iso8601(0) == "1970-01-01T00:00:00.000Z")
    #expect(HTTPDate.iso8601(1_714_564_800.25) == "2024-05-01T12:00:00.250Z")
    #expect(HTTPDate.iso8601(-1) == "1969-12-31T23:59:59.000Z")
    #expect(HTTPDate.parseISO8601("2024-05-01T12:00:00Z") == 1_714_564_800)
    #expect(HTTPDate.parseISO8601("2024-05-01T12:00:00.250Z") == 1_714_564_800.25)
    #expect(HTTPDate.parseISO8601("2024-05-01T14:00:00+02:00") == 1_714_564_800)
    #expect(HTTPDate.parseISO8601(HTTPDate.iso8601(1_800_000_000.5)) == 1_800_000_000.5)
  }

  @Test(arguments: ["", "2024-05-01", "2024-13-01T00:00:00Z", "2024-05-01T12:00:00", "2024-05-01T12:00:00.Z"])
  func rejectsOtherTimestamps(text: String) {
    #expect(HTTPDate.parseISO8601(text) == nil)
  }
}
