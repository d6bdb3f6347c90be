import Foundation
import Mappings
import MockJSON
import Synchronization

/// What the dashboard (`GET /__admin/dashboard`) shows besides the admin API's own data: the live feed
/// of serve events and the result of the last fixtures load or reload. Owned by ``MockService``.
final class DashboardState: Sendable {
  /// The live feed behind `GET /__admin/events`.
  let events: ServeEventHub
  private let lastReload: Mutex<FixtureReloadResult?>
  private let reloads = Atomic<Int>(0)

  init(store: StubStore, initialLoad: FixtureSet?, fixturesDirectory: String?) {
    events = ServeEventHub(store: store)
    lastReload = Mutex(
      initialLoad.map { set in
        FixtureReloadResult(
          directory: fixturesDirectory ?? "", succeeded: true, stubCount: set.stubs.count,
          problems: set.problems, at: Date().timeIntervalSince1970, initial: true)
      })
  }

  /// The last load or reload of the fixtures folder, if any.
  var reload: FixtureReloadResult? { lastReload.withLock { $0 } }

  /// Reloads recorded since start (good or failed), each once its set was applied: what a test waits on
  /// instead of sleeping past the watcher's interval.
  var reloadCount: Int { reloads.load(ordering: .acquiring) }

  /// Records a reload's result.
  func record(_ result: FixtureReloadResult) {
    lastReload.withLock { $0 = result }
    reloads.wrappingAdd(1, ordering: .releasing)
  }
}
