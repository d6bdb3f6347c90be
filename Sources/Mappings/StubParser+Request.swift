import HTTPCore
import MockJSON
import PactMatching
import RegularExpressions

/// The `request` part of a stub mapping: method, URL, named matchers, credentials and body patterns.
extension StubParser {
  package static func parseRequest(_ json: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> RequestPattern
  {
    var r = RequestPattern()
    guard let o = object(json, path, "a request pattern object", &d) else { return r }
    checkRequestFields(o, path, &d)
    if case .object(let set) = o["method"] {
      r.methodSet = parseMethodSet(set, JSONPathText.child(path, "method"), &d)
    } else if let m = string(o, "method", path, &d) {
      r.method = parseMethod(m, JSONPathText.child(path, "method"), &d)
    }
    r.url = parseURLField(o, path, &d)
    if let pp = o["pathParameters"] {
      r.pathParameters = parsePathParameters(pp, r.url, JSONPathText.child(path, "pathParameters"), &d)
    }
    if let v = o["queryParameters"] {
      r.queryParameters = parseMultiMatchers(v, JSONPathText.child(path, "queryParameters"), &d)
    }
    if let v = o["headers"] { r.headers = parseMultiMatchers(v, JSONPathText.child(path, "headers"), &d) }
    if let v = o["cookies"] { r.cookies = parseNamedMatchers(v, JSONPathText.child(path, "cookies"), &d) }
    // `basicAuth` is the name recorded stubs and older WireMock versions write.
    for key in ["basicAuthCredentials", "basicAuth"] {
      guard let v = o[key] else { continue }
      if key == "basicAuth" && o["basicAuthCredentials"] != nil {
        d.warning(JSONPathText.child(path, key), "basicAuth is ignored beside basicAuthCredentials")
        continue
      }
      r.basicAuthCredentials = parseBasicAuth(v, JSONPathText.child(path, key), &d)
    }
    parseConnectionParts(o, path, &r, &d)
    if let v = o["bodyPatterns"] {
      r.bodyPatterns = parseBodyPatterns(v, JSONPathText.child(path, "bodyPatterns"), &d)
    }
    if let v = o["customMatcher"] {
      let p = JSONPathText.child(path, "customMatcher")
      if let co = v.objectValue, co["name"]?.stringValue == "state-matcher" {
        r.stateMatcher = parseStateMatcher(co, p, &d)
      } else {
        r.pact = parseCustomMatcher(v, p, &d)
      }
    }
    if let v = o["formParameters"] {
      r.formParameters = parseMultiMatchers(v, JSONPathText.child(path, "formParameters"), &d)
    }
    if let v = o["multipartPatterns"] {
      r.multipartPatterns = parseMultipartPatterns(v, JSONPathText.child(path, "multipartPatterns"), &d)
    }
    return r
  }

  /// `scheme`, `host`, `port` and `clientIp`.
  static func parseConnectionParts(
    _ o: JSONObject, _ path: String, _ r: inout RequestPattern, _ d: inout Diagnostics
  ) {
    if let s = string(o, "scheme", path, &d) {
      if ["http", "https"].contains(s.lowercased()) {
        r.scheme = s.lowercased()
      } else {
        d.error(
          JSONPathText.child(path, "scheme"), expected: "\"http\" or \"https\"", found: JSONValue.quoted(s))
      }
    }
    if let v = o["port"] {
      if let n = v.numberValue?.intValue, (1...65535).contains(n) {
        r.port = n
      } else {
        d.error(JSONPathText.child(path, "port"), expected: "a port number in 1...65535", found: v)
      }
    }
    // WireMock writes `host` and `clientIp` as a matcher or, in older exports, as plain text.
    for key in ["host", "clientIp"] {
      guard let v = o[key] else { continue }
      let p = JSONPathText.child(path, key)
      let pattern: StringValuePattern?
      if case .string(let s) = v {
        pattern = .equalTo(s, caseInsensitive: key == "host")
      } else {
        pattern = parseMatcher(v, p, &d)
      }
      if key == "host" { r.host = pattern } else { r.clientIp = pattern }
    }
  }

  static func checkRequestFields(_ o: JSONObject, _ path: String, _ d: inout Diagnostics) {
    for m in o where !requestFields.contains(m.key) {
      let p = JSONPathText.child(path, m.key)
      if unsupportedRequestFields.contains(m.key) {
        d.error(
          p, expected: "a request field this server supports",
          found: "\(m.key), which WireMock supports but MockServer does not yet")
      } else {
        d.error(
          p,
          expected: "a request field (method, url, urlPath, urlPattern, urlPathPattern, urlPathTemplate, "
            + "pathParameters, queryParameters, headers, cookies, basicAuthCredentials, bodyPatterns, "
            + "formParameters, multipartPatterns, scheme, host, port, clientIp, customMatcher)",
          found: "unknown field \(JSONValue.quoted(m.key))")
      }
    }
  }

  /// A method token, or nil for `ANY`.
  /// (`path` is made only for a problem: most stubs have none.)
  /// `{"oneOf": ["GET", "PUT"]}` or `{"noneOf": [...]}` (WireMock 3's request method matchers).
  static func parseMethodSet(_ o: JSONObject, _ path: String, _ d: inout Diagnostics)
    -> RequestPattern.MethodSet?
  {
    guard o.members.count == 1, let (key, value) = o.members.first.map({ ($0.key, $0.value) }),
      key == "oneOf" || key == "noneOf"
    else {
      d.error(
        path, expected: #"a method token, or {"oneOf": [...]} or {"noneOf": [...]}"#,
        found: "an object with "
          + (o.members.isEmpty ? "no field" : o.members.map(\.key).joined(separator: ", ")))
      return nil
    }
    let listPath = JSONPathText.child(path, key)
    guard case .array(let items) = value, !items.isEmpty else {
      d.error(listPath, expected: "a non-empty array of method tokens", found: value.kindDescription)
      return nil
    }
    var methods: [HTTPMethod] = []
    for (k, item) in items.enumerated() {
      let itemPath = listPath + "[\(k)]"
      guard let token = item.stringValue else {
        d.error(itemPath, expected: "a method token such as GET", found: item.kindDescription)
        return nil
      }
      guard token != "ANY", let method = parseMethod(token, itemPath, &d) else {
        if token == "ANY" {
          d.error(itemPath, expected: "a method token such as GET (not ANY)", found: #""ANY""#)
        }
        return nil
      }
      methods.append(method)
    }
    return RequestPattern.MethodSet(methods: methods, excludes: key == "noneOf")
  }

  static func parseMethod(_ m: String, _ path: @autoclosure () -> String, _ d: inout Diagnostics)
    -> HTTPMethod?
  {
    if m == "ANY" { return nil }
    if m.isEmpty || !m.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != 0x3A }) {
      d.error(path(), expected: "a method token such as GET or ANY", found: JSONValue.quoted(m))
      return nil
    }
    if m != m.uppercased() {
      d.warning(
        path(),
        "methods are case-sensitive: \(JSONValue.quoted(m)) matches only requests sent with exactly that token"
      )
    }
    return HTTPMethod(rawValue: m)
  }

