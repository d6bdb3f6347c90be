import Foundation
import MockServerTesting
import TestSupport
import Testing

/// `POST /__admin/mappings/save` never loses a stub.
@Suite("Robustness: saving stubs", .serialized)
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

  /// Saves that fail midway (the process may write files of at most 8 KiB: `ulimit -f 16`, SIGXFSZ
  /// ignored, as a full disk would fail) leave no cut file: a new persistent stub too large for it is
  /// answered 500 naming the failed call and no file appears (a cut one made the next start refuse to run),
  /// and a replaced persistent stub keeps its old file whole.
  @Test func failedSavesLeaveTheOldFileAndSaySo() throws {
    let old =
      #"{"id":"kept","persistent":true,"request":{"method":"GET","url":"/kept"},"response":{"status":200,"body":"old"}}"#
    let fixtures = try TemporaryFixtures([("kept.json", old)])
    defer { fixtures.remove() }
    let server = try MockServerProcess.launch(
      binary: "/bin/sh",
      arguments: [
        "-c", #"trap '' XFSZ; ulimit -f 16; exec "$0" "$@""#, MockServerProcess.defaultBinary(),
        "--fixtures", fixtures.fixtures, "--no-watch", "--quiet",
      ])
    defer { server.stop() }
    let big = String(repeating: "b", count: 20_000)
    let created = try AdminSecurityTests.admin(
      server.port, "POST", "/__admin/mappings",
      body:
        #"{"id":"big","persistent":true,"request":{"method":"GET","url":"/big"},"response":{"status":200,"body":"\#(big)"}}"#,
      ["Content-Type: application/json"])
    #expect(status(created) == 500 && created.contains("write failed"), "\(created.prefix(400))")
    let replaced = try AdminSecurityTests.admin(
      server.port, "PUT", "/__admin/mappings/kept",
      body:
        #"{"persistent":true,"request":{"method":"GET","url":"/kept"},"response":{"status":200,"body":"\#(big)"}}"#,
      ["Content-Type: application/json"])
    #expect(status(replaced) == 500 && replaced.contains("write failed"), "\(replaced.prefix(400))")
    let files = try FileManager.default.contentsOfDirectory(atPath: fixtures.fixtures + "/mappings")
    #expect(files == ["kept.json"], "\(files.sorted())")
    let text = try String(contentsOfFile: fixtures.fixtures + "/mappings/kept.json", encoding: .utf8)
    #expect(text == old)
  }
}
