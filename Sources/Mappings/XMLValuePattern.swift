import Foundation
import MockJSON
import RegularExpressions
import XMLSupport

/// WireMock's XML matchers, `equalToXml` and `matchesXPath`, through libxml2 (``XMLSupport``).
public struct XMLValuePattern: Sendable, Hashable, CustomStringConvertible {
  /// How `equalToXml` treats namespaces (WireMock 3's `namespaceAwareness`).
  public enum NamespaceAwareness: String, Sendable, Hashable, CaseIterable {
    /// Namespace URIs compared, prefixes not; `xmlns` declarations are not attributes.
    case strict = "STRICT"
    /// WireMock's default: as STRICT for the comparison (prefixes never matter, URIs do).
    case legacy = "LEGACY"
    /// Not namespace aware: prefixed names compared as written, `xmlns` declarations compared as
    /// attributes.
    case none = "NONE"
  }

  /// `equalToXml`'s settings.
  public struct EqualToXml: Sendable, Hashable {
    /// The expected document as written in the stub.
    public var expected: String
    /// Its parsed root element.
    package var root: XMLElementNode
    /// `enablePlaceholders`.
    public var enablePlaceholders: Bool
    /// `placeholderOpeningDelimiterRegex` (default `\$\{`).
    public var openingDelimiter: String?
    /// `placeholderClosingDelimiterRegex` (default `\}`).
    public var closingDelimiter: String?
    /// `exemptedComparisons`: XMLUnit comparison type names whose differences do not count.
    public var exemptedComparisons: Set<String>
    /// `namespaceAwareness`.
    public var namespaceAwareness: NamespaceAwareness?
    /// `ignoreOrderOfSameNode`: sibling elements of the same name may come in any order (by default they
    /// pair in order, as WireMock's `OrderInvariantNodeMatcher` sorts siblings by name only).
    public var ignoreOrderOfSameNode = false
    /// The placeholder recogniser, when placeholders are enabled.
    package var placeholder: CompiledRegex?
  }

  /// `matchesXPath`'s settings.
  public struct MatchesXPath: Sendable, Hashable {
    /// The XPath 1.0 expression.
    public var expression: String
    /// `xPathNamespaces`: prefix → URI.
    public var namespaces: [String: String]
    /// The sub-matcher applied to each selected node's value.
    public var valuePattern: StringValuePattern?
  }

  /// Which matcher.
  public enum Kind: Sendable, Hashable {
    case equalToXml(EqualToXml)
    case matchesXPath(MatchesXPath)
  }

  /// The matcher.
  public var kind: Kind

  /// Creates a pattern.
  public init(_ kind: Kind) { self.kind = kind }

  /// XMLUnit comparison types whose differences count for `equalToXml` (WireMock's list); the rest
  /// (prefixes, child order, comments, XML declaration…) never do.
  package static let countedComparisons: Set<String> = [
    "ELEMENT_TAG_NAME", "SCHEMA_LOCATION", "NO_NAMESPACE_SCHEMA_LOCATION", "NODE_TYPE", "NAMESPACE_URI",
    "TEXT_VALUE", "PROCESSING_INSTRUCTION_TARGET", "PROCESSING_INSTRUCTION_DATA", "ELEMENT_NUM_ATTRIBUTES",
    "ATTR_VALUE", "CHILD_NODELIST_LENGTH", "CHILD_LOOKUP", "ATTR_NAME_LOOKUP",
  ]
  /// Every XMLUnit `ComparisonType` name (accepted in `exemptedComparisons`).
  package static let comparisonTypes: Set<String> = countedComparisons.union([
    "ATTR_VALUE_EXPLICITLY_SPECIFIED", "HAS_DOCTYPE_DECLARATION", "DOCTYPE_NAME", "DOCTYPE_PUBLIC_ID",
    "DOCTYPE_SYSTEM_ID", "XML_VERSION", "XML_STANDALONE", "XML_ENCODING", "NAMESPACE_PREFIX",
    "CHILD_NODELIST_SEQUENCE",
  ])

  /// True when `value` (the body as text, nil when absent) matches.
  public func match(_ value: String?) -> Bool {
    guard let value else { return false }
    switch kind {
    case .equalToXml(let e):
      guard let actual = try? XMLSupport.parse(value) else { return false }
      return XMLComparison(settings: e).similar(e.root, actual)
    case .matchesXPath(let x):
      let aware = !x.namespaces.isEmpty
      guard
        let result = try? XMLSupport.evaluate(
          x.expression, in: Array(value.utf8), namespaces: x.namespaces, namespaceAware: aware)
      else { return false }
      switch result {
      case .nodes(let values):
        guard let sub = x.valuePattern else { return !values.isEmpty }
        if values.isEmpty { return sub.match(nil) }
        return values.contains { sub.match($0) }
      case .boolean(let b):
        guard let sub = x.valuePattern else { return b }
        return sub.match(b ? "true" : "false")
      case .number(let n):
        let text = n.isFinite && n == n.rounded() && abs(n) < 1e15 ? String(Int64(n)) : String(n)
        return x.valuePattern?.match(text) ?? true
      case .string(let s):
        guard let sub = x.valuePattern else { return !s.isEmpty }
        return sub.match(s)
      }
    }
  }

