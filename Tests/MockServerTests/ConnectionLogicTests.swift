import HTTPCore
import Testing

@testable import MockServer

/// A scripted in-memory byte stream: what the "client" sends is queued with ``feed(_:)`` or ``endInput()``,
/// what the connection writes is collected in ``written``; writes can be made to block.
final class MemoryByteStream: ByteStream {
  let fd: Int32 = 900
  private var input: [[UInt8]] = []
  private var inputEnded = false
  var written: [UInt8] = []
  /// Bytes accepted, over all writes, before answering would-block; nil: everything.
  var writeAllowance: Int?
  /// Writes `first` and `second` with one call, as a plain socket does (`sendmsg`); off: as TLS (nil).
  var gathers = false
  /// Gathering writes made.
  private(set) var gatheredWrites = 0
  /// Every write fails (a reset peer).
  var fails = false
  private(set) var shutDown = false
  private(set) var closed = false
  private(set) var resetOnClose = false

  func feed(_ text: String) { input.append(Array(text.utf8)) }
  func endInput() { inputEnded = true }
  var text: String { String(decoding: written, as: UTF8.self) }

  func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
    guard !input.isEmpty else { return inputEnded ? .eof : .wouldBlock(wantsWrite: false) }
    var chunk = input.removeFirst()
    let n = min(chunk.count, buffer.count)
    chunk.withUnsafeBytes { buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    if n < chunk.count {
      chunk.removeFirst(n)
      input.insert(chunk, at: 0)
    }
    return .bytes(n)
  }

  func write(_ first: UnsafeRawBufferPointer, _ second: UnsafeRawBufferPointer) -> IOResult? {
    guard gathers else { return nil }
    gatheredWrites += 1
    if fails { return .failed(IOError("sendmsg", errno: 104)) }
    let head = write(first)
    guard case .bytes(let n) = head else { return head }
    guard n == first.count, case .bytes(let m) = write(second) else { return n > 0 ? .bytes(n) : head }
    return .bytes(n + m)
  }

  func write(_ bytes: UnsafeRawBufferPointer) -> IOResult {
    if fails { return .failed(IOError("send", errno: 104)) }
    if let allowance = writeAllowance {
      guard allowance > 0 else { return .wouldBlock(wantsWrite: true) }
      let n = min(allowance, bytes.count)
      written.append(contentsOf: bytes[0..<n])
      writeAllowance = allowance - n
      return .bytes(n)
    }
    written.append(contentsOf: bytes)
    return .bytes(bytes.count)
  }

  var hasBufferedInput: Bool { false }
  var isHandshaking: Bool { false }
  var peerDescription: String? { nil }
  func shutdownWrite() { shutDown = true }
  func close(reset: Bool, inputDrained: Bool) {
    closed = true
    resetOnClose = reset
  }
}

/// One ``Connection`` over a ``MemoryByteStream``, driven synchronously from the test: no sockets, no
/// loop thread (the loop is created but never run, so timers only fire when a test fires them).
struct ConnectionHarness {
  let stream = MemoryByteStream()
  let connection: Connection
  let context: ServerLoopContext
  private let server: HTTPServer

  init(responder: HTTPResponder = PathResponder(), configure: (inout ServerConfiguration) -> Void = { _ in })
    throws
  {
    var configuration = ServerConfiguration()
    configure(&configuration)
    server = HTTPServer(configuration: configuration, responder: responder)
    let loop = try EventLoop()
    context = ServerLoopContext(
      loop: loop, responder: responder, configuration: configuration, server: server)
    connection = Connection(
      id: 1, stream: stream, loop: loop, owner: context, client: .text("127.0.0.1:1"), localPort: 80,
      isTLS: false, limits: configuration.limits)
  }

  /// Delivers `text` and a readable event.
  func send(_ text: String) {
    stream.feed(text)
    connection.handleEvent(readable: true, writable: false, hangUp: false)
  }

  /// The peer closes its sending side.
  func endInput() {
    stream.endInput()
    connection.handleEvent(readable: true, writable: false, hangUp: false)
  }

  /// The socket became writable.
  func writable() { connection.handleEvent(readable: false, writable: true, hangUp: false) }
}

