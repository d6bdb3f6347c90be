/// Writes HTTP/1.1 messages (RFC 9112) and owns response framing.
///
/// Framing is never taken from a fixture: ``framed(_:contentLength:requestMethod:)`` removes any
/// `Content-Length` and `Transfer-Encoding` from a head and sets the true one, and leaves both out where
/// a response cannot have content (1xx, 204, 304) (RFC 9112 §6.1–6.3, RFC 9110 §8.6).
public enum HTTPSerializer {
  /// Appends `status-line CRLF *(field-line CRLF) CRLF` to `out`.
  /// CR, LF and NUL inside names or values are written as spaces, so a value can never split the message.
  public static func writeResponseHead(_ head: HTTPResponseHead, into out: inout [UInt8]) {
    writeStatusLine(head, into: &out)
    writeFields(head.headers, into: &out)
    out.append(contentsOf: [13, 10])
  }

  /// Appends `HTTP-version SP status-code SP reason-phrase CRLF` (RFC 9112 §4).
  public static func writeStatusLine(_ head: HTTPResponseHead, into out: inout [UInt8]) {
    let version = head.version
    if (0...9).contains(version.major), (0...9).contains(version.minor) {
      out.append(contentsOf: [
        72, 84, 84, 80, 47, UInt8(48 + version.major), 46, UInt8(48 + version.minor), 32,
      ])
    } else {
      out.append(contentsOf: "HTTP/\(version.major).\(version.minor) ".utf8)
    }
    let code = head.status.code
    out.append(UInt8(48 + (code / 100) % 10))
    out.append(UInt8(48 + (code / 10) % 10))
    out.append(UInt8(48 + code % 10))
    out.append(32)
    appendSafe(head.status.reasonPhrase, to: &out)
    out.append(contentsOf: [13, 10])
  }

  /// Appends `request-line CRLF *(field-line CRLF) CRLF` to `out`.
  public static func writeRequestHead(_ head: HTTPRequestHead, into out: inout [UInt8]) {
    appendSafe(head.method.rawValue, to: &out)
    out.append(32)
    appendSafe(head.target, to: &out)
    out.append(contentsOf: " HTTP/\(head.version.major).\(head.version.minor)\r\n".utf8)
    writeFields(head.headers, into: &out)
    out.append(contentsOf: [13, 10])
  }

  /// The bytes of a request head.
  public static func requestHead(_ head: HTTPRequestHead) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(256)
    writeRequestHead(head, into: &out)
    return out
  }

  /// The bytes of a response head.
  public static func responseHead(_ head: HTTPResponseHead) -> [UInt8] {
    var out: [UInt8] = []
    out.reserveCapacity(256)
    writeResponseHead(head, into: &out)
    return out
  }

  /// Appends field lines `name: value CRLF`, names spelled as given.
  public static func writeFields(_ headers: HTTPHeaders, into out: inout [UInt8]) {
    for field in headers { writeField(name: field.name, value: field.value, into: &out) }
  }

  /// Appends one field line `name: value CRLF`; CR, LF and NUL are written as spaces.
  @inline(__always)
  public static func writeField(name: String, value: String, into out: inout [UInt8]) {
    appendSafe(name, to: &out)
    out.append(58)
    out.append(32)
    appendSafe(value, to: &out)
    out.append(contentsOf: [13, 10])
  }

  /// Returns `head` with exactly one correct framing: `Content-Length: contentLength`, or none at all for
  /// 1xx/204/304 (RFC 9112 §6.1–6.3). For a response to HEAD, `contentLength` is the length the GET
  /// response would have (RFC 9110 §9.3.2), and no content is sent.
  /// - Parameters:
  ///   - head: the response head as authored; its framing fields are discarded.
  ///   - contentLength: number of content bytes, ≥ 0.
  ///   - requestMethod: the method of the request being answered.
  public static func framed(_ head: HTTPResponseHead, contentLength: Int, requestMethod: HTTPMethod)
    -> HTTPResponseHead
  {
    var head = head
    head.headers.remove(name: "Content-Length")
    head.headers.remove(name: "Transfer-Encoding")
    if let length = announcedLength(status: head.status, contentLength: contentLength) {
      head.headers.add(name: "Content-Length", value: String(length))
    }
    return head
  }

  /// The `Content-Length` a response announces: none for 1xx/204/304, 0 for 205 (a server must not
  /// generate content in it, RFC 9110 §15.3.6), else `contentLength`.
  public static func announcedLength(status: HTTPStatus, contentLength: Int) -> Int? {
    if status.forbidsContent { return nil }
    return status.code == 205 ? 0 : contentLength
  }

  /// True when a response with this status to this method carries content bytes on the wire (not for
  /// HEAD, 1xx, 204, 205 or 304).
  public static func sendsContent(status: HTTPStatus, requestMethod: HTTPMethod) -> Bool {
    !status.forbidsContent && status.code != 205 && requestMethod != .head
  }

  /// One chunk of the chunked transfer coding: `hex-size CRLF data CRLF` (RFC 9112 §7.1).
  /// An empty `data` produces nothing (use ``lastChunk`` to end the content).
  public static func chunk(_ data: some Collection<UInt8>) -> [UInt8] {
    guard !data.isEmpty else { return [] }
    var out = Array(String(data.count, radix: 16).utf8)
    out.append(contentsOf: [13, 10])
    out.append(contentsOf: data)
    out.append(contentsOf: [13, 10])
    return out
  }

  /// `0 CRLF CRLF`: the last chunk and an empty trailer section.
  public static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)

  /// Appends `s` as UTF-8 with CR, LF and NUL written as spaces; one bulk copy when there are none.
  @inline(__always)
  static func appendSafe(_ s: String, to out: inout [UInt8]) {
    let copied: Bool? = s.utf8.withContiguousStorageIfAvailable { bytes in
      if bytes.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) {
        for c in bytes { out.append(c == 13 || c == 10 || c == 0 ? 32 : c) }
      } else {
        out.append(contentsOf: bytes)
      }
      return true
    }
    if copied == nil {
      for c in s.utf8 { out.append(c == 13 || c == 10 || c == 0 ? 32 : c) }
    }
  }
}
