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

/// The result of loading the fixtures folder again (hot reload): for the dashboard and the watcher's log.
public struct FixtureReloadResult: Sendable {
  /// The folder loaded.
  public var directory: String
  /// False when the folder had errors (the last good set kept serving).
  public var succeeded: Bool
  /// Stubs loaded (0 for a failed reload).
  public var stubCount: Int
  /// Errors and warnings, located (`file`, JSON `path`, `message`).
  public var problems: [FixtureProblem]
  /// When, seconds since 1970.
  public var at: Double
  /// True for the load at start-up rather than a reload.
  public var initial: Bool

  /// Creates a result.
  public init(
    directory: String, succeeded: Bool, stubCount: Int, problems: [FixtureProblem], at: Double,
    initial: Bool = false
  ) {
    self.directory = directory
    self.succeeded = succeeded
    self.stubCount = stubCount
    self.problems = problems
    self.at = at
    self.initial = initial
  }

  /// `{"directory","succeeded","stubCount","initial","time","problems":[{"severity","file","path","message"}]}`.
  var json: JSONValue {
    .object(
      JSONObject(pairs: [
        ("directory", .string(directory)),
        ("succeeded", .bool(succeeded)),
        ("initial", .bool(initial)),
        ("stubCount", .number(JSONNumber(stubCount))),
        ("time", .string(HTTPDate.iso8601(at))),
        (
          "problems",
          .array(
            problems.map { p in
              .object(
                JSONObject(pairs: [
                  ("severity", .string(p.isError ? "error" : "warning")),
                  ("file", .string(p.file)), ("path", .string(p.path)), ("message", .string(p.message)),
                ]))
            })
        ),
      ]))
  }
}
