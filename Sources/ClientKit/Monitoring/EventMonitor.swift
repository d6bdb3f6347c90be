import Foundation
import Synchronization

/// Observes every call of an ``APIClient``: implement the events you need (all have empty defaults).
///
/// Events of one call share its ``CallID``; they arrive in this order: ``requestCreated(_:request:)``,
/// then per attempt ``requestAdapted(_:request:attempt:)``, ``requestSent(_:request:attempt:)``, and
/// ``responseReceived(_:response:attempt:duration:)`` (or the attempt's failure), then
/// ``retryScheduled(_:error:delay:attempt:)`` before another attempt, and finally exactly one of
/// ``requestDecoded(_:response:metrics:)`` or ``requestFailed(_:error:metrics:)``. Called on the calling
/// task, synchronously: keep them quick.
public protocol EventMonitor: Sendable {
  /// The request was built (URL, default and request headers, body) before authentication and adapters.
  func requestCreated(_ call: CallID, request: TransportRequest)
  /// Authentication and adapters ran for attempt `attempt` (1-based).
  func requestAdapted(_ call: CallID, request: TransportRequest, attempt: Int)
  /// The attempt was handed to the transport, exactly as it will be sent.
  func requestSent(_ call: CallID, request: TransportRequest, attempt: Int)
  /// A response arrived for the attempt (whatever its status), after `duration` on the wire.
  func responseReceived(_ call: CallID, response: ResponseInfo, attempt: Int, duration: Duration)
  /// The attempt failed with `error` and another one follows after `delay`.
  func retryScheduled(_ call: CallID, error: APIError, delay: Duration, attempt: Int)
  /// The call succeeded: the response was decoded (or answered from the cache).
  func requestDecoded(_ call: CallID, response: ResponseInfo, metrics: RequestMetrics)
  /// The call failed with `error`.
  func requestFailed(_ call: CallID, error: APIError, metrics: RequestMetrics)
}

extension EventMonitor {
  /// Does nothing.
  public func requestCreated(_ call: CallID, request: TransportRequest) {}
  /// Does nothing.
  public func requestAdapted(_ call: CallID, request: TransportRequest, attempt: Int) {}
  /// Does nothing.
  public func requestSent(_ call: CallID, request: TransportRequest, attempt: Int) {}
  /// Does nothing.
  public func responseReceived(_ call: CallID, response: ResponseInfo, attempt: Int, duration: Duration) {}
  /// Does nothing.
  public func retryScheduled(_ call: CallID, error: APIError, delay: Duration, attempt: Int) {}
  /// Does nothing.
  public func requestDecoded(_ call: CallID, response: ResponseInfo, metrics: RequestMetrics) {}
  /// Does nothing.
  public func requestFailed(_ call: CallID, error: APIError, metrics: RequestMetrics) {}
}

/// Identifies one call (all its attempts) in ``EventMonitor`` events: a number unique in the process.
public struct CallID: Sendable, Hashable, CustomStringConvertible {
  /// The number.
  public let value: UInt64

  private static let counter = AtomicCounter()

  /// The next identifier.
  static func next() -> CallID { CallID(value: counter.next()) }

  /// `#42`.
  public var description: String { "#\(value)" }
}

/// What one call cost: attempts with their timings and sizes.
public struct RequestMetrics: Sendable, Hashable {
  /// One attempt.
  public struct Attempt: Sendable, Hashable {
    /// 1-based.
    public var number: Int
    /// Time from the start of the call to handing this attempt to the transport.
    public var startOffset: Duration
    /// Time on the wire (transport send until response or failure).
    public var duration: Duration
    /// Request body bytes sent.
    public var requestBodyBytes: Int
    /// Response body bytes received (0 when it failed before).
    public var responseBodyBytes: Int
    /// The status code, or nil when the attempt failed below HTTP.
    public var statusCode: Int?
    /// The failure of this attempt in words, or nil.
    public var failure: String?
  }

  /// The call.
  public var call: CallID
  /// Every attempt, in order (empty when answered from the cache).
  public var attempts: [Attempt]
  /// Time from the call to its result, waits and decoding included.
  public var totalDuration: Duration
  /// True when the answer came from the cache without contacting the network.
  public var fromCache: Bool

  /// Request body bytes over all attempts.
  public var bytesSent: Int { attempts.reduce(0) { $0 + $1.requestBodyBytes } }
  /// Response body bytes over all attempts.
  public var bytesReceived: Int { attempts.reduce(0) { $0 + $1.responseBodyBytes } }
}

/// A process-wide counter.
final class AtomicCounter: Sendable {
  private let value = Mutex<UInt64>(0)
  func next() -> UInt64 {
    value.withLock {
      $0 += 1
      return $0
    }
  }
}
