import Mappings
import MockJSON
import Synchronization

/// Settings the admin API can change while serving (`POST /__admin/settings`).
public final class MockSettings: Sendable {
  private let globalDelay: Atomic<Int>
  /// Whether a `delayDistribution` is set: read per request without taking the lock.
  private let hasDistribution = Atomic(false)
  private let random = Mutex<
    (distribution: DelayDistribution?, distributionJSON: JSONValue?, extended: JSONValue?)
  >(
    (nil, nil, nil))

  /// Creates the settings; `globalDelayMilliseconds` is clamped to 0...``MockServiceConfiguration/maxDelayMilliseconds``.
  public init(globalDelayMilliseconds: Int = 0) {
    globalDelay = Atomic(MockSettings.clampDelay(globalDelayMilliseconds))
  }

  /// The delay added to every stub response, in ms (0...``MockServiceConfiguration/maxDelayMilliseconds``).
  public var globalDelayMilliseconds: Int {
    get { globalDelay.load(ordering: .relaxed) }
    set { globalDelay.store(MockSettings.clampDelay(newValue), ordering: .relaxed) }
  }

  /// `delayDistribution`: a random delay added to every stub response (sampled per response, in ms), or nil.
  public var delayDistribution: DelayDistribution? { random.withLock { $0.distribution } }

  /// `delayDistribution` as it was given (for `GET /__admin/settings`), or nil.
  public var delayDistributionJSON: JSONValue? { random.withLock { $0.distributionJSON } }

  /// Sets (or, with nil, clears) the global delay distribution; `json` is what was given.
  public func setDelayDistribution(_ distribution: DelayDistribution?, json: JSONValue?) {
    random.withLock {
      $0.distribution = distribution
      $0.distributionJSON = distribution == nil ? nil : json
      hasDistribution.store(distribution != nil, ordering: .relaxed)
    }
  }

  /// True when the settings add a delay to stub responses (a global fixed delay or distribution).
  var addsDelay: Bool {
    globalDelay.load(ordering: .relaxed) > 0 || hasDistribution.load(ordering: .relaxed)
  }

  /// `extended`: free-form settings kept for clients and extensions (WireMock's `extended`), or nil.
  public var extended: JSONValue? {
    get { random.withLock { $0.extended } }
    set { random.withLock { $0.extended = newValue } }
  }

  static func clampDelay(_ ms: Int) -> Int { min(max(0, ms), MockServiceConfiguration.maxDelayMilliseconds) }
}
