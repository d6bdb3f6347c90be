import Foundation
import HTTPCore
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif
#if canImport(Security)
  import Security
#endif

/// A ``Transport`` on `URLSession`: the default on Apple platforms, available everywhere.
///
/// The deadline is enforced by the transport itself (the task is cancelled when ``TransportRequest/timeout``
/// has passed and ``APIError/timedOut(limit:request:)`` is reported), because `timeoutInterval` is an idle
/// timeout, not a deadline. Truncated bodies are detected by comparing the bytes received with
/// `Content-Length` when no content coding is applied, since URLSession may complete them without error.
///
/// Linux (swift-corelibs-foundation) caveats, documented in docs/clientkit.md:
/// - `URLRequest.timeoutInterval` is rounded down to whole seconds by libcurl (0.5 s becomes no timeout),
///   hence the transport's own deadline timer;
/// - a request on a reused keep-alive connection that the server had closed may be re-sent by libcurl,
///   even when it is not idempotent;
/// - response header fields come back as a dictionary: order and the combination of repeated fields are
///   lost. Lookups through ``HTTPHeaders`` are still case-insensitive.
/// - server-trust challenges are never delivered to the delegate (measured with Swift 6.3: libcurl
///   verifies against the system roots only), so a custom ``TrustConfiguration`` cannot be applied:
///   ``init(configuration:trust:)`` with one other than ``TrustConfiguration/system`` makes every `https`
///   request fail with ``APIError/invalidRequest(_:)``. ``AutomaticTransport`` sends such requests through
///   ``SocketTransport`` instead. TLS failures arrive as libcurl text and are mapped to
///   ``APIError/tlsFailure(_:_:)`` from it.
///
/// On Apple platforms a ``TrustConfiguration`` replaces the system's evaluation: the chain from
/// `SecTrustCopyCertificateChain` is checked with ``TrustConfiguration/evaluate(chainDER:host:at:)`` and a
/// rejection is reported as ``APIError/tlsFailure(_:_:)`` with its exact ``TLSTrustFailure``.
///
/// Use ``SocketTransport`` when timing, faults or header fidelity matter (tests, Linux).
public final class URLSessionTransport: Transport {
  let session: URLSession
  let delegate: SessionDelegate
  /// The trust applied to `https` servers, or nil for the platform's default evaluation.
  public let trust: TrustConfiguration?

  /// Creates a transport with its own session.
  /// - Parameters:
  ///   - configuration: the session configuration (default `.ephemeral`: no shared cookies or URL cache,
  ///     so ``ResponseCache`` is the only cache).
  ///   - trust: which server certificates to accept, or nil for the platform's default. Applied on Apple
  ///     platforms only; on Linux anything but ``TrustConfiguration/system`` is refused per request (see
  ///     the type's documentation).
  public init(configuration: URLSessionConfiguration = .ephemeral, trust: TrustConfiguration? = nil) {
    let delegate = SessionDelegate(trust: trust)
    self.trust = trust
    configuration.urlCache = nil
    configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
    self.delegate = delegate
    self.session = URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
  }

  deinit {
    session.finishTasksAndInvalidate()
  }

  /// Sends the request with URLSession.
  /// - Throws: the transport cases of ``APIError`` (see ``Transport``).
  public func send(_ request: TransportRequest, progress: ProgressHandler?) async throws(APIError)
    -> TransportResponse
  {
    try await send(request, options: TransferOptions(downloadProgress: progress))
  }