  /// WireMock JSON form.
  public var json: JSONValue {
    switch kind {
    case .equalToXml(let e):
      var pairs: [(String, JSONValue)] = [("equalToXml", .string(e.expected))]
      if e.enablePlaceholders { pairs.append(("enablePlaceholders", .bool(true))) }
      if let o = e.openingDelimiter { pairs.append(("placeholderOpeningDelimiterRegex", .string(o))) }
      if let c = e.closingDelimiter { pairs.append(("placeholderClosingDelimiterRegex", .string(c))) }
      if !e.exemptedComparisons.isEmpty {
        pairs.append(("exemptedComparisons", .array(e.exemptedComparisons.sorted().map { .string($0) })))
      }
      if let n = e.namespaceAwareness { pairs.append(("namespaceAwareness", .string(n.rawValue))) }
      if e.ignoreOrderOfSameNode { pairs.append(("ignoreOrderOfSameNode", .bool(true))) }
      return .object(JSONObject(pairs: pairs))
    case .matchesXPath(let x):
      var pairs: [(String, JSONValue)] = []
      if let sub = x.valuePattern, case .object(var o) = sub.json {
        o.members.insert(JSONObject.Member(key: "expression", value: .string(x.expression)), at: 0)
        pairs.append(("matchesXPath", .object(o)))
      } else {
        pairs.append(("matchesXPath", .string(x.expression)))
      }
      if !x.namespaces.isEmpty {
        pairs.append(
          (
            "xPathNamespaces",
            .object(
              JSONObject(pairs: x.namespaces.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) }))
          ))
      }
      return .object(JSONObject(pairs: pairs))
    }
  }

  /// Compact JSON form.
  public var description: String { json.serialized() }
}

/// `equalToXml`'s comparison: XMLUnit's "similar" as WireMock configures it (whitespace-only text and
/// comments ignored, text trimmed, prefixes irrelevant; child elements paired by name whatever the order
/// of differently named siblings, siblings of one name in their order unless `ignoreOrderOfSameNode`), with
/// placeholders and exempted comparison types.
struct XMLComparison {
  let settings: XMLValuePattern.EqualToXml

  private func counts(_ type: String) -> Bool { !settings.exemptedComparisons.contains(type) }

  private var awareness: XMLValuePattern.NamespaceAwareness { settings.namespaceAwareness ?? .legacy }

  /// True when `actual` is similar to `expected`.
  func similar(_ expected: XMLElementNode, _ actual: XMLElementNode) -> Bool {
    guard sameName(expected, actual) else { return false }
    guard attributesSimilar(expected, actual) else { return false }
    return childrenSimilar(expected, actual)
  }

  private func sameName(_ e: XMLElementNode, _ a: XMLElementNode) -> Bool {
    switch awareness {
    case .none:
      return !counts("ELEMENT_TAG_NAME") || e.qualifiedName == a.qualifiedName
    case .strict, .legacy:
      if counts("ELEMENT_TAG_NAME") && e.localName != a.localName { return false }
      if counts("NAMESPACE_URI") && e.namespaceURI != a.namespaceURI { return false }
      return true
    }
  }

  private struct Attribute {
    var key: String
    var namespaceURI: String?
    var value: String
  }

  private func attributes(_ element: XMLElementNode) -> [Attribute] {
    let schemaInstance = "http://www.w3.org/2001/XMLSchema-instance"
    var list: [Attribute] = []
    for a in element.attributes {
      if a.namespaceURI == schemaInstance && a.localName == "schemaLocation" && !counts("SCHEMA_LOCATION") {
        continue
      }
      if a.namespaceURI == schemaInstance && a.localName == "noNamespaceSchemaLocation"
        && !counts("NO_NAMESPACE_SCHEMA_LOCATION")
      {
        continue
      }
      switch awareness {
      case .none:
        let name = a.prefix.map { "\($0):\(a.localName)" } ?? a.localName
        list.append(Attribute(key: name, namespaceURI: nil, value: a.value))
      case .strict, .legacy:
        list.append(Attribute(key: a.localName, namespaceURI: a.namespaceURI, value: a.value))
      }
    }
    if awareness == .none {
      for d in element.namespaceDeclarations {
        list.append(
          Attribute(key: d.prefix.map { "xmlns:\($0)" } ?? "xmlns", namespaceURI: nil, value: d.uri))
      }
    }
    return list
  }

