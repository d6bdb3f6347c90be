import Mappings
import Synchronization

/// The one owner of the state that serving changes: each scenario's state and each response sequence's
/// serve count, under one lock so a transition and a count move together.
///
/// With a shared state store (`--state-store`, issue 47) the store owns them instead (``shared``): a
/// serve is committed there when it is matched (``MockResponder``'s shared path), so ``recordServed``
/// does nothing, ``states`` is the newest snapshot this replica read, and the admin API's changes go
/// through ``resetEverywhere()`` and ``setEverywhere(_:to:)``.
public final class ScenarioBook: Sendable {
  struct State {
    var states: [String: String] = [:]
    var serveCounts: [String: Int] = [:]
  }

  /// A move of scenario `name` to `next`, taken only when it is in state `required` (any state when nil).
  package struct Transition: Sendable {
    var name: String
    var required: String?
    var next: String
  }

  private let state = Mutex(State())
  /// The shared store's scenario states and sequence positions, when `--state-store` is given.
  package let shared: SharedScenarioStates?

  /// Creates a book with every scenario in `Started` and every sequence at its first response.
  public init() { shared = nil }

  /// A book whose states and positions live in `shared` (nil: in this process).
  package init(shared: SharedScenarioStates?) { self.shared = shared }

  /// The states of scenarios that moved (a snapshot); absent names are in `Started`.
  public var states: [String: String] {
    if let shared { return shared.latest.states }
    return state.withLock { $0.states }
  }

  /// The states now: read from the shared store when there is one (blocking: off the event loop).
  /// - Throws: ``RedisFailure`` when the store cannot answer.
  package func currentStates() throws(RedisFailure) -> [String: String] {
    if let shared { return try shared.snapshot().states }
    return states
  }

  /// ``reset()``, in the shared store when there is one.
  package func resetEverywhere() throws(RedisFailure) {
    try shared?.reset()
    reset()
  }

  /// ``set(_:to:)``, in the shared store when there is one.
  package func setEverywhere(_ name: String, to newState: String) throws(RedisFailure) {
    if let shared { return try shared.set(name, to: newState) }
    set(name, to: newState)
  }

  /// The state of scenario `name` (`Started` until it moves).
  public func state(of name: String) -> String {
    state.withLock { $0.states[name] } ?? StubMapping.scenarioStarted
  }

  /// How many times the response sequence of stub `id` was served.
  package func serveCount(stubID id: String) -> Int { state.withLock { $0.serveCounts[id] ?? 0 } }

  /// Records that a stub's response was served: counts it (for a response sequence) and applies its
  /// scenario transition.
  package func recordServed(stubID: String, countsServes: Bool, transition: Transition?) {
    guard shared == nil else { return }  // committed in the store when matched
    state.withLock { s in
      if countsServes { s.serveCounts[stubID, default: 0] += 1 }
      if let transition {
        let current = s.states[transition.name] ?? StubMapping.scenarioStarted
        if transition.required == nil || transition.required == current {
          s.states[transition.name] = transition.next
        }
      }
    }
  }

  /// Sets scenario `name` to `newState`.
  public func set(_ name: String, to newState: String) { state.withLock { $0.states[name] = newState } }

  /// Puts every scenario back to `Started` and restarts every response sequence.
  public func reset() { state.withLock { $0 = State() } }

  /// Every scenario named by `stubs`, with its current state and the states its stubs name.
  public func scenarios(of stubs: [StubMapping]) -> [(name: String, state: String, possibleStates: [String])]
  {
    scenarios(of: stubs, states: states)
  }

  /// ``scenarios(of:)`` with the given current states.
  package func scenarios(of stubs: [StubMapping], states current: [String: String]) -> [(
    name: String, state: String, possibleStates: [String]
  )] {
    var names: [String] = []
    var possible: [String: Set<String>] = [:]
    for stub in stubs {
      guard let name = stub.scenarioName else { continue }
      if possible[name] == nil { names.append(name) }
      // WireMock's Scenario.getPossibleStates: the states its stubs require or set (`Started` only when
      // one of them names it).
      possible[name, default: []].formUnion(
        [stub.requiredScenarioState, stub.newScenarioState].compactMap { $0 })
    }
    return names.map { name in
      (name, current[name] ?? StubMapping.scenarioStarted, possible[name, default: []].sorted())
    }
  }
}
