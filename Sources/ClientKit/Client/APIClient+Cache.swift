import Dispatch
import Foundation

extension APIClient {
  /// "Cached first, then fresh": yields the stored response at once (when there is one and it decodes),
  /// fresh or stale, with or without a validator, then the response from the network (always asked, even
  /// when the stored one is still fresh; revalidated with the stored validators when it has some), then
  /// finishes.
  ///
  /// The second element's ``APIResponse/source`` is `.revalidated` when the server answered 304 (same
  /// content) and `.network` otherwise. Without a ``ResponseCache`` or for non-`GET` requests the
  /// sequence has only the network element. A network failure ends the sequence with that ``APIError``
  /// after the cached element. Cancelling the consuming task cancels the request.
  /// - Parameter request: the request.
  /// - Returns: one or two responses.
  public func cachedThenFresh<R: Request>(_ request: R) -> AsyncThrowingStream<
    APIResponse<R.Response>, any Error
  > {
    AsyncThrowingStream { continuation in
      let task = Task {
        if let cached = cachedResponse(request) { continuation.yield(cached) }
        do {
          continuation.yield(
            try await decodedResponse(request, options: TransferOptions(), forceNetwork: true))
          continuation.finish()
        } catch {
          continuation.finish(throwing: error)
        }
      }
      continuation.onTermination = { _ in task.cancel() }
    }
  }

  /// The callback form of ``cachedThenFresh(_:)``: `completion` runs up to twice on `queue`, first with
  /// the cached value (if any), then with the fresh result.
  /// - Parameters:
  ///   - request: the request.
  ///   - queue: where `completion` runs.
  ///   - completion: receives each delivery; the `Source` tells cached from fresh.
  /// - Returns: a handle that cancels the call.
  @discardableResult
  public func sendCachedThenFresh<R: Request>(
    _ request: R, queue: DispatchQueue = .main,
    completion: @escaping @Sendable (Result<APIResponse<R.Response>, APIError>) -> Void
  ) -> CancellableRequest {
    let task = Task {
      if let cached = cachedResponse(request) { queue.async { completion(.success(cached)) } }
      let result: Result<APIResponse<R.Response>, APIError>
      do throws(APIError) {
        result = .success(try await decodedResponse(request, options: TransferOptions(), forceNetwork: true))
      } catch {
        result = .failure(error)
      }
      queue.async { completion(result) }
    }
    return CancellableRequest(task)
  }

  /// The stored response for `request`, decoded, or nil when there is none or it does not decode.
  public func cachedResponse<R: Request>(_ request: R) -> APIResponse<R.Response>? {
    guard let key = cacheKey(for: request), let stored = cache?.lookup(key),
      let url = try? makeURL(path: request.path, query: request.queryItems)
    else { return nil }
    let requestInfo = RequestInfo(method: request.method, url: url)
    let info = ResponseInfo(
      request: requestInfo, statusCode: stored.statusCode, headers: stored.headers, body: stored.body)
    guard
      let value = try? request.parseResponse(
        info, decoder: request.decoder ?? decoder, envelope: request.envelope ?? envelope)
    else { return nil }
    return APIResponse(
      value: value, statusCode: stored.statusCode, headers: stored.headers, body: stored.body,
      duration: .zero, attempts: 0, source: .cache, request: requestInfo)
  }
}
