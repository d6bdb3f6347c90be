import HTTPCore

/// A complete response serialized once and reused for every request it answers: the status line and the
/// fields, ready to copy into the connection's output with only `Content-Length`, `Date`, `Server` and
/// `Connection` added per request.
///
/// A templated stub whose head does not depend on the request keeps one too: its head is serialized once
/// and each request's rendered content is sent with it (``answering(_:)``).
public final class PreparedResponse: Sendable {
  /// The status, to decide whether content is sent (HEAD, 1xx, 204, 304 send none).
  let status: HTTPStatus
  /// Status line and fields without framing (`Content-Length`, `Transfer-Encoding`, `Connection`) and
  /// without the empty line that ends the head.
  let headPrefix: [UInt8]
  /// The `Content-Length` the head announces (RFC 9112 §6.3), nil for 1xx/204/304, which announce none.
  let announcedLength: Int?
  /// ``headPrefix`` with its `Content-Length` line (when it announces one), for a response whose content
  /// is the stub's own: copied whole per request instead of writing the length each time. Nil for a
  /// response ``answering(_:)`` one request.
  let framedHead: [UInt8]?
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
    headPrefix = bytes
    announcedLength = HTTPSerializer.announcedLength(status: head.status, contentLength: body.count)
    if let announcedLength { ResponseHeadWriter.writeContentLength(announcedLength, into: &bytes) }
    framedHead = bytes
    hasDate = unframed.headers.contains("Date")
    hasServer = unframed.headers.contains("Server")
    self.body = body
  }

  private init(_ other: PreparedResponse, body: [UInt8]) {
    status = other.status
    headPrefix = other.headPrefix
    announcedLength = HTTPSerializer.announcedLength(status: other.status, contentLength: body.count)
    framedHead = nil
    hasDate = other.hasDate
    hasServer = other.hasServer
    closes = other.closes
    self.body = body
  }

  /// The same head answering with `body` instead (a templated stub's content rendered for one request):
  /// the serialized head is shared, only `Content-Length` follows the new content.
  func answering(_ body: [UInt8]) -> PreparedResponse {
    PreparedResponse(self, body: body)
  }
}
