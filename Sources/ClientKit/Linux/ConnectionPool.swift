#if CLIENTKIT_NATIVE
  import Synchronization

  /// Idle keep-alive connections keyed by `scheme://host:port` (one pool per transport, hence per trust
  /// configuration).
  ///
  /// A connection is checked out by one exchange at a time and returned only after a complete response
  /// with keep-alive framing. Connections idle longer than the idle timeout, and those that fail the
  /// non-blocking peek (``SocketConnection/isReusable()``), are closed instead of being handed out.
  final class ConnectionPool: Sendable {
    private let idle = Mutex<[String: [SocketConnection]]>([:])
    private let maxIdlePerHost: Int
    private let idleTimeoutNanoseconds: UInt64
    /// The monotonic clock (ns); a parameter so tests can order readings as concurrent callers do.
    private let clock: @Sendable () -> UInt64

    init(
      maxIdlePerHost: Int, idleTimeout: Duration,
      clock: @escaping @Sendable () -> UInt64 = monotonicNanoseconds
    ) {
      self.maxIdlePerHost = max(0, maxIdlePerHost)
      self.clock = clock
      self.idleTimeoutNanoseconds = idleTimeout.nanosecondsOrZero
    }

    /// A live idle connection for `key`, most recently used first, or nil. Stale ones are closed.
    ///
    /// `now` is read before the lock, so another thread may check a connection in after it: such a
    /// connection's `idleSince` is later than `now`, and it is fresh (the subtraction would trap).
    func checkout(_ key: String) -> SocketConnection? {
      let now = clock()
      while let candidate = idle.withLock({ $0[key]?.popLast() }) {
        let idleFor = now > candidate.idleSince ? now - candidate.idleSince : 0
        if idleFor <= idleTimeoutNanoseconds, candidate.isReusable() {
          return candidate
        }
        candidate.close()
      }
      return nil
    }

    /// Returns a connection after a complete keep-alive exchange; closes it when the pool is full.
    func checkin(_ connection: SocketConnection) {
      connection.idleSince = clock()
      let rejected = idle.withLock { pool -> SocketConnection? in
        var list = pool[connection.key, default: []]
        guard list.count < maxIdlePerHost else { return connection }
        list.append(connection)
        pool[connection.key] = list
        return nil
      }
      rejected?.close()
    }

    /// Number of idle connections for `key`.
    func idleCount(_ key: String) -> Int {
      idle.withLock { $0[key]?.count ?? 0 }
    }

    /// Closes every idle connection.
    func closeAll() {
      let all = idle.withLock { pool -> [SocketConnection] in
        let all = pool.values.flatMap { $0 }
        pool = [:]
        return all
      }
      for connection in all { connection.close() }
    }
  }
#endif
