/// Why a body could not be decoded into the expected type.
public struct DecodingFailure: Error, Sendable, Hashable, CustomStringConvertible {
  /// The coding path to the failing value, dot-separated (`result.items[2].price`), "" at the top.
  public var codingPath: String
  /// What went wrong, in words.
  public var reason: String

  /// Creates a decoding failure.
  public init(codingPath: String, reason: String) {
    self.codingPath = codingPath
    self.reason = reason
  }

  /// Builds a failure from any error thrown by a decoder, prefixing `pathPrefix` (an envelope field).
  public init(_ error: any Error, pathPrefix: String = "") {
    func render(_ path: [any CodingKey]) -> String {
      var out = pathPrefix
      for key in path {
        if let index = key.intValue, key.stringValue.hasPrefix("Index") || key.stringValue == "\(index)" {
          out += "[\(index)]"
        } else {
          out += out.isEmpty ? key.stringValue : "." + key.stringValue
        }
      }
      return out
    }
    switch error {
    case DecodingError.keyNotFound(let key, let context):
      self.init(
        codingPath: render(context.codingPath + [key]),
        reason: "missing key \"\(key.stringValue)\"")
    case DecodingError.valueNotFound(let type, let context):
      self.init(codingPath: render(context.codingPath), reason: "expected \(type) but found null")
    case DecodingError.typeMismatch(let type, let context):
      self.init(
        codingPath: render(context.codingPath),
        reason: "expected \(type): \(context.debugDescription)")
    case DecodingError.dataCorrupted(let context):
      self.init(codingPath: render(context.codingPath), reason: context.debugDescription)
    default:
      self.init(codingPath: pathPrefix, reason: String(describing: error))
    }
  }

  /// `reason at path` form.
  public var description: String {
    codingPath.isEmpty ? reason : "\(reason) at \(codingPath)"
  }
}
