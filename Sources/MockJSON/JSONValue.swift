/// A JSON value (RFC 8259) that keeps numbers as exact decimal text and object members in source order.
///
/// Equality is semantic: numbers by decimal value (`1 == 1.0`), objects by their members regardless of
/// order, arrays element by element in order. Parse with ``JSONValue/parse(_:)-(String)``; write back with
/// ``JSONValue/serialized(pretty:)``, which keeps every number's original spelling.
public enum JSONValue: Sendable, Hashable, CustomStringConvertible {
  /// `null`.
  case null
  /// `true` or `false`.
  case bool(Bool)
  /// A number with its exact text.
  case number(JSONNumber)
  /// A string (escapes resolved).
  case string(String)
  /// An array, in order.
  case array([JSONValue])
  /// An object, members in source order.
  case object(JSONObject)

  /// Compact JSON text.
  public var description: String { serialized() }

  /// The member named `key` when this is an object (the last one when a key repeats), else nil.
  public subscript(key: String) -> JSONValue? {
    if case .object(let o) = self { return o[key] }
    return nil
  }

  /// The object, when this is one.
  public var objectValue: JSONObject? {
    if case .object(let o) = self { return o }
    return nil
  }
  /// The array, when this is one.
  public var arrayValue: [JSONValue]? {
    if case .array(let a) = self { return a }
    return nil
  }
  /// The string, when this is one.
  public var stringValue: String? {
    if case .string(let s) = self { return s }
    return nil
  }
  /// The number, when this is one.
  public var numberValue: JSONNumber? {
    if case .number(let n) = self { return n }
    return nil
  }
  /// The Boolean, when this is one.
  public var boolValue: Bool? {
    if case .bool(let b) = self { return b }
    return nil
  }

  /// A short English name of the value's type for diagnostics: "a string", "an object", "the number 3".
  public var kindDescription: String {
    switch self {
    case .null: return "null"
    case .bool(let b): return b ? "true" : "false"
    case .number(let n): return "the number \(n.text)"
    case .string: return "a string"
    case .array: return "an array"
    case .object: return "an object"
    }
  }

  /// Semantic equality (see the type's documentation).
  public static func == (a: JSONValue, b: JSONValue) -> Bool {
    switch (a, b) {
    case (.null, .null): return true
    case (.bool(let x), .bool(let y)): return x == y
    case (.number(let x), .number(let y)): return x == y
    case (.string(let x), .string(let y)): return x == y
    case (.array(let x), .array(let y)): return x == y
    case (.object(let x), .object(let y)): return x == y
    default: return false
    }
  }

  /// Hash consistent with semantic equality.
  public func hash(into hasher: inout Hasher) {
    switch self {
    case .null: hasher.combine(0)
    case .bool(let b): hasher.combine(b)
    case .number(let n): hasher.combine(n)
    case .string(let s): hasher.combine(s)
    case .array(let a): hasher.combine(a)
    case .object(let o): hasher.combine(o)
    }
  }
}

/// A JSON object: members in source order, duplicates kept; lookups return the last member of a name.
public struct JSONObject: Sendable, Hashable, Sequence {
  /// One `"key": value` member.
  public struct Member: Sendable, Hashable {
    /// Member name.
    public var key: String
    /// Member value.
    public var value: JSONValue
    /// Creates a member.
    public init(key: String, value: JSONValue) {
      self.key = key
      self.value = value
    }
  }

  /// Members in source order.
  public var members: [Member]

  /// Creates an object from members in order.
  public init(_ members: [Member] = []) { self.members = members }

  /// Creates an object from `(key, value)` pairs in order.
  public init(pairs: [(String, JSONValue)]) {
    self.members = pairs.map { Member(key: $0.0, value: $0.1) }
  }

