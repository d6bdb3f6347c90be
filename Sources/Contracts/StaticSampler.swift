import JSONSchema
import MockJSON

/// The value Prism serves for a schema without an example (its static mode, the OpenAPI sampler's rules):
/// `const`, the first of `examples`, `example`, `default`, the first `enum` value; then by type: a string is
/// `"string"` or the sample of its `format` (`user@example.com`, `2019-08-24T14:15:22Z`, …) padded to
/// `minLength` and cut to `maxLength`, a number `0` or its lower bound, a Boolean `true`, an array
/// `minItems` (at least one) copies of its item, an object every property but `writeOnly` ones; `allOf`
/// merged, the first `oneOf`/`anyOf` branch. A `$ref` already entered twice on the way down is `{}` (so a
/// recursive schema ends).
///
/// ``OpenAPIMock`` serves this value when it validates against the schema and a ``SchemaSampler`` value
/// otherwise (a `pattern` the placeholder does not match, for example).
package struct StaticSampler {
  let document: OpenAPIDocument
  /// Property values past this depth are `{}`: a guard for deep non-recursive documents.
  static let maximumDepth = 32

  package init(document: OpenAPIDocument) { self.document = document }

  package func sample(at location: SchemaLocation) -> JSONValue? {
    guard let schema = document.schema(at: location) else { return nil }
    var stack: [String] = []
    return sample(schema, location, &stack, depth: 0)
  }

  /// The schema's type: `type`, or the first non-null one of a `type` list, else `object` for a schema with
  /// `properties` or `additionalProperties` and `array` for one with `items`; nil when none says.
  static func declaredType(_ s: JSONObject) -> String? {
    if let type = s["type"]?.stringValue { return type }
    if let list = s["type"]?.arrayValue?.compactMap(\.stringValue), !list.isEmpty {
      return list.first { $0 != "null" } ?? list.first
    }
    if s["properties"] != nil || s["additionalProperties"] != nil { return "object" }
    return s["items"] != nil ? "array" : nil
  }

  static let formats: [String: String] = [
    "email": "user@example.com", "idn-email": "пользователь@пример.ру", "password": "pa$$word",
    "date-time": "2019-08-24T14:15:22Z", "date": "2019-08-24", "time": "14:15:22Z",
    "ipv4": "192.168.0.1", "ipv6": "2001:db8:85a3::8a2e:370:7334", "hostname": "example.com",
    "idn-hostname": "example.com", "uri": "http://example.com", "iri": "http://example.com",
    "uri-reference": "../dictionary", "iri-reference": "../dictionary",
    "uri-template": "http://example.com/{endpoint}", "uuid": "497f6eca-6276-4993-bfeb-53cbbbba6f08",
    "json-pointer": "/json/pointer", "relative-json-pointer": "1/relative/json/pointer", "regex": "/regex/",
    "byte": "U3dhZ2dlciByb2Nrcw==", "binary": "string", "duration": "P3D",
  ]

  func sample(_ raw: JSONValue, _ location: SchemaLocation, _ stack: inout [String], depth: Int) -> JSONValue
  {
    var pushed = 0
    var schema = raw
    var location = location
    while let ref = schema["$ref"]?.stringValue, pushed < 32 {
      if stack.filter({ $0 == ref }).count >= 2 { return .object(JSONObject()) }
      guard let (target, targetLocation) = document.validator.resolve(ref, from: location) else { break }
      stack.append(ref)
      pushed += 1
      schema = target
      location = targetLocation
    }
    defer { stack.removeLast(pushed) }
    guard case .object(let s) = schema, depth < StaticSampler.maximumDepth else {
      return schema == .bool(false) ? .null : .object(JSONObject())
    }
    if let c = s["const"] { return c }
    if let e = s["examples"]?.arrayValue?.first { return e }
    if let e = s["example"] { return e }
    if let d = s["default"] { return d }
    if let e = s["enum"]?.arrayValue?.first { return e }
    if let all = s["allOf"]?.arrayValue, !all.isEmpty {
      var members: [JSONObject.Member] = []
      var scalar: JSONValue?
      for (k, branch) in all.enumerated() {
        let value = sample(branch, location.appending("allOf", String(k)), &stack, depth: depth + 1)
        if case .object(let o) = value {
          for m in o where !members.contains(where: { $0.key == m.key }) { members.append(m) }
        } else {
          scalar = value
        }
      }
      var rest = s
      rest.members.removeAll { $0.key == "allOf" }
      if rest["properties"] != nil || rest["type"] != nil {
        let own = sample(.object(rest), location, &stack, depth: depth + 1)
        if case .object(let o) = own {
          for m in o where !members.contains(where: { $0.key == m.key }) { members.append(m) }
        } else if members.isEmpty {
          return own
        }
      }
      if members.isEmpty, let scalar { return scalar }
      return .object(JSONObject(members))
    }
    for key in ["oneOf", "anyOf"] {
      if let first = s[key]?.arrayValue?.first {
        return sample(first, location.appending(key, "0"), &stack, depth: depth + 1)
      }
    }
    let type = StaticSampler.declaredType(s)
    switch type {
    case "object":
      var members: [JSONObject.Member] = []
      for p in s["properties"]?.objectValue ?? JSONObject() where p.value["writeOnly"]?.boolValue != true {
        members.append(
          .init(
            key: p.key,
            value: sample(p.value, location.appending("properties", p.key), &stack, depth: depth + 1)))
      }
      return .object(JSONObject(members))
    case "array":
      guard let items = s["items"], items.objectValue != nil || items.boolValue == true else {
        if let contains = s["contains"] {
          let count = max(1, min(SchemaSampler.count(s["minContains"]) ?? 1, 100))
          return .array(
            Array(
              repeating: sample(contains, location.appending("contains"), &stack, depth: depth + 1),
              count: count))
        }
        return .array([])
      }
      let count = max(1, min(SchemaSampler.count(s["minItems"]) ?? 1, 100))
      let item = sample(items, location.appending("items"), &stack, depth: depth + 1)
      return .array(Array(repeating: item, count: count))
    case "integer", "number":
      return .number(number(s, integer: type == "integer"))
    case "boolean": return .bool(true)
    case "null": return .null
    case "string": return .string(string(s))
    default: return .object(JSONObject())
    }
  }

  func number(_ s: JSONObject, integer: Bool) -> JSONNumber {
    if let min = s["minimum"]?.numberValue {
      if s["exclusiveMinimum"]?.boolValue == true { return integer ? add(min, 1) : add(min, 1) }
      return min
    }
    if let min = s["exclusiveMinimum"]?.numberValue { return add(min, 1) }
    if let max = s["maximum"]?.numberValue, max.doubleValue < 0 {
      return s["exclusiveMaximum"]?.boolValue == true ? add(max, -1) : max
    }
    if let max = s["exclusiveMaximum"]?.numberValue, max.doubleValue <= 0 { return add(max, -1) }
    return JSONNumber(0)
  }

  func add(_ n: JSONNumber, _ k: Int) -> JSONNumber {
    if let i = n.intValue, let sum = Optional(i.addingReportingOverflow(k)), !sum.overflow {
      return JSONNumber(sum.partialValue)
    }
    return n
  }

  func string(_ s: JSONObject) -> String {
    var text = s["format"]?.stringValue.flatMap { StaticSampler.formats[$0] } ?? "string"
    let minLength = SchemaSampler.count(s["minLength"]) ?? 0
    let maxLength = SchemaSampler.count(s["maxLength"])
    if text.count < minLength {
      text += String(repeating: "a", count: min(minLength, 100_000) - text.count)
    }
    if let maxLength, text.count > maxLength { text = String(text.prefix(maxLength)) }
    return text
  }
}
