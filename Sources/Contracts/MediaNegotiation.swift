import Foundation
import JSONSchema
import MockJSON

/// Proactive content negotiation (RFC 9110 §12.5.1), as Prism's `accepts` library does it: each offered
/// media type takes the `Accept` range that fits it most specifically (type, subtype, parameters); offered
/// types are ranked by that range's `q`, then its specificity, then its place in `Accept`, then their own
/// order; `q=0` refuses. When nothing fits, the ranges are tried again without their parameters other than
/// `q` (`application/vnd.x+json; version=1` then fits `application/vnd.x+json`). A `+json` or `+xml`
/// structured-syntax suffix type is covered by its own name only, never by `application/json`.
package enum MediaNegotiation {
  struct Range {
    var type: String
    var subtype: String
    var parameters: [(String, String)]
    var q: Double
    var order: Int
  }

  static func parse(_ accept: String) -> [Range] {
    accept.split(separator: ",").enumerated().compactMap { k, item in
      let parts = item.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      guard let essence = parts.first, !essence.isEmpty else { return nil }
      let tv = essence.lowercased().split(separator: "/", maxSplits: 1).map(String.init)
      guard tv.count == 2 else { return nil }
      var q = 1.0
      var parameters: [(String, String)] = []
      for p in parts.dropFirst() {
        let kv = p.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        guard kv.count == 2 else { continue }
        if kv[0].lowercased() == "q" {
          q = min(1, max(0, Double(kv[1]) ?? 1))
        } else {
          parameters.append(
            (kv[0].lowercased(), kv[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))))
        }
      }
      return Range(type: tv[0], subtype: tv[1], parameters: parameters, q: q, order: k)
    }
  }

  /// The offered media type to answer with for `accept`, or nil when none is acceptable.
  package static func best(accept: String, offered: [String]) -> String? {
    let ranges = parse(accept)
    if let found = best(ranges, offered) { return found }
    let stripped = ranges.map { r -> Range in
      var copy = r
      copy.parameters = []
      return copy
    }
    return best(stripped, offered)
  }

  static func best(_ ranges: [Range], _ offered: [String]) -> String? {
    var ranked: [(name: String, q: Double, s: Int, o: Int, i: Int)] = []
    for (i, name) in offered.enumerated() {
      let parts = name.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
      let tv = (parts.first ?? "").lowercased().split(separator: "/", maxSplits: 1).map(String.init)
      guard tv.count == 2 else { continue }
      var own: [String: String] = [:]
      for p in parts.dropFirst() {
        let kv = p.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
        if kv.count == 2 { own[kv[0].lowercased()] = kv[1] }
      }
      var priority: (q: Double, s: Int, o: Int)?
      for r in ranges {
        var s = 0
        if r.type == tv[0] { s |= 4 } else if r.type != "*" && !(tv[0] == "*") { continue }
        if r.subtype == tv[1] { s |= 2 } else if r.subtype != "*" && !(tv[1] == "*") { continue }
        if !r.parameters.isEmpty {
          guard r.parameters.allSatisfy({ own[$0.0] == $0.1 }) else { continue }
          s |= 1
        }
        if let p = priority {
          if s < p.s || (s == p.s && r.q < p.q) || (s == p.s && r.q == p.q && r.order > p.o) { continue }
        }
        priority = (r.q, s, r.order)
      }
      if let priority, priority.q > 0 { ranked.append((name, priority.q, priority.s, priority.o, i)) }
    }
    ranked.sort { a, b in
      if a.q != b.q { return a.q > b.q }
      if a.s != b.s { return a.s > b.s }
      if a.o != b.o { return a.o < b.o }
      return a.i < b.i
    }
    return ranked.first?.name
  }
}

