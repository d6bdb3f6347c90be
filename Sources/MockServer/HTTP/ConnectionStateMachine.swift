import HTTPCore

/// The decisions of one HTTP/1.1 connection, as a value: which phase it is in and what that phase knows,
/// and for every event (a head received, a request ended, a step finished, output drained, the peer
/// closed, a timer fired, a stream ended) the action ``Connection`` performs. It reads no socket, keeps
/// no buffer and schedules nothing itself, so its tests feed it events and check the actions
/// (Tests/MockServerTests/ConnectionStateMachineTests.swift), as SwiftNIO's `HTTPServerPipelineHandler`
/// and async-http-client's `HTTP1ConnectionStateMachine` are tested.
///
/// What it decides: persistence (RFC 9112 §9.3), strict order of pipelined requests (§9.3.2: the next
/// head is not taken before the plan of the current one completes), `Expect: 100-continue` (RFC 9110
/// §10.1.1), half-close and lingering close (RFC 9112 §9.6), holds and pauses, the idle and head
/// timeouts, streamed content and the hand-over to an upgraded protocol, back-pressure on reading.
///
/// Its payloads are plain values (no references), so changing the state retains and releases nothing.
package struct ConnectionStateMachine: Sendable {
  /// The phase, with the data that phase needs.
  package enum State: Equatable, Sendable {
    /// Reading (or waiting for) the next request.
    case reading(Reading)
    /// Executing a request's plan; further pipelined bytes are buffered, not parsed.
    case executing(Executing)
    /// The last response is written (or being flushed) and the connection closes: lingering, reading
    /// and discarding input until the peer closes or the linger time ends (RFC 9112 §9.6).
    case draining(Draining)
    /// Closed; nothing more happens.
    case closed
  }

  /// What is known of the request being read.
  package struct Reading: Equatable, Sendable {
    /// Its head was received; its content (if any) is being read.
    package var headSeen = false
    /// The head asks for a persistent connection (RFC 9112 §9.3).
    package var persistent = true
    /// The head is HTTP/1.0.
    package var http10 = false
    /// The head announces content (a `Content-Length` other than 0, or `Transfer-Encoding`).
    package var contentExpected = false
    /// `Expect: 100-continue` was received and neither the interim response nor a final one was sent.
    package var continuePending = false
    /// When the first byte of the head arrived (monotonic ns), for the head timeout; nil between requests.
    package var headStartedAt: UInt64?

    package init() {}
  }

  /// What a plan in execution waits for before its next step.
  package enum Wait: Equatable, Sendable {
    /// A ``ResponsePlan/Step/pause(milliseconds:)`` timer.
    case pause
    /// A ``ResponsePlan/Step/hold(maxMilliseconds:)``: the peer closing, or its timer.
    case hold
    /// An ``ResponsePlan/Step/awaiting(_:)`` step's plan, made elsewhere.
    case work
  }

  /// Content written as it is produced.
  package enum Streaming: Equatable, Sendable {
    /// A ``ContentSource``'s content (a relayed upstream body, an event stream); `heartbeat`: the source
    /// sends one while idle, so its timer is always pending; `untilClose`: the content only ends with the
    /// connection (``ContentFraming/untilClose``).
    case content(heartbeat: Bool, untilClose: Bool)
    /// The connection belongs to an ``UpgradedSession`` after a 101.
    case upgraded
  }

  /// A plan in execution.
  package struct Executing: Equatable, Sendable {
    /// The next step to run.
    package var stepIndex = 0
    /// How many steps the plan has.
    package var stepCount: Int
    /// The request's content was read to the end (not a rejection or an early answer).
    package var requestFullyRead: Bool
    /// The connection stays open after this response (RFC 9112 §9.3).
    package var keepAlive: Bool
    /// The request was HTTP/1.0, so keep-alive is announced and chunked coding is not used.
    package var http10: Bool
    /// What the plan waits for, if anything.
    package var wait: Wait?
    /// A stream or upgraded session in progress.
    package var streaming: Streaming?
  }

  /// Closing after the last response.
  package struct Draining: Equatable, Sendable {
    /// The last request's content was read to the end.
    package var requestFullyRead: Bool
    /// Output is still being flushed; lingering starts once it is.
    package var flushing: Bool
  }

  /// What ends a plan, once its completion is reported.
  package enum AfterPlan: Equatable, Sendable {
    /// Keep-alive: read (or parse the already buffered) next request.
    case readNextRequest
    /// Close: flush, then close or linger (``ConnectionStateMachine/beginClosing(outputPending:inputIdle:)``).
    case beginClosing
    /// Close at once with a FIN (a hold's time is up).
    case closeNow
    /// Close at once with a TCP reset (``ResponsePlan/Step/reset``).
    case reset
    /// The connection now belongs to the upgraded session.
    case handOver
  }

  /// The `Connection` field a response carries (RFC 9112 §9.3, §9.6).
  package enum ConnectionField: Equatable, Sendable {
    /// None: HTTP/1.1 is persistent by default.
    case none
    /// `Connection: keep-alive`, for an HTTP/1.0 client.
    case keepAlive
    /// `Connection: close`.
    case close
  }

  /// A timer the connection scheduled for the machine.
  package enum Timer: Equatable, Sendable {
    /// A pause step's time is up.
    case pause
    /// A hold step's time is up.
    case hold
    /// Lingering close's time is up.
    case lingeringClose
  }

  /// What ``Connection`` does next.
  package enum Action: Equatable, Sendable {
    /// Nothing.
    case none
    /// Read the request's content (no interim response).
    case readContent
    /// `Expect: 100-continue` on a request with content: ask the responder whether it answers before the
    /// content (then ``contentRejected()``) or wants it (then ``contentWanted(inputBuffered:)``).
    case askBeforeContent
    /// Write `HTTP/1.1 100 Continue` (RFC 9110 §15.2.1).
    case sendContinue
    /// An expectation other than `100-continue`: answer 417 and close (RFC 9110 §10.1.1).
    case rejectExpectation
    /// Run step `index` of the plan.
    case runStep(Int)
    /// Run the plan's next steps (a pause ended).
    case continuePlan
    /// Report the plan's completion (the journal's callback), then do `then`.
    case completePlan(served: Bool, then: AfterPlan)
    /// Keep output flushing; ``outputDrained(inputIdle:)`` goes on once it is.
    case flushThenClose
    /// Shut down writing, read and discard input, and close after `milliseconds` at most.
    case lingeringClose(milliseconds: Int)
    /// Close now (with a FIN); `served` tells a plan still in flight whether it was.
    case close(served: Bool)
    /// Stop reading (back-pressure, or the peer closed its side).
    case stopReading
    /// Read again.
    case resumeReading
    /// Take more of the stream's content.
    case pumpStream
    /// Parse the next pipelined request from the buffered input.
    case processInput
    /// The request was not received in time: answer 408 and close.
    case timeOutRequest
    /// The server stops: tell the stream's source (or the upgraded session) so that it ends.
    case stopStream
  }

  /// How long a lingering close reads and discards input before it closes.
  package static let lingeringCloseMilliseconds = 2000
  /// Most unsent output, or unparsed input, before reading stops.
  package static let readPauseBytes = 1 << 20

  /// The phase.
  package private(set) var state: State = .reading(Reading())
  /// The peer closed its side (an end of stream was read): no more input comes.
  package private(set) var inputEnded = false
  /// Reading is paused (back-pressure, or the phase takes no input).
  package private(set) var readingPaused = false

  package init() {}

  /// The socket's read interest.
  @inline(__always) package var wantsInput: Bool { !readingPaused && !inputEnded }

  @inline(__always) package var isClosed: Bool {
    if case .closed = state { return true }
    return false
  }
  @inline(__always) package var isReading: Bool {
    if case .reading = state { return true }
    return false
  }
  @inline(__always) package var isExecuting: Bool {
    if case .executing = state { return true }
    return false
  }
  @inline(__always) package var isDraining: Bool {
    if case .draining = state { return true }
    return false
  }
  /// Reading with no head received (the caller adds: nothing buffered, nothing unsent).
  @inline(__always) package var isBetweenRequests: Bool {
    if case .reading(let r) = state { return !r.headSeen }
    return false
  }
  /// The executing plan waits for an awaited plan.
  package var isAwaitingWork: Bool {
    if case .executing(let e) = state { return e.wait == .work }
    return false
  }
  /// The executing plan's next step.
  package var stepIndex: Int {
    if case .executing(let e) = state { return e.stepIndex }
    return 0
  }
  /// The request in execution was HTTP/1.0.
  package var isHTTP10: Bool {
    if case .executing(let e) = state { return e.http10 }
    return false
  }
  /// The connection was upgraded (every received byte goes to the session).
  package var isUpgraded: Bool {
    if case .executing(let e) = state { return e.streaming == .upgraded }
    return false
  }

  /// The `Connection` field of the response being written.
  @inline(__always) package var connectionField: ConnectionField {
    guard case .executing(let e) = state, e.keepAlive else { return .close }
    return e.http10 ? .keepAlive : .none
  }

  // MARK: Reading

  /// A byte of a request's head arrived at `now` (monotonic ns): the head timeout counts from the first.
  @inline(__always) package mutating func headBytesArrived(at now: UInt64) {
    guard case .reading(var r) = state, r.headStartedAt == nil else { return }
    r.headStartedAt = now
    state = .reading(r)
  }

  /// A request head was received. `persistent`: RFC 9112 §9.3 — HTTP/1.1 unless `Connection: close`,
  /// HTTP/1.0 only with `Connection: keep-alive`. The action is ``Action/readContent`` unless the head has
  /// an `Expect` field.
  @inline(__always) package mutating func headReceived(_ head: borrowing HTTPRequestHead) -> Action {
    guard case .reading = state else { return .none }
    var r = Reading()
    r.headSeen = true
    r.persistent = head.wantsKeepAlive
    r.http10 = head.version == .http1_0
    guard head.headers.contains("Expect") else {
      state = .reading(r)
      return .readContent
    }
    return expectationReceived(head, r)
  }

  /// The rest of ``headReceived(_:)`` for a head with an `Expect` field (kept out of the common path).
  private mutating func expectationReceived(_ head: borrowing HTTPRequestHead, _ received: Reading)
    -> Action
  {
    var r = received
    r.contentExpected =
      head.headers.contains("Transfer-Encoding")
      || (head.headers.first("Content-Length").map { $0 != "0" } ?? false)
    let expectations = head.headers.values("Expect")
    // RFC 9110 §10.1.1: 100-continue is the only expectation defined; another (or several) is a 417. A
    // request without content, or from an HTTP/1.0 client (which cannot take an interim response), gets
    // no 100 (§15.2).
    if expectations.count == 1, expectations[0].equalsIgnoringASCIICase("100-continue") {
      guard r.contentExpected, head.version == .http1_1 else {
        state = .reading(r)
        return .readContent
      }
      r.continuePending = true
      state = .reading(r)
      return .askBeforeContent
    }
    state = .reading(r)
    return .rejectExpectation
  }

  /// The responder wants the content of a `100-continue` request: the 100 is sent unless the client
  /// already started sending content (`inputBuffered`: then it did not wait, RFC 9110 §10.1.1).
  package mutating func contentWanted(inputBuffered: Bool) -> Action {
    guard case .reading(var r) = state, r.continuePending else { return .none }
    r.continuePending = false
    state = .reading(r)
    return inputBuffered ? .readContent : .sendContinue
  }

  /// The request's content was received to the end: its plan is made next (``planStarted``).
  @inline(__always) package mutating func requestEnded() {
    guard case .reading(var r) = state else { return }
    r.headStartedAt = nil
    r.continuePending = false
    state = .reading(r)
  }

  /// The parser has no complete event left. `inputIdle`: no byte of a next request is buffered (then the
  /// head timeout does not run: empty lines before a request-line are ignored, RFC 9112 §2.2). After a
  /// half-close with no complete request left, the connection closes once its answers are flushed.
  @inline(__always) package mutating func inputExhausted(inputIdle: Bool, outputPending: Bool)
    -> Action
  {
    guard case .reading(var r) = state else { return .none }
    if inputIdle, r.headStartedAt != nil {
      r.headStartedAt = nil
      state = .reading(r)
    }
    guard inputEnded else { return .none }
    return beginClosing(outputPending: outputPending, inputIdle: inputIdle)
  }

  // MARK: Plans

  /// A plan of `stepCount` steps starts for the request just read (`forceClose` false), or for a request
  /// answered early (a rejection, a 408, a 503, a final status instead of 100): then what was read is let
  /// go and the connection closes after it. Keep-alive needs the plan, the request and the server to agree
  /// (RFC 9112 §9.3), and after a half-close, another pipelined request to answer.
  @inline(__always) package mutating func planStarted(
    stepCount: Int, planKeepAlive: Bool, forceClose: Bool, serverStopping: Bool,
    inputBuffered: @autoclosure () -> Bool
  ) {
    var persistent = true
    var http10 = false
    switch state {
    case .reading(let r):
      if r.headSeen {
        persistent = r.persistent
        http10 = r.http10
      }
    case .executing, .draining, .closed:
      return
    }
    state = .executing(
      Executing(
        stepCount: stepCount, requestFullyRead: !forceClose,
        keepAlive: planKeepAlive && !forceClose && persistent && !serverStopping
          && (!inputEnded || inputBuffered()),
        http10: http10))
  }

  /// The plan's next step, or, after its last, its completion: keep-alive goes back to reading (the next
  /// pipelined head is only parsed now, RFC 9112 §9.3.2), anything else closes.
  @inline(__always) package mutating func nextStep() -> Action {
    guard case .executing(var e) = state, e.wait == nil else { return .none }
    if e.stepIndex < e.stepCount {
      let index = e.stepIndex
      e.stepIndex = index &+ 1
      state = .executing(e)
      return .runStep(index)
    }
    if e.streaming != nil { return .none }
    if e.keepAlive {
      state = .reading(Reading())
      return .completePlan(served: true, then: .readNextRequest)
    }
    return .completePlan(served: true, then: .beginClosing)
  }

  /// The step just run waits for `wait` (a pause, a hold, an awaited plan).
  package mutating func stepWaits(for wait: Wait) {
    guard case .executing(var e) = state else { return }
    e.wait = wait
    state = .executing(e)
  }

  /// The awaited plan arrived; `stepCount` is the plan's steps now (the arrived ones, then the rest), run
  /// from the first. Keep-alive stays only if the arrived plan allows it. False when nothing waited for it
  /// (it is then let go).
  package mutating func awaitedPlanArrived(stepCount: Int, planKeepAlive: Bool) -> Bool {
    guard case .executing(var e) = state, e.wait == .work else { return false }
    e.wait = nil
    e.stepIndex = 0
    e.stepCount = stepCount
    e.keepAlive = e.keepAlive && planKeepAlive
    state = .executing(e)
    return true
  }

  /// A ``ResponsePlan/Step/reset`` step.
  package mutating func resetStep() -> Action {
    guard case .executing = state else { return .none }
    return .completePlan(served: true, then: .reset)
  }

  /// A ``ResponsePlan/Step/close`` step: the plan is complete and the connection closes.
  package mutating func closeStep() -> Action {
    guard case .executing = state else { return .none }
    return .completePlan(served: true, then: .beginClosing)
  }

  // MARK: Streams and upgrades

  /// What a streamed response's step does.
  package enum StreamStart: Equatable, Sendable {
    /// Write the head alone (no content: HEAD, 1xx, 204, 304, or an until-close stream while the server
    /// stops) and cancel the source.
    case headOnly
    /// Write the head and stream the content, chunked or not.
    case stream(chunked: Bool)
  }

  /// A streamed response starts, framed as `framing` says. Content delimited by the connection's end
  /// (`.untilClose`, or chunked for an HTTP/1.0 client, which has no chunked coding) ends the connection
  /// (RFC 9112 §6.3).
  package mutating func streamStarting(
    framing: ContentFraming, sendsContent: Bool, heartbeat: Bool, serverStopping: Bool
  ) -> StreamStart {
    guard case .executing(var e) = state else { return .headOnly }
    if framing == .untilClose { e.keepAlive = false }
    guard sendsContent, !(framing == .untilClose && serverStopping) else {
      state = .executing(e)
      return .headOnly
    }
    if framing == .chunked && e.http10 { e.keepAlive = false }
    e.streaming = .content(heartbeat: heartbeat, untilClose: framing == .untilClose)
    state = .executing(e)
    return .stream(chunked: framing == .chunked && !e.http10)
  }

  /// The stream's content ended: a finished one lets the plan go on, a failed one closes.
  package mutating func streamEnded(failed: Bool) -> Action {
    guard case .executing(var e) = state, e.streaming != nil else { return .none }
    e.streaming = nil
    state = .executing(e)
    return failed ? .completePlan(served: false, then: .beginClosing) : .continuePlan
  }

  /// A 101 was written (RFC 9110 §7.8): the plan is complete (served) and the connection belongs to the
  /// session until its content ends (then it closes: no keep-alive) or the peer leaves.
  package mutating func upgraded() -> Action {
    guard case .executing(var e) = state else { return .none }
    e.keepAlive = false
    e.stepIndex = 0
    e.stepCount = 0
    e.streaming = .upgraded
    state = .executing(e)
    return .completePlan(served: true, then: .handOver)
  }

  /// The upgraded session is attached: it reads whatever back-pressure held reading before.
  package mutating func sessionAttached() -> Action {
    guard isUpgraded, readingPaused else { return .none }
    readingPaused = false
    return .resumeReading
  }

  // MARK: Output, timers, the peer

  /// The output was written to the end: a closing connection lingers or closes, a stream takes more, a
  /// reading one parses the next pipelined request.
  @inline(__always) package mutating func outputDrained(inputIdle: @autoclosure () -> Bool)
    -> Action
  {
    switch state {
    case .draining(let d) where d.flushing:
      return drain(requestFullyRead: d.requestFullyRead, inputIdle: inputIdle())
    case .executing(let e) where e.streaming != nil:
      return .pumpStream
    case .reading:
      return .processInput
    default:
      return .none
    }
  }

  /// The connection closes after its last response: it flushes first, then lingers or closes (RFC 9112
  /// §9.6). `outputPending`: output is not yet written; `inputIdle`: no unread request byte is buffered.
  package mutating func beginClosing(outputPending: Bool, inputIdle: @autoclosure () -> Bool)
    -> Action
  {
    let requestFullyRead: Bool
    switch state {
    case .reading: requestFullyRead = true
    case .executing(let e): requestFullyRead = e.requestFullyRead
    case .draining(let d): requestFullyRead = d.requestFullyRead
    case .closed: return .none
    }
    if outputPending {
      state = .draining(Draining(requestFullyRead: requestFullyRead, flushing: true))
      return .flushThenClose
    }
    return drain(requestFullyRead: requestFullyRead, inputIdle: inputIdle())
  }

  /// Lingering only protects a response from a reset caused by request bytes the server never read
  /// (RFC 9112 §9.6): when the request was read whole and nothing else is buffered, or the peer has
  /// closed, the connection closes at once (a FIN, as nginx does); otherwise writing is shut down and
  /// input drained for a bounded time.
  private mutating func drain(requestFullyRead: Bool, inputIdle: Bool) -> Action {
    if inputEnded || (requestFullyRead && inputIdle) {
      return .close(served: true)
    }
    state = .draining(Draining(requestFullyRead: requestFullyRead, flushing: false))
    readingPaused = false
    return .lingeringClose(milliseconds: ConnectionStateMachine.lingeringCloseMilliseconds)
  }

  /// An end of stream was read. Recorded first, so that the requests received before it are parsed and
  /// answered knowing that no more input comes; ``peerClosed(inputBuffered:)`` then decides.
  package mutating func endOfInputReceived() {
    inputEnded = true
  }

  /// The peer closed its side (end of stream). A half-close ends the input, not the exchange: requests
  /// received before it are still answered (the caller parses them first), then the connection closes.
  /// A plan still waiting (pause, hold, awaited plan, steps left, a heartbeat stream) stops, unserved; an
  /// upgraded session's peer leaving ends it. `inputBuffered`: bytes of a pipelined request are buffered.
  package mutating func peerClosed(inputBuffered: Bool) -> Action {
    inputEnded = true
    switch state {
    case .closed:
      return .none
    case .draining(let d):
      // Output still being flushed is sent first (`outputDrained` closes once it is).
      return d.flushing ? .flushThenClose : .close(served: true)
    case .reading:
      return .stopReading
    case .executing(let e) where e.streaming == .upgraded:
      return .close(served: true)
    case .executing(var e):
      if e.wait != nil || e.streaming == .content(heartbeat: true, untilClose: true)
        || e.streaming == .content(heartbeat: true, untilClose: false) || e.stepIndex < e.stepCount
      {
        // The client gave up while we were waiting (delay, dribble, hold): stop.
        return .close(served: false)
      }
      if !inputBuffered {
        e.keepAlive = false
        state = .executing(e)
      }
      readingPaused = true
      return .stopReading
    }
  }

  /// A timer the connection scheduled fired.
  package mutating func timerFired(_ timer: Timer) -> Action {
    switch (timer, state) {
    case (.pause, .executing(var e)) where e.wait == .pause:
      e.wait = nil
      state = .executing(e)
      return .continuePlan
    case (.hold, .executing(var e)) where e.wait == .hold:
      e.wait = nil
      state = .executing(e)
      return .completePlan(served: true, then: .closeNow)
    case (.lingeringClose, .draining):
      return .close(served: true)
    default:
      return .none
    }
  }

  /// What the server's periodic sweep knows of one connection, for its timeouts.
  package struct TimeoutCheck: Sendable {
    /// Now (monotonic ns).
    package var now: UInt64
    /// The idle timeout and the head timeout (ns).
    package var idleNanos: UInt64
    package var headNanos: UInt64
    /// When the last byte was read (monotonic ns), and when the connection was accepted.
    package var lastActivity: UInt64
    package var acceptedAt: UInt64
    /// Since when output has waited without a byte taken by the peer, when it has.
    package var writeStalledSince: UInt64?
    /// Output is waiting.
    package var outputPending: Bool
    /// A TLS handshake is in progress.
    package var handshaking: Bool
    /// No byte of a request is buffered; the parser is in a request's head.
    package var inputIdle: Bool
    package var readingHead: Bool

    package init(
      now: UInt64, idleNanos: UInt64, headNanos: UInt64, lastActivity: UInt64, acceptedAt: UInt64,
      writeStalledSince: UInt64?, outputPending: Bool, handshaking: Bool, inputIdle: Bool,
      readingHead: Bool
    ) {
      self.now = now
      self.idleNanos = idleNanos
      self.headNanos = headNanos
      self.lastActivity = lastActivity
      self.acceptedAt = acceptedAt
      self.writeStalledSince = writeStalledSince
      self.outputPending = outputPending
      self.handshaking = handshaking
      self.inputIdle = inputIdle
      self.readingHead = readingHead
    }
  }

  /// The idle, head and write timeouts. Output the peer has not taken a byte of for the idle timeout
  /// closes in any phase; an idle keep-alive connection closes after the idle timeout; a head not received
  /// within the head timeout (counted from its first byte, or from accept for a TLS handshake), or content
  /// stalled for the idle timeout, is answered 408.
  package func timeoutsChecked(_ c: TimeoutCheck) -> Action {
    if let stalled = c.writeStalledSince, c.outputPending, c.now > stalled,
      c.now - stalled > c.idleNanos
    {
      return .close(served: false)
    }
    guard case .reading(let r) = state, !c.outputPending else { return .none }
    if c.handshaking {
      return c.now - c.acceptedAt > c.headNanos ? .close(served: false) : .none
    }
    if let started = r.headStartedAt, c.readingHead, !c.inputIdle, c.now - started > c.headNanos {
      return .timeOutRequest
    } else if c.inputIdle, c.now - c.lastActivity > c.idleNanos {
      return .close(served: false)
    } else if !c.inputIdle, !c.readingHead, c.now - c.lastActivity > c.idleNanos {
      return .timeOutRequest
    }
    return .none
  }

  /// Graceful shutdown: an idle or closing connection closes at once; a plan in flight finishes and the
  /// connection then closes (keep-alive withdrawn); a stream that only ends with the connection closes now;
  /// other streams and an upgraded session are told to end. `idle`: nothing buffered or unsent.
  package mutating func serverStopping(idle: Bool) -> Action {
    switch state {
    case .draining: return .close(served: false)
    case .reading(let r) where idle && !r.headSeen: return .close(served: false)
    case .executing(let e) where e.streaming == .upgraded: return .stopStream
    // An event stream never ends by itself.
    case .executing(let e)
    where e.streaming == .content(heartbeat: true, untilClose: true)
      || e.streaming == .content(heartbeat: false, untilClose: true):
      return .close(served: true)
    case .executing(var e):
      e.keepAlive = false
      state = .executing(e)
      return e.streaming == nil ? .none : .stopStream
    default: return .none
    }
  }

  /// The connection closed (any reason).
  package mutating func closed() {
    state = .closed
  }

  // MARK: Back-pressure

  /// Stops reading while the unparsed input or the unsent output is over ``readPauseBytes``, while
  /// reading or executing (a client pipelining requests without reading the answers cannot make the
  /// server buffer without bound).
  @inline(__always) package mutating func applyBackPressure(bufferedInput: Int, unsentOutput: Int)
    -> Action
  {
    switch state {
    case .closed, .draining: return .none
    case .reading, .executing: break
    }
    guard !readingPaused,
      bufferedInput > ConnectionStateMachine.readPauseBytes
        || unsentOutput > ConnectionStateMachine.readPauseBytes
    else { return .none }
    readingPaused = true
    return .stopReading
  }

  /// Reads again once both buffers are back under the bound, while reading a request.
  @inline(__always) package mutating func resumeReadingIfRoom(bufferedInput: Int, unsentOutput: Int)
    -> Action
  {
    guard readingPaused, case .reading = state,
      bufferedInput <= ConnectionStateMachine.readPauseBytes,
      unsentOutput <= ConnectionStateMachine.readPauseBytes
    else { return .none }
    readingPaused = false
    return .resumeReading
  }
}