  /// The value of the last member named `key`, or nil. Names are compared as their UTF-8 bytes (RFC 8259
  /// §8.3, code unit by code unit, as Java compares them): a decomposed "é" is another name.
  public subscript(key: String) -> JSONValue? {
    // Byte counts first, then the bytes in a plain loop: a stub's parser looks up about 140 names in
    // objects of a few members, nearly all absent, and `String ==` on two different strings costs a call
    // into the comparison routine, the generic `elementsEqual` of two UTF-8 views about 600 instructions
    // (with 10,000 stubs, these lookups were a sixth of the start-up). A native string's count is stored.
    let index =
      key.utf8.withContiguousStorageIfAvailable { lastIndex(named: $0) }
      ?? Array(key.utf8).withUnsafeBufferPointer { lastIndex(named: $0) }
    return index < 0 ? nil : members[index].value
  }

  /// The index of the last member whose name is `name`'s bytes, or -1.
  private func lastIndex(named name: UnsafeBufferPointer<UInt8>) -> Int {
    members.withUnsafeBufferPointer { members in
      var k = members.count
      while k > 0 {
        k -= 1
        if members[k].key.hasUTF8Bytes(name) { return k }
      }
      return -1
    }
  }

  /// True when a later member has the same name as member `i` (member `i` is not one of the effective
  /// members: the last of each name counts).
  package func isShadowed(_ i: Int) -> Bool {
    let name = members[i].key
    return members[(i + 1)...].contains { $0.key == name }
  }

  /// Member names in order (repeated names repeated).
  public var keys: [String] { members.map(\.key) }

  /// Iterates the members in order.
  public func makeIterator() -> IndexingIterator<[Member]> { members.makeIterator() }

  /// Unordered comparison of the effective members (last value of each name).
  public static func == (a: JSONObject, b: JSONObject) -> Bool {
    // Objects of a few dozen members (nearly all of them) compare without building dictionaries: a
    // request body compared with `equalToJson` on every request spent a fifth of its time in `effective`.
    if a.members.count <= 32 && b.members.count <= 32 { return smallObjectsEqual(a, b) }
    let da = a.effective
    let db = b.effective
    guard da.count == db.count else { return false }
    for (k, v) in da {
      guard let w = db[k], w == v else { return false }
    }
    return true
  }

  /// `==` by linear search: the last member of each name in `a` has its equal as the last member of
  /// that name in `b`, and both have as many distinct names.
  private static func smallObjectsEqual(_ a: JSONObject, _ b: JSONObject) -> Bool {
    // The same names in the same order, each once: compare pairwise.
    if a.members.count == b.members.count,
      zip(a.members, b.members).allSatisfy({ $0.key == $1.key }), !a.hasRepeatedNames
    {
      return zip(a.members, b.members).allSatisfy { $0.value == $1.value }
    }
    var distinct = 0
    for (i, m) in a.members.enumerated() where !a.isShadowed(i) {
      distinct += 1
      guard let w = b[m.key], w == m.value else { return false }
    }
    return distinct == b.distinctNameCount
  }

  private var hasRepeatedNames: Bool { distinctNameCount != members.count }

  private var distinctNameCount: Int {
    var count = 0
    for i in members.indices where !isShadowed(i) { count += 1 }
    return count
  }

  /// Order-independent hash.
  public func hash(into hasher: inout Hasher) {
    var sum = 0
    for (k, v) in effective {
      var h = Hasher()
      h.combine(k)
      h.combine(v)
      sum = sum &+ h.finalize()
    }
    hasher.combine(sum)
  }

  /// Name → value with the last member of each name winning.
  package var effective: [String: JSONValue] {
    var d: [String: JSONValue] = [:]
    for m in members { d[m.key] = m.value }
    return d
  }
}

extension String {
  /// True when this string's UTF-8 bytes are `bytes`: counts first, then a plain loop over contiguous
  /// storage (the generic `elementsEqual` of two UTF-8 views cost about 600 instructions a call).
  package func hasUTF8Bytes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    let own = utf8
    guard own.count == bytes.count else { return false }
    return own.withContiguousStorageIfAvailable { own in
      var i = 0
      while i < own.count {
        if own[i] != bytes[i] { return false }
        i += 1
      }
      return true
    } ?? own.elementsEqual(bytes)
  }
}
