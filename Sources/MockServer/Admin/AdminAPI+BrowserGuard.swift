import HTTPCore

/// Keeps web pages out of the admin API. A local tool is reachable from every page the developer opens:
/// a cross-site `POST` with `Content-Type: text/plain` needs no CORS preflight, and a DNS-rebinding page
/// talks to `127.0.0.1` under its own host name. Without `--admin-token` (a bearer token no page can
/// add without a preflight we never answer), an admin request is refused with 403 and a JSON reason when:
/// - it has an `Origin` that is neither the server's own (`http://` + its `Host`) nor one allowed with
///   `--admin-allow-origin`;
/// - it says it comes from another site (`Sec-Fetch-Site: cross-site` or `same-site`) and has no
///   `Origin` (one that is allowed passed the rule above);
/// - it is a `POST` with a `Content-Type` other than JSON. Only `POST` needs this rule: a page can send
///   `PUT`, `PATCH` or `DELETE` to another origin only after a CORS preflight, which the admin API never
///   answers, so `PUT /__admin/files/{name}` takes any content (a text or binary body file);
/// - its `Host` is not a loopback name or address (`localhost`, `*.localhost`, `127.0.0.0/8`, `::1`) nor
///   one given with `--admin-host`.
extension AdminAPI {
  /// The refusal for a request a web page may have sent, or nil when it may go on.
  func browserRefusal(_ request: HTTPRequest, context: RequestContext) -> ResponsePlan? {
    let host = request.headers.first("Host")?.trimmingOWS()
    if let host, !AdminAPI.isAllowedHost(host, extra: configuration.adminAllowedHosts) {
      return AdminAPI.error(
        .forbidden, title: "Forbidden",
        detail:
          "the admin API answers only requests for a loopback host (Host: \(host) is not localhost, 127.0.0.1 or ::1; "
          + "start with --admin-host NAME to allow another name)")
    }
    if let origin = request.headers.first("Origin")?.trimmingOWS(),
      !AdminAPI.isAllowedOrigin(
        origin, host: host, isTLS: context.isTLS, allowed: configuration.adminAllowedOrigins)
    {
      return AdminAPI.error(
        .forbidden, title: "Forbidden",
        detail:
          "the admin API refuses requests from web pages of other origins (Origin: \(origin)); "
          + "start with --admin-allow-origin \(origin) to allow that one")
    }
    if request.headers.first("Origin") == nil,
      let site = request.headers.first("Sec-Fetch-Site")?.trimmingOWS().lowercased(),
      site == "cross-site" || site == "same-site"
    {
      return AdminAPI.error(
        .forbidden, title: "Forbidden",
        detail:
          "the admin API refuses requests a browser made for a page of another site (Sec-Fetch-Site: \(site)); "
          + "start with --admin-allow-origin ORIGIN to allow a page by its origin")
    }
    // A simple request (RFC: Fetch, "CORS-safelisted method"): the only state-changing method a page
    // sends cross-site without a preflight.
    if request.method.rawValue == "POST", let type = request.headers.first("Content-Type"),
      !AdminAPI.isJSONMediaType(type)
    {
      return AdminAPI.error(
        .forbidden, title: "Forbidden",
        detail:
          "admin POST requests take application/json content (Content-Type: \(type)); "
          + "a web page can post other types to any site without asking")
    }
    return nil
  }

  /// `application/json` or any `+json` type, parameters ignored.
  static func isJSONMediaType(_ value: String) -> Bool {
    let type =
      value.split(separator: ";", maxSplits: 1).first.map { String($0).trimmingOWS().lowercased() } ?? ""
    return type == "application/json" || (type.hasPrefix("application/") && type.hasSuffix("+json"))
  }

  /// True for a loopback `Host` (port ignored) or one of `extra` (case-insensitive).
  static func isAllowedHost(_ host: String, extra: [String]) -> Bool {
    let name = hostName(host).lowercased()
    if name == "localhost" || name.hasSuffix(".localhost") || name == "::1" { return true }
    if extra.contains(where: { hostName($0).lowercased() == name }) { return true }
    let octets = name.split(separator: ".", omittingEmptySubsequences: false)
    return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
  }

  /// The name part of a `Host` value: `[::1]:8080` → `::1`, `localhost:8080` → `localhost`.
  static func hostName(_ host: String) -> String {
    if host.hasPrefix("[") {
      guard let close = host.firstIndex(of: "]") else { return host }
      return String(host[host.index(after: host.startIndex)..<close])
    }
    if host.filter({ $0 == ":" }).count == 1, let colon = host.firstIndex(of: ":") {
      return String(host[..<colon])
    }
    return host
  }

  /// True when `origin` is the server's own (scheme and the request's `Host`) or listed in `allowed`.
  static func isAllowedOrigin(_ origin: String, host: String?, isTLS: Bool, allowed: [String]) -> Bool {
    let given = normalizedOrigin(origin)
    if allowed.contains(where: { normalizedOrigin($0) == given }) { return true }
    guard let host else { return false }
    return given == normalizedOrigin((isTLS ? "https://" : "http://") + host)
  }

  /// Lower-cased, without a trailing slash or the scheme's default port.
  static func normalizedOrigin(_ origin: String) -> String {
    var o = origin.lowercased()
    while o.hasSuffix("/") { o.removeLast() }
    if o.hasPrefix("http://"), o.hasSuffix(":80") { o.removeLast(3) }
    if o.hasPrefix("https://"), o.hasSuffix(":443") { o.removeLast(4) }
    return o
  }
}
