import Contracts
import HTTPCore
import MockServer

/// Sends one request to the provider for `mockserver verify` and `export pact --from-journal` with the
/// server's own upstream client (HTTP and HTTPS verified against the system trust store, no redirects
/// followed, one connection per request), blocking the calling thread: the command line is synchronous.
/// Compressed responses (`gzip`, `deflate`) are decoded, as an HTTP library would.
enum UpstreamClient {
  /// Status, headers and body, or a one-line reason (connection refused, timed out…).
  /// - Parameter timeoutMilliseconds: longest wait without progress (connect, send, each read).
  static func send(base: String, _ request: ExampleRequest, timeoutMilliseconds: Int = 20_000) -> Result<
    (Int, HTTPHeaders, [UInt8]), UpstreamFailure
  > {
    guard let url = UpstreamURL(base) else {
      return .failure(UpstreamFailure(message: "not an http:// or https:// base URL: \(base)"))
    }
    guard request.url.hasPrefix("/"), !request.url.contains(where: { $0 == " " || $0 == "\r" || $0 == "\n" })
    else {
      return .failure(UpstreamFailure(message: "not a request path: \(request.url)"))
    }
    var tls: UpstreamTLSContext?
    if url.isTLS {
      switch UpstreamTLSContext.system {
      case .success(let context): tls = context
      case .failure(let error): return .failure(UpstreamFailure(message: "\(error)"))
      }
    }
    var headers = HTTPHeaders([("Host", url.hostField)])
    for (name, value) in request.headers where !name.equalsIgnoringASCIICase("Host") {
      headers.add(name: name, value: value)
    }
    let head = HTTPRequestHead(
      method: HTTPMethod(rawValue: request.method), target: url.basePath + request.url, headers: headers)
    let client = UpstreamHTTPClient(timeoutMilliseconds: timeoutMilliseconds, tls: tls)
    switch client.send(HTTPRequest(head: head, body: Array((request.body ?? "").utf8)), to: url) {
    case .failure(let e):
      return .failure(UpstreamFailure(message: e.description))
    case .success(var response):
      if let coding = response.headers.first("Content-Encoding").flatMap(ContentCoding.init(fieldValue:)),
        coding != .identity, let decoded = try? coding.decode(response.body)
      {
        response.body = decoded
        response.head.headers.remove(name: "Content-Encoding")
        response.head.headers.remove(name: "Content-Length")
      }
      return .success((response.status.code, response.headers, response.body))
    }
  }
}

/// Why the provider gave no answer.
struct UpstreamFailure: Error, CustomStringConvertible {
  /// E.g. `connection refused`.
  var message: String
  var description: String { message }
}
