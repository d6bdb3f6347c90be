#if os(Linux)
  import Glibc
  import Synchronization
  import Testing

  @testable import ClientKit

  /// The socket transport's idle pool, without a server: connections are socket pairs and the clock is a
  /// script, so interleavings that concurrent exchanges produce only now and then are played in order.
  @Suite("ConnectionPool")
  struct ConnectionPoolTests {
    /// A clock that returns `readings` in turn (the last one from then on).
    final class ScriptedClock: Sendable {
      private let readings: Mutex<[UInt64]>
      init(_ readings: [UInt64]) { self.readings = Mutex(readings) }
      func read() -> UInt64 {
        readings.withLock { $0.count > 1 ? $0.removeFirst() : $0[0] }
      }
    }

    /// A connection over one end of a socket pair whose other end stays open (so it peeks as reusable).
    func connection(key: String) throws -> (SocketConnection, peer: Int32) {
      var fds: [Int32] = [0, 0]
      try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
      return (SocketConnection(fd: fds[0], key: key), fds[1])
    }

    /// A clean-clone run trapped in `checkout`: it read the clock, then another exchange checked a
    /// connection in with a later reading, and `now - idleSince` overflowed. Played here in that order.
    @Test func aConnectionCheckedInAfterTheCheckoutReadTheClockIsHandedOut() throws {
      let clock = ScriptedClock([500, 200])  // checkin reads 500, the checkout that raced it read 200
      let pool = ConnectionPool(maxIdlePerHost: 4, idleTimeout: .seconds(1), clock: clock.read)
      let (connection, peer) = try connection(key: "http://a:1")
      defer { close(peer) }
      pool.checkin(connection)
      #expect(pool.checkout("http://a:1") === connection)
    }

    @Test func aConnectionIdleLongerThanTheTimeoutIsClosedNotHandedOut() throws {
      let clock = ScriptedClock([1_000, 4_000_000_000])
      let pool = ConnectionPool(maxIdlePerHost: 4, idleTimeout: .seconds(3), clock: clock.read)
      let (connection, peer) = try connection(key: "http://a:1")
      defer { close(peer) }
      pool.checkin(connection)
      #expect(pool.checkout("http://a:1") == nil)
      #expect(pool.idleCount("http://a:1") == 0)
    }

    @Test func aConnectionWhosePeerClosedIsNotHandedOut() throws {
      let pool = ConnectionPool(maxIdlePerHost: 4, idleTimeout: .seconds(30))
      let (connection, peer) = try connection(key: "http://a:1")
      pool.checkin(connection)
      close(peer)
      #expect(pool.checkout("http://a:1") == nil)
    }
  }
#endif
