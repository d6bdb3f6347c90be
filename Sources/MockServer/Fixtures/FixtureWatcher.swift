import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Hot reload: polls the fixtures folder (path, modification time and size of every file under it) every
/// `intervalMilliseconds` on a background queue and, when anything changed, loads it again.
///
/// A set with errors is reported to the log in the lint format (`file: JSON path: expected …, found …`)
/// and the last good set keeps serving; a good set replaces the file stubs, keeping runtime stubs (see
/// ``MockService/replaceFileStubs(_:keepRuntimeStubs:)``). Polling is portable and cheap for fixture
/// folders (hundreds of files); changes are picked up within one interval plus the load time.
public final class FixtureWatcher: Sendable {
  /// The folder watched.
  public let directory: String
  /// Poll period in milliseconds.
  public let intervalMilliseconds: Int
  private let service: MockService
  private let queue = DispatchQueue(label: "mockserver.fixture-watcher")
  private let running = Atomic<Bool>(false)
  private let fingerprint = Mutex<[String: FileTree.Stamp]>([:])
  private let reloads = Atomic<Int>(0)

  /// Creates a watcher for `directory` that reloads into `service`. Call ``start()``.
  public init(directory: String, service: MockService, intervalMilliseconds: Int = 250) {
    self.directory = directory
    self.service = service
    self.intervalMilliseconds = max(10, intervalMilliseconds)
  }

  /// Takes the current state of the folder as the baseline and starts polling.
  public func start() {
    guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
    let stamp = FixtureWatcher.scan(directory)
    fingerprint.withLock { $0 = stamp }
    schedule()
  }

  /// Stops polling (a poll in progress finishes).
  public func stop() { running.store(false, ordering: .releasing) }

  /// Reloads attempted since start (good or broken).
  public var reloadCount: Int { reloads.load(ordering: .relaxed) }

  private func schedule() {
    queue.asyncAfter(deadline: .now() + .milliseconds(intervalMilliseconds)) { [self] in
      guard running.load(ordering: .acquiring) else { return }
      poll()
      schedule()
    }
  }

  /// One poll: reloads when the folder changed since the last poll.
  func poll() {
    let now = FixtureWatcher.scan(directory)
    let changed = fingerprint.withLock { old -> Bool in
      guard old != now else { return false }
      old = now
      return true
    }
    guard changed else { return }
    reloads.wrappingAdd(1, ordering: .relaxed)
    let set = FixtureLoader.load(directory: directory)
    if set.hasErrors {
      service.logger.line(
        "mockserver: reload of \(directory) failed; still serving the last good set\n" + set.report())
      return
    }
    service.replaceFileStubs(set)
    var message = "mockserver: reloaded \(set.stubs.count) stub(s) from \(directory)"
    if !set.warnings.isEmpty { message += "\n" + set.report() }
    service.logger.line(message)
  }

  /// Every file under `directory` (recursively) with its modification time and size.
  static func scan(_ directory: String) -> [String: FileTree.Stamp] {
    var out: [String: FileTree.Stamp] = [:]
    for (path, stamp) in FileTree.files(under: directory) { out[path] = stamp }
    return out
  }

}
