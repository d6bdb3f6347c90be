import Foundation
import HTTPCore

/// A complete response as a transport returns it: the whole body has been received and checked against
/// its framing (a short body is an error, never a response).
public struct TransportResponse: Sendable, Hashable {
  /// Status code.
  public var statusCode: Int
  /// Header fields in order, names as received.
  public var headers: HTTPHeaders
  /// The content after removing transfer coding (and content coding where the transport decodes it);
  /// empty when it went to ``bodyFile``.
  public var body: Data
  /// The file holding the body, when the request asked for one (``TransferOptions/bodyFile``) and the
  /// transport streamed it there; nil otherwise.
  public var bodyFile: URL?
  /// Number of body bytes received (in ``body`` or ``bodyFile``).
  public var bodyByteCount: Int

  /// Creates a response.
  public init(
    statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data(), bodyFile: URL? = nil,
    bodyByteCount: Int? = nil
  ) {
    self.statusCode = statusCode
    self.headers = headers
    self.body = body
    self.bodyFile = bodyFile
    self.bodyByteCount = bodyByteCount ?? body.count
  }
}
