import Dispatch
import Foundation
import HTTPCore
import MockJSON

/// One HTTP/1.1 connection: reads requests through a ``ByteStream``, asks the responder for a
/// ``ResponsePlan`` per request and executes it, answering pipelined requests strictly in order.
///
/// Invariant: a connection is created, used and closed only on its event loop's thread (every entry point
/// is an `EventHandler` callback, a loop timer, or the server's sweep on that loop), so its mutable state
/// needs no lock.
final class Connection: EventHandler {
  /// The request being received: its head and content. A class, as ``Execution`` is: the phase's data
  /// is changed in place through one reference instead of being copied (each copy retained and released
  /// every field: about 2,000 instructions per request). What the connection's phase is, and what the
  /// phase knows of the request, is in `machine`. Confined to the loop's thread like the connection, so
  /// without dynamic exclusivity checks (see `machine`).
  private final class Reading {
    /// Its head, once parsed; nil between requests.
    @exclusivity(unchecked) var head: HTTPRequestHead?
    /// Its content so far.
    @exclusivity(unchecked) var body: [UInt8] = []
    /// Bytes of `body` counted against the server's buffered-content budget.
    @exclusivity(unchecked) var countedBytes = 0
  }

  /// The I/O side of a response plan being executed (its step index, keep-alive decision and waits are
  /// the machine's ``ConnectionStateMachine/Executing``).
  private final class Execution {
    @exclusivity(unchecked) var steps: [ResponsePlan.Step] = []
    /// The method of the request answered (HEAD gets no content).
    @exclusivity(unchecked) var requestMethod = HTTPMethod.get
    @exclusivity(unchecked) var onComplete: (@Sendable (Bool) -> Void)?
    /// A pause, hold or heartbeat in progress.
    @exclusivity(unchecked) var timer: LoopTimer?
    /// Content being written as it is produced (the dashboard's event stream, a relayed upstream body);
    /// the plan waits for it to end.
    @exclusivity(unchecked) var stream: ContentStream?
    /// When the stream's content last went into the output (monotonic ns): its heartbeat is sent only
    /// after that long without any.
    @exclusivity(unchecked) var streamWroteAt: UInt64 = 0
    /// Takes from a timer-fed stream when its next content is due (``ContentSource/nextTakeDeadline``),
    /// and that deadline.
    @exclusivity(unchecked) var streamTimer: LoopTimer?
    @exclusivity(unchecked) var streamTimerDeadline: UInt64 = 0

    /// Sets up the execution of a new plan (every field: the object is reused from plan to plan).
    func begin(
      steps: [ResponsePlan.Step], requestMethod: HTTPMethod, onComplete: (@Sendable (Bool) -> Void)?
    ) {
      self.steps = steps
      self.requestMethod = requestMethod
      self.onComplete = onComplete
      timer = nil
      stream = nil
      streamTimer = nil
    }
  }

  /// A ``ContentSource`` being written, pumped while the output has room.
  private struct ContentStream {
    let source: any ContentSource
    /// Each piece goes out as a chunk (RFC 9112 §7.1), ended by the last chunk.
    let chunked: Bool
  }

  let id: UInt64
  /// Its index in the owner's open connections (-1 once closed); set by the owner on the loop thread.
  @exclusivity(unchecked) var slot = -1
  private let stream: ByteStream
  // Strong references: an access to an `unowned` one is a `swift_unownedRetainStrong` and a release,
  // about 450 instructions per request. The cycle with the owner's `connections` is broken by `close`,
  // which every connection reaches (the owner force-closes the rest when the server stops).
  private let loop: EventLoop
  private let owner: ServerLoopContext
  private let client: ClientAddress
  private let localPort: Int
  private let isTLS: Bool
  /// When the connection was accepted (monotonic ns): bounds a handshake that never completes.
  private let acceptedAt: UInt64

