import Foundation
import HTTPCore

/// A decoded value together with the response it came from.
public struct APIResponse<Value: Sendable>: Sendable {
  /// Where the value came from.
  public typealias Source = ResponseSource

  /// The decoded value.
  public var value: Value
  /// Status code of the response (the stored one for cached responses).
  public var statusCode: Int
  /// Header fields in order; look up case-insensitively with ``header(_:)``.
  public var headers: HTTPHeaders
  /// The raw body.
  public var body: Data
  /// Time from the call to the decoded value, retries and refreshes included.
  public var duration: Duration
  /// Number of attempts sent (1 without retries; 0 for ``Source/cache``).
  public var attempts: Int
  /// Where the value came from.
  public var source: Source
  /// The last request sent (or the request that would be sent, for ``Source/cache``).
  public var request: RequestInfo
  /// Timings, sizes and attempts of the call.
  public var metrics: RequestMetrics

  /// Creates a response.
  public init(
    value: Value, statusCode: Int, headers: HTTPHeaders, body: Data, duration: Duration, attempts: Int,
    source: Source, request: RequestInfo, metrics: RequestMetrics? = nil
  ) {
    self.value = value
    self.statusCode = statusCode
    self.headers = headers
    self.body = body
    self.duration = duration
    self.attempts = attempts
    self.source = source
    self.request = request
    self.metrics =
      metrics
      ?? RequestMetrics(
        call: CallID.next(), attempts: [], totalDuration: duration, fromCache: source == .cache)
  }

  /// Every value of header `name` (any spelling) combined with ", " in order, or nil.
  public func header(_ name: String) -> String? { headers[name] }
}

/// Where a response came from.
public enum ResponseSource: Sendable, Hashable {
  /// A response from the network.
  case network
  /// The response cache without contacting the network: a fresh stored response (RFC 9111), or the
  /// first delivery of "cached, then fresh".
  case cache
  /// The response cache after the server answered `304 Not Modified`.
  case revalidated
}
