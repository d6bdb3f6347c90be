import Dispatch
import Foundation
import HTTPCore
import Synchronization

/// Makes the byte stream for an accepted socket: plain TCP, or a TLS session (returns nil to refuse).
typealias StreamFactory = @Sendable (_ fd: Int32) -> ByteStream?

/// Per-loop server state: the loop's connections, the responder, the configuration.
///
/// Invariant: `connections` and `acceptors` are touched only on `loop`'s thread (the `@unchecked Sendable`
/// conformance rests on it); `server` is reached from the loop for shared, lock-guarded counters.
final class ServerLoopContext: @unchecked Sendable {
  let loop: EventLoop
  let responder: HTTPResponder
  let configuration: ServerConfiguration
  unowned let server: HTTPServer
  /// The open connections, each at its ``Connection/slot``; a closed one is swapped with the last (no
  /// hashing of ids: a dictionary insert and removal were about 400 instructions per connection). Loop
  /// thread only, and never changed while another access is in progress: no dynamic exclusivity check.
  @exclusivity(unchecked) private var connections: [Connection] = []
  private var acceptors: [Acceptor] = []
  private(set) var isShuttingDown = false
  /// This loop has told the server it drained; it must say so once only (it said so twice when its
  /// last connections were idle ones that ``beginShutdown()`` closed, and the server then stopped
  /// while another loop still had responses in flight).
  private var reportedDrained = false
  private var sweepTimer: LoopTimer?
  /// `Server: NAME CRLF`, or nothing when the configuration has no server header.
  let serverLine: [UInt8]

  init(loop: EventLoop, responder: HTTPResponder, configuration: ServerConfiguration, server: HTTPServer) {
    self.loop = loop
    self.responder = responder
    self.configuration = configuration
    self.server = server
    serverLine = configuration.serverHeader.map { Array("Server: \($0)\r\n".utf8) } ?? []
  }

  /// Loop thread: starts accepting on `listener` with streams from `factory`.
  func addListener(_ listener: Listener, isTLS: Bool, factory: @escaping StreamFactory) {
    let acceptor = Acceptor(listener: listener, context: self, isTLS: isTLS, factory: factory)
    acceptors.append(acceptor)
    loop.register(fd: listener.fd, handler: acceptor)
  }

  func accepted(fd: Int32, peer: ClientAddress, localPort: Int, isTLS: Bool, factory: StreamFactory) {
    guard !isShuttingDown, server.reserveConnectionSlot() else {
      let refusal = Array(
        "HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".utf8)
      refusal.withUnsafeBytes { _ = SocketOps.send(fd, $0) }
      SocketOps.close(fd)
      return
    }
    guard let stream = factory(fd) else {
      server.releaseConnectionSlot()
      SocketOps.close(fd)
      return
    }
    let connection = Connection(
      id: server.nextConnectionID(), stream: stream, loop: loop, owner: self, client: peer,
      localPort: localPort, isTLS: isTLS, limits: configuration.limits)
    connection.slot = connections.count
    connections.append(connection)
    loop.register(fd: fd, handler: connection)
    if sweepTimer == nil { scheduleSweep() }
  }

  func connectionClosed(_ connection: Connection) {
    let slot = connection.slot
    if slot >= 0, slot < connections.count, connections[slot] === connection {
      let last = connections.removeLast()
      if slot < connections.count {
        connections[slot] = last
        last.slot = slot
      }
      connection.slot = -1
      server.releaseConnectionSlot()
    }
    if isShuttingDown, connections.isEmpty { reportDrained() }
  }

  /// Loop thread: tells the server this loop has no connection left, once.
  private func reportDrained() {
    guard !reportedDrained else { return }
    reportedDrained = true
    server.loopDrained()
  }

  var connectionCount: Int { connections.count }

  /// Loop thread: checks the connections' idle and head timeouts every 250 ms while there are
  /// connections; a loop without any has no timer (an idle server is not woken).
  private func scheduleSweep() {
    sweepTimer = loop.schedule(afterMilliseconds: 250) { [weak self] in
      guard let self else { return }
      self.sweepTimer = nil
      let now = SocketOps.monotonicNanos()
      let idle = ResponseTiming.timerNanoseconds(self.configuration.idleTimeoutMilliseconds)
      let head = ResponseTiming.timerNanoseconds(self.configuration.requestHeadTimeoutMilliseconds)
      for connection in self.connections {
        connection.checkTimeouts(now: now, idleNanos: idle, headNanos: head)
      }
      if !self.isShuttingDown, !self.connections.isEmpty { self.scheduleSweep() }
    }
  }

