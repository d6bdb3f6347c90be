/// A template syntax error or an unknown helper, located inside the template text.
public struct TemplateSyntaxError: Error, Sendable, Hashable, CustomStringConvertible {
  /// 1-based line of the problem.
  public var line: Int
  /// 1-based column (in characters) of the problem.
  public var column: Int
  /// What is wrong, e.g. `unclosed {{#each}} opened at 1:14`.
  public var message: String
  /// `message` (the location is part of the message where it helps; callers add their own prefix).
  public var description: String { message }
}

/// An expression inside a tag.
package indirect enum TemplateExpression: Sendable {
  case literal(TemplateValue)
  case path(TemplatePath)
  case call(name: String, params: [TemplateExpression], hash: [(String, TemplateExpression)])
}

/// `a.b.[0]`, `../x`, `@index`, `this`.
package struct TemplatePath: Sendable {
  var depth = 0
  var isData = false
  var segments: [String] = []
  var text = ""
}

/// A node of a compiled template.
package indirect enum TemplateNode: Sendable {
  case text(String)
  case output(TemplateExpression, escaped: Bool)
  case block(TemplateBlock)
}

/// `{{#name params hash as |p|}}body{{else}}inverse{{/name}}`.
package struct TemplateBlock: Sendable {
  /// A block on a value rather than a helper (`{{#path}}`, `{{^path}}`).
  enum Section: Sendable { case normal, inverted }
  /// The helper, or for a section the path as written (what the closing tag names).
  var name: String
  var params: [TemplateExpression]
  var hash: [(String, TemplateExpression)]
  var blockParams: [String]
  var body: [TemplateNode]
  var inverse: [TemplateNode]?
  /// Set for a section on a value; nil for a block helper.
  var section: Section? = nil
}

/// Tokenizer and parser for the Handlebars subset (see docs/templating.md).
struct TemplateParser {
  enum TagKind {
    case output(TemplateExpression, escaped: Bool)
    case open(
      name: String, params: [TemplateExpression], hash: [(String, TemplateExpression)], blockParams: [String])
    case close(String)
    case section(TemplatePath, inverted: Bool)  // `{{#path}}` or `{{^path}}`
    case elseTag(TemplateExpression?, blockParams: [String])  // `{{else}}` or `{{else if x}}`
    case comment
  }
  struct Tag {
    var kind: TagKind
    var offset: Int
    var stripLeft: Bool
    var stripRight: Bool
  }
  enum Token {
    case text(String)
    case tag(Tag)
  }

  let b: [UInt8]
  var i = 0
  let isHelper: (String) -> Bool
  /// Sub-expressions open around the one being read (`(a (b (c)))`).
  var subexpressionDepth = 0
  /// The most blocks open inside one another, and sub-expressions inside one another: rendering recurses
  /// once per level, so a template nested deeper is refused at load instead of overflowing a loop's
  /// stack on the first request.
  static let maximumNesting = 100

  init(_ source: String, isHelper: @escaping (String) -> Bool) {
    b = Array(source.utf8)
    self.isHelper = isHelper
  }

  func location(_ offset: Int) -> (Int, Int) {
    var line = 1
    var lineStart = 0
    var k = 0
    while k < min(offset, b.count) {
      if b[k] == 10 {
        line += 1
        lineStart = k + 1
      }
      k += 1
    }
    let column = String(decoding: b[lineStart..<min(offset, b.count)], as: UTF8.self).count + 1
    return (line, column)
  }

  func error(_ message: String, at offset: Int) -> TemplateSyntaxError {
    let (l, c) = location(offset)
    return TemplateSyntaxError(line: l, column: c, message: message)
  }

  func at(_ text: String) -> Bool {
    let t = Array(text.utf8)
    return i + t.count <= b.count && Array(b[i..<(i + t.count)]) == t
  }

  // MARK: Tokens

