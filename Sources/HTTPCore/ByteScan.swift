/// Searches of message bytes eight at a time (SWAR: one 64-bit word per step), for the parser's scans
/// for LF, SP and `:` in a head.
enum ByteScan {
  /// A word with 0x80 in each byte position where `word` holds `byte`, and 0 elsewhere (exact: no false
  /// positives from borrows, unlike the shorter `(x - 0x01…) & ~x & 0x80…` test).
  @inline(__always)
  static func matches(_ word: UInt64, _ byte: UInt8) -> UInt64 {
    let low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    let x = word ^ (0x0101_0101_0101_0101 &* UInt64(byte))
    let t = (x & low7) &+ low7
    return ~(t | x | low7)
  }

  /// The index of the first `byte` in `base[from..<end]`, or `end` when there is none.
  @inline(__always)
  static func firstIndex(of byte: UInt8, in base: UnsafePointer<UInt8>, from: Int, to end: Int) -> Int {
    var i = from
    let raw = UnsafeRawPointer(base)
    while end - i >= 8 {
      let m = matches(UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)), byte)
      if m != 0 { return i &+ m.trailingZeroBitCount &>> 3 }
      i &+= 8
    }
    while i < end {
      if base[i] == byte { return i }
      i &+= 1
    }
    return end
  }

  /// How many times `byte` occurs in `base[from..<end]`.
  static func count(of byte: UInt8, in base: UnsafePointer<UInt8>, from: Int, to end: Int) -> Int {
    var i = from
    var n = 0
    let raw = UnsafeRawPointer(base)
    while end - i >= 8 {
      n &+= matches(raw.loadUnaligned(fromByteOffset: i, as: UInt64.self), byte).nonzeroBitCount
      i &+= 8
    }
    while i < end {
      if base[i] == byte { n &+= 1 }
      i &+= 1
    }
    return n
  }

  /// The index of the first control character other than HTAB (0x00–0x08, 0x0A–0x1F, 0x7F: what a field
  /// value may not hold, RFC 9110 §5.5) in `base[from..<end]`, or `end` when there is none. A word with no
  /// byte below 0x20 and no 0x7F is passed whole; a word with one (a tab, mostly) is tested byte by byte.
  @inline(__always)
  static func firstControl(in base: UnsafePointer<UInt8>, from: Int, to end: Int) -> Int {
    var i = from
    let raw = UnsafeRawPointer(base)
    let ones: UInt64 = 0x0101_0101_0101_0101
    let highs: UInt64 = 0x8080_8080_8080_8080
    while end - i >= 8 {
      let x = UInt64(littleEndian: raw.loadUnaligned(fromByteOffset: i, as: UInt64.self))
      // Some byte below 0x20 (exact as an existence test: bytes of 0x80 and above are masked by ~x).
      let below = (x &- ones &* 0x20) & ~x & highs
      if below | matches(x, 0x7F) != 0 {
        for k in i..<(i &+ 8) where isControl(base[k]) { return k }
      }
      i &+= 8
    }
    while i < end {
      if isControl(base[i]) { return i }
      i &+= 1
    }
    return end
  }

  /// A control character other than HTAB.
  @inline(__always)
  static func isControl(_ b: UInt8) -> Bool { (b < 32 && b != 9) || b == 127 }

  /// True when no byte of `base[from..<end]` is 0x80 or above.
  static func isASCII(_ base: UnsafePointer<UInt8>, from: Int, to end: Int) -> Bool {
    var i = from
    var high: UInt64 = 0
    let raw = UnsafeRawPointer(base)
    while end - i >= 8 {
      high |= raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)
      i &+= 8
    }
    while i < end {
      high |= UInt64(base[i])
      i &+= 1
    }
    return high & 0x8080_8080_8080_8080 == 0
  }
}

/// A set of ASCII bytes as a 128-bit mask: one shift and test per byte instead of a chain of range
/// comparisons. Bytes of 128 and above are never members.
struct ASCIISet {
  /// Bit `b` set for member byte `b` in 0–63.
  let low: UInt64
  /// Bit `b - 64` set for member byte `b` in 64–127.
  let high: UInt64

  /// True when `byte` is a member.
  @inline(__always)
  func contains(_ byte: UInt8) -> Bool {
    if byte < 64 { return (low &>> UInt64(byte)) & 1 != 0 }
    return byte < 128 && (high &>> UInt64(byte &- 64)) & 1 != 0
  }

  /// `tchar` (RFC 9110 §5.6.2): `!#$%&'*+-.^_`|~`, DIGIT, ALPHA.
  static let tchar = ASCIISet(low: 0x03FF_6CFA_0000_0000, high: 0x57FF_FFFF_C7FF_FFFE)
  /// The characters of a `reg-name` (RFC 3986 §3.2.2): unreserved, the `%` of pct-encoded, sub-delims.
  static let regName = ASCIISet(low: 0x2BFF_7FF2_0000_0000, high: 0x47FF_FFFE_87FF_FFFE)
}
