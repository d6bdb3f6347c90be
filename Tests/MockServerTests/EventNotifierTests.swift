import Foundation
import HTTPCore
import MockServerCLI
import Synchronization
import TestSupport
import Testing

@testable import MockServer

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The platform seam: both readiness backends give the same level-triggered reports, wake-ups and
/// removals, so the server runs unchanged on either (docs/architecture.md, "Platform").
@Suite("Readiness notifiers: epoll and poll(2) report the same")
struct EventNotifierTests {
  /// A connected pair of stream sockets, both non-blocking.
  private struct Pair {
    let a: Int32
    let b: Int32
    init() throws {
      var fds: [Int32] = [-1, -1]
      #if canImport(Glibc)
        let type = Int32(SOCK_STREAM.rawValue)
      #else
        let type = SOCK_STREAM
      #endif
      guard socketpair(AF_UNIX, type, 0, &fds) == 0 else { throw IOError("socketpair", errno: errno) }
      a = fds[0]
      b = fds[1]
      SocketOps.setNonBlocking(a)
      SocketOps.setNonBlocking(b)
    }
    func close() {
      SocketOps.close(a)
      SocketOps.close(b)
    }
  }

  private static func write(_ fd: Int32, _ text: String = "x") {
    _ = Array(text.utf8).withUnsafeBytes { SocketOps.send(fd, $0) }
  }

  /// The reports of one wait, by descriptor (the wake-up as -1).
  private static func reports(_ notifier: EventNotifier, timeout: Int32) -> [Int32: Readiness] {
    func collect<N: ReadinessNotifier>(_ n: N) -> [Int32: Readiness] {
      var out: [Int32: Readiness] = [:]
      let count = n.wait(timeoutMilliseconds: timeout)
      for i in 0..<max(0, count) {
        let r = n.event(at: i)
        out[r.fd] = r
      }
      return out
    }
    switch notifier {
    #if os(Linux)
      case .epoll(let n): return collect(n)
    #endif
    case .poll(let n): return collect(n)
    }
  }

  @Test(
    "input is reported while unread (level-triggered), output when asked, end of input as readable",
    arguments: EventLoopBackend.available)
  func levelTriggered(backend: EventLoopBackend) throws {
    let notifier = try EventNotifier(backend)
    let pair = try Pair()
    defer { pair.close() }
    notifier.add(fd: pair.a, interest: Interest(readable: true, writable: false))
    #expect(Self.reports(notifier, timeout: 0)[pair.a] == nil)
    Self.write(pair.b)
    let first = try #require(Self.reports(notifier, timeout: 10_000)[pair.a])
    #expect(first.readable && !first.writable && !first.hangUp)
    // Not read: reported again.
    #expect(Self.reports(notifier, timeout: 0)[pair.a]?.readable == true)
    // Interest in nothing: not reported while only readable.
    notifier.modify(fd: pair.a, interest: .none)
    #expect(Self.reports(notifier, timeout: 0)[pair.a] == nil)
    notifier.modify(fd: pair.a, interest: Interest(readable: false, writable: true))
    let writable = try #require(Self.reports(notifier, timeout: 10_000)[pair.a])
    #expect(writable.writable && !writable.readable)
    // The peer's half-close, asked for input: readable (the read then gives end of input).
    notifier.modify(fd: pair.a, interest: Interest(readable: true, writable: false))
    _ = shutdown(pair.b, Int32(SHUT_WR))
    let closed = try #require(Self.reports(notifier, timeout: 10_000)[pair.a])
    #expect(closed.readable)
    notifier.remove(fd: pair.a, closing: false)
    #expect(Self.reports(notifier, timeout: 0)[pair.a] == nil)
  }

  @Test(
    "a wake-up from another thread ends the wait once, until woken again",
    arguments: EventLoopBackend.available)
  func wakeUp(backend: EventLoopBackend) async throws {
    let notifier = try EventNotifier(backend)
    #expect(Self.reports(notifier, timeout: 0).isEmpty)
    let box = NotifierBox(notifier)
    let thread = Thread { box.notifier.wake() }
    thread.start()
    // No limit on the wait: the wake-up ends it.
    #expect(Self.reports(notifier, timeout: -1)[-1] != nil)
    notifier.wake()
    notifier.wake()
    #expect(Self.reports(notifier, timeout: 0)[-1] != nil)
    notifier.acknowledgeWake()
    #expect(Self.reports(notifier, timeout: 0).isEmpty)
  }

