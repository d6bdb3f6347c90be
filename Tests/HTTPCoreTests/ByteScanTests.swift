import Testing

@testable import HTTPCore

/// The parser's word-at-a-time searches against a byte loop, on inputs made to trip the usual SWAR
/// mistakes: bytes next to the one searched for (0x09, 0x0B, 0x8A), 0x00 and 0xFF, matches in every byte
/// position of a word, unaligned starts and ends.
@Suite("ByteScan: eight bytes a step, the same answers as a byte loop")
struct ByteScanTests {
  static let alphabet: [UInt8] = [0x0A, 0x09, 0x0B, 0x8A, 0x00, 0xFF, 0x20, 0x3A, 0x0D, 0x61, 0x80, 0x7F]

  @Test(arguments: [UInt8(10), 32, 58, 0, 0xFF])
  func agreesWithAByteLoop(byte: UInt8) {
    var random = SplitMix64(seed: UInt64(byte) &+ 1)
    var checked = 0
    for _ in 0..<3_000 {
      let length = Int(random.next() % 41)
      let bytes = (0..<length).map { _ in Self.alphabet[Int(random.next() % UInt64(Self.alphabet.count))] }
      let from = length == 0 ? 0 : Int(random.next() % UInt64(length + 1))
      let to = from + Int(random.next() % UInt64(length - from + 1))
      bytes.withUnsafeBufferPointer { buffer in
        let base = buffer.baseAddress ?? UnsafePointer(bitPattern: 8)!
        let expectedIndex = (from..<to).first { bytes[$0] == byte } ?? to
        let expectedCount = (from..<to).filter { bytes[$0] == byte }.count
        #expect(
          ByteScan.firstIndex(of: byte, in: base, from: from, to: to) == expectedIndex,
          "\(bytes) \(from)..<\(to)")
        #expect(
          ByteScan.count(of: byte, in: base, from: from, to: to) == expectedCount, "\(bytes) \(from)..<\(to)")
        #expect(
          ByteScan.isASCII(base, from: from, to: to) == !(from..<to).contains { bytes[$0] >= 0x80 },
          "\(bytes) \(from)..<\(to)")
      }
      checked += 1
    }
    #expect(checked == 3_000)
  }

  /// The control-character scan against the RFC 9110 §5.5 rule tested byte by byte: every byte value at
  /// every position of two words, behind tabs, obs-text and visible characters.
  @Test func firstControlIsEveryCTLButHTAB() {
    for b in 0...255 {
      for position in 0..<16 {
        var bytes = [UInt8](repeating: 0x41, count: 19)
        bytes[1] = 0x09
        bytes[3] = 0xFF
        bytes[5] = 0x80
        bytes[position + 2] = UInt8(b)
        let expected = (1..<19).first { (bytes[$0] < 32 && bytes[$0] != 9) || bytes[$0] == 127 } ?? 19
        bytes.withUnsafeBufferPointer { p in
          #expect(
            ByteScan.firstControl(in: p.baseAddress!, from: 1, to: 19) == expected, "byte \(b) at \(position)"
          )
        }
      }
    }
  }

  @Test func findsAMatchInEveryPositionOfAWord() {
    for position in 0..<16 {
      var bytes = [UInt8](repeating: 0x0B, count: 16)
      bytes[position] = 0x0A
      if position + 1 < 16 { bytes[position + 1] = 0x0A }
      bytes.withUnsafeBufferPointer { b in
        #expect(ByteScan.firstIndex(of: 0x0A, in: b.baseAddress!, from: 0, to: 16) == position)
        #expect(ByteScan.count(of: 0x0A, in: b.baseAddress!, from: 0, to: 16) == (position + 1 < 16 ? 2 : 1))
      }
    }
  }
}

@Suite("ASCIISet: the masks are the RFCs' character sets")
struct ASCIISetTests {
  static func members(_ extra: String) -> Set<UInt8> {
    Set(Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8) + Array(extra.utf8))
  }

  @Test func tcharIsRFC9110() {
    let expected = Self.members("!#$%&'*+-.^_`|~")
    for b in 0...255 {
      #expect(ASCIISet.tchar.contains(UInt8(b)) == expected.contains(UInt8(b)), "byte \(b)")
    }
  }

  @Test func regNameIsRFC3986() {
    let expected = Self.members("-._~%!$&'()*+,;=")
    for b in 0...255 {
      #expect(ASCIISet.regName.contains(UInt8(b)) == expected.contains(UInt8(b)), "byte \(b)")
    }
  }
}
