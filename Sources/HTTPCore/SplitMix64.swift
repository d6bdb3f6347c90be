/// A small, fast, seedable generator (SplitMix64): reproducible delays, fault data, journal ids, template
/// helpers and schema samples under `--seed`. Not for secrets.
package struct SplitMix64: RandomNumberGenerator, Sendable {
  private var state: UInt64
  /// A generator whose sequence is fixed by `seed`.
  package init(seed: UInt64) { state = seed }
  /// The next 64 random bits.
  package mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
  /// Uniform in [0, 1).
  package mutating func nextDouble() -> Double { Double(next() >> 11) / Double(1 << 53) }

  /// A version-4 UUID string (lower-case, 36 characters) from two random words.
  package static func uuidString(_ a: UInt64, _ b: UInt64) -> String {
    withUUIDBytes(a, b) { String(decoding: $0, as: UTF8.self) }
  }

  /// `body` applied to the 36 ASCII bytes of ``uuidString(_:_:)`` (no `String` made).
  package static func withUUIDBytes<R>(_ a: UInt64, _ b: UInt64, _ body: (UnsafeBufferPointer<UInt8>) -> R)
    -> R
  {
    let a = (a & 0xFFFF_FFFF_FFFF_0FFF) | 0x0000_0000_0000_4000
    let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000
    var bytes: (UInt64, UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0, 0)  // 40 bytes of room for 36
    return withUnsafeMutableBytes(of: &bytes) { raw -> R in
      var out = 0
      // 16 nibbles of `word`, most significant first; a dash before nibble k when bit k of `dashes` is set.
      func put(_ word: UInt64, dashes: Int) {
        for k in 0..<16 {
          if dashes & (1 << k) != 0 {
            raw[out] = 45
            out += 1
          }
          let nibble = UInt8(truncatingIfNeeded: word >> UInt64(60 - 4 * k)) & 0xF
          raw[out] = nibble < 10 ? 48 + nibble : 87 + nibble
          out += 1
        }
      }
      put(a, dashes: 0x1100)
      put(b, dashes: 0x0011)
      return raw.withMemoryRebound(to: UInt8.self) { body(UnsafeBufferPointer(rebasing: $0[0..<out])) }
    }
  }

  /// A version-4-shaped UUID string derived from `text` alone, so the same text always gives the same id
  /// (ids of file stubs without one, of generated stubs). Two FNV-1a hashes of the UTF-8 bytes with
  /// different offset bases, each mixed by this generator's finalizer. An id, not a digest: no secrecy,
  /// and no cryptographic library to start.
  package static func stableUUIDString(_ text: String) -> String {
    var a: UInt64 = 0xcbf2_9ce4_8422_2325
    var b: UInt64 = 0x6c62_272e_07bb_0142
    // Over the contiguous bytes (the string's UTF-8 view cost about 30 instructions a byte; a load of
    // 10,000 stubs without ids hashes 10,000 of these).
    var text = text
    text.withUTF8 { bytes in
      for byte in bytes {
        a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        b = (b ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
      }
    }
    var first = SplitMix64(seed: a)
    var second = SplitMix64(seed: b)
    return uuidString(first.next(), second.next())
  }
}
