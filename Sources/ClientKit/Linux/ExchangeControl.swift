#if CLIENTKIT_NATIVE
  import Synchronization

  /// Connects a blocking socket exchange to the cancellation of the task waiting for it.
  ///
  /// The connection in use is attached here; ``cancel()`` sets the flag and shuts the attached socket down
  /// (under the lock), which wakes the blocked `poll`. A connection is only closed after being detached
  /// under the same lock, so a cancellation can never shut down a reused descriptor number.
  final class ExchangeControl: Sendable {
    private struct State {
      var cancelled = false
      var connection: SocketConnection?
    }

    private let state = Mutex(State())

    /// True after ``cancel()``.
    var isCancelled: Bool { state.withLock { $0.cancelled } }

    /// Cancels: marks the exchange and shuts the attached socket down.
    func cancel() {
      state.withLock { s in
        s.cancelled = true
        s.connection?.shutdownNow()
      }
    }

    /// Attaches `connection` as the one in use; false when already cancelled.
    func attach(_ connection: SocketConnection) -> Bool {
      state.withLock { s in
        guard !s.cancelled else { return false }
        s.connection = connection
        return true
      }
    }

    /// Detaches `connection` (if attached) without closing it, before it goes back to the pool.
    func detach(_ connection: SocketConnection) {
      state.withLock { s in
        if s.connection === connection { s.connection = nil }
      }
    }

    /// Detaches and closes `connection`.
    func detachAndClose(_ connection: SocketConnection) {
      state.withLock { s in
        if s.connection === connection { s.connection = nil }
        connection.close()
      }
    }
  }
#endif
