import Synchronization

/// Settings the admin API can change while serving (`POST /__admin/settings`).
public final class MockSettings: Sendable {
  private let globalDelay: Atomic<Int>

  /// Creates the settings; `globalDelayMilliseconds` is clamped to 0...``MockServiceConfiguration/maxDelayMilliseconds``.
  public init(globalDelayMilliseconds: Int = 0) {
    globalDelay = Atomic(MockSettings.clampDelay(globalDelayMilliseconds))
  }

  /// The delay added to every stub response, in ms (0...``MockServiceConfiguration/maxDelayMilliseconds``).
  public var globalDelayMilliseconds: Int {
    get { globalDelay.load(ordering: .relaxed) }
    set { globalDelay.store(MockSettings.clampDelay(newValue), ordering: .relaxed) }
  }

  static func clampDelay(_ ms: Int) -> Int { min(max(0, ms), MockServiceConfiguration.maxDelayMilliseconds) }
}
