import HTTPCore
import Mappings
import MockJSON
import Templating

extension AdminAPI {
  /// `/__admin/state-extension/contexts…`: the state extension's admin routes (WireMock's
  /// `StateAdminApiExtension`): list the context names, read one, delete one or all. `POST /__admin/reset`
  /// leaves contexts alone, as in WireMock.
  func stateExtension(_ call: Call, _ rest: [String]) -> ResponsePlan {
    guard let stateStore, rest.first == "contexts" else { return notFound(call) }
    switch (call.method, rest.count) {
    case ("GET", 1):
      return AdminAPI.json(.array(stateStore.names().map { .string($0) }))
    case ("DELETE", 1):
      stateStore.deleteAll()
      return .respond(status: .noContent, headers: [:], body: [])
    case ("GET", 2):
      guard let context = stateStore.stateContext(named: rest[1]) else {
        return AdminAPI.error(
          .notFound, title: "Context not found", detail: "no context \(JSONValue.quoted(rest[1]))")
      }
      return AdminAPI.json(AdminAPI.contextJSON(context))
    case ("DELETE", 2):
      stateStore.delete(rest[1])
      return .respond(status: .noContent, headers: [:], body: [])
    default:
      return notFound(call)
    }
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
