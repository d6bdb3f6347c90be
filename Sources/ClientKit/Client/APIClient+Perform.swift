import Foundation
import HTTPCore

#if canImport(FoundationNetworking)
  import FoundationNetworking
#endif

// One call, everything up to decoding, as a short loop over stages: the cache (a fresh stored answer),
// preparing an attempt (build, adapt, the deadline's budget, conditional fields), sending it (the
// transport, a download written out, the attempt's metrics), validating the answer (revalidation, the
// status check, storing in the cache) and, after a failure, the retry decision.
extension APIClient {
  /// The result of ``perform(_:call:options:forceNetwork:)``: the response and how it was obtained.
  struct Outcome {
    var info: ResponseInfo
    var source: ResponseSource
    var attempts: [RequestMetrics.Attempt]
    var call: CallID
    var start: ContinuousClock.Instant
    var clock: ContinuousClock
    var bodyFile: URL?
    var bodyByteCount: Int

    func metrics(clock: ContinuousClock) -> RequestMetrics {
      RequestMetrics(
        call: call, attempts: attempts, totalDuration: clock.now - start, fromCache: source == .cache)
    }
  }

  /// What one call has done so far: its clock and deadlines, the attempts sent and the retries granted.
  struct CallState {
    let call: CallID
    let clock = ContinuousClock()
    let start: ContinuousClock.Instant
    /// The limit of one attempt (the request's timeout, else the client's).
    let attemptLimit: Duration
    /// The overall limit, or nil for none (``APIClient/totalLimit(for:)``).
    let totalLimit: Duration?
    var attempts: [RequestMetrics.Attempt] = []
    /// Retries scheduled so far.
    var retries = 0
    /// Retries granted by each retrier of the chain, in the chain's order.
    var granted: [Int]
    /// The last request sent (or about to be), for a deadline report.
    var lastRequest: RequestInfo?

    init(call: CallID, attemptLimit: Duration, totalLimit: Duration?, retrierCount: Int) {
      self.call = call
      self.start = clock.now
      self.attemptLimit = attemptLimit
      self.totalLimit = totalLimit
      self.granted = [Int](repeating: 0, count: retrierCount)
    }

    var deadline: ContinuousClock.Instant? { totalLimit.map { start + $0 } }

    /// ``APIError/deadlineExceeded(_:)`` with what the call did.
    func deadlineExceeded() -> APIError {
      .deadlineExceeded(
        TimeoutReport(
          totalLimit: totalLimit ?? attemptLimit, attemptLimit: attemptLimit, attempts: attempts.count,
          elapsed: clock.now - start, request: lastRequest, lastFailure: nil))
    }

    func outcome(_ info: ResponseInfo, source: ResponseSource, bodyFile: URL?, bodyByteCount: Int) -> Outcome
    {
      Outcome(
        info: info, source: source, attempts: attempts, call: call, start: start, clock: clock,
        bodyFile: bodyFile, bodyByteCount: bodyByteCount)
    }
  }

  /// An attempt built and ready to send.
  struct PreparedAttempt {
    var request: TransportRequest
    /// The stored response whose validators the attempt carries, or nil.
    var stored: CachedResponse?
    /// The overall deadline cut the attempt's own timeout short (by more than clock noise), so a time-out
    /// is the call's deadline, not the attempt's.
    var clippedByDeadline: Bool
  }

  /// An attempt's answer, before validation.
  struct ReceivedAnswer {
    var info: ResponseInfo
    var source: ResponseSource
    var sent: TransportRequest
    var requestTime: Date
    var bodyFile: URL?
    var bodyByteCount: Int
  }

