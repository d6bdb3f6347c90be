/// One stub mapping: a request pattern and the response (or response sequence) it answers with.
public struct StubMapping: Sendable {
  /// `id` or `uuid` (generated when the fixture has neither).
  public var id: String
  /// `name`.
  public var name: String?
  /// `priority`: 1 is highest; default 5. Ties go to the stub added last.
  public var priority: Int
  /// `request`.
  public var request: RequestPattern
  /// `response` (the first response of a sequence when `x-responseSequence` is used).
  public var response: ResponseDefinition
  /// `x-responseSequence` extension: several responses served in order.
  public var responseSequence: ResponseSequence?
  /// `scenarioName`.
  public var scenarioName: String?
  /// `requiredScenarioState`: the stub matches only in this state of its scenario.
  public var requiredScenarioState: String?
  /// `newScenarioState`: the state the scenario moves to after this stub is served.
  public var newScenarioState: String?
  /// `metadata`, kept as written.
  public var metadata: JSONValue?
  /// The stub's JSON exactly as loaded (numbers keep their spelling), for the admin round-trip.
  public var source: JSONValue
  /// File the stub came from, relative to the fixtures directory; nil when added by the admin API.
  public var file: String?
  /// JSON path of the stub in its file, e.g. `$.mappings[2]` or `$`.
  public var location: String

  /// Creates a stub mapping.
  public init(
    id: String, name: String? = nil, priority: Int = 5, request: RequestPattern,
    response: ResponseDefinition, responseSequence: ResponseSequence? = nil, scenarioName: String? = nil,
    requiredScenarioState: String? = nil, newScenarioState: String? = nil, metadata: JSONValue? = nil,
    source: JSONValue = .object(JSONObject()), file: String? = nil, location: String = "$"
  ) {
    self.id = id
    self.name = name
    self.priority = priority
    self.request = request
    self.response = response
    self.responseSequence = responseSequence
    self.scenarioName = scenarioName
    self.requiredScenarioState = requiredScenarioState
    self.newScenarioState = newScenarioState
    self.metadata = metadata
    self.source = source
    self.file = file
    self.location = location
  }

  /// The response for the `serveCount`-th time this stub is served (0-based); without a sequence,
  /// always `response`. The caller keeps the per-stub count.
  public func response(serveCount: Int) -> ResponseDefinition {
    responseSequence?.response(at: serveCount) ?? response
  }

  /// The state a scenario starts in (WireMock's `Started`).
  public static let scenarioStarted = "Started"
}

/// Our `x-responseSequence` extension: responses served in order, then either the last one again
/// (`"onEnd": "stickOnLast"`, the default) or from the first again (`"onEnd": "loop"`).
public struct ResponseSequence: Sendable, Hashable {
  /// What happens after the last response.
  public enum EndBehavior: String, Sendable, Hashable {
    /// Keep serving the last response.
    case stickOnLast
    /// Start again from the first.
    case loop
  }

  /// The responses, at least one.
  public var responses: [ResponseDefinition]
  /// End behaviour.
  public var onEnd: EndBehavior

  /// Creates a sequence.
  public init(responses: [ResponseDefinition], onEnd: EndBehavior = .stickOnLast) {
    self.responses = responses
    self.onEnd = onEnd
  }

  /// The response for the `n`-th serve (0-based); nil only when `responses` is empty.
  public func response(at n: Int) -> ResponseDefinition? {
    guard !responses.isEmpty else { return nil }
    let k = max(n, 0)
    switch onEnd {
    case .stickOnLast: return responses[min(k, responses.count - 1)]
    case .loop: return responses[k % responses.count]
    }
  }
}
