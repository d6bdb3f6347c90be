import HTTPCore
import Mappings
import MockJSON
import Templating

extension AdminAPI {
  /// `/__admin/state-extension/contexts…`: the state extension's admin routes (WireMock's
  /// `StateAdminApiExtension`): list the context names, read one, delete one or all. `POST /__admin/reset`
  /// leaves contexts alone, as in WireMock. With the shared state store (`--state-store`) the contexts are
  /// the store's (these routes then run off the event loop), and while it is down they answer 503.
  func stateExtension(_ call: Call, _ rest: [String]) -> ResponsePlan {
    guard let stateStore, rest.first == "contexts" else { return notFound(call) }
    let state = StateAccess(stateStore)
    var plan: ResponsePlan
    switch (call.method, rest.count) {
    case ("GET", 1):
      plan = AdminAPI.json(.array(state.names().map { .string($0) }))
    case ("DELETE", 1):
      state.deleteAll()
      plan = .respond(status: .noContent, headers: [:], body: [])
    case ("GET", 2):
      if let context = state.stateContext(named: rest[1]) {
        plan = AdminAPI.json(AdminAPI.contextJSON(context))
      } else {
        plan = AdminAPI.error(
          .notFound, title: "Context not found", detail: "no context \(JSONValue.quoted(rest[1]))")
      }
    case ("DELETE", 2):
      state.delete([rest[1]])
      plan = .respond(status: .noContent, headers: [:], body: [])
    default:
      return notFound(call)
    }
    if let failure = state.failure {
      plan = AdminAPI.sharedStateUnavailable(failure, changed: call.method != "GET")
    }
    return plan
  }

  /// A context as the extension's admin API shows it: `contextName`, `properties`, `list`, `updateCount`.
  static func contextJSON(_ context: StateContextSnapshot) -> JSONValue {
    .object(
      JSONObject(pairs: [
        ("contextName", .string(context.name)),
        ("properties", .object(JSONObject(pairs: context.properties.map { ($0.key, .string($0.value)) }))),
        ("list", context.listJSON),
        ("updateCount", .number(JSONNumber(context.updateCount))),
      ]))
  }
}
