/// An ordered list of HTTP field lines (RFC 9110 §5).
///
/// Names compare case-insensitively (ASCII), the order of field lines and duplicates are kept exactly as
/// received or as added, and names keep the spelling they were given: the server never re-cases or merges
/// them. This is deliberately not a dictionary.
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

  /// The field lines in order.
  public private(set) var fields: [Field]

  /// Creates headers from `(name, value)` pairs, kept in the given order.
  public init(_ pairs: [(String, String)] = []) {
    fields = pairs.map { Field(name: $0.0, value: $0.1) }
  }

  /// Creates headers from a dictionary literal, in literal order.
  public init(dictionaryLiteral elements: (String, String)...) {
    self.init(elements)
  }

  /// Number of field lines.
  public var count: Int { fields.count }
  /// True when there are no field lines.
  public var isEmpty: Bool { fields.isEmpty }

  /// Iterates the field lines in order.
  public func makeIterator() -> IndexingIterator<[Field]> { fields.makeIterator() }

  /// Appends a field line, keeping any existing lines with the same name.
  public mutating func add(name: String, value: String) {
    fields.append(Field(name: name, value: value))
  }

  /// Replaces every line named `name` with a single line, placed where the first one was (or at the end).
  public mutating func replaceOrAdd(name: String, value: String) {
    if let index = fields.firstIndex(where: { $0.name.equalsIgnoringASCIICase(name) }) {
      fields[index].value = value
      var i = fields.count - 1
      while i > index {
        if fields[i].name.equalsIgnoringASCIICase(name) { fields.remove(at: i) }
        i -= 1
      }
    } else {
      add(name: name, value: value)
    }
  }

  /// Removes every line named `name` (case-insensitive).
  public mutating func remove(name: String) {
    fields.removeAll { $0.name.equalsIgnoringASCIICase(name) }
  }

  /// True when a line named `name` exists (case-insensitive).
  public func contains(_ name: String) -> Bool {
    fields.contains { $0.name.equalsIgnoringASCIICase(name) }
  }

  /// The value of the first line named `name`, or nil.
  public func first(_ name: String) -> String? {
    for field in fields where field.name.equalsIgnoringASCIICase(name) { return field.value }
    return nil
  }

  /// Every value of lines named `name`, in order.
  public func values(_ name: String) -> [String] {
    fields.compactMap { $0.name.equalsIgnoringASCIICase(name) ? $0.value : nil }
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
    for field in fields where field.name.equalsIgnoringASCIICase(name) {
      for element in field.value.utf8.split(separator: UInt8(ascii: ",")) {
        var start = element.startIndex
        var end = element.endIndex
        while start < end, element[start] == 32 || element[start] == 9 { start = element.index(after: start) }
        while end > start {
          let before = element.index(before: end)
          guard element[before] == 32 || element[before] == 9 else { break }
          end = before
        }
        if Substring(element[start..<end]).equalsIgnoringASCIICase(token) { return true }
      }
    }
    return false
  }

  /// `Name: value` lines joined by newlines.
  public var description: String {
    fields.map { "\($0.name): \($0.value)" }.joined(separator: "\n")
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
