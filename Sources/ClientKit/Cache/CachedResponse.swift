import Foundation
import HTTPCore

/// A stored response with what RFC 9111 needs to compute its age and freshness.
public struct CachedResponse: Sendable, Hashable {
  /// Status code of the stored response (2xx).
  public var statusCode: Int
  /// Header fields of the stored response, updated by 304 answers (RFC 9111 §4.3.4).
  public var headers: HTTPHeaders
  /// The stored body.
  public var body: Data
  /// When the request that produced (or last revalidated) this response was sent (RFC 9111 §4.2.3
  /// `request_time`).
  public var requestTime: Date
  /// When that response arrived (`response_time`); also the time of storing or of the last successful
  /// revalidation.
  public var storedAt: Date

  /// Creates a stored response.
  /// - Parameters:
  ///   - statusCode: 2xx status.
  ///   - headers: response header fields.
  ///   - body: the content.
  ///   - requestTime: when the request was sent (default: `storedAt`).
  ///   - storedAt: when the response arrived (default now).
  public init(
    statusCode: Int, headers: HTTPHeaders, body: Data, requestTime: Date? = nil, storedAt: Date = Date()
  ) {
    self.statusCode = statusCode
    self.headers = headers
    self.body = body
    self.requestTime = requestTime ?? storedAt
    self.storedAt = storedAt
  }

  /// The `ETag` validator, or nil.
  public var etag: String? { headers.first("ETag") }
  /// The `Last-Modified` validator, or nil.
  public var lastModified: String? { headers.first("Last-Modified") }

  /// The directives of `Cache-Control`, names lower-cased, values unquoted (nil for a bare directive).
  public var cacheControl: [String: String?] { CacheControl.parse(headers["Cache-Control"]) }

  /// The current age (RFC 9111 §4.2.3): the corrected initial age (`Age`, the `Date` skew and the
  /// response delay) plus the time spent in the cache until `now`.
  /// - Parameter now: the current time.
  /// - Returns: the age, never negative.
  public func age(at now: Date = Date()) -> TimeInterval {
    let dateValue = headers.first("Date").flatMap { HTTPDateText.date($0) } ?? storedAt
    let apparentAge = max(0, storedAt.timeIntervalSince(dateValue))
    let ageValue = headers.first("Age").flatMap { TimeInterval($0.trimmingCharacters(in: .whitespaces)) } ?? 0
    let responseDelay = max(0, storedAt.timeIntervalSince(requestTime))
    let correctedInitialAge = max(apparentAge, ageValue + responseDelay)
    return correctedInitialAge + max(0, now.timeIntervalSince(storedAt))
  }

  /// The freshness lifetime (RFC 9111 §4.2.1) for a private cache: `max-age`, else `Expires` minus `Date`,
  /// else the heuristic (`fraction` of the time since `Last-Modified`, §4.2.2) when `heuristicFraction`
  /// is set, else 0. `s-maxage` is for shared caches and is ignored; `no-cache` makes it 0 (always
  /// revalidate).
  /// - Parameter heuristicFraction: e.g. 0.1, or nil for no heuristic freshness.
  /// - Returns: seconds.
  public func freshnessLifetime(heuristicFraction: Double? = nil) -> TimeInterval {
    let directives = cacheControl
    if directives.keys.contains("no-cache") { return 0 }
    if let maxAge = directives["max-age"], let seconds = maxAge.flatMap({ TimeInterval($0) }) {
      return max(0, seconds)
    }
    let dateValue = headers.first("Date").flatMap { HTTPDateText.date($0) } ?? storedAt
    if let expires = headers.first("Expires") {
      // An invalid Expires (e.g. "0") means already expired (RFC 9111 §5.3).
      guard let expiry = HTTPDateText.date(expires) else { return 0 }
      return max(0, expiry.timeIntervalSince(dateValue))
    }
    if let heuristicFraction, let modified = lastModified.flatMap({ HTTPDateText.date($0) }) {
      return max(0, dateValue.timeIntervalSince(modified) * heuristicFraction)
    }
    return 0
  }

  /// True when the response may be used without contacting the server at `now`.
  public func isFresh(at now: Date = Date(), heuristicFraction: Double? = nil) -> Bool {
    age(at: now) < freshnessLifetime(heuristicFraction: heuristicFraction)
  }
}

/// `Cache-Control` parsing (RFC 9111 §5.2).
enum CacheControl {
  static func parse(_ value: String?) -> [String: String?] {
    guard let value else { return [:] }
    var result: [String: String?] = [:]
    for part in value.split(separator: ",") {
      let pair = part.split(separator: "=", maxSplits: 1)
      let name = pair[0].trimmingCharacters(in: .whitespaces).lowercased()
      guard !name.isEmpty else { continue }
      let argument =
        pair.count > 1 ? pair[1].trimmingCharacters(in: CharacterSet(charactersIn: " \t\"")) : nil
      result[name] = argument
    }
    return result
  }
}

/// HTTP-date text (RFC 9110 §5.6.7) to `Date`, through HTTPCore's parser.
enum HTTPDateText {
  static func date(_ text: String) -> Date? {
    HTTPDate.parse(text.trimmingCharacters(in: .whitespaces)).map { Date(timeIntervalSince1970: Double($0)) }
  }
}
