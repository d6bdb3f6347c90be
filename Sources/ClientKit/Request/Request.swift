import Foundation
import HTTPCore

/// A typed API request: everything needed to build one HTTP call and to turn its answer into `Response`.
///
/// Only ``path`` and ``Response`` are required; every other requirement has a default in a protocol
/// extension, so a typical request is a few lines:
///
/// ```swift
/// struct GetUser: Request {
///   typealias Response = User
///   let id: Int
///   var path: String { "/users/\(id)" }
/// }
/// ```
///
/// Set defaults for a whole API once with your own protocol that refines `Request` (APIKit style):
/// `protocol ShopRequest: Request {}` and `extension ShopRequest { var envelope: ... }`.
public protocol Request: Sendable {
  /// The value the call produces on success. Use ``EmptyResponse`` when no body is expected.
  associatedtype Response: Decodable & Sendable

  /// The request method. Default: `GET`.
  var method: HTTPMethod { get }
  /// The path relative to the client's base URL, not percent-encoded (the client encodes it). Leading and
  /// trailing slashes are normalised so that base and path are joined by exactly one `/`.
  var path: String { get }
  /// Per-call query items, sent after the client's default query items. Default: none.
  var queryItems: [URLQueryItem] { get }
  /// Per-call header fields; a name given here replaces the client's default of the same name
  /// (case-insensitive). Default: none.
  var headers: HTTPHeaders { get }
  /// The content to send, or nil for none. Default: nil.
  var body: RequestBody? { get }
  /// The total deadline for one attempt (connect, send, wait, read), or nil for the client's default
  /// (20 seconds unless configured). Default: nil.
  var timeout: Duration? { get }
  /// The overall deadline of the call: every attempt, and the waits between retries, or nil for the
  /// client's ``APIClient/totalTimeout`` (by default the per-attempt ``timeout`` when retries are on).
  /// When it passes, the call fails with ``APIError/deadlineExceeded(_:)``. Default: nil.
  var totalTimeout: Duration? { get }
  /// Status codes treated as success; others become ``APIError/unacceptableStatus(_:application:)``.
  /// Default: `200..<300`.
  var acceptableStatusCodes: Set<Int> { get }
  /// The JSON decoder for this request, or nil for the client's. Default: nil.
  var decoder: JSONDecoder? { get }
  /// The envelope the payload is wrapped in, or nil for the client's default envelope. Use
  /// ``NoEnvelope`` to opt out of a client-wide envelope. Default: nil.
  var envelope: (any ResponseEnvelope)? { get }
  /// True when sending the request twice has the same effect as once; only such requests are retried
  /// after a failure the server may have seen. Default: `method.isIdempotent` (RFC 9110 §9.2.2).
  var isIdempotent: Bool { get }
  /// False for requests that must not carry the bearer token and must not trigger a token refresh on
  /// 401, such as the refresh call itself. Default: true.
  var requiresAuthentication: Bool { get }
  /// How the client's response cache treats this request. Default: ``CachePolicy/useProtocol``.
  var cachePolicy: CachePolicy { get }

  /// Turns a received response into `Response`: the response serializer.
  ///
  /// The default implementation is ``ResponseDecoding/decode(_:from:envelope:decoder:)``: empty bodies
  /// never reach the JSON decoder, envelopes are unwrapped, application errors are raised.
  /// - Parameters:
  ///   - response: the final response (status, headers, body), after cache revalidation.
  ///   - decoder: the decoder to use (this request's or the client's).
  ///   - envelope: the envelope in effect (this request's or the client's), or nil.
  /// - Returns: the decoded value.
  /// - Throws: ``APIError/emptyBody(_:)``, ``APIError/application(_:response:)``,
  ///   ``APIError/decoding(_:response:)``.
  func parseResponse(
    _ response: ResponseInfo, decoder: JSONDecoder, envelope: (any ResponseEnvelope)?
  ) throws(APIError) -> Response
}

extension Request {
  /// `GET`.
  public var method: HTTPMethod { .get }
  /// No query items.
  public var queryItems: [URLQueryItem] { [] }
  /// No header fields.
  public var headers: HTTPHeaders { [:] }
  /// No body.
  public var body: RequestBody? { nil }
  /// The client's default timeout.
  public var timeout: Duration? { nil }
  /// The client's overall deadline.
  public var totalTimeout: Duration? { nil }
  /// `200..<300`.
  public var acceptableStatusCodes: Set<Int> { Set(200..<300) }
  /// The client's decoder.
  public var decoder: JSONDecoder? { nil }
  /// The client's default envelope.
  public var envelope: (any ResponseEnvelope)? { nil }
  /// `method.isIdempotent`.
  public var isIdempotent: Bool { method.isIdempotent }
  /// True.
  public var requiresAuthentication: Bool { true }
  /// ``CachePolicy/useProtocol``.
  public var cachePolicy: CachePolicy { .useProtocol }

  /// The default response serializer: ``ResponseDecoding/decode(_:from:envelope:decoder:)``.
  public func parseResponse(
    _ response: ResponseInfo, decoder: JSONDecoder, envelope: (any ResponseEnvelope)?
  ) throws(APIError) -> Response {
    try ResponseDecoding.decode(Response.self, from: response, envelope: envelope, decoder: decoder)
  }
}
