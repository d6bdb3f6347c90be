import HTTPCore
import Testing

/// Received field lines stay as the parser's bytes with ranges (`ReceivedFields`); every accessor of
/// `HTTPHeaders` must answer as it does for the same fields added by code.
@Suite("Received header fields: byte ranges behind HTTPHeaders")
struct ReceivedFieldsTests {
  /// The headers of the single request in `head` (fields only, the request line is added).
  static func received(_ fields: String) -> HTTPHeaders? {
    let stream = parse("GET / HTTP/1.1\r\n" + fields + "\r\n", feeding: .whole)
    return stream.messages.first?.requestHead?.headers
  }

  static let fieldLines =
    "Host: example.com\r\nX-Dup: one\r\ncontent-TYPE:  text/plain \r\nx-dup: two\r\nConnection: keep-alive, Upgrade\r\n"
    + "Empty:\r\nAccept: a, , b\r\n"
  static let pairs = [
    ("Host", "example.com"), ("X-Dup", "one"), ("content-TYPE", "text/plain"), ("x-dup", "two"),
    ("Connection", "keep-alive, Upgrade"), ("Empty", ""), ("Accept", "a, , b"),
  ]

  @Test func accessorsAnswerAsForAuthoredFields() throws {
    let parsed = try #require(Self.received(Self.fieldLines))
    let authored = HTTPHeaders(Self.pairs)
    #expect(parsed == authored)
    #expect(parsed.hashValue == authored.hashValue)
    #expect(parsed.fields == authored.fields)
    #expect(Array(parsed) == Array(authored))
    #expect(parsed.count == 7 && !parsed.isEmpty)
    #expect(parsed.description == authored.description)
    for name in [
      "host", "HOST", "x-dup", "Content-Type", "connection", "empty", "accept", "missing", "Hos", "",
    ] {
      #expect(parsed.contains(name) == authored.contains(name), "\(name)")
      #expect(parsed.first(name) == authored.first(name), "\(name)")
      #expect(parsed.values(name) == authored.values(name), "\(name)")
      #expect(parsed[name] == authored[name], "\(name)")
      #expect(parsed.listElements(name) == authored.listElements(name), "\(name)")
    }
    #expect(parsed.values("X-DUP") == ["one", "two"])
    #expect(parsed.first("Content-Type") == "text/plain")
    for (token, name) in [
      ("upgrade", "Connection"), ("KEEP-ALIVE", "connection"), ("close", "Connection"),
      ("b", "Accept"), ("", "Accept"), ("keep", "Connection"),
    ] {
      #expect(parsed.hasToken(token, in: name) == authored.hasToken(token, in: name), "\(token) in \(name)")
    }
    #expect(parsed.hasToken("upgrade", in: "Connection"))
    #expect(!parsed.hasToken("keep", in: "Connection"))
  }

  /// Lookups skip a pass over the fields when no name has the asked length (a bit per length, lengths of
  /// 63 and more sharing one): names of every length from 1 to 80 are found, their neighbours are not.
  @Test func lookupsByNameLengthFindEveryLength() throws {
    let names = (1...80).map { n in String(repeating: "x", count: n - 1) + "A" }
    let lines = names.enumerated().map { "\($1): v\($0)\r\n" }.joined()
    let parsed = try #require(Self.received("Host: h\r\n" + lines))
    for (i, name) in names.enumerated() {
      #expect(parsed.first(name.lowercased()) == "v\(i)", "\(name.count)-byte name")
    }
    let sparse = try #require(Self.received("Host: h\r\n" + String(repeating: "y", count: 70) + ": long\r\n"))
    #expect(!sparse.contains("Content-Length") && !sparse.contains("Expect") && !sparse.contains("Hos"))
    #expect(!sparse.contains(String(repeating: "y", count: 64)), "same length bit, other name")
    #expect(sparse.first(String(repeating: "Y", count: 70)) == "long")
    #expect(sparse.first("HOST") == "h")
  }

  @Test func changesMakeAuthoredFieldsWithTheSameResult() throws {
    let parsed = try #require(Self.received(Self.fieldLines))
    let authored = HTTPHeaders(Self.pairs)
    var a = parsed
    var b = authored
    a.add(name: "New", value: "1")
    b.add(name: "New", value: "1")
    #expect(a == b && a.fields == b.fields)
    a = parsed
    b = authored
    a.replaceOrAdd(name: "X-DUP", value: "only")
    b.replaceOrAdd(name: "X-DUP", value: "only")
    #expect(a.fields == b.fields)
    #expect(a.values("x-dup") == ["only"])
    a = parsed
    b = authored
    a.remove(name: "x-dup")
    b.remove(name: "x-dup")
    #expect(a.fields == b.fields && a.count == 5)
    // The original is a value: unchanged by changes to its copies.
    #expect(parsed.values("x-dup") == ["one", "two"])
  }

  @Test func nonASCIIValuesDecodeAsBefore() throws {
    // obs-text (RFC 9110 §5.5): UTF-8, and bytes that are not UTF-8 (replaced when made a String).
    var bytes = Array("GET / HTTP/1.1\r\nHost: h\r\nX-Name: caf\u{E9}\r\nX-Raw: a".utf8)
    bytes += [0xFF, 0xFE, 0x62, 13, 10, 13, 10]
    let headers = try #require(parse(bytes, feeding: .byteByByte).messages.first?.requestHead?.headers)
    #expect(headers.first("x-name") == "caf\u{E9}")
    #expect(headers.first("X-Raw") == String(decoding: [0x61, 0xFF, 0xFE, 0x62] as [UInt8], as: UTF8.self))
    #expect(headers == HTTPHeaders(headers.fields.map { ($0.name, $0.value) }))
  }

  @Test func duplicateHostAndObsoleteFoldingAreRejected() {
    #expect(
      parse("GET / HTTP/1.1\r\nHost: a\r\nhost: a\r\n\r\n", feeding: .whole).error
        == .invalidHost("more than one Host field"))
    #expect(
      parse("GET / HTTP/1.1\r\nHost: a\r\nX: 1\r\n  folded\r\n\r\n", feeding: .whole).error
        == .invalidHeaderField("obsolete line folding"))
    #expect(
      parse("GET / HTTP/1.1\r\nHost: a b\r\n\r\n", feeding: .whole).error
        == .invalidHost("'a b' is not uri-host [ \":\" port ]"))
    #expect(
      parse("GET / HTTP/1.1\r\nX: 1\r\n\r\n", feeding: .whole).error
        == .invalidHost("HTTP/1.1 request without Host"))
  }

  @Test func trailersAndResponseFieldsAreReceivedFieldsToo() throws {
    let chunked = parse(
      "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\nX-Sum: 1\r\nx-sum: 2\r\n\r\n",
      feeding: .byteByByte)
    let trailers = try #require(chunked.messages.first?.trailers)
    #expect(trailers == HTTPHeaders([("X-Sum", "1"), ("x-sum", "2")]))
    #expect(trailers.values("X-SUM") == ["1", "2"])
    let response = parse(
      "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nSet-Cookie: a=1\r\n\r\n", mode: .response, feeding: .whole)
    #expect(response.messages.first?.responseHead?.headers.values("set-cookie") == ["a=1"])
  }
}