  /// The URL fields, of which a request pattern has at most one.
  static let urlFields = ["url", "urlPath", "urlPattern", "urlPathPattern", "urlPathTemplate"]

  /// The one URL field of `url`, `urlPath`, `urlPattern`, `urlPathPattern`, `urlPathTemplate`.
  static func parseURLField(_ o: JSONObject, _ path: String, _ d: inout Diagnostics) -> URLMatcher {
    let urlKeys = urlFields.filter { o[$0] != nil }
    if urlKeys.count > 1 {
      d.error(
        JSONPathText.child(path, urlKeys[1]),
        expected: "at most one of url, urlPath, urlPattern, urlPathPattern, urlPathTemplate",
        found: urlKeys.joined(separator: " and "))
    }
    guard let key = urlKeys.first, let s = string(o, key, path, &d) else { return .any }
    return parseURL(key, s, JSONPathText.child(path, key), &d)
  }

  /// (`path` is made only for a problem.)
  package static func parseURL(
    _ key: String, _ s: String, _ path: @autoclosure () -> String, _ d: inout Diagnostics
  ) -> URLMatcher {
    if key == "urlPattern" || key == "urlPathPattern" {
      do {
        // `Pattern.DOTALL`, as WireMock's regex matchers.
        let r = try CompiledRegex(s, dotMatchesLineSeparators: true)
        return key == "urlPattern" ? .urlPattern(r) : .urlPathPattern(r)
      } catch {
        d.error(
          path(), expected: "a valid regular expression",
          found: "\(FixtureProblem.excerpt(s)) (\(error.message))")
        return .any
      }
    }
    guard checkLiteralURL(key, s, path(), &d) else { return .any }
    do {
      let canonical = try canonicalURL(s)
      switch key {
      case "url": return .url(canonical)
      case "urlPath": return .urlPath(canonical)
      default:
        do {
          return .urlPathTemplate(try PathTemplate(canonical))
        } catch {
          d.error(path(), expected: error.message, found: JSONValue.quoted(s))
          return .any
        }
      }
    } catch {
      d.error(path(), expected: "valid percent-encoding (%XX of UTF-8 bytes)", found: error.reason)
      return .any
    }
  }

