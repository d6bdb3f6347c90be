import HTTPCore
import Mappings
import MockJSON

extension AdminAPI {
  /// `/__admin/scenarios…`
  func scenarios(_ call: Call, _ rest: [String]) -> ResponsePlan {
    switch (call.method, rest.count) {
    case ("GET", 0):
      let current: [String: String]
      do {
        current = try scenarioBook.currentStates()
      } catch {
        return AdminAPI.sharedStateUnavailable(error, changed: false)
      }
      let list: [JSONValue] = scenarioBook.scenarios(of: visibleStubs, states: current).map { s in
        .object(
          JSONObject(pairs: [
            ("id", .string(s.name)), ("name", .string(s.name)), ("state", .string(s.state)),
            ("possibleStates", .array(s.possibleStates.map { .string($0) })),
          ]))
      }
      return AdminAPI.json(.object(JSONObject(pairs: [("scenarios", .array(list))])))
    case ("POST", 1) where rest[0] == "reset":
      do {
        try scenarioBook.resetEverywhere()
      } catch {
        return AdminAPI.sharedStateUnavailable(error)
      }
      return AdminAPI.empty
    case ("PUT", 2) where rest[1] == "state":
      return setScenarioState(call, name: rest[0])
    default:
      return notFound(call)
    }
  }

  /// `PUT /__admin/scenarios/{name}/state` `{"state":"x"}` (no body: back to `Started`).
  func setScenarioState(_ call: Call, name: String) -> ResponsePlan {
    var newState = StubMapping.scenarioStarted
    var resetting = false
    switch AdminAPI.body(call, allowEmpty: true) {
    case .failure(let f): return f.plan
    case .success(nil): resetting = true
    case .success(let json?):
      guard let o = json.objectValue, let s = o["state"]?.stringValue else {
        let found = json.objectValue.map { $0["state"]?.kindDescription ?? "nothing" } ?? json.kindDescription
        return AdminAPI.error(
          .badRequest, title: "Invalid scenario state",
          detail: "$.state: expected a string (the new state), found \(found)", pointer: "/state")
      }
      newState = s
    }
    guard
      let scenario = scenarioBook.scenarios(of: visibleStubs, states: [:]).first(where: { $0.name == name })
    else {
      return AdminAPI.error(
        .notFound, title: "Scenario not found", detail: "no stub names scenario \(JSONValue.quoted(name))")
    }
    // A state must be one the scenario's stubs name (WireMock's Scenario.setState); a PUT without a body
    // puts the scenario back to `Started` whatever they name, as a reset does.
    guard resetting || scenario.possibleStates.contains(newState) else {
      return AdminAPI.error(
        .badRequest, title: "Invalid scenario state",
        detail:
          "$.state: expected one of \(scenario.possibleStates.map(JSONValue.quoted).joined(separator: ", ")), found \(JSONValue.quoted(newState))",
        pointer: "/state")
    }
    do {
      try scenarioBook.setEverywhere(name, to: newState)
    } catch {
      return AdminAPI.sharedStateUnavailable(error)
    }
    return AdminAPI.empty
  }
}