  /// Everything up to decoding: cache, attempts, validation, retries. Reports ``EventMonitor`` events (not
  /// the final decoded/failed one on success; on failure it reports
  /// ``EventMonitor/requestFailed(_:error:metrics:)`` itself).
  func perform<R: Request>(
    _ request: R, call: CallID, options: TransferOptions, forceNetwork: Bool
  ) async throws(APIError) -> Outcome {
    // The retry chain: who is asked after a failed attempt, in order.
    let retriers: [any Retrier] = [authenticationInterceptor] + interceptors + [retrier]
    var state = CallState(
      call: call, attemptLimit: request.timeout ?? timeout, totalLimit: totalLimit(for: request),
      retrierCount: retriers.count)
    let cacheKey = cacheKey(for: request)
    if !forceNetwork, var info = freshStoredAnswer(for: request, cacheKey: cacheKey) {
      do throws(APIError) {
        try checkStatus(&info, of: request, bodyFile: nil)
      } catch {
        throw failed(error, state)
      }
      return state.outcome(info, source: .cache, bodyFile: nil, bodyByteCount: info.body.count)
    }
    while true {
      if Task.isCancelled { throw failed(.cancelled, state) }
      var clippedByDeadline = false
      do throws(APIError) {
        let attempt = try await prepareAttempt(request, cacheKey: cacheKey, options: options, state: &state)
        clippedByDeadline = attempt.clippedByDeadline
        var answer = try await send(attempt, cacheKey: cacheKey, options: options, state: &state)
        try checkStatus(&answer.info, of: request, bodyFile: answer.bodyFile)
        store(answer, for: request, cacheKey: cacheKey)
        return state.outcome(
          answer.info, source: answer.source, bodyFile: answer.bodyFile, bodyByteCount: answer.bodyByteCount)
      } catch {
        let delay = try await retryDelay(
          after: error, clippedByDeadline: clippedByDeadline, request: request, retriers: retriers,
          state: &state)
        for monitor in monitors {
          monitor.retryScheduled(call, error: error, delay: delay, attempt: state.attempts.count)
        }
        do {
          try await sleep(delay)
        } catch {
          throw failed(.cancelled, state)
        }
      }
    }
  }

  /// Reports `error` as the call's failure to the monitors and returns it.
  func failed(_ error: APIError, _ state: CallState) -> APIError {
    let metrics = RequestMetrics(
      call: state.call, attempts: state.attempts, totalDuration: state.clock.now - state.start,
      fromCache: false)
    for monitor in monitors { monitor.requestFailed(state.call, error: error, metrics: metrics) }
    return error
  }

  // MARK: - Stages

  /// The cache stage: a fresh stored response answers without the network (RFC 9111 §4.2), unless the
  /// request says `Cache-Control: no-cache`.
  func freshStoredAnswer<R: Request>(for request: R, cacheKey: String?) -> ResponseInfo? {
    guard let cacheKey, let cache, let stored = cache.lookup(cacheKey),
      stored.isFresh(heuristicFraction: cache.heuristicFraction),
      !request.headers.hasToken("no-cache", in: "Cache-Control")
    else { return nil }
    let url = (try? makeURL(path: request.path, query: request.queryItems)) ?? baseURL
    return ResponseInfo(
      request: RequestInfo(method: request.method, url: url), statusCode: stored.statusCode,
      headers: stored.headers, body: stored.body)
  }

  /// Builds the next attempt: the request adapted, the transfer's extra fields, the deadline's budget (the
  /// attempt's timeout cut to what is left of the overall deadline) and the validators of a stored
  /// response (RFC 9110 §13.1).
  /// - Throws: the build's errors; ``APIError/deadlineExceeded(_:)`` when no time is left.
  func prepareAttempt<R: Request>(
    _ request: R, cacheKey: String?, options: TransferOptions, state: inout CallState
  ) async throws(APIError) -> PreparedAttempt {
    let isFirst = state.attempts.isEmpty && state.retries == 0
    var (outgoing, _) = try await makeTransportRequest(request, created: isFirst ? state.call : nil)
    for field in options.extraHeaders {
      outgoing.headers.replaceOrAdd(name: field.name, value: field.value)
    }
    for monitor in monitors {
      monitor.requestAdapted(state.call, request: outgoing, attempt: state.attempts.count + 1)
    }
    var clippedByDeadline = false
    if let deadline = state.deadline {
      let remaining = deadline - state.clock.now
      guard remaining > .zero else { throw state.deadlineExceeded() }
      if remaining < outgoing.timeout {
        // Cut short by the overall deadline by more than clock noise. The first attempt under the
        // default (total = per-attempt) is never clipped: the time spent before it is sent (a busy
        // machine: milliseconds) must not turn its own timeout into a deadline.
        let defaultTotal = (request.totalTimeout ?? totalTimeout) == nil
        clippedByDeadline =
          !(defaultTotal && state.attempts.isEmpty) && remaining + .milliseconds(1) < outgoing.timeout
        outgoing.timeout = remaining
      }
    }
    let stored = cacheKey.flatMap { cache?.lookup($0) }
    if let stored {
      if let etag = stored.etag, !outgoing.headers.contains("If-None-Match") {
        outgoing.headers.add(name: "If-None-Match", value: etag)
      }
      if let date = stored.lastModified, !outgoing.headers.contains("If-Modified-Since") {
        outgoing.headers.add(name: "If-Modified-Since", value: date)
      }
    }
    state.lastRequest = outgoing.info
    return PreparedAttempt(request: outgoing, stored: stored, clippedByDeadline: clippedByDeadline)
  }

