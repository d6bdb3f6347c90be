import Foundation
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Admin reads page and run off the event loop; serving never waits for them.
@Suite("Robustness: admin reads and serving", .serialized)
struct AdminLoadTests {
  /// `GET /__admin/files/{name}` of an empty body file read it with `FileManager.contents(atPath:)`, which
  /// leaks the 4 KiB buffer it reads an empty file into (FoundationEssentials of Swift 6.3.1; `make fuzz`
  /// found the same leak in the OpenAPI loader): 10,000 reads grew the server by about 40 MiB.
  @Test func readingAnEmptyBodyFileDoesNotLeak() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    try FileManager.default.createDirectory(
      atPath: fixtures.fixtures + "/__files", withIntermediateDirectories: true)
    #expect(
      FileManager.default.createFile(atPath: fixtures.fixtures + "/__files/empty.txt", contents: Data()))
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let socket = try RawClient(port: server.port)
    let batch = String(
      repeating: "GET /__admin/files/empty.txt HTTP/1.1\r\nHost: 127.0.0.1:\(server.port)\r\n\r\n", count: 100
    )
    socket.send(batch)
    let first = socket.read(timeout: 10) { RawClient.responseCount($0) >= 100 }.bytes
    let text = String(decoding: first, as: UTF8.self)
    #expect(RawClient.responseCount(first) == 100 && status(text) == 200, "\(text.prefix(300))")
    #expect(text.lowercased().contains("content-length: 0"), "\(text.prefix(300))")
    usleep(200_000)
    let before = ProcStat.residentBytes(server.processIdentifier)
    for _ in 0..<100 {
      socket.send(batch)
      #expect(socket.countResponses(100) == 100)
    }
    usleep(200_000)
    let growth = ProcStat.residentBytes(server.processIdentifier) - before
    #expect(growth < 16 << 20, "RSS grew by \(growth >> 20) MiB for 10,000 reads of an empty file")
  }

  /// The near misses of thousands of unmatched requests take a while to compute. A request to a stub sent
  /// right after such an admin read is answered first: the read no longer runs on the serving loop (the
  /// stub's answer waited for the whole admin computation, 1.1 s for 10,000 unmatched requests).
  @Test func heavyAdminReadDoesNotBlockServing() throws {
    var stubs = [("fast.json", stubJSON("/fast"))]
    for i in 0..<40 { stubs.append(("s\(i).json", stubJSON("/api/resource-\(i)/items"))) }
    let fixtures = try TemporaryFixtures(stubs)
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let port = server.port
    // 6,000 unmatched requests, pipelined.
    let filler = try RawClient(port: port)
    let batch = [UInt8](
      (0..<500).map { "GET /api/resource-\($0)/itemz?q=\($0) HTTP/1.1\r\nHost: localhost\r\n\r\n" }.joined()
        .utf8)
    for _ in 0..<12 {
      filler.send(batch)
      #expect(filler.countResponses(500, timeout: 60) == 500)
    }
    let admin = try RawClient(port: port)
    admin.send("GET /__admin/requests/unmatched/near-misses HTTP/1.1\r\nHost: localhost\r\n\r\n")
    usleep(20_000)
    let serving = try RawClient(port: port)
    serving.send("GET /fast HTTP/1.1\r\nHost: localhost\r\n\r\n")
    let answer = serving.readResponse(timeout: 60).text
    #expect(status(answer) == 200)
    // When /fast was answered, the admin read was still being computed (nothing of it had arrived).
    var pfd = pollfd(fd: admin.fd, events: Int16(POLLIN), revents: 0)
    let adminAnsweredFirst = poll(&pfd, 1, 0) > 0
    #expect(!adminAnsweredFirst, "the admin read was answered before a plain request sent after it")
    #expect(status(admin.readResponse(timeout: 120).text) == 200)
  }

  /// `GET /__admin/requests` pages: a default page size, `limit` and `since`, and the total.
  @Test func journalListingPages() throws {
    let fixtures = try TemporaryFixtures([("fast.json", stubJSON("/fast"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let socket = try RawClient(port: server.port)
    let batch = [UInt8](String(repeating: "GET /fast HTTP/1.1\r\nHost: localhost\r\n\r\n", count: 600).utf8)
    for _ in 0..<2 {
      socket.send(batch)
      #expect(socket.countResponses(600, timeout: 60) == 600)
    }
    func entries(_ text: String) -> Int { text.components(separatedBy: "\"loggedDateString\"").count - 1 }
    let page = try AdminSecurityTests.admin(server.port, "GET", "/__admin/requests?limit=5")
    let perEntry = entries(page) / 5
    #expect(perEntry >= 1 && entries(page) == 5 * perEntry)
    let all = try AdminSecurityTests.admin(server.port, "GET", "/__admin/requests")
    #expect(entries(all) == 1000 * perEntry, "default page size")
    #expect(all.contains("1200"), "meta.total")
    let none = try AdminSecurityTests.admin(
      server.port, "GET", "/__admin/requests?since=2999-01-01T00:00:00Z")
    #expect(entries(none) == 0)
  }
}
