import Foundation
import HTTPCore

/// One HTTP/1.1 connection: reads requests through a ``ByteStream``, asks the responder for a
/// ``ResponsePlan`` per request and executes it, answering pipelined requests strictly in order.
///
/// Invariant: a connection is created, used and closed only on its event loop's thread (every entry point
/// is an `EventHandler` callback, a loop timer, or the server's sweep on that loop), so its mutable state
/// needs no lock.
final class Connection: EventHandler {
  private enum Phase {
    /// Reading (or waiting for) the next request.
    case reading
    /// Executing a plan; further pipelined bytes are buffered, not parsed.
    case executing
    /// The response is written and the write side shut; reading and discarding until the peer closes.
    case draining
    case closed
  }

  let id: UInt64
  private let stream: ByteStream
  private unowned let loop: EventLoop
  private unowned let owner: ServerLoopContext
  private let clientAddress: String
  private let localPort: Int
  private let isTLS: Bool

  private var parser: HTTPParser
  private var phase = Phase.reading
  private var out: [UInt8] = []
  private var outOffset = 0
  private var wantsWritable = false
  private var readable = true
  private var peerClosed = false

  private var head: HTTPRequestHead?
  private var body: [UInt8] = []
  private var requestCount = 0
  private var headStartedAt: UInt64?
  private(set) var lastActivity: UInt64
  /// When the connection was accepted (monotonic ns): bounds a handshake that never completes.
  private let acceptedAt: UInt64
  /// The last read wanted the socket writable (a TLS handshake flight did not fit): retry it on EPOLLOUT.
  private var readWantsWritable = false

  private var steps: [ResponsePlan.Step] = []
  private var stepIndex = 0
  private var planKeepAlive = true
  private var requestMethod = HTTPMethod.get
  private var onComplete: (@Sendable (Bool) -> Void)?
  private var timer: LoopTimer?
  private var closeWhenFlushed = false
  /// True while answering a request whose content was read to the end (not a rejection or an early answer).
  private var requestFullyRead = false
  private var resetWhenClosed = false

  init(
    id: UInt64, stream: ByteStream, loop: EventLoop, owner: ServerLoopContext, clientAddress: String,
    localPort: Int, isTLS: Bool, limits: ParserLimits
  ) {
    self.id = id
    self.stream = stream
    self.loop = loop
    self.owner = owner
    self.clientAddress = clientAddress
    self.localPort = localPort
    self.isTLS = isTLS
    self.parser = HTTPParser(mode: .request, limits: limits)
    self.lastActivity = SocketOps.monotonicNanos()
    self.acceptedAt = lastActivity
  }

  var fd: Int32 { stream.fd }
  var isIdle: Bool { phase == .reading && parser.isIdle && out.isEmpty }

  // MARK: Events

  func handleEvent(readable isReadable: Bool, writable: Bool, hangUp: Bool) {
    if writable, phase != .closed {
      flush()
    }
    if isReadable || (writable && readWantsWritable), phase != .closed {
      readAvailable()
    }
  }

  private func readAvailable() {
    let buffer = loop.readBuffer
    var gotBytes = false
    readWantsWritable = false
    while phase != .closed {
      switch stream.read(into: buffer) {
      case .bytes(let n):
        gotBytes = true
        lastActivity = SocketOps.monotonicNanos()
        if phase == .draining { continue }
        if headStartedAt == nil, parser.isReadingHead { headStartedAt = lastActivity }
        parser.append(UnsafeRawBufferPointer(rebasing: buffer[0..<n]))
        if n < buffer.count && !stream.hasBufferedInput { break }
        continue
      case .wouldBlock(let wantsWrite):
        if wantsWrite {
          readWantsWritable = true
          updateInterest(forceWritable: true)
        }
      case .eof:
        peerClosed = true
      case .failed:
        close(served: false)
        return
      }
      break
    }
    if gotBytes, phase == .reading { processInput() }
    if peerClosed { handlePeerClosed() }
    if phase == .executing, parser.bufferedByteCount > (1 << 20) {
      readable = false
      updateInterest()
    }
  }

  private func handlePeerClosed() {
    switch phase {
    case .closed:
      return
    case .draining:
      close(served: true)
    case .reading:
      close(served: false)
    case .executing:
      if timer != nil || stepIndex < steps.count {
        // The client gave up while we were waiting (delay, dribble, hold): stop.
        close(served: false)
      } else {
        planKeepAlive = false
        readable = false
        updateInterest()
      }
    }
  }

  // MARK: Requests

  private var processing = false

