/// The head of a request message: request line and header section (RFC 9112 §3, §5).
public struct HTTPRequestHead: Sendable, Hashable {
  /// Request method.
  public var method: HTTPMethod
  /// The request-target exactly as received: origin-form (`/a?b`), absolute-form (`http://h/a`),
  /// authority-form or asterisk-form (`*`) (RFC 9112 §3.2).
  public var target: String
  /// Protocol version from the request line.
  public var version: HTTPVersion
  /// Header fields in order.
  public var headers: HTTPHeaders

  /// Creates a request head.
  public init(
    method: HTTPMethod, target: String, version: HTTPVersion = .http1_1, headers: HTTPHeaders = [:]
  ) {
    self.method = method
    self.target = target
    self.version = version
    self.headers = headers
  }

  /// The path component of the target, still percent-encoded, without query; `*` for asterisk-form and
  /// the path of an absolute-form target (`/` when it has none).
  public var rawPath: String {
    // Origin-form without query or fragment, the common case: the target itself, found with one scan of
    // contiguous bytes (the UTF8View walk below cost about 400 instructions per request).
    let isWholePath = target.utf8.withContiguousStorageIfAvailable { bytes in
      bytes.first == UInt8(ascii: "/") && !bytes.contains { $0 == 63 || $0 == 35 }
    }
    if isWholePath == true { return target }
    let bytes = target.utf8
    var start = bytes.startIndex
    if bytes.first != UInt8(ascii: "/") {
      // absolute-form: skip "scheme://authority"
      if let schemeEnd = HTTPRequestHead.indexAfterScheme(bytes) {
        guard let slash = bytes[schemeEnd...].firstIndex(where: { $0 == 47 || $0 == 63 || $0 == 35 }),
          bytes[slash] == 47
        else { return "/" }
        start = slash
      }
    }
    let end = bytes[start...].firstIndex(where: { $0 == 63 || $0 == 35 }) ?? bytes.endIndex
    if start == bytes.startIndex && end == bytes.endIndex { return target }
    return String(Substring(target.utf8[start..<end]))
  }

  /// The raw query after `?` (still percent-encoded, without any fragment), or nil when there is no `?`.
  public var rawQuery: String? {
    let bytes = target.utf8
    guard let q = bytes.firstIndex(of: 63) else { return nil }
    let from = bytes.index(after: q)
    let end = bytes[from...].firstIndex(of: 35) ?? bytes.endIndex
    return String(Substring(target.utf8[from..<end]))
  }

  /// Index just after `scheme://` when the target is in absolute-form.
  private static func indexAfterScheme(_ bytes: String.UTF8View) -> String.UTF8View.Index? {
    guard let colon = bytes.firstIndex(of: 58) else { return nil }
    let rest = bytes[colon...]
    guard rest.starts(with: [58, 47, 47]) else { return nil }
    return bytes.index(colon, offsetBy: 3)
  }

  /// The authority the request is for (RFC 9112 §3.2.2): the `host[:port]` of an absolute-form target
  /// (a server must then ignore the Host field), else the Host field's value; nil when there is neither.
  public var effectiveAuthority: String? {
    let bytes = target.utf8
    if bytes.first != UInt8(ascii: "/"), let start = HTTPRequestHead.indexAfterScheme(bytes) {
      let end = bytes[start...].firstIndex(where: { $0 == 47 || $0 == 63 || $0 == 35 }) ?? bytes.endIndex
      if start < end { return String(Substring(target.utf8[start..<end])) }
    }
    return headers.first("Host")
  }

  /// The target in origin-form (path and query), also for an absolute-form target.
  public var originForm: String {
    if let q = rawQuery { return rawPath + "?" + q }
    return rawPath
  }

  /// Whether the connection stays open after this exchange by the request's own terms:
  /// HTTP/1.1 unless `Connection: close`, HTTP/1.0 only with `Connection: keep-alive` (RFC 9112 §9.3).
  public var wantsKeepAlive: Bool {
    if headers.hasToken("close", in: "Connection") { return false }
    if version == .http1_0 { return headers.hasToken("keep-alive", in: "Connection") }
    return version.major == 1 && version.minor >= 1
  }
}

/// A complete request: head, decoded content (chunked coding removed) and trailer fields.
public struct HTTPRequest: Sendable, Hashable {
  /// Request line and header fields as received.
  public var head: HTTPRequestHead
  /// Content after removing the transfer coding (RFC 9112 §6, §7).
  public var body: [UInt8]
  /// Trailer fields of a chunked message, empty otherwise (RFC 9112 §7.1.2).
  public var trailers: HTTPHeaders
  /// Why the content, sent with a `Content-Encoding`, could not be decoded (then ``body`` holds the bytes
  /// as received), or nil. Body matchers that need the decoded text do not match such a request.
  package var contentCodingProblem: String?

  /// Creates a request.
  public init(head: HTTPRequestHead, body: [UInt8] = [], trailers: HTTPHeaders = [:]) {
    self.head = head
    self.body = body
    self.trailers = trailers
  }

  /// The request method (from the head).
  public var method: HTTPMethod { head.method }
  /// The header fields (from the head).
  public var headers: HTTPHeaders { head.headers }
}

/// The head of a response message: status line and header section (RFC 9112 §4).
public struct HTTPResponseHead: Sendable, Hashable {
  /// Protocol version of the status line.
  public var version: HTTPVersion
  /// Status code and reason phrase.
  public var status: HTTPStatus
  /// Header fields in order.
  public var headers: HTTPHeaders
  /// Creates a response head.
  public init(version: HTTPVersion = .http1_1, status: HTTPStatus, headers: HTTPHeaders = [:]) {
    self.version = version
    self.status = status
    self.headers = headers
  }
}

/// A complete response: head, content, trailers.
public struct HTTPResponse: Sendable, Hashable {
  /// Status line and header fields.
  public var head: HTTPResponseHead
  /// Content after removing the transfer coding.
  public var body: [UInt8]
  /// Trailer fields of a chunked message.
  public var trailers: HTTPHeaders
  /// Creates a response.
  public init(head: HTTPResponseHead, body: [UInt8] = [], trailers: HTTPHeaders = [:]) {
    self.head = head
    self.body = body
    self.trailers = trailers
  }
  /// The status (from the head).
  public var status: HTTPStatus { head.status }
  /// The header fields (from the head).
  public var headers: HTTPHeaders { head.headers }
}
