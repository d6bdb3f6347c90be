#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif

/// Stub indexes by (method, literal value): the method of a `urlPath` or `url` stub (empty for ANY) and
/// its canonical path or url, each key's stubs in rank order.
///
/// An open-addressing table (linear probing, at most half full) over one flat buffer of key bytes: a
/// lookup hashes the request's bytes eight at a time and compares them with `memcmp`, with no `String`
/// made, no SipHash (`Hasher`) and no reference counting. The stored keys are the fixtures' own, so a
/// client cannot choose collisions among them; a request's key only probes the run its hash lands in.
package struct LiteralIndex: Sendable {
  /// One key: its hash and where its bytes and stubs are in the flat buffers.
  private struct Entry: Sendable {
    var hash: UInt64
    var methodStart: Int
    var methodCount: Int
    var valueStart: Int
    var valueCount: Int
    var stubsStart: Int
    var stubsCount: Int
  }

  private let entries: [Entry]
  /// Every key's method bytes then value bytes, key after key.
  private let keyBytes: [UInt8]
  /// Every key's stub indexes, key after key.
  private let stubIndexes: [Int]
  /// Entry index + 1 per slot, 0 for an empty slot; the count is a power of two.
  private let slots: [Int]
  /// True when a key has the empty method (a stub for ANY method).
  package let hasAnyMethod: Bool

  /// Builds the index from `keys`: a method (empty for ANY), a value and its stubs in rank order. Keys are
  /// distinct (the caller grouped the stubs by key).
  package init(_ keys: [(method: String, value: String, stubs: [Int])]) {
    var entries: [Entry] = []
    var keyBytes: [UInt8] = []
    var stubIndexes: [Int] = []
    entries.reserveCapacity(keys.count)
    for key in keys {
      let methodStart = keyBytes.count
      keyBytes.append(contentsOf: key.method.utf8)
      let valueStart = keyBytes.count
      keyBytes.append(contentsOf: key.value.utf8)
      let stubsStart = stubIndexes.count
      stubIndexes.append(contentsOf: key.stubs)
      entries.append(
        Entry(
          hash: 0, methodStart: methodStart, methodCount: valueStart - methodStart, valueStart: valueStart,
          valueCount: keyBytes.count - valueStart, stubsStart: stubsStart, stubsCount: key.stubs.count))
    }
    var capacity = 8
    while capacity < entries.count * 2 { capacity *= 2 }
    var slots = [Int](repeating: 0, count: capacity)
    keyBytes.withUnsafeBufferPointer { bytes in
      for i in entries.indices {
        let e = entries[i]
        let h = LiteralIndex.hash(
          method: UnsafeBufferPointer(rebasing: bytes[e.methodStart..<(e.methodStart + e.methodCount)]),
          value: UnsafeBufferPointer(rebasing: bytes[e.valueStart..<(e.valueStart + e.valueCount)]))
        entries[i].hash = h
        var slot = Int(truncatingIfNeeded: h) & (capacity - 1)
        while slots[slot] != 0 { slot = (slot + 1) & (capacity - 1) }
        slots[slot] = i + 1
      }
    }
    self.entries = entries
    self.keyBytes = keyBytes
    self.stubIndexes = stubIndexes
    self.slots = slots
    hasAnyMethod = keys.contains { $0.method.isEmpty }
  }

  /// True when no key is indexed.
  package var isEmpty: Bool { entries.isEmpty }

  /// The best-ranked stub of (`method`, `value`), or nil.
  package func first(method: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Int? {
    guard let e = entry(method: method, value: value) else { return nil }
    return stubIndexes[e.stubsStart]
  }

  /// The stubs of (`method`, `value`) in rank order, or nil.
  package func stubs(method: String, value: String) -> ArraySlice<Int>? {
    var method = method
    var value = value
    let found = method.withUTF8 { m in value.withUTF8 { v in entry(method: m, value: v) } }
    guard let e = found else { return nil }
    return stubIndexes[e.stubsStart..<(e.stubsStart + e.stubsCount)]
  }

  private func entry(method: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> Entry? {
    guard !entries.isEmpty else { return nil }
    let h = LiteralIndex.hash(method: method, value: value)
    let mask = slots.count - 1
    return slots.withUnsafeBufferPointer { slots in
      entries.withUnsafeBufferPointer { entries in
        keyBytes.withUnsafeBufferPointer { bytes in
          var slot = Int(truncatingIfNeeded: h) & mask
          while true {
            let s = slots[slot]
            if s == 0 { return nil }
            let e = entries[s - 1]
            if e.hash == h, e.methodCount == method.count, e.valueCount == value.count,
              LiteralIndex.equal(bytes.baseAddress, e.methodStart, method),
              LiteralIndex.equal(bytes.baseAddress, e.valueStart, value)
            {
              return e
            }
            slot = (slot + 1) & mask
          }
        }
      }
    }
  }

  /// True when the `other.count` bytes of `base` from `start` are `other`'s.
  @inline(__always)
  private static func equal(_ base: UnsafePointer<UInt8>?, _ start: Int, _ other: UnsafeBufferPointer<UInt8>)
    -> Bool
  {
    guard let base, let o = other.baseAddress, !other.isEmpty else { return true }
    return memcmp(base + start, o, other.count) == 0
  }

  /// A 64-bit hash of the key: the method, its length, then the value, mixed eight bytes a step (a
  /// multiply and xor-shift per word).
  static func hash(method: UnsafeBufferPointer<UInt8>, value: UnsafeBufferPointer<UInt8>) -> UInt64 {
    var h: UInt64 = 0x243F_6A88_85A3_08D3
    mix(method, into: &h)
    h = (h ^ UInt64(method.count)) &* 0x9E37_79B9_7F4A_7C15
    mix(value, into: &h)
    h ^= UInt64(value.count)
    h = (h ^ (h &>> 29)) &* 0xBF58_476D_1CE4_E5B9
    return h ^ (h &>> 32)
  }

  @inline(__always)
  private static func mix(_ bytes: UnsafeBufferPointer<UInt8>, into h: inout UInt64) {
    guard let base = bytes.baseAddress else { return }
    let raw = UnsafeRawPointer(base)
    var i = 0
    let n = bytes.count
    while n - i >= 8 {
      h = (h ^ raw.loadUnaligned(fromByteOffset: i, as: UInt64.self)) &* 0x9E37_79B9_7F4A_7C15
      h ^= h &>> 31
      i &+= 8
    }
    if i < n {
      var tail: UInt64 = 0
      var shift: UInt64 = 0
      while i < n {
        tail |= UInt64(base[i]) &<< shift
        shift &+= 8
        i &+= 1
      }
      h = (h ^ tail) &* 0x9E37_79B9_7F4A_7C15
      h ^= h &>> 31
    }
  }
}
