import Foundation
import HTTPCore

/// A fully built HTTP request as a transport sends it: adapters have run, the URL is absolute.
public struct TransportRequest: Sendable, Hashable {
  /// Request method.
  public var method: HTTPMethod
  /// Absolute URL with the percent-encoded path and query.
  public var url: URL
  /// Header fields in order. Transports add `Host`, `Content-Length` and `Connection` themselves.
  public var headers: HTTPHeaders
  /// The content, empty for none.
  public var body: Data
  /// The total deadline of this attempt (connect, send, wait for the head, read the body).
  public var timeout: Duration
  /// Whether the request may be sent twice; transports never re-send a non-idempotent request by
  /// themselves.
  public var isIdempotent: Bool

  /// Creates a transport request.
  public init(
    method: HTTPMethod, url: URL, headers: HTTPHeaders = [:], body: Data = Data(),
    timeout: Duration = .seconds(20), isIdempotent: Bool? = nil
  ) {
    self.method = method
    self.url = url
    self.headers = headers
    self.body = body
    self.timeout = timeout
    self.isIdempotent = isIdempotent ?? method.isIdempotent
  }

  /// The description used by errors.
  public var info: RequestInfo {
    RequestInfo(method: method, url: url, headers: headers, bodyByteCount: body.count)
  }

  /// The path and query exactly as sent on the request line (`/a/b?x=1`), `/` when the URL has no path.
  public var target: String {
    guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "/" }
    let path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    if let query = components.percentEncodedQuery { return path + "?" + query }
    return path
  }
}
