import Foundation

/// What an envelope says about a response: success with the payload at a key, or an application error.
public enum EnvelopeOutcome: Sendable, Hashable {
  /// The call succeeded; the payload is the value at `payloadKey` of the top-level object, or the whole
  /// body when `payloadKey` is nil.
  case success(payloadKey: String?)
  /// The backend reported a failure.
  case failure(ApplicationError)
}

/// A wrapper format a backend puts around its payloads, such as `{"status":"OK","result":{...}}`.
///
/// Implement ``outcome(of:)`` to support a custom envelope: read the parsed top-level JSON value and say
/// whether it is a success (and where the payload is) or a failure. The client then decodes the payload
/// with the request's `JSONDecoder`, decodes `null` or a missing payload into optional responses, and
/// raises ``APIError/application(_:response:)`` for failures whatever the HTTP status.
public protocol ResponseEnvelope: Sendable {
  /// Classifies a response body.
  /// - Parameter json: the body parsed with `JSONSerialization` (fragments allowed): `[String: Any]` for
  ///   an object.
  /// - Returns: the outcome.
  /// - Throws: ``DecodingFailure`` when the body is not this envelope (a required field is missing or has
  ///   the wrong type), with the field as coding path.
  func outcome(of json: Any) throws(DecodingFailure) -> EnvelopeOutcome
}

/// Helpers for envelope implementations.
extension ResponseEnvelope {
  /// The top-level object of `json`, or a ``DecodingFailure`` saying the body is not an object.
  public func object(_ json: Any) throws(DecodingFailure) -> [String: Any] {
    guard let object = json as? [String: Any] else {
      throw DecodingFailure(
        codingPath: "", reason: "expected an envelope object but found \(Self.kind(json))")
    }
    return object
  }

  /// A scalar field as text: strings as they are, numbers in decimal; nil when
  /// absent, null, an object or an array.
  public func text(_ value: Any?) -> String? {
    switch value {
    case let s as String: return s
    case let n as NSNumber: return n.stringValue
    default: return nil
    }
  }

  /// A presentation hint spelled `alert`, `toast` or `none`, or nil.
  public func presentation(_ value: Any?) -> PresentationHint? {
    (value as? String).flatMap { PresentationHint(rawValue: $0.lowercased()) }
  }

  static func kind(_ json: Any) -> String {
    switch json {
    case is [Any]: return "an array"
    case is String: return "a string"
    case is NSNumber: return "a number"
    case is NSNull: return "null"
    default: return "a value"
    }
  }
}
