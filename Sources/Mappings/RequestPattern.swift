import HTTPCore
import MockJSON

/// A WireMock request pattern: every field present must match for the stub to match.
public struct RequestPattern: Sendable, Hashable {
  /// A named single-valued matcher (path parameters, cookies).
  public struct Named: Sendable, Hashable {
    /// Parameter, cookie or header name.
    public var name: String
    /// The matcher.
    public var pattern: StringValuePattern
    /// Creates a named matcher.
    public init(_ name: String, _ pattern: StringValuePattern) {
      self.name = name
      self.pattern = pattern
    }
  }

  /// A named multi-valued matcher (headers, query parameters).
  public struct NamedMulti: Sendable, Hashable {
    /// Header (case-insensitive) or query parameter (case-sensitive) name.
    public var name: String
    /// The matcher.
    public var pattern: MultiValuePattern
    /// Creates a named matcher.
    public init(_ name: String, _ pattern: MultiValuePattern) {
      self.name = name
      self.pattern = pattern
    }
  }

  /// Required method, nil for `ANY` (also when `method` is omitted).
  public var method: HTTPMethod?
  /// URL field.
  public var url: URLMatcher
  /// `pathParameters` (with `urlPathTemplate`).
  public var pathParameters: [Named]
  /// `queryParameters`.
  public var queryParameters: [NamedMulti]
  /// `headers` (names case-insensitive).
  public var headers: [NamedMulti]
  /// `cookies`.
  public var cookies: [Named]
  /// `basicAuthCredentials`.
  public var basicAuthCredentials: (username: String, password: String)? {
    get { basicAuth.map { ($0.username, $0.password) } }
    set { basicAuth = newValue.map { BasicCredentials(username: $0.username, password: $0.password) } }
  }
  /// `bodyPatterns`: all must match.
  public var bodyPatterns: [StringValuePattern]

  package var basicAuth: BasicCredentials?

  package struct BasicCredentials: Sendable, Hashable {
    var username: String
    var password: String
  }

  /// Creates a pattern; defaults match anything.
  public init(
    method: HTTPMethod? = nil, url: URLMatcher = .any, pathParameters: [Named] = [],
    queryParameters: [NamedMulti] = [], headers: [NamedMulti] = [], cookies: [Named] = [],
    basicAuthCredentials: (username: String, password: String)? = nil,
    bodyPatterns: [StringValuePattern] = []
  ) {
    self.method = method
    self.url = url
    self.pathParameters = pathParameters
    self.queryParameters = queryParameters
    self.headers = headers
    self.cookies = cookies
    self.basicAuth = basicAuthCredentials.map {
      BasicCredentials(username: $0.username, password: $0.password)
    }
    self.bodyPatterns = bodyPatterns
  }

  /// Fast check: true when every part matches, with the template's path parameters.
  public func matches(_ request: RequestView) -> (Bool, [String: String]) {
    if let method, method != request.method { return (false, [:]) }
    var params: [String: String] = [:]
    guard url.match(request, parameters: &params) else { return (false, [:]) }
    for p in pathParameters where !p.pattern.match(params[p.name]) { return (false, [:]) }
    for q in queryParameters where !q.pattern.match(request.queryValues(q.name)) { return (false, [:]) }
    for h in headers where !h.pattern.match(request.headers.values(h.name)) { return (false, [:]) }
    for c in cookies {
      let values = request.cookieValues(c.name)
      let ok = values.isEmpty ? c.pattern.match(nil) : values.contains { c.pattern.match($0) }
      if !ok { return (false, [:]) }
    }
    if let basicAuth {
      guard let got = request.basicCredentials, got.username == basicAuth.username,
        got.password == basicAuth.password
      else { return (false, [:]) }
    }
    for b in bodyPatterns where !b.matchBody(request) { return (false, [:]) }
    return (true, params)
  }

  /// Full evaluation for near-miss reports: every part checked, each failing part described.
  /// - Returns: the number of parts checked (weighted: method 1, URL 3, each other part 1) and the failures.
  public func mismatches(_ request: RequestView) -> (weight: Int, failures: [NearMiss.Mismatch]) {
    var weight = 0
    var failures: [NearMiss.Mismatch] = []
    if let method {
      weight += 1
      if method != request.method {
        failures.append(
          .init(part: "method", expected: method.rawValue, actual: request.method.rawValue, weight: 1))
      }
    }
    var params: [String: String] = [:]
    if url != .any {
      weight += 3
      if !url.match(request, parameters: &params) {
        failures.append(.init(part: "url", expected: url.description, actual: url.actual(request), weight: 3))
      }
    }
    for p in pathParameters {
      weight += 1
      if !p.pattern.match(params[p.name]) {
        failures.append(
          .init(
            part: "path parameter \(p.name)", expected: p.pattern.description,
            actual: params[p.name] ?? "(absent)", weight: 1))
      }
    }
    for q in queryParameters {
      weight += 1
      let values = request.queryValues(q.name)
      if !q.pattern.match(values) {
        failures.append(
          .init(
            part: "query \(q.name)", expected: q.pattern.description, actual: NearMiss.show(values), weight: 1
          ))
      }
    }
    for h in headers {
      weight += 1
      let values = request.headers.values(h.name)
      if !h.pattern.match(values) {
        failures.append(
          .init(
            part: "header \(h.name)", expected: h.pattern.description, actual: NearMiss.show(values),
            weight: 1))
      }
    }
    for c in cookies {
      weight += 1
      let values = request.cookieValues(c.name)
      let ok = values.isEmpty ? c.pattern.match(nil) : values.contains { c.pattern.match($0) }
      if !ok {
        failures.append(
          .init(
            part: "cookie \(c.name)", expected: c.pattern.description, actual: NearMiss.show(values),
            weight: 1))
      }
    }
    if let basicAuth {
      weight += 1
      let got = request.basicCredentials
      if got?.username != basicAuth.username || got?.password != basicAuth.password {
        failures.append(
          .init(
            part: "basicAuthCredentials",
            expected: "username \(JSONValue.quoted(basicAuth.username)) and its password",
            actual: got.map { "username \(JSONValue.quoted($0.username))" } ?? "(no Basic credentials)",
            weight: 1))
      }
    }
    for (k, b) in bodyPatterns.enumerated() {
      weight += 1
      if !b.matchBody(request) {
        failures.append(
          .init(
            part: "body pattern \(k)", expected: b.description, actual: NearMiss.excerpt(request.bodyText),
            weight: 1))
      }
    }
    return (weight, failures)
  }

  /// Equality of all fields.
  public static func == (a: RequestPattern, b: RequestPattern) -> Bool {
    a.method == b.method && a.url == b.url && a.pathParameters == b.pathParameters
      && a.queryParameters == b.queryParameters && a.headers == b.headers && a.cookies == b.cookies
      && a.basicAuth == b.basicAuth && a.bodyPatterns == b.bodyPatterns
  }

  /// Hash of method and URL.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(method)
    hasher.combine(url)
  }
}