  private func processInput() {
    guard !processing else { return }
    processing = true
    defer { processing = false }
    while phase == .reading, out.count - outOffset < (256 << 10) {
      let event: HTTPParserEvent?
      do {
        event = try parser.next()
      } catch {
        reject(error)
        return
      }
      guard let event else { return }
      switch event {
      case .requestHead(let h):
        head = h
        body.removeAll(keepingCapacity: true)
        headStartedAt = nil
        if handleExpectation(h) { return }
      case .body(let bytes):
        if body.isEmpty { body = bytes } else { body.append(contentsOf: bytes) }
      case .end(let trailers):
        guard let h = head else { continue }
        head = nil
        requestCount += 1
        let request = HTTPRequest(head: h, body: body, trailers: trailers)
        body = []
        let plan = owner.responder.respond(to: request, context: context())
        start(plan, for: h, forceClose: false)
      case .responseHead:
        continue
      }
    }
  }

  /// Handles `Expect` (RFC 9110 §10.1.1). Returns true when a response was started instead of reading on.
  private func handleExpectation(_ h: HTTPRequestHead) -> Bool {
    guard h.headers.contains("Expect") else { return false }  // no allocation on the common path
    let expectations = h.headers.values("Expect")
    let hasContent =
      h.headers.contains("Transfer-Encoding")
      || (h.headers.first("Content-Length").map { $0 != "0" } ?? false)
    if expectations.count == 1, expectations[0].equalsIgnoringASCIICase("100-continue") {
      guard hasContent, h.version == .http1_1 else { return false }
      if let plan = owner.responder.respondBeforeContent(to: h, context: context()) {
        requestCount += 1
        head = nil
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
    head = nil
    let plan = ResponsePlan.json(
      status: HTTPStatus(code: 417), #"{"error":"unsupported expectation","status":417}"#, keepAlive: false)
    start(plan, for: h, forceClose: true)
    return true
  }

  private func reject(_ error: HTTPParserError) {
    owner.responder.didReject(head: head, error: error, context: context())
    let status = error.status
    let message = jsonEscaped(error.description)
    let plan = ResponsePlan.json(
      status: status, #"{"error":"\#(message)","status":\#(status.code)}"#, keepAlive: false)
    start(
      plan, for: head ?? HTTPRequestHead(method: parser.lastRequestMethod ?? .get, target: "/"),
      forceClose: true)
  }

  private func context() -> RequestContext {
    RequestContext(
      clientAddress: clientAddress, localPort: localPort, isTLS: isTLS,
      clientCertificateSubject: stream.peerDescription, connectionID: id, requestNumber: requestCount,
      receivedAt: Date().timeIntervalSince1970)
  }

  // MARK: Plans

  private func start(_ plan: ResponsePlan, for h: HTTPRequestHead, forceClose: Bool) {
    phase = .executing
    requestFullyRead = !forceClose
    steps = plan.steps
    stepIndex = 0
    requestMethod = h.method
    onComplete = plan.onComplete
    planKeepAlive =
      plan.keepAlive && !forceClose && h.wantsKeepAlive && !owner.isShuttingDown
      && !peerClosed
    http10KeepAlive = h.version == .http1_0
    runSteps()
  }

  private var http10KeepAlive = false

  private func runSteps() {
    while phase == .executing, stepIndex < steps.count {
      let step = steps[stepIndex]
      stepIndex += 1
      switch step {
      case .response(let responseHead, let content):
        let sends = HTTPSerializer.sendsContent(status: responseHead.status, requestMethod: requestMethod)
        writeHead(responseHead, contentLength: content.count)
        if sends { out.append(contentsOf: content) }
        flush()
      case .prepared(let prepared):
        out.append(contentsOf: prepared.headPrefix)
        ResponseHeadWriter.writeConnectionFields(
          hasDate: prepared.hasDate, hasServer: prepared.hasServer, date: loop.httpDateBytes(),
          server: owner.serverLine, connection: connectionLine, into: &out)
        if HTTPSerializer.sendsContent(status: prepared.status, requestMethod: requestMethod) {
          out.append(contentsOf: prepared.body)
        }
        flush()
      case .responseHead(let responseHead, let contentLength):
        writeHead(responseHead, contentLength: contentLength)
        flush()
      case .raw(let bytes):
        out.append(contentsOf: bytes)
        flush()
      case .pause(let ms):
        timer = loop.schedule(afterMilliseconds: ms) { [weak self] in
          guard let self else { return }
          self.timer = nil
          self.runSteps()
        }
        return
      case .hold(let maxMs):
        let limit = min(maxMs, owner.configuration.maxHoldMilliseconds)
        timer = loop.schedule(afterMilliseconds: limit) { [weak self] in
          guard let self else { return }
          self.timer = nil
          self.finishPlan(served: true)
          self.close(served: true)
        }
        return
      case .reset:
        finishPlan(served: true)
        resetWhenClosed = true
        close(served: true)
        return
      case .close:
        finishPlan(served: true)
        beginClosing()
        return
      }
    }
    guard phase == .executing else { return }
    finishPlan(served: true)
    if planKeepAlive {
      phase = .reading
      if !readable {
        readable = true
        updateInterest()
      }
      if out.isEmpty { processInput() }
    } else {
      beginClosing()
    }
  }

  private func finishPlan(served: Bool) {
    steps = []
    stepIndex = 0
    if let done = onComplete {
      onComplete = nil
      done(served)
    }
  }

  private func writeHead(_ authored: HTTPResponseHead, contentLength: Int) {
    ResponseHeadWriter.write(
      authored, contentLength: contentLength, date: loop.httpDateBytes(), server: owner.serverLine,
      connection: connectionLine, into: &out)
  }

  /// The `Connection` line this response needs: close, HTTP/1.0 keep-alive, or none.
  private var connectionLine: [UInt8] {
    !planKeepAlive
      ? ResponseHeadWriter.connectionClose : (http10KeepAlive ? ResponseHeadWriter.connectionKeepAlive : [])
  }

  // MARK: Writing

  private func flush() {
    while outOffset < out.count {
      let result = out.withUnsafeBytes { buffer in
        stream.write(UnsafeRawBufferPointer(rebasing: buffer[outOffset...]))
      }
      switch result {
      case .bytes(let n):
        outOffset += n
      case .wouldBlock:
        updateInterest(forceWritable: true)
        return
      case .eof, .failed:
        close(served: false)
        return
      }
    }
    if out.capacity > (1 << 20) { out = [] } else { out.removeAll(keepingCapacity: true) }
    outOffset = 0
    if wantsWritable { updateInterest() }
    if closeWhenFlushed {
      closeWhenFlushed = false
      drain()
    } else if phase == .reading {
      processInput()
    }
  }

  private func updateInterest(forceWritable: Bool = false) {
    guard phase != .closed else { return }
    let writable = forceWritable || outOffset < out.count
    wantsWritable = writable
    loop.setInterest(fd: fd, readable: readable && !peerClosed, writable: writable)
  }

  /// Flushes, then shuts the write side and drains input until the peer closes (lingering close), so the
  /// client reads the whole response instead of a reset caused by unread request bytes.
  private func beginClosing() {
    phase = .draining
    if outOffset < out.count {
      closeWhenFlushed = true
    } else {
      drain()
    }
  }

  private func drain() {
    phase = .draining
    // Lingering only protects a response from a reset caused by request bytes the server never read. When
    // the request was read whole and nothing else is buffered, close at once (a FIN, as nginx does).
    if peerClosed || (requestFullyRead && parser.isIdle) {
      close(served: true)
      return
    }
    stream.shutdownWrite()
    readable = true
    updateInterest()
    if let timer { loop.cancel(timer) }
    timer = loop.schedule(afterMilliseconds: 2000) { [weak self] in
      self?.timer = nil
      self?.close(served: true)
    }
  }

  /// Closes the connection now (RST if a reset was planned), completing any plan in flight as not served.
  func close(served: Bool) {
    guard phase != .closed else { return }
    phase = .closed
    if let timer { loop.cancel(timer) }
    timer = nil
    finishPlan(served: false)
    loop.deregister(fd: fd, closing: true)
    stream.close(reset: resetWhenClosed)
    owner.connectionClosed(self)
  }

  // MARK: Timeouts (called by the server's sweep)

  /// Applies idle and head timeouts; `now` in monotonic ns.
  func checkTimeouts(now: UInt64, idleNanos: UInt64, headNanos: UInt64) {
    guard phase == .reading, out.isEmpty else { return }
    if stream.isHandshaking {
      // A TLS handshake is a request head not yet received: same limit, counted from accept.
      if now - acceptedAt > headNanos { close(served: false) }
      return
    }
    if let started = headStartedAt, parser.isReadingHead, !parser.isIdle, now - started > headNanos {
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
    start(plan, for: head ?? HTTPRequestHead(method: .get, target: "/"), forceClose: true)
  }

  /// Graceful shutdown: close at once when idle; otherwise the response in flight finishes first and the
  /// connection then closes (its keep-alive is withdrawn).
  func shutdownGracefully() {
    if isIdle || phase == .draining {
      close(served: false)
    } else {
      planKeepAlive = false
    }
  }
}

/// Escapes a string for inclusion inside JSON double quotes.
func jsonEscaped(_ s: String) -> String {
  var out = ""
  for scalar in s.unicodeScalars {
    switch scalar {
    case "\"": out += "\\\""
    case "\\": out += "\\\\"
    case "\n": out += "\\n"
    case "\r": out += "\\r"
    case "\t": out += "\\t"
    case let c where c.value < 0x20:
      let hex = String(c.value, radix: 16)
      out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
    default: out.unicodeScalars.append(scalar)
    }
  }
  return out
}
