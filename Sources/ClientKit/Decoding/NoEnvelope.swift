/// No envelope: the whole body is the payload. Use it on a request to opt out of a client-wide envelope.
public struct NoEnvelope: ResponseEnvelope, Hashable {
  /// Creates the marker.
  public init() {}
  /// Always `.success(payloadKey: nil)`.
  public func outcome(of json: Any) throws(DecodingFailure) -> EnvelopeOutcome {
    .success(payloadKey: nil)
  }
}