  /// Sends an attempt and records it in the call's metrics (a transport failure too, unless the call ends
  /// with it); a `304` to a conditional request becomes the stored response, updated (RFC 9111 §4.3.4).
  func send(
    _ attempt: PreparedAttempt, cacheKey: String?, options: TransferOptions, state: inout CallState
  ) async throws(APIError) -> ReceivedAnswer {
    let outgoing = attempt.request
    for monitor in monitors {
      monitor.requestSent(state.call, request: outgoing, attempt: state.attempts.count + 1)
    }
    let requestTime = Date()
    let sentAt = state.clock.now
    let raw: TransportResponse
    let wire: Duration
    let bodyFile: URL?
    var body: Data
    do throws(APIError) {
      raw = try await transport.send(outgoing, options: options)
      wire = state.clock.now - sentAt
      (body, bodyFile) = try writeDownload(raw, options: options)
    } catch {
      if !endsCall(error) {
        state.attempts.append(
          RequestMetrics.Attempt(
            number: state.attempts.count + 1, startOffset: sentAt - state.start,
            duration: state.clock.now - sentAt, requestBodyBytes: outgoing.body.count, responseBodyBytes: 0,
            statusCode: nil, failure: error.description))
      }
      throw error
    }
    var info = ResponseInfo(
      request: outgoing.info, statusCode: raw.statusCode, headers: raw.headers, body: body)
    state.attempts.append(
      RequestMetrics.Attempt(
        number: state.attempts.count + 1, startOffset: sentAt - state.start, duration: wire,
        requestBodyBytes: outgoing.body.count, responseBodyBytes: raw.bodyByteCount,
        statusCode: raw.statusCode, failure: nil))
    for monitor in monitors {
      monitor.responseReceived(state.call, response: info, attempt: state.attempts.count, duration: wire)
    }
    var source = ResponseSource.network
    if raw.statusCode == 304, attempt.stored != nil, let cacheKey,
      let updated = cache?.revalidated(cacheKey, with: raw.headers, requestTime: requestTime)
    {
      body = updated.body
      info = ResponseInfo(
        request: outgoing.info, statusCode: updated.statusCode, headers: updated.headers, body: body)
      source = .revalidated
    }
    return ReceivedAnswer(
      info: info, source: source, sent: outgoing, requestTime: requestTime, bodyFile: bodyFile,
      bodyByteCount: raw.bodyByteCount)
  }

  /// A transport without file support returned the body in memory: writes it to the requested file (after
  /// the bytes kept when a resumed download got its 206).
  /// - Returns: the body left in memory (empty when written) and the file holding it, if any.
  /// - Throws: ``APIError/invalidRequest(_:)`` when the file cannot be written.
  func writeDownload(_ raw: TransportResponse, options: TransferOptions) throws(APIError) -> (Data, URL?) {
    guard let file = options.bodyFile, raw.bodyFile == nil else { return (raw.body, raw.bodyFile) }
    do {
      if options.bodyFileOffset > 0, raw.statusCode == 206 {
        let handle = try FileHandle(forWritingTo: file)
        defer { try? handle.close() }
        try handle.truncate(atOffset: UInt64(options.bodyFileOffset))
        try handle.seekToEnd()
        try handle.write(contentsOf: raw.body)
      } else {
        try raw.body.write(to: file, options: .atomic)
      }
    } catch {
      throw APIError.invalidRequest("cannot write the download to \(file.path): \(error)")
    }
    return (Data(), file)
  }

