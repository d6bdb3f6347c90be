import HTTPCore

/// Builds the `request` model WireMock templates read (`request.path`, `request.query.x`, …).
public enum TemplateRequest {
  /// The model of one request.
  /// - Parameters:
  ///   - request: the request as received (content already decoded).
  ///   - scheme: `http` or `https`.
  ///   - host: the host the request addressed (`Host` without port), or the server's address.
  ///   - port: the port the request arrived on: `request.port` when the request has no `Host` field (a
  ///     `Host` field gives its own port, or the scheme's default, 80 or 443, as Jetty gives WireMock's
  ///     `request.port`, so links a template builds hold behind a mapped port or a proxy).
  ///   - clientIP: the client's address.
  ///   - id: the request's journal id.
  ///   - pathParameters: the named parameters of a `urlPathTemplate` stub, in order.
  ///   - fields: the members of `request` to build (``Template/requestFields``), nil for all of them.
  public static func model(
    _ request: HTTPRequest, scheme: String = "http", host: String? = nil, port: Int, clientIP: String = "",
    id: String = "", pathParameters: [(String, String)] = [], fields: Set<String>? = nil
  ) -> TemplateValue {
    // With `fields`, only the members the templates read are built (the rest stay absent).
    var wanted = UInt32.max
    if let fields, !fields.contains("requestLine") {
      wanted = 0
      for name in fields { if let m = Member.named[name] { wanted |= 1 << m.rawValue } }
    }
    let everything = wanted == .max
    func needs(_ m: Member) -> Bool { wanted & (1 << m.rawValue) != 0 }
    var entries: [(key: String, value: TemplateValue)] = []
    entries.reserveCapacity(everything ? 18 : fields?.count ?? 0)
    if needs(.id) { entries.append(("id", .string(id))) }
    let url = needs(.url) ? request.head.originForm : ""
    if needs(.url) { entries.append(("url", .string(url))) }
    var path = TemplateValue.null
    var segmentsValue = TemplateValue.null
    if needs(.path) || needs(.pathSegments) {
      let rawPath = request.head.rawPath
      let indexed = TemplateMap(pathSegments(rawPath))
      if needs(.path) {
        var pathChildren = indexed
        for (name, value) in pathParameters { pathChildren.set(name, .string(value)) }
        path = .described(rawPath, .map(pathChildren))
        entries.append(("path", path))
      }
      if needs(.pathSegments) {
        segmentsValue = .described(rawPath, .map(indexed))
        entries.append(("pathSegments", segmentsValue))
      }
    }
    var query = TemplateMap()
    if needs(.query), let raw = request.head.rawQuery, !raw.isEmpty {
      var queryOrder: [String] = []
      var queryValues: [String: [String]] = [:]
      for pair in raw.split(separator: "&", omittingEmptySubsequences: true) {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        let key = percentDecode(String(parts[0]), plusAsSpace: true)
        let value = parts.count > 1 ? percentDecode(String(parts[1]), plusAsSpace: true) : ""
        if queryValues[key] == nil { queryOrder.append(key) }
        queryValues[key, default: []].append(value)
      }
      for k in queryOrder { query.entries.append((k, .multi(queryValues[k] ?? []))) }
    }
    if needs(.query) { entries.append(("query", .map(query))) }
    if needs(.method) { entries.append(("method", .string(request.method.rawValue))) }
    if needs(.scheme) { entries.append(("scheme", .string(scheme))) }
    let hostName =
      needs(.host) || needs(.baseUrl)
      ? host ?? request.head.effectiveAuthority.map { hostWithoutPort($0) } ?? "localhost" : ""
    if needs(.host) { entries.append(("host", .string(hostName))) }
    let defaultPort = scheme == "https" ? 443 : 80
    let addressedPort =
      needs(.port) || needs(.baseUrl)
      ? request.head.effectiveAuthority.map { portOfHost($0) ?? defaultPort } ?? port : port
    if needs(.port) { entries.append(("port", .int(addressedPort))) }
    var baseUrl = ""
    if needs(.baseUrl) {
      baseUrl = "\(scheme)://\(hostName)" + (addressedPort == defaultPort ? "" : ":\(addressedPort)")
      entries.append(("baseUrl", .string(baseUrl)))
    }
    if needs(.headers) {
      var headers = TemplateMap(caseInsensitive: true)
      var headerOrder: [String] = []
      var headerValues: [String: (String, [String])] = [:]
      for f in request.headers {
        let k = f.name.lowercased()
        if headerValues[k] == nil {
          headerOrder.append(k)
          headerValues[k] = (f.name, [])
        }
        headerValues[k]?.1.append(f.value)
      }
      for k in headerOrder {
        guard let entry = headerValues[k] else { continue }
        headers.entries.append((entry.0, .multi(entry.1)))
      }
      entries.append(("headers", .map(headers)))
    }
    if needs(.cookies) {
      var cookies = TemplateMap()
      for line in request.headers.values("Cookie") {
        for (name, value) in CookieHeader.pairs(line) {
          if case .multi(let existing)? = cookies[name] {
            cookies.set(name, .multi(existing + [value]))
          } else {
            cookies.set(name, .multi([value]))
          }
        }
      }
      entries.append(("cookies", .map(cookies)))
    }
    if needs(.body) {
      entries.append(
        (
          "body",
          .string(TextCharset.decode(request.body, contentType: request.headers.first("Content-Type")))
        ))
    }
    if needs(.bodyAsBase64) { entries.append(("bodyAsBase64", .string(Base64.encode(request.body)))) }
    if needs(.clientIp) { entries.append(("clientIp", .string(clientIP))) }
    if needs(.multipart) {
      let type = request.headers.first("Content-Type")?.lowercased() ?? ""
      entries.append(("multipart", .bool(type.hasPrefix("multipart/"))))
    }
    if needs(.parts) { entries.append(("parts", parts(request))) }
    if everything {
      entries.append(
        (
          "requestLine",
          .map(
            TemplateMap([
              ("method", .string(request.method.rawValue)), ("scheme", .string(scheme)),
              ("host", .string(hostName)), ("port", .int(addressedPort)), ("path", path),
              ("pathSegments", segmentsValue),
              ("query", .map(query)), ("url", .string(url)), ("baseUrl", .string(baseUrl)),
            ]))
        ))
    }
    return .map(TemplateMap(entries))
  }

