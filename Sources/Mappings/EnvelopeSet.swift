import MockJSON

/// Envelope templates from `Fixtures/envelopes.json` (our extension): named JSON shapes with slots, so
/// that a stub writes only its payload.
///
/// A slot is a string that is exactly `"${name}"`, anywhere in the template. File format:
/// ```json
/// { "ok":   {"status": "OK", "result": "${result}"},
///   "ng":   {"status": "NG", "message": "${message}"},
///   "code": {"code": "${code}", "data": "${data}", "info": "${info}"} }
/// ```
/// A stub uses one with `"response": {"x-envelope": {"name": "ok", "result": [ … ]}}`: every slot needs a
/// value and every value needs a slot.
public struct EnvelopeSet: Sendable, Hashable {
  /// Templates by name.
  public var templates: [String: JSONValue]

  /// Creates a set.
  public init(templates: [String: JSONValue] = [:]) { self.templates = templates }

  /// Slot names of template `name` in document order (nil when there is no such template).
  public func slots(of name: String) -> [String]? {
    guard let t = templates[name] else { return nil }
    var out: [String] = []
    EnvelopeSet.collect(t, into: &out)
    return out
  }

  /// The slot name when `value` is a slot string `${name}`.
  package static func slotName(_ value: JSONValue) -> String? {
    guard case .string(let s) = value, s.hasPrefix("${"), s.hasSuffix("}"), s.count > 3 else { return nil }
    return String(s.dropFirst(2).dropLast())
  }

  package static func collect(_ v: JSONValue, into out: inout [String]) {
    if let n = slotName(v) {
      if !out.contains(n) { out.append(n) }
      return
    }
    switch v {
    case .array(let a): for x in a { collect(x, into: &out) }
    case .object(let o): for m in o { collect(m.value, into: &out) }
    default: break
    }
  }

  /// Template `name` with each slot replaced by `values[slot]`; nil when the template does not exist.
  /// Slots without a value stay as they are (the parser reports them beforehand).
  public func fill(_ name: String, values: [String: JSONValue]) -> JSONValue? {
    guard let t = templates[name] else { return nil }
    return EnvelopeSet.substitute(t, values)
  }

  package static func substitute(_ v: JSONValue, _ values: [String: JSONValue]) -> JSONValue {
    if let n = slotName(v), let x = values[n] { return x }
    switch v {
    case .array(let a): return .array(a.map { substitute($0, values) })
    case .object(var o):
      for k in o.members.indices { o.members[k].value = substitute(o.members[k].value, values) }
      return .object(o)
    default: return v
    }
  }

  /// Parses the content of `envelopes.json`, reporting problems against `file`.
  package static func parse(_ json: JSONValue, diagnostics: inout Diagnostics) -> EnvelopeSet {
    guard case .object(let o) = json else {
      diagnostics.error(
        "$", expected: "an object of named envelope templates such as {\"ok\": {\"status\": \"OK\", …}}",
        found: json)
      return EnvelopeSet()
    }
    var templates: [String: JSONValue] = [:]
    for m in o {
      let path = JSONPathText.child("$", m.key)
      var slots: [String] = []
      collect(m.value, into: &slots)
      if slots.isEmpty {
        diagnostics.warning(path, "the template has no \"${name}\" slot, so stubs cannot add a payload")
      }
      templates[m.key] = m.value
    }
    return EnvelopeSet(templates: templates)
  }
}