  mutating func tokenize() throws(TemplateSyntaxError) -> [Token] {
    var tokens: [Token] = []
    var text: [UInt8] = []
    while i < b.count {
      if b[i] == UInt8(ascii: "\\"), at("\\{{") {
        text.append(contentsOf: Array("{{".utf8))
        i += 3
        continue
      }
      if at("{{") {
        if !text.isEmpty { tokens.append(.text(String(decoding: text, as: UTF8.self))) }
        text = []
        tokens.append(.tag(try tag()))
        continue
      }
      text.append(b[i])
      i += 1
    }
    if !text.isEmpty { tokens.append(.text(String(decoding: text, as: UTF8.self))) }
    // Whitespace control: `{{~` trims the text before the tag, `~}}` the text after it.
    for k in tokens.indices {
      guard case .tag(let t) = tokens[k] else { continue }
      if t.stripLeft, k > 0, case .text(let s) = tokens[k - 1] {
        tokens[k - 1] = .text(String(s.reversed().drop(while: { $0.isWhitespace }).reversed()))
      }
      if t.stripRight, k + 1 < tokens.count, case .text(let s) = tokens[k + 1] {
        tokens[k + 1] = .text(String(s.drop(while: { $0.isWhitespace })))
      }
    }
    return tokens
  }

