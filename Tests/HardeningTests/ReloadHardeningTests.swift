import Foundation
import MockServerTesting
import Testing

/// Issue 13 item 10: hot reload survives a removed and recreated fixtures folder, and a missing
/// `mappings/` is a failed reload, not an empty server.
@Suite("Hardening: hot reload", .serialized)
struct ReloadHardeningTests {
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
}
