import Dispatch
import Foundation
import Mappings
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// Hot reload: when the fixtures folder changes, loads it again.
///
/// Where the system has change notifications (``DirectoryChangeNotifier``: inotify on Linux) the folder
/// and every folder below it are watched, so an idle server does no work at all (a fixtures set of 10,000
/// files would otherwise be `stat`ed four times a second); a change is followed, after 50 ms for the
/// writes to settle, by a comparison of every file's path, modification time and size with the last load,
/// and a reload when they differ. Elsewhere, or when asked to poll, the same comparison runs every
/// `intervalMilliseconds`.
///
/// A set with errors is reported to the log in the lint format (`file: JSON path: expected …, found …`)
/// and the last good set keeps serving; a good set replaces the file stubs and the file message stub
/// mappings (`message-mappings/`), keeping runtime ones (see
/// ``StubStore/replaceFileStubs(_:keepRuntimeStubs:)``). Changes are picked up well within a second.
public final class FixtureWatcher: Sendable {
  /// The folder watched.
  public let directory: String
  /// Poll period in milliseconds.
  public let intervalMilliseconds: Int
  /// Takes a good new set and the files (relative to the folder) that changed since the last load.
  private let apply: @Sendable (FixtureSet, Set<String>) -> Void
  /// Writes one report line (reload done or failed).
  private let log: @Sendable (String) -> Void
  /// Told each reload's result (the dashboard shows the last one).
  private let report: (@Sendable (FixtureReloadResult) -> Void)?
  private let queue = DispatchQueue(label: "mockserver.fixture-watcher")
  private let running = Atomic<Bool>(false)
  private let fingerprint = Mutex<[String: FileTree.Stamp]>([:])
  private let reloads = Atomic<Int>(0)
  /// The change notifications, when they are used.
  private let notifications = Mutex<DirectoryChangeNotifier?>(nil)
  /// The folder, standardized.
  private let folder: String
  /// Compare every interval even where change notifications exist (the portable way, as a system without
  /// them runs).
  private let polls: Bool
  private let pending = Atomic<Bool>(false)
  /// A reload could not read the folder for want of file descriptors and is tried again every
  /// ``retryMilliseconds`` until one is read whole (the failure is logged once per episode).
  private let retrying = Atomic<Bool>(false)
  /// How often a reload that ran out of file descriptors is tried again: 250 ms.
  static let retryMilliseconds = 250

  /// Creates a watcher for `directory` that hands each good new set to `apply` and reports to `log`.
  /// Call ``start()``. `report`, when given, is told every reload's result, good or failed.
  public convenience init(
    directory: String, intervalMilliseconds: Int = 250, log: @escaping @Sendable (String) -> Void,
    report: (@Sendable (FixtureReloadResult) -> Void)? = nil,
    apply: @escaping @Sendable (FixtureSet) -> Void
  ) {
    self.init(
      directory: directory, intervalMilliseconds: intervalMilliseconds, log: log, report: report,
      applyChanges: { set, _ in apply(set) })
  }

  /// Creates a watcher whose `applyChanges` also gets the files (relative to `directory`) that changed.
  init(
    directory: String, intervalMilliseconds: Int, log: @escaping @Sendable (String) -> Void,
    report: (@Sendable (FixtureReloadResult) -> Void)?, polls: Bool = FixtureWatcher.pollsByDefault,
    applyChanges apply: @escaping @Sendable (FixtureSet, Set<String>) -> Void
  ) {
    self.directory = directory
    self.apply = apply
    self.log = log
    self.report = report
    self.intervalMilliseconds = max(10, intervalMilliseconds)
    folder = FileTree.standardized(directory)
    self.polls = polls
  }

  /// Creates a watcher that swaps good sets into `service`'s stub store (keeping runtime stubs) and logs
  /// to its logger. Call ``start()``. `polls`: compare the folder every interval even where change
  /// notifications exist (default: when `MOCKSERVER_EVENT_LOOP` is `poll`).
  public convenience init(
    directory: String, service: MockService, intervalMilliseconds: Int = 250,
    polls: Bool = FixtureWatcher.pollsByDefault
  ) {
    self.init(
      directory: directory, service: service, intervalMilliseconds: intervalMilliseconds, polls: polls,
      adjust: { $0 })
  }

