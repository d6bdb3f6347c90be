import HTTPCore
import MockJSON
import Templating

/// The proxy fields of a `response` (WireMock's): `proxyBaseUrl`, `additionalProxyRequestHeaders`,
/// `removeProxyRequestHeaders`, `proxyUrlPrefixToRemove`.
extension StubParser {
  /// The response fields of a proxy stub.
  package static let proxyFields: Set<String> = [
    "proxyBaseUrl", "additionalProxyRequestHeaders", "removeProxyRequestHeaders", "proxyUrlPrefixToRemove",
  ]

  /// Parses the proxy fields of response object `o` at `path`; nil when it has no `proxyBaseUrl` (the
  /// other proxy fields without it are reported).
  package static func parseProxy(_ o: JSONObject, _ path: String, _ d: inout Diagnostics) -> ProxyDefinition?
  {
    guard let base = o["proxyBaseUrl"] else {
      for key in proxyFields where o[key] != nil {
        d.error(JSONPathText.child(path, key), expected: "proxyBaseUrl beside it", found: "\(key) alone")
      }
      return nil
    }
    let bp = JSONPathText.child(path, "proxyBaseUrl")
    guard let url = base.stringValue else {
      d.error(bp, expected: "an absolute http:// or https:// URL", found: base)
      return nil
    }
    // A template (`{{request.headers.X-Upstream}}`) is rendered and checked for each request.
    if !Template.mayContainTags(url), let problem = ProxyDefinition.problem(baseURL: url) {
      d.error(
        bp, expected: "an absolute http:// or https:// URL", found: "\(JSONValue.quoted(url)): \(problem)")
      return nil
    }
    var proxy = ProxyDefinition(baseURL: url.hasSuffix("/") ? String(url.dropLast()) : url)
    if let h = o["additionalProxyRequestHeaders"] {
      let hp = JSONPathText.child(path, "additionalProxyRequestHeaders")
      if let fields = object(h, hp, "an object of header name → string", &d) {
        for m in fields {
          let p = JSONPathText.child(hp, m.key)
          guard let values = headerValues(m.key, m.value, p, &d) else { continue }
          for v in values { proxy.additionalRequestHeaders.add(name: m.key, value: v) }
        }
      }
    }
    if let r = o["removeProxyRequestHeaders"] {
      let rp = JSONPathText.child(path, "removeProxyRequestHeaders")
      if let names = r.arrayValue, names.allSatisfy({ $0.stringValue.map(isToken) ?? false }) {
        proxy.removedRequestHeaders = names.compactMap(\.stringValue)
      } else {
        d.error(rp, expected: "an array of header names", found: r)
      }
    }
    if o["proxyUrlPrefixToRemove"] != nil {
      proxy.urlPrefixToRemove = string(o, "proxyUrlPrefixToRemove", path, &d)
    }
    for key in ["body", "jsonBody", "base64Body", "bodyFileName", "x-envelope", "fault"] where o[key] != nil {
      d.warning(
        JSONPathText.child(path, key), "a proxy response relays the upstream's answer, so \(key) is ignored")
    }
    return proxy
  }
}
