import Glibc
import Testing

@testable import HTTPCore

/// The peer's address formatted by hand, against glibc's `inet_ntop` on the values where decimal
/// formatting goes wrong (0, one- two- and three-digit octets, 255, the port's limits).
@Suite("ClientAddress: IPv4 peers formatted as inet_ntop does, equal by their text")
struct ClientAddressTests {
  static func inetNtop(_ address: UInt32) -> String {
    var raw = in_addr(s_addr: address.bigEndian)
    var buffer = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
    _ = inet_ntop(AF_INET, &raw, &buffer, socklen_t(INET_ADDRSTRLEN))
    return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }

  @Test(arguments: [UInt32(0), 0x7F00_0001, 0xFFFF_FFFF, 0x0A09_6364, 0xC0A8_0001, 0x0102_0304, 0x6463_0A00])
  func formatsAsInetNtop(address: UInt32) {
    for port: UInt16 in [0, 9, 10, 99, 100, 8080, 65535] {
      let peer = ClientAddress.ipv4(address: address, port: port)
      #expect(peer.text == "\(Self.inetNtop(address)):\(port)")
      #expect(ClientAddress.format(ipv4: address, port: port, withPort: false) == Self.inetNtop(address))
    }
  }

  @Test func equalityIsByText() {
    #expect(ClientAddress.ipv4(address: 0x7F00_0001, port: 80) == .text("127.0.0.1:80"))
    #expect(ClientAddress.ipv4(address: 0x7F00_0001, port: 80) != .ipv4(address: 0x7F00_0001, port: 81))
    #expect(ClientAddress.text("[::1]:80").text == "[::1]:80")
    #expect(ClientAddress.ipv4(address: 0, port: 0).text == "0.0.0.0:0")
  }
}
