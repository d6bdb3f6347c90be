/// Timer arithmetic that cannot trap: milliseconds are clamped to a stated range before they are turned
/// into nanoseconds and added to the clock (stub delays and the global delay are clamped where they are
/// sampled, ``MockResponder/delayMilliseconds(_:)``).
enum ResponseTiming {
  /// Longest time a loop timer waits, in milliseconds (100 days): longer requests wait that long.
  static let maxTimerMilliseconds = 100 * 86_400_000

  /// `milliseconds` clamped to `0...maxTimerMilliseconds`, as nanoseconds.
  static func timerNanoseconds(_ milliseconds: Int) -> UInt64 {
    UInt64(min(max(milliseconds, 0), maxTimerMilliseconds)) * 1_000_000
  }
}
