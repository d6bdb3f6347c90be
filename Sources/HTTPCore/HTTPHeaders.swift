/// An ordered list of HTTP field lines (RFC 9110 §5).
///
/// Names compare case-insensitively (ASCII), the order of field lines and duplicates are kept exactly as
/// received or as added, and names keep the spelling they were given: the server never re-cases or merges
/// them. This is deliberately not a dictionary.
///
/// Fields a parser received stay as the received bytes with the range of each name and value (one
/// allocation); lookups compare those bytes, and a `String` is made only for a value asked for (or for
/// every field by ``fields`` and iteration). The first change makes them authored fields.
public struct HTTPHeaders: Sendable, Hashable, Sequence, ExpressibleByDictionaryLiteral,
  CustomStringConvertible
{
  /// One field line: the name as spelled, and the value with surrounding whitespace removed.
  public struct Field: Sendable, Hashable {
    /// Field name as spelled on the wire or by the author.
    public var name: String
    /// Field value, without leading or trailing whitespace (RFC 9110 §5.5).
    public var value: String
    /// Creates a field line.
    public init(name: String, value: String) {
      self.name = name
      self.value = value
    }
  }

  /// Fields added by code, or as a parser received them (until the first change). One reference either
  /// way, so copying headers costs one retain. `@unchecked Sendable`: a ``ReceivedFields`` buffer (not
  /// `Sendable` as a `ManagedBuffer`) is never changed after the parser made it.
  private enum Storage: @unchecked Sendable {
    case authored([Field])
    case received(ReceivedFields)
  }

  private var storage: Storage

  /// The field lines in order.
  public var fields: [Field] {
    switch storage {
    case .authored(let fields): return fields
    case .received(let r): return r.fields
    }
  }

  /// Creates headers from `(name, value)` pairs, kept in the given order.
  public init(_ pairs: [(String, String)] = []) {
    storage = .authored(pairs.map { Field(name: $0.0, value: $0.1) })
  }

  /// Creates headers from a dictionary literal, in literal order.
  public init(dictionaryLiteral elements: (String, String)...) {
    self.init(elements)
  }

  /// Headers over received field lines (see ``ReceivedFields``).
  package init(received: ReceivedFields) {
    storage = received.count == 0 ? .authored([]) : .received(received)
  }

  /// Number of field lines.
  public var count: Int {
    switch storage {
    case .authored(let fields): return fields.count
    case .received(let r): return r.count
    }
  }
  /// True when there are no field lines.
  public var isEmpty: Bool { count == 0 }

  /// Iterates the field lines in order.
  public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

  /// Changes the fields as authored ones (received ones are converted first), without copying the array.
  private mutating func changeFields(_ change: (inout [Field]) -> Void) {
    var fields = self.fields
    storage = .authored([])
    change(&fields)
    storage = .authored(fields)
  }

  /// Appends a field line, keeping any existing lines with the same name.
  public mutating func add(name: String, value: String) {
    changeFields { $0.append(Field(name: name, value: value)) }
  }

  /// Replaces every line named `name` with a single line, placed where the first one was (or at the end).
  public mutating func replaceOrAdd(name: String, value: String) {
    changeFields { fields in
      if let index = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) {
        fields[index].value = value
        var i = fields.count - 1
        while i > index {
          if fields[i].name.equalsIgnoringASCIICase(name) { fields.remove(at: i) }
          i -= 1
        }
      } else {
        fields.append(Field(name: name, value: value))
      }
    }
  }

  /// Removes every line named `name` (case-insensitive).
  public mutating func remove(name: String) {
    changeFields { $0.removeAll { $0.name.equalsIgnoringASCIICase(name) } }
  }

  // The lookups switch on `storage` in place: binding the received buffer through an optional getter
  // retained and released it on every call (about 40 of a lookup's 110 instructions).

  /// True when a line named `name` exists (case-insensitive).
  public func contains(_ name: String) -> Bool {
    switch storage {
    case .received(let r): return r.firstIndex(named: name, from: 0) != nil
    case .authored(let fields): return fields.contains { $0.name.equalsIgnoringASCIICase(name) }
    }
  }

  /// The value of the first line named `name`, or nil.
  public func first(_ name: String) -> String? {
    switch storage {
    case .received(let r): return r.firstIndex(named: name, from: 0).map(r.value)
    case .authored(let fields):
      for field in fields where field.name.equalsIgnoringASCIICase(name) { return field.value }
      return nil
    }
  }

  /// Every value of lines named `name`, in order.
  public func values(_ name: String) -> [String] {
    switch storage {
    case .received(let r):
      var values: [String] = []
      var i = 0
      while let k = r.firstIndex(named: name, from: i) {
        values.append(r.value(k))
        i = k + 1
      }
      return values
    case .authored(let fields):
      return fields.compactMap { $0.name.equalsIgnoringASCIICase(name) ? $0.value : nil }
    }
  }

  /// `body` applied to the UTF-8 bytes of the first value named `name` (received bytes as they are), and
  /// whether a later line has the name too; nil when no line has it. One pass over the lines.
  package func withFirstValueBytes<R>(
    _ name: String, _ body: (UnsafeBufferPointer<UInt8>) -> R
  ) -> (result: R, repeated: Bool)? {
    switch storage {
    case .received(let r):
      guard let k = r.firstIndex(named: name, from: 0) else { return nil }
      return (r.withValueBytes(k, body), r.firstIndex(named: name, from: k + 1) != nil)
    case .authored(let fields):
      guard let k = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) else { return nil }
      var value = fields[k].value
      let repeated = fields[(k + 1)...].contains { $0.name.equalsIgnoringASCIICase(name) }
      return (value.withUTF8(body), repeated)
    }
  }

  /// `body` applied to the bytes of each field line's name and value, in order, without a `String` per
  /// field: received fields as received (a value may hold bytes that are not UTF-8, obs-text), authored
  /// ones as their UTF-8.
  package func forEachFieldBytes(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
    switch storage {
    case .received(let r): r.forEachFieldBytes(body)
    case .authored(let fields):
      for field in fields {
        var name = field.name
        var value = field.value
        name.withUTF8 { n in value.withUTF8 { v in body(n, v) } }
      }
    }
  }

  /// Sum of the UTF-8 lengths of every name and value (what the `String`s of ``fields`` would hold).
  package var nameAndValueBytes: Int {
    switch storage {
    case .received(let r): return r.nameAndValueBytes
    case .authored(let fields): return fields.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count }
    }
  }

  /// The values of every line named `name` combined with ", " in order (RFC 9110 §5.3), or nil.
  /// Do not use for `Set-Cookie`, whose lines cannot be combined.
  public subscript(name: String) -> String? {
    let all = values(name)
    return all.isEmpty ? nil : all.joined(separator: ", ")
  }

  /// The comma-separated list elements of every line named `name`, trimmed, empty elements dropped
  /// (RFC 9110 §5.6.1).
  public func listElements(_ name: String) -> [String] {
    values(name).flatMap { $0.split(separator: ",") }.map { $0.trimmingOWS() }.filter { !$0.isEmpty }
  }

  /// True when the list field `name` holds `token` (case-insensitive), e.g. `Connection: close`.
  public func hasToken(_ token: String, in name: String) -> Bool {
    switch storage {
    case .received(let r):
      var i = 0
      while let k = r.firstIndex(named: name, from: i) {
        if r.withValueBytes(k, { HTTPHeaders.listHasToken($0, token) }) { return true }
        i = k + 1
      }
      return false
    case .authored(let fields):
      for field in fields where field.name.equalsIgnoringASCIICase(name) {
        var value = field.value
        if value.withUTF8({ HTTPHeaders.listHasToken($0, token) }) { return true }
      }
      return false
    }
  }

  /// True when the comma-separated list `value` has an element (OWS trimmed) equal to `token`, ignoring
  /// ASCII case.
  private static func listHasToken(_ value: UnsafeBufferPointer<UInt8>, _ token: String) -> Bool {
    var token = token
    return token.withUTF8 { t in
      var start = 0
      let n = value.count
      while start <= n {
        var end = start
        while end < n, value[end] != UInt8(ascii: ",") { end += 1 }
        var s = start
        var e = end
        while s < e, value[s] == 32 || value[s] == 9 { s += 1 }
        while e > s, value[e - 1] == 32 || value[e - 1] == 9 { e -= 1 }
        if e - s == t.count, t.isEmpty || ReceivedFields.equalsIgnoringASCIICase(value.baseAddress! + s, t) {
          return true
        }
        start = end + 1
      }
      return false
    }
  }

  /// `Name: value` lines joined by newlines.
  public var description: String {
    fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
  }

  /// Equal when the field lines are, in order (however they are stored).
  public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
    lhs.count == rhs.count && lhs.fields == rhs.fields
  }

  /// Hashes the field lines in order.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(fields)
  }
}

