import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import MockServer

#if canImport(Glibc)
  import Glibc
#endif

/// What the per-request cost work (issue 20) changed on the request's path, checked for the same answers:
/// large content written beside the head, peers formatted without `getnameinfo`, journal ids formatted
/// when read.
@Suite("Request path: gathered content, peer text, journal ids")
struct RequestPathCostTests {
  /// A body above ``OutputBuffer/gatheredContentBytes``: 2,000,000 bytes, more than a loopback socket takes
  /// at once, so the gathering write is partial and the rest goes through the output buffer.
  static let largeBody = String(repeating: "0123456789abcdef", count: 125_000)

  static let stubs = """
    [{"request": {"method": "GET", "urlPath": "/large"},
      "response": {"status": 200, "headers": {"Content-Type": "text/plain"}, "body": "\(largeBody)"}},
     {"request": {"method": "GET", "urlPath": "/small"}, "response": {"status": 200, "body": "small"}}]
    """

  /// Splits pipelined responses framed by `Content-Length` (HEAD answers: `bodiless` lists them).
  static func split(_ bytes: [UInt8], bodiless: Set<Int> = []) -> [(head: String, body: [UInt8])] {
    var result: [(String, [UInt8])] = []
    var index = 0
    let terminator: [UInt8] = [13, 10, 13, 10]
    while index < bytes.count {
      var end = index
      while end + 4 <= bytes.count, Array(bytes[end..<end + 4]) != terminator { end += 1 }
      guard end + 4 <= bytes.count else { break }
      let head = String(decoding: bytes[index..<end], as: UTF8.self)
      let lengthLine = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
      let length = lengthLine.flatMap { Int($0.dropFirst(15).trimmingCharacters(in: .whitespaces)) } ?? 0
      let bodyStart = end + 4
      let bodyEnd = bodiless.contains(result.count) ? bodyStart : min(bytes.count, bodyStart + length)
      result.append((head, Array(bytes[bodyStart..<bodyEnd])))
      index = bodyEnd
    }
    return result
  }

  @Test func largeContentArrivesWholeAndInOrder() async throws {
    try await withMockServer(mappings: Self.stubs) { server, _ in
      let client = try RawClient(port: server.port)
      // Pipelined: large, small, large, HEAD large, then close; read only after all were sent.
      client.send(
        "GET /large HTTP/1.1\r\nHost: x\r\n\r\nGET /small HTTP/1.1\r\nHost: x\r\n\r\n"
          + "GET /large HTTP/1.1\r\nHost: x\r\n\r\nHEAD /large HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
      )
      let (bytes, _) = client.read(timeout: 20)
      let responses = Self.split(bytes, bodiless: [3])
      let expected = Array(Self.largeBody.utf8)
      #expect(responses.count == 4)
      guard responses.count == 4 else { return }
      #expect(responses[0].head.hasPrefix("HTTP/1.1 200 OK\r\n"))
      #expect(responses[0].head.contains("Content-Length: 2000000"))
      // Compared as Bools: a failure must not print two million bytes.
      let firstWhole = responses[0].body == expected
      let secondWhole = responses[2].body == expected
      #expect(firstWhole, "first large body: \(responses[0].body.count) bytes")
      #expect(responses[1].body == Array("small".utf8))
      #expect(secondWhole, "second large body: \(responses[2].body.count) bytes")
      #expect(responses[3].head.contains("Content-Length: 2000000"))
      #expect(responses[3].body.isEmpty)
      #expect(responses[3].head.hasSuffix("Connection: close"))
    }
  }

  @Test func largeContentToASlowReader() async throws {
    try await withMockServer(mappings: Self.stubs) { server, _ in
      let client = try RawClient(port: server.port)
      var small: Int32 = 65536
      setsockopt(client.fd, SOL_SOCKET, SO_RCVBUF, &small, socklen_t(MemoryLayout<Int32>.size))
      client.send("GET /large HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      usleep(200_000)  // the server's write stalls; the rest waits in its output
      let (bytes, _) = client.read(timeout: 20)
      let responses = Self.split(bytes)
      #expect(responses.count == 1)
      let whole = responses.first?.body == Array(Self.largeBody.utf8)
      #expect(whole, "body: \(responses.first?.body.count ?? 0) bytes")
    }
  }

  static func ipv4(_ address: String, port: UInt16) -> sockaddr_storage {
    var storage = sockaddr_storage()
    withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { a in
        a.pointee.sin_family = sa_family_t(AF_INET)
        a.pointee.sin_port = port.bigEndian
        _ = inet_pton(AF_INET, address, &a.pointee.sin_addr)
      }
    }
    return storage
  }

