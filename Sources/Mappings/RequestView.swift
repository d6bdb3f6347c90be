import HTTPCore
import MockJSON
import Templating

/// What the matcher sees of one request, computed once per request from an `HTTPRequest`.
///
/// Percent-decoding happens here, once: see `docs/fixtures.md` for exactly what each URL matcher compares.
public struct RequestView: Sendable {
  /// Request method as sent.
  public let method: HTTPMethod
  /// The raw request-target.
  public let target: String
  /// Canonical path: percent-decoded as UTF-8 except `%2F %3F %23 %25` (kept, upper-case hex); `/` when
  /// empty. Compared by `urlPath`, `urlPathPattern`, `urlPathTemplate`.
  public let path: String
  /// Canonical query (decoded except `%2F %3F %23 %25 %26 %3D %2B`, `+` kept), nil without `?`.
  public let query: String?
  /// `path` + `?` + `query` (or just `path`): what `url` and `urlPattern` compare.
  public let url: String
  /// Query parameters in order, names and values fully decoded (`+` as space), repeated names kept.
  public let queryParameters: [(name: String, value: String)]
  /// Header fields as received.
  public let headers: HTTPHeaders
  /// Cookies from every `Cookie` field, in order (``CookieHeader/pairs(_:)``: trimmed, unquoted, not decoded).
  public let cookies: [(name: String, value: String)]
  /// Credentials of an `Authorization: Basic …` field, when present and decodable.
  public let basicCredentials: (username: String, password: String)?
  /// The body bytes (transfer coding already removed).
  public let body: [UInt8]
  /// The body as text in the charset of its `Content-Type` (UTF-8 without one; invalid sequences
  /// replaced), for string matchers.
  public let bodyText: String
  /// True when the query's percent-decoding is not UTF-8 (`?q=caf%E9`): matchers that read the query
  /// (`url`, `urlPattern`, `queryParameters`) do not match; the others are not affected.
  public let queryIsUndecodable: Bool
  /// `application/x-www-form-urlencoded` body fields in order, decoded as WHATWG's URL standard does
  /// (`+` is a space; invalid escapes kept); empty for other bodies.
  public let formParameters: [(name: String, value: String)]
  /// The parts of a `multipart/*` body (RFC 7578, RFC 2046 §5.1); empty for other bodies.
  public let parts: [MultipartPart]
  /// The body parsed as JSON, when it is JSON.
  public let bodyJSON: JSONValue?
  /// Why the body's `Content-Encoding` could not be removed (``body`` is then the bytes as received), or
  /// nil.
  package let contentCodingProblem: String?
  /// `http` or `https` (WireMock's `scheme` request field).
  public let scheme: String
  /// The host name of the `Host` field, without port (WireMock's `host`); empty when absent.
  public let host: String
  /// The port of the `Host` field, else the port the request arrived on, else the scheme's default
  /// (WireMock's `port`).
  public let port: Int
  /// The client's IP address without port (WireMock's `clientIp`), nil when unknown.
  public let clientIP: String?
  /// The store and request model `state-matcher` custom matchers read, nil when no stub has one.
  public var stateEnvironment: StateMatchEnvironment?

  /// Where a request arrived: what `scheme`, `port` and `clientIp` compare.
  public struct Connection: Sendable {
    /// True on the HTTPS listener.
    public var isTLS: Bool
    /// The local port.
    public var localPort: Int
    /// The peer as accepted (formatted only when a view is built).
    package var client: ClientAddress
    /// The peer as `ip:port` or `[v6]:port`.
    public var clientAddress: String {
      get { client.text }
      set { client = .text(newValue) }
    }
    /// Creates a connection description.
    public init(isTLS: Bool, localPort: Int, clientAddress: String) {
      self.init(isTLS: isTLS, localPort: localPort, client: .text(clientAddress))
    }
    /// Creates a connection description for the peer `client` as accepted.
    package init(isTLS: Bool, localPort: Int, client: ClientAddress) {
      self.isTLS = isTLS
      self.localPort = localPort
      self.client = client
    }
  }

