import Mappings

/// Delay arithmetic that cannot trap: every operand is clamped to a stated range before it is converted
/// or added (a stub's delay, the global delay, a timer's milliseconds).
enum ResponseTiming {
  /// Longest global delay (`--global-delay-ms`, `POST /__admin/settings`), in milliseconds.
  static let maxGlobalDelayMilliseconds = 3_600_000
  /// Longest time a loop timer waits, in milliseconds (100 days): longer requests wait that long.
  static let maxTimerMilliseconds = 100 * 86_400_000

  /// A sampled stub delay plus the global delay, in whole milliseconds, each clamped first.
  static func totalDelay(sampled: Double, global: Int) -> Int {
    let stubDelay =
      sampled.isNaN ? 0 : Int(min(max(sampled, 0), Double(ResponseDefinition.maxDelayMilliseconds)).rounded())
    return stubDelay + min(max(global, 0), maxGlobalDelayMilliseconds)
  }

  /// `milliseconds` clamped to `0...maxTimerMilliseconds`, as nanoseconds.
  static func timerNanoseconds(_ milliseconds: Int) -> UInt64 {
    UInt64(min(max(milliseconds, 0), maxTimerMilliseconds)) * 1_000_000
  }
}
