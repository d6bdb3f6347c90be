import Foundation
import TestSupport
import Testing

@testable import MockServer

@Suite("Reload: fixtures folder hot reload")
struct ReloadTests {
  static func write(_ text: String, _ path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
  }

  /// Reloads take a fraction of a second (inotify, then a 250 ms poll); every wait below is a generous
  /// 10 s that only a reload that never happens runs out.
  @Test("edits are picked up; broken edits keep the last good set; runtime stubs survive")
  func hotReload() async throws {
    let folder = try temporaryFolder("reload", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let file = folder + "/mappings/a.json"
    try ReloadTests.write(#"{"id":"a","request":{"url":"/a"},"response":{"status":200,"body":"v1"}}"#, file)
    try await withMockService(
      configure: { $0.fixturesDirectory = folder }, fixtures: FixtureLoader.load(directory: folder)
    ) { service, port in
      let watcher = FixtureWatcher(directory: folder, service: service)
      watcher.start()
      defer { watcher.stop() }
      _ = try http(
        port, "POST", "/__admin/mappings",
        body: #"{"id":"rt","request":{"url":"/rt"},"response":{"status":202}}"#)
      #expect(try http(port, "GET", "/a").body == "v1")

      try ReloadTests.write(#"{"id":"a","request":{"url":"/a"},"response":{"status":200,"body":"v2"}}"#, file)
      #expect(try eventually(timeout: 10) { try http(port, "GET", "/a").body == "v2" })
      #expect(try http(port, "GET", "/rt").status == 202)

      // A broken edit: reported, the last good set keeps serving.
      let reloadsBefore = watcher.reloadCount
      try ReloadTests.write(#"{"id":"a","request":{"url":5},"response":{"status":200}}"#, file)
      #expect(eventually(timeout: 10) { watcher.reloadCount > reloadsBefore })
      #expect(try http(port, "GET", "/a").body == "v2")
      #expect(try http(port, "GET", "/rt").status == 202)

      // A new file and the fix.
      try ReloadTests.write(
        #"{"id":"b","request":{"url":"/b"},"response":{"status":201}}"#, folder + "/mappings/b.json")
      try ReloadTests.write(#"{"id":"a","request":{"url":"/a"},"response":{"status":200,"body":"v3"}}"#, file)
      #expect(try eventually(timeout: 10) { try http(port, "GET", "/a").body == "v3" })
      #expect(try http(port, "GET", "/b").status == 201)
      #expect(try http(port, "GET", "/rt").status == 202)

      // A file in a folder created after the watch started.
      try FileManager.default.createDirectory(
        atPath: folder + "/mappings/sub", withIntermediateDirectories: true)
      try ReloadTests.write(
        #"{"id":"c","request":{"url":"/c"},"response":{"status":203}}"#, folder + "/mappings/sub/c.json")
      #expect(try eventually(timeout: 10) { try http(port, "GET", "/c").status == 203 })
      try FileManager.default.removeItem(atPath: folder + "/mappings/sub")
      #expect(try eventually(timeout: 10) { try http(port, "GET", "/c").status == 404 })
      #if os(Linux)
        // Notified by inotify, unless the suite runs on the portable platform (MOCKSERVER_EVENT_LOOP=poll).
        #expect(watcher.usesNotifications != FixtureWatcher.pollsByDefault)
      #endif

      // A deleted file disappears.
      try FileManager.default.removeItem(atPath: folder + "/mappings/b.json")
      #expect(try eventually(timeout: 10) { try http(port, "GET", "/b").status == 404 })
      #expect(Set(service.store.stubs.map(\.id)) == ["a", "rt"])
    }
  }

  @Test("a watcher started from the load takes the stamps its reads gave as the baseline")
  func baselineFromTheLoad() async throws {
    let folder = try temporaryFolder("baseline", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let file = folder + "/mappings/a.json"
    try ReloadTests.write(#"{"id":"a","request":{"url":"/a"},"response":{"status":200,"body":"v1"}}"#, file)
    try ReloadTests.write("not a mapping", folder + "/mappings/notes.txt")
    try FileManager.default.createDirectory(atPath: folder + "/__files", withIntermediateDirectories: true)
    try ReloadTests.write("body", folder + "/__files/b.txt")
    let set = FixtureLoader.load(directory: folder)
    // The fstat of each read gives what a stat walk gives: the same baseline, without the second walk.
    #expect(set.loadedStamps.keys.sorted() == ["mappings/a.json"])
    #expect(FixtureWatcher.scan(folder, known: set.loadedStamps) == FixtureWatcher.scan(folder))

    // A change made between the load and the watcher's start is not taken as the baseline: the next
    // notification (another file written) reloads it.
    try ReloadTests.write(#"{"id":"a","request":{"url":"/a"},"response":{"status":200,"body":"v2"}}"#, file)
    try await withMockService(configure: { $0.fixturesDirectory = folder }, fixtures: set) { service, port in
      let watcher = FixtureWatcher(directory: folder, service: service)
      watcher.start(loaded: set)
      defer { watcher.stop() }
      #expect(try http(port, "GET", "/a").body == "v1")
      try ReloadTests.write(
        #"{"id":"b","request":{"url":"/b"},"response":{"status":201}}"#, folder + "/mappings/b.json")
      #expect(try eventually(timeout: 10) { try http(port, "GET", "/a").body == "v2" })
      #expect(try http(port, "GET", "/b").status == 201)
    }
  }

  @Test("the lint-format report of a broken edit")
  func brokenEditReport() throws {
    let folder = try temporaryFolder("report", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try ReloadTests.write(#"{"request":{"url":5},"response":{"status":200}}"#, folder + "/mappings/x.json")
    let report = FixtureLoader.load(directory: folder).report()
    #expect(report.contains("mappings/x.json: $.request.url: expected"))
  }
}