  // The mutable state below is confined to the loop's thread (see the invariant above) and no method
  // changes a property while another access to it is in progress (a phase's data is changed through
  // its object, and `machine` through its mutating events): the dynamic exclusivity checks cost about
  // 1,900 instructions per request (a `swift_beginAccess` per property read, six in `applyBackPressure`
  // alone), so they are off for these properties.
  /// The phase and every decision (keep-alive, pipelining order, 100-continue, closing and lingering,
  /// timeouts, streams, back-pressure); the connection feeds it events and performs its actions.
  @exclusivity(unchecked) private var machine = ConnectionStateMachine()
  /// The connection's one ``Reading``, used whenever it reads: reset for each request instead of
  /// allocated again.
  private let reading: Reading
  /// The connection's one ``Execution``, set up for each plan.
  private let execution = Execution()
  @exclusivity(unchecked) private var parser: HTTPParser
  // Socket-level state, meaningful in every phase.
  /// What waits to be written, and since when the peer took nothing (``OutputBuffer``).
  @exclusivity(unchecked) private var output = OutputBuffer()
  @exclusivity(unchecked) private var wantsWritable = false
  /// The last read wanted the socket writable (a TLS handshake flight did not fit): retry it on EPOLLOUT.
  @exclusivity(unchecked) private var readWantsWritable = false
  /// True from a read that found the socket empty (a short read, or end of stream) until the event is
  /// handled: a close within that event needs no read to drop pending input (one `read` returning
  /// EAGAIN per closed connection, which nginx does not make).
  @exclusivity(unchecked) private var inputDrainedThisEvent = false
  @exclusivity(unchecked) private var requestCount = 0
  @exclusivity(unchecked) private(set) var lastActivity: UInt64
  /// Most unsent output, or unparsed input, before the connection stops reading: back-pressure between
  /// pipelined requests, so a client that sends without reading cannot make the server buffer without
  /// bound.
  static let readPauseBytes = ConnectionStateMachine.readPauseBytes
  /// Ends a lingering close.
  @exclusivity(unchecked) private var lingerTimer: LoopTimer?
  /// A ``resumeOnNextTurn()`` timer is pending.
  @exclusivity(unchecked) private var resumeScheduled = false
  /// Re-entrancy guard of ``processInput()``.
  @exclusivity(unchecked) private var processing = false
  /// Re-entrancy guard of ``pumpStream()``.
  @exclusivity(unchecked) private var pumping = false
  /// The protocol switched to after a 101 (``ResponsePlan/Step/upgrade(_:session:)``): every received
  /// byte goes to it; nil for HTTP.
  @exclusivity(unchecked) private var upgraded: (any UpgradedSession)?

  init(
    id: UInt64, stream: ByteStream, loop: EventLoop, owner: ServerLoopContext,
    client: ClientAddress,
    localPort: Int, isTLS: Bool, limits: ParserLimits
  ) {
    self.id = id
    self.stream = stream
    self.loop = loop
    self.owner = owner
    self.client = client
    self.localPort = localPort
    self.isTLS = isTLS
    self.parser = HTTPParser(mode: .request, limits: limits)
    let reading = Reading()
    self.reading = reading
    self.lastActivity = SocketOps.monotonicNanos()
    self.acceptedAt = lastActivity
  }

  var fd: Int32 { stream.fd }
  var isIdle: Bool { machine.isBetweenRequests && parser.isIdle && output.isEmpty }
  private var isClosed: Bool { machine.isClosed }
  private var isReading: Bool { machine.isReading }

  // MARK: Events

  func handleEvent(readable isReadable: Bool, writable: Bool, hangUp: Bool) {
    inputDrainedThisEvent = false
    if writable, !isClosed {
      flush()
    }
    if isReadable || (writable && readWantsWritable), !isClosed {
      readAvailable()
    }
    inputDrainedThisEvent = false
  }

