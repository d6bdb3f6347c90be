import Foundation
import HTTPCore

/// Sends one webhook request with the server's upstream client (``UpstreamHTTPClient``, the one proxy
/// stubs use): `http` and `https` (verified against the system trust store), no redirects, one connection
/// per request. Blocking: call it off the event loop.
enum WebhookSender {
  /// Why a webhook was not delivered.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// Largest response content read back (webhooks only report the status).
  static let maxResponseBytes = 1 << 20

  /// Sends `method url` with `headers` and `body`; returns the response status.
  /// - Parameters:
  ///   - url: `http(s)://host[:port]/path?query`.
  ///   - timeoutMilliseconds: longest wait without progress (connect, send, each read).
  static func send(
    method: String, url: String, headers: HTTPHeaders, body: [UInt8], timeoutMilliseconds: Int = 10_000
  ) -> Result<Int, Failure> {
    guard let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(),
      scheme == "http" || scheme == "https", let host = parsed.host, !host.isEmpty
    else { return .failure(Failure(description: "not an absolute http(s) URL: \(url)")) }
    let hostText = host.contains(":") ? "[\(host)]" : host
    let origin = scheme + "://" + hostText + (parsed.port.map { ":\($0)" } ?? "")
    guard let upstream = UpstreamURL(origin) else {
      return .failure(Failure(description: "not an absolute http(s) URL: \(url)"))
    }
    var target = parsed.percentEncodedPath.isEmpty ? "/" : parsed.percentEncodedPath
    if let q = parsed.percentEncodedQuery { target += "?" + q }
    var tls: UpstreamTLSContext?
    if upstream.isTLS {
      switch UpstreamTLSContext.system {
      case .success(let context): tls = context
      case .failure(let error): return .failure(Failure(description: "\(error)"))
      }
    }
    var fields = headers
    if !fields.contains("Host") { fields.add(name: "Host", value: upstream.hostField) }
    let request = HTTPRequest(
      head: HTTPRequestHead(method: HTTPMethod(rawValue: method), target: target, headers: fields), body: body
    )
    let client = UpstreamHTTPClient(
      timeoutMilliseconds: timeoutMilliseconds, maxBodyBytes: maxResponseBytes, tls: tls)
    switch client.send(request, to: upstream) {
    case .success(let response): return .success(response.status.code)
    case .failure(let e): return .failure(Failure(description: "\(upstream.origin): \(e)"))
    }
  }
}
