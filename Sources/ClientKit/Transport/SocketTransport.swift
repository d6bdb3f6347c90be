import Foundation
import HTTPCore

/// A ``Transport`` that speaks HTTP/1.1 over its own TCP sockets with HTTPCore's parser: the default on
/// Linux, and the transport for timing and fault tests everywhere.
///
/// - **Exact deadlines.** ``TransportRequest/timeout`` bounds connect, write, waiting for the head and
///   reading the body together, to the millisecond; the connection is then closed, never reused, so a
///   late answer cannot be read as the answer to a later request.
/// - **Faults reported as such.** Refused → ``APIError/cannotConnect(_:reason:)``; RST →
///   ``APIError/connectionReset(_:)``; close before any byte → ``APIError/emptyResponse(_:)``; close
///   inside the head → ``APIError/connectionLost(_:receivedBytes:)``; close or RST inside the body →
///   ``APIError/truncatedBody(_:statusCode:expected:received:)``; unparseable bytes →
///   ``APIError/malformedResponse(_:detail:)``.
/// - **Keep-alive pool** keyed by `host:port`. An idle connection is checked with a non-blocking
///   `MSG_PEEK` before use. If a reused connection still fails before any response byte (the server
///   closed it in the meantime), the request is sent again on a new connection **only when it is
///   idempotent**; a non-idempotent request reports the error instead of being re-sent silently.
/// - **Headers exactly as received**: order, spelling and repeated fields are kept.
/// - `gzip`/`deflate` content codings are decoded (`Accept-Encoding: gzip` is sent unless disabled).
///
/// Plain `http` only: `https` URLs are rejected with ``APIError/invalidRequest(_:)``; use
/// ``URLSessionTransport`` (or ``AutomaticTransport``) for TLS. Each exchange runs on a thread of its own,
/// blocked in `poll(2)`: never a Swift concurrency thread, never a Dispatch worker.
public final class SocketTransport: Transport {
  private let pool: ConnectionPool
  private let limits: ParserLimits
  private let acceptsGzip: Bool

  /// Creates a transport.
  /// - Parameters:
  ///   - maxIdleConnectionsPerHost: idle keep-alive connections kept per `host:port` (0 disables reuse).
  ///   - idleTimeout: an idle connection older than this is closed instead of reused (default 30 s).
  ///   - limits: bounds for parsing responses (head size, body size in bytes).
  ///   - acceptsGzip: send `Accept-Encoding: gzip` when the request has no `Accept-Encoding`.
  public init(
    maxIdleConnectionsPerHost: Int = 8, idleTimeout: Duration = .seconds(30),
    limits: ParserLimits = ParserLimits(), acceptsGzip: Bool = true
  ) {
    self.pool = ConnectionPool(maxIdlePerHost: maxIdleConnectionsPerHost, idleTimeout: idleTimeout)
    self.limits = limits
    self.acceptsGzip = acceptsGzip
  }

  deinit { pool.closeAll() }

  /// Closes every idle keep-alive connection.
  public func closeIdleConnections() { pool.closeAll() }

  /// Number of idle keep-alive connections to `host:port`.
  public func idleConnectionCount(host: String, port: Int) -> Int { pool.idleCount("\(host):\(port)") }

  /// Sends the request over a pooled or new connection.
  /// - Throws: the transport cases of ``APIError`` (see the type's documentation), ``APIError/cancelled``.
  public func send(_ request: TransportRequest, progress: ProgressHandler?) async throws(APIError)
    -> TransportResponse
  {
    guard request.url.scheme?.lowercased() == "http" else {
      throw .invalidRequest("SocketTransport speaks plain http only, not \(request.url.scheme ?? "?")")
    }
    guard let host = request.url.host, !host.isEmpty else {
      throw .invalidRequest("the URL \(request.url) has no host")
    }
    if Task.isCancelled { throw .cancelled }
    let control = ExchangeControl()
    let port = request.url.port ?? 80
    let (pool, limits, acceptsGzip) = (self.pool, self.limits, self.acceptsGzip)
    let result = await withTaskCancellationHandler {
      await withCheckedContinuation {
        (continuation: CheckedContinuation<Result<TransportResponse, APIError>, Never>) in
        // One thread per exchange: it blocks in poll(2) for as long as the server takes. Dispatch's
        // non-overcommit pool (what a concurrent queue targets) grows by about one thread per second on
        // Linux when its workers block, so 30 concurrent slow calls took seconds and starved everything
        // else queued on Dispatch, URLSession's callbacks included.
        let thread = Thread {
          let exchange = SocketExchange(
            request: request, host: host, port: port, control: control, pool: pool, limits: limits,
            acceptsGzip: acceptsGzip, progress: progress)
          continuation.resume(returning: exchange.run())
        }
        thread.name = "ClientKit.SocketTransport"
        thread.stackSize = 512 * 1024
        thread.start()
      }
    } onCancel: {
      control.cancel()
    }
    return try result.get()
  }
}
