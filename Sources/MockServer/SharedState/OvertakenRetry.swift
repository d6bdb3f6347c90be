import Foundation

/// The retries of a change to the shared store that another replica's change overtook (a runtime stub
/// change written over an older generation, a context write whose compare-and-set found a newer value, a
/// scenario commit whose states were moved meanwhile).
///
/// Each failed attempt means some replica's change went in, so the replicas as a whole make progress;
/// one change may still lose several rounds in a row when many requests race for one context or one
/// scenario. It is retried after a random back-off (up to 50 µs, doubling to 5 ms, so that racing
/// replicas spread out) until ``deadlineNanoseconds`` after the first attempt. A change still overtaken
/// then is answered 503, never dropped or answered as if made.
package struct OvertakenRetry {
  /// How long a change may keep being overtaken (ns): 10 s.
  package static let deadlineNanoseconds: UInt64 = 10_000_000_000
  /// ``deadlineNanoseconds`` as words for messages.
  package static let deadlineText = "10 s"

  private let started = SocketOps.monotonicNanos()
  /// The largest next wait, µs.
  private var backOff: UInt32 = 50

  package init() {}

  /// Waits before the next attempt.
  /// - Returns: false, without waiting, once the deadline has passed (no further attempt).
  package mutating func waitForNextAttempt() -> Bool {
    guard SocketOps.monotonicNanos() &- started < Self.deadlineNanoseconds else { return false }
    usleep(.random(in: 0...backOff))
    backOff = min(backOff * 2, 5000)
    return true
  }
}