@Suite("Connection logic without sockets (RFC 9112 §9)")
struct ConnectionLogicTests {
  @Test func keepAliveAnswersEachRequest() throws {
    let h = try ConnectionHarness()
    h.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(h.stream.text.hasSuffix("ok:/a"))
    h.send("GET /b HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(h.stream.text.hasSuffix("ok:/b"))
    #expect(!h.stream.closed)
    #expect(!h.stream.text.contains("Connection: close"))
  }

  @Test func pipelinedRequestsInOneReadAreAnsweredInOrder() throws {
    let h = try ConnectionHarness()
    h.send(
      "GET /1 HTTP/1.1\r\nHost: x\r\n\r\nGET /2 HTTP/1.1\r\nHost: x\r\n\r\nGET /3 HTTP/1.1\r\nHost: x\r\n\r\n"
    )
    let text = h.stream.text
    let positions = ["ok:/1", "ok:/2", "ok:/3"].compactMap { text.range(of: $0)?.lowerBound }
    #expect(positions.count == 3)
    #expect(positions == positions.sorted())
  }

  @Test func connectionCloseFinishesThenCloses() throws {
    let h = try ConnectionHarness()
    h.send("GET /a HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    #expect(h.stream.text.contains("Connection: close\r\n"))
    #expect(h.stream.text.hasSuffix("ok:/a"))
    #expect(h.stream.closed)
    #expect(!h.stream.resetOnClose)
  }

  @Test func http10ClosesUnlessKeepAlive() throws {
    let plain = try ConnectionHarness()
    plain.send("GET /a HTTP/1.0\r\n\r\n")
    #expect(plain.stream.closed)
    let kept = try ConnectionHarness()
    kept.send("GET /a HTTP/1.0\r\nConnection: keep-alive\r\n\r\n")
    #expect(kept.stream.text.contains("Connection: keep-alive\r\n"))
    #expect(!kept.stream.closed)
  }

  @Test func expectContinueThenContent() throws {
    let h = try ConnectionHarness()
    h.send("POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n")
    #expect(h.stream.text == "HTTP/1.1 100 Continue\r\n\r\n")
    h.send("hello")
    #expect(h.stream.text.hasSuffix("hello"))
    #expect(h.stream.text.components(separatedBy: "100 Continue").count == 2)
  }

  @Test func expectContinueRejectedBeforeContent() throws {
    let h = try ConnectionHarness()
    h.send("PUT /reject HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n")
    #expect(h.stream.text.hasPrefix("HTTP/1.1 413 "))
    #expect(!h.stream.text.contains("100 Continue"))
    #expect(h.stream.text.contains("Connection: close\r\n"))
    // The content was never read, so the connection lingers (write side shut) before closing.
    #expect(h.stream.shutDown)
  }

  @Test func halfCloseAfterACompleteRequestStillGetsTheResponse() throws {
    let h = try ConnectionHarness()
    h.stream.feed("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    h.endInput()
    #expect(h.stream.text.hasSuffix("ok:/a"))
    // epoll reports the end of input again (level-triggered); the idle connection then closes.
    h.connection.handleEvent(readable: true, writable: false, hangUp: false)
    #expect(h.stream.closed)
  }

  @Test func peerLeavingDuringADelayCancelsIt() throws {
    let h = try ConnectionHarness()
    h.send("GET /delay/5000 HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(h.stream.written.isEmpty)
    h.endInput()
    #expect(h.stream.closed)
    #expect(h.stream.written.isEmpty)
  }

  @Test func blockedWritesAreFlushedWhenWritable() throws {
    let h = try ConnectionHarness()
    h.stream.writeAllowance = 10
    h.send("GET /big/5000 HTTP/1.1\r\nHost: x\r\n\r\nGET /after HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(h.stream.written.count == 10)
    h.stream.writeAllowance = nil
    h.writable()
    #expect(h.stream.text.contains(String(repeating: "a", count: 5000)))
    #expect(h.stream.text.hasSuffix("ok:/after"))
  }

  @Test func headAndIdleTimeouts() throws {
    let h = try ConnectionHarness { $0.requestHeadTimeoutMilliseconds = 100 }
    h.send("GET /slow HTTP/1.1\r\nHo")
    h.connection.checkTimeouts(
      now: SocketOps.monotonicNanos() + 200_000_000, idleNanos: 60_000_000_000, headNanos: 100_000_000)
    #expect(h.stream.text.hasPrefix("HTTP/1.1 408 "))
    #expect(h.stream.text.contains("Connection: close\r\n"))

    let idle = try ConnectionHarness()
    idle.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\n")
    idle.connection.checkTimeouts(
      now: SocketOps.monotonicNanos() + 2_000_000_000, idleNanos: 1_000_000_000, headNanos: 1_000_000_000)
    #expect(idle.stream.closed)
  }

  @Test func malformedRequestGetsItsStatusAndCloses() throws {
    let h = try ConnectionHarness()
    h.send("GET / HTTP/1.1\r\nHost: x\r\nBad Field: 1\r\n\r\n")
    #expect(h.stream.text.hasPrefix("HTTP/1.1 400 "))
    #expect(h.stream.text.contains("Connection: close\r\n"))
  }

  @Test func resetStepClosesWithRST() throws {
    let h = try ConnectionHarness()
    h.send("GET /reset HTTP/1.1\r\nHost: x\r\n\r\n")
    #expect(h.stream.closed)
    #expect(h.stream.resetOnClose)
    #expect(h.stream.written.isEmpty)
  }
}
