/// The `{"code":200,"data":{...},"info":"..."}` envelope: the `code` field carries the outcome.
///
/// A code in ``successCodes`` (numbers or numeric strings) is a success with the payload at `data`; any
/// other code is an application error with that code and the `info` (or `message`) text. A missing or
/// non-numeric code is a decoding failure at `code`.
public struct CodeDataEnvelope: ResponseEnvelope, Hashable {
  /// The field holding the outcome. Default `code`.
  public var codeKey: String
  /// Codes meaning success. Default `[0, 200]`.
  public var successCodes: Set<Int>
  /// The field holding the payload. Default `data`.
  public var payloadKey: String
  /// The field holding the message. Default `info` (`message` is also read).
  public var infoKey: String
  /// Presentation when the body has no `presentation` field. Default `.alert`.
  public var defaultPresentation: PresentationHint

  /// Creates the envelope; the defaults describe `{"code","data","info"}`.
  public init(
    codeKey: String = "code", successCodes: Set<Int> = [0, 200], payloadKey: String = "data",
    infoKey: String = "info", defaultPresentation: PresentationHint = .alert
  ) {
    self.codeKey = codeKey
    self.successCodes = successCodes
    self.payloadKey = payloadKey
    self.infoKey = infoKey
    self.defaultPresentation = defaultPresentation
  }

  /// Classifies the body; see the type's documentation.
  public func outcome(of json: Any) throws(DecodingFailure) -> EnvelopeOutcome {
    let object = try object(json)
    guard let raw = text(object[codeKey]), let code = Int(raw) else {
      throw DecodingFailure(
        codingPath: codeKey,
        reason: object[codeKey] == nil ? "missing key \"\(codeKey)\"" : "expected a numeric code")
    }
    if successCodes.contains(code) { return .success(payloadKey: payloadKey) }
    return .failure(
      ApplicationError(
        code: raw, message: text(object[infoKey]) ?? text(object["message"]),
        presentation: presentation(object["presentation"]) ?? defaultPresentation))
  }
}
