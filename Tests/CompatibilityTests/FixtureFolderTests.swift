import Foundation
import MockServerTesting
import TestSupport
import Testing

/// Fixture folders as deployments lay them out (issue 17): links, hidden entries, editors' backups,
/// each stub once, and a link swapped atomically seen by hot reload.
@Suite("Fixture folders with links, hidden entries and backups")
struct FixtureFolderTests {
  @Test func linksHiddenEntriesAndBackups() throws {
    let fixtures = try TemporaryFixtures([("real.json", stubJSON(["method": "GET", "url": "/real"]))])
    defer { fixtures.remove() }
    let fm = FileManager.default
    let mappings = fixtures.fixtures + "/mappings"
    // A folder outside mappings/ linked in, and a file linked twice.
    let shared = fixtures.root + "/shared"
    try fm.createDirectory(atPath: shared, withIntermediateDirectories: true)
    try stubJSON(["method": "GET", "url": "/shared"], ["status": 200, "body": "shared"])
      .write(toFile: shared + "/shared.json", atomically: true, encoding: .utf8)
    try fm.createSymbolicLink(atPath: mappings + "/linked-folder", withDestinationPath: shared)
    try fm.createSymbolicLink(atPath: mappings + "/again.json", withDestinationPath: shared + "/shared.json")
    // A link cycle.
    try fm.createSymbolicLink(atPath: shared + "/loop", withDestinationPath: shared)
    // Hidden entries and backups that would be errors (or duplicates) if loaded.
    try fm.createDirectory(atPath: mappings + "/.git", withIntermediateDirectories: true)
    try "{broken".write(toFile: mappings + "/.git/x.json", atomically: true, encoding: .utf8)
    try "{broken".write(toFile: mappings + "/.hidden.json", atomically: true, encoding: .utf8)
    try "{broken".write(toFile: mappings + "/real.json~", atomically: true, encoding: .utf8)
    try "{broken".write(toFile: mappings + "/.#real.json", atomically: true, encoding: .utf8)
    try "{broken".write(toFile: mappings + "/real.json.swp", atomically: true, encoding: .utf8)

    let server = try launch(fixtures)
    defer { server.stop() }
    #expect(try request(server.port, "GET", "/real").status == 200)
    let reply = try request(server.port, "GET", "/shared")
    #expect(reply.status == 200)
    #expect(reply.text == "shared")
    let mappingsList = try request(server.port, "GET", "/__admin/mappings")
    let json = try JSONSerialization.jsonObject(with: Data(mappingsList.body)) as? [String: Any]
    #expect((json?["mappings"] as? [Any])?.count == 2, "\(mappingsList.text)")
  }

  @Test func aLinkSwappedAtomicallyIsSeenByHotReload() throws {
    let fixtures = try TemporaryFixtures([])
    defer { fixtures.remove() }
    let fm = FileManager.default
    let v1 = fixtures.root + "/v1"
    let v2 = fixtures.root + "/v2"
    for (dir, body) in [(v1, "one"), (v2, "two")] {
      try fm.createDirectory(atPath: dir, withIntermediateDirectories: true)
      try stubJSON(["method": "GET", "url": "/version"], ["status": 200, "body": body])
        .write(toFile: dir + "/version.json", atomically: true, encoding: .utf8)
    }
    let link = fixtures.fixtures + "/mappings/current"
    try fm.createSymbolicLink(atPath: link, withDestinationPath: v1)
    let server = try launch(fixtures, watch: true)
    defer { server.stop() }
    #expect(try request(server.port, "GET", "/version").text == "one")
    // ln -s v2 tmp && mv -T tmp current: rename(2) over the old link.
    let temporary = fixtures.fixtures + "/mappings/.current.tmp"
    try fm.createSymbolicLink(atPath: temporary, withDestinationPath: v2)
    #expect(rename(temporary, link) == 0)
    #expect(eventually { (try? request(server.port, "GET", "/version").text) == "two" })
  }
}
