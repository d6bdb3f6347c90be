import Foundation
import MockServerTesting
import Testing

/// Issue 13 item 9: `POST /__admin/mappings/save` never loses a stub.
@Suite("Hardening: saving stubs", .serialized)
struct SaveTests {
  @Test func saveWritesUniqueFilesAndSaysWhich() throws {
    // A file already named as a saved stub would be (`stub-` + sanitised id).
    let fixtures = try TemporaryFixtures([("stub-dup-1.json", stubJSON("/existing"))])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
    ])
    defer { server.stop() }
    let port = server.port
    // Ids that sanitise to the same file name.
    for (id, url) in [("dup/1", "/one"), ("dup?1", "/two"), ("DUP-1", "/three")] {
      let body = #"{"id":"\#(id)","request":{"method":"GET","url":"\#(url)"},"response":{"status":200}}"#
      let created = try AdminSecurityTests.admin(
        port, "POST", "/__admin/mappings", body: body, ["Content-Type: application/json"])
      #expect(status(created) == 201, "\(created)")
    }
    let saved = try AdminSecurityTests.admin(port, "POST", "/__admin/mappings/save")
    #expect(status(saved) == 200)
    let files = try FileManager.default.contentsOfDirectory(atPath: fixtures.fixtures + "/mappings")
    #expect(files.count == 4, "\(files.sorted())")
    for id in ["dup/1", "dup?1", "DUP-1"] { #expect(saved.contains(#""\#(id)""#), "\(saved)") }
    #expect(saved.contains("mappings/stub-dup-1-2.json"))
    // Reloading from the files serves every stub: none was overwritten.
    let reset = try AdminSecurityTests.admin(port, "POST", "/__admin/mappings/reset")
    #expect(status(reset) == 200, "\(reset)")
    for path in ["/existing", "/one", "/two", "/three"] { #expect(status(get(port, path)) == 200, "\(path)") }
  }
}