  /// As ``send(_:progress:)``, with upload progress (`didSendBodyData`) and, with
  /// ``TransferOptions/bodyFile``, the body written to that file as it arrives.
  /// - Throws: as ``send(_:progress:)``; ``APIError/invalidRequest(_:)`` when the file cannot be created.
  public func send(_ request: TransportRequest, options: TransferOptions) async throws(APIError)
    -> TransportResponse
  {
    let progress = options.downloadProgress
    if Task.isCancelled { throw .cancelled }
    var urlRequest = try urlRequest(for: request)
    let seconds = Double(request.timeout.components.seconds)
    // A backstop only: the exact deadline is the timer below (Linux rounds this down to whole seconds).
    urlRequest.timeoutInterval = seconds.rounded(.up) + 1
    urlRequest.cachePolicy = .reloadIgnoringLocalCacheData

    var file: DownloadFile?
    if let url = options.bodyFile {
      file = try DownloadFile(url: url, resumeOffset: options.bodyFileOffset)
      // The bytes as stored (libcurl would otherwise ask for gzip and decode it, and a resumed range must
      // count bytes of the same representation).
      if !request.headers.contains("Accept-Encoding") {
        urlRequest.setValue("identity", forHTTPHeaderField: "Accept-Encoding")
      }
    }
    let task = session.dataTask(with: urlRequest)
    let exchange = Exchange(
      request: request, progress: progress, uploadProgress: options.uploadProgress, file: file,
      responseHead: options.responseHead)
    delegate.register(exchange, for: task.taskIdentifier)
    let limit = request.timeout
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<TransportResponse, APIError>, Never>) in
        exchange.start(continuation)
        task.resume()
        let timer = Task {
          try? await Task.sleep(for: limit)
          if !Task.isCancelled, exchange.markTimedOut() { task.cancel() }
        }
        exchange.setTimer(timer)
      }
    } onCancel: {
      task.cancel()
    }
    return try result.get()
  }
}

extension URLSessionTransport {
  /// The `URLRequest` for `request` (method, header fields in order, content), for ``send(_:options:)``
  /// and ``stream(_:)``, which set its timeout and cache policy.
  /// - Throws: ``APIError/invalidRequest(_:)`` for a custom ``TrustConfiguration`` on an `https` URL where
  ///   URLSession cannot apply one (no Security framework).
  func urlRequest(for request: TransportRequest) throws(APIError) -> URLRequest {
    #if !canImport(Security)
      if let trust, trust != .system, request.url.scheme?.lowercased() == "https" {
        throw .invalidRequest(
          "URLSession on this platform cannot apply a custom TrustConfiguration; use SocketTransport "
            + "or AutomaticTransport(trust:)")
      }
    #endif
    var urlRequest = URLRequest(url: request.url)
    urlRequest.httpMethod = request.method.rawValue
    for field in request.headers {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
    }
    if !request.body.isEmpty { urlRequest.httpBody = request.body }
    return urlRequest
  }
}

/// State of one URLSession task, shared by the delegate, the timer and the waiting caller.
final class Exchange: SessionTaskHandler {
  struct State {
    var continuation: CheckedContinuation<Result<TransportResponse, APIError>, Never>?
    var response: HTTPURLResponse?
    var body = Data()
    var receivedBytes = 0
    var timedOut = false
    var declinedChallenge = false
    var trustFailure: TLSTrustFailure?
    var finished = false
    var timer: Task<Void, Never>?
    /// Where the body goes when downloading to a file.
    var file: DownloadFile?
  }

  let request: TransportRequest
  let progress: ProgressHandler?
  let uploadProgress: ProgressHandler?
  let responseHead: (@Sendable (Int, HTTPHeaders) -> Void)?
  /// The download's file, when there is one (its writes happen under ``state``'s lock).
  let fileURL: URL?
  let state: Mutex<State>

  init(
    request: TransportRequest, progress: ProgressHandler?, uploadProgress: ProgressHandler? = nil,
    file: DownloadFile? = nil, responseHead: (@Sendable (Int, HTTPHeaders) -> Void)? = nil
  ) {
    self.request = request
    self.progress = progress
    self.uploadProgress = uploadProgress
    self.fileURL = file?.url
    self.responseHead = responseHead
    var initial = State()
    initial.file = file
    self.state = Mutex(initial)
  }

  /// Reports request body bytes written.
  func sent(_ total: Int64, of expected: Int64) {
    uploadProgress?(DownloadProgress(receivedBytes: total, expectedBytes: expected >= 0 ? expected : nil))
  }