  mutating func tag() throws(TemplateSyntaxError) -> Tag {
    let start = i
    i += 2
    var triple = false
    if i < b.count, b[i] == UInt8(ascii: "{") {
      triple = true
      i += 1
    }
    var stripLeft = false
    if i < b.count, b[i] == UInt8(ascii: "~") {
      stripLeft = true
      i += 1
    }
    if !triple, at("!") {
      // Comment: `{{!-- … --}}` may contain `}}`; `{{! … }}` may not.
      let long = at("!--")
      let end = long ? "--" : ""
      while i < b.count {
        if long ? (at("--}}") || at("--~}}")) : (at("}}") || at("~}}")) { break }
        i += 1
      }
      guard i < b.count else { throw error("unclosed comment opened at \(loc(start))", at: start) }
      i += end.utf8.count
      var stripRight = false
      if at("~") {
        stripRight = true
        i += 1
      }
      i += 2
      return Tag(kind: .comment, offset: start, stripLeft: stripLeft, stripRight: stripRight)
    }
    skipSpaces()
    var kind: TagKind
    if triple {
      let e = try expression(start: start)
      kind = .output(e, escaped: false)
    } else if i < b.count, b[i] == UInt8(ascii: "&") {
      i += 1
      kind = .output(try expression(start: start), escaped: false)
    } else if i < b.count, b[i] == UInt8(ascii: "#") || b[i] == UInt8(ascii: "^") {
      let inverted = b[i] == UInt8(ascii: "^")
      i += 1
      skipSpaces()
      if inverted, atClose() {
        kind = .elseTag(nil, blockParams: [])
      } else {
        if at(">") || at("*") { throw error("partials and decorators are not supported", at: start) }
        let nameStart = i
        guard let name = identifier(), !name.isEmpty else {
          throw error("expected a helper name after {{#", at: nameStart)
        }
        let continuesPath = i < b.count && (b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: "/"))
        if !inverted, isHelper(name), !continuesPath {
          let (params, hash, blockParams) = try arguments(start: start)
          kind = .open(name: name, params: params, hash: hash, blockParams: blockParams)
        } else {
          // A section on a value (Handlebars' blockHelperMissing): the path alone, no arguments.
          i = nameStart
          let p = try path()
          skipSpaces()
          guard atClose() else {
            if inverted { throw error("expected '}}' after {{^\(p.text)", at: i) }
            throw error("unknown helper '\(name)'", at: nameStart)
          }
          kind = .section(p, inverted: inverted)
        }
      }
    } else if i < b.count, b[i] == UInt8(ascii: "/") {
      i += 1
      skipSpaces()
      // A helper's name or a section's path (`{{/request.query.tier}}`).
      let nameStart = i
      while i < b.count, !" \t\r\n}~".utf8.contains(b[i]) { i += 1 }
      let name = String(decoding: b[nameStart..<i], as: UTF8.self)
      skipSpaces()
      kind = .close(name)
    } else if i < b.count, b[i] == UInt8(ascii: ">") {
      throw error("partials are not supported", at: start)
    } else if at("else"), i + 4 <= b.count,
      i + 4 == b.count || b[i + 4] == 0x20 || b[i + 4] == UInt8(ascii: "}") || b[i + 4] == UInt8(ascii: "~")
    {
      i += 4
      skipSpaces()
      if atClose() {
        kind = .elseTag(nil, blockParams: [])
      } else {
        let nameStart = i
        guard let name = identifier(), isHelper(name) else {
          throw error("expected a helper after {{else", at: nameStart)
        }
        let (params, hash, blockParams) = try arguments(start: start)
        kind = .elseTag(.call(name: name, params: params, hash: hash), blockParams: blockParams)
      }
    } else {
      kind = .output(try expression(start: start), escaped: true)
    }
    skipSpaces()
    var stripRight = false
    if at("~") {
      stripRight = true
      i += 1
    }
    let close = triple ? "}}}" : "}}"
    guard at(close) else {
      if i >= b.count { throw error("unclosed \(triple ? "{{{" : "{{") opened at \(loc(start))", at: start) }
      throw error("expected '\(close)'", at: i)
    }
    i += close.utf8.count
    return Tag(kind: kind, offset: start, stripLeft: stripLeft, stripRight: stripRight)
  }

  /// Throws when a block opened with `open` blocks already open would pass ``maximumNesting``.
  func checkNesting(_ open: Int, at offset: Int) throws(TemplateSyntaxError) {
    guard open < TemplateParser.maximumNesting else {
      throw error("blocks nested more than \(TemplateParser.maximumNesting) deep", at: offset)
    }
  }

  func loc(_ offset: Int) -> String {
    let (l, c) = location(offset)
    return "\(l):\(c)"
  }

  func atClose() -> Bool { at("}}") || at("~}}") }

  mutating func skipSpaces() {
    while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
  }

  /// A tag's content as one expression: a path, a literal, or a helper call with arguments.
  mutating func expression(start: Int) throws(TemplateSyntaxError) -> TemplateExpression {
    let nameStart = i
    let first = try operand()
    let (params, hash, _) = try arguments(start: start, allowBlockParams: false)
    if case .path(let p) = first, p.depth == 0, !p.isData, p.segments.count == 1, isHelper(p.segments[0]),
      !p.text.hasPrefix("[")
    {
      return .call(name: p.segments[0], params: params, hash: hash)
    }
    if params.isEmpty, hash.isEmpty { return first }
    if case .path(let p) = first { throw error("unknown helper '\(p.text)'", at: nameStart) }
    throw error("expected a helper name before arguments", at: nameStart)
  }

  /// Positional arguments, `key=value` pairs and `as |a b|`, up to the tag's end or `)`.
  mutating func arguments(start: Int, allowBlockParams: Bool = true) throws(TemplateSyntaxError) -> (
    [TemplateExpression], [(String, TemplateExpression)], [String]
  ) {
    var params: [TemplateExpression] = []
    var hash: [(String, TemplateExpression)] = []
    var blockParams: [String] = []
    while true {
      skipSpaces()
      guard i < b.count else { throw error("unclosed {{ opened at \(loc(start))", at: start) }
      if atClose() || at("}}}") || b[i] == UInt8(ascii: ")") { break }
      if allowBlockParams, at("as |") || at("as|") {
        i += 2
        skipSpaces()
        i += 1
        while true {
          skipSpaces()
          if i < b.count, b[i] == UInt8(ascii: "|") {
            i += 1
            break
          }
          guard let n = identifier(), !n.isEmpty else {
            throw error("expected a block parameter name", at: i)
          }
          blockParams.append(n)
        }
        continue
      }
      // key=value
      let save = i
      if let key = identifier(), i < b.count, b[i] == UInt8(ascii: "=") {
        i += 1
        hash.append((key, try operand()))
        continue
      }
      i = save
      if !hash.isEmpty { throw error("positional argument after key=value arguments", at: i) }
      params.append(try operand())
    }
    return (params, hash, blockParams)
  }

  static let stopBytes: Set<UInt8> = Set(" \t\r\n!\"#%&'()*+,./;<=>@[\\]^`{|}~".utf8)

  mutating func identifier() -> String? {
    let s = i
    while i < b.count, !TemplateParser.stopBytes.contains(b[i]) { i += 1 }
    return i > s ? String(decoding: b[s..<i], as: UTF8.self) : nil
  }

  /// A literal, a path or a parenthesised sub-expression.
  mutating func operand() throws(TemplateSyntaxError) -> TemplateExpression {
    guard i < b.count else { throw error("expected a value", at: i) }
    let c = b[i]
    if c == UInt8(ascii: "(") {
      let open = i
      guard subexpressionDepth < TemplateParser.maximumNesting else {
        throw error("sub-expressions nested more than \(TemplateParser.maximumNesting) deep", at: open)
      }
      subexpressionDepth += 1
      defer { subexpressionDepth -= 1 }
      i += 1
      skipSpaces()
      let nameStart = i
      guard let name = identifier() else { throw error("expected a helper name after '('", at: nameStart) }
      guard isHelper(name) else { throw error("unknown helper '\(name)'", at: nameStart) }
      let (params, hash, _) = try arguments(start: open, allowBlockParams: false)
      guard i < b.count, b[i] == UInt8(ascii: ")") else {
        throw error("unclosed ( opened at \(loc(open))", at: open)
      }
      i += 1
      return .call(name: name, params: params, hash: hash)
    }
    if c == UInt8(ascii: "'") || c == UInt8(ascii: "\"") {
      let open = i
      i += 1
      var out: [UInt8] = []
      while i < b.count, b[i] != c {
        if b[i] == UInt8(ascii: "\\"), i + 1 < b.count, b[i + 1] == c || b[i + 1] == UInt8(ascii: "\\") {
          i += 1
        }
        out.append(b[i])
        i += 1
      }
      guard i < b.count else { throw error("unclosed string opened at \(loc(open))", at: open) }
      i += 1
      return .literal(.string(String(decoding: out, as: UTF8.self)))
    }
    if c == UInt8(ascii: "-") || (c >= 48 && c <= 57) {
      let s = i
      i += 1
      while i < b.count, (b[i] >= 48 && b[i] <= 57) || b[i] == UInt8(ascii: ".") { i += 1 }
      let text = String(decoding: b[s..<i], as: UTF8.self)
      if i >= b.count || TemplateParser.stopBytes.contains(b[i]) || b[i] == UInt8(ascii: ".") {
        if let n = Int(text) { return .literal(.int(n)) }
        if let d = Double(text) { return .literal(.double(d)) }
      }
      i = s
    }
    let s = i
    let p = try path()
    if p.depth == 0, !p.isData, p.segments.count == 1, !p.text.hasPrefix("[") {
      switch p.segments[0] {
      case "true": return .literal(.bool(true))
      case "false": return .literal(.bool(false))
      case "null", "undefined": return .literal(.null)
      default: break
      }
    }
    if p.text.isEmpty { throw error("expected a value", at: s) }
    return .path(p)
  }

  func pathFrom(_ name: String) -> TemplatePath {
    TemplatePath(depth: 0, isData: false, segments: [name], text: name)
  }

  /// `a.b`, `a/b`, `a.[x y]`, `../a`, `./a`, `this.a`, `@index`.
  mutating func path() throws(TemplateSyntaxError) -> TemplatePath {
    let s = i
    var p = TemplatePath()
    if i < b.count, b[i] == UInt8(ascii: "@") {
      p.isData = true
      i += 1
    }
    while at("../") {
      p.depth += 1
      i += 3
    }
    if at("./") { i += 2 }
    var first = true
    while i < b.count {
      if !first {
        guard b[i] == UInt8(ascii: ".") || b[i] == UInt8(ascii: "/") else { break }
        i += 1
      }
      if i < b.count, b[i] == UInt8(ascii: "[") {
        let open = i
        i += 1
        let segStart = i
        while i < b.count, b[i] != UInt8(ascii: "]") { i += 1 }
        guard i < b.count else { throw error("unclosed [ opened at \(loc(open))", at: open) }
        p.segments.append(String(decoding: b[segStart..<i], as: UTF8.self))
        i += 1
      } else if let id = identifier() {
        if first, id == "this", !p.isData {
          // `this` is the current context
        } else {
          p.segments.append(id)
        }
      } else if first, i < b.count, b[i] == UInt8(ascii: ".") {
        i += 1  // `.` alone is `this`
        break
      } else {
        throw error("expected a name", at: i)
      }
      first = false
    }
    p.text = String(decoding: b[s..<i], as: UTF8.self)
    return p
  }

  // MARK: Tree

  struct OpenBlock {
    var block: TemplateBlock
    var offset: Int
    var inInverse = false
    /// Opened by `{{else if …}}`: closed together with the block whose inverse it is.
    var fromElse = false
  }

  mutating func parse() throws(TemplateSyntaxError) -> [TemplateNode] {
    let tokens = try tokenize()
    var root: [TemplateNode] = []
    var stack: [OpenBlock] = []

    func append(_ node: TemplateNode, _ stack: inout [OpenBlock], _ root: inout [TemplateNode]) {
      if stack.isEmpty {
        root.append(node)
      } else if stack[stack.count - 1].inInverse {
        stack[stack.count - 1].block.inverse!.append(node)
      } else {
        stack[stack.count - 1].block.body.append(node)
      }
    }

    for token in tokens {
      switch token {
      case .text(let s):
        if !s.isEmpty { append(.text(s), &stack, &root) }
      case .tag(let tag):
        switch tag.kind {
        case .comment: break
        case .output(let e, let escaped): append(.output(e, escaped: escaped), &stack, &root)
        case .open(let name, let params, let hash, let blockParams):
          try checkNesting(stack.count, at: tag.offset)
          stack.append(
            OpenBlock(
              block: TemplateBlock(
                name: name, params: params, hash: hash, blockParams: blockParams, body: [], inverse: nil),
              offset: tag.offset))
        case .section(let p, let inverted):
          try checkNesting(stack.count, at: tag.offset)
          var block = TemplateBlock(
            name: p.text, params: [.path(p)], hash: [], blockParams: [], body: [], inverse: nil)
          block.section = inverted ? .inverted : .normal
          stack.append(OpenBlock(block: block, offset: tag.offset))
        case .elseTag(let chain, let blockParams):
          guard !stack.isEmpty else { throw error("{{else}} outside a block", at: tag.offset) }
          if stack[stack.count - 1].inInverse {
            throw error(
              "second {{else}} in {{#\(stack[stack.count - 1].block.name)}} opened at \(loc(stack[stack.count - 1].offset))",
              at: tag.offset)
          }
          stack[stack.count - 1].inInverse = true
          stack[stack.count - 1].block.inverse = []
          if case .call(let name, let params, let hash)? = chain {
            var open = OpenBlock(
              block: TemplateBlock(
                name: name, params: params, hash: hash, blockParams: blockParams, body: [], inverse: nil),
              offset: tag.offset)
            open.fromElse = true
            stack.append(open)
          }
        case .close(let name):
          guard var open = stack.popLast() else {
            throw error("{{/\(name)}} closes no block", at: tag.offset)
          }
          // An `{{else if}}` chain closes with the first block's name.
          while open.fromElse, var parent = stack.popLast() {
            parent.block.inverse = (parent.block.inverse ?? []) + [.block(open.block)]
            open = parent
          }
          let closed = TemplateNode.block(open.block)
          guard open.block.name == name else {
            throw error(
              "{{/\(name)}} does not close {{#\(open.block.name)}} opened at \(loc(open.offset))",
              at: tag.offset)
          }
          append(closed, &stack, &root)
        }
      }
    }
    if let open = stack.last {
      throw error("unclosed {{#\(open.block.name)}} opened at \(loc(open.offset))", at: open.offset)
    }
    return root
  }
}
