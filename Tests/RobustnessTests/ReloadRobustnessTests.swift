import Foundation
import MockServerTesting
import TestSupport
import Testing

/// Hot reload survives a removed and recreated fixtures folder, and a missing
/// `mappings/` is a failed reload, not an empty server.
@Suite("Robustness: hot reload", .serialized)
struct ReloadRobustnessTests {
  @Test func recreatedFolderIsWatchedAndMissingMappingsKeepTheLastGoodSet() throws {
    let fixtures = try TemporaryFixtures([("a.json", stubJSON("/a"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures])
    defer { server.stop() }
    let port = server.port
    #expect(status(get(port, "/a")) == 200)
    func failures() -> Int {
      server.standardErrorText.components(separatedBy: "failed; still serving").count - 1
    }

    // mappings/ deleted: a failed reload, the last good set keeps serving (it emptied the server).
    try FileManager.default.removeItem(atPath: fixtures.fixtures + "/mappings")
    #expect(eventually { failures() >= 1 }, "no failed reload logged: \(server.standardErrorText)")
    #expect(status(get(port, "/a")) == 200)
    try TemporaryFixtures.write([("b.json", stubJSON("/b"))], into: fixtures.fixtures)
    #expect(eventually { status(get(port, "/b", timeout: 2)) == 200 })
    #expect(status(get(port, "/a")) == 404)

    // The whole folder removed and created again (`rm -rf FX; cp -r Fixtures FX`): the new folder is
    // watched (the watcher kept watching the old one, and reloads stopped for good).
    let before = failures()
    try FileManager.default.removeItem(atPath: fixtures.fixtures)
    #expect(eventually { failures() > before })
    #expect(status(get(port, "/b")) == 200)
    try TemporaryFixtures.write([("c.json", stubJSON("/c"))], into: fixtures.fixtures)
    #expect(eventually { status(get(port, "/c", timeout: 2)) == 200 }, "\(server.standardErrorText)")
    // And edits inside the new folder are seen too.
    try TemporaryFixtures.write([("d.json", stubJSON("/d"))], into: fixtures.fixtures)
    #expect(eventually { status(get(port, "/d", timeout: 2)) == 200 })
  }

  /// Issue 41 item 14: the binary's descriptor limit lowered (`prlimit`) to what it has open plus 24, and
  /// connections held until it has no descriptor left; a stub file changed then cannot be read: the
  /// failure is logged (nothing was, and the change was never served, or an empty set was), the old
  /// answer keeps being served, and once the connections close the change is served and the recovery
  /// logged.
  @Test func reloadRecoversAfterDescriptorExhaustion() throws {
    let fixtures = try TemporaryFixtures([("a.json", stubJSON("/a", body: "one"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.fixtures])
    defer { server.stop() }
    let pid = server.processIdentifier
    #expect(get(server.port, "/a").hasSuffix("one"))
    let limit = ProcStat.openDescriptors(pid) + 24
    // util-linux's prlimit(1) (Glibc does not export prlimit(2) to Swift).
    let prlimit = try runProcess("/usr/bin/prlimit", ["--pid", "\(pid)", "--nofile=\(limit):\(limit)"])
    try #require(prlimit.status == 0, "prlimit --pid \(pid) --nofile=\(limit) failed: \(prlimit.stderr)")
    var held: [RawClient] = []
    defer { held.removeAll() }
    #expect(
      eventually {
        if let socket = try? RawClient(port: server.port) { held.append(socket) }
        return ProcStat.openDescriptors(pid) >= limit
      }, "\(ProcStat.openDescriptors(pid)) of \(limit) descriptors open")
    try TemporaryFixtures.write([("a.json", stubJSON("/a", body: "two"))], into: fixtures.fixtures)
    #expect(
      eventually { server.standardErrorText.contains("no file descriptor left") },
      "\(server.standardErrorText)")
    held.removeAll()
    #expect(eventually { get(server.port, "/a", timeout: 2).hasSuffix("two") }, "\(server.standardErrorText)")
    #expect(eventually { server.standardErrorText.contains("file descriptors are free again") })
    #expect(!server.standardErrorText.contains("reloaded 0 stub(s)"))
  }
}
