import MockJSON

/// One stub mapping: a request pattern and the response (or response sequence) it answers with.
public struct StubMapping: Sendable {
  /// The fields, in one copy-on-write box: copying the value (into match results, plans, the journal)
  /// is one retain instead of one per field.
  package struct Fields: Sendable {
    var id: String
    var priority: Int
    var request: RequestPattern
    var response: ResponseDefinition
    /// Name, response sequence, scenario and metadata, which most stubs leave out (120 bytes inline)
    /// behind one reference, nil when all are absent: a plain stub pays 8 bytes for them.
    var rare: Rare?
    var source: JSONValue {
      didSet { extensions = Extensions(source) }
    }
    /// What the request path needs to know of `source`, read from it once.
    var extensions: Extensions
    var file: String?
    var location: String
  }

  package struct RareFields: Sendable, Equatable {
    var name: String?
    var responseSequence: ResponseSequence?
    var scenarioName: String?
    var requiredScenarioState: String?
    var newScenarioState: String?
    var metadata: JSONValue?
  }

  /// Immutable: copies share it; a change makes a new one (see `Fields.changeRare`).
  package final class Rare: Sendable {
    let fields: RareFields
    init(_ fields: RareFields) { self.fields = fields }
  }

  /// Fields of `source` outside the typed model that serving consults on every request.
  package struct Extensions: Sendable {
    /// `"x-cors": true`: CORS headers and preflight answers for this stub.
    package var cors = false
    /// `serveEventListeners` or `postServeActions` is present (webhooks may follow a serve).
    package var serveActions = false
    /// The state extension's `recordState` and `deleteState` listeners, in file order.
    package var stateListeners: [StateListener] = []

    init(_ source: JSONValue) {
      guard case .object(let o) = source else { return }
      cors = o["x-cors"]?.boolValue == true
      serveActions = o["serveEventListeners"] != nil || o["postServeActions"] != nil
      if o["serveEventListeners"] != nil { stateListeners = StateListener.list(of: o) }
    }
  }

  /// Copy-on-write: copies of the value share one box (one retain instead of one per field), and the first
  /// change to a shared box copies it. A final class per type, not a generic box: a generic class has no
  /// static metadata, and its every access looked the metadata up at run time.
  /// `@unchecked Sendable`: a box is only changed while uniquely referenced, so no two threads ever see it
  /// change.
  private final class FieldsBox: @unchecked Sendable {
    /// Reached only through `fields`, which gives exclusive access: no dynamic exclusivity check.
    @exclusivity(unchecked) var value: Fields
    init(_ value: Fields) { self.value = value }
  }

  private var box: FieldsBox
  private var fields: Fields {
    _read { yield box.value }
    _modify {
      if !isKnownUniquelyReferenced(&box) { box = FieldsBox(box.value) }
      yield &box.value
    }
  }

  private var rare: RareFields? { box.value.rare?.fields }

  private mutating func changeRare(_ change: (inout RareFields) -> Void) {
    var rare = self.rare ?? RareFields()
    change(&rare)
    fields.rare = rare == RareFields() ? nil : Rare(rare)
  }

  /// `x-cors` and whether serve actions exist, as read from ``source``.
  package var extensions: Extensions { fields.extensions }

  /// `id` or `uuid` (generated when the fixture has neither).
  public var id: String {
    get { fields.id }
    set { fields.id = newValue }
  }
  /// `name`.
  public var name: String? {
    get { rare?.name }
    set { changeRare { $0.name = newValue } }
  }
  /// `priority`: 1 is highest; default 5. Ties go to the stub added last.
  public var priority: Int {
    get { fields.priority }
    set { fields.priority = newValue }
  }
  /// `request`.
  public var request: RequestPattern {
    get { fields.request }
    set { fields.request = newValue }
  }
  /// `response` (the first response of a sequence when `x-responseSequence` is used).
  public var response: ResponseDefinition {
    get { fields.response }
    set { fields.response = newValue }
  }
  /// `x-responseSequence` extension: several responses served in order.
  public var responseSequence: ResponseSequence? {
    get { rare?.responseSequence }
    set { changeRare { $0.responseSequence = newValue } }
  }
  /// `scenarioName`.
  public var scenarioName: String? {
    get { rare?.scenarioName }
    set { changeRare { $0.scenarioName = newValue } }
  }
  /// `requiredScenarioState`: the stub matches only in this state of its scenario.
  public var requiredScenarioState: String? {
    get { rare?.requiredScenarioState }
    set { changeRare { $0.requiredScenarioState = newValue } }
  }
  /// `newScenarioState`: the state the scenario moves to after this stub is served.
  public var newScenarioState: String? {
    get { rare?.newScenarioState }
    set { changeRare { $0.newScenarioState = newValue } }
  }
  /// `metadata`, kept as written.
  public var metadata: JSONValue? {
    get { rare?.metadata }
    set { changeRare { $0.metadata = newValue } }
  }
  /// The stub's JSON exactly as loaded (numbers keep their spelling), for the admin round-trip.
  public var source: JSONValue {
    get { fields.source }
    set { fields.source = newValue }
  }
  /// File the stub came from, relative to the fixtures directory; nil when added by the admin API.
  public var file: String? {
    get { fields.file }
    set { fields.file = newValue }
  }
  /// JSON path of the stub in its file, e.g. `$.mappings[2]` or `$`.
  public var location: String {
    get { fields.location }
    set { fields.location = newValue }
  }

  /// Creates a stub mapping.
  public init(
    id: String, name: String? = nil, priority: Int = 5, request: RequestPattern,
    response: ResponseDefinition, responseSequence: ResponseSequence? = nil, scenarioName: String? = nil,
    requiredScenarioState: String? = nil, newScenarioState: String? = nil, metadata: JSONValue? = nil,
    source: JSONValue = .object(JSONObject()), file: String? = nil, location: String = "$"
  ) {
    box = FieldsBox(
      Fields(
        id: id, priority: priority, request: request, response: response, rare: nil, source: source,
        extensions: Extensions(source), file: file, location: location))
    let rare = RareFields(
      name: name, responseSequence: responseSequence, scenarioName: scenarioName,
      requiredScenarioState: requiredScenarioState, newScenarioState: newScenarioState, metadata: metadata)
    if rare != RareFields() { box.value.rare = Rare(rare) }
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