  /// Checks a literal `url`, `urlPath` or `urlPathTemplate` value; false when it cannot be used.
  static func checkLiteralURL(
    _ key: String, _ s: String, _ path: @autoclosure () -> String, _ d: inout Diagnostics
  ) -> Bool {
    guard s.hasPrefix("/") else {
      d.error(path(), expected: "a path starting with '/'", found: JSONValue.quoted(s))
      return false
    }
    // One pass over the contiguous bytes: `String.contains(_: String)` goes through Foundation's
    // `range(of:)`, and pairs of a `Substring.UTF8View` compared indexes as strings (each of these was
    // several percent of a start with 10,000 stubs).
    var text = s
    let (fragment, query, doubleSlash) = text.withUTF8 { bytes in
      var (fragment, query, doubleSlash) = (false, false, false)
      var previous: UInt8 = 0
      for c in bytes {
        if c == UInt8(ascii: "#") { fragment = true }
        if c == UInt8(ascii: "?") { query = true }
        if !query, c == UInt8(ascii: "/"), previous == c { doubleSlash = true }
        previous = c
      }
      return (fragment, query, doubleSlash)
    }
    if fragment {
      d.error(
        path(), expected: "a path without '#' (a fragment is never sent to the server)",
        found: JSONValue.quoted(s))
      return false
    }
    if key != "url" && query {
      d.error(
        path(), expected: "a path without '?': put the query in queryParameters, or use url",
        found: JSONValue.quoted(s))
      return false
    }
    if doubleSlash {
      d.warning(
        path(),
        "the path contains '//'; an empty path segment is significant, so \(JSONValue.quoted(s)) "
          + "does not match the same path with a single '/'")
    }
    return true
  }

  /// The canonical form of a literal path with an optional query (percent-encoding normalised).
  static func canonicalURL(_ s: String) throws(URLDecodingError) -> String {
    // Nearly every fixture URL has no escape: it is its own canonical form, found in one scan of the
    // contiguous bytes (the generic decoding walked a `Substring`'s UTF-8 view and copied it).
    var text = s
    if text.utf8.first == UInt8(ascii: "/"), text.withUTF8({ !$0.contains(UInt8(ascii: "%")) }) { return s }
    guard let q = s.utf8.firstIndex(of: UInt8(ascii: "?")) else {
      return try PercentDecoding.canonicalPath(Substring(s))
    }
    return try PercentDecoding.canonicalPath(s[..<q]) + "?"
      + (try PercentDecoding.canonicalQuery(s[s.index(after: q)...]))
  }

  /// `pathParameters`: a matcher per variable of the `urlPathTemplate`.
  static func parsePathParameters(_ v: JSONValue, _ url: URLMatcher, _ path: String, _ d: inout Diagnostics)
    -> [RequestPattern.Named]
  {
    guard case .urlPathTemplate(let t) = url else {
      d.error(path, expected: "pathParameters only with urlPathTemplate", found: "no urlPathTemplate")
      return []
    }
    for key in object(v, path, "an object of parameter name → matcher", &d)?.keys ?? []
    where !t.variableNames.contains(key) {
      d.error(
        JSONPathText.child(path, key),
        expected: "a variable of the template (\(t.variableNames.joined(separator: ", ")))",
        found: JSONValue.quoted(key))
    }
    return parseNamedMatchers(v, path, &d)
  }