  /// The one status check, for answers from the network and the cache alike: a status the request does
  /// not accept is ``APIError/unacceptableStatus(_:application:)`` with the envelope's application error,
  /// if any; a download's error body is read back (up to 1 MiB) and its file removed.
  func checkStatus<R: Request>(_ info: inout ResponseInfo, of request: R, bodyFile: URL?) throws(APIError) {
    guard !request.acceptableStatusCodes.contains(info.statusCode) else { return }
    if let file = bodyFile {
      if let data = try? Data(contentsOf: file) { info.body = data.prefix(1 << 20) }
      try? FileManager.default.removeItem(at: file)
    }
    let failure = (request.envelope ?? envelope).flatMap {
      ResponseDecoding.applicationError(in: info.body, envelope: $0)
    }
    throw .unacceptableStatus(info, application: failure)
  }

  /// Stores a network answer to a cacheable `GET` (RFC 9111 §3), or removes the entry it may not replace.
  func store<R: Request>(_ answer: ReceivedAnswer, for request: R, cacheKey: String?) {
    guard answer.source == .network, let cacheKey, let cache, request.method == .get, answer.bodyFile == nil
    else { return }
    let response = CachedResponse(
      statusCode: answer.info.statusCode, headers: answer.info.headers, body: answer.info.body,
      requestTime: answer.requestTime)
    if !cache.store(response, for: cacheKey, requestHeaders: answer.sent.headers) {
      cache.remove(cacheKey)
    }
  }

  /// Errors after which nothing is retried: cancellation and the overall deadline.
  func endsCall(_ error: APIError) -> Bool {
    switch error {
    case .cancelled, .deadlineExceeded: return true
    default: return Task.isCancelled
    }
  }

  /// The retry decision after a failed attempt: asks the chain in order (authentication interceptor,
  /// interceptors, retrier) and returns the wait before the next attempt.
  /// - Throws: the call's error when it ends here: the failure itself, a retrier's replacement, or
  ///   ``APIError/deadlineExceeded(_:)`` when the deadline (not the attempt's own limit) ran out, retries
  ///   ran out on time-outs, or the wait would pass the deadline after a time-out.
  func retryDelay<R: Request>(
    after error: APIError, clippedByDeadline: Bool, request: R, retriers: [any Retrier],
    state: inout CallState
  ) async throws(APIError) -> Duration {
    if case .cancelled = error { throw failed(error, state) }
    if Task.isCancelled { throw failed(.cancelled, state) }
    if case .deadlineExceeded = error { throw failed(error, state) }
    let timedOut: Bool
    if case .timedOut = error { timedOut = true } else { timedOut = false }
    if timedOut, clippedByDeadline { throw failed(state.deadlineExceeded(), state) }
    var decision = RetryDecision.doNotRetry
    var granter = 0
    for (index, candidate) in retriers.enumerated() {
      let context = RetryContext(
        request: state.lastRequest, isIdempotent: request.isIdempotent, retryCount: state.granted[index],
        requiresAuthentication: request.requiresAuthentication, elapsed: state.clock.now - state.start)
      decision = await candidate.retry(error, context: context)
      granter = index
      if case .doNotRetry = decision { continue }
      break
    }
    if case .doNotRetryWithError(let replacement) = decision { throw failed(replacement, state) }
    guard case .retry(let delay) = decision else {
      if timedOut, state.attempts.count > 1 { throw failed(state.deadlineExceeded(), state) }
      throw failed(error, state)
    }
    if let deadline = state.deadline, state.clock.now + delay >= deadline {
      // The wait alone would pass the overall deadline: stop now with what the last attempt got.
      throw failed(timedOut ? state.deadlineExceeded() : error, state)
    }
    state.retries += 1
    state.granted[granter] += 1
    return delay
  }
}
