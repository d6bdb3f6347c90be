import Foundation

/// The content of a request and how it is encoded.
public enum RequestBody: Sendable {
  /// A value encoded as JSON with the client's `JSONEncoder`; `Content-Type: application/json`.
  case json(any Encodable & Sendable)
  /// Name/value pairs encoded as `application/x-www-form-urlencoded` (WHATWG URL §5.2: space as `+`,
  /// everything but `*-._` and ASCII alphanumerics percent-encoded as UTF-8), in the given order.
  case form([URLQueryItem])
  /// Raw bytes sent as they are, with the given `Content-Type` (nil: no `Content-Type` is added).
  case data(Data, contentType: String?)
  /// A `multipart/form-data` form (RFC 7578) of fields and files; see ``MultipartFormData``.
  case multipart(MultipartFormData)

  /// The encoded bytes and the `Content-Type` to send with them.
  /// - Parameter encoder: the encoder for ``json(_:)``.
  /// - Returns: the bytes and the content type, if any.
  /// - Throws: ``APIError/invalidRequest(_:)`` when the JSON encoder fails.
  public func encoded(with encoder: JSONEncoder) throws(APIError) -> (Data, String?) {
    switch self {
    case .json(let value):
      do {
        return (try encoder.encode(value), "application/json")
      } catch {
        throw APIError.invalidRequest("the JSON body could not be encoded: \(error)")
      }
    case .form(let items):
      let text = items.map {
        PercentEncoding.formComponent($0.name) + "=" + PercentEncoding.formComponent($0.value ?? "")
      }.joined(separator: "&")
      return (Data(text.utf8), "application/x-www-form-urlencoded")
    case .data(let data, let contentType):
      return (data, contentType)
    case .multipart(var form):
      if !form.boundaryIsUnique {
        // Practically never (a random 24-hex-digit boundary); a fresh one is drawn until it is unique.
        repeat {
          let fresh = MultipartFormData()
          var copy = MultipartFormData(boundary: fresh.boundary)
          for part in form.parts {
            if let filename = part.filename {
              copy.append(part.data, name: part.name, filename: filename, contentType: part.contentType ?? "")
            } else {
              copy.append(String(decoding: part.data, as: UTF8.self), name: part.name)
            }
          }
          form = copy
        } while !form.boundaryIsUnique
      }
      return (form.encoded(), form.contentType)
    }
  }
}
