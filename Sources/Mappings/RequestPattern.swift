import HTTPCore
import MockJSON
import PactMatching

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

  /// Required method, nil for `ANY` (also when `method` is omitted or is a ``MethodSet``).
  public var method: HTTPMethod?
  /// `"method": {"oneOf": [...]}` or `{"noneOf": [...]}` (WireMock 3), or nil.
  package var methodSet: MethodSet?

  /// A set of methods a request's method must be in (`oneOf`) or out of (`noneOf`).
  package struct MethodSet: Sendable, Equatable {
    /// The methods listed.
    package var methods: [HTTPMethod]
    /// True for `noneOf`.
    package var excludes: Bool

    /// True when `method` satisfies the set.
    package func admits(_ method: HTTPMethod) -> Bool { methods.contains(method) != excludes }

    /// `oneOf [GET, PUT]` as near misses show it.
    package var description: String {
      (excludes ? "noneOf " : "oneOf ") + "[" + methods.map(\.rawValue).joined(separator: ", ") + "]"
    }
  }
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
  /// `formParameters`: fields of an `application/x-www-form-urlencoded` body (names case-sensitive).
  public var formParameters: [NamedMulti] = []
  /// `multipartPatterns`: each must be satisfied by the parts of a `multipart/*` body.
  public var multipartPatterns: [MultipartPattern] = []

  package var basicAuth: BasicCredentials? {
    get { rare?.fields.basicAuth }
    set { changeRare { $0.basicAuth = newValue } }
  }
  /// `scheme`: `http` or `https`.
  public var scheme: String? {
    get { rare?.fields.scheme }
    set { changeRare { $0.scheme = newValue } }
  }
  /// `host`: a matcher for the `Host` field's host name.
  public var host: StringValuePattern? {
    get { rare?.fields.host }
    set { changeRare { $0.host = newValue } }
  }
  /// `port`: the port the request was addressed to.
  public var port: Int? {
    get { rare?.fields.port }
    set { changeRare { $0.port = newValue } }
  }
  /// `customMatcher` `pact`: a Pact interaction's expected request with its matching rules, compared as
  /// Pact's mock server compares (its method is the contract's: a `GET` interaction does not answer `HEAD`).
  package var pact: PactRequestExpectation? {
    get { rare?.fields.pact }
    set { changeRare { $0.pact = newValue } }
  }
  /// `customMatcher` `state-matcher` (WireMock's state extension): a condition on the state store.
  package var stateMatcher: StateMatcher? {
    get { rare?.fields.stateMatcher }
    set { changeRare { $0.stateMatcher = newValue } }
  }
  /// True when a HEAD request must not be answered by this pattern's GET (a Pact interaction's method is
  /// the contract's).
  package var keepsContractMethod: Bool { pact != nil }
  /// `clientIp`: a matcher for the client's IP address.
  public var clientIp: StringValuePattern? {
    get { rare?.fields.clientIp }
    set { changeRare { $0.clientIp = newValue } }
  }

  /// True when the pattern names a connection part (scheme, host, port, client IP).
  package var hasConnectionParts: Bool {
    guard let rare else { return false }
    let f = rare.fields
    return f.scheme != nil || f.host != nil || f.port != nil || f.clientIp != nil
  }

  /// Basic credentials and the connection parts, which most stubs leave out (about 80 bytes inline),
  /// behind one reference that is nil when all are absent: a plain pattern pays 8 bytes for them.
  private var rare: Rare?

  private struct RareFields: Sendable, Equatable {
    var basicAuth: BasicCredentials?
    var scheme: String?
    var host: StringValuePattern?
    var port: Int?
    var clientIp: StringValuePattern?
    var pact: PactRequestExpectation?
    var stateMatcher: StateMatcher?
  }

  /// Immutable: copies share it; a change makes a new one.
  private final class Rare: Sendable {
    let fields: RareFields
    init(_ fields: RareFields) { self.fields = fields }
  }

  private mutating func changeRare(_ change: (inout RareFields) -> Void) {
    var fields = rare?.fields ?? RareFields()
    change(&fields)
    rare = fields == RareFields() ? nil : Rare(fields)
  }

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
    self.bodyPatterns = bodyPatterns
    if let basicAuthCredentials {
      basicAuth = BasicCredentials(
        username: basicAuthCredentials.username, password: basicAuthCredentials.password)
    }
  }

  /// True when every part matches, with the template's path parameters (an evaluation that stops at the
  /// first failing part).
  public func matches(_ request: RequestView) -> (Bool, [String: String]) {
    let (result, parameters) = evaluate(request, detailed: false)
    return (result.isExactMatch, result.isExactMatch ? parameters : [:])
  }

  /// Compares `request` with every part of the pattern: the one place matching rules are applied.
  /// - Parameters:
  ///   - detailed: describe every failing part with its distance (near misses); when false, stop at the
  ///     first failing part (serving).
  /// - Returns: the result (exact match, or the distance and failing parts) and the path parameters of a
  ///   `urlPathTemplate`.
  public func evaluate(_ request: RequestView, detailed: Bool) -> (MatchResult, [String: String]) {
    var r = MatchResult(detailed: detailed)
    var params: [String: String] = [:]
    if let method {
      guard
        r.record(
          "method", weight: MatchResult.methodWeight, matched: method == request.method,
          expected: method.rawValue, actual: request.method.rawValue)
      else { return (r, params) }
    }
    if let methodSet {
      guard
        r.record(
          "method", weight: MatchResult.methodWeight, matched: methodSet.admits(request.method),
          expected: methodSet.description, actual: request.method.rawValue)
      else { return (r, params) }
    }
    if url != .any {
      guard
        r.record(
          "url", weight: MatchResult.urlWeight,
          matched: url.match(request, parameters: &params) && !(request.queryIsUndecodable && url.readsQuery),
          expected: url.description, actual: url.actual(request), distance: url.distance(request))
      else { return (r, params) }
    }
    guard evaluateConnectionParts(request, &r) else { return (r, params) }
    guard evaluateNamedParts(request, params, &r) else { return (r, params) }
    if let basicAuth {
      let got = request.basicCredentials
      guard
        r.record(
          "basicAuthCredentials", weight: MatchResult.partWeight,
          matched: got?.username == basicAuth.username && got?.password == basicAuth.password,
          expected: "username \(JSONValue.quoted(basicAuth.username)) and its password",
          actual: got.map { "username \(JSONValue.quoted($0.username))" } ?? "(no Basic credentials)")
      else { return (r, params) }
    }
    guard evaluateBodyFields(request, &r) else { return (r, params) }
    for (k, b) in bodyPatterns.enumerated() {
      if let problem = request.contentCodingProblem, b.needsDecodedContent {
        // The content did not decode: only matchers of the bytes as received can judge it.
        _ = r.record(
          "body pattern \(k)", weight: MatchResult.partWeight, matched: false, expected: b.description,
          actual: "(content that does not decode: \(problem); "
            + "only binaryEqualTo and absent match the bytes as received)")
        return (r, params)
      }
      guard
        r.record(
          "body pattern \(k)", weight: MatchResult.partWeight, matched: b.matchBody(request),
          expected: b.description, actual: NearMiss.excerpt(request.bodyText),
          distance: b.bodyDistance(request))
      else { return (r, params) }
    }
    if let pact {
      let received = PactReceivedRequest(
        method: request.method.rawValue, target: request.target,
        fields: request.headers.fields.map { ($0.name, $0.value) }, body: request.body)
      let problems = pact.mismatches(received)
      _ = r.record(
        "pact interaction", weight: MatchResult.partWeight, matched: problems.isEmpty,
        expected: "\(pact.method) \(pact.path) as the interaction's matching rules describe",
        actual: problems.isEmpty ? "matches" : problems.prefix(5).map(\.description).joined(separator: "; "),
        distance: problems.isEmpty ? 0 : min(1, 0.2 + 0.1 * Double(problems.count)))
    }
    if let stateMatcher {
      // Evaluated last: it renders templates and reads the store (one lock per context named).
      let (matched, reason) =
        request.stateEnvironment.map { stateMatcher.evaluate($0) } ?? (false, "(no state store)")
      _ = r.record(
        "customMatcher state-matcher", weight: MatchResult.partWeight, matched: matched,
        expected: stateMatcher.description, actual: reason)
    }
    return (r, params)
  }

  /// `scheme`, `host`, `port`, `clientIp`. Returns false when evaluation can stop.
  private func evaluateConnectionParts(_ request: RequestView, _ r: inout MatchResult) -> Bool {
    if let scheme {
      guard
        r.record(
          "scheme", weight: MatchResult.partWeight, matched: scheme.lowercased() == request.scheme,
          expected: scheme, actual: request.scheme)
      else { return false }
    }
    if let host {
      guard
        r.record(
          "host", weight: MatchResult.partWeight, matched: host.match(request.host),
          expected: host.description, actual: request.host, distance: host.distance(request.host))
      else { return false }
    }
    if let port {
      guard
        r.record(
          "port", weight: MatchResult.partWeight, matched: port == request.port, expected: String(port),
          actual: String(request.port))
      else { return false }
    }
    if let clientIp {
      guard
        r.record(
          "clientIp", weight: MatchResult.partWeight, matched: clientIp.match(request.clientIP),
          expected: clientIp.description, actual: request.clientIP ?? "(unknown)",
          distance: clientIp.distance(request.clientIP))
      else { return false }
    }
    return true
  }

  /// Path parameters, query parameters, headers and cookies. Returns false when evaluation can stop.
  private func evaluateNamedParts(
    _ request: RequestView, _ params: [String: String], _ r: inout MatchResult
  ) -> Bool {
    for p in pathParameters {
      let value = params[p.name]
      guard
        r.record(
          "path parameter \(p.name)", weight: MatchResult.partWeight, matched: p.pattern.match(value),
          expected: p.pattern.description, actual: value ?? "(absent)", distance: p.pattern.distance(value))
      else { return false }
    }
    for q in queryParameters {
      let values = request.queryValues(q.name)
      guard
        r.record(
          "query \(q.name)", weight: MatchResult.partWeight,
          matched: !request.queryIsUndecodable && q.pattern.match(values),
          expected: q.pattern.description, actual: NearMiss.show(values), distance: q.pattern.distance(values)
        )
      else { return false }
    }
    for h in headers {
      let values = request.headers.values(h.name)
      guard
        r.record(
          "header \(h.name)", weight: MatchResult.partWeight, matched: h.pattern.match(values),
          expected: h.pattern.description, actual: NearMiss.show(values), distance: h.pattern.distance(values)
        )
      else { return false }
    }
    for c in cookies {
      // A value sent percent-encoded also matches as decoded (WireMock 3); as sent, as WireMock 2 does.
      let sent = request.cookieValues(c.name)
      let values =
        sent
        + sent.compactMap { v in
          v.utf8.contains(0x25) ? try? PercentDecoding.decode(v, component: "cookie") : nil
        }
      let matched = values.isEmpty ? c.pattern.match(nil) : values.contains { c.pattern.match($0) }
      guard
        r.record(
          "cookie \(c.name)", weight: MatchResult.partWeight, matched: matched,
          expected: c.pattern.description, actual: NearMiss.show(values),
          distance: values.isEmpty
            ? c.pattern.distance(nil) : values.map { c.pattern.distance($0) }.min() ?? 1)
      else { return false }
    }
    return true
  }

  /// `formParameters` and `multipartPatterns`. Returns false when evaluation can stop.
  private func evaluateBodyFields(_ request: RequestView, _ r: inout MatchResult) -> Bool {
    for f in formParameters {
      let values = request.formValues(f.name)
      guard
        r.record(
          "form parameter \(f.name)", weight: MatchResult.partWeight, matched: f.pattern.match(values),
          expected: f.pattern.description, actual: NearMiss.show(values), distance: f.pattern.distance(values)
        )
      else { return false }
    }
    for (k, m) in multipartPatterns.enumerated() {
      let distance = m.distance(request.parts)
      guard
        r.record(
          "multipart pattern \(k)", weight: MatchResult.partWeight, matched: distance == 0,
          expected: m.description,
          actual: request.parts.isEmpty
            ? "(not a multipart body)"
            : "parts " + NearMiss.show(request.parts.map { $0.name ?? "(no name)" }),
          distance: distance)
      else { return false }
    }
    return true
  }

  /// Equality of all fields.
  public static func == (a: RequestPattern, b: RequestPattern) -> Bool {
    a.method == b.method && a.methodSet == b.methodSet && a.url == b.url
      && a.pathParameters == b.pathParameters
      && a.queryParameters == b.queryParameters && a.headers == b.headers && a.cookies == b.cookies
      && a.basicAuth == b.basicAuth && a.bodyPatterns == b.bodyPatterns
      && a.formParameters == b.formParameters
      && a.multipartPatterns == b.multipartPatterns && a.scheme == b.scheme
      && a.host == b.host && a.port == b.port && a.clientIp == b.clientIp && a.pact == b.pact
      && a.stateMatcher == b.stateMatcher
  }

  /// Hash of method and URL.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(method)
    hasher.combine(url)
  }
}
