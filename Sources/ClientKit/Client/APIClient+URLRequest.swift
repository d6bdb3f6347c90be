import Foundation

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension TransportRequest {
  /// The same request as a `URLRequest`: method, URL, header fields in order, body and the attempt's
  /// timeout as `timeoutInterval` (seconds).
  public var urlRequest: URLRequest {
    var r = URLRequest(url: url)
    r.httpMethod = method.rawValue
    for field in headers { r.addValue(field.value, forHTTPHeaderField: field.name) }
    r.httpBody = body.isEmpty ? nil : body
    r.timeoutInterval =
      Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
    return r
  }

  /// The longest `timeoutInterval` taken from a `URLRequest` (a year, in seconds); longer ones are clamped.
  static let longestTimeout: Double = 365 * 86_400

  /// A transport request from a `URLRequest` (method default `GET`, header fields, body, timeout; a
  /// `timeoutInterval` that is not positive and finite means the default 20 s).
  /// - Throws: ``APIError/invalidRequest(_:)`` when it has no URL or its body is a stream.
  public init(_ urlRequest: URLRequest) throws(APIError) {
    guard let url = urlRequest.url else { throw .invalidRequest("the URLRequest has no URL") }
    guard urlRequest.httpBodyStream == nil else {
      throw .invalidRequest("URLRequest bodies from streams are not supported; use httpBody")
    }
    var headers = HTTPHeaders()
    for (name, value) in (urlRequest.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
      headers.add(name: name, value: value)
    }
    // Range-checked before the conversion: an infinite or huge interval would trap in Int64(_:).
    let interval = urlRequest.timeoutInterval
    let timeout: Duration =
      interval.isFinite && interval > 0
      ? .milliseconds(Int64(min(interval, Self.longestTimeout) * 1000)) : .seconds(20)
    self.init(
      method: HTTPMethod(rawValue: urlRequest.httpMethod ?? "GET"), url: url, headers: headers,
      body: urlRequest.httpBody ?? Data(), timeout: timeout)
  }
}

/// A ``Request`` made from an existing `URLRequest`: its absolute URL is kept as it is.
struct URLRequestAdapterRequest<Response: Decodable & Sendable>: Request {
  let wrapped: TransportRequest
  var method: HTTPMethod { wrapped.method }
  var path: String { "" }
  var headers: HTTPHeaders { wrapped.headers }
  var body: RequestBody? { wrapped.body.isEmpty ? nil : .data(wrapped.body, contentType: nil) }
  var timeout: Duration? { wrapped.timeout }
}

/// Requests whose URL is absolute, not relative to the client's base URL.
protocol AbsoluteURLRequest {
  var absoluteURL: URL { get }
}

extension URLRequestAdapterRequest: AbsoluteURLRequest {
  var absoluteURL: URL { wrapped.url }
}

extension APIClient {
  /// The `URLRequest` the next attempt of `request` would send: base URL, defaults, authentication and
  /// adapters applied (for handing to other code, e.g. a `URLSession` download task or an image loader).
  /// - Throws: as ``makeTransportRequest(_:)``.
  public func urlRequest<R: Request>(for request: R) async throws(APIError) -> URLRequest {
    try await makeTransportRequest(request).0.urlRequest
  }

  /// Sends an existing `URLRequest` through this client: default headers (its own fields win),
  /// authentication, adapters, retries, the overall deadline, monitors, the envelope and decoding into
  /// `type`. Its URL is used as it is (not joined to ``baseURL``; default query items are not added).
  /// - Parameters:
  ///   - urlRequest: the request.
  ///   - type: the response type.
  /// - Returns: the decoded value and its response.
  /// - Throws: any ``APIError`` case.
  public func response<T: Decodable & Sendable>(_ urlRequest: URLRequest, as type: T.Type = T.self)
    async throws(APIError) -> APIResponse<T>
  {
    try await response(URLRequestAdapterRequest<T>(wrapped: try TransportRequest(urlRequest)))
  }
}