  /// Loop thread: stop accepting, close idle connections, let the others finish.
  func beginShutdown() {
    isShuttingDown = true
    for acceptor in acceptors {
      acceptor.cancelPause()
      loop.deregister(fd: acceptor.listener.fd)
      acceptor.listener.close()
    }
    acceptors.removeAll()
    for connection in connections { connection.shutdownGracefully() }
    if connections.isEmpty { reportDrained() }
  }

  /// Loop thread: close everything now. Returns how many connections were still busy (a response in
  /// flight or a request being read): the ones a graceful shutdown cut.
  func forceClose() -> Int {
    var cut = 0
    for connection in connections {
      if !connection.isIdle { cut += 1 }
      connection.close(served: false)
    }
    return cut
  }
}

/// Accepts connections for one listener on one loop.
///
/// Out of descriptors (`EMFILE`/`ENFILE`), `accept` fails while the connection stays queued, so a
/// level-triggered listener stays readable and the loop would spin at full CPU while new clients hang.
/// As nginx does, the acceptor then (1) gives up a spare descriptor it keeps open on `/dev/null` to
/// accept the pending connection, answers `503` and closes it, and takes the spare back; and (2) when
/// that does not help (no spare, or other loops took the freed slot), stops watching the listener for
/// ``pauseMilliseconds`` and tries again after.
final class Acceptor: EventHandler {
  let listener: Listener
  private unowned let context: ServerLoopContext
  private let isTLS: Bool
  private let factory: StreamFactory
  /// Held open so that one descriptor can be freed to refuse a connection when the process is out.
  private var spare: Int32 = Acceptor.openSpare()
  private var pauseTimer: LoopTimer?
  /// How long accepting pauses when descriptors are exhausted and the spare did not help.
  static let pauseMilliseconds = 100
  static let refusal = Array(
    ("HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
      + "Content-Length: 55\r\nConnection: close\r\n\r\n"
      + #"{"error":"server out of file descriptors","status":503}"#).utf8)

  init(listener: Listener, context: ServerLoopContext, isTLS: Bool, factory: @escaping StreamFactory) {
    self.listener = listener
    self.context = context
    self.isTLS = isTLS
    self.factory = factory
  }

  deinit {
    if spare >= 0 { SocketOps.close(spare) }
    pauseTimer?.cancel()
  }

  private static func openSpare() -> Int32 { open("/dev/null", O_RDONLY | O_CLOEXEC) }

  /// Accepts one connection per readiness event, as nginx does by default (`multi_accept off`): the
  /// listener is level-triggered, so when more connections wait the loop's next wait reports it again at
  /// once, beside the other connections' events. Accepting until `EAGAIN` cost a failing accept per
  /// wake-up: one per connection when clients connect one after another (`ab`).
  func handleEvent(readable: Bool, writable: Bool, hangUp: Bool) {
    switch listener.accept() {
    case .accepted(let fd, let peer):
      context.accepted(fd: fd, peer: peer, localPort: listener.port, isTLS: isTLS, factory: factory)
    case .wouldBlock, .failed:
      return
    case .exhausted:
      if !refuseWithSpare() { pause() }
    }
  }

  /// Frees the spare descriptor, accepts one pending connection, answers 503 and closes it. Returns
  /// false when that did not work.
  private func refuseWithSpare() -> Bool {
    guard spare >= 0 else {
      spare = Acceptor.openSpare()
      return false
    }
    SocketOps.close(spare)
    spare = -1
    defer { spare = Acceptor.openSpare() }
    guard case .accepted(let fd, _) = listener.accept() else { return false }
    context.server.countRefusedForDescriptors()
    Acceptor.refusal.withUnsafeBytes { _ = SocketOps.send(fd, $0) }
    SocketOps.close(fd)
    return true
  }

  /// Stops watching the listener for a moment (it stays readable while a connection waits for a
  /// descriptor, and would wake the loop at once).
  private func pause() {
    guard pauseTimer == nil, !context.isShuttingDown else { return }
    context.loop.setInterest(fd: listener.fd, readable: false, writable: false)
    pauseTimer = context.loop.schedule(afterMilliseconds: Acceptor.pauseMilliseconds) { [weak self] in
      guard let self else { return }
      self.pauseTimer = nil
      guard !self.context.isShuttingDown else { return }
      self.context.loop.setInterest(fd: self.listener.fd, readable: true, writable: false)
    }
  }

  /// Loop thread: stops the pause timer (shutdown).
  func cancelPause() {
    if let pauseTimer { context.loop.cancel(pauseTimer) }
    pauseTimer = nil
  }
}

/// An HTTP/1.1 server: event loops (epoll or poll, ``EventLoopBackend``) on their own threads, serving a
/// ``HTTPResponder``.
///
/// Start it with ``start()``, read ``port``, stop it with ``shutdown(graceful:)``. Safe to use from any
/// thread; the responder runs on loop threads.
public final class HTTPServer: Sendable {
  /// The configuration the server was created with.
  public let configuration: ServerConfiguration
  private let responder: HTTPResponder
  private struct State {
    var contexts: [ServerLoopContext] = []
    var listeners: [Listener] = []
    var boundPort = 0
    var boundAddress = ""
    var extraListeners: [(port: Int, address: String)] = []
    var running = false
    var backend: EventLoopBackend?
    var drainedLoops = 0
    var stopped = false
  }
  private let state = Mutex(State())
  private let openConnections = Atomic<Int>(0)
  private let connectionIDs = Atomic<UInt64>(0)
  private let refusedForDescriptors = Atomic<Int>(0)
  /// Request content buffered by every connection together (``ServerConfiguration/maxBufferedRequestBytes``).
  private let bufferedRequestBytes = Atomic<Int>(0)
  private let stoppedSignal = DispatchSemaphore(value: 0)

  /// Creates a server; nothing is bound until ``start()``.
  public init(configuration: ServerConfiguration, responder: HTTPResponder) {
    self.configuration = configuration
    self.responder = responder
  }

  /// Binds the listener and starts the event loops.
  /// - Throws: ``IOError`` when the address cannot be resolved or bound (e.g. port in use), or the
  ///   configured or environment's event-loop backend is not one this system has.
  public func start() throws(IOError) {
    let backend: EventLoopBackend
    if let configured = configuration.eventLoopBackend {
      backend = configured
    } else {
      backend = try EventLoopBackend.fromEnvironment()
    }
    SocketOps.raiseOpenFileLimit()
    let loopCount = max(1, configuration.eventLoops)
    var contexts: [ServerLoopContext] = []
    var listeners: [Listener] = []
    var port = configuration.port
    for index in 0..<loopCount {
      let listener = try Listener(host: configuration.host, port: port, reusePort: loopCount > 1)
      port = listener.port
      let loop = try EventLoop(backend: backend)
      let context = ServerLoopContext(
        loop: loop, responder: responder, configuration: configuration, server: self)
      loop.start(name: "mockserver-\(index)")
      loop.execute {
        context.addListener(listener, isTLS: false) { fd in PlainByteStream(fd: fd) }
      }
      contexts.append(context)
      listeners.append(listener)
    }
    let first = listeners[0]
    state.withLock {
      $0.contexts = contexts
      $0.listeners = listeners
      $0.boundPort = first.port
      $0.boundAddress = first.address
      $0.running = true
      $0.backend = backend
    }
  }

  /// Adds another listener (e.g. HTTPS) on the first event loop, with streams made by `factory`.
  /// - Returns: the bound port.
  func addListener(host: String, port: Int, isTLS: Bool, factory: @escaping StreamFactory) throws(IOError)
    -> Int
  {
    let listener = try Listener(host: host, port: port)
    guard let context = state.withLock({ $0.contexts.first }) else { return listener.port }
    context.loop.execute {
      context.addListener(listener, isTLS: isTLS, factory: factory)
    }
    state.withLock { $0.extraListeners.append((listener.port, listener.address)) }
    return listener.port
  }

  /// The readiness mechanism the event loops run on; nil before ``start()``.
  public var eventLoopBackend: EventLoopBackend? { state.withLock { $0.backend } }

  /// The TCP port the HTTP listener is bound to (the real one when 0 was configured).
  public var port: Int { state.withLock { $0.boundPort } }

  /// The numeric address bound, e.g. `127.0.0.1` or `::1`.
  public var boundAddress: String { state.withLock { $0.boundAddress } }

  /// `http://HOST:PORT` with IPv6 literals in brackets.
  public var baseURL: String {
    let host = boundAddress
    return "http://\(host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host):\(port)"
  }

  /// Connections open right now, across loops.
  public var connectionCount: Int { openConnections.load(ordering: .relaxed) }

  /// Stops the server. Graceful: stop accepting, close idle connections, let responses in flight finish
  /// for up to ``ServerConfiguration/shutdownGraceMilliseconds``, then close the rest. Returns when every
  /// loop has stopped. Safe to call more than once and from any thread (not from a loop thread).
  /// - Returns: how many connections were still busy when the grace ran out (or at once, when not
  ///   graceful) and were closed: responses cut. 0 when every response in flight finished.
  @discardableResult
  public func shutdown(graceful: Bool = true) -> Int {
    let contexts: [ServerLoopContext] = state.withLock { s in
      guard s.running else { return [] }
      s.running = false
      return s.contexts
    }
    guard !contexts.isEmpty else {
      return 0
    }
    for context in contexts {
      context.loop.execute { context.beginShutdown() }
    }
    if graceful {
      _ = stoppedSignal.wait(
        timeout: .now() + .milliseconds(configuration.shutdownGraceMilliseconds))
    }
    let done = DispatchGroup()
    let cut = Atomic<Int>(0)
    for context in contexts {
      done.enter()
      context.loop.execute {
        cut.add(context.forceClose(), ordering: .relaxed)
        done.leave()
      }
    }
    _ = done.wait(timeout: .now() + .seconds(2))
    for context in contexts { context.loop.stop() }
    state.withLock { $0.stopped = true }
    return cut.load(ordering: .relaxed)
  }

  // MARK: Internal bookkeeping (any loop thread)

  func reserveConnectionSlot() -> Bool {
    let now = openConnections.add(1, ordering: .relaxed).newValue
    if now > configuration.maxConnections {
      openConnections.subtract(1, ordering: .relaxed)
      return false
    }
    return true
  }

  func releaseConnectionSlot() {
    openConnections.subtract(1, ordering: .relaxed)
  }

  /// Counts `count` more bytes of buffered request content; false (nothing counted) when that would go
  /// beyond ``ServerConfiguration/maxBufferedRequestBytes``.
  func reserveRequestContent(_ count: Int) -> Bool {
    let now = bufferedRequestBytes.add(count, ordering: .relaxed).newValue
    if now > configuration.maxBufferedRequestBytes {
      bufferedRequestBytes.subtract(count, ordering: .relaxed)
      return false
    }
    return true
  }

  /// Gives back `count` bytes counted by ``reserveRequestContent(_:)``.
  func releaseRequestContent(_ count: Int) {
    bufferedRequestBytes.subtract(count, ordering: .relaxed)
  }

  /// Connections answered 503 and closed because the process was out of file descriptors.
  public var refusedForLackOfDescriptors: Int { refusedForDescriptors.load(ordering: .relaxed) }

  func countRefusedForDescriptors() {
    refusedForDescriptors.add(1, ordering: .relaxed)
  }

  /// The process's open-file limit when `maxConnections` connections (plus the descriptors the server
  /// needs for itself) would not fit in it, else nil. Read after ``start()``, which raises the soft
  /// limit to the hard one.
  public static func openFileLimitBelow(maxConnections: Int) -> Int? {
    guard let limit = SocketOps.openFileLimit() else { return nil }
    return maxConnections > limit - reservedDescriptors ? limit : nil
  }

  /// Descriptors the process needs besides connections: standard streams, listeners, the notifier's
  /// two per loop (epoll and eventfd, or a pipe), the spare per listener, the watcher, files read by
  /// reloads and admin saves.
  public static let reservedDescriptors = 32

  func nextConnectionID() -> UInt64 {
    connectionIDs.add(1, ordering: .relaxed).newValue
  }

  func loopDrained() {
    let all = state.withLock { s -> Bool in
      s.drainedLoops += 1
      return s.drainedLoops == s.contexts.count
    }
    if all { stoppedSignal.signal() }
  }
}
