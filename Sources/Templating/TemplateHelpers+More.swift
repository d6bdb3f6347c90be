import Foundation
import MockJSON
import XMLSupport

/// WireMock's XML, form, number-format and JSON-editing helpers.
extension TemplateHelpers {
  static let moreHelpers: [String: Helper] = {
    var t: [String: Helper] = [:]
    // MARK: XML
    t["xPath"] = { c in xPath(&c, prefix: "") }
    t["soapXPath"] = { c in xPath(&c, prefix: "/Envelope/Body") }
    t["formatXml"] = { c in
      let usage = "formatXml should take a block of XML to format or a single parameter of type String"
      let source = c.block != nil ? c.fn() : (c.params.first.map(\.rendered) ?? "")
      guard !source.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return c.error(usage) }
      let format = c.string("format") ?? "pretty"
      guard format == "pretty" || format == "compact" else {
        return c.error("formatXml: format [\(format)] should be one of [pretty, compact]")
      }
      do {
        // Pretty output ends with a line break, as WireMock's transformer writes it.
        let formatted = try XMLSupport.format(source, pretty: format == "pretty")
        return .string(format == "pretty" ? formatted + "\n" : formatted)
      } catch {
        return c.error("Input is not valid XML")
      }
    }
    // MARK: Forms
    t["formData"] = { c in
      guard let source = c.params.first?.rendered else { return c.error("formData needs the form body") }
      let decode = c.bool("urlDecode") ?? false
      var map = TemplateMap()
      var order: [String] = []
      var values: [String: [String]] = [:]
      for pair in source.split(separator: "&", omittingEmptySubsequences: true) {
        let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        var key = String(parts[0])
        var value = parts.count > 1 ? String(parts[1]) : ""
        if decode {
          key = TemplateRequest.percentDecode(key, plusAsSpace: true)
          value = TemplateRequest.percentDecode(value, plusAsSpace: true)
        }
        if values[key] == nil { order.append(key) }
        values[key, default: []].append(value)
      }
      for k in order { map.entries.append((k, .multi(values[k] ?? []))) }
      if c.params.count > 1 {
        c.state.variables[c.params[1].rendered] = .map(map)
        return .null
      }
      return .map(map)
    }
    // MARK: Numbers
    t["numberFormat"] = { c in numberFormat(c) }
    // MARK: JSON editing
    t["jsonMerge"] = { c in
      guard c.params.count + (c.block == nil ? 0 : 1) >= 2 else {
        return c.error("jsonMerge needs two JSON objects")
      }
      let first = c.params[0].rendered
      let second = c.block != nil ? c.fn() : c.params[1].rendered
      guard case .object(let a)? = try? JSONValue.parse(first) else {
        return c.error("Base JSON is not a valid JSON object")
      }
      guard case .object(let b)? = try? JSONValue.parse(second) else {
        return c.error("JSON to merge is not a valid JSON object")
      }
      var merged = JSONValue.object(merge(a, b))
      if c.bool("removeNulls") == true { merged = removeNulls(merged) }
      return .string(JacksonPrinter.pretty(merged))
    }
    t["jsonRemove"] = { c in
      guard c.params.count >= 2 else { return c.error("jsonRemove needs a JSON document and a JSONPath") }
      guard let document = try? JSONValue.parse(c.params[0].rendered) else {
        return c.error("Input JSON is not valid JSON")
      }
      guard let path = compiledPath(c.params[1].rendered) else {
        return c.error("\(c.params[1].rendered) is not a valid JSONPath expression")
      }
      guard let edited = remove(path, from: document) else {
        return c.error("The JSON document is too large for jsonRemove")
      }
      return .string(JacksonPrinter.pretty(edited))
    }
    t["jsonArrayAdd"] = { c in
      guard c.params.count + (c.block == nil ? 0 : 1) >= 2 else {
        return c.error("jsonArrayAdd needs a JSON array and an item")
      }
      guard let document = try? JSONValue.parse(c.params[0].rendered) else {
        return c.error("Target JSON is not valid JSON")
      }
      let itemText = c.block != nil ? c.fn() : c.params[1].rendered
      guard let item = try? JSONValue.parse(itemText) else { return c.error("Item JSON is not valid JSON") }
      let flatten = c.bool("flatten") ?? false
      let maxItems = c.int("maxItems")
      func add(_ array: [JSONValue]) -> [JSONValue] {
        var out = array
        if flatten, case .array(let items) = item { out += items } else { out.append(item) }
        if let maxItems, maxItems >= 0, out.count > maxItems { out.removeFirst(out.count - maxItems) }
        return out
      }
      if let expression = c.string("jsonPath") {
        guard let path = compiledPath(expression) else {
          return c.error("\(expression) is not a valid JSONPath expression")
        }
        guard
          let edited = replace(
            path, in: document,
            with: { node in
              guard case .array(let a) = node else { return node }
              return .array(add(a))
            })
        else { return c.error("The JSON document is too large for jsonArrayAdd") }
        return .string(JacksonPrinter.pretty(edited))
      }
      guard case .array(let array) = document else { return c.error("Target JSON is not a JSON array") }
      return .string(JacksonPrinter.pretty(.array(add(array))))
    }
    return t
  }()

  /// `xPath` and `soapXPath`: namespaces are ignored (unprefixed names select elements in any namespace).
  /// A selected element renders as its XML and has `name`, `text` and `attributes`; an attribute or text
  /// node renders as its text; one node is itself, several a list.
  static func xPath(_ c: inout HelperCall, prefix: String) -> TemplateValue {
    guard let input = c.params.first, !input.isNull else { return .string("") }
    guard c.params.count >= 2, !c.params[1].isNull, !c.params[1].rendered.isEmpty else {
      return c.error("The XPath expression cannot be empty")
    }
    let document = input.rendered
    var expression = c.params[1].rendered
    guard !document.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty else { return .string("") }
    if !prefix.isEmpty { expression = prefix + (expression.hasPrefix("/") ? "" : "/") + expression }
    if XMLSupport.xpathProblem(expression) != nil {
      return c.error("\(c.params[1].rendered) is not a valid XPath expression")
    }
    // The evaluation's operations count against the rendering's steps (a tenth of a step each).
    let limit = c.state.remainingSteps * RenderState.xpathOperationsPerStep
    var operations = 0
    defer { c.state.step(operations / RenderState.xpathOperationsPerStep) }
    do {
      switch try XMLSupport.evaluateNodes(
        expression, in: Array(document.utf8), namespaceAware: false, operationLimit: limit,
        operations: &operations)
      {
      case .nodes(let nodes):
        if nodes.isEmpty { return c.hash["default"] ?? .string("") }
        let values = nodes.map(xmlNodeValue)
        // WireMock's `ListOrSingle`: one node renders as itself and has its members, but is still a list of
        // one (`{{#each}}` runs once, `size` is 1).
        return values.count == 1 ? .described(values[0].rendered, .list(values)) : .list(values)
      case .boolean(let b): return .bool(b)
      case .number(let n): return n == n.rounded() && abs(n) < 9e15 ? .int(Int(n)) : .double(n)
      case .string(let s): return .string(s)
      }
    } catch {
      if operations >= limit {
        c.state.exceed("an XPath evaluation took more than the steps left (\(limit) operations)")
        return .null
      }
      return c.error("\(document) is not valid XML")
    }
  }

  /// WireMock's `XmlNode`: an element renders as XML, with `name`, `text` and `attributes` members.
  static func xmlNodeValue(_ node: XPathNode) -> TemplateValue {
    guard node.isElement else { return .string(node.markup) }
    let attributes = TemplateMap(node.attributes.map { ($0.localName, TemplateValue.string($0.value)) })
    return .described(
      node.markup,
      .map(
        TemplateMap([
          ("name", .string(node.name)), ("text", .string(node.text)), ("attributes", .map(attributes)),
        ])))
  }

  /// `numberFormat`: a number with a style (`integer`, `currency`, `percent`, `number`) or a
  /// `java.text.DecimalFormat` pattern, an optional locale, and the digit options WireMock takes.
  static func numberFormat(_ c: HelperCall) -> TemplateValue {
    guard let value = c.params.first?.number else {
      return c.error("numberFormat needs a number")
    }
    let formatter = NumberFormatter()
    let localeName = c.params.count > 2 ? c.params[2].rendered : nil
    formatter.locale = Locale(identifier: (localeName ?? "en_US").replacingOccurrences(of: "-", with: "_"))
    let style = c.params.count > 1 ? c.params[1].rendered : "number"
    switch style {
    case "integer":
      formatter.numberStyle = .decimal
      formatter.maximumFractionDigits = 0
      formatter.roundingMode = .halfEven
    case "currency": formatter.numberStyle = .currency
    case "percent": formatter.numberStyle = .percent
    case "number", "": formatter.numberStyle = .decimal
    default:
      formatter.numberStyle = .decimal
      formatter.positiveFormat = style
      formatter.roundingMode = .halfEven
    }
    if let v = c.int("maximumFractionDigits"), (0...340).contains(v) { formatter.maximumFractionDigits = v }
    if let v = c.int("minimumFractionDigits"), (0...340).contains(v) { formatter.minimumFractionDigits = v }
    if let v = c.int("maximumIntegerDigits"), (0...309).contains(v) { formatter.maximumIntegerDigits = v }
    if let v = c.int("minimumIntegerDigits"), (0...309).contains(v) { formatter.minimumIntegerDigits = v }
    if let g = c.bool("groupingUsed") { formatter.usesGroupingSeparator = g }
    if let mode = c.string("roundingMode") {
      let modes: [String: NumberFormatter.RoundingMode] = [
        "UP": .up, "DOWN": .down, "CEILING": .ceiling, "FLOOR": .floor, "HALF_UP": .halfUp,
        "HALF_DOWN": .halfDown, "HALF_EVEN": .halfEven,
      ]
      if let m = modes[mode.uppercased()] { formatter.roundingMode = m }
    }
    return .string(formatter.string(from: NSNumber(value: value)) ?? "")
  }

  /// Deep merge: members of `b` replace those of `a`, objects merged recursively.
  static func merge(_ a: JSONObject, _ b: JSONObject) -> JSONObject {
    var out = a
    for m in b.members {
      if let i = out.members.firstIndex(where: { $0.key == m.key }) {
        if case .object(let x) = out.members[i].value, case .object(let y) = m.value {
          out.members[i].value = .object(merge(x, y))
        } else {
          out.members[i].value = m.value
        }
      } else {
        out.members.append(m)
      }
    }
    return out
  }

  static func removeNulls(_ v: JSONValue) -> JSONValue {
    switch v {
    case .object(var o):
      o.members = o.members.compactMap { m in
        if case .null = m.value { return nil }
        return JSONObject.Member(key: m.key, value: removeNulls(m.value))
      }
      return .object(o)
    case .array(let a): return .array(a.map(removeNulls))
    default: return v
    }
  }

  /// A step from a node to one of its children.
  private enum Step: Hashable {
    case key(String)
    case index(Int)
  }

  /// Largest document the JSON-editing helpers work on, in nodes.
  static let maximumEditedNodes = 2_000

  /// Every location in `document` (parents before children), nil when there are too many.
  private static func locations(_ document: JSONValue) -> [[Step]]? {
    var out: [[Step]] = []
    func walk(_ v: JSONValue, _ at: [Step]) -> Bool {
      out.append(at)
      if out.count > maximumEditedNodes { return false }
      switch v {
      case .object(let o):
        for m in o.members where !walk(m.value, at + [.key(m.key)]) { return false }
      case .array(let a):
        for (k, item) in a.enumerated() where !walk(item, at + [.index(k)]) { return false }
      default: break
      }
      return true
    }
    return walk(document, []) ? out : nil
  }

  private static func get(_ v: JSONValue, _ at: ArraySlice<Step>) -> JSONValue? {
    guard let step = at.first else { return v }
    switch (step, v) {
    case (.key(let k), .object(let o)):
      return o.members.first(where: { $0.key == k }).flatMap { get($0.value, at.dropFirst()) }
    case (.index(let i), .array(let a)) where a.indices.contains(i): return get(a[i], at.dropFirst())
    default: return nil
    }
  }

  private static func set(_ v: JSONValue, _ at: ArraySlice<Step>, _ new: JSONValue?) -> JSONValue {
    guard let step = at.first else { return new ?? v }
    switch (step, v) {
    case (.key(let k), .object(var o)):
      guard let i = o.members.firstIndex(where: { $0.key == k }) else { return v }
      if at.count == 1, new == nil {
        o.members.remove(at: i)
      } else {
        o.members[i].value = set(o.members[i].value, at.dropFirst(), new)
      }
      return .object(o)
    case (.index(let i), .array(var a)) where a.indices.contains(i):
      if at.count == 1, new == nil {
        a.remove(at: i)
      } else {
        a[i] = set(a[i], at.dropFirst(), new)
      }
      return .array(a)
    default: return v
    }
  }

  /// The locations `path` selects: each location whose node, replaced by a marker, is among the selected
  /// nodes (independent of the JSONPath engine's internals).
  private static func selected(_ path: JSONPath, in document: JSONValue) -> [[Step]]? {
    guard let all = locations(document) else { return nil }
    if path.evaluate(document).isEmpty { return [] }
    let marker = JSONValue.string("\u{FFFF}jsonpath-location-marker\u{FFFF}")
    return all.filter { at in
      !at.isEmpty && path.evaluate(set(document, at[...], marker)).contains(marker)
    }
  }

  /// `document` without the nodes `path` selects; nil when the document is too large.
  static func remove(_ path: JSONPath, from document: JSONValue) -> JSONValue? {
    guard let targets = selected(path, in: document) else { return nil }
    var out = document
    // Deepest and last first, so earlier indexes stay valid.
    for at in targets.reversed() where get(out, at[...]) != nil { out = set(out, at[...], nil) }
    return out
  }

  /// `document` with each node `path` selects replaced by `transform(node)`; nil when too large.
  static func replace(_ path: JSONPath, in document: JSONValue, with transform: (JSONValue) -> JSONValue)
    -> JSONValue?
  {
    guard let targets = selected(path, in: document) else { return nil }
    var out = document
    for at in targets.reversed() {
      guard let node = get(out, at[...]) else { continue }
      out = set(out, at[...], transform(node))
    }
    if path.expression == "$" { out = transform(out) }
    return out
  }
}
