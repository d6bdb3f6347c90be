import Foundation
import HTTPCore

/// A complete response as a transport returns it: the whole body has been received and checked against
/// its framing (a short body is an error, never a response).
public struct TransportResponse: Sendable, Hashable {
  /// Status code.
  public var statusCode: Int
  /// Header fields in order, names as received.
  public var headers: HTTPHeaders
  /// The content after removing transfer coding (and content coding where the transport decodes it).
  public var body: Data

  /// Creates a response.
  public init(statusCode: Int, headers: HTTPHeaders = [:], body: Data = Data()) {
    self.statusCode = statusCode
    self.headers = headers
    self.body = body
  }
}
