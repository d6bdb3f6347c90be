import CLibXML2
import Synchronization

/// Why a text could not be used as XML or an expression as XPath.
package struct XMLError: Error, Sendable, Hashable, CustomStringConvertible {
  /// libxml2's message (first line), or ours for the input bound.
  package var message: String
  package var description: String { message }
}

/// An attribute of an ``XMLElementNode``.
package struct XMLAttributeNode: Sendable, Hashable {
  /// Prefix as written (`xsi` of `xsi:type`), nil without one.
  package var prefix: String?
  /// Namespace URI of a prefixed attribute (unprefixed attributes have none, as in XML Namespaces).
  package var namespaceURI: String?
  /// Local name.
  package var localName: String
  /// Value, entities replaced.
  package var value: String
}

/// A namespace declaration (`xmlns` or `xmlns:p`) of an element.
package struct XMLNamespaceDeclaration: Sendable, Hashable {
  /// The declared prefix, nil for the default namespace.
  package var prefix: String?
  /// The namespace URI.
  package var uri: String
}

/// A child of an element: an element or a text (text and CDATA sections, adjacent ones joined).
package indirect enum XMLChildNode: Sendable, Hashable {
  case element(XMLElementNode)
  case text(String)
}

/// An element of a parsed document, comments and processing instructions left out.
package struct XMLElementNode: Sendable, Hashable {
  /// Prefix as written, nil without one.
  package var prefix: String?
  /// Namespace URI (declared, or nil).
  package var namespaceURI: String?
  /// Local name.
  package var localName: String
  /// Attributes in document order (namespace declarations not among them).
  package var attributes: [XMLAttributeNode]
  /// `xmlns` declarations on this element.
  package var namespaceDeclarations: [XMLNamespaceDeclaration]
  /// Children in document order.
  package var children: [XMLChildNode]

  /// `prefix:local` or `local`.
  package var qualifiedName: String { prefix.map { "\($0):\(localName)" } ?? localName }
}

/// The result of an XPath 1.0 expression, with the nodes of a node-set as `Node`.
package enum XPathResult<Node: Sendable & Hashable>: Sendable, Hashable {
  /// A node-set, in document order.
  case nodes([Node])
  case boolean(Bool)
  case number(Double)
  case string(String)
}

/// The result of an XPath 1.0 expression for matching: each node's value (an attribute's or text's value;
/// an element's text, or its XML when it has child elements).
package typealias XPathValue = XPathResult<String>

/// A node selected by an XPath expression, as WireMock's templating `xPath` helper exposes it.
package struct XPathNode: Sendable, Hashable {
  /// True for an element node.
  package var isElement: Bool
  /// The local name of an element or attribute ("" for text).
  package var name: String
  /// The text content.
  package var text: String
  /// An element's attributes, in order (namespaces as parsed).
  package var attributes: [XMLAttributeNode]
  /// An element serialized as XML (no declaration); any other node's text.
  package var markup: String
}

