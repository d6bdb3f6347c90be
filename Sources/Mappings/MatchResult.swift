/// How close a request came to a request pattern, as WireMock's `MatchResult`: every part of the pattern
/// (method, URL, each header, query parameter, cookie, credentials, body pattern, scenario state) gets a
/// distance from 0 (equal) to 1 (nothing alike) and a weight, and the request's distance is their weighted
/// mean.
///
/// Serving, the 404's near misses, `/__admin/near-misses/*` and the log all come from
/// ``RequestPattern/evaluate(_:detailed:)``, so a near-miss report can never disagree with the match:
/// a part counts as matched exactly when its matcher matches, and only then is its distance 0.
public struct MatchResult: Sendable, Hashable {
  /// One part that did not match.
  public struct Part: Sendable, Hashable {
    /// `method`, `url`, `header Authorization`, `query page`, `cookie session`, `path parameter id`,
    /// `basicAuthCredentials`, `body pattern 0`, `scenario checkout`.
    public var label: String
    /// What the pattern requires, in fixture form (e.g. `{"equalTo":"Bearer x"}`).
    public var expected: String
    /// What the request had (`(absent)` when missing).
    public var actual: String
    /// 0 < distance ≤ 1: normalized Levenshtein distance for literal strings and URLs, 1 for a failed
    /// regular expression, presence or method check, the share of differing members for JSON.
    public var distance: Double
    /// The part's weight: URL 10, method 3, every other part 1 (WireMock's weights).
    public var weight: Double
  }

  /// URL weight in the mean (WireMock: 10).
  public static let urlWeight = 10.0
  /// Method weight in the mean (WireMock: 3).
  public static let methodWeight = 3.0
  /// Weight of every other part.
  public static let partWeight = 1.0
  /// The smallest distance a failed part has, so a mismatch is never reported as equal.
  static let minimumMiss = 0.001

  /// True when every part matched.
  public private(set) var isExactMatch = true
  /// The parts that did not match (recorded only by a detailed evaluation).
  public private(set) var failures: [Part] = []
  private var totalWeight = 0.0
  private var weightedDistance = 0.0
  /// Whether failing parts are described and evaluation goes on past the first failure.
  let detailed: Bool

  /// An empty result (a pattern with no parts is an exact match at distance 0).
  package init(detailed: Bool) { self.detailed = detailed }

  /// The weighted mean distance of every part checked, 0...1.
  public var distance: Double { totalWeight == 0 ? 0 : weightedDistance / totalWeight }

  /// Records one part. The description and distance are computed only for a failed part of a detailed
  /// evaluation.
  /// - Returns: false when the evaluation can stop (the part failed and the result is not detailed).
  package mutating func record(
    _ label: @autoclosure () -> String, weight: Double, matched: Bool,
    expected: @autoclosure () -> String, actual: @autoclosure () -> String,
    distance: @autoclosure () -> Double = 1
  ) -> Bool {
    totalWeight += weight
    if matched { return true }
    isExactMatch = false
    guard detailed else { return false }
    let d = min(1, max(MatchResult.minimumMiss, distance()))
    weightedDistance += d * weight
    failures.append(Part(label: label(), expected: expected(), actual: actual(), distance: d, weight: weight))
    return true
  }
}

