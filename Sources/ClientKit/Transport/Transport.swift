import HTTPCore

/// Sends one HTTP request and returns the complete response: the layer under ``APIClient``.
///
/// Implementations map every failure to an ``APIError`` transport case (``APIError/timedOut(limit:request:)``,
/// ``APIError/cannotConnect(_:reason:)``, ``APIError/connectionReset(_:)``, ``APIError/emptyResponse(_:)``,
/// ``APIError/connectionLost(_:receivedBytes:)``, ``APIError/truncatedBody(_:statusCode:expected:received:)``,
/// ``APIError/malformedResponse(_:detail:)``, ``APIError/tlsFailure(_:_:)``, ``APIError/cancelled``),
/// enforce ``TransportRequest/timeout`` as a total deadline, stop when the calling task is cancelled, and
/// never re-send a request that is not idempotent.
///
/// Which transport ``APIClient`` uses when none is given: ``URLSessionTransport`` on Apple platforms,
/// ``AutomaticTransport`` on Linux: ``SocketTransport`` for `http` (Linux `URLSession` rounds timeouts down
/// to whole seconds and may re-send a request on a reused connection) and ``URLSessionTransport`` for
/// `https`.
public protocol Transport: Sendable {
  /// Sends `request` and waits for the whole response.
  /// - Parameters:
  ///   - request: the built request.
  ///   - progress: called as body bytes arrive, or nil.
  /// - Returns: the response, whatever its status code.
  /// - Throws: an ``APIError`` transport case, or ``APIError/cancelled``.
  func send(_ request: TransportRequest, progress: ProgressHandler?) async throws(APIError)
    -> TransportResponse

  /// Sends `request` with upload and download progress and, when ``TransferOptions/bodyFile`` is set,
  /// writes the body to that file. Has a default implementation (see the extension).
  /// - Returns: the response; its ``TransportResponse/bodyFile`` is set when the body went to a file.
  /// - Throws: as ``send(_:progress:)``.
  func send(_ request: TransportRequest, options: TransferOptions) async throws(APIError) -> TransportResponse

  /// Sends `request` and returns as soon as the response head arrived, the body then read as it comes
  /// (server-sent events). Has a default implementation that buffers (see ``StreamingResponse``).
  /// - Throws: as ``send(_:progress:)``.
  func stream(_ request: TransportRequest) async throws(APIError) -> StreamingResponse
}

/// What a transport is asked to do besides sending: report progress both ways and, for downloads, write
/// the response body to a file instead of memory.
public struct TransferOptions: Sendable {
  /// Receives download progress, or nil.
  public var downloadProgress: ProgressHandler?
  /// Receives upload progress (request body bytes written), or nil.
  public var uploadProgress: ProgressHandler?
  /// When set, the body is written to this file (created or replaced) as it arrives and
  /// ``TransportResponse/bodyFile`` is set; no body size limit then applies.
  public var bodyFile: URL?
  /// When greater than 0, ``bodyFile`` already holds this many bytes of the body (a resumed download,
  /// whose request carries `Range: bytes=N-`): a `206` response's body is written after them, any other
  /// status replaces the file. Progress then counts the bytes in the file. Default 0.
  public var bodyFileOffset: Int64
  /// Called once with the status and header fields of the final response head as soon as it arrives,
  /// before its body (what a download needs to be resumed if the body is cut short), or nil.
  public var responseHead: (@Sendable (_ statusCode: Int, _ headers: HTTPHeaders) -> Void)?
  /// Header fields the client adds to every attempt after the adapters (`Range`/`If-Range` of a resumed
  /// download).
  var extraHeaders: HTTPHeaders = [:]

  /// Creates options.
  public init(
    downloadProgress: ProgressHandler? = nil, uploadProgress: ProgressHandler? = nil, bodyFile: URL? = nil,
    bodyFileOffset: Int64 = 0,
    responseHead: (@Sendable (_ statusCode: Int, _ headers: HTTPHeaders) -> Void)? = nil
  ) {
    self.downloadProgress = downloadProgress
    self.uploadProgress = uploadProgress
    self.bodyFile = bodyFile
    self.bodyFileOffset = max(0, bodyFileOffset)
    self.responseHead = responseHead
  }
}

extension Transport {
  /// Sends with ``TransferOptions``. The default implementation calls ``send(_:progress:)`` with the
  /// download progress only and keeps the body in memory (the client then writes the file itself);
  /// ``SocketTransport`` and ``URLSessionTransport`` stream to the file and report upload progress.
  /// - Throws: whatever ``send(_:progress:)`` throws.
  public func send(_ request: TransportRequest, options: TransferOptions) async throws(APIError)
    -> TransportResponse
  {
    try await send(request, progress: options.downloadProgress)
  }
}