  /// The non-empty segments of a path, percent-decoded, keyed `0`, `1`, … (`request.path.[n]`).
  static func pathSegments(_ rawPath: String) -> [(key: String, value: TemplateValue)] {
    var out: [(key: String, value: TemplateValue)] = []
    forEachPathSegment(rawPath) { segment in
      let key = out.count < indexKeys.count ? indexKeys[out.count] : String(out.count)
      out.append((key, .string(percentDecode(String(segment), plusAsSpace: false))))
      return true
    }
    return out
  }

  /// Segment `n` of a path as `request.path.[n]` reads it (percent-decoded), nil past the last one.
  static func pathSegment(_ n: Int, of rawPath: String) -> String? {
    var k = 0
    var found: String?
    forEachPathSegment(rawPath) { segment in
      if k == n { found = percentDecode(String(segment), plusAsSpace: false) }
      k += 1
      return found == nil
    }
    return found
  }

  /// Calls `body` with each non-empty segment of `rawPath` (between `/`s, as written) in order, until it
  /// returns false: one pass over the UTF-8.
  static func forEachPathSegment(_ rawPath: String, _ body: (Substring) -> Bool) {
    let utf8 = rawPath.utf8
    var start: String.Index?
    var i = utf8.startIndex
    while i != utf8.endIndex {
      if utf8[i] == UInt8(ascii: "/") {
        if let from = start {
          guard body(rawPath[from..<i]) else { return }
          start = nil
        }
      } else if start == nil {
        start = i
      }
      utf8.formIndex(after: &i)
    }
    if let from = start { _ = body(rawPath[from..<utf8.endIndex]) }
  }

  /// `0` … `31`, the keys of the first path segments.
  static let indexKeys: [String] = (0..<32).map { String($0) }

  /// The members of the model (`request.NAME`), as bits of the mask of those to build.
  enum Member: UInt32, CaseIterable {
    case id, url, path, pathSegments, query, method, scheme, host, port, baseUrl, headers, cookies, body
    case bodyAsBase64, clientIp, multipart, parts
    /// By the name templates use.
    static let named: [String: Member] = Dictionary(uniqueKeysWithValues: allCases.map { ("\($0)", $0) })
  }

