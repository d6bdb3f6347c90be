import HTTPCore
import NativeSupport

/// A content coding the server can apply to a response or remove from a request (RFC 9110 §8.4).
package enum ContentCoding: String, Sendable, CaseIterable {
  /// gzip (RFC 9110 §8.4.1.3).
  case gzip
  /// deflate: the zlib format (RFC 9110 §8.4.1.2).
  case deflate
  /// No coding.
  case identity

  /// The coding a `Content-Encoding` field value names (`x-gzip` is gzip, RFC 9110 §8.4.1.3), or nil for
  /// one the server cannot remove.
  package init?(fieldValue: String) {
    let name = fieldValue.trimmingOWS().lowercasedASCII()
    self.init(rawValue: name == "x-gzip" ? "gzip" : name)
  }

  /// Applies the coding to `content`.
  package func encode(_ content: [UInt8]) -> [UInt8] {
    switch self {
    case .gzip: return Zlib.compress(content, format: .gzip)
    case .deflate: return Zlib.compress(content, format: .zlib)
    case .identity: return content
    }
  }

  /// Removes the coding from `content`.
  /// - Throws: ``Zlib/Failure`` when the data is corrupt or larger than `limit` bytes.
  package func decode(_ content: [UInt8], limit: Int = 64 << 20) throws(Zlib.Failure) -> [UInt8] {
    switch self {
    case .gzip: return try Zlib.decompress(content, format: .gzip, limit: limit)
    case .deflate: return try Zlib.decompress(content, format: .zlib, limit: limit)
    case .identity: return content
    }
  }

  /// Chooses the response coding from `Accept-Encoding` values (RFC 9110 §12.5.3).
  ///
  /// - Parameter acceptEncoding: every `Accept-Encoding` field value of the request.
  /// - Returns: the acceptable coding with the highest q-value, preferring gzip, then deflate, then
  ///   identity on ties; `.identity` when the field is absent; nil when nothing is acceptable (every coding
  ///   including identity has `q=0`, explicitly or through `*;q=0`).
  package static func negotiate(acceptEncoding: [String]) -> ContentCoding? {
    guard !acceptEncoding.isEmpty else { return .identity }
    let weight = weights(acceptEncoding)
    var best: (ContentCoding, Double)?
    for coding in [ContentCoding.gzip, .deflate, .identity] {
      let w = weight(coding)
      if w > 0, w > (best?.1 ?? 0) { best = (coding, w) }
    }
    return best?.0
  }

  /// True when `coding` has a non-zero q-value under these `Accept-Encoding` values (identity is
  /// acceptable unless excluded; everything is acceptable when the field is absent).
  package static func isAcceptable(_ coding: ContentCoding, acceptEncoding: [String]) -> Bool {
    acceptEncoding.isEmpty || weights(acceptEncoding)(coding) > 0
  }

  private static func weights(_ acceptEncoding: [String]) -> (ContentCoding) -> Double {
    var weights: [String: Double] = [:]
    for value in acceptEncoding {
      for element in value.split(separator: ",") {
        let parts = element.split(separator: ";")
        guard let first = parts.first else { continue }
        let name = first.trimmingOWS().lowercasedASCII()
        guard !name.isEmpty else { continue }
        var q = 1.0
        for parameter in parts.dropFirst() {
          let p = parameter.trimmingOWS()
          if p.lowercasedASCII().hasPrefix("q=") { q = Double(p.dropFirst(2)) ?? 0 }
        }
        weights[name == "x-gzip" ? "gzip" : name] = min(max(q, 0), 1)
      }
    }
    let star = weights["*"]
    func weight(_ coding: ContentCoding) -> Double {
      if let w = weights[coding.rawValue] { return w }
      if let star { return star }
      // identity is acceptable unless excluded (RFC 9110 §12.5.3).
      return coding == .identity ? 0.001 : 0
    }
    return weight
  }
}
