import Foundation
import HTTPCore

/// A stored response with its validators.
public struct CachedResponse: Sendable, Hashable {
  /// Status code of the stored response (2xx).
  public var statusCode: Int
  /// Header fields of the stored response, updated by 304 answers (RFC 9111 §4.3.4).
  public var headers: HTTPHeaders
  /// The stored body.
  public var body: Data
  /// Wall-clock time of storing or of the last successful revalidation.
  public var storedAt: Date

  /// Creates a stored response.
  public init(statusCode: Int, headers: HTTPHeaders, body: Data, storedAt: Date = Date()) {
    self.statusCode = statusCode
    self.headers = headers
    self.body = body
    self.storedAt = storedAt
  }

  /// The `ETag` validator, or nil.
  public var etag: String? { headers.first("ETag") }
  /// The `Last-Modified` validator, or nil.
  public var lastModified: String? { headers.first("Last-Modified") }
}
