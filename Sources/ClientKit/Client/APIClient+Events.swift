import Foundation
import HTTPCore

extension APIClient {
  /// Opens a server-sent events stream (WHATWG HTML §9.2, what a browser's `EventSource` does) and returns
  /// its events as they arrive.
  ///
  /// ```swift
  /// for try await event in client.events(for: Endpoint<EmptyResponse>(.get, "/feeds/prices")) {
  ///   print(event.event, event.id, event.data)
  /// }
  /// ```
  ///
  /// Each connection is built like any request (base URL, default headers and query, authentication,
  /// adapters) with `Accept: text/event-stream` (replacing the client's default unless the request sets `Accept`), `Cache-Control:
  /// no-cache` and, once an `id` was received or ``EventStreamConfiguration/lastEventID`` is set,
  /// `Last-Event-ID`. The request's `timeout` bounds connecting and waiting for the head; the body has no
  /// deadline. Retries, the response cache and envelopes do not apply.
  ///
  /// - **Reconnection.** When the response ends or the connection fails, the client waits the
  ///   reconnection time (the last `retry` field's, else ``EventStreamConfiguration/reconnectionTime``,
  ///   with the client's `sleep`) and connects again with `Last-Event-ID`.
  /// - **The end.** A `204 No Content` finishes the stream (the server's way to stop reconnection). Any
  ///   other status than `200` throws ``APIError/unacceptableStatus(_:application:)``, and a `200` that is
  ///   not `text/event-stream` throws ``APIError/malformedResponse(_:detail:)``: neither is retried (WHATWG's
  ///   "fail the connection").
  /// - **Cancellation.** Cancelling the task that iterates, or leaving the loop, closes the connection.
  ///
  /// - Parameters:
  ///   - request: the request; its `Response` type is not used.
  ///   - configuration: reconnection and parsing settings.
  /// - Returns: the events; the stream throws an ``APIError``.
  public func events<R: Request>(
    for request: R, configuration: EventStreamConfiguration = EventStreamConfiguration()
  ) -> AsyncThrowingStream<ServerSentEvent, any Error> {
    let (events, continuation) = AsyncThrowingStream<ServerSentEvent, any Error>.makeStream()
    let task = Task {
      do throws(APIError) {
        try await self.readEvents(request, configuration: configuration, into: continuation)
        continuation.finish()
      } catch {
        if case .cancelled = error { continuation.finish() } else { continuation.finish(throwing: error) }
      }
    }
    continuation.onTermination = { _ in task.cancel() }
    return events
  }

  /// The connect, read, wait and reconnect loop of ``events(for:configuration:)``.
  private func readEvents<R: Request>(
    _ request: R, configuration: EventStreamConfiguration,
    into continuation: AsyncThrowingStream<ServerSentEvent, any Error>.Continuation
  ) async throws(APIError) {
    var parser = ServerSentEventParser(
      lastEventID: configuration.lastEventID, maxLineBytes: configuration.maxLineBytes)
    var failures = 0
    while true {
      if Task.isCancelled { throw .cancelled }
      var (built, _) = try await makeTransportRequest(request)
      if !request.headers.contains("Accept") {
        built.headers.replaceOrAdd(name: "Accept", value: "text/event-stream")
      }
      built.headers.replaceOrAdd(name: "Cache-Control", value: "no-cache")
      built.headers.remove(name: "Last-Event-ID")
      if !parser.lastEventID.isEmpty { built.headers.add(name: "Last-Event-ID", value: parser.lastEventID) }
      var failure: APIError?
      var sawEvent = false
      do throws(APIError) {
        let response = try await transport.stream(built)
        if response.statusCode == 204 { return }
        let info = ResponseInfo(
          request: built.info, statusCode: response.statusCode, headers: response.headers)
        guard response.statusCode == 200 else { throw .unacceptableStatus(info, application: nil) }
        let mediaType = response.headers.first("Content-Type")?.split(separator: ";").first
          .map { String($0).trimmingOWS().lowercasedASCII() }
        guard mediaType == "text/event-stream" else {
          throw .malformedResponse(
            built.info,
            detail: "the response's Content-Type is \(response.headers.first("Content-Type") ?? "missing"), "
              + "not text/event-stream")
        }
        parser.reset()
        do {
          for try await chunk in response.body {
            for event in try parser.parse(chunk) {
              sawEvent = true
              continuation.yield(event)
            }
          }
          parser.finish()
        } catch let tooLong as ServerSentEventParser.LineTooLong {
          throw .malformedResponse(
            built.info, detail: "an event stream line is longer than \(tooLong.limit) bytes")
        } catch let error as APIError {
          throw error
        } catch {
          throw .transportFailure(built.info, code: 0, detail: "\(error)")
        }
      } catch {
        switch error {
        case .cancelled, .unacceptableStatus, .malformedResponse, .invalidRequest, .tlsFailure:
          throw error
        default:
          failure = error
        }
      }
      if Task.isCancelled { throw .cancelled }
      if let failure {
        guard configuration.reconnects else { throw failure }
        failures = sawEvent ? 0 : failures + 1
        if let limit = configuration.maxReconnectionAttempts, failures > limit { throw failure }
      } else {
        guard configuration.reconnects else { return }
        failures = 0
      }
      do {
        try await sleep(parser.reconnectionTime ?? configuration.reconnectionTime)
      } catch {
        throw .cancelled
      }
    }
  }
}