  private func attributesSimilar(_ e: XMLElementNode, _ a: XMLElementNode) -> Bool {
    let expected = attributes(e)
    let actual = attributes(a)
    if counts("ELEMENT_NUM_ATTRIBUTES") && expected.count != actual.count { return false }
    for x in expected {
      guard let y = actual.first(where: { $0.key == x.key && $0.namespaceURI == x.namespaceURI }) else {
        if counts("ATTR_NAME_LOOKUP") { return false }
        continue
      }
      if counts("ATTR_VALUE") && !valueSimilar(x.value, y.value) { return false }
    }
    return true
  }

  /// Text children, trimmed, whitespace-only ones dropped.
  private func texts(_ element: XMLElementNode) -> [String] {
    element.children.compactMap {
      guard case .text(let t) = $0 else { return nil }
      let trimmed = t.trimmingCharacters(in: .whitespacesAndNewlines)
      return trimmed.isEmpty ? nil : trimmed
    }
  }

  private func elements(_ element: XMLElementNode) -> [XMLElementNode] {
    element.children.compactMap {
      guard case .element(let c) = $0 else { return nil }
      return c
    }
  }

  private func childrenSimilar(_ e: XMLElementNode, _ a: XMLElementNode) -> Bool {
    let et = texts(e)
    let at = texts(a)
    if et.count == 1, at.isEmpty, isIgnorePlaceholder(et[0]) {
      // `${xmlunit.ignore}` also stands for an empty element.
    } else {
      if counts("CHILD_NODELIST_LENGTH") && et.count != at.count { return false }
      for (x, y) in zip(et, at) where counts("TEXT_VALUE") && !valueSimilar(x, y) { return false }
      if et.count > at.count && counts("CHILD_LOOKUP") { return false }
    }
    let ee = elements(e)
    let ae = elements(a)
    if counts("CHILD_NODELIST_LENGTH") && ee.count != ae.count { return false }
    var used = [Bool](repeating: false, count: ae.count)
    for x in ee {
      // WireMock's OrderInvariantNodeMatcher sorts both child lists by local name (stably) and pairs
      // each expected child with the first unused actual one of its name: siblings of one name pair in
      // their order, and the pair must then be similar. With `ignoreOrderOfSameNode` any unused similar
      // sibling will do.
      if settings.ignoreOrderOfSameNode {
        if let j = ae.indices.first(where: { !used[$0] && similar(x, ae[$0]) }) {
          used[j] = true
        } else if counts("CHILD_LOOKUP") {
          return false
        }
      } else if let j = ae.indices.first(where: { !used[$0] && sameName(x, ae[$0]) }) {
        used[j] = true
        if !similar(x, ae[j]) { return false }
      } else if counts("CHILD_LOOKUP") {
        return false
      }
    }
    if counts("CHILD_LOOKUP") && used.contains(false) { return false }
    return true
  }

  private func placeholderParts(_ text: String) -> (String, String?)? {
    guard let re = settings.placeholder, let groups = re.firstMatch(in: text), groups.count >= 2,
      let keyword = groups[1]
    else { return nil }
    return (keyword, groups.count > 2 ? groups[2] : nil)
  }

  private func isIgnorePlaceholder(_ text: String) -> Bool { placeholderParts(text)?.0 == "ignore" }

  /// Text or attribute value comparison, with XMLUnit placeholders in the expected value.
  private func valueSimilar(_ expected: String, _ actual: String) -> Bool {
    guard let (keyword, argument) = placeholderParts(expected) else { return expected == actual }
    switch keyword {
    case "ignore": return true
    case "isNumber": return Double(actual) != nil && !actual.isEmpty
    case "matchesRegex":
      guard let argument, let re = try? CompiledRegex(argument) else { return false }
      return re.matches(actual)
    case "isDateTime": return XMLComparison.isDateTime(actual)
    default: return expected == actual
    }
  }

  /// ISO 8601 dates and date-times (XMLUnit's `isDateTime` without a format).
  static func isDateTime(_ s: String) -> Bool {
    let formats = [
      "yyyy-MM-dd'T'HH:mm:ssXXXXX", "yyyy-MM-dd'T'HH:mm:ss.SSSXXXXX", "yyyy-MM-dd'T'HH:mm:ss",
      "yyyy-MM-dd'T'HH:mm:ss.SSS", "yyyy-MM-dd", "dd/MM/yyyy", "yyyy-MM-dd HH:mm:ss",
    ]
    for f in formats {
      let formatter = DateFormatter()
      formatter.locale = Locale(identifier: "en_US_POSIX")
      formatter.timeZone = TimeZone(identifier: "UTC")
      formatter.dateFormat = f
      if formatter.date(from: s) != nil { return true }
    }
    return false
  }
}
