import HTTPCore

/// A complete response serialized once and reused for every request it answers: the status line, the
/// fields and the true `Content-Length`, ready to copy into the connection's output with only `Date`,
/// `Server` and `Connection` added per request.
public final class PreparedResponse: Sendable {
  /// The status, to decide whether content is sent (HEAD, 1xx, 204, 304 send none).
  let status: HTTPStatus
  /// Status line and fields including framing, without the empty line that ends the head.
  let headPrefix: [UInt8]
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
    var framed = HTTPSerializer.framed(head, contentLength: body.count, requestMethod: .get)
    framed.headers.remove(name: "Connection")
    var bytes = HTTPSerializer.responseHead(framed)
    bytes.removeLast(2)
    status = framed.status
    headPrefix = bytes
    hasDate = framed.headers.contains("Date")
    hasServer = framed.headers.contains("Server")
    self.body = body
  }
}
