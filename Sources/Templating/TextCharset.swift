import CoreFoundation
import Foundation

/// How bytes become text and text becomes bytes: the `charset` parameter of a `Content-Type` field
/// (RFC 9110 §8.3.2), through Foundation's IANA charset names. No charset, or one Foundation does not
/// know, means UTF-8 (as WireMock).
package enum TextCharset {
  /// The `charset` parameter of a `Content-Type` value, unquoted and lower-cased; nil without one.
  package static func charsetName(ofContentType contentType: String?) -> String? {
    guard let contentType, contentType.utf8.contains(UInt8(ascii: ";")) else { return nil }
    for parameter in contentType.split(separator: ";").dropFirst() {
      let kv = parameter.split(separator: "=", maxSplits: 1)
      guard kv.count == 2,
        kv[0].trimmingCharacters(in: .whitespaces).lowercased() == "charset"
      else { continue }
      var value = kv[1].trimmingCharacters(in: .whitespaces)
      if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      return value.isEmpty ? nil : value.lowercased()
    }
    return nil
  }

  /// Foundation's encoding for an IANA charset name; nil when unknown.
  package static func encoding(named name: String) -> String.Encoding? {
    switch name.lowercased() {
    case "utf-8", "utf8": return .utf8
    case "iso-8859-1", "latin1", "iso_8859-1", "l1": return .isoLatin1
    case "us-ascii", "ascii": return .ascii
    default: break
    }
    guard name.utf8.count < 64, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }),
      let cfName = CFStringCreateWithCString(nil, name, CFStringBuiltInEncodings.UTF8.rawValue)
    else { return nil }
    let cf = CFStringConvertIANACharSetNameToEncoding(cfName)
    guard cf != kCFStringEncodingInvalidId else { return nil }
    return String.Encoding(rawValue: UInt(CFStringConvertEncodingToNSStringEncoding(cf)))
  }

  /// The encoding a `Content-Type` declares; nil when it declares none or one that is unknown (UTF-8).
  package static func encoding(ofContentType contentType: String?) -> String.Encoding? {
    charsetName(ofContentType: contentType).flatMap { encoding(named: $0) }
  }

  /// `bytes` as text in the charset of `contentType` (UTF-8 without one; invalid UTF-8 replaced).
  package static func decode(_ bytes: [UInt8], contentType: String?) -> String {
    guard let encoding = encoding(ofContentType: contentType), encoding != .utf8 else {
      return String(decoding: bytes, as: UTF8.self)
    }
    return String(data: Data(bytes), encoding: encoding) ?? String(decoding: bytes, as: UTF8.self)
  }

  /// `text` as bytes in the charset of `contentType` (UTF-8 without one); characters the charset cannot
  /// hold become `?`, as Java's `String.getBytes` writes them.
  package static func encode(_ text: String, contentType: String?) -> [UInt8] {
    guard let encoding = encoding(ofContentType: contentType), encoding != .utf8,
      let data = text.data(using: encoding, allowLossyConversion: true)
    else { return Array(text.utf8) }
    return Array(data)
  }
}
