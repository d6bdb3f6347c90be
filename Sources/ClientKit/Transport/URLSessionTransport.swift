import Foundation
import HTTPCore
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
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
/// Use ``SocketTransport`` when timing, faults or header fidelity matter (tests, Linux).
public final class URLSessionTransport: Transport {
  private let session: URLSession
  private let delegate: SessionDelegate

  /// Creates a transport with its own session.
  /// - Parameter configuration: the session configuration (default `.ephemeral`: no shared cookies or
  ///   URL cache, so ``ResponseCache`` is the only cache).
  public init(configuration: URLSessionConfiguration = .ephemeral) {
    let delegate = SessionDelegate()
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
    if Task.isCancelled { throw .cancelled }
    var urlRequest = URLRequest(url: request.url)
    urlRequest.httpMethod = request.method.rawValue
    for field in request.headers {
      urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
    }
    if !request.body.isEmpty { urlRequest.httpBody = request.body }
    let seconds = Double(request.timeout.components.seconds)
    // A backstop only: the exact deadline is the timer below (Linux rounds this down to whole seconds).
    urlRequest.timeoutInterval = seconds.rounded(.up) + 1
    urlRequest.cachePolicy = .reloadIgnoringLocalCacheData

    let task = session.dataTask(with: urlRequest)
    let exchange = Exchange(request: request, progress: progress)
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

/// State of one URLSession task, shared by the delegate, the timer and the waiting caller.
final class Exchange: Sendable {
  struct State {
    var continuation: CheckedContinuation<Result<TransportResponse, APIError>, Never>?
    var response: HTTPURLResponse?
    var body = Data()
    var timedOut = false
    var declinedChallenge = false
    var finished = false
    var timer: Task<Void, Never>?
  }

  let request: TransportRequest
  let progress: ProgressHandler?
  let state = Mutex(State())

  init(request: TransportRequest, progress: ProgressHandler?) {
    self.request = request
    self.progress = progress
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

  func received(_ response: HTTPURLResponse) {
    state.withLock { $0.response = response }
  }

  func received(_ data: Data) {
    let (count, expected) = state.withLock { s -> (Int, Int64?) in
      s.body.append(data)
      let length = s.response?.expectedContentLength ?? -1
      return (s.body.count, length >= 0 ? length : nil)
    }
    progress?(DownloadProgress(receivedBytes: Int64(count), expectedBytes: expected))
  }

  func complete(error: (any Error)?) {
    let (continuation, result, timer) = state.withLock {
      s -> (
        CheckedContinuation<Result<TransportResponse, APIError>, Never>?, Result<TransportResponse, APIError>,
        Task<Void, Never>?
      ) in
      s.finished = true
      let c = s.continuation
      s.continuation = nil
      return (c, Self.outcome(of: s, error: error, request: request), s.timer)
    }
    timer?.cancel()
    continuation?.resume(returning: result)
  }

  private static func outcome(of s: State, error: (any Error)?, request: TransportRequest) -> Result<
    TransportResponse, APIError
  > {
    let info = request.info
    if s.timedOut { return .failure(.timedOut(limit: request.timeout, request: info)) }
    var headers = HTTPHeaders()
    if let response = s.response {
      for (key, value) in response.allHeaderFields {
        headers.add(name: String(describing: key), value: String(describing: value))
      }
    }
    let expected: Int? = {
      guard let raw = headers.first("Content-Length"), let n = Int(raw), n >= 0 else { return nil }
      let coding = headers.first("Content-Encoding")?.lowercasedASCII() ?? "identity"
      return coding == "identity" && request.method != .head ? n : nil
    }()
    if let error, s.declinedChallenge, let response = s.response,
      (error as NSError).code == NSURLErrorCancelled
    {
      return .success(TransportResponse(statusCode: response.statusCode, headers: headers, body: s.body))
    }
    if let error {
      let code = (error as NSError).code
      if let response = s.response, code != NSURLErrorCancelled, code != NSURLErrorTimedOut {
        if let expected, s.body.count < expected || code == NSURLErrorNetworkConnectionLost {
          return .failure(
            .truncatedBody(info, statusCode: response.statusCode, expected: expected, received: s.body.count))
        }
        if code == NSURLErrorNetworkConnectionLost || code == NSURLErrorUnknown {
          return .failure(
            .truncatedBody(info, statusCode: response.statusCode, expected: nil, received: s.body.count))
        }
      }
      if code == NSURLErrorUnsupportedURL, ["http", "https"].contains(request.url.scheme?.lowercased() ?? "")
      {
        // libcurl's CURLE_UNSUPPORTED_PROTOCOL for an http(s) URL: the reply was not HTTP ("Received
        // HTTP/0.9 when not allowed"), so the request was fine and the response is malformed (BR-20).
        return .failure(.malformedResponse(info, detail: (error as NSError).localizedDescription))
      }
      return .failure(map(code: code, error: error, info: info, limit: request.timeout))
    }
    guard let response = s.response else { return .failure(.emptyResponse(info)) }
    if let expected, s.body.count < expected {
      return .failure(
        .truncatedBody(info, statusCode: response.statusCode, expected: expected, received: s.body.count))
    }
    return .success(TransportResponse(statusCode: response.statusCode, headers: headers, body: s.body))
  }

  private static func map(code: Int, error: any Error, info: RequestInfo, limit: Duration) -> APIError {
    let text = (error as NSError).localizedDescription
    switch code {
    case NSURLErrorCancelled: return .cancelled
    case NSURLErrorTimedOut: return .timedOut(limit: limit, request: info)
    case NSURLErrorCannotConnectToHost, NSURLErrorCannotFindHost, NSURLErrorDNSLookupFailed,
      NSURLErrorNotConnectedToInternet:
      return .cannotConnect(info, reason: text)
    case NSURLErrorNetworkConnectionLost: return .connectionReset(info)
    case NSURLErrorBadServerResponse, NSURLErrorZeroByteResource: return .emptyResponse(info)
    case NSURLErrorSecureConnectionFailed, NSURLErrorServerCertificateHasBadDate,
      NSURLErrorServerCertificateUntrusted, NSURLErrorServerCertificateHasUnknownRoot,
      NSURLErrorServerCertificateNotYetValid, NSURLErrorClientCertificateRejected,
      NSURLErrorClientCertificateRequired:
      return .tlsFailure(info, detail: text)
    case NSURLErrorCannotDecodeContentData, NSURLErrorCannotDecodeRawData, NSURLErrorCannotParseResponse:
      return .malformedResponse(info, detail: text)
    case NSURLErrorBadURL, NSURLErrorUnsupportedURL: return .invalidRequest(text)
    default: return .transportFailure(info, code: code, detail: text)
    }
  }
}

/// Routes URLSession delegate callbacks to the ``Exchange`` of each task.
final class SessionDelegate: NSObject, URLSessionDataDelegate, Sendable {
  private let exchanges = Mutex<[Int: Exchange]>([:])

  func register(_ exchange: Exchange, for id: Int) {
    exchanges.withLock { $0[id] = exchange }
  }

  private func exchange(_ task: URLSessionTask) -> Exchange? {
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

  func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
    exchange(dataTask)?.received(data)
  }

  func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
    let exchange = exchanges.withLock { $0.removeValue(forKey: task.taskIdentifier) }
    exchange?.complete(error: error)
  }
}
