import HTTPCore
import Testing

@testable import Mappings

/// The literal-path index answers as a dictionary keyed by (method, value) does, for keys made to collide
/// in the ways a word-at-a-time hash can go wrong: lengths on both sides of every word boundary, keys
/// that differ only in their last byte or only in where the method ends, the empty method and value.
@Suite("LiteralIndex: the same answers as a dictionary")
struct LiteralIndexTests {
  struct Key: Hashable {
    var method: String
    var value: String
  }

  static func keys() -> [Key] {
    var keys: Set<Key> = []
    for method in ["", "GET", "POST", "GE", "TGET", "DELETE", "OPTIONSX"] {
      for length in 0..<20 {
        let value = "/" + String(repeating: "a", count: length)
        keys.insert(Key(method: method, value: value))
        keys.insert(Key(method: method, value: value + "b"))
        keys.insert(Key(method: method, value: String(value.dropFirst())))
      }
      keys.insert(Key(method: method, value: "/caf\u{E9}/\u{1F600}"))
    }
    // The same bytes split between method and value differently.
    keys.insert(Key(method: "GETT", value: "/x"))
    keys.insert(Key(method: "GET", value: "T/x"))
    var random = SplitMix64(seed: 7)
    for i in 0..<2_000 {
      let length = Int(random.next() % 48)
      let value =
        "/" + String((0..<length).map { _ in Character(UnicodeScalar(UInt8(97 + random.next() % 26))) })
      keys.insert(Key(method: ["GET", "PUT", ""][i % 3], value: value))
    }
    return Array(keys)
  }

  @Test func agreesWithADictionary() {
    let keys = Self.keys()
    var expected: [Key: [Int]] = [:]
    for (i, key) in keys.enumerated() { expected[key] = [i, i + 100_000] }
    let index = LiteralIndex(expected.map { ($0.key.method, $0.key.value, $0.value) })
    #expect(index.hasAnyMethod)
    #expect(!index.isEmpty)
    var probes = keys
    // Absent keys next to present ones: a byte more, a byte less, another method.
    for key in keys.prefix(500) {
      probes.append(Key(method: key.method, value: key.value + "z"))
      probes.append(Key(method: key.method, value: String(key.value.dropLast())))
      probes.append(Key(method: key.method + "S", value: key.value))
    }
    var checked = 0
    for probe in probes {
      let want = expected[probe]
      #expect(index.stubs(method: probe.method, value: probe.value).map(Array.init) == want, "\(probe)")
      var method = probe.method
      var value = probe.value
      let first = method.withUTF8 { m in value.withUTF8 { v in index.first(method: m, value: v) } }
      #expect(first == want?.first, "\(probe)")
      checked += 1
    }
    #expect(checked == probes.count && checked > 2_000)
  }

  @Test func emptyIndexFindsNothing() {
    let index = LiteralIndex([])
    #expect(index.isEmpty && !index.hasAnyMethod)
    #expect(index.stubs(method: "GET", value: "/") == nil)
  }
}