  /// Like ``init(directory:service:intervalMilliseconds:polls:)``, with each good new set passed through
  /// `adjust` before it is served (`--openapi` adds the document's stubs in front of the folder's).
  package convenience init(
    directory: String, service: MockService, intervalMilliseconds: Int = 250,
    polls: Bool = FixtureWatcher.pollsByDefault, adjust: @escaping @Sendable (FixtureSet) -> FixtureSet
  ) {
    let (store, logger, dashboard) = (service.store, service.logger, service.dashboard)
    let webSockets = service.webSockets
    self.init(
      directory: directory, intervalMilliseconds: intervalMilliseconds, log: { logger.line($0) },
      report: { dashboard.record($0) }, polls: polls,
      applyChanges: { set, changed in
        let adjusted = adjust(set)
        store.replaceFileStubs(adjusted, changedFiles: changed)
        webSockets.replaceFileMappings(adjusted.messageMappings)
      }
    )
  }

  /// Takes the current state of the folder as the baseline and starts polling.
  public func start() { start(known: [:]) }

  /// Starts watching with `loaded` (what ``FixtureLoader/load(directory:allowEmpty:)`` returned for this
  /// folder) as the baseline: the mapping files it read keep the stamps their `fstat` gave, so a start with
  /// 10,000 files does not `stat` each a second time (and a file changed between the load and this call is
  /// seen as changed at the next notification).
  public func start(loaded: FixtureSet) { start(known: loaded.loadedStamps) }

  private func start(known: [String: FileTree.Stamp]) {
    guard !running.exchange(true, ordering: .acquiringAndReleasing) else { return }
    // One walk gives the baseline and the folders to watch.
    let (files, folders) = FileTree.filesAndDirectories(under: directory, known: known)
    var stamp: [String: FileTree.Stamp] = [:]
    stamp.reserveCapacity(files.count)
    for (path, s) in files { stamp[path] = s }
    fingerprint.withLock { $0 = stamp }
    // Dispatch opens its timer descriptor the first time a timer is scheduled: done now, a change made
    // while the process has no descriptor left still gets its delayed comparison (the timer could not be
    // armed then, and the change was compared only once descriptors were back, or never).
    queue.asyncAfter(deadline: .now() + .milliseconds(1)) {}
    if !startNotifications(folders: folders) { schedule() }
  }

  /// Stops watching (a reload in progress finishes).
  public func stop() {
    running.store(false, ordering: .releasing)
    notifications.withLock { n in
      n?.cancel()
      n = nil
    }
  }

  /// True when change notifications are used instead of polling.
  public var usesNotifications: Bool { notifications.withLock { $0 != nil } }

  /// True when watchers poll even where change notifications exist: `MOCKSERVER_EVENT_LOOP=poll`, the
  /// switch that runs a test suite on the portable ways a system without epoll and inotify uses.
  public static var pollsByDefault: Bool {
    ProcessResources.environment(EventLoopBackend.environmentVariable) == EventLoopBackend.poll.rawValue
  }

  private func startNotifications(folders: [String]) -> Bool {
    guard !polls,
      let notifier = DirectoryChangeNotifier(folder: folder, queue: queue, onChange: { [self] in notified() })
    else { return false }
    notifications.withLock { $0 = notifier }
    notifier.watch(folders)
    return true
  }

  /// Watches the folder, every folder below it and the folder's parent (watching one already watched
  /// is harmless). Called again before each comparison, so folders created since (a recreated root
  /// among them) are watched too.
  /// - Parameter known: the folders, when a walk just listed them (``FileTree/directories(under:)``).
  private func watchDirectories(_ known: [String]? = nil) {
    guard let notifier = notifications.withLock({ $0 }) else { return }
    notifier.watch(known ?? FileTree.directories(under: directory))
  }

  /// Queue thread: a change was notified; schedules one comparison shortly after.
  private func notified() {
    guard !pending.exchange(true, ordering: .acquiringAndReleasing) else { return }
    queue.asyncAfter(deadline: .now() + .milliseconds(50)) { [self] in
      pending.store(false, ordering: .releasing)
      guard running.load(ordering: .acquiring) else { return }
      watchDirectories()
      poll()
    }
  }

  /// Reloads attempted since start (good or broken).
  public var reloadCount: Int { reloads.load(ordering: .relaxed) }

  private func schedule() {
    queue.asyncAfter(deadline: .now() + .milliseconds(intervalMilliseconds)) { [self] in
      guard running.load(ordering: .acquiring) else { return }
      poll()
      schedule()
    }
  }

