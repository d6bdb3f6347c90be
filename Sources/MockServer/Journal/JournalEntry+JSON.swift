import HTTPCore
import Mappings
import MockJSON
import Templating

extension JournalEntry {
  /// The request in WireMock's "logged request" shape:
  /// `{"url","absoluteUrl","method","clientIp","headers":{name: value or [values]},
  ///   "cookies":{name: value or [values]},"queryParams",
  ///   "body","bodyAsBase64","browserProxyRequest","loggedDate","loggedDateString"}`.
  /// `loggedDate` is milliseconds since 1970; `body` is the content as text in the charset of its
  /// `Content-Type` (UTF-8 without one; after removing the
  /// transfer coding and any `Content-Encoding`), `bodyAsBase64` the same bytes in base64.
  public var requestJSON: JSONValue {
    let head = request.head
    let scheme = isTLS ? "https" : "http"
    let host = head.effectiveAuthority ?? "localhost"
    let absolute = head.target.hasPrefix("/") ? "\(scheme)://\(host)\(head.target)" : head.target
    var pairs: [(String, JSONValue)] = [
      ("url", .string(head.originForm)),
      ("absoluteUrl", .string(absolute)),
      ("method", .string(head.method.rawValue)),
      ("clientIp", .string(JournalEntry.host(of: clientAddress))),
      ("headers", JournalEntry.headersJSON(head.headers)),
      ("cookies", JournalEntry.cookiesJSON(head.headers)),
    ]
    // `{}` without a query, as WireMock writes it.
    do {
      let params = head.rawQuery.flatMap { try? PercentDecoding.queryParameters($0) } ?? []
      var order: [String] = []
      var values: [String: [String]] = [:]
      for (name, value) in params {
        if values[name] == nil { order.append(name) }
        values[name, default: []].append(value)
      }
      pairs.append(
        (
          "queryParams",
          .object(
            JSONObject(
              pairs: order.map { name in
                (
                  name,
                  .object(
                    JSONObject(pairs: [
                      ("key", .string(name)), ("values", .array((values[name] ?? []).map { .string($0) })),
                    ]))
                )
              }))
        ))
    }
    pairs += [
      ("body", .string(TextCharset.decode(request.body, contentType: head.headers.first("Content-Type")))),
      ("bodyAsBase64", .string(Base64.encode(request.body))),
      ("browserProxyRequest", .bool(false)),
      ("loggedDate", .number(JSONNumber(Int((loggedAt * 1000).rounded(.down))))),
      ("loggedDateString", .string(HTTPDate.iso8601(loggedAt))),
    ]
    if isTLS, let subject = clientCertificateSubject {
      pairs.append(("clientCertificateSubject", .string(subject)))
    }
    if let truncated = truncatedBody {
      // Our extension: the journal kept only the first bytes of this content.
      pairs += [
        ("bodyTruncated", .bool(true)), ("bodySize", .number(JSONNumber(truncated.size))),
        ("bodySha256", .string(truncated.sha256)),
      ]
    }
    return .object(JSONObject(pairs: pairs))
  }

