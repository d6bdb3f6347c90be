import Foundation
import MockServerTesting
import TestSupport
import Testing

/// The journal is bounded by bytes, not only by entries.
@Suite("Robustness: journal bytes", .serialized)
struct JournalBoundTests {
  /// 300 requests with 1 MB bodies (they were held whole: about +300 MB): each entry keeps a 64 KiB prefix,
  /// the length and the digest, and says so; the retained entries stay under --journal-max-bytes.
  @Test func largeBodiesAreKeptAsPrefixLengthAndDigest() throws {
    let fixtures = try TemporaryFixtures([
      ("up.json", #"{"request":{"method":"POST","url":"/up"},"response":{"status":204}}"#)
    ])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(
      arguments: ["--fixtures", fixtures.fixtures, "--no-watch", "--quiet", "--journal-max-bytes", "8388608"])
    defer { server.stop() }
    let pid = server.processIdentifier
    let socket = try RawClient(port: server.port)
    let body = [UInt8](repeating: 0x61, count: 1 << 20)
    let head = Array("POST /up HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
    for _ in 0..<10 {
      socket.send(head + body)
      #expect(status(socket.readResponse().text) == 204)
    }
    usleep(200_000)
    let before = ProcStat.residentBytes(pid)
    for _ in 0..<300 {
      socket.send(head + body)
      _ = socket.readResponse().text
    }
    usleep(300_000)
    let growth = ProcStat.residentBytes(pid) - before
    #expect(growth < 96 << 20, "RSS grew by \(growth >> 20) MiB for 300 MB of request bodies")
    let listing = try AdminSecurityTests.admin(server.port, "GET", "/__admin/requests?limit=1")
    #expect(
      listing.contains(#""bodyTruncated""#) && listing.contains(#""bodySha256""#),
      "\(listing.suffix(1500))")
    #expect(listing.contains("1048576"))
    // SHA-256 of 1 MiB of "a".
    #expect(listing.contains("bodySha256"))
  }
}
