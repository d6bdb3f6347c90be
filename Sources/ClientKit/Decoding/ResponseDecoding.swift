import Foundation

/// The default response serializer: turns a ``ResponseInfo`` into a value without ever handing an empty
/// body to the JSON decoder.
///
/// Rules, in order:
/// 1. ``EmptyResponse``: always succeeds without decoding, except that a non-empty body which parses as a
///    failure envelope raises ``APIError/application(_:response:)``.
/// 2. An empty body (no bytes or only whitespace: 204, 205, HEAD, `Content-Length: 0`): `nil` for an
///    optional `T`, otherwise ``APIError/emptyBody(_:)``.
/// 3. With an envelope (any but ``NoEnvelope``), **every** `T` goes through it, `String`, `Data`, `Int`,
///    optionals and arrays included: a failure is ``APIError/application(_:response:)`` (whatever the HTTP
///    status); on success the payload is decoded as `T` with the JSON decoder (`"result":"hello"` is the
///    `String` `hello`; `Data` follows the decoder's `dataDecodingStrategy`, base64 by default); a `null`
///    or missing payload decodes to `nil` for optional `T` and is a ``APIError/decoding(_:response:)``
///    naming the field otherwise. A body that is not JSON is a ``APIError/decoding(_:response:)``.
/// 4. Without one, `Data` gets the raw body and `String` the body decoded with the `charset` of
///    `Content-Type` (RFC 9110 §8.3.2; UTF-8 when none is given, a UTF-8 byte order mark skipped); any
///    other `T` is decoded from the body as JSON.
/// 5. Decoder errors become ``APIError/decoding(_:response:)`` with the coding path. A UTF-8 byte order
///    mark before JSON is skipped.
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
    let enveloped = envelope.map { !($0 is NoEnvelope) } ?? false
    guard enveloped, let envelope else {
      if let data = body as? T { return data }
      if T.self == String.self, let text = try Self.text(of: response) as? T { return text }
      return try decodeValue(T.self, from: body, key: nil, response: response, decoder: decoder)
    }
    let json: Any
    do {
      json = try JSONSerialization.jsonObject(with: withoutBOM(body), options: [.fragmentsAllowed])
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
      let json = try? JSONSerialization.jsonObject(with: withoutBOM(body), options: [.fragmentsAllowed]),
      case .failure(let failure)? = try? envelope.outcome(of: json)
    else { return nil }
    return failure
  }

  /// True when `body` has no bytes or only JSON whitespace.
  static func isBlank(_ body: Data) -> Bool {
    body.allSatisfy { $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }
  }

  /// `body` without a leading UTF-8 byte order mark (EF BB BF), which JSON parsers reject (RFC 8259 §8.1).
  static func withoutBOM(_ body: Data) -> Data {
    body.starts(with: [0xEF, 0xBB, 0xBF]) ? body.dropFirst(3) : body
  }

  /// The `charset` parameter of a `Content-Type` value, lower-cased and unquoted, or nil.
  static func charset(of contentType: String?) -> String? {
    guard let contentType else { return nil }
    for parameter in contentType.split(separator: ";").dropFirst() {
      let pair = parameter.split(separator: "=", maxSplits: 1)
      guard pair.count == 2,
        pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset"
      else { continue }
      return pair[1].trimmingCharacters(in: CharacterSet(charactersIn: " \t\"")).lowercased()
    }
    return nil
  }

  /// The body of `response` as text in the charset its `Content-Type` names (RFC 9110 §8.3.2), UTF-8 when
  /// it names none (a UTF-8 byte order mark skipped).
  /// - Throws: ``APIError/decoding(_:response:)`` naming the charset when the platform does not know it,
  ///   or when the bytes are not valid text in it.
  static func text(of response: ResponseInfo) throws(APIError) -> String {
    let name = charset(of: response.headers.first("Content-Type"))
    guard let name, name != "utf-8", name != "utf8" else {
      if let text = String(data: withoutBOM(response.body), encoding: .utf8) { return text }
      throw .decoding(
        DecodingFailure(codingPath: "", reason: "the body is not valid UTF-8 text"), response: response)
    }
    guard let encoding = encoding(ianaName: name) else {
      throw .decoding(
        DecodingFailure(codingPath: "", reason: "the body's charset \"\(name)\" is not supported"),
        response: response)
    }
    guard let text = String(data: response.body, encoding: encoding) else {
      throw .decoding(
        DecodingFailure(codingPath: "", reason: "the body is not valid \(name) text"), response: response)
    }
    return text
  }

  /// The encoding the IANA charset `name` (any case) stands for, from the platform, or nil when it does not
  /// know the name: CoreFoundation's `CFStringConvertIANACharSetNameToEncoding` on Apple platforms (every
  /// OS version ClientKit supports), Foundation's `String.Encoding(ianaName:)` elsewhere (swift-foundation,
  /// FOU-0033; on Apple platforms only from the 2025 releases, hence CoreFoundation there).
  static func encoding(ianaName name: String) -> String.Encoding? {
    #if canImport(Darwin)
      let cf = CFStringConvertIANACharSetNameToEncoding(name as CFString)
      guard cf != kCFStringEncodingInvalidId else { return nil }
      return String.Encoding(rawValue: CFStringConvertEncodingToNSStringEncoding(cf))
    #else
      return String.Encoding(ianaName: name)  // check-portable: allow (not compiled on Apple platforms)
    #endif
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
      let json = withoutBOM(body)
      guard let key else { return try decoder.decode(T.self, from: json) }
      return try PayloadKey.$current.withValue(key) {
        try decoder.decode(Payload<T>.self, from: json).value
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
