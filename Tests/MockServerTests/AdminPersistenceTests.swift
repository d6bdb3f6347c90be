import Foundation
import TestSupport
import Testing

@testable import MockJSON
@testable import MockServer

/// Issue 18: admin edits of file stubs survive hot reloads; `persistent` stubs and `save` write files.
/// Every wait is a generous 10 s that only a reload that never happens runs out.
@Suite("Admin edits that survive: reloads, persistent stubs, save")
struct AdminPersistenceTests {
  static func write(_ text: String, _ path: String) throws {
    try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
  }

  /// The id the server gives the stub serving `url` (file stubs without an id get a stable one).
  static func stubID(_ port: Int, url: String) throws -> String? {
    let list = try http(port, "GET", "/__admin/mappings").json?["mappings"]?.arrayValue ?? []
    return list.first { $0["request"]?["url"]?.stringValue == url }?["id"]?.stringValue
  }

  @Test("deletes and PUTs of file stubs survive a reload of another file; an edit of their own file wins")
  func editsSurviveUnrelatedReloads() async throws {
    let folder = try temporaryFolder("persist-reload", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let a = folder + "/mappings/a.json"
    try AdminPersistenceTests.write(
      #"{"mappings":[{"request":{"url":"/a1"},"response":{"status":200,"body":"a1"}},"#
        + #"{"request":{"url":"/a2"},"response":{"status":200,"body":"a2"}}]}"#, a)
    try await withMockService(
      configure: { $0.fixturesDirectory = folder }, fixtures: FixtureLoader.load(directory: folder)
    ) { service, port in
      let watcher = FixtureWatcher(directory: folder, service: service)
      watcher.start()
      defer { watcher.stop() }
      let id1 = try #require(try AdminPersistenceTests.stubID(port, url: "/a1"))
      let id2 = try #require(try AdminPersistenceTests.stubID(port, url: "/a2"))
      // Ids of file stubs without one are stable across loads (made from file and JSON path).
      #expect(FixtureLoader.load(directory: folder).stubs.map(\.id) == [id1, id2])

      #expect(try http(port, "DELETE", "/__admin/mappings/\(id1)").status == 200)
      let put = try http(
        port, "PUT", "/__admin/mappings/\(id2)",
        body: #"{"request":{"url":"/a2"},"response":{"status":200,"body":"edited"}}"#)
      #expect(put.status == 200)
      #expect(try http(port, "GET", "/a1").status == 404)
      #expect(try http(port, "GET", "/a2").body == "edited")

      // A reload caused by another file keeps both edits.
      try AdminPersistenceTests.write(
        #"{"id":"c","request":{"url":"/c"},"response":{"status":203}}"#, folder + "/mappings/c.json")
      #expect(try eventually(timeout: 10) { try http(port, "GET", "/c").status == 203 })
      #expect(try http(port, "GET", "/a1").status == 404)
      #expect(try http(port, "GET", "/a2").body == "edited")
      #expect(service.store.unsavedFileEditCount == 2)

      // Editing a.json itself: what was written to the file wins.
      try AdminPersistenceTests.write(
        #"{"mappings":[{"request":{"url":"/a1"},"response":{"status":200,"body":"a1"}},"#
          + #"{"request":{"url":"/a2"},"response":{"status":200,"body":"file v2"}}]}"#, a)
      #expect(try eventually(timeout: 10) { try http(port, "GET", "/a2").body == "file v2" })
      #expect(try http(port, "GET", "/a1").body == "a1")
      #expect(service.store.unsavedFileEditCount == 0)
    }
  }

  @Test("save after a delete leaves no old file; save after a PUT rewrites the file")
  func saveWritesEditsOfFileStubs() async throws {
    let folder = try temporaryFolder("persist-save", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try AdminPersistenceTests.write(
      #"{"id":"b","request":{"url":"/b"},"response":{"status":200,"body":"b"}}"#, folder + "/mappings/b.json")
    try AdminPersistenceTests.write(
      #"{"id":"d","request":{"url":"/d"},"response":{"status":200,"body":"d"}}"#, folder + "/mappings/d.json")
    try await withMockService(
      configure: { $0.fixturesDirectory = folder }, fixtures: FixtureLoader.load(directory: folder)
    ) { service, port in
      #expect(try http(port, "DELETE", "/__admin/mappings/b").status == 200)
      #expect(
        try http(
          port, "PUT", "/__admin/mappings/d",
          body: #"{"request":{"url":"/d"},"response":{"status":200,"body":"d2"}}"#
        ).status == 200)
      // Not written yet: the files are as they were.
      #expect(FileManager.default.fileExists(atPath: folder + "/mappings/b.json"))
      let save = try http(port, "POST", "/__admin/mappings/save")
      #expect(save.status == 200, "\(save.body)")
      #expect(!FileManager.default.fileExists(atPath: folder + "/mappings/b.json"))
      let d = try String(contentsOfFile: folder + "/mappings/d.json", encoding: .utf8)
      #expect(d.contains("d2"))
      #expect(service.store.unsavedFileEditCount == 0)
      // A fresh load of the folder serves what was being served.
      let reloaded = FixtureLoader.load(directory: folder)
      #expect(!reloaded.hasErrors)
      #expect(reloaded.stubs.map(\.id) == ["d"])
    }
  }

  @Test("persistent: true writes the file at once; PUT rewrites it; DELETE removes it")
  func persistentStubs() async throws {
    let folder = try temporaryFolder("persist-flag", creating: ["mappings"])
    defer { try? FileManager.default.removeItem(atPath: folder) }
    try await withMockService(
      configure: { $0.fixturesDirectory = folder }, fixtures: FixtureLoader.load(directory: folder)
    ) { service, port in
      let watcher = FixtureWatcher(directory: folder, service: service)
      watcher.start()
      defer { watcher.stop() }
      let reloads = service.dashboard.reloadCount
      let created = try http(
        port, "POST", "/__admin/mappings",
        body:
          #"{"id":"p1","name":"kept","persistent":true,"request":{"url":"/p"},"response":{"status":200,"body":"one"}}"#
      )
      #expect(created.status == 201)
      let files = try FileManager.default.contentsOfDirectory(atPath: folder + "/mappings")
      #expect(files == ["kept-p1.json"])
      let path = folder + "/mappings/kept-p1.json"
      #expect(try String(contentsOfFile: path, encoding: .utf8).contains("one"))
      #expect(service.store.runtimeStubs.isEmpty)

      let put = try http(
        port, "PUT", "/__admin/mappings/p1",
        body:
          #"{"name":"kept","persistent":true,"request":{"url":"/p"},"response":{"status":200,"body":"two"}}"#)
      #expect(put.status == 200)
      #expect(try String(contentsOfFile: path, encoding: .utf8).contains("two"))
      // The watcher's reload of the written file (one for the new file at least) serves the same stub,
      // once.
      #expect(await eventually(within: .seconds(20)) { service.dashboard.reloadCount > reloads })
      #expect(try http(port, "GET", "/p").body == "two")
      #expect(service.store.stubs.count == 1)

      #expect(try http(port, "DELETE", "/__admin/mappings/p1").status == 200)
      #expect(!FileManager.default.fileExists(atPath: path))
      #expect(try eventually { try http(port, "GET", "/p").status == 404 })
    }
  }

  @Test("GET /__admin/requests?matchingStub=ID lists only that stub's requests")
  func requestsMatchingStub() async throws {
    try await withMockService { _, port in
      for (id, url) in [("s1", "/one"), ("s2", "/two")] {
        _ = try http(
          port, "POST", "/__admin/mappings",
          body: #"{"id":"\#(id)","request":{"url":"\#(url)"},"response":{"status":200}}"#)
      }
      _ = try http(port, "GET", "/one")
      _ = try http(port, "GET", "/two")
      _ = try http(port, "GET", "/two")
      _ = try http(port, "GET", "/none")
      let list = try http(port, "GET", "/__admin/requests?matchingStub=s2").json?["requests"]?.arrayValue
      #expect(list?.count == 2)
      #expect(list?.allSatisfy { $0["request"]?["url"]?.stringValue == "/two" } == true)
      #expect(try http(port, "GET", "/__admin/requests").json?["requests"]?.arrayValue?.count == 4)
    }
  }
}
