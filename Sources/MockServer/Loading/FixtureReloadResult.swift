import HTTPCore
import Mappings
import MockJSON

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
