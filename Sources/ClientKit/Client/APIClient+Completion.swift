import Dispatch
import Foundation

extension APIClient {
  /// Sends `request` and delivers the result to `completion` on `queue`.
  /// - Parameters:
  ///   - request: the request.
  ///   - queue: where `completion` runs (default the main queue).
  ///   - progress: download progress, called on an arbitrary thread, or nil.
  ///   - completion: receives the value or the ``APIError``, exactly once (``APIError/cancelled`` after
  ///     ``CancellableRequest/cancel()``).
  /// - Returns: a handle that cancels the call.
  @discardableResult
  public func send<R: Request>(
    _ request: R, queue: DispatchQueue = .main, progress: ProgressHandler? = nil,
    completion: @escaping @Sendable (Result<R.Response, APIError>) -> Void
  ) -> CancellableRequest {
    let task = Task {
      let result: Result<R.Response, APIError>
      do throws(APIError) {
        result = .success(try await response(request, progress: progress).value)
      } catch {
        result = .failure(error)
      }
      queue.async { completion(result) }
    }
    return CancellableRequest(task)
  }

  /// Sends `request` and routes the outcome to one of several handlers on `queue`: the per-call form of
  /// "success, application error, status error" handling.
  /// - Parameters:
  ///   - request: the request.
  ///   - queue: where the handler runs (default the main queue).
  ///   - onSuccess: receives the value.
  ///   - onApplicationError: receives an envelope failure (NG, failing code) with its presentation hint,
  ///     whatever the HTTP status.
  ///   - onStatusError: receives an unacceptable status without a failure envelope.
  ///   - onFailure: receives every other error (transport, decoding, cancelled...).
  /// - Returns: a handle that cancels the call.
  @discardableResult
  public func send<R: Request>(
    _ request: R, queue: DispatchQueue = .main,
    onSuccess: @escaping @Sendable (R.Response) -> Void,
    onApplicationError: @escaping @Sendable (ApplicationError, APIError) -> Void,
    onStatusError: @escaping @Sendable (ResponseInfo, APIError) -> Void,
    onFailure: @escaping @Sendable (APIError) -> Void
  ) -> CancellableRequest {
    send(request, queue: queue) { result in
      switch result {
      case .success(let value):
        onSuccess(value)
      case .failure(let error):
        if let application = error.applicationError {
          onApplicationError(application, error)
        } else if case .unacceptableStatus(let response, _) = error {
          onStatusError(response, error)
        } else {
          onFailure(error)
        }
      }
    }
  }
}
