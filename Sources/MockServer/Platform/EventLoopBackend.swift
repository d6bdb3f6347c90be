/// The readiness mechanism under the server's event loops: `epoll(7)` (Linux) or POSIX `poll(2)` with a
/// pipe for wake-ups (any POSIX system; what a macOS build uses). Chosen with `--event-loop` or
/// ``ServerConfiguration/eventLoopBackend``; `MOCKSERVER_EVENT_LOOP=epoll|poll` sets the default, so a
/// test suite can run every server it starts on the other backend.
public enum EventLoopBackend: String, Sendable, CaseIterable {
  /// `epoll(7)` with an `eventfd(2)` wake-up: Linux only.
  case epoll
  /// `poll(2)` over an array of descriptors, with a pipe for wake-ups: any POSIX system.
  case poll

  /// The environment variable naming the default backend: `MOCKSERVER_EVENT_LOOP`.
  public static let environmentVariable = "MOCKSERVER_EVENT_LOOP"

  /// The backends this build can run: epoll and poll on Linux, poll elsewhere.
  public static var available: [EventLoopBackend] {
    #if os(Linux)
      return [.epoll, .poll]
    #else
      return [.poll]
    #endif
  }

  /// This system's own backend: epoll on Linux, poll elsewhere.
  public static var platformDefault: EventLoopBackend {
    #if os(Linux)
      return .epoll
    #else
      return .poll
    #endif
  }

  /// The backend named `name` when this build can run it; otherwise an error that says what is
  /// accepted.
  /// - Parameter source: what named it, for the message (`--event-loop`, `MOCKSERVER_EVENT_LOOP`).
  public static func named(_ name: String, source: String) throws(IOError) -> EventLoopBackend {
    let names = available.map(\.rawValue).joined(separator: " or ")
    guard let backend = EventLoopBackend(rawValue: name) else {
      throw IOError("\(source) expects \(names), got '\(name)'", errno: 0)
    }
    guard available.contains(backend) else {
      throw IOError("\(source): \(name) is not available on this system (expected \(names))", errno: 0)
    }
    return backend
  }

  /// The default: `MOCKSERVER_EVENT_LOOP` when it is set (an error when it names no available
  /// backend), else ``platformDefault``.
  public static func fromEnvironment() throws(IOError) -> EventLoopBackend {
    guard let name = ProcessResources.environment(environmentVariable), !name.isEmpty else {
      return platformDefault
    }
    return try named(name, source: environmentVariable)
  }
}
