import Foundation

extension APIError: LocalizedError, CustomStringConvertible {
  /// A sentence a person can read, naming what failed and the request.
  public var errorDescription: String? {
    switch self {
    case .timedOut(let limit, let q):
      return "The server did not answer within \(Self.format(limit)) (\(q))."
    case .deadlineExceeded(let report):
      let target = report.request.map { " (\($0))" } ?? ""
      return "The server did not answer in time: \(report)\(target)."
    case .responseTooLarge(let q, let limit):
      return "The response body is larger than the limit of \(Self.formatBytes(limit)) (\(limit) bytes); "
        + "download it to a file instead (\(q))."
    case .cannotConnect(let q, let reason):
      return "Could not connect to \(q.url.host ?? q.url.absoluteString): \(reason)."
    case .connectionReset(let q):
      return "The connection was reset by the server (\(q))."
    case .emptyResponse(let q):
      return "The server closed the connection without answering (\(q))."
    case .connectionLost(let q, let n):
      return "The connection was lost after \(n) bytes, before the response was complete (\(q))."
    case .truncatedBody(let q, let status, let expected, let received):
      let of = expected.map { " of \($0)" } ?? ""
      return "The response (\(status)) was cut short: received \(received)\(of) bytes (\(q))."
    case .malformedResponse(let q, let detail):
      return "The server sent an invalid HTTP response: \(detail) (\(q))."
    case .tlsFailure(let q, let failure):
      return "The secure connection failed: \(failure) (\(q))."
    case .transportFailure(let q, let code, let detail):
      return "The request failed: \(detail) [\(code)] (\(q))."
    case .unacceptableStatus(let r, let app):
      let what: String
      switch r.statusCode {
      case 401: what = "Authentication is required or has expired"
      case 403: what = "Access is forbidden"
      case 404: what = "The resource was not found"
      case 429:
        what = "Too many requests" + (r.retryAfter.map { "; retry after \(Self.format($0))" } ?? "")
      case 500..<600: what = "The server failed"
      default: what = "The server answered with an unexpected status"
      }
      let detail = app.map { ": \($0)" } ?? ""
      return "\(what) (HTTP \(r.statusCode))\(detail) (\(r.request))."
    case .application(let e, _):
      return e.message ?? e.description
    case .emptyBody(let r):
      return "The response (HTTP \(r.statusCode)) had no content where a value was expected (\(r.request))."
    case .decoding(let failure, let r):
      return "The response could not be read: \(failure). Body: \(r.bodyExcerpt)"
    case .refreshFailed(let r, let reason):
      return "The session has expired and could not be renewed: \(reason) (\(r.request))."
    case .invalidRequest(let reason):
      return "The request could not be built: \(reason)."
    case .cancelled:
      return "The request was cancelled."
    }
  }

  /// Same as ``errorDescription``.
  public var description: String { errorDescription ?? "APIError" }

  /// Seconds with two decimals, e.g. `2.31 s`.
  static func formatElapsed(_ d: Duration) -> String {
    let (s, atto) = d.components
    let hundredths = s * 100 + atto / 10_000_000_000_000_000
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) s"
  }

  /// `64 MiB`, `512 KiB` or `100 bytes`.
  static func formatBytes(_ n: Int) -> String {
    if n >= 1 << 20, n % (1 << 20) == 0 { return "\(n >> 20) MiB" }
    if n >= 1 << 10, n % (1 << 10) == 0 { return "\(n >> 10) KiB" }
    return "\(n) bytes"
  }

  static func format(_ d: Duration) -> String {
    let (s, atto) = d.components
    let ms = s * 1000 + atto / 1_000_000_000_000_000
    if ms % 1000 == 0 { return "\(ms / 1000) s" }
    return "\(ms) ms"
  }
}
