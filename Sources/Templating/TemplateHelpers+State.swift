import MockJSON

/// The `state` helper of WireMock's state extension (docs/stateful.md, "The state helper"):
/// `{{state context=C property=P [default=D]}}` or `{{state context=C list=PATH [default=D]}}`, reading the
/// store the rendering's ``TemplateContext/state`` gives (none: every context is missing).
extension TemplateHelpers {
  static let stateHelpers: [String: Helper] = {
    var t: [String: Helper] = [:]
    t["state"] = { c in state(&c) }
    return t
  }()

  /// What the extension renders, including its answers when something is missing: the update count and
  /// list size are `0` (or `default`) for a missing context, the whole list `[]` (or `default` read as a
  /// JSON array); any other property, and a list path that selects nothing, `""` (or `default`).
  static func state(_ c: inout HelperCall) -> TemplateValue {
    let contextName = c.string("context") ?? ""
    guard !contextName.isEmpty else { return c.error("'context' cannot be empty") }
    let property = c.string("property")
    let listPath = c.string("list")
    guard (property == nil) != (listPath == nil) else {
      return c.error("Either 'property' or 'list' has to be set")
    }
    let fallback = c.hash["default"].flatMap { $0.isNull ? nil : $0 }
    let context = c.state.context.state?.stateContext(named: contextName)
    if let property {
      switch property {
      case "updateCount":
        guard let context else { return fallback ?? .int(0) }
        return .int(context.updateCount)
      case "listSize":
        guard let context else { return fallback ?? .int(0) }
        return .int(context.list.count)
      case "list":
        if let context { return javaLike(context.listJSON) }
        guard let fallback else { return .list([]) }
        let text = fallback.rendered
        guard let parsed = try? JSONValue.parse(text), case .array = parsed else {
          c.state.problems.append("state: default \(JSONValue.quoted(text)) is not a JSON array; [] used")
          return .list([])
        }
        return javaLike(parsed)
      default:
        if let value = context?.property(property) { return .string(value) }
        return fallback ?? .string("")
      }
    }
    guard let context, let listPath else { return fallback ?? .string("") }
    let expression = listPath.hasPrefix("$") ? listPath : "$" + listPath
    guard let path = compiledPath(expression) else {
      return c.error("state: \(listPath) is not a valid JSONPath expression")
    }
    let found = path.evaluate(context.listJSON)
    let result = path.isDefinite ? found.first : .array(found)
    switch result {
    case nil, .null?: return fallback ?? .string("")
    case let found?: return javaLike(found)
    }
  }

  /// A stored value as the extension's helper returns it: lists and maps of text, so `{{value}}` renders
  /// as Java's `toString` does (`[{id=1}, {id=2}]`, `[]`), and `{{#each}}` and member access reach into
  /// them.
  static func javaLike(_ value: JSONValue) -> TemplateValue {
    switch value {
    case .array(let items): .list(items.map(javaLike))
    case .object(let o): .map(TemplateMap(o.members.map { (key: $0.key, value: javaLike($0.value)) }))
    case .string(let s): .string(s)
    default: .json(value)
    }
  }
}
