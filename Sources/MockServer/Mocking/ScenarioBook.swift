import Mappings
import Synchronization

/// The one owner of the state that serving changes: each scenario's state and each response sequence's
/// serve count, under one lock so a transition and a count move together.
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

  /// Creates a book with every scenario in `Started` and every sequence at its first response.
  public init() {}

  /// The states of scenarios that moved (a snapshot); absent names are in `Started`.
  public var states: [String: String] { state.withLock { $0.states } }

  /// The state of scenario `name` (`Started` until it moves).
  public func state(of name: String) -> String {
    state.withLock { $0.states[name] } ?? StubMapping.scenarioStarted
  }

  /// How many times the response sequence of stub `id` was served.
  package func serveCount(stubID id: String) -> Int { state.withLock { $0.serveCounts[id] ?? 0 } }

  /// Records that a stub's response was served: counts it (for a response sequence) and applies its
  /// scenario transition.
  package func recordServed(stubID: String, countsServes: Bool, transition: Transition?) {
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
    let current = states
    return names.map { name in
      (name, current[name] ?? StubMapping.scenarioStarted, possible[name, default: []].sorted())
    }
  }
}