  /// WireMock's `request.parts`: each part of a multipart body by its name, with `name`, `headers`,
  /// `body` (text in the part's charset), `bodyAsBase64` and `binary` (no text `Content-Type`).
  static func parts(_ request: HTTPRequest) -> TemplateValue {
    var map = TemplateMap()
    for part in MultipartPart.parse(request.body, contentType: request.headers.first("Content-Type")) {
      let name = part.name ?? ""
      var headers = TemplateMap(caseInsensitive: true)
      for field in part.headers {
        if case .multi(let existing)? = headers[field.name] {
          headers.set(field.name, .multi(existing + [field.value]))
        } else {
          headers.entries.append((field.name, .multi([field.value])))
        }
      }
      let type = part.headers.first("Content-Type")?.lowercased()
      let binary = type.map { !($0.hasPrefix("text/") || $0.contains("json") || $0.contains("xml")) } ?? false
      map.set(
        name,
        .map(
          TemplateMap([
            ("name", .string(name)), ("headers", .map(headers)),
            ("body", .string(TextCharset.decode(part.body, contentType: type))),
            ("bodyAsBase64", .string(Base64.encode(part.body))), ("binary", .bool(binary)),
          ])))
    }
    return .map(map)
  }

  /// The port of a `Host` field value (`api.test:8081`, `[::1]:8081`), or nil when it names none or the
  /// port is not a number in 0...65535.
  static func portOfHost(_ host: String) -> Int? {
    let afterAddress =
      host.hasPrefix("[") ? host.firstIndex(of: "]").map { host[host.index(after: $0)...] } : host[...]
    guard let rest = afterAddress, let colon = rest.lastIndex(of: ":") else { return nil }
    let digits = rest[rest.index(after: colon)...]
    guard !digits.isEmpty, digits.count <= 5, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }),
      let n = Int(digits), n <= 65535
    else { return nil }
    return n
  }

  static func hostWithoutPort(_ host: String) -> String {
    if host.hasPrefix("["), let end = host.firstIndex(of: "]") { return String(host[...end]) }
    if let colon = host.lastIndex(of: ":") { return String(host[..<colon]) }
    return host
  }

  /// Percent-decoding as `application/x-www-form-urlencoded` does (`+` is a space when asked); invalid
  /// escapes are kept as written.
  static func percentDecode(_ s: String, plusAsSpace: Bool) -> String {
    guard s.utf8.contains(where: { $0 == 37 || (plusAsSpace && $0 == 43) }) else { return s }
    let b = Array(s.utf8)
    var out: [UInt8] = []
    var i = 0
    func hex(_ c: UInt8) -> UInt8? {
      switch c {
      case 48...57: return c - 48
      case 65...70: return c - 55
      case 97...102: return c - 87
      default: return nil
      }
    }
    while i < b.count {
      if b[i] == 37, i + 2 < b.count, let h = hex(b[i + 1]), let l = hex(b[i + 2]) {
        out.append(h << 4 | l)
        i += 3
      } else if plusAsSpace, b[i] == 43 {
        out.append(32)
        i += 1
      } else {
        out.append(b[i])
        i += 1
      }
    }
    return String(decoding: out, as: UTF8.self)
  }
}

extension Substring {
  fileprivate func trimmingCharacters(in c: Character) -> String {
    var s = self
    while s.first == c { s.removeFirst() }
    while s.last == c { s.removeLast() }
    return String(s)
  }
}

/// Base64 (RFC 4648) for the `base64` helper and `request.bodyAsBase64`.
enum Base64 {
  static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)

  static func encode(_ bytes: [UInt8], padding: Bool = true) -> String {
    var out: [UInt8] = []
    out.reserveCapacity((bytes.count + 2) / 3 * 4)
    var i = 0
    while i + 2 < bytes.count {
      let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2])
      out += [
        alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)],
        alphabet[Int(n & 63)],
      ]
      i += 3
    }
    let rest = bytes.count - i
    if rest == 1 {
      let n = UInt32(bytes[i]) << 16
      out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)]]
      if padding { out += [61, 61] }
    } else if rest == 2 {
      let n = UInt32(bytes[i]) << 16 | UInt32(bytes[i + 1]) << 8
      out += [alphabet[Int(n >> 18 & 63)], alphabet[Int(n >> 12 & 63)], alphabet[Int(n >> 6 & 63)]]
      if padding { out += [61] }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Decodes standard or URL-safe Base64, padded or not; nil when invalid.
  static func decode(_ text: String) -> [UInt8]? {
    var acc: UInt32 = 0
    var bits = 0
    var out: [UInt8] = []
    for c in text.utf8 {
      let v: UInt32
      switch c {
      case 65...90: v = UInt32(c - 65)
      case 97...122: v = UInt32(c - 71)
      case 48...57: v = UInt32(c + 4)
      case 43, 45: v = 62
      case 47, 95: v = 63
      case 61, 10, 13, 32: continue
      default: return nil
      }
      acc = acc << 6 | v
      bits += 6
      if bits >= 8 {
        bits -= 8
        out.append(UInt8(truncatingIfNeeded: acc >> UInt32(bits)))
      }
    }
    return out
  }
}