/// String distances for near-miss ranking.
package enum StringDistance {
  /// Levenshtein distance divided by the longer length: 0 for equal strings, 1 for nothing in common
  /// (WireMock's `EqualToPattern.getDistance`), counted on UTF-8 bytes. A common prefix and suffix are
  /// set aside first (they never change the distance), and a middle past 2,000 bytes on both sides is
  /// counted as wholly different, which bounds the cost.
  package static func normalized(_ a: String, _ b: String) -> Double {
    if a == b { return 0 }
    var a = a
    var b = b
    return a.withUTF8 { x in b.withUTF8 { y in normalized(x, y) } }
  }

  static func normalized(_ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>) -> Double {
    var cells = 0
    return normalized(x, y, cells: &cells)
  }

  /// `normalized`, adding to `cells` the Levenshtein table cells it computed: at most
  /// `tableCellLimit`, whatever the lengths.
  package static func normalized(_ a: String, _ b: String, cells: inout Int) -> Double {
    var a = a
    var b = b
    return a.withUTF8 { x in b.withUTF8 { y in normalized(x, y, cells: &cells) } }
  }

  /// The most table cells one distance computes (a few milliseconds); past it the middles count as
  /// wholly different.
  package static let tableCellLimit = 4_000_000

  /// The most table cells all the distances of one near-miss report compute together (the same few
  /// milliseconds): a 7 KB path and a 4 KB header next to 5,000 stubs cost 4 million cells per stub,
  /// 10 s per unmatched request while every other client waited. Past it, a distance is the cheap
  /// estimate (common prefix and suffix set aside, the middles counted as wholly different), so the
  /// work per unmatched request is linear in stubs and small per stub.
  package static let requestCellLimit = 4_000_000

  /// What is left of ``requestCellLimit`` for the near-miss report being made on this thread, or nil
  /// outside one (a single distance then has ``tableCellLimit`` alone).
  @TaskLocal package static var budget: CellBudget?

  /// Runs `body` with a fresh ``requestCellLimit`` budget for every distance it computes.
  package static func withRequestBudget<T>(_ body: () throws -> T) rethrows -> T {
    try $budget.withValue(CellBudget(remaining: requestCellLimit), operation: body)
  }

  static func normalized(
    _ x: UnsafeBufferPointer<UInt8>, _ y: UnsafeBufferPointer<UInt8>, cells computed: inout Int
  ) -> Double {
    let longest = max(x.count, y.count)
    if longest == 0 { return 0 }
    var prefix = 0
    while prefix < min(x.count, y.count), x[prefix] == y[prefix] { prefix += 1 }
    var suffix = 0
    while suffix < min(x.count, y.count) - prefix, x[x.count - 1 - suffix] == y[y.count - 1 - suffix] {
      suffix += 1
    }
    let xs = UnsafeBufferPointer(rebasing: x[prefix..<(x.count - suffix)])
    let ys = UnsafeBufferPointer(rebasing: y[prefix..<(y.count - suffix)])
    if xs.isEmpty || ys.isEmpty { return Double(max(xs.count, ys.count)) / Double(longest) }
    // The table costs xs × ys steps: past 4 million (a few milliseconds) the differing middles count as
    // wholly different, so a large body next to any equalTo pattern cannot hold the loop for seconds.
    let (cells, overflow) = xs.count.multipliedReportingOverflow(by: ys.count)
    if overflow || cells > tableCellLimit {
      return Double(max(xs.count, ys.count)) / Double(longest)
    }
    if let budget {
      guard cells <= budget.remaining else { return Double(max(xs.count, ys.count)) / Double(longest) }
      budget.remaining -= cells
    }
    computed &+= cells
    var previous = ContiguousArray(0...ys.count)
    var current = ContiguousArray(repeating: 0, count: ys.count + 1)
    for i in 1...xs.count {
      current[0] = i
      let c = xs[i - 1]
      for j in 1...ys.count {
        let cost = c == ys[j - 1] ? 0 : 1
        current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
      }
      swap(&previous, &current)
    }
    return Double(previous[ys.count]) / Double(longest)
  }
}

/// Table cells left for the distances of one near-miss report. Only the thread making that report reads
/// and changes it (it is bound to a task-local value inside ``StringDistance/withRequestBudget(_:)``,
/// which runs synchronously), hence `@unchecked Sendable`.
package final class CellBudget: @unchecked Sendable {
  /// Cells still allowed.
  package var remaining: Int
  init(remaining: Int) { self.remaining = remaining }
}
