import Foundation

/// The default response serializer: turns a ``ResponseInfo`` into a value without ever handing an empty
/// body to the JSON decoder.
///
/// Rules, in order:
/// 1. ``EmptyResponse``: always succeeds without decoding, except that a non-empty body which parses as a
///    failure envelope raises ``APIError/application(_:response:)``.
/// 2. An empty body (no bytes or only whitespace: 204, 205, HEAD, `Content-Length: 0`): `nil` for an
///    optional `T`, otherwise ``APIError/emptyBody(_:)``.
/// 3. `Data` gets the raw body, `String` the body as UTF-8.
/// 4. With an envelope: a failure is ``APIError/application(_:response:)`` (whatever the HTTP status); on
///    success the payload is decoded; a `null` or missing payload decodes to `nil` for optional `T` and is
///    a ``APIError/decoding(_:response:)`` naming the field otherwise.
/// 5. Without one, the body is decoded as `T`. Decoder errors become ``APIError/decoding(_:response:)``
///    with the coding path.
public enum ResponseDecoding {
  /// Decodes `response` as `type`; see the type's rules.
  /// - Parameters:
  ///   - type: the expected value type.
  ///   - response: the response, body included.
  ///   - envelope: the envelope in effect, or nil.
  ///   - decoder: the JSON decoder.
  /// - Returns: the value.
  /// - Throws: ``APIError/emptyBody(_:)``, ``APIError/application(_:response:)``,
  ///   ``APIError/decoding(_:response:)``.
  public static func decode<T: Decodable>(
    _ type: T.Type, from response: ResponseInfo, envelope: (any ResponseEnvelope)?, decoder: JSONDecoder
  ) throws(APIError) -> T {
    let body = response.body
    let empty = isBlank(body)
    if let emptyValue = EmptyResponse() as? T {
      if !empty, let envelope, let failure = applicationError(in: body, envelope: envelope) {
        throw .application(failure, response: response)
      }
      return emptyValue
    }
    if empty {
      if let nilValue = nilValue(of: T.self) { return nilValue }
      throw .emptyBody(response)
    }
    if let data = body as? T { return data }
    if T.self == String.self, let text = String(decoding: body, as: UTF8.self) as? T { return text }

    guard let envelope, !(envelope is NoEnvelope) else {
      return try decodeValue(T.self, from: body, key: nil, response: response, decoder: decoder)
    }
    let json: Any
    do {
      json = try JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed])
    } catch {
      throw .decoding(DecodingFailure(codingPath: "", reason: "the body is not JSON"), response: response)
    }
    let outcome: EnvelopeOutcome
    do {
      outcome = try envelope.outcome(of: json)
    } catch {
      throw .decoding(error, response: response)
    }
    switch outcome {
    case .failure(let failure):
      throw .application(failure, response: response)
    case .success(nil):
      return try decodeValue(T.self, from: body, key: nil, response: response, decoder: decoder)
    case .success(let key?):
      let object = json as? [String: Any]
      let payload = object?[key]
      if payload == nil || payload is NSNull {
        if let nilValue = nilValue(of: T.self) { return nilValue }
        let state = payload == nil ? "missing" : "null"
        throw .decoding(
          DecodingFailure(
            codingPath: key,
            reason: "the payload \"\(key)\" is \(state) but \(T.self) is not optional"),
          response: response)
      }
      return try decodeValue(T.self, from: body, key: key, response: response, decoder: decoder)
    }
  }

  /// The failure an envelope reports in `body`, or nil when the body is not a failure envelope.
  /// - Parameters:
  ///   - body: the response body.
  ///   - envelope: the envelope format.
  /// - Returns: the application error, if any.
  public static func applicationError(in body: Data, envelope: any ResponseEnvelope) -> ApplicationError? {
    guard !isBlank(body),
      let json = try? JSONSerialization.jsonObject(with: body, options: [.fragmentsAllowed]),
      case .failure(let failure)? = try? envelope.outcome(of: json)
    else { return nil }
    return failure
  }

  /// True when `body` has no bytes or only JSON whitespace.
  static func isBlank(_ body: Data) -> Bool {
    body.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
  }

  /// `nil` of `T` when `T` is an `Optional`, else nil.
  static func nilValue<T>(of type: T.Type) -> T? {
    guard let optionalType = T.self as? any ExpressibleByNilLiteral.Type else { return nil }
    return optionalType.init(nilLiteral: ()) as? T
  }

  private static func decodeValue<T: Decodable>(
    _ type: T.Type, from body: Data, key: String?, response: ResponseInfo, decoder: JSONDecoder
  ) throws(APIError) -> T {
    do {
      guard let key else { return try decoder.decode(T.self, from: body) }
      return try PayloadKey.$current.withValue(key) {
        try decoder.decode(Payload<T>.self, from: body).value
      }
    } catch {
      throw .decoding(DecodingFailure(error), response: response)
    }
  }
}

/// The key of the payload being decoded by ``Payload``; a task-local so a shared decoder is never mutated.
enum PayloadKey {
  @TaskLocal static var current = ""
}

/// Decodes only the value at ``PayloadKey/current`` of the top-level object.
struct Payload<T: Decodable>: Decodable {
  let value: T

  struct Key: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: Key.self)
    value = try container.decode(T.self, forKey: Key(stringValue: PayloadKey.current))
  }
}
