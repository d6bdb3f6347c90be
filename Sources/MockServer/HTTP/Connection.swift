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
  /// What the connection is doing; each case carries exactly the data that phase needs, so no field of
  /// one phase can outlive it.
  ///
  /// The reading and executing phases' data are the connection's one ``Reading`` and one ``Execution``
  /// (`reading`, `execution`), so those cases carry none: taking a payload out of the enum retained and
  /// released it at every phase check, several per request.
  private enum State {
    /// Reading (or waiting for) the next request, into `reading`.
    case reading
    /// Executing the plan in `execution`; further pipelined bytes are buffered, not parsed.
    case executing
    /// The response is written (or being flushed) and the write side will be shut; reading and discarding
    /// until the peer closes or the linger time ends.
    case draining(Draining)
    /// Closed; nothing more happens.
    case closed
  }

  /// The request being received. A class, as ``Execution`` is: the phase's data is changed in place
  /// through one reference instead of being copied out of the enum and back (each copy retained and
  /// released every field: about 2,000 instructions per request). Confined to the loop's thread like
  /// the connection, so without dynamic exclusivity checks (see `state`).
  private final class Reading {
    /// Its head, once parsed; nil between requests.
    @exclusivity(unchecked) var head: HTTPRequestHead?
    /// Its content so far.
    @exclusivity(unchecked) var body: [UInt8] = []
    /// When the first byte of its head arrived (monotonic ns), for the head timeout.
    @exclusivity(unchecked) var headStartedAt: UInt64?
    /// Bytes of `body` counted against the server's buffered-content budget.
    @exclusivity(unchecked) var countedBytes = 0
  }

  /// A response plan being executed.
  private final class Execution {
    @exclusivity(unchecked) var steps: [ResponsePlan.Step] = []
    @exclusivity(unchecked) var stepIndex = 0
    /// The method of the request answered (HEAD gets no content).
    @exclusivity(unchecked) var requestMethod = HTTPMethod.get
    /// Keep the connection open afterwards.
    @exclusivity(unchecked) var keepAlive = false
    /// The request was HTTP/1.0, so keep-alive is announced.
    @exclusivity(unchecked) var http10 = false
    /// The request's content was read to the end (not a rejection or an early answer).
    @exclusivity(unchecked) var requestFullyRead = false
    @exclusivity(unchecked) var onComplete: (@Sendable (Bool) -> Void)?
    /// A pause or hold in progress.
    @exclusivity(unchecked) var timer: LoopTimer?
    /// An ``ResponsePlan/Step/awaiting(_:)`` step's plan is being made elsewhere.
    @exclusivity(unchecked) var waitingForWork = false
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
      steps: [ResponsePlan.Step], requestMethod: HTTPMethod, keepAlive: Bool, http10: Bool,
      requestFullyRead: Bool, onComplete: (@Sendable (Bool) -> Void)?
    ) {
      self.steps = steps
      stepIndex = 0
      self.requestMethod = requestMethod
      self.keepAlive = keepAlive
      self.http10 = http10
      self.requestFullyRead = requestFullyRead
      self.onComplete = onComplete
      timer = nil
      waitingForWork = false
      stream = nil
      streamTimer = nil
    }
  }

  /// A ``ContentSource`` being written, pumped while the output has room.
  private struct ContentStream {
    let source: any ContentSource
    /// Each piece goes out as a chunk (RFC 9112 §7.1), ended by the last chunk.
    let chunked: Bool
    /// The content only ends with the connection (``ContentFraming/untilClose``): a graceful shutdown
    /// closes it at once instead of waiting for an end that never comes.
    let untilClose: Bool
  }

  /// Closing after the last response.
  private struct Draining {
    /// The last request's content was read to the end.
    var requestFullyRead: Bool
    /// Output is still being flushed; the write side is shut once it is.
    var flushing: Bool
    /// Ends lingering.
    var timer: LoopTimer?
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
  // its object, `updateReading`/`updateExecution`, whose closures touch only that data): the dynamic
  // exclusivity checks cost about 1,900 instructions per request (a `swift_beginAccess` per property
  // read, six in `applyBackPressure` alone), so they are off for these properties.
  @exclusivity(unchecked) private var state: State
  /// The connection's one ``Reading``, in `state` whenever it reads: reset for each request instead of
  /// allocated again.
  private let reading: Reading
  /// The connection's one ``Execution``, in `state` whenever it executes a plan, set up for each plan.
  private let execution = Execution()
  @exclusivity(unchecked) private var parser: HTTPParser
  // Socket-level state, meaningful in every phase.
  @exclusivity(unchecked) private var out: [UInt8] = []
  @exclusivity(unchecked) private var outOffset = 0
  @exclusivity(unchecked) private var wantsWritable = false
  @exclusivity(unchecked) private var readable = true
  @exclusivity(unchecked) private var peerClosed = false
  /// The last read wanted the socket writable (a TLS handshake flight did not fit): retry it on EPOLLOUT.
  @exclusivity(unchecked) private var readWantsWritable = false
  /// True from a read that found the socket empty (a short read, or end of stream) until the event is
  /// handled: a close within that event needs no read to drop pending input (one `read` returning
  /// EAGAIN per closed connection, which nginx does not make).
  @exclusivity(unchecked) private var inputDrainedThisEvent = false
  @exclusivity(unchecked) private var requestCount = 0
  @exclusivity(unchecked) private(set) var lastActivity: UInt64
  /// Since when output has been waiting without a byte accepted by the peer (monotonic ns), or nil when
  /// nothing waits or the last write made progress. A write stalled for the idle timeout closes.
  @exclusivity(unchecked) private var writeStalledSince: UInt64?
  /// Most unsent output, or unparsed input, before the connection stops reading: back-pressure between
  /// pipelined requests, so a client that sends without reading cannot make the server buffer without
  /// bound.
  static let readPauseBytes = 1 << 20
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
    id: UInt64, stream: ByteStream, loop: EventLoop, owner: ServerLoopContext, client: ClientAddress,
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
    self.state = .reading
    self.lastActivity = SocketOps.monotonicNanos()
    self.acceptedAt = lastActivity
  }

  var fd: Int32 { stream.fd }
  var isIdle: Bool {
    if case .reading = state { return reading.head == nil && parser.isIdle && out.isEmpty }
    return false
  }
  private var isClosed: Bool {
    if case .closed = state { return true }
    return false
  }
  private var isReading: Bool {
    if case .reading = state { return true }
    return false
  }

  /// Changes the request being read, if one is.
  private func updateReading(_ change: (Reading) -> Void) {
    guard case .reading = state else { return }
    change(reading)
  }

  /// Changes the plan in execution, if one is.
  private func updateExecution(_ change: (Execution) -> Void) {
    guard case .executing = state else { return }
    change(execution)
  }

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
    readWantsWritable = false
    while !isClosed {
      switch stream.read(into: buffer) {
      case .bytes(let n):
        gotBytes = true
        lastActivity = SocketOps.monotonicNanos()
        if case .draining = state { continue }
        if parser.isReadingHead {
          let now = lastActivity
          updateReading { r in if r.headStartedAt == nil { r.headStartedAt = now } }
        }
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
        peerClosed = true
        inputDrainedThisEvent = true
      case .failed:
        close(served: false)
        return
      }
      break
    }
    // After a half-close too: the requests received before the FIN are still answered.
    if gotBytes || peerClosed, isReading { processInput() }
    if gotBytes, upgraded != nil { pumpStream() }
    if peerClosed { handlePeerClosed() }
    applyBackPressure()
  }

  /// Stops reading while the input not yet parsed or the output not yet sent is over
  /// ``readPauseBytes``, in every phase (it held only while a plan executed, so a client pipelining
  /// requests without reading the answers grew the input buffer by every byte it sent).
  private func applyBackPressure() {
    switch state {
    case .closed, .draining: return
    case .reading, .executing: break
    }
    if readable,
      parser.bufferedByteCount > Connection.readPauseBytes
        || out.count - outOffset > Connection.readPauseBytes
    {
      readable = false
      updateInterest()
    }
  }

  /// Reads again once both buffers are back under the bound (after output drained or input was parsed).
  private func resumeReadingIfRoom() {
    guard !readable, isReading, parser.bufferedByteCount <= Connection.readPauseBytes,
      out.count - outOffset <= Connection.readPauseBytes
    else { return }
    readable = true
    updateInterest()
  }

  private func handlePeerClosed() {
    switch state {
    case .closed:
      return
    case .draining(let d):
      // Output still being flushed is sent first (`drain` closes once it is).
      if d.flushing { updateInterest() } else { close(served: true) }
    case .reading:
      // A half-close ends the input, not the exchange: every request received before the FIN is answered
      // (pipelined requests, then `shutdown(SHUT_WR)`); `processInput` (run just before) closes once no
      // complete request is left.
      updateInterest()
    case .executing where upgraded != nil:
      // The peer of an upgraded connection left (a WebSocket's TCP close).
      close(served: true)
    case .executing:
      let e = execution
      if e.timer != nil || e.waitingForWork || e.stepIndex < e.steps.count {
        // The client gave up while we were waiting (delay, dribble, hold): stop.
        close(served: false)
      } else {
        if parser.bufferedByteCount == 0 { updateExecution { $0.keepAlive = false } }
        readable = false
        updateInterest()
      }
    }
  }

  // MARK: Requests

  private func processInput() {
    guard !processing else { return }
    processing = true
    defer { processing = false }
    var answered = 0
    while isReading, out.count - outOffset < (256 << 10) {
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
        // Empty lines before a request-line are ignored (RFC 9112 §2.2), so they do not start the head
        // timeout either: only a byte of the request-line does.
        if parser.isIdle { reading.headStartedAt = nil }
        // The peer half-closed and no complete request is left: the answers given are flushed, then the
        // connection closes.
        if peerClosed { beginClosing(requestFullyRead: true) }
        return
      case .requestHead?:
        let h = parser.takeRequestHead()
        guard case .reading = state else { continue }
        releaseCountedContent()
        reading.body = []
        reading.headStartedAt = nil
        if h.headers.contains("Expect") {
          reading.head = h
          if handleExpectation(h) { return }
        } else {
          reading.head = consume h  // moved, not copied: the common path
        }
      case .body?:
        let bytes = parser.takeContent()
        guard case .reading = state else { continue }
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
        guard case .reading = state, let h = reading.head.take() else { continue }
        let r = reading
        var body: [UInt8] = []
        swap(&body, &r.body)
        r.headStartedAt = nil
        if r.countedBytes != 0 { releaseCountedContent() }
        requestCount += 1
        // What the connection needs of the head is read first, so the head moves into the request
        // (a copy retained and released its storage).
        let method = h.method
        let wantsKeepAlive = h.wantsKeepAlive
        let http10 = h.version == .http1_0
        let request = HTTPRequest(head: consume h, body: body, trailers: trailers)
        let plan = owner.responder.respond(to: request, context: context())
        start(plan, method: method, wantsKeepAlive: wantsKeepAlive, http10: http10, forceClose: false)
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
    start(plan, for: currentHead ?? HTTPRequestHead(method: .post, target: "/"), forceClose: true)
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

  /// Handles `Expect` (RFC 9110 §10.1.1) of a head that has the field (the caller checked, so the common
  /// path makes no list). Returns true when a response was started instead of reading on.
  private func handleExpectation(_ h: HTTPRequestHead) -> Bool {
    let expectations = h.headers.values("Expect")
    let hasContent =
      h.headers.contains("Transfer-Encoding")
      || (h.headers.first("Content-Length").map { $0 != "0" } ?? false)
    if expectations.count == 1, expectations[0].equalsIgnoringASCIICase("100-continue") {
      guard hasContent, h.version == .http1_1 else { return false }
      if let plan = owner.responder.respondBeforeContent(to: h, context: context()) {
        requestCount += 1
        start(plan, for: h, forceClose: true)
        return true
      }
      if parser.bufferedByteCount == 0 {
        out.append(contentsOf: "HTTP/1.1 100 Continue\r\n\r\n".utf8)
        flush()
      }
      return false
    }
    requestCount += 1
    let plan = ResponsePlan.json(
      status: HTTPStatus(code: 417), #"{"error":"unsupported expectation","status":417}"#, keepAlive: false)
    start(plan, for: h, forceClose: true)
    return true
  }

  /// The head of the request being read, if its head was parsed.
  private var currentHead: HTTPRequestHead? {
    if case .reading = state { return reading.head }
    return nil
  }

  private func reject(_ error: HTTPParserError) {
    let head = currentHead
    owner.responder.didReject(head: head, error: error, context: context())
    let status = error.status
    let plan = ResponsePlan.json(
      status: status, #"{"error":\#(JSONValue.quoted(error.description)),"status":\#(status.code)}"#,
      keepAlive: false)
    start(
      plan, for: head ?? HTTPRequestHead(method: parser.lastRequestMethod ?? .get, target: "/"),
      forceClose: true)
  }

  private func context() -> RequestContext {
    RequestContext(
      client: client, localPort: localPort, isTLS: isTLS,
      clientCertificateSubject: stream.peerDescription, connectionID: id, requestNumber: requestCount,
      receivedAt: Date().timeIntervalSince1970)
  }

  // MARK: Plans

  private func start(_ plan: ResponsePlan, for h: HTTPRequestHead, forceClose: Bool) {
    start(
      plan, method: h.method, wantsKeepAlive: h.wantsKeepAlive, http10: h.version == .http1_0,
      forceClose: forceClose)
  }

  /// Runs `plan` for a request of `method`; `wantsKeepAlive` and `http10` are the request head's.
  private func start(
    _ plan: ResponsePlan, method: HTTPMethod, wantsKeepAlive: Bool, http10: Bool, forceClose: Bool
  ) {
    if forceClose {
      // An early answer or a rejection: what was read of the request is not kept while the plan runs.
      reading.head = nil
      reading.body = []
      releaseCountedContent()
    }
    execution.begin(
      steps: plan.steps, requestMethod: method,
      keepAlive: plan.keepAlive && !forceClose && wantsKeepAlive && !owner.isShuttingDown
        && (!peerClosed || parser.bufferedByteCount > 0),
      http10: http10, requestFullyRead: !forceClose, onComplete: plan.onComplete)
    state = .executing
    runSteps()
  }

  /// Writes a prepared response: its framed head, this connection's `Date`/`Server`/`Connection` lines,
  /// and its content unless the status or request method has none.
  private func writePrepared(_ prepared: PreparedResponse, _ e: Execution) {
    // Sized once for the whole answer (on a new connection the output grew, reallocating, as the head, the
    // connection's fields and the content were appended: about 800 instructions per connection).
    let needed = out.count &+ prepared.byteCount &+ Connection.connectionFieldsBytes
    if out.capacity < needed { out.reserveCapacity(needed) }
    prepared.writeFramedHead(into: &out)
    ResponseHeadWriter.writeConnectionFields(
      hasDate: prepared.hasDate, hasServer: prepared.hasServer, dateLine: loop.httpDateLine(),
      server: owner.serverLine, connection: connectionLine(e), into: &out)
    if HTTPSerializer.sendsContent(status: prepared.status, requestMethod: e.requestMethod) {
      writeContent(prepared.body)
    } else {
      flush()
    }
  }

  /// Room for what the connection adds to a head: `Content-Length`, `Date`, `Server`, `Connection`.
  static let connectionFieldsBytes = 160

  private func runSteps() {
    let e = execution
    while case .executing = state, e.stepIndex < e.steps.count {
      let index = e.stepIndex
      e.stepIndex += 1
      // The common step first, its payload bound in place: a copy of the whole step (a multi-payload
      // enum) went through value witnesses.
      if case .prepared(let prepared) = e.steps[index] {
        writePrepared(prepared, e)
        continue
      }
      let step = e.steps[index]
      switch step {
      case .response(let responseHead, let content):
        let sends = HTTPSerializer.sendsContent(status: responseHead.status, requestMethod: e.requestMethod)
        writeHead(responseHead, contentLength: content.count, e)
        if sends { writeContent(content) } else { flush() }
      case .prepared(let prepared):
        writePrepared(prepared, e)
      case .responseHead(let responseHead, let contentLength):
        writeHead(responseHead, contentLength: contentLength, e)
        flush()
      case .raw(let bytes):
        out.append(contentsOf: bytes)
        flush()
      case .pause(let ms):
        let timer = loop.schedule(afterMilliseconds: ms) { [weak self] in
          guard let self else { return }
          self.updateExecution { $0.timer = nil }
          self.runSteps()
        }
        updateExecution { $0.timer = timer }
        return
      case .hold(let maxMs):
        let limit = min(maxMs, owner.configuration.maxHoldMilliseconds)
        let timer = loop.schedule(afterMilliseconds: limit) { [weak self] in
          guard let self else { return }
          self.updateExecution { $0.timer = nil }
          self.finishPlan(served: true)
          self.close(served: true)
        }
        updateExecution { $0.timer = timer }
        return
      case .reset:
        finishPlan(served: true)
        close(served: true, reset: true)
        return
      case .awaiting(let start):
        updateExecution { $0.waitingForWork = true }
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
        finishPlan(served: true)
        beginClosing(requestFullyRead: e.requestFullyRead)
        return
      case .streamedResponse(let responseHead, let framing, let source):
        if startStream(responseHead, framing: framing, source: source, e) { return }
      case .upgrade(let responseHead, let session):
        startUpgraded(responseHead, session: session, e)
        return
      }
    }
    guard case .executing = state else { return }
    finishPlan(served: true)
    if e.keepAlive {
      // Bytes of a pipelined head that arrived during the plan count towards the head timeout from now.
      reading.head = nil
      reading.body = []
      reading.headStartedAt = parser.isIdle ? nil : SocketOps.monotonicNanos()
      state = .reading
      if out.isEmpty { processInput() }
      if !readable, isReading, parser.bufferedByteCount <= Connection.readPauseBytes,
        out.count - outOffset <= Connection.readPauseBytes
      {
        readable = true
        updateInterest()
      }
      applyBackPressure()
    } else {
      beginClosing(requestFullyRead: e.requestFullyRead)
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
    let sends = HTTPSerializer.sendsContent(status: head.status, requestMethod: e.requestMethod)
    if framing == .untilClose { updateExecution { $0.keepAlive = false } }
    guard sends, !(framing == .untilClose && owner.isShuttingDown) else {
      source.cancel()
      if framing == .untilClose {
        writeStreamHead(head, contentLength: nil, chunked: false, e)
      } else if framing == .chunked, !head.status.forbidsContent {
        // HEAD: the head a GET gets (RFC 9110 §9.3.2), without its content.
        writeStreamHead(head, contentLength: nil, chunked: !e.http10, e)
      } else {
        writeHead(head, contentLength: framing.length ?? 0, e)
      }
      flush()
      return false
    }
    // Without a length, an HTTP/1.0 client reads the content to the connection's end.
    if framing == .chunked && e.http10 { updateExecution { $0.keepAlive = false } }
    guard case .executing = state else { return false }
    let chunked = framing == .chunked && !e.http10
    writeStreamHead(head, contentLength: framing.length, chunked: chunked, e)
    let target = LoopBound(self)
    let loop = self.loop
    let waiting = source.attach { loop.execute { target.connection?.pumpStream() } }
    updateExecution {
      $0.stream = ContentStream(source: source, chunked: chunked, untilClose: framing == .untilClose)
    }
    updateExecution { $0.streamWroteAt = SocketOps.monotonicNanos() }
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
    e.keepAlive = false
    ResponseHeadWriter.write(
      head, contentLength: nil, chunked: false, dateLine: loop.httpDateLine(), server: owner.serverLine,
      connection: Connection.connectionUpgrade, into: &out)
    finishPlan(served: true)
    let leftover = parser.takeUnparsedBytes()
    upgraded = session
    let target = LoopBound(self)
    let loop = self.loop
    _ = session.attach { loop.execute { target.connection?.pumpStream() } }
    e.stream = ContentStream(source: session, chunked: false, untilClose: true)
    flush()
    guard case .executing = state else { return }
    if !leftover.isEmpty { leftover.withUnsafeBytes { session.receive($0) } }
    pumpStream()
    if !readable {
      readable = true
      updateInterest()
    }
  }

  /// The heartbeat's bytes once the stream's output has been idle for the interval (no content taken
  /// and nothing unsent): an event stream's comment line keeps proxies and the client from timing the
  /// connection out.
  private func scheduleHeartbeat(_ heartbeat: ContentHeartbeat, afterMilliseconds delay: Int) {
    let timer = loop.schedule(afterMilliseconds: delay) { [weak self] in
      guard let self, case .executing = self.state, self.execution.stream != nil else { return }
      self.updateExecution { $0.timer = nil }
      let interval = UInt64(heartbeat.intervalMilliseconds) * 1_000_000
      let now = SocketOps.monotonicNanos()
      let idle = now &- self.execution.streamWroteAt
      var next = heartbeat.intervalMilliseconds
      if idle < interval {
        // Content went out meanwhile: the idle time counts from it.
        next = max(1, Int((interval - idle + 999_999) / 1_000_000))
      } else if self.outOffset == self.out.count, let stream = self.execution.stream {
        self.appendStreamContent(heartbeat.bytes, chunked: stream.chunked)
        self.updateExecution { $0.streamWroteAt = now }
        self.flush()
      }
      if case .executing = self.state, self.execution.stream != nil {
        self.scheduleHeartbeat(heartbeat, afterMilliseconds: next)
      }
    }
    updateExecution { $0.timer = timer }
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
      guard let self, case .executing = self.state else { return }
      self.execution.streamTimer = nil
      self.pumpStream()
    }
  }

  /// Appends a stream's content to the output: one chunk (RFC 9112 §7.1) when `chunked`, else as it is.
  private func appendStreamContent(_ bytes: [UInt8], chunked: Bool) {
    if chunked {
      out.append(contentsOf: String(bytes.count, radix: 16).utf8)
      out.append(contentsOf: [13, 10])
      out.append(contentsOf: bytes)
      out.append(contentsOf: [13, 10])
    } else {
      out.append(contentsOf: bytes)
    }
  }

  /// Loop thread: moves produced content into the output while it is under the source's bound; stops
  /// when the socket is full (the writable event resumes it through ``flush()``). A source that finished
  /// lets the plan go on; one that failed closes the connection.
  fileprivate func pumpStream() {
    guard !pumping, case .executing = state, let stream = execution.stream else { return }
    let e = execution
    pumping = true
    var ended: ContentEnd?
    pump: while !isClosed {
      let room = stream.source.outputBound - (out.count - outOffset)
      guard room > 0 else { break pump }
      let (bytes, end) = stream.source.take(maxBytes: room)
      if !bytes.isEmpty {
        e.streamWroteAt = SocketOps.monotonicNanos()
        appendStreamContent(bytes, chunked: stream.chunked)
      }
      if let end {
        if case .finished = end, stream.chunked { out.append(contentsOf: HTTPSerializer.lastChunk) }
        ended = end
        break pump
      }
      if bytes.isEmpty { break pump }
      flush()
      if outOffset < out.count { break pump }
    }
    pumping = false
    guard let ended, !isClosed else {
      if !isClosed, let deadline = stream.source.nextTakeDeadline { scheduleStreamTake(at: deadline) }
      return
    }
    if let timer = e.streamTimer { loop.cancel(timer) }
    updateExecution {
      $0.stream = nil
      $0.streamTimer = nil
    }
    switch ended {
    case .finished:
      flush()
      if !isClosed { runSteps() }
    case .failed:
      flush()
      finishPlan(served: false)
      beginClosing(requestFullyRead: e.requestFullyRead)
    }
  }

  /// Loop thread: the deferred step's plan is ready; its steps run in place of the deferred one.
  fileprivate func resumeDeferred(with plan: ResponsePlan) {
    guard case .executing = state, execution.waitingForWork else { return plan.abandon() }
    updateExecution { e in
      e.waitingForWork = false
      e.steps = plan.steps + e.steps[e.stepIndex...]
      e.stepIndex = 0
      e.keepAlive = e.keepAlive && plan.keepAlive
      if let next = plan.onComplete {
        let first = e.onComplete
        e.onComplete = { served in
          first?(served)
          next(served)
        }
      }
    }
    runSteps()
  }

  /// Reports the plan in execution as served or not (once), and drops its steps.
  private func finishPlan(served: Bool) {
    var done: (@Sendable (Bool) -> Void)?
    updateExecution { e in
      done = e.onComplete
      e.onComplete = nil
      e.steps = []
      e.stepIndex = 0
    }
    done?(served)
  }

  private func writeHead(_ authored: HTTPResponseHead, contentLength: Int, _ e: Execution) {
    ResponseHeadWriter.write(
      authored, contentLength: contentLength, dateLine: loop.httpDateLine(), server: owner.serverLine,
      connection: connectionLine(e), into: &out)
  }

  /// A streamed response's head: `Content-Length` when known, else chunked or no framing at all.
  private func writeStreamHead(
    _ authored: HTTPResponseHead, contentLength: Int?, chunked: Bool, _ e: Execution
  ) {
    ResponseHeadWriter.write(
      authored, contentLength: contentLength, chunked: chunked, dateLine: loop.httpDateLine(),
      server: owner.serverLine, connection: connectionLine(e), into: &out)
  }

  /// The `Connection` line this response needs: close, HTTP/1.0 keep-alive, or none.
  private func connectionLine(_ e: Execution) -> [UInt8] {
    !e.keepAlive
      ? ResponseHeadWriter.connectionClose : (e.http10 ? ResponseHeadWriter.connectionKeepAlive : [])
  }

  // MARK: Writing

  /// Content from this size on is written beside the output with one gathering `sendmsg` instead of
  /// being copied behind it. Measured on loopback (docs/performance.md): below about 32 KiB the gather
  /// costs the kernel more than the copy costs user space; at 64 KiB it saves 2 µs of copying per write.
  static let gatheredContentBytes = 32 << 10

  /// Writes `content` after the output (a head already in it), then flushes: large content is sent with
  /// the head in one gathering write, and only what the socket did not take is copied into the output.
  private func writeContent(_ content: [UInt8]) {
    guard content.count >= Connection.gatheredContentBytes else {
      out.append(contentsOf: content)
      flush()
      return
    }
    let pending = out.count - outOffset
    let result = out.withUnsafeBytes { buffer in
      content.withUnsafeBytes { body in
        stream.write(UnsafeRawBufferPointer(rebasing: buffer[outOffset...]), body)
      }
    }
    guard case .bytes(let n) = result else {
      // No gathering write, or it failed or would block: the plain path meets the same condition.
      out.append(contentsOf: content)
      flush()
      return
    }
    if n > 0 { writeStalledSince = nil }
    if n >= pending {
      out.removeAll(keepingCapacity: true)
      outOffset = 0
      out.append(contentsOf: content[(n - pending)...])
    } else {
      outOffset += n
      out.append(contentsOf: content)
    }
    flush()
  }

  private func flush() {
    while outOffset < out.count {
      let result = out.withUnsafeBytes { buffer in
        stream.write(UnsafeRawBufferPointer(rebasing: buffer[outOffset...]))
      }
      switch result {
      case .bytes(let n):
        outOffset += n
        if n > 0 { writeStalledSince = nil }
      case .wouldBlock:
        if writeStalledSince == nil { writeStalledSince = SocketOps.monotonicNanos() }
        updateInterest(forceWritable: true)
        return
      case .eof, .failed:
        close(served: false)
        return
      }
    }
    if out.capacity > (1 << 20) { out = [] } else { out.removeAll(keepingCapacity: true) }
    outOffset = 0
    writeStalledSince = nil
    if wantsWritable { updateInterest() }
    switch state {
    case .draining(let d) where d.flushing:
      drain(requestFullyRead: d.requestFullyRead)
    case .executing where execution.stream != nil:
      pumpStream()
    case .reading:
      processInput()
      resumeReadingIfRoom()
      applyBackPressure()
    default:
      break
    }
  }

  private func updateInterest(forceWritable: Bool = false) {
    guard !isClosed else { return }
    let writable = forceWritable || outOffset < out.count
    wantsWritable = writable
    loop.setInterest(fd: fd, readable: readable && !peerClosed, writable: writable)
  }

  /// Flushes, then shuts the write side and drains input until the peer closes (lingering close), so the
  /// client reads the whole response instead of a reset caused by unread request bytes.
  private func beginClosing(requestFullyRead: Bool) {
    if outOffset < out.count {
      state = .draining(Draining(requestFullyRead: requestFullyRead, flushing: true))
    } else {
      drain(requestFullyRead: requestFullyRead)
    }
  }

  private func drain(requestFullyRead: Bool) {
    // Lingering only protects a response from a reset caused by request bytes the server never read. When
    // the request was read whole and nothing else is buffered, close at once (a FIN, as nginx does).
    if peerClosed || (requestFullyRead && parser.isIdle) {
      close(served: true)
      return
    }
    stream.shutdownWrite()
    readable = true
    let timer = loop.schedule(afterMilliseconds: 2000) { [weak self] in
      self?.close(served: true)
    }
    state = .draining(Draining(requestFullyRead: requestFullyRead, flushing: false, timer: timer))
    updateInterest()
  }

  /// Closes the connection now (with a TCP reset when `reset`), completing any plan in flight as not
  /// served.
  func close(served: Bool, reset: Bool = false) {
    switch state {
    case .closed: return
    case .executing:
      let e = execution
      if let timer = e.timer { loop.cancel(timer) }
      if let timer = e.streamTimer { loop.cancel(timer) }
      e.stream?.source.cancel()
    case .draining(let d): if let timer = d.timer { loop.cancel(timer) }
    case .reading: break
    }
    finishPlan(served: false)
    releaseCountedContent()
    reading.body = []
    upgraded = nil
    state = .closed
    loop.deregister(fd: fd, closing: true)
    stream.close(reset: reset, inputDrained: inputDrainedThisEvent)
    owner.connectionClosed(self)
  }

  // MARK: Timeouts (called by the server's sweep)

  /// Applies idle and head timeouts, and the write timeout: output the peer has not taken a byte of for
  /// the idle timeout closes the connection in any phase (a client that never reads held its response's
  /// memory for good). `now` in monotonic ns.
  func checkTimeouts(now: UInt64, idleNanos: UInt64, headNanos: UInt64) {
    if let stalled = writeStalledSince, outOffset < out.count, now > stalled, now - stalled > idleNanos {
      close(served: false)
      return
    }
    guard case .reading = state, out.isEmpty else { return }
    let r = reading
    if stream.isHandshaking {
      // A TLS handshake is a request head not yet received: same limit, counted from accept.
      if now - acceptedAt > headNanos { close(served: false) }
      return
    }
    if let started = r.headStartedAt, parser.isReadingHead, !parser.isIdle, now - started > headNanos {
      timeOutRequest()
    } else if parser.isIdle, now - lastActivity > idleNanos {
      close(served: false)
    } else if !parser.isIdle, !parser.isReadingHead, now - lastActivity > idleNanos {
      timeOutRequest()
    }
  }

  private func timeOutRequest() {
    let plan = ResponsePlan.json(
      status: .requestTimeout, #"{"error":"request not received in time","status":408}"#, keepAlive: false)
    start(plan, for: currentHead ?? HTTPRequestHead(method: .get, target: "/"), forceClose: true)
  }

  /// Graceful shutdown: close at once when idle; otherwise the response in flight finishes first and the
  /// connection then closes (its keep-alive is withdrawn).
  func shutdownGracefully() {
    switch state {
    case .draining: close(served: false)
    case .reading where isIdle: close(served: false)
    case .executing where upgraded != nil:
      // A WebSocket says goodbye (close 1001) and ends; the connection closes once that is flushed.
      upgraded?.serverStopping()
      pumpStream()
    // An event stream never ends by itself.
    case .executing where execution.stream?.untilClose == true: close(served: true)
    case .executing:
      updateExecution { $0.keepAlive = false }
      execution.stream?.source.serverStopping()
    default: break
    }
  }
}

/// A connection reference carried through a background queue back to its loop. `@unchecked Sendable`:
/// `connection` is only read on the connection's loop thread (in a closure given to `EventLoop.execute`).
private struct LoopBound: @unchecked Sendable {
  weak var connection: Connection?
  init(_ connection: Connection) { self.connection = connection }
}