  static func ipv6(_ address: String, port: UInt16) -> sockaddr_storage {
    var storage = sockaddr_storage()
    withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { a in
        a.pointee.sin6_family = sa_family_t(AF_INET6)
        a.pointee.sin6_port = port.bigEndian
        _ = inet_pton(AF_INET6, address, &a.pointee.sin6_addr)
      }
    }
    return storage
  }

  @Test(arguments: [
    ("127.0.0.1", UInt16(54321), "127.0.0.1:54321"), ("0.0.0.0", 0, "0.0.0.0:0"),
    ("10.200.3.255", 80, "10.200.3.255:80"), ("255.255.255.255", 65535, "255.255.255.255:65535"),
    ("1.20.100.9", 7, "1.20.100.9:7"),
  ])
  func ipv4PeerText(address: String, port: UInt16, expected: String) {
    let storage = Self.ipv4(address, port: port)
    #expect(Listener.peerText(storage) == expected)
    #expect(Listener.describe(storage) == (address, Int(port)))
  }

  @Test func ipv6PeerText() {
    #expect(Listener.peerText(Self.ipv6("::1", port: 8080)) == "[::1]:8080")
    #expect(Listener.describe(Self.ipv6("::1", port: 8080)) == ("::1", 8080))
    #expect(Listener.peerText(Self.ipv6("2001:db8::a:1", port: 1)) == "[2001:db8::a:1]:1")
    #expect(Listener.peerText(Self.ipv6("::ffff:127.0.0.1", port: 9)) == "[::ffff:127.0.0.1]:9")
  }

  /// TCP_NODELAY is set once on the listener and reaches every accepted socket (Linux copies it), so
  /// accepting costs no `setsockopt` per connection and responses are still not held back by Nagle.
  @Test func acceptedSocketsHaveNoDelay() throws {
    let listener = try Listener(host: "127.0.0.1", port: 0)
    defer { listener.close() }
    let client = try RawClient(port: listener.port)
    defer { withExtendedLifetime(client) {} }
    var accepted: Int32 = -1
    #expect(
      eventually {
        if case .accepted(let fd, _) = listener.accept() { accepted = fd }
        return accepted >= 0
      })
    defer { if accepted >= 0 { _ = Glibc.close(accepted) } }
    var flag: Int32 = 0
    var length = socklen_t(MemoryLayout<Int32>.size)
    #expect(getsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &flag, &length) == 0)
    #expect(flag != 0)
  }

  @Test func peerOfARealConnectionIsJournaled() async throws {
    try await withMockServer(mappings: Self.stubs) { server, service in
      let client = try RawClient(port: server.port)
      client.send("GET /small HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
      _ = client.read(timeout: 5)
      var local = sockaddr_storage()
      var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
      _ = withUnsafeMutablePointer(to: &local) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(client.fd, $0, &length) }
      }
      let entry = service.journal.entries().first
      #expect(entry?.clientAddress == Listener.peerText(local))
      #expect(entry?.clientAddress.hasPrefix("127.0.0.1:") == true)
    }
  }

  @Test func journalIDFormattedWhenRead() {
    let request = HTTPRequest(head: HTTPRequestHead(method: .get, target: "/"))
    var entry = JournalEntry(
      idWords: (0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210), request: request, client: .text("a"),
      isTLS: false, clientCertificateSubject: nil, loggedAt: 0, stubID: nil, nearMisses: [])
    #expect(entry.id == "01234567-89ab-4def-bedc-ba9876543210")
    #expect(entry.id == SplitMix64.uuidString(0x0123_4567_89AB_CDEF, 0xFEDC_BA98_7654_3210))
    entry.id = "chosen"
    #expect(entry.id == "chosen")
    let copy = entry
    entry.id = "changed"
    #expect(copy.id == "chosen")
  }

  @Test func journaledIDsAreUniqueAndFoundByID() async throws {
    try await withMockServer(mappings: Self.stubs) { server, service in
      let client = try RawClient(port: server.port)
      client.send(String(repeating: "GET /small HTTP/1.1\r\nHost: x\r\n\r\n", count: 5))
      _ = client.readResponses(5)
      let entries = service.journal.entries()
      #expect(entries.count == 5)
      #expect(Set(entries.map(\.id)).count == 5)
      for entry in entries {
        #expect(UUID(uuidString: entry.id) != nil)
        #expect(service.journal.entry(id: entry.id)?.id == entry.id)
      }
    }
  }

  /// A journal entry of a request whose fields are still the parser's bytes and ranges says exactly what
  /// one of the same request with fields added by code says (JSON, size estimate), also for bytes that
  /// are not UTF-8.
  @Test(arguments: [false, true]) func journalOfReceivedFieldsIsAsOfAuthoredOnes(asciiOnly: Bool) throws {
    var bytes = Array(
      "GET /a/b?x=1&y=%20 HTTP/1.1\r\nHost: example.com:8080\r\nAccept: */*\r\nX-Dup: 1\r\nx-dup: 2\r\n".utf8)
    if !asciiOnly { bytes += Array("X-Name: caf\u{E9}\r\nX-Raw: ".utf8) + [0xFF, 0x41, 13, 10] }
    bytes += [13, 10]
    var parser = HTTPParser(mode: .request)
    parser.append(bytes)
    guard case .requestHead(let head) = try parser.next() else {
      Issue.record("no request head")
      return
    }
    var authoredHead = HTTPRequestHead(method: head.method, target: head.target, version: head.version)
    for field in head.headers.fields { authoredHead.headers.add(name: field.name, value: field.value) }
    func entry(_ head: HTTPRequestHead) -> JournalEntry {
      JournalEntry(
        id: "id", request: HTTPRequest(head: head), clientAddress: "127.0.0.1:1", isTLS: false,
        clientCertificateSubject: nil, loggedAt: 1_700_000_000, stubID: "s", nearMisses: [])
    }
    let received = entry(head)
    let authored = entry(authoredHead)
    #expect(received.requestJSON == authored.requestJSON)
    #expect(received.json(stub: nil) == authored.json(stub: nil))
    #expect(received.approximateBytes == authored.approximateBytes)
    #expect(head.headers.values("X-DUP") == ["1", "2"])
  }
}