/// libxml2 wrapped once: parsing without network access, external entities or DTD loading (XXE safe),
/// bounded input, and XPath 1.0.
package enum XMLSupport {
  /// Largest document parsed, in bytes.
  package static let maximumInputBytes = 8 << 20

  /// Most text the internal entity references of one document may expand to, in bytes
  /// (`--max-xml-expansion-bytes`, default 1 MiB). A document beyond it is refused before any XPath
  /// runs: libxml2 keeps references unexpanded while parsing (no `XML_PARSE_NOENT`) and expands them
  /// without a bound when XPath takes a node's string value (`contains(., 'x')`), so a 107 KB body of
  /// nested entities made 1 GB of text and blocked the loop for seconds.
  package static let maximumExpansionBytes = Atomic<Int>(defaultMaximumExpansionBytes)
  /// The most operations one XPath evaluation takes (libxml2 counts one per step of the expression and
  /// per node it visits): 10,000,000. Past it the evaluation fails ("Operation limit exceeded"), so an
  /// expression such as `//*[count(//*) > 0]` on a large document cannot keep a thread busy without bound.
  /// (Enforced with libxml2 2.9.11 and later.)
  package static let maximumXPathOperations = 10_000_000

  /// ``maximumExpansionBytes``'s default: 1 MiB.
  package static let defaultMaximumExpansionBytes = 1 << 20

  /// libxml2 loaded (on first use: see CLibXML2) and set up, or why it could not be loaded.
  private static let setUp: Result<Void, XMLError> = {
    if let problem = clibxml2_load() { return .failure(XMLError(message: String(cString: problem))) }
    xmlInitParser()
    // No external entity or DTD is ever fetched, from the network or from files.
    xmlSetExternalEntityLoader { _, _, _ in nil }
    return .success(())
  }()

  /// Why libxml2 cannot be used (it could not be loaded), or nil when it can.
  package static var unavailableReason: String? {
    if case .failure(let error) = setUp { return error.message }
    return nil
  }

  private static let options = Int32(
    XML_PARSE_NONET.rawValue | XML_PARSE_NOERROR.rawValue | XML_PARSE_NOWARNING.rawValue
      | XML_PARSE_NOCDATA.rawValue)

  /// Parses `bytes` and hands the document to `body`; the document is freed afterwards.
  private static func withDocument<T>(
    _ bytes: [UInt8], dropBlanks: Bool = false, _ body: (xmlDocPtr) -> T
  ) throws(XMLError) -> T {
    try setUp.get()
    guard bytes.count <= maximumInputBytes else {
      throw XMLError(message: "document larger than \(maximumInputBytes) bytes")
    }
    guard !bytes.isEmpty else { throw XMLError(message: "empty document") }
    xmlResetLastError()
    let doc: xmlDocPtr? = bytes.withUnsafeBufferPointer { buffer in
      buffer.baseAddress.flatMap { base in
        base.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
          xmlReadMemory(
            $0, Int32(buffer.count), nil, nil, options | (dropBlanks ? Int32(XML_PARSE_NOBLANKS.rawValue) : 0)
          )
        }
      }
    }
    guard let doc else { throw XMLError(message: lastErrorMessage() ?? "not well-formed XML") }
    defer { xmlFreeDoc(doc) }
    // Entities are declared in a DOCTYPE only (external ones are never loaded): a document without the
    // declaration keyword needs no count.
    if declaresEntities(bytes) {
      let limit = maximumExpansionBytes.load(ordering: .relaxed)
      if let root = xmlDocGetRootElement(doc), entityExpansionBytes(root, limit: limit) > limit {
        throw XMLError(
          message: "entity references expand to more than \(limit) bytes (--max-xml-expansion-bytes)")
      }
    }
    return body(doc)
  }

  private static func lastErrorMessage() -> String? {
    guard let e = xmlGetLastError(), let m = e.pointee.message else { return nil }
    let text = String(cString: m).split(separator: "\n").first.map(String.init) ?? ""
    return "line \(e.pointee.line): \(text)"
  }

  /// Parses `bytes` as an XML document.
  /// - Returns: its root element.
  /// - Throws: ``XMLError`` when it is not well-formed, has no root element or is larger than
  ///   ``maximumInputBytes``.
  package static func parse(_ bytes: [UInt8]) throws(XMLError) -> XMLElementNode {
    let root: XMLElementNode? = try withDocument(bytes) { doc in
      xmlDocGetRootElement(doc).map { element($0) }
    }
    guard let root else { throw XMLError(message: "no root element") }
    return root
  }

  /// Parses `text` as an XML document (see ``parse(_:)-([UInt8])``).
  package static func parse(_ text: String) throws(XMLError) -> XMLElementNode {
    try parse(Array(text.utf8))
  }

  /// The document re-serialized without whitespace between elements: indented by two spaces per level
  /// (`pretty`) or on one line. The XML declaration is left out.
  /// - Throws: ``XMLError`` when it is not well-formed.
  package static func format(_ text: String, pretty: Bool) throws(XMLError) -> String {
    let out: String? = try withDocument(Array(text.utf8), dropBlanks: true) { doc in
      guard let root = xmlDocGetRootElement(doc), let buffer = xmlBufferCreate() else { return nil }
      defer { xmlBufferFree(buffer) }
      _ = xmlNodeDump(buffer, doc, root, 0, pretty ? 1 : 0)
      return string(xmlBufferContent(buffer))
    }
    guard let out else { throw XMLError(message: "no root element") }
    return out
  }

  private static func string(_ p: UnsafePointer<xmlChar>?) -> String? {
    p.map { String(cString: $0) }
  }

  private static func attributes(of node: xmlNodePtr) -> [XMLAttributeNode] {
    var attributes: [XMLAttributeNode] = []
    var a = node.pointee.properties
    while let attr = a {
      var value = ""
      var t = attr.pointee.children
      while let tn = t {
        if let c = tn.pointee.content { value += String(cString: c) }
        t = tn.pointee.next
      }
      attributes.append(
        XMLAttributeNode(
          prefix: string(attr.pointee.ns?.pointee.prefix),
          namespaceURI: string(attr.pointee.ns?.pointee.href),
          localName: string(attr.pointee.name) ?? "", value: value))
      a = attr.pointee.next
    }
    return attributes
  }

  private static func element(_ node: xmlNodePtr) -> XMLElementNode {
    let n = node.pointee
    let attributes = self.attributes(of: node)
    var declarations: [XMLNamespaceDeclaration] = []
    var ns = n.nsDef
    while let d = ns {
      declarations.append(
        XMLNamespaceDeclaration(prefix: string(d.pointee.prefix), uri: string(d.pointee.href) ?? ""))
      ns = d.pointee.next
    }
    var children: [XMLChildNode] = []
    var c = n.children
    while let child = c {
      switch child.pointee.type {
      case XML_ELEMENT_NODE: children.append(.element(element(child)))
      case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
        let text = string(child.pointee.content) ?? ""
        if case .text(let previous) = children.last {
          children[children.count - 1] = .text(previous + text)
        } else {
          children.append(.text(text))
        }
      default: break
      }
      c = child.pointee.next
    }
    return XMLElementNode(
      prefix: string(n.ns?.pointee.prefix), namespaceURI: string(n.ns?.pointee.href),
      localName: string(n.name) ?? "", attributes: attributes, namespaceDeclarations: declarations,
      children: children)
  }

  /// Checks that `expression` compiles as XPath 1.0.
  /// - Returns: nil when it does, otherwise libxml2's reason.
  package static func xpathProblem(_ expression: String) -> String? {
    if let unavailableReason { return unavailableReason }
    guard let ctx = xmlXPathNewContext(nil) else { return "out of memory" }
    defer { xmlXPathFreeContext(ctx) }
    ctx.pointee.error = { _, _ in }
    xmlResetLastError()
    guard let compiled = xmlXPathCtxtCompile(ctx, expression) else {
      return lastErrorMessage().map { $0.replacingFirstLinePrefix() } ?? "not an XPath 1.0 expression"
    }
    xmlXPathFreeCompExpr(compiled)
    return nil
  }

  /// Evaluates an XPath 1.0 expression on a document.
  /// - Parameters:
  ///   - expression: the expression (checked with ``xpathProblem(_:)`` beforehand).
  ///   - bytes: the document.
  ///   - namespaces: prefix → URI bindings the expression uses.
  ///   - namespaceAware: when false, every element and attribute loses its namespace first, so
  ///     unprefixed names select them whatever namespace they are in (WireMock's templating helpers).
  ///   - context: an optional location path prefix evaluated first (`/Envelope/Body` for `soapXPath`).
  /// - Throws: ``XMLError`` when the document is not XML or the expression fails at run time.
  package static func evaluate(
    _ expression: String, in bytes: [UInt8], namespaces: [String: String] = [:], namespaceAware: Bool = true
  ) throws(XMLError) -> XPathValue {
    try run(
      expression, in: bytes, namespaces: namespaces, namespaceAware: namespaceAware,
      restoresNamespaces: false,
      node: value(of:_:))
  }

  /// ``evaluate(_:in:namespaces:namespaceAware:)`` with each selected node's name, text, attributes and
  /// markup (templating's `xPath`), elements serialized with the namespaces they were written with.
  /// - Parameters:
  ///   - operationLimit: the most operations the evaluation may take (at most
  ///     ``maximumXPathOperations``).
  ///   - operations: set to the operations the evaluation took (0 where libxml2 does not count them).
  package static func evaluateNodes(
    _ expression: String, in bytes: [UInt8], namespaceAware: Bool = true,
    operationLimit: Int = maximumXPathOperations, operations: inout Int
  ) throws(XMLError) -> XPathResult<XPathNode> {
    try run(
      expression, in: bytes, namespaces: [:], namespaceAware: namespaceAware, restoresNamespaces: true,
      operationLimit: operationLimit, operations: &operations, node: details(of:_:))
  }

  private static func run<Node: Sendable & Hashable>(
    _ expression: String, in bytes: [UInt8], namespaces: [String: String], namespaceAware: Bool,
    restoresNamespaces: Bool, node makeNode: (xmlNodePtr, xmlDocPtr) -> Node
  ) throws(XMLError) -> XPathResult<Node> {
    var operations = 0
    return try run(
      expression, in: bytes, namespaces: namespaces, namespaceAware: namespaceAware,
      restoresNamespaces: restoresNamespaces, operationLimit: maximumXPathOperations, operations: &operations,
      node: makeNode)
  }

  private static func run<Node: Sendable & Hashable>(
    _ expression: String, in bytes: [UInt8], namespaces: [String: String], namespaceAware: Bool,
    restoresNamespaces: Bool, operationLimit: Int, operations: inout Int,
    node makeNode: (xmlNodePtr, xmlDocPtr) -> Node
  ) throws(XMLError) -> XPathResult<Node> {
    let limit = UInt(max(1, min(operationLimit, maximumXPathOperations)))
    var used = 0
    defer { operations = used }
    let result: Result<XPathResult<Node>, XMLError> = try withDocument(bytes) { doc in
      var stripped = StrippedNamespaces()
      if !namespaceAware, let root = xmlDocGetRootElement(doc) { stripNamespaces(root, into: &stripped) }
      guard let ctx = xmlXPathNewContext(doc) else { return .failure(XMLError(message: "out of memory")) }
      defer { xmlXPathFreeContext(ctx) }
      ctx.pointee.error = { _, _ in }
      let counts = clibxml2_has_operation_limit() != 0
      if counts { ctx.pointee.opLimit = limit }
      for (prefix, uri) in namespaces.sorted(by: { $0.key < $1.key }) {
        _ = xmlXPathRegisterNs(ctx, prefix, uri)
      }
      xmlResetLastError()
      let evaluated = xmlXPathEvalExpression(expression, ctx)
      if counts { used = Int(ctx.pointee.opCount) }
      guard let object = evaluated else {
        if counts, ctx.pointee.opCount >= limit {
          return .failure(
            XMLError(message: "XPath evaluation passed its limit of \(limit) operations"))
        }
        return .failure(XMLError(message: lastErrorMessage() ?? "XPath evaluation failed"))
      }
      defer { xmlXPathFreeObject(object) }
      let o = object.pointee
      switch o.type {
      case XPATH_BOOLEAN: return .success(.boolean(o.boolval != 0))
      case XPATH_NUMBER: return .success(.number(o.floatval))
      case XPATH_STRING: return .success(.string(string(o.stringval) ?? ""))
      case XPATH_NODESET:
        // Nodes are described with the namespaces they were parsed with.
        if restoresNamespaces { stripped.restore() }
        var values: [Node] = []
        if let set = o.nodesetval, let tab = set.pointee.nodeTab {
          for k in 0..<Int(max(0, set.pointee.nodeNr)) {
            if let node = tab[k] { values.append(makeNode(node, doc)) }
          }
        }
        return .success(.nodes(values))
      default: return .failure(XMLError(message: "unsupported XPath result"))
      }
    }
    return try result.get()
  }

  /// Namespaces taken off elements and attributes, to put back once the expression is evaluated.
  private struct StrippedNamespaces {
    var elements: [(xmlNodePtr, xmlNsPtr)] = []
    var attributes: [(xmlAttrPtr, xmlNsPtr)] = []

    func restore() {
      for (node, ns) in elements { node.pointee.ns = ns }
      for (attr, ns) in attributes { attr.pointee.ns = ns }
    }
  }

  private static func stripNamespaces(_ node: xmlNodePtr, into stripped: inout StrippedNamespaces) {
    var c: xmlNodePtr? = node
    while let n = c {
      if n.pointee.type == XML_ELEMENT_NODE {
        if let ns = n.pointee.ns { stripped.elements.append((n, ns)) }
        n.pointee.ns = nil
        var a = n.pointee.properties
        while let attr = a {
          if let ns = attr.pointee.ns { stripped.attributes.append((attr, ns)) }
          attr.pointee.ns = nil
          a = attr.pointee.next
        }
        if let first = n.pointee.children { stripNamespaces(first, into: &stripped) }
      }
      c = n.pointee.next
    }
  }

  /// Whether `bytes` contain `<!ENTITY`.
  private static func declaresEntities(_ bytes: [UInt8]) -> Bool {
    let keyword = Array("<!ENTITY".utf8)
    guard bytes.count >= keyword.count else { return false }
    return bytes.withUnsafeBufferPointer { b in
      var i = 0
      let last = b.count - keyword.count
      while i <= last {
        if b[i] == 0x3C, b[i + 1] == 0x21, b[i + 2] == 0x45 {
          var k = 3
          while k < keyword.count, b[i + k] == keyword[k] { k += 1 }
          if k == keyword.count { return true }
        }
        i += 1
      }
      return false
    }
  }

  /// The bytes of text the entity references under `root` (its attributes included) add when expanded,
  /// counted once per entity (memoised) and per reference, stopping past `limit`: one walk of the tree,
  /// never the expansion itself. An entity that refers to itself counts as over the limit.
  private static func entityExpansionBytes(_ root: xmlNodePtr, limit: Int) -> Int {
    var sizes: [UnsafeMutableRawPointer: Int] = [:]
    let over = limit &+ 1
    func entitySize(_ reference: xmlNodePtr, depth: Int) -> Int {
      guard let entity = reference.pointee.children else { return 0 }
      let key = UnsafeMutableRawPointer(entity)
      if let known = sizes[key] { return known }
      sizes[key] = over
      let size = walk(entity.pointee.children, inEntity: true, depth: depth + 1)
      sizes[key] = size
      return size
    }
    func walk(_ first: xmlNodePtr?, inEntity: Bool, depth: Int) -> Int {
      guard depth < 256 else { return over }
      var total = 0
      var c = first
      while let n = c, total <= limit {
        switch n.pointee.type {
        case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
          if inEntity, let text = n.pointee.content {
            var k = 0
            while text[k] != 0, total &+ k <= limit { k += 1 }
            total &+= k
          }
        case XML_ENTITY_REF_NODE:
          total &+= entitySize(n, depth: depth)
        case XML_ELEMENT_NODE:
          var a = n.pointee.properties
          while let attribute = a, total <= limit {
            total &+= walk(attribute.pointee.children, inEntity: inEntity, depth: depth + 1)
            a = attribute.pointee.next
          }
          total &+= walk(n.pointee.children, inEntity: inEntity, depth: depth + 1)
        default: break
        }
        total = min(total, over)
        c = n.pointee.next
      }
      return total
    }
    return walk(root, inEntity: false, depth: 0)
  }

  /// The most text one node's content may expand to, and the most entity references followed in it:
  /// `xmlNodeBufGetContent` expands internal entities without a bound, so a 110 KB body of one 50 KB
  /// entity referenced 20,000 times made 1 GB of text (the JDK that WireMock runs on caps expansion too).
  static let maximumContentBytes = 1 << 20
  static let maximumEntityExpansions = 10_000

  /// The text content of `node` (its text, CDATA and entity-expanded descendants, in order, as
  /// `xmlNodeBufGetContent` gives it), cut at ``maximumContentBytes`` or ``maximumEntityExpansions``.
  private static func content(of node: xmlNodePtr) -> String {
    var out: [UInt8] = []
    var expansions = 0
    func append(_ text: UnsafePointer<xmlChar>?) {
      guard let text else { return }
      var k = 0
      while text[k] != 0, out.count < maximumContentBytes {
        out.append(text[k])
        k += 1
      }
    }
    func walk(_ first: xmlNodePtr?, depth: Int) {
      var c = first
      while let n = c, out.count < maximumContentBytes, depth < 256 {
        switch n.pointee.type {
        case XML_TEXT_NODE, XML_CDATA_SECTION_NODE: append(n.pointee.content)
        case XML_ENTITY_REF_NODE:
          // The reference's `children` is the entity declaration; its children are the replacement.
          expansions += 1
          if expansions <= maximumEntityExpansions, let entity = n.pointee.children {
            walk(entity.pointee.children, depth: depth + 1)
          }
        case XML_ELEMENT_NODE, XML_ATTRIBUTE_NODE, XML_DOCUMENT_FRAG_NODE:
          walk(n.pointee.children, depth: depth + 1)
        default: break
        }
        c = n.pointee.next
      }
    }
    switch node.pointee.type {
    case XML_TEXT_NODE, XML_CDATA_SECTION_NODE, XML_COMMENT_NODE, XML_PI_NODE: append(node.pointee.content)
    case XML_ATTRIBUTE_NODE:
      node.withMemoryRebound(to: xmlAttr.self, capacity: 1) { walk($0.pointee.children, depth: 0) }
    default: walk(node.pointee.children, depth: 0)
    }
    return String(decoding: out, as: UTF8.self)
  }

  private static func details(of node: xmlNodePtr, _ doc: xmlDocPtr) -> XPathNode {
    guard let buffer = xmlBufferCreate() else {
      return XPathNode(isElement: false, name: "", text: "", attributes: [], markup: "")
    }
    defer { xmlBufferFree(buffer) }
    let text = content(of: node)
    let isElement = node.pointee.type == XML_ELEMENT_NODE
    let isAttribute = node.pointee.type == XML_ATTRIBUTE_NODE
    let name = isElement || isAttribute ? string(node.pointee.name) ?? "" : ""
    guard isElement else {
      return XPathNode(isElement: false, name: name, text: text, attributes: [], markup: text)
    }
    xmlBufferEmpty(buffer)
    _ = xmlNodeDump(buffer, doc, node, 0, 0)
    let markup = string(xmlBufferContent(buffer)) ?? ""
    return XPathNode(
      isElement: true, name: name, text: text, attributes: attributes(of: node), markup: markup)
  }

  /// An element with child elements renders as XML, any other node as its text.
  private static func value(of node: xmlNodePtr, _ doc: xmlDocPtr) -> String {
    guard let buffer = xmlBufferCreate() else { return "" }
    defer { xmlBufferFree(buffer) }
    guard node.pointee.type == XML_ELEMENT_NODE && hasElementChild(node) else { return content(of: node) }
    _ = xmlNodeDump(buffer, doc, node, 0, 0)
    return string(xmlBufferContent(buffer)) ?? ""
  }

  private static func hasElementChild(_ node: xmlNodePtr) -> Bool {
    var c = node.pointee.children
    while let n = c {
      if n.pointee.type == XML_ELEMENT_NODE { return true }
      c = n.pointee.next
    }
    return false
  }
}

extension String {
  fileprivate func replacingFirstLinePrefix() -> String {
    guard hasPrefix("line "), let colon = firstIndex(of: ":") else { return self }
    return String(self[index(after: colon)...]).trimmingCharacters()
  }

  fileprivate func trimmingCharacters() -> String {
    var s = Substring(self)
    while s.first == " " { s = s.dropFirst() }
    return String(s)
  }
}
