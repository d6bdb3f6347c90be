/// The peer of a connection, kept as accepted and formatted as text (`ip:port`, `[v6]:port`) only when
/// something reads it: the journal's `clientIp`, a log line, a template's `request.clientIp`, the admin
/// API's loopback check. Formatting an IPv4 peer on every accepted connection was about 600 instructions
/// of each request served without keep-alive, for text that is read only when the journal is.
package struct ClientAddress: Sendable, Equatable {
  /// An IPv4 peer as `1 << 48 | address << 16 | port` (host byte order); 0 when the peer is ``given``.
  private let ipv4: UInt64
  /// The peer as text when it is not an IPv4 address kept whole (IPv6, scoped, or given by a caller).
  /// A struct of a word and a `String` rather than an enum: copying a context (several times per request)
  /// stays a word copy and the retain of a small string, where an enum's copy and destroy went through
  /// outlined switch functions.
  private let given: String

  /// An IPv4 peer: `address` and `port` in host byte order.
  package static func ipv4(address: UInt32, port: UInt16) -> ClientAddress {
    ClientAddress(ipv4: 1 << 48 | UInt64(address) << 16 | UInt64(port), given: "")
  }

  /// A peer already as text.
  package static func text(_ text: String) -> ClientAddress { ClientAddress(ipv4: 0, given: text) }

  private init(ipv4: UInt64, given: String) {
    self.ipv4 = ipv4
    self.given = given
  }

  /// Two peers are equal when their text is, however each was kept.
  package static func == (lhs: ClientAddress, rhs: ClientAddress) -> Bool {
    lhs.ipv4 == rhs.ipv4 && lhs.given == rhs.given || lhs.text == rhs.text
  }

  /// `a.b.c.d:port`, `[v6]:port`, or the text given.
  package var text: String {
    guard ipv4 != 0 else { return given }
    return ClientAddress.format(
      ipv4: UInt32(truncatingIfNeeded: ipv4 >> 16), port: UInt16(truncatingIfNeeded: ipv4), withPort: true)
  }

  /// Dotted decimal (by hand: glibc's `inet_ntop` formats IPv4 with `sprintf`), followed by `:port` when
  /// `withPort`.
  package static func format(ipv4 address: UInt32, port: UInt16, withPort: Bool) -> String {
    // "255.255.255.255:65535" is 21 bytes.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer -> String in
      guard let base = buffer.baseAddress else { return "" }
      var end = 0
      for shift in stride(from: UInt32(24), through: 0, by: -8) {
        end = writeDecimal(Int((address >> shift) & 0xFF), to: base, at: end)
        if shift != 0 {
          base[end] = UInt8(ascii: ".")
          end += 1
        }
      }
      if withPort {
        base[end] = UInt8(ascii: ":")
        end = writeDecimal(Int(port), to: base, at: end + 1)
      }
      return String(decoding: UnsafeBufferPointer(start: base, count: end), as: UTF8.self)
    }
  }

  /// Writes `value` (0...65535) in decimal at `base[at...]`; returns the index after its last digit.
  package static func writeDecimal(_ value: Int, to base: UnsafeMutablePointer<UInt8>, at start: Int) -> Int {
    var divisor = 1
    while divisor * 10 <= value { divisor *= 10 }
    var end = start
    var rest = value
    while divisor > 0 {
      base[end] = UInt8(truncatingIfNeeded: 48 + rest / divisor)
      rest %= divisor
      divisor /= 10
      end += 1
    }
    return end
  }
}