  private func readAvailable() {
    let buffer = loop.readBuffer
    var gotBytes = false
    var sawEnd = false
    readWantsWritable = false
    while !isClosed {
      switch stream.read(into: buffer) {
      case .bytes(let n):
        gotBytes = true
        lastActivity = SocketOps.monotonicNanos()
        if machine.isDraining { continue }
        if parser.isReadingHead { machine.headBytesArrived(at: lastActivity) }
        if let upgraded {
          upgraded.receive(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        } else {
          parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        }
        if n < buffer.count && !stream.hasBufferedInput {
          inputDrainedThisEvent = true
          break
        }
        // Parsed before reading on (the level-triggered socket reports the rest): reading a fast upload
        // to the end first buffered all the socket held, megabytes per connection, before its content was
        // counted against the buffered-content budget.
        if parser.bufferedByteCount >= Connection.readPauseBytes, !stream.hasBufferedInput { break }
        continue
      case .wouldBlock(let wantsWrite):
        if wantsWrite {
          readWantsWritable = true
          updateInterest(forceWritable: true)
        } else {
          inputDrainedThisEvent = true
        }
      case .eof:
        sawEnd = true
        inputDrainedThisEvent = true
      case .failed:
        close(served: false)
        return
      }
      break
    }
    if sawEnd { machine.endOfInputReceived() }
    // After a half-close too: the requests received before the FIN are still answered.
    if gotBytes || machine.inputEnded, isReading { processInput() }
    if gotBytes, upgraded != nil { pumpStream() }
    if machine.inputEnded { handlePeerClosed() }
    applyBackPressure()
  }

  /// Stops reading while the input not yet parsed or the output not yet sent is over
  /// ``readPauseBytes``, in every phase (it held only while a plan executed, so a client pipelining
  /// requests without reading the answers grew the input buffer by every byte it sent).
  private func applyBackPressure() {
    guard !machine.readingPaused else { return }
    if machine.applyBackPressure(
      bufferedInput: parser.bufferedByteCount, unsentOutput: output.pendingCount)
      == .stopReading
    {
      updateInterest()
    }
  }

  /// Reads again once both buffers are back under the bound (after output drained or input was parsed).
  private func resumeReadingIfRoom() {
    guard machine.readingPaused else { return }
    if machine.resumeReadingIfRoom(
      bufferedInput: parser.bufferedByteCount, unsentOutput: output.pendingCount)
      == .resumeReading
    {
      updateInterest()
    }
  }

  private func handlePeerClosed() {
    switch machine.peerClosed(inputBuffered: parser.bufferedByteCount > 0) {
    case .close(let served): close(served: served)
    // Output still being flushed is sent first (`drain` closes once it is); a half-close while reading
    // ends the input, not the exchange (`processInput`, run just before, closes once no complete request
    // is left).
    case .flushThenClose, .stopReading: updateInterest()
    default: break
    }
  }

  // MARK: Requests

  private func processInput() {
    guard !processing else { return }
    processing = true
    defer { processing = false }
    var answered = 0
    while isReading, output.pendingCount < (256 << 10) {
      if answered == Connection.requestsPerTurn {
        // Fairness: one client pipelining as fast as it reads held the loop for its whole buffered input
        // (up to 1 MiB, 30,000 requests) while other clients waited seconds; the rest is answered on
        // the loop's next turn, after the others' events.
        resumeOnNextTurn()
        return
      }
      // The event's kind, its payload taken from the parser: an `HTTPParserEvent` (a multi-payload enum)
      // was copied and destroyed through value witnesses, about 2,000 instructions per request.
      let kind: HTTPParserEventKind?
      do {
        kind = try parser.nextKind()
      } catch {
        reject(error)
        return
      }
      switch kind {
      case nil:
        // Empty lines before a request-line do not start the head timeout; after a half-close with no
        // complete request left, the answers given are flushed, then the connection closes.
        let closing = machine.inputExhausted(
          inputIdle: parser.isIdle, outputPending: output.hasPending)
        if case .none = closing { return }
        performClosing(closing)
        return
      case .requestHead?:
        let h = parser.takeRequestHead()
        guard isReading else { continue }
        releaseCountedContent()
        reading.body = []
        let action = machine.headReceived(h)
        if action == .readContent {
          reading.head = consume h  // moved, not copied: the common path
        } else {
          reading.head = h
          if handleExpectation(action, h) { return }
        }
      case .body?:
        let bytes = parser.takeContent()
        guard isReading else { continue }
        guard owner.server.reserveRequestContent(bytes.count) else {
          refuseOverContentBudget()
          return
        }
        let r = reading
        r.countedBytes += bytes.count
        if r.body.isEmpty { r.body = bytes } else { r.body.append(contentsOf: bytes) }
      case .end?:
        let trailers = parser.takeTrailers()
        // The head and content moved out of `reading` (no retain of the copy, no release of the old value).
        guard isReading, let h = reading.head.take() else { continue }
        let r = reading
        var body: [UInt8] = []
        swap(&body, &r.body)
        machine.requestEnded()
        if r.countedBytes != 0 { releaseCountedContent() }
        requestCount += 1
        // What the connection needs of the head is read first, so the head moves into the request
        // (a copy retained and released its storage).
        let method = h.method
        let request = HTTPRequest(head: consume h, body: body, trailers: trailers)
        let plan = owner.responder.respond(to: request, context: context())
        start(plan, method: method, forceClose: false)
        answered += 1
      case .responseHead?:
        continue
      }
    }
  }

  /// Gives the content of the request being read back to the server's buffered-content budget.
  private func releaseCountedContent() {
    let r = reading
    guard r.countedBytes != 0 else { return }
    owner.server.releaseRequestContent(r.countedBytes)
    r.countedBytes = 0
  }

  /// The request's content would take the content buffered by all connections beyond
  /// ``ServerConfiguration/maxBufferedRequestBytes``: 503, and the connection closes (what was read of
  /// the request is let go).
  private func refuseOverContentBudget() {
    let limit = owner.configuration.maxBufferedRequestBytes
    let plan = ResponsePlan.json(
      status: .serviceUnavailable,
      #"{"error":"request content buffered by all connections is over --max-buffered-request-bytes (\#(limit)); try again later","status":503}"#,
      keepAlive: false)
    start(plan, method: currentHead?.method ?? .post, forceClose: true)
  }

  /// Most pipelined requests one event answers before the loop serves other connections.
  static let requestsPerTurn = 64

  /// Answers the rest of the buffered requests from a zero-delay timer (the loop's next turn), once.
  private func resumeOnNextTurn() {
    guard !resumeScheduled else { return }
    resumeScheduled = true
    loop.schedule(afterMilliseconds: 0) { [weak self] in
      guard let self else { return }
      self.resumeScheduled = false
      guard !self.isClosed, self.isReading else { return }
      self.processInput()
      self.resumeReadingIfRoom()
      self.applyBackPressure()
    }
  }

  /// Performs the machine's answer to a head with an `Expect` field (RFC 9110 §10.1.1). Returns true when
  /// a response was started instead of reading on.
  private func handleExpectation(_ action: ConnectionStateMachine.Action, _ h: HTTPRequestHead)
    -> Bool
  {
    switch action {
    case .askBeforeContent:
      if let plan = owner.responder.respondBeforeContent(to: h, context: context()) {
        requestCount += 1
        start(plan, method: h.method, forceClose: true)
        return true
      }
      if machine.contentWanted(inputBuffered: parser.bufferedByteCount != 0) == .sendContinue {
        output.bytes.append(contentsOf: "HTTP/1.1 100 Continue\r\n\r\n".utf8)
        flush()
      }
      return false
    case .rejectExpectation:
      requestCount += 1
      let plan = ResponsePlan.json(
        status: HTTPStatus(code: 417), #"{"error":"unsupported expectation","status":417}"#,
        keepAlive: false)
      start(plan, method: h.method, forceClose: true)
      return true
    default:
      return false
    }
  }

  /// The head of the request being read, if its head was parsed.
  private var currentHead: HTTPRequestHead? { isReading ? reading.head : nil }

  private func reject(_ error: HTTPParserError) {
    let head = currentHead
    owner.responder.didReject(head: head, error: error, context: context())
    let status = error.status
    let plan = ResponsePlan.json(
      status: status,
      #"{"error":\#(JSONValue.quoted(error.description)),"status":\#(status.code)}"#,
      keepAlive: false)
    start(plan, method: head?.method ?? parser.lastRequestMethod ?? .get, forceClose: true)
  }

  private func context() -> RequestContext {
    RequestContext(
      client: client, localPort: localPort, isTLS: isTLS,
      clientCertificateSubject: stream.peerDescription, connectionID: id,
      requestNumber: requestCount,
      receivedAt: Date().timeIntervalSince1970)
  }

  // MARK: Plans

  /// Runs `plan` for a request of `method` (the one just read, or, with `forceClose`, one answered early
  /// or rejected).
  private func start(_ plan: ResponsePlan, method: HTTPMethod, forceClose: Bool) {
    if forceClose {
      // An early answer or a rejection: what was read of the request is not kept while the plan runs.
      reading.head = nil
      reading.body = []
      releaseCountedContent()
    }
    execution.begin(steps: plan.steps, requestMethod: method, onComplete: plan.onComplete)
    machine.planStarted(
      stepCount: plan.steps.count, planKeepAlive: plan.keepAlive, forceClose: forceClose,
      serverStopping: owner.isShuttingDown, inputBuffered: parser.bufferedByteCount > 0)
    runSteps()
  }

  /// Writes a prepared response: its framed head, this connection's `Date`/`Server`/`Connection` lines,
  /// and its content unless the status or request method has none.
  private func writePrepared(_ prepared: PreparedResponse, _ e: Execution) {
    // Sized once for the whole answer (on a new connection the output grew, reallocating, as the head, the
    // connection's fields and the content were appended: about 800 instructions per connection).
    let needed = output.bytes.count &+ prepared.byteCount &+ Connection.connectionFieldsBytes
    if output.bytes.capacity < needed { output.bytes.reserveCapacity(needed) }
    prepared.writeFramedHead(into: &output.bytes)
    ResponseHeadWriter.writeConnectionFields(
      hasDate: prepared.hasDate, hasServer: prepared.hasServer, dateLine: loop.httpDateLine(),
      server: owner.serverLine, connection: connectionLine(), into: &output.bytes)
    if HTTPSerializer.sendsContent(status: prepared.status, requestMethod: e.requestMethod) {
      writeContent(prepared.body)
    } else {
      flush()
    }
  }

  /// Room for what the connection adds to a head: `Content-Length`, `Date`, `Server`, `Connection`.
  static let connectionFieldsBytes = 160

  /// Runs the plan's steps until one waits or the plan is complete, as the machine says.
  private func runSteps() {
    let e = execution
    while true {
      let action = machine.nextStep()
      guard case .runStep(let index) = action else {
        if case .completePlan(let served, let then) = action {
          completePlan(served: served, then: then)
        }
        return
      }
      // The common step first, its payload bound in place: a copy of the whole step (a multi-payload
      // enum) went through value witnesses.
      if case .prepared(let prepared) = e.steps[index] {
        writePrepared(prepared, e)
        continue
      }
      let step = e.steps[index]
      switch step {
      case .response(let responseHead, let content):
        let sends = HTTPSerializer.sendsContent(
          status: responseHead.status, requestMethod: e.requestMethod)
        writeHead(responseHead, contentLength: content.count)
        if sends { writeContent(content) } else { flush() }
      case .prepared(let prepared):
        writePrepared(prepared, e)
      case .responseHead(let responseHead, let contentLength):
        writeHead(responseHead, contentLength: contentLength)
        flush()
      case .raw(let bytes):
        output.bytes.append(contentsOf: bytes)
        flush()
      case .pause(let ms):
        machine.stepWaits(for: .pause)
        e.timer = loop.schedule(afterMilliseconds: ms) { [weak self] in
          guard let self else { return }
          self.execution.timer = nil
          self.perform(self.machine.timerFired(.pause))
        }
        return
      case .hold(let maxMs):
        machine.stepWaits(for: .hold)
        let limit = min(maxMs, owner.configuration.maxHoldMilliseconds)
        e.timer = loop.schedule(afterMilliseconds: limit) { [weak self] in
          guard let self else { return }
          self.execution.timer = nil
          self.perform(self.machine.timerFired(.hold))
        }
        return
      case .reset:
        perform(machine.resetStep())
        return
      case .awaiting(let start):
        machine.stepWaits(for: .work)
        let target = LoopBound(self)
        let loop = self.loop
        start { plan in
          loop.execute {
            // A plan nobody will run lets go of what feeds it (a relayed body's producer stops).
            guard let connection = target.connection else { return plan.abandon() }
            connection.resumeDeferred(with: plan)
          }
        }
        return
      case .close:
        perform(machine.closeStep())
        return
      case .streamedResponse(let responseHead, let framing, let source):
        if startStream(responseHead, framing: framing, source: source, e) { return }
      case .upgrade(let responseHead, let session):
        startUpgraded(responseHead, session: session, e)
        return
      }
    }
  }

  /// Reports the plan's completion, then reads the next request, closes, or hands the connection over,
  /// as the machine decided.
  private func completePlan(served: Bool, then: ConnectionStateMachine.AfterPlan) {
    finishPlan(served: served)
    switch then {
    case .readNextRequest:
      reading.head = nil
      reading.body = []
      // Bytes of a pipelined head that arrived during the plan count towards the head timeout from now.
      if !parser.isIdle { machine.headBytesArrived(at: SocketOps.monotonicNanos()) }
      if output.isEmpty { processInput() }
      resumeReadingIfRoom()
      applyBackPressure()
    case .beginClosing:
      beginClosing()
    case .closeNow:
      close(served: true)
    case .reset:
      close(served: true, reset: true)
    case .handOver:
      break
    }
  }

  /// Performs an action of the machine that needs nothing but the connection.
  private func perform(_ action: ConnectionStateMachine.Action) {
    switch action {
    case .completePlan(let served, let then): completePlan(served: served, then: then)
    case .continuePlan: runSteps()
    case .close(let served): close(served: served)
    case .timeOutRequest: timeOutRequest()
    case .pumpStream: pumpStream()
    case .stopReading, .resumeReading: updateInterest()
    case .flushThenClose, .lingeringClose: performClosing(action)
    case .none, .readContent, .askBeforeContent, .sendContinue, .rejectExpectation, .runStep,
      .processInput,
      .stopStream:
      break
    }
  }

  // MARK: Streamed content

  /// Writes a streamed response's head and starts taking its source's content, framed as `framing` says
  /// (`.chunked` ends by closing for an HTTP/1.0 client; `.untilClose` always does, RFC 9112 §6.3). False
  /// (source cancelled, the head alone written) when the response carries no content (HEAD, 1xx, 204,
  /// 304) or, for a stream that only ends with the connection, when the server is stopping.
  private func startStream(
    _ head: HTTPResponseHead, framing: ContentFraming, source: any ContentSource, _ e: Execution
  ) -> Bool {
    let start = machine.streamStarting(
      framing: framing,
      sendsContent: HTTPSerializer.sendsContent(
        status: head.status, requestMethod: e.requestMethod),
      heartbeat: source.heartbeat != nil, serverStopping: owner.isShuttingDown)
    guard case .stream(let chunked) = start else {
      source.cancel()
      if framing == .untilClose {
        writeStreamHead(head, contentLength: nil, chunked: false)
      } else if framing == .chunked, !head.status.forbidsContent {
        // HEAD: the head a GET gets (RFC 9110 §9.3.2), without its content.
        writeStreamHead(head, contentLength: nil, chunked: !machine.isHTTP10)
      } else {
        writeHead(head, contentLength: framing.length ?? 0)
      }
      flush()
      return false
    }
    writeStreamHead(head, contentLength: framing.length, chunked: chunked)
    let target = LoopBound(self)
    let loop = self.loop
    let waiting = source.attach { loop.execute { target.connection?.pumpStream() } }
    e.stream = ContentStream(source: source, chunked: chunked)
    e.streamWroteAt = SocketOps.monotonicNanos()
    if let heartbeat = source.heartbeat {
      scheduleHeartbeat(heartbeat, afterMilliseconds: heartbeat.intervalMilliseconds)
    }
    // A stream started while the server stops (its head was delayed) ends at once too.
    if owner.isShuttingDown { source.serverStopping() }
    flush()
    if waiting { pumpStream() }
    return true
  }

  /// The `Connection` line of a 101 (authored `Connection` fields are replaced by the writer's).
  static let connectionUpgrade: [UInt8] = Array("Connection: Upgrade\r\n".utf8)

  /// Writes the 101 head and hands the connection to `session`: the bytes the parser holds after the
  /// request's head, then every byte read, go to it; its output is pumped as a stream's; the plan is
  /// complete (journaled) once the head is written, and the connection closes when the session's content
  /// ends.
  private func startUpgraded(_ head: HTTPResponseHead, session: any UpgradedSession, _ e: Execution) {
    let action = machine.upgraded()
    ResponseHeadWriter.write(
      head, contentLength: nil, chunked: false, dateLine: loop.httpDateLine(),
      server: owner.serverLine,
      connection: Connection.connectionUpgrade, into: &output.bytes)
    perform(action)
    let leftover = parser.takeUnparsedBytes()
    upgraded = session
    let target = LoopBound(self)
    let loop = self.loop
    _ = session.attach { loop.execute { target.connection?.pumpStream() } }
    e.stream = ContentStream(source: session, chunked: false)
    flush()
    guard machine.isUpgraded else { return }
    if !leftover.isEmpty { leftover.withUnsafeBytes { session.receive($0) } }
    pumpStream()
    perform(machine.sessionAttached())
  }

  /// The heartbeat's bytes once the stream's output has been idle for the interval (no content taken
  /// and nothing unsent): an event stream's comment line keeps proxies and the client from timing the
  /// connection out.
  private func scheduleHeartbeat(_ heartbeat: ContentHeartbeat, afterMilliseconds delay: Int) {
    let timer = loop.schedule(afterMilliseconds: delay) { [weak self] in
      guard let self, self.machine.isExecuting, self.execution.stream != nil else { return }
      self.execution.timer = nil
      let interval = UInt64(heartbeat.intervalMilliseconds) * 1_000_000
      let now = SocketOps.monotonicNanos()
      let idle = now &- self.execution.streamWroteAt
      var next = heartbeat.intervalMilliseconds
      if idle < interval {
        // Content went out meanwhile: the idle time counts from it.
        next = max(1, Int((interval - idle + 999_999) / 1_000_000))
      } else if !self.output.hasPending, let stream = self.execution.stream {
        self.output.append(heartbeat.bytes, chunked: stream.chunked)
        self.execution.streamWroteAt = now
        self.flush()
      }
      if self.machine.isExecuting, self.execution.stream != nil {
        self.scheduleHeartbeat(heartbeat, afterMilliseconds: next)
      }
    }
    execution.timer = timer
  }

  /// Pumps the stream again at `deadline` (monotonic ns, rounded up to the loop timers' millisecond), the
  /// time its source's next content is due; a pending take at the same deadline is kept.
  private func scheduleStreamTake(at deadline: UInt64) {
    let e = execution
    if let timer = e.streamTimer {
      if timer.isPending, e.streamTimerDeadline == deadline { return }
      loop.cancel(timer)
    }
    let now = SocketOps.monotonicNanos()
    // Content due already waits for room in the output: the writable event pumps again.
    guard deadline > now else { return }
    let milliseconds = Int(min((deadline - now + 999_999) / 1_000_000, 86_400_000))
    e.streamTimerDeadline = deadline
    e.streamTimer = loop.schedule(afterMilliseconds: milliseconds) { [weak self] in
      guard let self, self.machine.isExecuting else { return }
      self.execution.streamTimer = nil
      self.pumpStream()
    }
  }

  /// Loop thread: moves produced content into the output while it is under the source's bound; stops
  /// when the socket is full (the writable event resumes it through ``flush()``). A source that finished
  /// lets the plan go on; one that failed closes the connection.
  fileprivate func pumpStream() {
    guard !pumping, machine.isExecuting, let stream = execution.stream else { return }
    let e = execution
    pumping = true
    var ended: ContentEnd?
    pump: while !isClosed {
      let room = stream.source.outputBound - (output.pendingCount)
      guard room > 0 else { break pump }
      let (bytes, end) = stream.source.take(maxBytes: room)
      if !bytes.isEmpty {
        e.streamWroteAt = SocketOps.monotonicNanos()
        output.append(bytes, chunked: stream.chunked)
      }
      if let end {
        if case .finished = end, stream.chunked { output.bytes.append(contentsOf: HTTPSerializer.lastChunk) }
        ended = end
        break pump
      }
      if bytes.isEmpty { break pump }
      flush()
      if output.hasPending { break pump }
    }
    pumping = false
    guard let ended, !isClosed else {
      if !isClosed, let deadline = stream.source.nextTakeDeadline {
        scheduleStreamTake(at: deadline)
      }
      return
    }
    if let timer = e.streamTimer { loop.cancel(timer) }
    e.stream = nil
    e.streamTimer = nil
    var failed = false
    if case .failed = ended { failed = true }
    // A finished source lets the plan go on; a failed one completes it unserved and closes.
    let action = machine.streamEnded(failed: failed)
    flush()
    if !isClosed || failed { perform(action) }
  }

  /// Loop thread: the deferred step's plan is ready; its steps run in place of the deferred one.
  fileprivate func resumeDeferred(with plan: ResponsePlan) {
    guard machine.isAwaitingWork else { return plan.abandon() }
    let e = execution
    e.steps = plan.steps + e.steps[machine.stepIndex...]
    _ = machine.awaitedPlanArrived(stepCount: e.steps.count, planKeepAlive: plan.keepAlive)
    if let next = plan.onComplete {
      let first = e.onComplete
      e.onComplete = { served in
        first?(served)
        next(served)
      }
    }
    runSteps()
  }

  /// Reports the plan in execution as served or not (once: its callback is taken; nil once no plan is in
  /// execution), and drops its steps.
  private func finishPlan(served: Bool) {
    let e = execution
    let done = e.onComplete
    e.onComplete = nil
    e.steps = []
    done?(served)
  }

  private func writeHead(_ authored: HTTPResponseHead, contentLength: Int) {
    ResponseHeadWriter.write(
      authored, contentLength: contentLength, dateLine: loop.httpDateLine(),
      server: owner.serverLine,
      connection: connectionLine(), into: &output.bytes)
  }

  /// A streamed response's head: `Content-Length` when known, else chunked or no framing at all.
  private func writeStreamHead(_ authored: HTTPResponseHead, contentLength: Int?, chunked: Bool) {
    ResponseHeadWriter.write(
      authored, contentLength: contentLength, chunked: chunked, dateLine: loop.httpDateLine(),
      server: owner.serverLine, connection: connectionLine(), into: &output.bytes)
  }

  /// The `Connection` line the machine decided for this response: close, HTTP/1.0 keep-alive, or none.
  private func connectionLine() -> [UInt8] {
    switch machine.connectionField {
    case .none: []
    case .keepAlive: ResponseHeadWriter.connectionKeepAlive
    case .close: ResponseHeadWriter.connectionClose
    }
  }

  // MARK: Writing

  /// Writes `content` after the output (a head already in it), then goes on as ``flush()`` does.
  private func writeContent(_ content: [UInt8]) {
    outputWritten(output.write(content, to: stream, now: SocketOps.monotonicNanos))
  }

  private func flush() {
    outputWritten(output.flush(to: stream, now: SocketOps.monotonicNanos))
  }

  /// Goes on after a write: waits for the socket to be writable, closes after a failure, or, drained,
  /// does what the machine says comes next.
  private func outputWritten(_ outcome: OutputBuffer.FlushOutcome) {
    switch outcome {
    case .wouldBlock:
      updateInterest(forceWritable: true)
      return
    case .failed:
      close(served: false)
      return
    case .drained:
      break
    }
    if wantsWritable { updateInterest() }
    switch machine.outputDrained(inputIdle: parser.isIdle) {
    case .pumpStream:
      pumpStream()
    case .processInput:
      processInput()
      resumeReadingIfRoom()
      applyBackPressure()
    case let closing:
      performClosing(closing)
    }
  }

  private func updateInterest(forceWritable: Bool = false) {
    guard !isClosed else { return }
    let writable = forceWritable || output.hasPending
    wantsWritable = writable
    loop.setInterest(fd: fd, readable: machine.wantsInput, writable: writable)
  }

  /// The response that closes the connection is complete: flush, then close or linger, as the machine
  /// decides.
  private func beginClosing() {
    performClosing(
      machine.beginClosing(outputPending: output.hasPending, inputIdle: parser.isIdle))
  }

  /// Performs the machine's decision on closing: keep flushing (the writable event goes on), close, or
  /// a lingering close — the write side shut down and input drained until the peer closes or the time
  /// is up, so the client reads the whole response instead of a reset caused by unread request bytes.
  private func performClosing(_ action: ConnectionStateMachine.Action) {
    switch action {
    case .close(let served):
      close(served: served)
    case .lingeringClose(let milliseconds):
      stream.shutdownWrite()
      lingerTimer = loop.schedule(afterMilliseconds: milliseconds) { [weak self] in
        guard let self else { return }
        self.perform(self.machine.timerFired(.lingeringClose))
      }
      updateInterest()
    default:
      break
    }
  }

  /// Closes the connection now (with a TCP reset when `reset`), completing any plan in flight as not
  /// served.
  func close(served: Bool, reset: Bool = false) {
    guard !isClosed else { return }
    if machine.isExecuting {
      let e = execution
      if let timer = e.timer { loop.cancel(timer) }
      if let timer = e.streamTimer { loop.cancel(timer) }
      e.stream?.source.cancel()
    }
    if let timer = lingerTimer {
      loop.cancel(timer)
      lingerTimer = nil
    }
    finishPlan(served: false)
    releaseCountedContent()
    reading.body = []
    upgraded = nil
    machine.closed()
    loop.deregister(fd: fd, closing: true)
    stream.close(reset: reset, inputDrained: inputDrainedThisEvent)
    owner.connectionClosed(self)
  }

  // MARK: Timeouts (called by the server's sweep)

  /// Applies idle and head timeouts, and the write timeout: output the peer has not taken a byte of for
  /// the idle timeout closes the connection in any phase (a client that never reads held its response's
  /// memory for good). `now` in monotonic ns.
  func checkTimeouts(now: UInt64, idleNanos: UInt64, headNanos: UInt64) {
    let action = machine.timeoutsChecked(
      ConnectionStateMachine.TimeoutCheck(
        now: now, idleNanos: idleNanos, headNanos: headNanos, lastActivity: lastActivity,
        acceptedAt: acceptedAt, writeStalledSince: output.stalledSince,
        outputPending: output.hasPending,
        handshaking: stream.isHandshaking, inputIdle: parser.isIdle,
        readingHead: parser.isReadingHead))
    perform(action)
  }

  private func timeOutRequest() {
    let plan = ResponsePlan.json(
      status: .requestTimeout, #"{"error":"request not received in time","status":408}"#,
      keepAlive: false)
    start(plan, method: currentHead?.method ?? .get, forceClose: true)
  }

  /// Graceful shutdown: close at once when idle; otherwise the response in flight finishes first and the
  /// connection then closes (its keep-alive is withdrawn).
  func shutdownGracefully() {
    switch machine.serverStopping(idle: parser.isIdle && output.isEmpty) {
    case .close(let served):
      close(served: served)
    case .stopStream:
      if let upgraded {
        // A WebSocket says goodbye (close 1001) and ends; the connection closes once that is flushed.
        upgraded.serverStopping()
        pumpStream()
      } else {
        execution.stream?.source.serverStopping()
      }
    default:
      break
    }
  }
}

/// A connection reference carried through a background queue back to its loop. `@unchecked Sendable`:
/// `connection` is only read on the connection's loop thread (in a closure given to `EventLoop.execute`).
private struct LoopBound: @unchecked Sendable {
  weak var connection: Connection?
  init(_ connection: Connection) { self.connection = connection }
}
