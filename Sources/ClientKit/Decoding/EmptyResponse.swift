/// The response of a request that expects no content (204, HEAD, an empty 200, or a body to ignore).
///
/// The decoding pipeline never hands the body to the JSON decoder for this type: any body, including none,
/// decodes to `EmptyResponse()`. With an envelope, a non-empty body that is a recognisable failure envelope
/// (NG, failing code) still becomes ``APIError/application(_:response:)``.
public struct EmptyResponse: Decodable, Sendable, Hashable {
  /// Creates the empty value.
  public init() {}
  /// Accepts any JSON value and ignores it.
  public init(from decoder: any Decoder) throws {}
}
