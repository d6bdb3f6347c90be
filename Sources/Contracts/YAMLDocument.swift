import CYAML
import MockJSON

/// A YAML syntax error with its position, as libyaml reports it.
package struct YAMLParseError: Error, Sendable, Hashable, CustomStringConvertible {
  /// 1-based line.
  package var line: Int
  /// 1-based column.
  package var column: Int
  /// libyaml's problem text, e.g. "mapping values are not allowed in this context".
  package var message: String

  /// `line 3, column 5: mapping values are not allowed in this context`.
  package var description: String { "line \(line), column \(column): \(message)" }
}

/// YAML 1.2 text read through libyaml into ``JSONValue`` (the JSON-compatible subset OpenAPI uses).
///
/// Plain scalars resolve with the YAML 1.2 core schema: `null`, `~` and empty are null, `true`/`false` are
/// Booleans, decimal, `0x` and `0o` integers and decimal floats are numbers (written as JSON number text);
/// every quoted scalar, every other plain scalar and `!!str` is a string. Anchors, aliases and `<<` merge
/// keys are resolved; mapping keys are their scalar text (`200:` is the key `"200"`).
package enum YAMLDocument {
  /// Parses the first document of `text`.
  /// - Throws: ``YAMLParseError`` for a syntax error, a non-scalar mapping key or an unknown alias.
  package static func parse(_ text: String) throws(YAMLParseError) -> JSONValue {
    var bytes = Array(text.utf8)
    return try parse(bytes: &bytes)
  }

  /// Parses the first document of UTF-8 `bytes`; see ``parse(_:)``.
  package static func parse(bytes: inout [UInt8]) throws(YAMLParseError) -> JSONValue {
    var parser = yaml_parser_t()
    guard yaml_parser_initialize(&parser) == 1 else {
      throw YAMLParseError(line: 1, column: 1, message: "cannot initialise libyaml")
    }
    defer { yaml_parser_delete(&parser) }
    let result: Result<JSONValue, YAMLParseError> = bytes.withUnsafeMutableBufferPointer { buffer in
      yaml_parser_set_input_string(&parser, buffer.baseAddress, buffer.count)
      var builder = Builder()
      return builder.run(&parser)
    }
    return try result.get()
  }
}

/// Turns libyaml's event stream into one value.
private struct Builder {
  enum Frame {
    case sequence(anchor: String?, items: [JSONValue])
    case mapping(anchor: String?, members: [JSONObject.Member], pendingKey: String?, merges: [JSONObject])
  }

  var stack: [Frame] = []
  /// Nodes in each open frame so far, aliases counted at their expanded size (parallel to `stack`).
  var sizes: [Int] = []
  var anchors: [String: (value: JSONValue, size: Int)] = [:]
  var root: JSONValue?
  /// Nodes in the document, aliases expanded: what a walk of the value visits.
  var total = 0

  /// The deepest nesting read (as JSON's limit): deeper input would overflow the recursive walks of the
  /// value later.
  static let maximumDepth = 512
  /// The most nodes the document may expand to: a few hundred bytes of nested aliases (`&a [*b, *b, …]`)
  /// otherwise stand for 10^9 nodes.
  static let maximumNodes = 1_000_000