  func start(_ continuation: CheckedContinuation<Result<TransportResponse, APIError>, Never>) {
    state.withLock { $0.continuation = continuation }
  }

  func setTimer(_ timer: Task<Void, Never>) {
    let finished = state.withLock { s -> Bool in
      if !s.finished { s.timer = timer }
      return s.finished
    }
    if finished { timer.cancel() }
  }

  /// Marks the deadline as passed; false when the exchange already finished.
  func markTimedOut() -> Bool {
    state.withLock { s in
      if s.finished { return false }
      s.timedOut = true
      return true
    }
  }

  /// Records that an authentication challenge was declined, so that the cancellation that follows
  /// delivers the 401 already received instead of ``APIError/cancelled``.
  func declineChallenge() {
    state.withLock { $0.declinedChallenge = true }
  }

  /// Records why the delegate rejected the server's certificate (the task then fails as cancelled).
  func rejectedTrust(_ failure: TLSTrustFailure) {
    state.withLock { $0.trustFailure = failure }
  }

  func received(_ response: HTTPURLResponse) {
    state.withLock {
      $0.response = response
      $0.file?.begin(statusCode: response.statusCode)
    }
    responseHead?(response.statusCode, Self.headers(of: response))
  }

  func received(_ data: Data) {
    let reported = state.withLock { s -> DownloadProgress in
      if s.file != nil { s.file?.write(data) } else { s.body.append(data) }
      s.receivedBytes += data.count
      let length = s.response?.expectedContentLength ?? -1
      let expected = length >= 0 ? length : nil
      if let file = s.file { return file.progress(contentLength: expected) }
      return DownloadProgress(receivedBytes: Int64(s.receivedBytes), expectedBytes: expected)
    }
    progress?(reported)
  }

  /// The header fields of `response` (a dictionary in Foundation: order and repetition are lost).
  static func headers(of response: HTTPURLResponse) -> HTTPHeaders {
    var headers = HTTPHeaders()
    for (key, value) in response.allHeaderFields {
      headers.add(name: String(describing: key), value: String(describing: value))
    }
    return headers
  }

  func complete(error: (any Error)?) {
    let (continuation, result, timer) = state.withLock {
      s -> (
        CheckedContinuation<Result<TransportResponse, APIError>, Never>?, Result<TransportResponse, APIError>,
        Task<Void, Never>?
      ) in
      s.finished = true
      s.file?.close()
      let c = s.continuation
      s.continuation = nil
      return (c, outcome(of: s, error: error, request: request), s.timer)
    }
    timer?.cancel()
    continuation?.resume(returning: result)
  }

  private func outcome(of s: State, error: (any Error)?, request: TransportRequest) -> Result<
    TransportResponse, APIError
  > {
    let info = request.info
    if s.timedOut { return .failure(.timedOut(limit: request.timeout, request: info)) }
    if let failure = s.file?.writeFailure { return .failure(.invalidRequest(failure)) }
    if let failure = s.trustFailure { return .failure(.tlsFailure(info, failure)) }
    let headers = s.response.map(Self.headers(of:)) ?? HTTPHeaders()
    let expected: Int? = {
      guard let raw = headers.first("Content-Length"), let n = Int(raw), n >= 0 else { return nil }
      let coding = headers.first("Content-Encoding")?.lowercasedASCII() ?? "identity"
      return coding == "identity" && request.method != .head ? n : nil
    }()
    if let error, s.declinedChallenge, let response = s.response,
      (error as NSError).code == NSURLErrorCancelled
    {
      return .success(
        TransportResponse(
          statusCode: response.statusCode, headers: headers, body: s.body, bodyFile: fileURL,
          bodyByteCount: s.receivedBytes))
    }
    if let error {
      let code = (error as NSError).code
      if let response = s.response, code != NSURLErrorCancelled, code != NSURLErrorTimedOut {
        if let expected, s.receivedBytes < expected || code == NSURLErrorNetworkConnectionLost {
          return .failure(
            .truncatedBody(
              info, statusCode: response.statusCode, expected: expected, received: s.receivedBytes))
        }
        if code == NSURLErrorNetworkConnectionLost || code == NSURLErrorUnknown {
          return .failure(
            .truncatedBody(info, statusCode: response.statusCode, expected: nil, received: s.receivedBytes))
        }
      }
      if code == NSURLErrorUnsupportedURL, ["http", "https"].contains(request.url.scheme?.lowercased() ?? "")
      {
        // libcurl's CURLE_UNSUPPORTED_PROTOCOL for an http(s) URL: the reply was not HTTP ("Received
        // HTTP/0.9 when not allowed"), so the request was fine and the response is malformed (a fault of its own, not a
        // lost connection).
        return .failure(.malformedResponse(info, detail: (error as NSError).localizedDescription))
      }
      return .failure(Self.map(code: code, error: error, info: info, limit: request.timeout))
    }
    guard let response = s.response else { return .failure(.emptyResponse(info)) }
    if let expected, s.receivedBytes < expected {
      return .failure(
        .truncatedBody(info, statusCode: response.statusCode, expected: expected, received: s.receivedBytes))
    }
    return .success(
      TransportResponse(
        statusCode: response.statusCode, headers: headers, body: s.body, bodyFile: fileURL,
        bodyByteCount: s.receivedBytes))
  }

