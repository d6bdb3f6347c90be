import MockJSON

/// One named text value of a context of WireMock's state extension: a property, or a field of a list
/// entry.
public struct StateField: Sendable, Hashable {
  /// The property or field name.
  public var key: String
  /// Its text (every value of the state extension is text).
  public var value: String
  /// Creates a field.
  public init(_ key: String, _ value: String) {
    self.key = key
    self.value = value
  }
}

/// A context of WireMock's state extension as it is at one moment (docs/stateful.md): its properties,
/// its list and its update count.
public struct StateContextSnapshot: Sendable, Hashable {
  /// The context's name.
  public var name: String
  /// Properties in the order they were first set.
  public var properties: [StateField]
  /// The list's entries, first to last, each its fields in the order written.
  public var list: [[StateField]]
  /// 1 after the request that created the context, +1 per later request that wrote to it.
  public var updateCount: Int

  /// Creates a snapshot.
  public init(name: String, properties: [StateField] = [], list: [[StateField]] = [], updateCount: Int = 1) {
    self.name = name
    self.properties = properties
    self.list = list
    self.updateCount = updateCount
  }

  /// The value of property `key`, or nil when it is not set.
  public func property(_ key: String) -> String? {
    properties.first { $0.key == key }?.value
  }

  /// One list entry as a JSON object.
  package static func json(_ entry: [StateField]) -> JSONValue {
    .object(JSONObject(pairs: entry.map { ($0.key, JSONValue.string($0.value)) }))
  }

  /// The list as a JSON array of objects (what `property='list'` and `list=PATH` read).
  package var listJSON: JSONValue { .array(list.map(StateContextSnapshot.json)) }
}

/// Read access to the state extension's store for templates (the `state` helper) and for the
/// `state-matcher` custom matcher. The server's store conforms; the templating module does not depend on
/// it.
public protocol TemplateStateLookup: AnyObject, Sendable {
  /// The context named `name` as it is now, or nil when it does not exist (or expired).
  func stateContext(named name: String) -> StateContextSnapshot?
}