  @Test(
    "a thousand descriptors: the ready ones and only they, also after removals",
    arguments: EventLoopBackend.available)
  func manyDescriptors(backend: EventLoopBackend) throws {
    SocketOps.raiseOpenFileLimit()
    let count = min(1000, ((SocketOps.openFileLimit() ?? 4096) - 64) / 2)
    let notifier = try EventNotifier(backend)
    var pairs: [Pair] = []
    defer { for pair in pairs { pair.close() } }
    for _ in 0..<count {
      let pair = try Pair()
      pairs.append(pair)
      notifier.add(fd: pair.a, interest: Interest(readable: true, writable: false))
    }
    for (i, pair) in pairs.enumerated() where i % 7 == 0 { Self.write(pair.b) }
    let expected = Set(pairs.enumerated().filter { $0.offset % 7 == 0 }.map(\.element.a))
    #expect(Set(Self.reports(notifier, timeout: 10_000).keys) == expected)
    // Every other one removed (each removal moves another into its place).
    for (i, pair) in pairs.enumerated() where i % 2 == 0 { notifier.remove(fd: pair.a, closing: false) }
    let left = Set(pairs.enumerated().filter { $0.offset % 7 == 0 && $0.offset % 2 == 1 }.map(\.element.a))
    #expect(Set(Self.reports(notifier, timeout: 10_000).keys) == left)
  }

  @Test(
    "an event loop on either backend runs timers in order and work from other threads",
    arguments: EventLoopBackend.available)
  func loop(backend: EventLoopBackend) async throws {
    let loop = try EventLoop(backend: backend)
    loop.start(name: "notifier-test")
    defer { loop.stop() }
    let order = Order()
    await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
      loop.execute {
        loop.schedule(afterMilliseconds: 20) {
          order.values.withLock { $0.append(2) }
          done.resume()
        }
        loop.schedule(afterMilliseconds: 5) { order.values.withLock { $0.append(1) } }
      }
    }
    #expect(order.values.withLock { $0 } == [1, 2])
  }

  @Test("a server on either backend answers and says which it runs on", arguments: EventLoopBackend.available)
  func server(backend: EventLoopBackend) async throws {
    try await withServer(configure: { $0.eventLoopBackend = backend }) { server in
      #expect(server.eventLoopBackend == backend)
      let client = try RawClient(port: server.port)
      for i in 0..<3 {
        client.send("GET /\(i) HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(client.readResponse().0.hasSuffix("ok:/\(i)"))
      }
    }
  }

  @Test("--event-loop takes epoll or poll and refuses anything else by name")
  func commandLine() throws {
    #expect(try CommandLineOptions.parse(["--event-loop", "poll"]).eventLoopBackend == .poll)
    #expect(try CommandLineOptions.parse([]).eventLoopBackend == nil)
    #if os(Linux)
      #expect(try CommandLineOptions.parse(["--event-loop=epoll"]).eventLoopBackend == .epoll)
    #endif
    let error = #expect(throws: CommandLineOptions.UsageError.self) {
      try CommandLineOptions.parse(["--event-loop", "kqueue"])
    }
    #expect(error?.description.hasPrefix("--event-loop expects ") == true)
    #expect(error?.description.hasSuffix("poll, got 'kqueue'") == true)
    #expect(throws: (any Error).self) { try EventLoopBackend.named("", source: "X") }
  }
}

/// Carries a notifier to a thread that only wakes it (``EventNotifier/wake()`` is safe from any thread).
private final class NotifierBox: @unchecked Sendable {
  let notifier: EventNotifier
  init(_ notifier: EventNotifier) { self.notifier = notifier }
}

/// What the timers of ``EventNotifierTests/loop(backend:)`` did, in order.
private final class Order: Sendable {
  let values = Mutex<[Int]>([])
}