  /// An object of name → single-valued matcher (cookies, path parameters).
  static func parseNamedMatchers(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> [RequestPattern.Named]
  {
    guard let fields = object(v, path, "an object of name → matcher", &d) else { return [] }
    return fields.compactMap { m in
      parseMatcher(m.value, JSONPathText.child(path, m.key), &d).map { .init(m.key, $0) }
    }
  }

  /// An object of name → multi-valued matcher (headers, query parameters).
  static func parseMultiMatchers(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> [RequestPattern.NamedMulti]
  {
    guard let fields = object(v, path, "an object of name → matcher", &d) else { return [] }
    return fields.compactMap { m in
      parseMultiMatcher(m.value, JSONPathText.child(path, m.key), &d).map { .init(m.key, $0) }
    }
  }

  /// `basicAuthCredentials`: `{"username": …, "password": …}`.
  static func parseBasicAuth(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> (username: String, password: String)?
  {
    guard let c = object(v, path, "an object {\"username\": …, \"password\": …}", &d) else { return nil }
    let u = string(c, "username", path, &d)
    let pw = string(c, "password", path, &d)
    if let u, let pw { return (u, pw) }
    if u == nil && c["username"] == nil {
      d.error(JSONPathText.child(path, "username"), expected: "a string", found: "nothing")
    } else if pw == nil && c["password"] == nil {
      d.error(JSONPathText.child(path, "password"), expected: "a string", found: "nothing")
    }
    return nil
  }

  /// `bodyPatterns`: an array of matchers, all of which must match.
  static func parseBodyPatterns(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> [StringValuePattern]
  {
    guard let list = v.arrayValue else {
      d.error(path, expected: "an array of matchers such as [{\"equalToJson\": …}]", found: v)
      return []
    }
    return list.enumerated().compactMap { k, item in parseMatcher(item, JSONPathText.index(path, k), &d) }
  }

  /// `multipartPatterns`: an array of `{"matchingType": "ANY"|"ALL", "name": …, "headers": {…},
  /// "bodyPatterns": […]}`.
  static func parseMultipartPatterns(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> [MultipartPattern]
  {
    guard let list = v.arrayValue else {
      d.error(path, expected: "an array of multipart patterns such as [{\"headers\": {…}}]", found: v)
      return []
    }
    var out: [MultipartPattern] = []
    for (k, item) in list.enumerated() {
      let p = JSONPathText.index(path, k)
      guard let o = object(item, p, "a multipart pattern object", &d) else { continue }
      var m = MultipartPattern()
      for member in o where !["matchingType", "name", "headers", "bodyPatterns"].contains(member.key) {
        d.error(
          JSONPathText.child(p, member.key), expected: "matchingType, name, headers or bodyPatterns",
          found: "unknown field \(JSONValue.quoted(member.key))")
      }
      if let t = o["matchingType"] {
        guard let s = t.stringValue, let type = MultipartPattern.MatchingType(rawValue: s) else {
          d.error(JSONPathText.child(p, "matchingType"), expected: "ANY or ALL", found: t)
          continue
        }
        m.matchingType = type
      }
      if o["name"] != nil { m.name = string(o, "name", p, &d) }
      if let h = o["headers"] { m.headers = parseMultiMatchers(h, JSONPathText.child(p, "headers"), &d) }
      if let b = o["bodyPatterns"] {
        m.bodyPatterns = parseBodyPatterns(b, JSONPathText.child(p, "bodyPatterns"), &d)
      }
      out.append(m)
    }
    return out
  }
}

extension StubParser {
  /// `customMatcher`: WireMock's extension point. MockServer's built-in `pact` matcher compares a request
  /// with a Pact interaction's expected request and its matching rules exactly as Pact's mock server does
  /// (`{"name": "pact", "parameters": {"specification": 4, "request": {…}}}`, as `import pact` writes it);
  /// any other name is Java code that only exists inside a WireMock server, and is refused.
  static func parseCustomMatcher(_ json: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> PactRequestExpectation?
  {
    guard let o = object(json, path, "a custom matcher object", &d) else { return nil }
    guard let name = o["name"]?.stringValue else {
      d.error(JSONPathText.child(path, "name"), expected: "a matcher name", found: o["name"] ?? .null)
      return nil
    }
    guard name == "pact" else {
      d.error(
        JSONPathText.child(path, "name"),
        expected: "\"pact\" or \"state-matcher\" (the custom matchers MockServer has built in)",
        found:
          "\(JSONValue.quoted(name)), which names Java code (a RequestMatcherExtension) that only exists "
          + "inside a WireMock server with that extension loaded")
      return nil
    }
    let parametersPath = JSONPathText.child(path, "parameters")
    guard let parameters = o["parameters"]?.objectValue, let request = parameters["request"]?.objectValue
    else {
      d.error(
        JSONPathText.child(parametersPath, "request"), expected: "the interaction's request object",
        found: o["parameters"]?["request"] ?? .null)
      return nil
    }
    var version = 4
    if let v = parameters["specification"] {
      guard let n = v.numberValue?.intValue, (1...4).contains(n) else {
        d.error(
          JSONPathText.child(parametersPath, "specification"),
          expected: "a Pact specification version from 1 to 4",
          found: v)
        return nil
      }
      version = n
    }
    do {
      return try PactRequestExpectation(
        request: request, version: version, jsonPath: JSONPathText.child(parametersPath, "request"))
    } catch {
      d.error(error.path, expected: "a request Pact's matching rules describe", found: error.message)
      return nil
    }
  }
}