/// Field lines as a parser received them, in one allocation: the field section's bytes followed by a
/// table of 16 bytes per field line (name start, name end, value start, value end: `UInt32` offsets into
/// those bytes). The parser has checked every line (names are tokens, values have no control
/// characters); the object is not changed after ``ReceivedFields/make(sectionBytes:lineBound:fill:)``
/// returns it.
package final class ReceivedFields: ManagedBuffer<ReceivedFields.Header, UInt8> {
  /// The number of field lines and where the table starts (the length of the field section).
  package struct Header {
    var count: Int
    var tableOffset: Int
    /// Bit `min(length, 63)` set for the length of every field name: a lookup of a name whose length no
    /// field has (most lookups: `Transfer-Encoding`, `Expect`, `Content-Encoding` of a GET) ends at once,
    /// without a pass over the table.
    var nameLengths: UInt64
  }

  /// Size of one table entry.
  package static let entryBytes = 16

  /// A buffer for a field section of `sectionBytes` bytes with at most `lineBound` lines; `fill` gets
  /// the element storage, copies the section to its start, writes an entry per field line after it, and
  /// returns the number of lines.
  package static func make(
    sectionBytes: Int, lineBound: Int, fill: (UnsafeMutablePointer<UInt8>) -> Int
  ) -> ReceivedFields {
    let buffer = unsafeDowncast(
      ReceivedFields.create(minimumCapacity: sectionBytes + lineBound * entryBytes) { _ in
        Header(count: 0, tableOffset: sectionBytes, nameLengths: 0)
      }, to: ReceivedFields.self)
    buffer.withUnsafeMutablePointers { header, elements in
      let count = fill(elements)
      header.pointee.count = count
      var lengths: UInt64 = 0
      for i in 0..<count {
        let length =
          offset(UnsafePointer(elements), sectionBytes, i, 1)
          &- offset(UnsafePointer(elements), sectionBytes, i, 0)
        lengths |= 1 &<< UInt64(min(length, 63))
      }
      header.pointee.nameLengths = lengths
    }
    return buffer
  }

  // The header is read through its pointer: the `header` property of `ManagedBuffer` is a class property
  // with a dynamic exclusivity check (`swift_beginAccess`) per read.

  /// Number of field lines.
  package var count: Int { withUnsafeMutablePointerToHeader { $0.pointee.count } }

  /// Offset `part` (0 name start, 1 name end, 2 value start, 3 value end) of field `i`.
  @inline(__always)
  private static func offset(_ base: UnsafePointer<UInt8>, _ table: Int, _ i: Int, _ part: Int) -> Int {
    Int(
      UnsafeRawPointer(base).loadUnaligned(
        fromByteOffset: table &+ i &* entryBytes &+ part &* 4, as: UInt32.self))
  }

  /// `body` applied to the element storage, the table offset and the count.
  @inline(__always)
  private func withBytes<R>(_ body: (UnsafePointer<UInt8>, Int, Int) throws -> R) rethrows -> R {
    try withUnsafeMutablePointers { header, elements in
      try body(UnsafePointer(elements), header.pointee.tableOffset, header.pointee.count)
    }
  }

  /// Index of the first field at or after `start` whose name is `name` (ASCII case-insensitive).
  @inline(__always)  // inlined, its callers need not retain the buffer around an opaque call
  package func firstIndex(named name: String, from start: Int) -> Int? {
    // The length test first: most lookups are of names no field has, and `utf8.count` is O(1).
    guard hasName(ofLength: name.utf8.count) else { return nil }
    return name.utf8.withContiguousStorageIfAvailable { n in firstIndex(named: n, from: start) }
      ?? Array(name.utf8).withUnsafeBufferPointer { firstIndex(named: $0, from: start) }
  }

  /// False when no field name is `length` bytes long (``Header/nameLengths``).
  @inline(__always)
  private func hasName(ofLength length: Int) -> Bool {
    withUnsafeMutablePointerToHeader { $0.pointee.nameLengths } & (1 &<< UInt64(min(length, 63))) != 0
  }

  /// The same on `n`'s bytes; the caller has checked ``hasName(ofLength:)``.
  @inline(__always)
  private func firstIndex(named n: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
    withBytes { base, table, count in
      var i = start
      while i < count {
        let ns = Self.offset(base, table, i, 0)
        if Self.offset(base, table, i, 1) &- ns == n.count, Self.equalsIgnoringASCIICase(base + ns, n) {
          return i
        }
        i += 1
      }
      return nil
    }
  }

  /// `body` applied to the value bytes of field `i`.
  package func withValueBytes<R>(_ i: Int, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
    withBytes { base, table, _ in
      let vs = Self.offset(base, table, i, 2)
      return body(UnsafeBufferPointer(start: base + vs, count: Self.offset(base, table, i, 3) - vs))
    }
  }

  /// `body` applied to the name and value bytes of every field, in order.
  package func forEachFieldBytes(_ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
    withBytes { base, table, count in
      for i in 0..<count {
        let ns = Self.offset(base, table, i, 0)
        let vs = Self.offset(base, table, i, 2)
        body(
          UnsafeBufferPointer(start: base + ns, count: Self.offset(base, table, i, 1) - ns),
          UnsafeBufferPointer(start: base + vs, count: Self.offset(base, table, i, 3) - vs))
      }
    }
  }

  /// The name of field `i`.
  package func name(_ i: Int) -> String { string(i, 0) }
  /// The value of field `i`.
  package func value(_ i: Int) -> String { string(i, 2) }

  private func string(_ i: Int, _ part: Int) -> String {
    withBytes { base, table, _ in
      let s = Self.offset(base, table, i, part)
      let e = Self.offset(base, table, i, part + 1)
      return String(decoding: UnsafeBufferPointer(start: base + s, count: e - s), as: UTF8.self)
    }
  }

  /// Every field line as a ``HTTPHeaders/Field``.
  package var fields: [HTTPHeaders.Field] {
    (0..<count).map { HTTPHeaders.Field(name: name($0), value: value($0)) }
  }

  /// Sum of the UTF-8 lengths of the names' and values' `String`s (a value with bytes that are not UTF-8
  /// is measured as decoded, with replacement characters, as its `String` would be).
  package var nameAndValueBytes: Int {
    withBytes { base, table, count in
      // A section of ASCII bytes (most) is measured by its ranges; otherwise values are decoded.
      let ascii = ByteScan.isASCII(base, from: 0, to: table)
      var total = 0
      for i in 0..<count {
        total += Self.offset(base, table, i, 1) - Self.offset(base, table, i, 0)
        let vs = Self.offset(base, table, i, 2)
        let value = UnsafeBufferPointer(start: base + vs, count: Self.offset(base, table, i, 3) - vs)
        total +=
          ascii || !value.contains { $0 >= 0x80 }
          ? value.count : String(decoding: value, as: UTF8.self).utf8.count
      }
      return total
    }
  }

  /// True when the `other.count` bytes at `p` equal `other`, ignoring ASCII case.
  @inline(__always)
  static func equalsIgnoringASCIICase(_ p: UnsafePointer<UInt8>, _ other: UnsafeBufferPointer<UInt8>) -> Bool
  {
    for i in 0..<other.count {
      let a = p[i]
      let b = other[i]
      if a == b { continue }
      if a | 0x20 != b | 0x20 { return false }
      let l = a | 0x20
      if l < 97 || l > 122 { return false }
    }
    return true
  }
}

