import Foundation
import HTTPCore

/// A response whose body is read as it arrives: the head at once, the content as a stream of chunks (what
/// server-sent events need). Ending the iteration of ``body`` (breaking out, or cancelling the task that
/// iterates) closes the connection.
public struct StreamingResponse: Sendable {
  /// Status code of the final response.
  public var statusCode: Int
  /// Header fields as received.
  public var headers: HTTPHeaders
  /// The content, after removing transfer coding, in the chunks it arrived in. It finishes when the
  /// response ends and throws an ``APIError`` when the connection fails first
  /// (``APIError/truncatedBody(_:statusCode:expected:received:)``, ``APIError/connectionReset(_:)``…).
  public var body: AsyncThrowingStream<Data, any Error>

  /// Creates a streaming response.
  public init(statusCode: Int, headers: HTTPHeaders, body: AsyncThrowingStream<Data, any Error>) {
    self.statusCode = statusCode
    self.headers = headers
    self.body = body
  }
}

extension Transport {
  /// Sends `request` and returns once the response head arrived, with the body as a stream. The default
  /// implementation waits for the whole response with ``send(_:progress:)`` and yields its body as one
  /// chunk (right for ``StubTransport``); ``SocketTransport`` and ``URLSessionTransport`` stream.
  ///
  /// ``TransportRequest/timeout`` bounds connecting and waiting for the head only; the body may take as
  /// long as the server keeps it open.
  /// - Throws: the transport cases of ``APIError``, or ``APIError/cancelled``.
  public func stream(_ request: TransportRequest) async throws(APIError) -> StreamingResponse {
    let response = try await send(request, progress: nil)
    let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    if !response.body.isEmpty { continuation.yield(response.body) }
    continuation.finish()
    return StreamingResponse(statusCode: response.statusCode, headers: response.headers, body: body)
  }
}
