import HTTPCore
import Testing

/// Field names compare case-insensitively in ASCII only (RFC 9110 §5.1); the byte-wise fast path and the
/// iterator path must agree, for `String` and `Substring`.
@Suite("ASCII case-insensitive comparison")
struct FieldNameComparisonTests {
  @Test(arguments: [
    ("Host", "host", true), ("HOST", "hOsT", true), ("Content-Length", "content-length", true),
    ("", "", true), ("Host", "Hos", false), ("Host", "Hosts", false), ("a", "b", false),
    // Bytes that differ only in 0x20 but are not letters are different characters.
    ("@", "`", false), ("[", "{", false), ("]", "}", false), ("^", "~", false), ("_", "\u{7F}", false),
    ("1", "\u{11}", false), ("-", "\r", false),
    // Non-ASCII letters are compared exactly.
    ("é", "É", false), ("é", "é", true), ("Straße", "STRASSE", false),
  ])
  func comparesInASCIIOnly(a: String, b: String, equal: Bool) {
    #expect(a.equalsIgnoringASCIICase(b) == equal)
    #expect(b.equalsIgnoringASCIICase(a) == equal)
    // Substrings of longer (heap) strings take the same path as small strings.
    let longA = "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" + a
    let longB = "yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy" + b
    #expect(longA.dropFirst(32).equalsIgnoringASCIICase(longB.dropFirst(32)) == equal)
    #expect(String(longA.dropFirst(32)).equalsIgnoringASCIICase(b) == equal)
  }

  @Test func lettersAcrossTheAlphabet() {
    let upper = String(decoding: (65...90).map { UInt8($0) }, as: UTF8.self)
    let lower = String(decoding: (97...122).map { UInt8($0) }, as: UTF8.self)
    #expect(upper.equalsIgnoringASCIICase(lower))
    #expect(!upper.equalsIgnoringASCIICase(lower.dropLast() + "{"))
  }
}

@Suite("Request methods from the request line")
struct RequestMethodParsingTests {
  @Test(arguments: [
    "GET", "PUT", "POST", "HEAD", "PATCH", "DELETE", "OPTIONS", "TRACE", "PROPFIND", "get", "GETS",
  ])
  func methodTokenKeptAsSent(token: String) {
    var parser = HTTPParser(mode: .request)
    parser.append(Array("\(token) / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
    guard case .requestHead(let head)? = try? parser.next() else {
      Issue.record("no head for \(token)")
      return
    }
    #expect(head.method.rawValue == token)
    #expect(head.method == HTTPMethod(rawValue: token))
  }
}
