import HTTPCore

/// A complete response serialized once and reused for every request it answers: the status line and the
/// fields with their `Content-Length`, ready to copy into the connection's output with only `Date`,
/// `Server` and `Connection` added per request.
///
/// A templated stub whose head does not depend on the request keeps one too: its head is serialized once
/// and each request's rendered content is sent with it (``answering(_:)``).
public final class PreparedResponse: Sendable {
  /// The status, to decide whether content is sent (HEAD, 1xx, 204, 304 send none).
  let status: HTTPStatus
  /// Status line and fields without framing (`Content-Length`, `Transfer-Encoding`, `Connection`), then
  /// the `Content-Length` line of the stub's own content when it announces one; without the empty line
  /// that ends the head. Shared by the responses ``answering(_:)`` one request.
  private let head: [UInt8]
  /// The bytes of ``head`` before its `Content-Length` line.
  private let prefixCount: Int
  /// ``head`` announces this response's content (its own: not a response ``answering(_:)`` a request).
  private let headIsFramed: Bool
  /// The `Content-Length` the head announces (RFC 9112 §6.3), nil for 1xx/204/304, which announce none.
  let announcedLength: Int?
  /// True when the authored head has its own `Date` field.
  let hasDate: Bool
  /// True when the authored head has its own `Server` field.
  let hasServer: Bool
  /// The content.
  let body: [UInt8]
  /// True when the authored head said `Connection: close`.
  let closes: Bool

  /// Frames and serializes `head` for `body` (RFC 9112 §6: `Content-Length` set, `Transfer-Encoding`
  /// and `Connection` removed; none for 1xx/204/304).
  package init(head: HTTPResponseHead, body: [UInt8]) {
    closes = head.headers.hasToken("close", in: "Connection")
    var unframed = head
    unframed.headers.remove(name: "Content-Length")
    unframed.headers.remove(name: "Transfer-Encoding")
    unframed.headers.remove(name: "Connection")
    var bytes = HTTPSerializer.responseHead(unframed)
    bytes.removeLast(2)
    status = head.status
    prefixCount = bytes.count
    announcedLength = HTTPSerializer.announcedLength(status: head.status, contentLength: body.count)
    if let announcedLength { ResponseHeadWriter.writeContentLength(announcedLength, into: &bytes) }
    self.head = bytes
    headIsFramed = true
    hasDate = unframed.headers.contains("Date")
    hasServer = unframed.headers.contains("Server")
    self.body = body
  }

  private init(_ other: PreparedResponse, body: [UInt8]) {
    status = other.status
    head = other.head
    prefixCount = other.prefixCount
    headIsFramed = false
    announcedLength = HTTPSerializer.announcedLength(status: other.status, contentLength: body.count)
    hasDate = other.hasDate
    hasServer = other.hasServer
    closes = other.closes
    self.body = body
  }

  /// The head without its `Content-Length` line.
  var headPrefix: [UInt8] { Array(head[..<prefixCount]) }

  /// The head with its `Content-Length` line, when it is this response's own (nil for a response
  /// ``answering(_:)`` a request).
  var framedHead: [UInt8]? { headIsFramed ? head : nil }

  /// Bytes of the serialized head and the content: what a connection writes for it, but for its own
  /// fields (`Date`, `Server`, `Connection`) and a `Content-Length` line.
  var byteCount: Int { head.count + body.count }

  /// Appends the head with this response's `Content-Length` line (one copy when the head already has it,
  /// the stub's own content; the prefix and the length otherwise) and without the empty line.
  func writeFramedHead(into out: inout [UInt8]) {
    if headIsFramed {
      out.append(contentsOf: head)
    } else {
      out.append(contentsOf: head[..<prefixCount])
      if let announcedLength { ResponseHeadWriter.writeContentLength(announcedLength, into: &out) }
    }
  }

  /// The same head answering with `body` instead (a templated stub's content rendered for one request):
  /// the serialized head is shared, only `Content-Length` follows the new content.
  func answering(_ body: [UInt8]) -> PreparedResponse {
    PreparedResponse(self, body: body)
  }
}
