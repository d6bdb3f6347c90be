import MockJSON

/// One stub mapping: a request pattern and the response (or response sequence) it answers with.
public struct StubMapping: Sendable {
  /// The fields, in one copy-on-write box: copying the value (into match results, plans, the journal)
  /// is one retain instead of one per field.
  package struct Fields: Sendable {
    var id: String
    var name: String?
    var priority: Int
    var request: RequestPattern
    var response: ResponseDefinition
    var responseSequence: ResponseSequence?
    var scenarioName: String?
    var requiredScenarioState: String?
    var newScenarioState: String?
    var metadata: JSONValue?
    var source: JSONValue
    var file: String?
    var location: String
  }

  private var fields: CopyOnWrite<Fields>

  /// `id` or `uuid` (generated when the fixture has neither).
  public var id: String {
    get { fields.value.id }
    set { fields.value.id = newValue }
  }
  /// `name`.
  public var name: String? {
    get { fields.value.name }
    set { fields.value.name = newValue }
  }
  /// `priority`: 1 is highest; default 5. Ties go to the stub added last.
  public var priority: Int {
    get { fields.value.priority }
    set { fields.value.priority = newValue }
  }
  /// `request`.
  public var request: RequestPattern {
    get { fields.value.request }
    set { fields.value.request = newValue }
  }
  /// `response` (the first response of a sequence when `x-responseSequence` is used).
  public var response: ResponseDefinition {
    get { fields.value.response }
    set { fields.value.response = newValue }
  }
  /// `x-responseSequence` extension: several responses served in order.
  public var responseSequence: ResponseSequence? {
    get { fields.value.responseSequence }
    set { fields.value.responseSequence = newValue }
  }
  /// `scenarioName`.
  public var scenarioName: String? {
    get { fields.value.scenarioName }
    set { fields.value.scenarioName = newValue }
  }
  /// `requiredScenarioState`: the stub matches only in this state of its scenario.
  public var requiredScenarioState: String? {
    get { fields.value.requiredScenarioState }
    set { fields.value.requiredScenarioState = newValue }
  }
  /// `newScenarioState`: the state the scenario moves to after this stub is served.
  public var newScenarioState: String? {
    get { fields.value.newScenarioState }
    set { fields.value.newScenarioState = newValue }
  }
  /// `metadata`, kept as written.
  public var metadata: JSONValue? {
    get { fields.value.metadata }
    set { fields.value.metadata = newValue }
  }
  /// The stub's JSON exactly as loaded (numbers keep their spelling), for the admin round-trip.
  public var source: JSONValue {
    get { fields.value.source }
    set { fields.value.source = newValue }
  }
  /// File the stub came from, relative to the fixtures directory; nil when added by the admin API.
  public var file: String? {
    get { fields.value.file }
    set { fields.value.file = newValue }
  }
  /// JSON path of the stub in its file, e.g. `$.mappings[2]` or `$`.
  public var location: String {
    get { fields.value.location }
    set { fields.value.location = newValue }
  }

  /// Creates a stub mapping.
  public init(
    id: String, name: String? = nil, priority: Int = 5, request: RequestPattern,
    response: ResponseDefinition, responseSequence: ResponseSequence? = nil, scenarioName: String? = nil,
    requiredScenarioState: String? = nil, newScenarioState: String? = nil, metadata: JSONValue? = nil,
    source: JSONValue = .object(JSONObject()), file: String? = nil, location: String = "$"
  ) {
    fields = CopyOnWrite(
      Fields(
        id: id, name: name, priority: priority, request: request, response: response,
        responseSequence: responseSequence, scenarioName: scenarioName,
        requiredScenarioState: requiredScenarioState, newScenarioState: newScenarioState, metadata: metadata,
        source: source, file: file, location: location))
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
