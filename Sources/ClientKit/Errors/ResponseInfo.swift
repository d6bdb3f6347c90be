import Foundation
import HTTPCore

/// A received response: status, headers, full body, and the request it answers.
public struct ResponseInfo: Sendable, Hashable {
  /// The request this answers (the last attempt).
  public var request: RequestInfo
  /// Status code.
  public var statusCode: Int
  /// Header fields in order, names as received; look up case-insensitively with ``header(_:)``.
  public var headers: HTTPHeaders
  /// The content after transfer and content decoding.
  public var body: Data

  /// Creates a response description.
  public init(request: RequestInfo, statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
    self.request = request
    self.statusCode = statusCode
    self.headers = headers
    self.body = body
  }

  /// Every value of the header `name` (any spelling) combined with ", " in order (RFC 9110 §5.3), or nil.
  public func header(_ name: String) -> String? { headers[name] }

  /// At most the first 512 bytes of the body as text (invalid UTF-8 replaced), with "…" when cut.
  public var bodyExcerpt: String { Self.excerpt(of: body) }

  /// The `Retry-After` delay: delta-seconds, or an HTTP-date in any of the three RFC 9110 §5.6.7 forms relative to now (RFC 9110 §10.2.3), or nil.
  public var retryAfter: Duration? {
    guard let raw = headers.first("Retry-After")?.trimmingOWS(), !raw.isEmpty else { return nil }
    if let seconds = Int(raw), seconds >= 0 { return .seconds(seconds) }
    guard let epochSeconds = HTTPDate.parse(raw) else { return nil }
    let delta = Double(epochSeconds) - Date().timeIntervalSince1970
    return .milliseconds(Int64(max(0, delta) * 1000))
  }

  /// At most `limit` bytes of `data` as text, with "…" when cut.
  static func excerpt(of data: Data, limit: Int = 512) -> String {
    if data.count <= limit { return String(decoding: data, as: UTF8.self) }
    return String(decoding: data.prefix(limit), as: UTF8.self) + "…"
  }
}