  static func map(code: Int, error: any Error, info: RequestInfo, limit: Duration) -> APIError {
    let text = (error as NSError).localizedDescription
    switch code {
    case NSURLErrorCancelled: return .cancelled
    case NSURLErrorTimedOut: return .timedOut(limit: limit, request: info)
    case NSURLErrorCannotConnectToHost, NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed,
      NSURLErrorNotConnectedToInternet:
      return .cannotConnect(info, reason: text)
    case NSURLErrorNetworkConnectionLost: return .connectionReset(info)
    case NSURLErrorBadServerResponse, NSURLErrorZeroByteResource: return .emptyResponse(info)
    case NSURLErrorServerCertificateHasBadDate: return .tlsFailure(info, .expired)
    case NSURLErrorServerCertificateNotYetValid: return .tlsFailure(info, .notYetValid)
    case NSURLErrorServerCertificateHasUnknownRoot: return .tlsFailure(info, .untrustedRoot)
    // Apple reports both an unknown issuer and a wrong host as "untrusted"; libcurl's text (below) is
    // more precise when there is one.
    case NSURLErrorServerCertificateUntrusted:
      return .tlsFailure(info, Self.trustFailure(describedBy: text) ?? .untrustedRoot)
    case NSURLErrorSecureConnectionFailed, NSURLErrorClientCertificateRejected,
      NSURLErrorClientCertificateRequired:
      return .tlsFailure(info, Self.trustFailure(describedBy: text) ?? .handshakeFailed(text))
    case NSURLErrorCannotDecodeContentData, NSURLErrorCannotDecodeRawData, NSURLErrorCannotParseResponse:
      return .malformedResponse(info, detail: text)
    case NSURLErrorBadURL, NSURLErrorUnsupportedURL: return .invalidRequest(text)
    default:
      // swift-corelibs-foundation reports libcurl's TLS failures as NSURLErrorUnknown (-1) with
      // libcurl's text ("SSL certificate problem: certificate has expired"); measured with Swift 6.3.
      if let failure = trustFailure(describedBy: text) { return .tlsFailure(info, failure) }
      return .transportFailure(info, code: code, detail: text)
    }
  }

