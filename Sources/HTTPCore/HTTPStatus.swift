/// A response status code with its reason phrase (RFC 9110 §15).
public struct HTTPStatus: Hashable, Sendable, CustomStringConvertible {
  /// Three-digit status code, 100...999 as accepted on the wire (RFC 9110 §15 defines 100...599).
  public var code: Int
  /// Reason phrase sent on the status line; advisory only (RFC 9112 §4).
  public var reasonPhrase: String

  /// Creates a status; an empty `reasonPhrase` is replaced by the standard one for `code`, if any.
  public init(code: Int, reasonPhrase: String = "") {
    self.code = code
    self.reasonPhrase = reasonPhrase.isEmpty ? HTTPStatus.standardReason(code) : reasonPhrase
  }

  /// `200 OK` form.
  public var description: String { "\(code) \(reasonPhrase)" }

  /// 1xx (RFC 9110 §15.2).
  public var isInformational: Bool { (100..<200).contains(code) }
  /// 2xx (RFC 9110 §15.3).
  public var isSuccess: Bool { (200..<300).contains(code) }
  /// True when a response with this status never has content: 1xx, 204, 304 (RFC 9112 §6.3 rule 1).
  public var forbidsContent: Bool { isInformational || code == 204 || code == 304 }

  /// The reason phrase registered for `code` (RFC 9110 §15, RFC 6585, and RFC 5842 for 508), or "" if none.
  public static func standardReason(_ code: Int) -> String {
    switch code {
    case 100: return "Continue"
    case 101: return "Switching Protocols"
    case 200: return "OK"
    case 201: return "Created"
    case 202: return "Accepted"
    case 203: return "Non-Authoritative Information"
    case 204: return "No Content"
    case 205: return "Reset Content"
    case 206: return "Partial Content"
    case 300: return "Multiple Choices"
    case 301: return "Moved Permanently"
    case 302: return "Found"
    case 303: return "See Other"
    case 304: return "Not Modified"
    case 307: return "Temporary Redirect"
    case 308: return "Permanent Redirect"
    case 400: return "Bad Request"
    case 401: return "Unauthorized"
    case 402: return "Payment Required"
    case 403: return "Forbidden"
    case 404: return "Not Found"
    case 405: return "Method Not Allowed"
    case 406: return "Not Acceptable"
    case 407: return "Proxy Authentication Required"
    case 408: return "Request Timeout"
    case 409: return "Conflict"
    case 410: return "Gone"
    case 411: return "Length Required"
    case 412: return "Precondition Failed"
    case 413: return "Content Too Large"
    case 414: return "URI Too Long"
    case 415: return "Unsupported Media Type"
    case 416: return "Range Not Satisfiable"
    case 417: return "Expectation Failed"
    case 418: return "I'm a teapot"
    case 421: return "Misdirected Request"
    case 422: return "Unprocessable Content"
    case 425: return "Too Early"
    case 426: return "Upgrade Required"
    case 428: return "Precondition Required"
    case 429: return "Too Many Requests"
    case 431: return "Request Header Fields Too Large"
    case 451: return "Unavailable For Legal Reasons"
    case 500: return "Internal Server Error"
    case 501: return "Not Implemented"
    case 502: return "Bad Gateway"
    case 503: return "Service Unavailable"
    case 504: return "Gateway Timeout"
    case 505: return "HTTP Version Not Supported"
    case 508: return "Loop Detected"
    default: return ""
    }
  }

  /// `100`.
  public static let `continue` = HTTPStatus(code: 100)
  /// `200`.
  public static let ok = HTTPStatus(code: 200)
  /// `201`.
  public static let created = HTTPStatus(code: 201)
  /// `204`.
  public static let noContent = HTTPStatus(code: 204)
  /// `304`.
  public static let notModified = HTTPStatus(code: 304)
  /// `400`.
  public static let badRequest = HTTPStatus(code: 400)
  /// `401`.
  public static let unauthorized = HTTPStatus(code: 401)
  /// `403`.
  public static let forbidden = HTTPStatus(code: 403)
  /// `404`.
  public static let notFound = HTTPStatus(code: 404)
  /// `408`.
  public static let requestTimeout = HTTPStatus(code: 408)
  /// `413`.
  public static let contentTooLarge = HTTPStatus(code: 413)
  /// `414`.
  public static let uriTooLong = HTTPStatus(code: 414)
  /// `429`.
  public static let tooManyRequests = HTTPStatus(code: 429)
  /// `431`.
  public static let requestHeaderFieldsTooLarge = HTTPStatus(code: 431)
  /// `500`.
  public static let internalServerError = HTTPStatus(code: 500)
  /// `501`.
  public static let notImplemented = HTTPStatus(code: 501)
  /// `503`.
  public static let serviceUnavailable = HTTPStatus(code: 503)
  /// `505`.
  public static let httpVersionNotSupported = HTTPStatus(code: 505)
}
