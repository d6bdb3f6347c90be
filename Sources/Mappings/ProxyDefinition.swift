import HTTPCore

/// WireMock's proxy response: `"response": {"proxyBaseUrl": "https://api.example.com", …}` forwards the
/// matched request to the upstream and relays its answer instead of a stubbed one.
public struct ProxyDefinition: Sendable, Hashable {
  /// `proxyBaseUrl`: `http` or `https` scheme, host, optional port and base path (no query or
  /// fragment). The request's path and query are appended to it.
  public var baseURL: String
  /// `additionalProxyRequestHeaders`: fields added to (or replacing those of) the forwarded request.
  public var additionalRequestHeaders: HTTPHeaders
  /// `removeProxyRequestHeaders`: field names dropped from the forwarded request (case-insensitive).
  public var removedRequestHeaders: [String]
  /// `proxyUrlPrefixToRemove`: removed from the start of the request path before it is appended to
  /// ``baseURL``.
  public var urlPrefixToRemove: String?

  /// Creates a proxy definition.
  public init(
    baseURL: String, additionalRequestHeaders: HTTPHeaders = [:], removedRequestHeaders: [String] = [],
    urlPrefixToRemove: String? = nil
  ) {
    self.baseURL = baseURL
    self.additionalRequestHeaders = additionalRequestHeaders
    self.removedRequestHeaders = removedRequestHeaders
    self.urlPrefixToRemove = urlPrefixToRemove
  }

  /// Checks a `proxyBaseUrl`: nil when it is an absolute `http`/`https` URL with a host and without
  /// query, fragment or user information, else what is wrong with it.
  public static func problem(baseURL: String) -> String? {
    let lower = baseURL.lowercasedASCII()
    let rest: Substring
    if lower.hasPrefix("http://") {
      rest = baseURL.dropFirst(7)
    } else if lower.hasPrefix("https://") {
      rest = baseURL.dropFirst(8)
    } else {
      return "the scheme is not http:// or https://"
    }
    let authority = rest.prefix { $0 != "/" }
    if authority.isEmpty { return "it has no host" }
    if authority.contains("@") {
      return "it has user information (put credentials in additionalProxyRequestHeaders)"
    }
    if rest.contains("?") || rest.contains("#") { return "it has a query or fragment" }
    if rest.unicodeScalars.contains(where: { $0.value <= 32 || $0.value == 127 }) {
      return "it has spaces or control characters"
    }
    if let colon = authority.lastIndex(of: ":"), !authority.hasSuffix("]") {
      let port = authority[authority.index(after: colon)...]
      guard let n = Int(port), (1...65535).contains(n) else { return "its port is not 1...65535" }
    }
    return nil
  }
}