  /// One poll: reloads when the folder changed since the last poll. A walk or load that could not open a
  /// folder or file because the process had no file descriptor left (`EMFILE`, `ENFILE`) says nothing
  /// about the folder (it looked empty): the last good set keeps serving, the baseline is kept (so the
  /// change is still seen as one), the failure is logged once, and the poll runs again every 250 ms until
  /// descriptors are back. (Without this, a change made while descriptors were exhausted was never
  /// loaded, or an empty set replaced the stubs.)
  func poll() {
    let shortages = FileTree.descriptorShortages.load(ordering: .relaxed)
    guard FileTree.descriptorsAvailable() else { return postpone() }
    let now = FixtureWatcher.scan(directory)
    guard FileTree.descriptorShortages.load(ordering: .relaxed) == shortages else { return postpone() }
    var previous: [String: FileTree.Stamp] = [:]
    let changedFiles = fingerprint.withLock { old -> Set<String>? in
      guard old != now else { return nil }
      var changed = Set<String>()
      for (path, stamp) in now where old[path] != stamp { changed.insert(path) }
      for path in old.keys where now[path] == nil { changed.insert(path) }
      previous = old
      old = now
      return changed
    }
    guard let changedFiles else { return recovered() }
    reloads.wrappingAdd(1, ordering: .relaxed)
    var isDirectory: ObjCBool = false
    let mappings = directory + "/mappings"
    guard FileManager.default.fileExists(atPath: mappings, isDirectory: &isDirectory), isDirectory.boolValue
    else {
      // A folder being removed, replaced or copied in has no mappings/ for a moment: serving nothing
      // until it comes back is never what was meant.
      log(
        "mockserver: reload of \(directory) failed; still serving the last good set\n"
          + "\(mappings): missing (a reload needs the mappings/ folder)")
      report?(
        FixtureReloadResult(
          directory: directory, succeeded: false, stubCount: 0,
          problems: [
            FixtureProblem(
              severity: .error, file: "mappings", path: "$",
              message: "missing (a reload needs the mappings/ folder)")
          ], at: Date().timeIntervalSince1970))
      return
    }
    let set = FixtureLoader.load(directory: directory)
    guard FileTree.descriptorShortages.load(ordering: .relaxed) == shortages else {
      fingerprint.withLock { $0 = previous }
      return postpone()
    }
    recovered()
    if set.hasErrors {
      log(
        "mockserver: reload of \(directory) failed; still serving the last good set\n" + set.report())
      report?(
        FixtureReloadResult(
          directory: directory, succeeded: false, stubCount: 0, problems: set.problems,
          at: Date().timeIntervalSince1970))
      return
    }
    apply(set, changedFiles)
    report?(
      FixtureReloadResult(
        directory: directory, succeeded: true, stubCount: set.stubs.count, problems: set.problems,
        at: Date().timeIntervalSince1970))
    var message = "mockserver: reloaded \(set.stubs.count) stub(s) from \(directory)"
    if !set.warnings.isEmpty { message += "\n" + set.report() }
    log(message)
  }

  /// Queue thread: a reload found no file descriptor left. Logs it (and tells the dashboard) once per
  /// episode and polls again shortly.
  private func postpone() {
    if !retrying.exchange(true, ordering: .acquiringAndReleasing) {
      let reason = "no file descriptor left (\(String(cString: strerror(EMFILE))))"
      log(
        "mockserver: reload of \(directory) failed: \(reason); still serving the last good set, "
          + "trying again every \(FixtureWatcher.retryMilliseconds) ms until descriptors are free")
      report?(
        FixtureReloadResult(
          directory: directory, succeeded: false, stubCount: 0,
          problems: [
            FixtureProblem(
              severity: .error, file: "mappings", path: "$",
              message: "not read: \(reason); the reload is tried again until descriptors are free")
          ], at: Date().timeIntervalSince1970))
    }
    // Polling without notifications comes back by itself.
    guard usesNotifications else { return }
    queue.asyncAfter(deadline: .now() + .milliseconds(FixtureWatcher.retryMilliseconds)) { [self] in
      guard running.load(ordering: .acquiring) else { return }
      watchDirectories()
      poll()
    }
  }

  /// Queue thread: a poll read the folder whole; ends an episode of ``postpone()``.
  private func recovered() {
    if retrying.exchange(false, ordering: .acquiringAndReleasing) {
      log("mockserver: file descriptors are free again; \(directory) read")
    }
  }

  /// Every file under `directory` (recursively) with its modification time and size (`known`: stamps
  /// already read, see ``FileTree/files(under:known:)``).
  static func scan(_ directory: String, known: [String: FileTree.Stamp] = [:]) -> [String: FileTree.Stamp] {
    var out: [String: FileTree.Stamp] = [:]
    for (path, stamp) in FileTree.files(under: directory, known: known) { out[path] = stamp }
    return out
  }

}
