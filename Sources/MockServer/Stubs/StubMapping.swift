/// One stub mapping: a request pattern and the response (or response sequence) it answers with.
public struct StubMapping: Sendable {
  /// The fields live in one shared, copy-on-write box: a stub is copied on every match (into the match
  /// result, the plan, the journal), and copying one reference is far cheaper than copying its dozens.
  ///
  /// `@unchecked Sendable`: a box is only mutated through ``mutate(_:)`` while uniquely referenced, so no
  /// two threads ever see it change.
  final class Storage: @unchecked Sendable {
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

    init(
      id: String, name: String?, priority: Int, request: RequestPattern, response: ResponseDefinition,
      responseSequence: ResponseSequence?, scenarioName: String?, requiredScenarioState: String?,
      newScenarioState: String?, metadata: JSONValue?, source: JSONValue, file: String?, location: String
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

    func copy() -> Storage {
      Storage(
        id: id, name: name, priority: priority, request: request, response: response,
        responseSequence: responseSequence, scenarioName: scenarioName,
        requiredScenarioState: requiredScenarioState, newScenarioState: newScenarioState, metadata: metadata,
        source: source, file: file, location: location)
    }
  }

  private var storage: Storage

  /// `id` or `uuid` (generated when the fixture has neither).
  public var id: String {
    get { storage.id }
    set { mutate { $0.id = newValue } }
  }
  /// `name`.
  public var name: String? {
    get { storage.name }
    set { mutate { $0.name = newValue } }
  }
  /// `priority`: 1 is highest; default 5. Ties go to the stub added last.
  public var priority: Int {
    get { storage.priority }
    set { mutate { $0.priority = newValue } }
  }
  /// `request`.
  public var request: RequestPattern {
    get { storage.request }
    set { mutate { $0.request = newValue } }
  }
  /// `response` (the first response of a sequence when `x-responseSequence` is used).
  public var response: ResponseDefinition {
    get { storage.response }
    set { mutate { $0.response = newValue } }
  }
  /// `x-responseSequence` extension: several responses served in order.
  public var responseSequence: ResponseSequence? {
    get { storage.responseSequence }
    set { mutate { $0.responseSequence = newValue } }
  }
  /// `scenarioName`.
  public var scenarioName: String? {
    get { storage.scenarioName }
    set { mutate { $0.scenarioName = newValue } }
  }
  /// `requiredScenarioState`: the stub matches only in this state of its scenario.
  public var requiredScenarioState: String? {
    get { storage.requiredScenarioState }
    set { mutate { $0.requiredScenarioState = newValue } }
  }
  /// `newScenarioState`: the state the scenario moves to after this stub is served.
  public var newScenarioState: String? {
    get { storage.newScenarioState }
    set { mutate { $0.newScenarioState = newValue } }
  }
  /// `metadata`, kept as written.
  public var metadata: JSONValue? {
    get { storage.metadata }
    set { mutate { $0.metadata = newValue } }
  }
  /// The stub's JSON exactly as loaded (numbers keep their spelling), for the admin round-trip.
  public var source: JSONValue {
    get { storage.source }
    set { mutate { $0.source = newValue } }
  }
  /// File the stub came from, relative to the fixtures directory; nil when added by the admin API.
  public var file: String? {
    get { storage.file }
    set { mutate { $0.file = newValue } }
  }
  /// JSON path of the stub in its file, e.g. `$.mappings[2]` or `$`.
  public var location: String {
    get { storage.location }
    set { mutate { $0.location = newValue } }
  }

  /// Creates a stub mapping.
  public init(
    id: String, name: String? = nil, priority: Int = 5, request: RequestPattern,
    response: ResponseDefinition, responseSequence: ResponseSequence? = nil, scenarioName: String? = nil,
    requiredScenarioState: String? = nil, newScenarioState: String? = nil, metadata: JSONValue? = nil,
    source: JSONValue = .object(JSONObject()), file: String? = nil, location: String = "$"
  ) {
    storage = Storage(
      id: id, name: name, priority: priority, request: request, response: response,
      responseSequence: responseSequence, scenarioName: scenarioName,
      requiredScenarioState: requiredScenarioState, newScenarioState: newScenarioState, metadata: metadata,
      source: source, file: file, location: location)
  }

  private mutating func mutate(_ change: (Storage) -> Void) {
    if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
    change(storage)
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
