import Dispatch
import Synchronization

/// A few connections to the store for callers that run concurrently (the commits of scenario and
/// sequence stubs, each on a thread of the background queue): a command takes a connection no other
/// command is using, waiting only when all of them are busy, so the commits of different requests go
/// out together, up to ``size`` at a time, instead of one after another on one connection.
///
/// Correctness does not rest on the pool: each commit is one server-side script that Redis runs alone,
/// so exactly-once holds however many connections send them. Connections open when first needed (most
/// recently used first: a replica with little concurrency keeps one). When a command finds the store
/// unavailable, the idle connections drop their sockets too, so that none is used again after the store
/// came back over a socket of the store that went away.
package final class RedisConnectionPool: Sendable {
  private let connections: [RedisConnection]
  /// Indices of the connections not in use; the last is the most recently used.
  private let idle: Mutex<[Int]>
  /// Counts the idle connections.
  private let available: DispatchSemaphore

  /// The most connections a pool has (the bound the option is clamped to).
  package static let maxSize = 16

  /// - Parameter connections: 1...``maxSize`` connections (more are not used, none is an error).
  package init(_ connections: [RedisConnection]) {
    precondition(!connections.isEmpty, "a pool needs a connection")
    self.connections = Array(connections.prefix(Self.maxSize))
    idle = Mutex(Array(self.connections.indices.reversed()))
    available = DispatchSemaphore(value: self.connections.count)
  }

  /// The number of connections.
  package var size: Int { connections.count }

  /// Runs `body` with a connection that no other caller uses meanwhile.
  package func withConnection<T>(_ body: (RedisConnection) throws(RedisFailure) -> T) throws(RedisFailure)
    -> T
  {
    available.wait()
    let index = idle.withLock { $0.removeLast() }
    let result: Result<T, RedisFailure>
    do throws(RedisFailure) {
      result = .success(try body(connections[index]))
    } catch {
      result = .failure(error)
    }
    let others = idle.withLock { list -> [Int] in
      defer { list.append(index) }
      guard case .failure(.unavailable) = result else { return [] }
      return list
    }
    for other in others { connections[other].disconnect() }
    available.signal()
    return try result.get()
  }
}
