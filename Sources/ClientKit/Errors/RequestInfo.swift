import Foundation
import HTTPCore

/// What was sent (or about to be sent) for one attempt: carried by errors so they can be reported.
public struct RequestInfo: Sendable, Hashable, CustomStringConvertible {
  /// Request method.
  public var method: HTTPMethod
  /// The full URL, query included.
  public var url: URL
  /// Header fields as sent, after adapters. `Authorization` is included; redact before logging.
  public var headers: HTTPHeaders
  /// Number of body bytes sent.
  public var bodyByteCount: Int

  /// Creates a request description.
  public init(method: HTTPMethod, url: URL, headers: HTTPHeaders = [:], bodyByteCount: Int = 0) {
    self.method = method
    self.url = url
    self.headers = headers
    self.bodyByteCount = bodyByteCount
  }

  /// `GET https://host/path?query` form.
  public var description: String { "\(method) \(url.absoluteString)" }
}
