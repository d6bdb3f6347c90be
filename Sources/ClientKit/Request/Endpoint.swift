import Foundation
import HTTPCore

/// A request described by values rather than by a type of its own, for grouping an API's calls in an
/// endpoint enum:
///
/// ```swift
/// enum UsersAPI {
///   static func user(_ id: Int) -> Endpoint<User> { Endpoint(.get, "/users/\(id)") }
///   static func delete(_ id: Int) -> Endpoint<EmptyResponse> { Endpoint(.delete, "/users/\(id)") }
/// }
/// let user = try await client.send(UsersAPI.user(1))
/// ```
///
/// Dedicated request types (structs nested in the same enum) remain the way to add custom decoding.
public struct Endpoint<Response: Decodable & Sendable>: Request {
  /// The request method.
  public var method: HTTPMethod
  /// The path relative to the client's base URL, not percent-encoded.
  public var path: String
  /// Per-call query items.
  public var queryItems: [URLQueryItem]
  /// Per-call header fields (replace client defaults of the same name).
  public var headers: HTTPHeaders
  /// The content to send.
  public var body: RequestBody?
  /// Deadline of one attempt, nil for the client's default.
  public var timeout: Duration?
  /// Overall deadline of the call (retries included), nil for the client's default.
  public var totalTimeout: Duration?
  /// Status codes treated as success.
  public var acceptableStatusCodes: Set<Int>
  /// Envelope override; nil for the client's default.
  public var envelope: (any ResponseEnvelope)?
  /// Whether the request may be retried after a failure the server may have seen.
  public var isIdempotent: Bool
  /// Whether the bearer token is sent and a 401 triggers a refresh.
  public var requiresAuthentication: Bool
  /// How the response cache treats the request.
  public var cachePolicy: CachePolicy

  /// Creates an endpoint.
  /// - Parameters:
  ///   - method: request method.
  ///   - path: path relative to the base URL, not percent-encoded.
  ///   - query: query items, in order.
  ///   - headers: header fields.
  ///   - body: content, or nil.
  ///   - timeout: deadline for one attempt, or nil for the client's default.
  ///   - totalTimeout: overall deadline including retries, or nil for the client's default.
  ///   - acceptableStatusCodes: success codes (default 200-299).
  ///   - envelope: envelope override, or nil for the client's default.
  ///   - isIdempotent: retry eligibility; default `method.isIdempotent`.
  ///   - requiresAuthentication: false to send without the bearer token and skip the 401 refresh.
  ///   - cachePolicy: response-cache behaviour.
  public init(
    _ method: HTTPMethod = .get, _ path: String, query: [URLQueryItem] = [], headers: HTTPHeaders = [:],
    body: RequestBody? = nil, timeout: Duration? = nil, totalTimeout: Duration? = nil,
    acceptableStatusCodes: Set<Int> = Set(200..<300),
    envelope: (any ResponseEnvelope)? = nil, isIdempotent: Bool? = nil, requiresAuthentication: Bool = true,
    cachePolicy: CachePolicy = .useProtocol
  ) {
    self.method = method
    self.path = path
    self.queryItems = query
    self.headers = headers
    self.body = body
    self.timeout = timeout
    self.totalTimeout = totalTimeout
    self.acceptableStatusCodes = acceptableStatusCodes
    self.envelope = envelope
    self.isIdempotent = isIdempotent ?? method.isIdempotent
    self.requiresAuthentication = requiresAuthentication
    self.cachePolicy = cachePolicy
  }
}