/// XML text for a JSON value and its schema, as OpenAPI's `xml` object describes it: the root element is
/// the schema's `xml.name` (else `xml`, Prism's choice), properties are child elements named by their own
/// `xml.name` or key, `xml.attribute` properties are attributes, arrays repeat their item element (inside a
/// wrapper element named after the property when `xml.wrapped`), `xml.prefix`/`xml.namespace` are written
/// on the element. Text is escaped; names that are not XML names are replaced by `_`.
package struct XMLRenderer {
  let document: OpenAPIDocument

  package func render(_ value: JSONValue, schemaAt location: SchemaLocation?) -> String {
    let schema = resolved(location)
    let name = schema?.0["xml"]?["name"]?.stringValue ?? "xml"
    return element(name, value, schema)
  }

  func resolved(_ location: SchemaLocation?) -> (JSONObject, SchemaLocation)? {
    guard let location, let raw = document.schema(at: location) else { return nil }
    let (s, l) = document.dereference(raw, at: location)
    return s.objectValue.map { ($0, l) }
  }

  func element(_ rawName: String, _ value: JSONValue, _ schema: (JSONObject, SchemaLocation)?) -> String {
    let xml = schema?.0["xml"]
    var name = XMLRenderer.safeName(rawName)
    if let prefix = xml?["prefix"]?.stringValue, !prefix.isEmpty {
      name = XMLRenderer.safeName(prefix) + ":" + name
    }
    var attributes = ""
    if let namespace = xml?["namespace"]?.stringValue {
      let prefix = xml?["prefix"]?.stringValue.map { ":" + XMLRenderer.safeName($0) } ?? ""
      attributes += " xmlns\(prefix)=\"\(XMLRenderer.escape(namespace))\""
    }
    switch value {
    case .object(let o):
      var children = ""
      for m in o {
        let property = schema.flatMap { s, l in
          s["properties"]?[m.key] != nil ? resolved(l.appending("properties", m.key)) : nil
        }
        let propertyXML = property?.0["xml"]
        let childName = propertyXML?["name"]?.stringValue ?? m.key
        if propertyXML?["attribute"]?.boolValue == true {
          attributes +=
            " \(XMLRenderer.safeName(childName))=\"\(XMLRenderer.escape(XMLRenderer.text(m.value)))\""
          continue
        }
        if case .array(let items) = m.value {
          let itemSchema = property.flatMap { resolved($0.1.appending("items")) }
          let itemName = itemSchema?.0["xml"]?["name"]?.stringValue ?? childName
          let inner = items.map { element(itemName, $0, itemSchema) }.joined()
          if propertyXML?["wrapped"]?.boolValue == true {
            children += "<\(XMLRenderer.safeName(childName))>\(inner)</\(XMLRenderer.safeName(childName))>"
          } else {
            children += inner
          }
          continue
        }
        children += element(childName, m.value, property)
      }
      return "<\(name)\(attributes)>\(children)</\(name)>"
    case .array(let items):
      let itemSchema = schema.flatMap { resolved($0.1.appending("items")) }
      let itemName = itemSchema?.0["xml"]?["name"]?.stringValue ?? rawName
      return "<\(name)\(attributes)>" + items.map { element(itemName, $0, itemSchema) }.joined()
        + "</\(name)>"
    case .null:
      return "<\(name)\(attributes)/>"
    default:
      return "<\(name)\(attributes)>\(XMLRenderer.escape(XMLRenderer.text(value)))</\(name)>"
    }
  }

  static func text(_ value: JSONValue) -> String {
    switch value {
    case .string(let s): return s
    case .number(let n): return n.text
    case .bool(let b): return b ? "true" : "false"
    case .null: return ""
    default: return value.serialized()
    }
  }

  static func escape(_ s: String) -> String {
    var out = ""
    for c in s {
      switch c {
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "&": out += "&amp;"
      case "\"": out += "&quot;"
      default: out.append(c)
      }
    }
    return out
  }

  static func safeName(_ s: String) -> String {
    var out = ""
    for (k, c) in s.enumerated() {
      let ok = c.isLetter || c == "_" || (k > 0 && (c.isNumber || c == "-" || c == "."))
      out.append(ok ? c : "_")
    }
    return out.isEmpty ? "_" : out
  }
}
