import MockJSON
import RegularExpressions
import XMLSupport

/// `equalToXml` and `matchesXPath`: their operands and modifiers.
extension StubParser {
  /// Keys that modify `equalToXml` or `matchesXPath`.
  static let xmlMatcherModifiers: Set<String> = [
    "enablePlaceholders", "placeholderOpeningDelimiterRegex", "placeholderClosingDelimiterRegex",
    "exemptedComparisons", "namespaceAwareness", "xPathNamespaces", "ignoreOrderOfSameNode",
  ]

  /// `equalToXml`: the expected document as a string, with `enablePlaceholders`,
  /// `placeholderOpeningDelimiterRegex`, `placeholderClosingDelimiterRegex`, `exemptedComparisons`,
  /// `namespaceAwareness` and `ignoreOrderOfSameNode`.
  static func parseEqualToXml(_ m: MatcherOperand, _ d: inout Diagnostics) -> StringValuePattern? {
    checkXMLModifiers(m, allowed: xmlMatcherModifiers.subtracting(["xPathNamespaces"]), &d)
    guard let text = m.string(&d) else { return nil }
    let root: XMLElementNode
    do {
      root = try XMLSupport.parse(text)
    } catch {
      d.error(
        m.operandPath, expected: "an XML document", found: "\(JSONValue.quoted(text)) (\(error.message))")
      return nil
    }
    var settings = XMLValuePattern.EqualToXml(
      expected: text, root: root, enablePlaceholders: false, openingDelimiter: nil, closingDelimiter: nil,
      exemptedComparisons: [], namespaceAwareness: nil, placeholder: nil)
    for key in ["enablePlaceholders", "ignoreOrderOfSameNode"] {
      guard let v = m.object[key] else { continue }
      guard let b = v.boolValue else {
        d.error(JSONPathText.child(m.path, key), expected: "true or false", found: v)
        return nil
      }
      if key == "enablePlaceholders" {
        settings.enablePlaceholders = b
      } else {
        settings.ignoreOrderOfSameNode = b
      }
    }
    for key in ["placeholderOpeningDelimiterRegex", "placeholderClosingDelimiterRegex"] {
      guard let v = m.object[key] else { continue }
      let p = JSONPathText.child(m.path, key)
      guard let s = v.stringValue, (try? CompiledRegex(s)) != nil else {
        d.error(p, expected: "a regular expression", found: v)
        return nil
      }
      if key == "placeholderOpeningDelimiterRegex" {
        settings.openingDelimiter = s
      } else {
        settings.closingDelimiter = s
      }
    }
    if settings.enablePlaceholders {
      let open = settings.openingDelimiter ?? "\\$\\{"
      let close = settings.closingDelimiter ?? "\\}"
      do {
        settings.placeholder = try CompiledRegex(
          "^\\s*(?:\(open))\\s*xmlunit\\.([A-Za-z]+)(?:\\((.*)\\))?\\s*(?:\(close))\\s*$")
      } catch {
        d.error(
          JSONPathText.child(m.path, "placeholderOpeningDelimiterRegex"),
          expected: "delimiters that form a valid regular expression", found: error.message)
        return nil
      }
    }
    if let v = m.object["exemptedComparisons"] {
      let p = JSONPathText.child(m.path, "exemptedComparisons")
      guard let list = v.arrayValue else {
        d.error(p, expected: "an array of XMLUnit comparison type names such as \"NAMESPACE_URI\"", found: v)
        return nil
      }
      for (k, item) in list.enumerated() {
        guard let name = item.stringValue, XMLValuePattern.comparisonTypes.contains(name) else {
          d.error(
            JSONPathText.index(p, k),
            expected:
              "an XMLUnit comparison type (\(XMLValuePattern.comparisonTypes.sorted().joined(separator: ", ")))",
            found: item)
          return nil
        }
        settings.exemptedComparisons.insert(name)
      }
    }
    if let v = m.object["namespaceAwareness"] {
      guard let s = v.stringValue, let n = XMLValuePattern.NamespaceAwareness(rawValue: s) else {
        d.error(
          JSONPathText.child(m.path, "namespaceAwareness"), expected: "STRICT, LEGACY or NONE", found: v)
        return nil
      }
      settings.namespaceAwareness = n
    }
    return .xml(XMLValuePattern(.equalToXml(settings)))
  }

  /// `matchesXPath`: an expression, or `{"expression": …, <matcher>}`; `xPathNamespaces` next to it.
  static func parseMatchesXPath(_ m: MatcherOperand, _ d: inout Diagnostics) -> StringValuePattern? {
    checkXMLModifiers(m, allowed: ["xPathNamespaces"], &d)
    var namespaces: [String: String] = [:]
    if let v = m.object["xPathNamespaces"] {
      let p = JSONPathText.child(m.path, "xPathNamespaces")
      guard let o = v.objectValue else {
        d.error(p, expected: "an object of prefix → namespace URI", found: v)
        return nil
      }
      for member in o {
        guard let uri = member.value.stringValue else {
          d.error(JSONPathText.child(p, member.key), expected: "a namespace URI string", found: member.value)
          return nil
        }
        namespaces[member.key] = uri
      }
    }
    let p = m.operandPath
    var expression: String
    var sub: StringValuePattern?
    if let s = m.value.stringValue {
      expression = s
    } else if case .object(var o) = m.value, let e = o["expression"] {
      guard let es = e.stringValue else {
        d.error(JSONPathText.child(p, "expression"), expected: "an XPath string", found: e)
        return nil
      }
      expression = es
      o.members.removeAll { $0.key == "expression" }
      if !o.members.isEmpty {
        guard let parsed = parseMatcher(.object(o), p, &d) else { return nil }
        sub = parsed
      }
    } else {
      d.error(p, expected: "an XPath string or {\"expression\": \"/a/b\", \"equalTo\": …}", found: m.value)
      return nil
    }
    if let problem = XMLSupport.xpathProblem(expression) {
      d.error(
        sub == nil ? p : JSONPathText.child(p, "expression"), expected: "an XPath 1.0 expression",
        found: "\(JSONValue.quoted(expression)) (\(problem))")
      return nil
    }
    return .xml(
      XMLValuePattern(.matchesXPath(.init(expression: expression, namespaces: namespaces, valuePattern: sub)))
    )
  }

  /// XML modifiers next to an operator that does not take them.
  private static func checkXMLModifiers(_ m: MatcherOperand, allowed: Set<String>, _ d: inout Diagnostics) {
    for key in m.object.keys where xmlMatcherModifiers.contains(key) && !allowed.contains(key) {
      d.error(
        JSONPathText.child(m.path, key),
        expected: "\(key) only with \(key == "xPathNamespaces" ? "matchesXPath" : "equalToXml")",
        found: "it with \(m.op)")
    }
  }
}