  mutating func run(_ parser: inout yaml_parser_t) -> Result<JSONValue, YAMLParseError> {
    while true {
      var event = yaml_event_t()
      guard yaml_parser_parse(&parser, &event) == 1 else {
        let mark = parser.problem_mark
        let problem = parser.problem.map { String(cString: $0) } ?? "invalid YAML"
        let context = parser.context.map { String(cString: $0) + ": " } ?? ""
        return .failure(
          YAMLParseError(line: mark.line + 1, column: mark.column + 1, message: context + problem))
      }
      defer { yaml_event_delete(&event) }
      let mark = event.start_mark
      func fail(_ message: String) -> Result<JSONValue, YAMLParseError> {
        .failure(YAMLParseError(line: mark.line + 1, column: mark.column + 1, message: message))
      }
      switch event.type {
      case YAML_STREAM_END_EVENT:
        return .success(root ?? .null)
      case YAML_DOCUMENT_END_EVENT:
        return .success(root ?? .null)
      case YAML_SCALAR_EVENT:
        let s = event.data.scalar
        let text = string(s.value, Int(s.length))
        let anchor = s.anchor.map { String(cString: $0) }
        let tag = s.tag.map { String(cString: $0) }
        let plain = s.style == YAML_PLAIN_SCALAR_STYLE
        if case .mapping(let a, let members, nil, let merges) = stack.last {
          // A key.
          stack[stack.count - 1] = .mapping(anchor: a, members: members, pendingKey: text, merges: merges)
          if plain, text == "<<" {
            stack[stack.count - 1] = .mapping(
              anchor: a, members: members, pendingKey: "\u{0}<<", merges: merges)
          }
          continue
        }
        let value = Builder.resolve(text, plain: plain, tag: tag)
        if let anchor { anchors[anchor] = (value, 1) }
        if let error = add(value, size: 1) { return fail(error) }
      case YAML_ALIAS_EVENT:
        let name = String(cString: event.data.alias.anchor)
        guard let (value, size) = anchors[name] else { return fail("unknown alias *\(name)") }
        if case .mapping(_, _, nil, _) = stack.last {
          return fail("an alias as a mapping key is not supported")
        }
        if let error = add(value, size: size) { return fail(error) }
      case YAML_SEQUENCE_START_EVENT:
        if case .mapping(_, _, nil, _) = stack.last {
          return fail("a sequence as a mapping key is not supported")
        }
        guard stack.count < Builder.maximumDepth else {
          return fail("at most \(Builder.maximumDepth) levels of nesting")
        }
        stack.append(
          .sequence(anchor: event.data.sequence_start.anchor.map { String(cString: $0) }, items: []))
        sizes.append(1)
      case YAML_MAPPING_START_EVENT:
        if case .mapping(_, _, nil, _) = stack.last {
          return fail("a mapping as a mapping key is not supported")
        }
        guard stack.count < Builder.maximumDepth else {
          return fail("at most \(Builder.maximumDepth) levels of nesting")
        }
        stack.append(
          .mapping(
            anchor: event.data.mapping_start.anchor.map { String(cString: $0) }, members: [], pendingKey: nil,
            merges: []))
        sizes.append(1)
      case YAML_SEQUENCE_END_EVENT, YAML_MAPPING_END_EVENT:
        guard let frame = stack.popLast(), let size = sizes.popLast() else {
          return fail("unbalanced YAML events")
        }
        let value: JSONValue
        let anchor: String?
        switch frame {
        case .sequence(let a, let items):
          value = .array(items)
          anchor = a
        case .mapping(let a, var members, _, let merges):
          let own = Set(members.map(\.key))
          var merged: Set<String> = []
          for m in merges {
            for member in m.members where !own.contains(member.key) && !merged.contains(member.key) {
              merged.insert(member.key)
              members.append(member)
            }
          }
          value = .object(JSONObject(members))
          anchor = a
        }
        if let anchor { anchors[anchor] = (value, size) }
        if let error = add(value, size: size) { return fail(error) }
      default:
        continue
      }
    }
  }

  /// Adds a finished node to its parent (or makes it the root); returns an error message or nil.
  /// `size` is the node count of `value` with aliases expanded.
  mutating func add(_ value: JSONValue, size: Int) -> String? {
    if stack.isEmpty || sizes.isEmpty {
      total = size
    } else {
      sizes[sizes.count - 1] += size
      total = sizes.reduce(0, +)
    }
    if total > Builder.maximumNodes {
      return "aliases expanding to more than \(Builder.maximumNodes) nodes (an alias bomb?)"
    }
    guard let top = stack.popLast() else {
      if root == nil { root = value }
      return nil
    }
    switch top {
    case .sequence(let a, var items):
      items.append(value)
      stack.append(.sequence(anchor: a, items: items))
    case .mapping(let a, var members, let key, var merges):
      guard let key else { return "a non-scalar mapping key is not supported" }
      if key == "\u{0}<<" {
        switch value {
        case .object(let o): merges.append(o)
        case .array(let list):
          for case .object(let o) in list { merges.append(o) }
        default: return "a merge key << needs a mapping or a list of mappings"
        }
      } else {
        members.append(JSONObject.Member(key: key, value: value))
      }
      stack.append(.mapping(anchor: a, members: members, pendingKey: nil, merges: merges))
    }
    return nil
  }

