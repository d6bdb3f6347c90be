import Foundation

/// A response whose body was written to a file by ``APIClient/download(_:to:progress:)``.
public struct DownloadResponse: Sendable, Hashable {
  /// The file holding the body.
  public var fileURL: URL
  /// Number of body bytes written.
  public var byteCount: Int
  /// Status code.
  public var statusCode: Int
  /// Header fields in order.
  public var headers: HTTPHeaders
  /// The request that was answered.
  public var request: RequestInfo
  /// Timings, sizes and attempts.
  public var metrics: RequestMetrics

  /// Every value of header `name` (any spelling) combined with ", ", or nil.
  public func header(_ name: String) -> String? { headers[name] }
}

extension APIClient {
  /// Downloads the body of `request` to `destination` (created or replaced), streaming it to disk with no
  /// size limit, with the same defaults, authentication, adapters, retries and deadline as every call.
  ///
  /// ```swift
  /// let file = FileManager.default.temporaryDirectory.appendingPathComponent("video.mp4")
  /// let done = try await client.download(Endpoint<Data>(.get, "/videos/1"), to: file) { p in
  ///   print(p.fraction ?? 0)            // from 0 to 1, never decreasing within an attempt
  /// }
  /// ```
  /// ``SocketTransport`` and ``URLSessionTransport`` write the bytes as they arrive (``SocketTransport``
  /// then does not ask for gzip); other transports return the body in memory and the client writes it.
  /// There is no resume: a retried download starts again from the first byte.
  /// - Parameters:
  ///   - request: the request; its `Response` type is not used (no decoding, no envelope).
  ///   - destination: a file URL.
  ///   - progress: download progress of each attempt, or nil.
  /// - Returns: the file and the response head.
  /// - Throws: any ``APIError`` case; a status outside ``Request/acceptableStatusCodes`` is
  ///   ``APIError/unacceptableStatus(_:application:)`` with the body read back (and the file removed).
  public func download<R: Request>(_ request: R, to destination: URL, progress: ProgressHandler? = nil)
    async throws(APIError) -> DownloadResponse
  {
    let call = CallID.next()
    let outcome = try await perform(
      request, call: call, options: TransferOptions(downloadProgress: progress, bodyFile: destination),
      forceNetwork: true)
    let metrics = outcome.metrics(clock: outcome.clock)
    for monitor in monitors { monitor.requestDecoded(call, response: outcome.info, metrics: metrics) }
    return DownloadResponse(
      fileURL: outcome.bodyFile ?? destination, byteCount: outcome.bodyByteCount,
      statusCode: outcome.info.statusCode, headers: outcome.info.headers, request: outcome.info.request,
      metrics: metrics)
  }
}