  /// The entry as a WireMock serve event:
  /// `{"id","request":{…},"responseDefinition":{"status"},"response":{"status"},"wasMatched",
  ///   "stubMapping"?,"timing":{"totalTime"}}` plus our `fault`, `served`, `session` and `nearMisses`
  ///   (unmatched).
  /// - Parameter stub: the JSON of the matched stub (nil when none matched; `{"id"}` when it is gone).
  public func json(stub: JSONValue?) -> JSONValue {
    var pairs: [(String, JSONValue)] = [("id", .string(id)), ("request", requestJSON)]
    let status: JSONValue = responseStatus.map { .number(JSONNumber($0)) } ?? .null
    var definition: [(String, JSONValue)] = [("status", status)]
    if let proxyBaseURL { definition.append(("proxyBaseUrl", .string(proxyBaseURL))) }
    definition.append(("fromConfiguredStub", .bool(wasMatched)))
    pairs.append(("responseDefinition", .object(JSONObject(pairs: definition))))
    pairs.append(("response", .object(JSONObject(pairs: [("status", status)]))))
    pairs.append(("wasMatched", .bool(wasMatched)))
    if let stub { pairs.append(("stubMapping", stub)) }
    if let durationMilliseconds {
      let total = JSONValue.number(JSONNumber(Int(durationMilliseconds.rounded())))
      var timing: [(String, JSONValue)] = [("totalTime", total)]
      if let delay = addedDelayMilliseconds {
        timing.insert(("addedDelay", .number(JSONNumber(delay))), at: 0)
      }
      pairs.append(("timing", .object(JSONObject(pairs: timing))))
    }
    if let fault { pairs.append(("fault", .string(fault))) }
    if let served { pairs.append(("served", .bool(served))) }
    if let session { pairs.append(("session", .string(session))) }
    if !webhooks.isEmpty { pairs.append(("webhooks", .array(webhooks.map { .string($0) }))) }
    if !stateProblems.isEmpty {
      pairs.append(("stateListenerProblems", .array(stateProblems.map { .string($0) })))
    }
    if !wasMatched {
      let report = NearMissReport(
        method: request.method.rawValue, url: request.head.target, nearMisses: nearMisses)
      pairs.append(("nearMisses", report.json["nearMisses"] ?? .array([])))
    }
    return .object(JSONObject(pairs: pairs))
  }

  /// The `Cookie` fields' pairs as WireMock 2.35.1's `LoggedRequest` writes them: `{name: value}`, or
  /// `{name: [values]}` for a name sent more than once; values as sent (not percent-decoded).
  static func cookiesJSON(_ headers: HTTPHeaders) -> JSONValue {
    guard headers.contains("Cookie") else { return .object(JSONObject()) }
    var order: [String] = []
    var values: [String: [String]] = [:]
    for line in headers.values("Cookie") {
      for (name, value) in CookieHeader.pairs(line) {
        if values[name] == nil { order.append(name) }
        values[name, default: []].append(value)
      }
    }
    return .object(
      JSONObject(
        pairs: order.map { name in
          let all = values[name] ?? []
          return (name, all.count == 1 ? .string(all[0]) : .array(all.map { .string($0) }))
        }))
  }
  /// Header fields as `{name: value}` (`[values]` for a repeated name), names as first received.
  static func headersJSON(_ headers: HTTPHeaders) -> JSONValue {
    var order: [String] = []
    var values: [String: [String]] = [:]
    var spelling: [String: String] = [:]
    for field in headers {
      let key = field.name.lowercasedASCII()
      if values[key] == nil {
        order.append(key)
        spelling[key] = field.name
      }
      values[key, default: []].append(field.value)
    }
    return .object(
      JSONObject(
        pairs: order.map { key in
          let v = values[key] ?? []
          return (spelling[key] ?? key, v.count == 1 ? .string(v[0]) : .array(v.map { .string($0) }))
        }))
  }

  /// `1.2.3.4` from `1.2.3.4:5678`, `::1` from `[::1]:5678`.
  static func host(of address: String) -> String {
    if address.hasPrefix("["), let close = address.firstIndex(of: "]") {
      return String(address[address.index(after: address.startIndex)..<close])
    }
    if let colon = address.lastIndex(of: ":"), address.firstIndex(of: ":") == colon {
      return String(address[..<colon])
    }
    return address
  }

  /// True for 127.0.0.0/8, `::1` and IPv4-mapped loopback addresses (`ip:port` or `[v6]:port` accepted).
  static func isLoopback(_ address: String) -> Bool {
    let host = host(of: address).lowercased()
    if host == "::1" || host == "localhost" { return true }
    let v4 = host.hasPrefix("::ffff:") ? String(host.dropFirst(7)) : host
    return v4.hasPrefix("127.")
  }

}
