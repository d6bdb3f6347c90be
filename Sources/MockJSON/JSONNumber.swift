/// A JSON number kept as its exact decimal text (RFC 8259 §6).
///
/// Equality and ordering are by exact decimal value, never through `Double`: `1`, `1.0`, `1e0` and `10e-1`
/// are equal, while `9007199254740993` and `9007199254740992` differ. `text` keeps the spelling found in
/// the source, so serializing a parsed document writes numbers back exactly as they were written.
public struct JSONNumber: Sendable, Hashable, Comparable, CustomStringConvertible {
  /// The number as written, e.g. `275.0` or `-1.5e3`; always valid JSON number grammar.
  public let text: String
  // Field order matters: `negative` comes last. `JSONValue` keeps its case in spare bits its payloads
  // share, the highest ones first: with `negative` last, those are the spare bits of that `Bool`.
  // With `negative` before `digits`, the case went into the high bits of the `digits` buffer pointer,
  // which LeakSanitizer then no longer recognizes as a pointer: every number kept in a stub's source
  // JSON was reported as a leak (`make fuzz`, admin fuzzer). Pinned by a test in `JSONValueTests`.
  /// Significant decimal digits (0...9), without leading or trailing zeros; empty for zero.
  package let digits: [UInt8]
  /// Value is `0.d1d2d3… × 10^exponent`.
  package let exponent: Int
  /// True when the value is below zero (zero is never negative, so `-0` equals `0`).
  package let negative: Bool

  /// Creates a number from JSON number text; nil when `text` is not a JSON number (`01`, `1.`, `+1`, `.5`).
  public init?(text: String) {
    guard let parsed = JSONNumber.parse(Array(text.utf8)) else { return nil }
    self.text = text
    self.negative = parsed.negative
    self.digits = parsed.digits
    self.exponent = parsed.exponent
  }

  /// Creates a number from an integer; its text is the decimal form.
  public init(_ value: Int) {
    // Decimal text of an Int is always valid JSON number grammar.
    let text = String(value)
    let parsed = JSONNumber.parse(Array(text.utf8)) ?? (false, [], 0)
    self.text = text
    self.negative = parsed.negative
    self.digits = parsed.digits
    self.exponent = parsed.exponent
  }

  /// The text as written.
  public var description: String { text }

  /// True when the value has no fractional part (`3`, `3.0`, `3e2`, `300e-2`).
  public var isInteger: Bool { digits.count <= max(exponent, 0) || digits.isEmpty }

  /// The value as an `Int` when it is an integer that fits, otherwise nil (`2.5`, `1e40`).
  public var intValue: Int? {
    guard isInteger else { return nil }
    if digits.isEmpty { return 0 }
    guard exponent <= 19 else { return nil }
    var value = 0
    for i in 0..<exponent {
      let d = i < digits.count ? Int(digits[i]) : 0
      let (m, o1) = value.multipliedReportingOverflow(by: 10)
      let (s, o2) = negative ? m.subtractingReportingOverflow(d) : m.addingReportingOverflow(d)
      if o1 || o2 { return nil }
      value = s
    }
    return value
  }

  /// The nearest `Double` (for delays and distributions, never for comparisons).
  public var doubleValue: Double { Double(text) ?? .nan }

  /// Equality by decimal value.
  public static func == (a: JSONNumber, b: JSONNumber) -> Bool {
    a.negative == b.negative && a.digits == b.digits && (a.digits.isEmpty || a.exponent == b.exponent)
  }

  /// Hash consistent with value equality.
  public func hash(into hasher: inout Hasher) {
    hasher.combine(negative)
    hasher.combine(digits)
    if !digits.isEmpty { hasher.combine(exponent) }
  }

  /// Ordering by decimal value.
  public static func < (a: JSONNumber, b: JSONNumber) -> Bool {
    if a == b { return false }
    let aSign = a.digits.isEmpty ? 0 : (a.negative ? -1 : 1)
    let bSign = b.digits.isEmpty ? 0 : (b.negative ? -1 : 1)
    if aSign != bSign { return aSign < bSign }
    // Same sign, both non-zero (zero case handled by signs).
    let magnitudeLess: Bool
    if a.exponent != b.exponent {
      magnitudeLess = a.exponent < b.exponent
    } else {
      magnitudeLess = a.digits.lexicographicallyPrecedes(b.digits)
    }
    return aSign > 0 ? magnitudeLess : !magnitudeLess
  }

  /// Parses JSON number grammar into sign, significant digits and exponent; nil when invalid.
  package static func parse(_ b: [UInt8]) -> (negative: Bool, digits: [UInt8], exponent: Int)? {
    var i = 0
    var negative = false
    if i < b.count, b[i] == UInt8(ascii: "-") {
      negative = true
      i += 1
    }
    guard i < b.count, isDigit(b[i]) else { return nil }
    var intDigits: [UInt8] = []
    if b[i] == UInt8(ascii: "0") {
      intDigits.append(0)
      i += 1
    } else {
      while i < b.count, isDigit(b[i]) {
        intDigits.append(b[i] - 48)
        i += 1
      }
    }
    var fracDigits: [UInt8] = []
    if i < b.count, b[i] == UInt8(ascii: ".") {
      i += 1
      guard i < b.count, isDigit(b[i]) else { return nil }
      while i < b.count, isDigit(b[i]) {
        fracDigits.append(b[i] - 48)
        i += 1
      }
    }
    var exp = 0
    if i < b.count, b[i] == UInt8(ascii: "e") || b[i] == UInt8(ascii: "E") {
      i += 1
      var expNegative = false
      if i < b.count, b[i] == UInt8(ascii: "+") || b[i] == UInt8(ascii: "-") {
        expNegative = b[i] == UInt8(ascii: "-")
        i += 1
      }
      guard i < b.count, isDigit(b[i]) else { return nil }
      // Exponents saturate at ±10^15 (far beyond any meaningful number), so arithmetic never overflows.
      let limit = 1_000_000_000_000_000
      while i < b.count, isDigit(b[i]) {
        exp = min(exp * 10 + Int(b[i] - 48), limit)
        i += 1
      }
      if expNegative { exp = -exp }
    }
    guard i == b.count else { return nil }
    var all = intDigits + fracDigits
    var pointPosition = intDigits.count
    var lead = 0
    while lead < all.count, all[lead] == 0 { lead += 1 }
    if lead == all.count { return (false, [], 0) }
    all.removeFirst(lead)
    pointPosition -= lead
    while let last = all.last, last == 0 { all.removeLast() }
    let (e, overflow) = pointPosition.addingReportingOverflow(exp)
    return (negative, all, overflow ? (exp > 0 ? Int.max / 4 : Int.min / 4) : e)
  }

  @inline(__always) static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
}
