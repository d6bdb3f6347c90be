extension JSONPath {
  /// What ``selectDefinite(inUTF8:)`` found.
  package enum DefiniteSelection: Sendable, Hashable {
    /// The document is valid JSON and the path selects this node.
    case found(JSONValue)
    /// The document is valid JSON and the path selects nothing.
    case notFound
    /// Not decided here (the path is not plain names and non-negative indexes, or the text has escapes,
    /// non-ASCII bytes or is not JSON): parse the document and ``evaluate(_:)`` it.
    case undecided
  }

  /// The node a path of names and non-negative indexes selects, read straight from JSON text: the whole
  /// text is checked as `JSONValue.parse` checks it, but only the selected node is built. Gives the same
  /// answer as `evaluate(try JSONValue.parse(text)).first` whenever it decides.
  package func selectDefinite(inUTF8 bytes: [UInt8]) -> DefiniteSelection {
    guard steps.function == nil, steps.segments.count <= 64 else { return .undecided }
    for segment in steps.segments {
      switch segment {
      case .name: continue
      case .index(let k) where k >= 0: continue
      default: return .undecided
      }
    }
    return bytes.withUnsafeBufferPointer { buffer in
      var scanner = DefiniteScanner(b: buffer, bytes: bytes, wanted: steps.segments)
      return scanner.run()
    }
  }
}

/// A validating skip over JSON text that builds only the node at the wanted location. It reads the text
/// through a buffer pointer (every index is checked against `b.count` before it is read) and hands the
/// selected node to `JSONParser`.
struct DefiniteScanner {
  let b: UnsafeBufferPointer<UInt8>
  /// The same text, for the parser.
  let bytes: [UInt8]
  /// The path's steps: names and non-negative indexes only.
  let wanted: [JSONPath.Segment]
  var i = 0
  var depth = 0
  var found: JSONValue?

  struct Undecided: Error {}

  init(b: UnsafeBufferPointer<UInt8>, bytes: [UInt8], wanted: [JSONPath.Segment]) {
    self.b = b
    self.bytes = bytes
    self.wanted = wanted
    // A byte order mark: leave it to the parser.
  }

  mutating func run() -> JSONPath.DefiniteSelection {
    do throws(Undecided) {
      if b.count >= 3, b[0] == 0xEF { throw Undecided() }
      skipSpace()
      try value(matched: 0)
      skipSpace()
      guard i == b.count else { throw Undecided() }
      return found.map(JSONPath.DefiniteSelection.found) ?? .notFound
    } catch {
      return .undecided
    }
  }

  mutating func skipSpace() {
    while i < b.count, b[i] == 0x20 || b[i] == 0x0A || b[i] == 0x0D || b[i] == 0x09 { i += 1 }
  }

  /// One value; `matched` is how many wanted steps lead here (nil: off the path).
  mutating func value(matched: Int?) throws(Undecided) {
    guard i < b.count else { throw Undecided() }
    if let m = matched, m == wanted.count {
      // The selected node: built by the parser (which checks it), the last one wins as in `JSONObject`.
      var parser = JSONParser(bytes: bytes)
      parser.i = i
      parser.depth = depth
      guard let v = try? parser.parseValue() else { throw Undecided() }
      i = parser.i
      found = v
      return
    }
    switch b[i] {
    case UInt8(ascii: "{"):
      depth += 1
      guard depth <= JSONParser.maxDepth else { throw Undecided() }
      i += 1
      skipSpace()
      if i < b.count, b[i] == UInt8(ascii: "}") {
        i += 1
        depth -= 1
        return
      }
      var name: String?
      if let m = matched, case .name(let n) = wanted[m] { name = n }
      while true {
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: "\"") else { throw Undecided() }
        let keyStart = i + 1
        try string()
        var isWanted = false
        if let n = name, n.utf8.count == i - 1 - keyStart {
          isWanted = true
          var k = keyStart
          for c in n.utf8 where isWanted {
            isWanted = b[k] == c
            k += 1
          }
        }
        skipSpace()
        guard i < b.count, b[i] == UInt8(ascii: ":") else { throw Undecided() }
        i += 1
        skipSpace()
        try value(matched: isWanted ? matched.map { $0 + 1 } : nil)
        skipSpace()
        guard i < b.count else { throw Undecided() }
        if b[i] == UInt8(ascii: ",") {
          i += 1
          continue
        }
        guard b[i] == UInt8(ascii: "}") else { throw Undecided() }
        i += 1
        depth -= 1
        return
      }
    case UInt8(ascii: "["):
      depth += 1
      guard depth <= JSONParser.maxDepth else { throw Undecided() }
      i += 1
      skipSpace()
      if i < b.count, b[i] == UInt8(ascii: "]") {
        i += 1
        depth -= 1
        return
      }
      var index: Int?
      if let m = matched, case .index(let k) = wanted[m] { index = k }
      var k = 0
      while true {
        skipSpace()
        try value(matched: index == k ? matched.map { $0 + 1 } : nil)
        k += 1
        skipSpace()
        guard i < b.count else { throw Undecided() }
        if b[i] == UInt8(ascii: ",") {
          i += 1
          continue
        }
        guard b[i] == UInt8(ascii: "]") else { throw Undecided() }
        i += 1
        depth -= 1
        return
      }
    case UInt8(ascii: "\""): try string()
    case UInt8(ascii: "t"): try word("true")
    case UInt8(ascii: "f"): try word("false")
    case UInt8(ascii: "n"): try word("null")
    case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): try number()
    default: throw Undecided()
    }
  }

  mutating func word(_ w: StaticString) throws(Undecided) {
    let n = w.utf8CodeUnitCount
    guard i + n <= b.count else { throw Undecided() }
    let p = w.utf8Start
    for k in 0..<n where b[i + k] != p[k] { throw Undecided() }
    i += n
  }

  /// A string of printable ASCII without escapes (anything else is left to the parser).
  mutating func string() throws(Undecided) {
    i += 1
    while i < b.count {
      let c = b[i]
      if c == UInt8(ascii: "\"") {
        i += 1
        return
      }
      guard c >= 0x20, c < 0x80, c != UInt8(ascii: "\\") else { throw Undecided() }
      i += 1
    }
    throw Undecided()
  }

  /// RFC 8259's number grammar, as `JSONNumber` checks it (the parser takes the same run of bytes).
  mutating func number() throws(Undecided) {
    let start = i
    while i < b.count {
      let c = b[i]
      guard JSONNumber.isDigit(c) || c == 0x2D || c == 0x2B || c == 0x2E || c == 0x65 || c == 0x45 else {
        break
      }
      i += 1
    }
    var k = start
    if b[k] == 0x2D { k += 1 }
    guard k < i, JSONNumber.isDigit(b[k]) else { throw Undecided() }
    if b[k] == 0x30 {
      k += 1
    } else {
      while k < i, JSONNumber.isDigit(b[k]) { k += 1 }
    }
    if k < i, b[k] == 0x2E {
      k += 1
      guard k < i, JSONNumber.isDigit(b[k]) else { throw Undecided() }
      while k < i, JSONNumber.isDigit(b[k]) { k += 1 }
    }
    if k < i, b[k] == 0x65 || b[k] == 0x45 {
      k += 1
      if k < i, b[k] == 0x2B || b[k] == 0x2D { k += 1 }
      guard k < i, JSONNumber.isDigit(b[k]) else { throw Undecided() }
      while k < i, JSONNumber.isDigit(b[k]) { k += 1 }
    }
    guard k == i else { throw Undecided() }
  }
}
