import Foundation
import HTTPCore
import Synchronization

/// A transport that answers from a closure instead of the network, recording every request: for unit
/// tests of requests, adapters, envelopes, retries and token refresh.
///
/// ```swift
/// let stub = StubTransport { request in
///   TransportResponse(statusCode: 200, body: Data(#"{"status":"OK","result":1}"#.utf8))
/// }
/// ```
public final class StubTransport: Transport {
  /// Produces the answer to one request, or throws the transport error to simulate.
  public typealias Handler = @Sendable (TransportRequest) async throws(APIError) -> TransportResponse

  private let handler: Handler
  private let recorded = Mutex<[TransportRequest]>([])

  /// Creates a stub transport.
  /// - Parameter handler: called for every request, concurrently when requests are concurrent.
  public init(_ handler: @escaping Handler) {
    self.handler = handler
  }

  /// Creates a stub that answers every request with the same response.
  public convenience init(statusCode: Int, headers: HTTPHeaders = [:], body: String = "") {
    let response = TransportResponse(statusCode: statusCode, headers: headers, body: Data(body.utf8))
    self.init { _ throws(APIError) in response }
  }

  /// Every request received so far, in arrival order.
  public var requests: [TransportRequest] { recorded.withLock { $0 } }

  /// Records `request`, reports the body size as progress, and returns the handler's answer.
  /// - Throws: whatever the handler throws; ``APIError/cancelled`` when the task is cancelled.
  public func send(_ request: TransportRequest, progress: ProgressHandler?) async throws(APIError)
    -> TransportResponse
  {
    recorded.withLock { $0.append(request) }
    if Task.isCancelled { throw .cancelled }
    let response = try await handler(request)
    if let progress {
      let total = Int64(response.body.count)
      progress(DownloadProgress(receivedBytes: total, expectedBytes: total))
    }
    return response
  }
}
