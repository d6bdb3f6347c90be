import Foundation
import HTTPCore

/// Signs every request: computes a signature over a canonical string and puts it in a header.
///
/// The canonical string is five lines joined by `\n` (no trailing newline):
/// ```
/// METHOD                 e.g. POST
/// /percent/encoded/path  exactly as on the request line, "/" when empty
/// a=1&b=2&b=3            query pairs as sent (percent-encoded), sorted by name then value (byte order)
/// 1700000000             the timestamp: Unix time in whole seconds, also sent in `timestampHeader`
/// e3b0c442…              lower-case hex SHA-256 of the body bytes (of the empty string when none)
/// ```
/// The signature is lower-case hex of: HMAC-SHA256(secret, canonical) by default; HMAC-SHA1 or HMAC-MD5
/// for ``Algorithm/hmacSHA1`` / ``Algorithm/hmacMD5``; or the plain digest of `canonical + secret` for
/// the legacy ``Algorithm/md5Salted`` / ``Algorithm/sha1Salted`` schemes.
public struct SigningAdapter: RequestAdapter {
  /// How the signature is computed from the canonical string and the secret.
  public enum Algorithm: String, Sendable, Hashable, CaseIterable {
    /// HMAC-SHA256 (RFC 2104, FIPS 180-4). The default.
    case hmacSHA256
    /// HMAC-SHA1, for legacy backends.
    case hmacSHA1
    /// HMAC-MD5, for legacy backends.
    case hmacMD5
    /// MD5 of the canonical string followed by the secret, for legacy backends.
    case md5Salted
    /// SHA-1 of the canonical string followed by the secret, for legacy backends.
    case sha1Salted
  }

  /// The signing secret.
  public var secret: Data
  /// The signature algorithm.
  public var algorithm: Algorithm
  /// Header that receives the hex signature. Default `X-Signature`.
  public var signatureHeader: String
  /// Header that receives the timestamp (Unix seconds). Default `X-Timestamp`.
  public var timestampHeader: String
  /// The clock, for tests; returns the current time.
  public var now: @Sendable () -> Date

  /// Creates a signing adapter.
  /// - Parameters:
  ///   - secret: the shared secret (UTF-8 bytes of the string).
  ///   - algorithm: default HMAC-SHA256.
  ///   - signatureHeader: header for the signature.
  ///   - timestampHeader: header for the timestamp.
  ///   - now: clock, default `Date.init`.
  public init(
    secret: String, algorithm: Algorithm = .hmacSHA256, signatureHeader: String = "X-Signature",
    timestampHeader: String = "X-Timestamp", now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.secret = Data(secret.utf8)
    self.algorithm = algorithm
    self.signatureHeader = signatureHeader
    self.timestampHeader = timestampHeader
    self.now = now
  }

  /// Adds the timestamp and signature headers (replacing earlier ones).
  public func adapt(_ request: TransportRequest) async throws -> TransportRequest {
    var signed = request
    let timestamp = String(Int64(now().timeIntervalSince1970.rounded(.down)))
    let canonical = Self.canonicalString(for: request, timestamp: timestamp)
    signed.headers.replaceOrAdd(name: timestampHeader, value: timestamp)
    signed.headers.replaceOrAdd(name: signatureHeader, value: signature(of: canonical))
    return signed
  }

  /// The hex signature of `canonical` under this adapter's secret and algorithm.
  public func signature(of canonical: String) -> String {
    let message = Data(canonical.utf8)
    switch algorithm {
    case .hmacSHA256: return Digest.hex(Digest.hmac(.sha256, key: secret, message))
    case .hmacSHA1: return Digest.hex(Digest.hmac(.sha1, key: secret, message))
    case .hmacMD5: return Digest.hex(Digest.hmac(.md5, key: secret, message))
    case .md5Salted: return Digest.hex(Digest.hash(.md5, message + secret))
    case .sha1Salted: return Digest.hex(Digest.hash(.sha1, message + secret))
    }
  }

  /// The canonical string of `request` (see the type's documentation).
  /// - Parameters:
  ///   - request: the request as it will be sent.
  ///   - timestamp: the timestamp text.
  /// - Returns: five lines joined by `\n`.
  public static func canonicalString(for request: TransportRequest, timestamp: String) -> String {
    let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
    let path = components?.percentEncodedPath ?? ""
    let pairs = (components?.percentEncodedQuery ?? "").split(separator: "&").map { pair in
      let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
      return (String(parts[0]), parts.count > 1 ? String(parts[1]) : "")
    }
    let sorted = pairs.sorted { a, b in
      a.0 == b.0
        ? Array(a.1.utf8).lexicographicallyPrecedes(b.1.utf8)
        : Array(a.0.utf8).lexicographicallyPrecedes(b.0.utf8)
    }
    let query = sorted.map { $0.0 + "=" + $0.1 }.joined(separator: "&")
    return [
      request.method.rawValue, path.isEmpty ? "/" : path, query, timestamp,
      Digest.hex(Digest.hash(.sha256, request.body)),
    ].joined(separator: "\n")
  }
}