  func string(_ pointer: UnsafeMutablePointer<yaml_char_t>?, _ length: Int) -> String {
    guard let pointer else { return "" }
    return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
  }

  /// YAML 1.2 core schema resolution of one scalar.
  static func resolve(_ text: String, plain: Bool, tag: String?) -> JSONValue {
    switch tag {
    case "tag:yaml.org,2002:str": return .string(text)
    case "tag:yaml.org,2002:null": return .null
    case "tag:yaml.org,2002:bool": return .bool(text.lowercased() == "true")
    case "tag:yaml.org,2002:int", "tag:yaml.org,2002:float":
      return number(text).map(JSONValue.number) ?? .string(text)
    case nil: break
    default: return .string(text)
    }
    guard plain else { return .string(text) }
    switch text {
    case "", "~", "null", "Null", "NULL": return .null
    case "true", "True", "TRUE": return .bool(true)
    case "false", "False", "FALSE": return .bool(false)
    default: return number(text).map(JSONValue.number) ?? .string(text)
    }
  }

  /// The JSON number text of a YAML core-schema int or float, or nil when `text` is neither.
  static func number(_ text: String) -> JSONNumber? {
    var body = Substring(text)
    var sign = ""
    if let first = body.first, first == "-" || first == "+" {
      sign = first == "-" ? "-" : ""
      body = body.dropFirst()
    }
    if body.hasPrefix("0x") || body.hasPrefix("0o") {
      let radix = body.hasPrefix("0x") ? 16 : 8
      guard let v = Int(body.dropFirst(2), radix: radix) else { return nil }
      return JSONNumber(text: sign + String(v))
    }
    let bytes = Array(body.utf8)
    guard !bytes.isEmpty else { return nil }
    var i = 0
    var intDigits = ""
    while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
      intDigits.append(Character(Unicode.Scalar(bytes[i])))
      i += 1
    }
    var fraction = ""
    var hasPoint = false
    if i < bytes.count, bytes[i] == UInt8(ascii: ".") {
      hasPoint = true
      i += 1
      while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
        fraction.append(Character(Unicode.Scalar(bytes[i])))
        i += 1
      }
    }
    guard !intDigits.isEmpty || !fraction.isEmpty else { return nil }
    var exponent = ""
    if i < bytes.count, bytes[i] == UInt8(ascii: "e") || bytes[i] == UInt8(ascii: "E") {
      i += 1
      var expSign = ""
      if i < bytes.count, bytes[i] == UInt8(ascii: "-") || bytes[i] == UInt8(ascii: "+") {
        expSign = bytes[i] == UInt8(ascii: "-") ? "-" : ""
        i += 1
      }
      var digits = ""
      while i < bytes.count, bytes[i] >= 48, bytes[i] <= 57 {
        digits.append(Character(Unicode.Scalar(bytes[i])))
        i += 1
      }
      guard !digits.isEmpty else { return nil }
      exponent = "e" + expSign + digits
    }
    guard i == bytes.count else { return nil }
    // Leading zeros are not JSON: "007" is 7.
    var integer = String(intDigits.drop(while: { $0 == "0" }))
    if integer.isEmpty { integer = "0" }
    var out = sign + integer
    if hasPoint, !fraction.isEmpty { out += "." + fraction }
    out += exponent
    return JSONNumber(text: out)
  }
}
