import Foundation
import HTTPCore
import Synchronization

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

extension URLSessionTransport {
  /// Sends the request with a data task whose body is delivered as it arrives (the session delegate's
  /// `didReceive data` calls, the same path as ``send(_:options:)``, so a ``TrustConfiguration`` applies
  /// too). ``TransportRequest/timeout`` bounds the wait for the head; the body has no deadline.
  /// Cancelling the calling task before the head, or ending the body's iteration, cancels the task.
  /// - Throws: the transport cases of ``APIError`` (see ``Transport``), ``APIError/cancelled``.
  public func stream(_ request: TransportRequest) async throws(APIError) -> StreamingResponse {
    if Task.isCancelled { throw .cancelled }
    var urlRequest = try urlRequest(for: request)
    // A stream may be quiet for long: a week as the idle timeout (the head has the deadline below). Not
    // infinity: swift-corelibs-foundation converts it to an integer for libcurl and traps.
    urlRequest.timeoutInterval = 7 * 24 * 3600
    urlRequest.cachePolicy = .reloadIgnoringLocalCacheData
    let task = session.dataTask(with: urlRequest)
    let (body, bodyContinuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    bodyContinuation.onTermination = { _ in task.cancel() }
    let exchange = StreamingExchange(request: request, body: bodyContinuation)
    delegate.register(exchange, for: task.taskIdentifier)
    let limit = request.timeout
    let head = await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<(Int, HTTPHeaders), APIError>, Never>) in
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
    switch head {
    case .success(let (status, headers)):
      return StreamingResponse(statusCode: status, headers: headers, body: body)
    case .failure(let error):
      bodyContinuation.finish()
      throw error
    }
  }
}

/// State of one streamed URLSession task: the head is handed to the waiting caller, body chunks to the
/// response's stream.
final class StreamingExchange: SessionTaskHandler {
  struct State {
    var head: CheckedContinuation<Result<(Int, HTTPHeaders), APIError>, Never>?
    var headDelivered = false
    var statusCode = 0
    var received = 0
    var timedOut = false
    var trustFailure: TLSTrustFailure?
    var finished = false
    var timer: Task<Void, Never>?
  }

  let request: TransportRequest
  let body: AsyncThrowingStream<Data, any Error>.Continuation
  let state = Mutex(State())

  init(request: TransportRequest, body: AsyncThrowingStream<Data, any Error>.Continuation) {
    self.request = request
    self.body = body
  }

  func start(_ continuation: CheckedContinuation<Result<(Int, HTTPHeaders), APIError>, Never>) {
    state.withLock { $0.head = continuation }
  }

  func setTimer(_ timer: Task<Void, Never>) {
    let done = state.withLock { s -> Bool in
      if !s.headDelivered && !s.finished { s.timer = timer }
      return s.headDelivered || s.finished
    }
    if done { timer.cancel() }
  }

  /// Marks the head's deadline as passed; false when the head already arrived or the task finished.
  func markTimedOut() -> Bool {
    state.withLock { s in
      if s.headDelivered || s.finished { return false }
      s.timedOut = true
      return true
    }
  }

  func received(_ response: HTTPURLResponse) {
    let (continuation, timer) = state.withLock { s in
      s.headDelivered = true
      s.statusCode = response.statusCode
      let taken = (s.head, s.timer)
      s.head = nil
      s.timer = nil
      return taken
    }
    timer?.cancel()
    continuation?.resume(returning: .success((response.statusCode, Exchange.headers(of: response))))
  }

  func received(_ data: Data) {
    state.withLock { $0.received += data.count }
    body.yield(data)
  }

  func sent(_ total: Int64, of expected: Int64) {}

  func declineChallenge() {}

  func rejectedTrust(_ failure: TLSTrustFailure) {
    state.withLock { $0.trustFailure = failure }
  }

  func complete(error: (any Error)?) {
    let info = request.info
    let (continuation, timer, s) = state.withLock { s in
      s.finished = true
      let taken = (s.head, s.timer, s)
      s.head = nil
      s.timer = nil
      return taken
    }
    timer?.cancel()
    var failure: APIError?
    if s.timedOut {
      failure = .timedOut(limit: request.timeout, request: info)
    } else if let trust = s.trustFailure {
      failure = .tlsFailure(info, trust)
    } else if let error {
      let code = (error as NSError).code
      if s.headDelivered, code == NSURLErrorNetworkConnectionLost || code == NSURLErrorUnknown {
        failure = .truncatedBody(info, statusCode: s.statusCode, expected: nil, received: s.received)
      } else {
        failure = Exchange.map(code: code, error: error, info: info, limit: request.timeout)
      }
    }
    if let continuation {
      continuation.resume(returning: .failure(failure ?? .emptyResponse(info)))
      body.finish()
    } else if let failure {
      body.finish(throwing: failure)
    } else {
      body.finish()
    }
  }
}