  /// Builds the view of `request`.
  /// - Throws: ``URLDecodingError`` when the path or query holds invalid percent-encoding or decodes to
  ///   bytes that are not UTF-8.
  public init(_ request: HTTPRequest, connection: Connection? = nil) throws(URLDecodingError) {
    method = request.head.method
    target = request.head.target
    let rawPath = request.head.rawPath
    path = try PercentDecoding.canonicalPath(rawPath)
    var undecodable = false
    if let rawQuery = request.head.rawQuery {
      var decoded: (String, [(name: String, value: String)])?
      do throws(URLDecodingError) {
        decoded = (
          try PercentDecoding.canonicalQuery(rawQuery),
          try PercentDecoding.queryParameters(rawQuery).map { (name: $0.0, value: $0.1) }
        )
      } catch  where error.isNotUTF8 {
        // Only the matchers that read the query care (RequestPattern.evaluate).
        undecodable = true
      }
      let q = decoded?.0 ?? String(rawQuery)
      query = q
      url = path + "?" + q
      queryParameters = decoded?.1 ?? []
    } else {
      query = nil
      url = path
      queryParameters = []
    }
    queryIsUndecodable = undecodable
    headers = request.head.headers
    var cookies: [(name: String, value: String)] = []
    for line in headers.contains("Cookie") ? headers.values("Cookie") : [] {
      cookies += CookieHeader.pairs(line)
    }
    self.cookies = cookies
    basicCredentials = RequestView.basic(headers.first("Authorization"))
    body = request.body
    contentCodingProblem = request.contentCodingProblem
    let contentType = headers.first("Content-Type")
    bodyText = TextCharset.decode(request.body, contentType: contentType)
    bodyJSON = RequestView.jsonIfLikely(request.body)
    formParameters = FormDecoding.fields(request.body, contentType: contentType)
    parts = MultipartPart.parse(request.body, contentType: contentType)
    scheme = connection?.isTLS == true ? "https" : "http"
    let (h, p) = RequestView.hostAndPort(request.head.effectiveAuthority ?? "")
    host = h
    port = p ?? connection?.localPort ?? (scheme == "https" ? 443 : 80)
    clientIP = connection.map { RequestView.ipOnly($0.clientAddress) }
  }

  /// The view of one multipart part: its headers and body (for `multipartPatterns`' `bodyPatterns`).
  package init(part: MultipartPart) {
    method = .get
    target = ""
    path = "/"
    query = nil
    url = "/"
    queryParameters = []
    headers = part.headers
    cookies = []
    basicCredentials = nil
    body = part.body
    bodyText = TextCharset.decode(part.body, contentType: part.headers.first("Content-Type"))
    bodyJSON = RequestView.jsonIfLikely(part.body)
    queryIsUndecodable = false
    contentCodingProblem = nil
    formParameters = []
    parts = []
    scheme = "http"
    host = ""
    port = 80
    clientIP = nil
  }

  /// Values of form field `name` (case-sensitive), in order.
  public func formValues(_ name: String) -> [String] {
    formParameters.compactMap { $0.name == name ? $0.value : nil }
  }

  /// `example.com:8080` → (`example.com`, 8080); `[::1]:80` → (`::1`, 80).
  package static func hostAndPort(_ value: String) -> (String, Int?) {
    let v = value.trimmingOWS()
    if v.hasPrefix("["), let close = v.firstIndex(of: "]") {
      let h = String(v[v.index(after: v.startIndex)..<close])
      let rest = v[v.index(after: close)...]
      return (
        h, rest.hasPrefix(":") ? Int(rest.dropFirst()).flatMap { (0...65535).contains($0) ? $0 : nil } : nil
      )
    }
    guard let colon = v.lastIndex(of: ":") else { return (v, nil) }
    let port = Int(v[v.index(after: colon)...]).flatMap { (0...65535).contains($0) ? $0 : nil }
    return (String(v[..<colon]), port)
  }

  /// `127.0.0.1:5000` → `127.0.0.1`; `[::1]:5000` → `::1`.
  package static func ipOnly(_ address: String) -> String {
    if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
      return String(address[address.index(after: address.startIndex)..<close])
    }
    guard let colon = address.lastIndex(of: ":") else { return address }
    return String(address[..<colon])
  }

  /// Values of query parameter `name` (case-sensitive), in order.
  public func queryValues(_ name: String) -> [String] {
    queryParameters.compactMap { $0.name == name ? $0.value : nil }
  }

  /// Values of cookie `name` (case-sensitive), in order.
  public func cookieValues(_ name: String) -> [String] {
    cookies.compactMap { $0.name == name ? $0.value : nil }
  }

  package static func basic(_ authorization: String?) -> (String, String)? {
    guard let authorization else { return nil }
    let parts = authorization.split(separator: " ", maxSplits: 1)
    guard parts.count == 2, parts[0].equalsIgnoringASCIICase("Basic"),
      let bytes = Base64.decode(parts[1].trimmingOWS()),
      let text = String(validating: bytes, as: UTF8.self), let colon = text.firstIndex(of: ":")
    else { return nil }
    return (String(text[..<colon]), String(text[text.index(after: colon)...]))
  }

  package static func jsonIfLikely(_ body: [UInt8]) -> JSONValue? {
    guard let first = body.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }),
      first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || first == UInt8(ascii: "\"")
        || first == UInt8(ascii: "-") || (first >= 48 && first <= 57) || first == UInt8(ascii: "t")
        || first == UInt8(ascii: "f") || first == UInt8(ascii: "n")
    else { return nil }
    return try? JSONValue.parse(bytes: body)
  }
}
