import Foundation
import HTTPCore
import TestSupport
import Testing

@testable import Mappings
@testable import MockServer

/// Mapping files are read and parsed on several threads; what the loader returns must be what one pass in
/// file order returns: stub order (which stub is the most recent), ids, duplicate-id errors and the order
/// of problems.
@Suite("Fixture loading in parallel keeps the order of one pass")
struct FixtureLoaderParallelTests {
  /// `count` files `mappings/f-000.json`…; file `k` answers `/same` and `/only-k`, and every fifth file
  /// holds a `mappings` list of two stubs.
  static func manyFiles(_ count: Int) -> [String: String] {
    var files: [String: String] = [:]
    for k in 0..<count {
      let name = "mappings/f-" + String(k).leftPadded(to: 3) + ".json"
      let same = #"{"request":{"method":"GET","urlPath":"/same"},"response":{"status":200,"body":"\#(k)"}}"#
      let own = #"{"request":{"urlPath":"/only-\#(k)"},"response":{"status":201}}"#
      files[name] = k % 5 == 0 ? #"{"mappings":[\#(same),\#(own)]}"# : same
    }
    return files
  }

  @Test func stubsComeInFileOrderAndTheLastFileWins() throws {
    let count = 300
    let fixtures = try TempFixtures(files: Self.manyFiles(count))
    defer { fixtures.remove() }
    let set = FixtureLoader.load(directory: fixtures.root.path)
    #expect(set.problems.isEmpty, "\(set.problems)")
    var expected: [String] = []
    for k in 0..<count {
      let file = "mappings/f-" + String(k).leftPadded(to: 3) + ".json"
      expected += k % 5 == 0 ? [file + " $.mappings[0]", file + " $.mappings[1]"] : [file + " $"]
    }
    #expect(set.stubs.map { "\($0.file ?? "-") \($0.location)" } == expected)
    // Equal priority: the stub loaded last answers.
    let table = StubTable(set.stubs)
    guard case .matched(let stub, _) = table.match(request(.get, "/same"), scenarioState: { _ in "" }) else {
      Issue.record("no match for /same")
      return
    }
    #expect(stub.response.body == Array("\(count - 1)".utf8))
    // Stubs without an id get the same stable id on every load, each its own.
    let ids = set.stubs.map(\.id)
    #expect(!ids.contains(""))
    #expect(Set(ids).count == ids.count)
    #expect(FixtureLoader.load(directory: fixtures.root.path).stubs.map(\.id) == ids)
  }

  @Test func problemsAndDuplicateIDsInFileOrder() throws {
    var files = Self.manyFiles(120)
    // A file whose stubs give a warning, a duplicate id, then another warning.
    files["mappings/f-040.json"] =
      #"{"mappings":[{"priority":"3","request":{"urlPath":"/w0"},"response":{}},"#
      + #"{"id":"dup","request":{"urlPath":"/d"},"response":{}},"#
      + #"{"priority":"4","request":{"urlPath":"/w2"},"response":{}}]}"#
    files["mappings/f-010.json"] = #"{"id":"dup","request":{"urlPath":"/first"},"response":{}}"#
    files["mappings/f-070.json"] = #"{"request":{"urlPath":"/x"},"response":{},"unknown":1}"#
    files["mappings/f-100.json"] = #"{"uuid":"dup","request":{"urlPath":"/again"},"response":{}}"#
    let fixtures = try TempFixtures(files: files)
    defer { fixtures.remove() }
    let set = FixtureLoader.load(directory: fixtures.root.path)
    let lines = set.problems.map(\.description)
    #expect(lines.count == 5, "\(lines)")
    guard lines.count == 5 else { return }
    #expect(lines[0].hasPrefix("mappings/f-040.json: $.mappings[0].priority: warning:"))
    #expect(
      lines[1]
        == #"mappings/f-040.json: $.mappings[1].id: expected an id used by no other stub, found "dup", already used in mappings/f-010.json $"#
    )
    #expect(lines[2].hasPrefix("mappings/f-040.json: $.mappings[2].priority: warning:"))
    #expect(lines[3].hasPrefix("mappings/f-070.json: $.unknown: expected a stub mapping field"))
    #expect(lines[4].hasPrefix("mappings/f-100.json: $.uuid: expected an id used by no other stub"))
    #expect(set.stubs.filter { $0.id == "dup" }.map(\.file) == ["mappings/f-010.json"])
    #expect(set.stubs.contains { $0.location == "$.mappings[2]" && $0.file == "mappings/f-040.json" })
  }
}

extension String {
  /// The string with leading zeros up to `width` characters.
  fileprivate func leftPadded(to width: Int) -> String {
    String(repeating: "0", count: max(0, width - count)) + self
  }
}
