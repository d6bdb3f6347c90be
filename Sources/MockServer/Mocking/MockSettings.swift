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

  /// The settings as one value: what `GET /__admin/settings` shows inside `settings`, and what the
  /// shared store holds (``SharedSettings``).
  package struct Values: Sendable {
    /// `fixedDelay`, in ms (0...``MockServiceConfiguration/maxDelayMilliseconds``).
    package var fixedDelayMilliseconds = 0
    package var delayDistribution: DelayDistribution?
    /// `delayDistribution` as it was given.
    package var delayDistributionJSON: JSONValue?
    package var extended: JSONValue?

    package init() {}

    /// Reads a settings object (`{"fixedDelay", "delayDistribution", "extended"}`, each optional); nil when
    /// a field is not what it must be (the admin API says why before anything is written).
    package init?(json: JSONValue) {
      guard let o = json.objectValue else { return nil }
      if let v = o["fixedDelay"], v != .null {
        guard let n = v.numberValue?.intValue, n >= 0, n <= MockServiceConfiguration.maxDelayMilliseconds
        else { return nil }
        fixedDelayMilliseconds = n
      }
      if let v = o["delayDistribution"], v != .null {
        var d = Diagnostics(file: "")
        guard let distribution = StubParser.parseDistribution(v, "$.delayDistribution", &d), d.errorCount == 0
        else { return nil }
        delayDistribution = distribution
        delayDistributionJSON = v
      }
      if let v = o["extended"], v != .null {
        guard v.objectValue != nil else { return nil }
        extended = v
      }
    }

    /// The settings object, as `GET /__admin/settings` shows it inside `settings`.
    package var json: JSONValue {
      var pairs: [(String, JSONValue)] = [("fixedDelay", .number(JSONNumber(fixedDelayMilliseconds)))]
      if let delayDistributionJSON { pairs.append(("delayDistribution", delayDistributionJSON)) }
      if let extended { pairs.append(("extended", extended)) }
      return .object(JSONObject(pairs: pairs))
    }
  }

  /// The current settings.
  package var values: Values {
    var v = Values()
    v.fixedDelayMilliseconds = globalDelayMilliseconds
    random.withLock {
      v.delayDistribution = $0.distribution
      v.delayDistributionJSON = $0.distributionJSON
      v.extended = $0.extended
    }
    return v
  }

  /// Replaces every setting with those of `json` (a settings object the shared store holds); one that is
  /// not one changes nothing and is reported to `log`.
  package func apply(json: JSONValue, log: (String) -> Void) {
    guard let values = Values(json: json) else {
      log(
        "mockserver: shared state store: settings left as they are: not a settings object: \(json.serialized())"
      )
      return
    }
    apply(values)
  }

  /// Replaces every setting with `values`.
  package func apply(_ values: Values) {
    globalDelayMilliseconds = values.fixedDelayMilliseconds
    setDelayDistribution(values.delayDistribution, json: values.delayDistributionJSON)
    extended = values.extended
  }

  static func clampDelay(_ ms: Int) -> Int { min(max(0, ms), MockServiceConfiguration.maxDelayMilliseconds) }
}