  /// The ``TLSTrustFailure`` an error text from libcurl/OpenSSL (Linux) describes, or nil when the text
  /// is not about TLS.
  static func trustFailure(describedBy text: String) -> TLSTrustFailure? {
    let lower = text.lowercased()
    guard lower.contains("ssl") || lower.contains("tls") || lower.contains("certificate") else { return nil }
    if lower.contains("certificate has expired") { return .expired }
    if lower.contains("not yet valid") { return .notYetValid }
    if lower.contains("subject name") || lower.contains("host name") || lower.contains("hostname mismatch") {
      return .hostnameMismatch
    }
    let untrusted = [
      "self-signed certificate", "self signed certificate", "unable to get local issuer",
      "unable to get issuer", "unable to verify the first certificate", "certificate not trusted",
      "certificate verify failed",
    ]
    if untrusted.contains(where: lower.contains) { return .untrustedRoot }
    if lower.contains("pinned public key") { return .pinMismatch }
    if lower.hasPrefix("ssl") || lower.contains("ssl connect error") || lower.contains("handshake") {
      return .handshakeFailed(text)
    }
    return nil
  }
}

/// What receives one task's delegate callbacks: an ``Exchange`` (a whole response) or a
/// ``StreamingExchange`` (a streamed one).
protocol SessionTaskHandler: AnyObject, Sendable {
  func received(_ response: HTTPURLResponse)
  func received(_ data: Data)
  func sent(_ total: Int64, of expected: Int64)
  func declineChallenge()
  func rejectedTrust(_ failure: TLSTrustFailure)
  func complete(error: (any Error)?)
}

/// Routes URLSession delegate callbacks to the handler of each task.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
  private let exchanges = Mutex<[Int: any SessionTaskHandler]>([:])
  private let trust: TrustConfiguration?

  init(trust: TrustConfiguration?) {
    self.trust = trust
  }

  func register(_ exchange: any SessionTaskHandler, for id: Int) {
    exchanges.withLock { $0[id] = exchange }
  }

  private func exchange(_ task: URLSessionTask) -> (any SessionTaskHandler)? {
    exchanges.withLock { $0[task.taskIdentifier] }
  }

  func urlSession(
    _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
    completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
  ) {
    if let http = response as? HTTPURLResponse { exchange(dataTask)?.received(http) }
    completionHandler(.allow)
  }

  #if canImport(FoundationNetworking)
    /// Declines HTTP authentication challenges (a 401 with `WWW-Authenticate: Basic …`).
    ///
    /// swift-corelibs-foundation turns such a 401 into a challenge once the body has arrived; without this
    /// method, or with "default handling" and no stored credential, the task is never completed and the
    /// call waits for its deadline (swiftlang/swift-corelibs-foundation#5456). ``APIClient`` does its own
    /// authentication, so the challenge is declined and the 401 already received is delivered as is.
    func urlSession(
      _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
      completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
      // swift-corelibs-foundation raises only HTTP authentication challenges (no server trust).
      exchange(task)?.declineChallenge()
      completionHandler(.cancelAuthenticationChallenge, nil)
    }
  #endif

  func urlSession(
    _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
    totalBytesExpectedToSend: Int64
  ) {
    exchange(task)?.sent(totalBytesSent, of: totalBytesExpectedToSend)
  }

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    exchange(dataTask)?.received(data)
  }

  #if canImport(Security)
    /// Applies ``trust`` to server-trust challenges (Apple platforms; corelibs Foundation never sends
    /// them).
    func urlSession(
      _ session: URLSession, task: URLSessionTask, didReceive challenge: URLAuthenticationChallenge,
      completionHandler: @escaping @Sendable (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
      let space = challenge.protectionSpace
      guard let trust, space.authenticationMethod == NSURLAuthenticationMethodServerTrust,
        let serverTrust = space.serverTrust
      else {
        completionHandler(.performDefaultHandling, nil)
        return
      }
      let certificates = (SecTrustCopyCertificateChain(serverTrust) as? [SecCertificate]) ?? []
      let chain = certificates.map { [UInt8](SecCertificateCopyData($0) as Data) }
      do {
        try trust.evaluate(chainDER: chain, host: space.host)
        completionHandler(.useCredential, URLCredential(trust: serverTrust))
      } catch {
        exchange(task)?.rejectedTrust(error)
        completionHandler(.cancelAuthenticationChallenge, nil)
      }
    }
  #endif

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    exchange?.complete(error: error)
  }
}
