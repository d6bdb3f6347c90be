/// Why a message could not be parsed. Errors are sticky: once thrown, the parser throws the same error
/// again, because the byte stream's framing can no longer be trusted (RFC 9112 §11.2).
public enum HTTPParserError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The request-line is not `method SP request-target SP HTTP-version` (RFC 9112 §3).
  case invalidRequestLine
  /// The status-line is not `HTTP-version SP 3DIGIT SP [reason]` (RFC 9112 §4).
  case invalidStatusLine
  /// The HTTP-version is not `HTTP/DIGIT.DIGIT` (RFC 9112 §2.3).
  case invalidVersion
  /// A well-formed version whose major number is not 1: 505 (RFC 9110 §15.6.6).
  case unsupportedVersion(HTTPVersion)
  /// A method token longer than any implemented one: 501 (RFC 9112 §3).
  case methodTooLong(limit: Int)
  /// The request-target exceeds ``ParserLimits/maxRequestTargetBytes``: 414.
  case requestTargetTooLong(limit: Int)
  /// The header section exceeds ``ParserLimits/maxHeaderSectionBytes``: 431.
  case headerSectionTooLarge(limit: Int)
  /// More field lines than ``ParserLimits/maxHeaderCount``: 431.
  case tooManyHeaderFields(limit: Int)
  /// A field line that is not `field-name ":" OWS field-value OWS`: whitespace before the colon,
  /// obs-fold, an empty or non-token name, or NUL/CR/LF/control characters in the value
  /// (RFC 9112 §5.1, §5.2; RFC 9110 §5.5).
  case invalidHeaderField(String)
  /// An HTTP/1.1 request without exactly one `Host` field (RFC 9112 §3.2).
  case invalidHost(String)
  /// A `Content-Length` that is not a non-negative decimal, or differing values (RFC 9112 §6.3 rule 5).
  case invalidContentLength
  /// Both `Content-Length` and `Transfer-Encoding`, or `Transfer-Encoding` on HTTP/1.0, or `chunked`
  /// not last: the framing is ambiguous (RFC 9112 §6.1, §6.3 rule 3–4).
  case ambiguousFraming(String)
  /// A transfer coding other than `chunked`: 501 (RFC 9112 §6.1).
  case unsupportedTransferCoding(String)
  /// A malformed chunk size line, chunk terminator or trailer section (RFC 9112 §7.1).
  case invalidChunk
  /// The content exceeds ``ParserLimits/maxBodyBytes``: 413.
  case bodyTooLarge(limit: Int)
  /// The stream ended inside a message (RFC 9112 §8). `expectedBytes` is the announced content length
  /// when there was one; `receivedBytes` counts content bytes received.
  case incompleteMessage(expectedBytes: Int?, receivedBytes: Int)

  /// The status code a server answers with for this error (400, 413, 414, 431, 501 or 505).
  public var status: HTTPStatus {
    switch self {
    case .unsupportedVersion: return .httpVersionNotSupported
    case .requestTargetTooLong: return .uriTooLong
    case .headerSectionTooLarge, .tooManyHeaderFields: return .requestHeaderFieldsTooLarge
    case .unsupportedTransferCoding, .methodTooLong: return .notImplemented
    case .bodyTooLarge: return .contentTooLarge
    default: return .badRequest
    }
  }

  /// A one-line explanation for logs and error bodies.
  public var description: String {
    switch self {
    case .invalidRequestLine: return "malformed request-line"
    case .invalidStatusLine: return "malformed status-line"
    case .invalidVersion: return "malformed HTTP-version"
    case .unsupportedVersion(let v): return "unsupported HTTP version \(v)"
    case .requestTargetTooLong(let l): return "request-target longer than \(l) bytes"
    case .methodTooLong(let l): return "method longer than \(l) bytes: not implemented"
    case .headerSectionTooLarge(let l): return "header section larger than \(l) bytes"
    case .tooManyHeaderFields(let l): return "more than \(l) header fields"
    case .invalidHeaderField(let why): return "invalid header field: \(why)"
    case .invalidHost(let why): return "invalid Host: \(why)"
    case .invalidContentLength: return "invalid or conflicting Content-Length"
    case .ambiguousFraming(let why): return "ambiguous message framing: \(why)"
    case .unsupportedTransferCoding(let c): return "unsupported transfer coding '\(c)'"
    case .invalidChunk: return "malformed chunked transfer coding"
    case .bodyTooLarge(let l): return "content larger than \(l) bytes"
    case .incompleteMessage(let e, let r):
      if let e { return "connection closed after \(r) of \(e) content bytes" }
      return "connection closed inside a message after \(r) content bytes"
    }
  }
}
