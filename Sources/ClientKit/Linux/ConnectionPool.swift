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

    init(maxIdlePerHost: Int, idleTimeout: Duration) {
      self.maxIdlePerHost = max(0, maxIdlePerHost)
      let (seconds, atto) = idleTimeout.components
      self.idleTimeoutNanoseconds =
        UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, atto) / 1_000_000_000)
    }

    /// A live idle connection for `key`, most recently used first, or nil. Stale ones are closed.
    func checkout(_ key: String) -> SocketConnection? {
      let now = monotonicNanoseconds()
      while let candidate = idle.withLock({ $0[key]?.popLast() }) {
        if now - candidate.idleSince <= idleTimeoutNanoseconds, candidate.isReusable() {
          return candidate
        }
        candidate.close()
      }
      return nil
    }

    /// Returns a connection after a complete keep-alive exchange; closes it when the pool is full.
    func checkin(_ connection: SocketConnection) {
      connection.idleSince = monotonicNanoseconds()
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
