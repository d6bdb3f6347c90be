/// The `{"status":"OK","result":{...}}` / `{"status":"NG","message":"..."}` envelope.
///
/// A status in ``successValues`` is a success with the payload at ``payloadKey``. Any other status is an
/// application error whose message is the ``messageKey`` field (or `error.message`) and whose code is the
/// `code` field (or `error.code`). A missing status field is a decoding failure at `status`.
public struct StatusResultEnvelope: ResponseEnvelope, Hashable {
  /// The field holding the outcome. Default `status`.
  public var statusKey: String
  /// Status values meaning success (compared exactly). Default `["OK"]`.
  public var successValues: Set<String>
  /// The field holding the payload on success. Default `result`.
  public var payloadKey: String
  /// The field holding the message on failure. Default `message`.
  public var messageKey: String
  /// Presentation when the body has no `presentation` field (`alert`, `toast`, `none`). Default `.alert`.
  public var defaultPresentation: PresentationHint

  /// Creates the envelope; the defaults describe `{"status","result"|"message"}`.
  public init(
    statusKey: String = "status", successValues: Set<String> = ["OK"], payloadKey: String = "result",
    messageKey: String = "message", defaultPresentation: PresentationHint = .alert
  ) {
    self.statusKey = statusKey
    self.successValues = successValues
    self.payloadKey = payloadKey
    self.messageKey = messageKey
    self.defaultPresentation = defaultPresentation
  }

  /// Classifies the body; see the type's documentation.
  public func outcome(of json: Any) throws(DecodingFailure) -> EnvelopeOutcome {
    let object = try object(json)
    guard let status = text(object[statusKey]) else {
      throw DecodingFailure(
        codingPath: statusKey,
        reason: object[statusKey] == nil ? "missing key \"\(statusKey)\"" : "expected a string status")
    }
    if successValues.contains(status) { return .success(payloadKey: payloadKey) }
    let nested = object["error"] as? [String: Any]
    return .failure(
      ApplicationError(
        code: text(object["code"]) ?? text(nested?["code"]) ?? status,
        message: text(object[messageKey]) ?? text(nested?["message"]),
        presentation: presentation(object["presentation"]) ?? defaultPresentation))
  }
}