extension StringProtocol {
  /// ASCII case-insensitive comparison, as field names and tokens require (RFC 9110 §5.1).
  @inlinable
  public func equalsIgnoringASCIICase<S: StringProtocol>(_ other: S) -> Bool {
    let a = utf8
    let b = other.utf8
    guard a.count == b.count else { return false }
    // Contiguous UTF-8 (native and small strings): compare the bytes directly; the iterators below cost
    // several times more per byte, and field names are compared on every request.
    if let equal = a.withContiguousStorageIfAvailable({ x in
      b.withContiguousStorageIfAvailable { y -> Bool in
        for i in 0..<x.count {
          let p = x[i]
          let q = y[i]
          if p == q { continue }
          if p | 0x20 != q | 0x20 { return false }
          let l = p | 0x20
          if l < 97 || l > 122 { return false }
        }
        return true
      }
    }), let equal {
      return equal
    }
    var ib = b.makeIterator()
    for x in a {
      guard let y = ib.next() else { return false }
      if x == y { continue }
      let lx = (x >= 65 && x <= 90) ? x | 0x20 : x
      let ly = (y >= 65 && y <= 90) ? y | 0x20 : y
      if lx != ly { return false }
    }
    return true
  }

  /// The string lower-cased in ASCII only (other characters unchanged).
  public func lowercasedASCII() -> String {
    String(decoding: utf8.map { ($0 >= 65 && $0 <= 90) ? $0 | 0x20 : $0 }, as: UTF8.self)
  }

  /// The string without leading and trailing spaces and horizontal tabs (OWS, RFC 9110 §5.6.3).
  public func trimmingOWS() -> String {
    let bytes = Array(utf8)
    var start = 0
    var end = bytes.count
    while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
    while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
    return String(decoding: bytes[start..<end], as: UTF8.self)
  }
}

extension String {
  /// The string without leading and trailing spaces and horizontal tabs (OWS, RFC 9110 §5.6.3): itself,
  /// not a copy, when it has none (most values: the parser drops OWS from received fields).
  public func trimmingOWS() -> String {
    guard let first = utf8.first, let last = utf8.last else { return self }
    if first != 0x20 && first != 0x09 && last != 0x20 && last != 0x09 { return self }
    return self[...].trimmingOWS()
  }
}
