import Foundation

/// A fresh folder under the temporary directory, `mockserver-LABEL-UUID`, with an empty `mappings/`
/// inside (most tests use it as a fixtures folder); the caller removes it.
package func temporaryFolder(_ label: String) throws -> String {
  let path = NSTemporaryDirectory() + "mockserver-\(label)-\(UUID().uuidString)"
  try FileManager.default.createDirectory(atPath: path + "/mappings", withIntermediateDirectories: true)
  return path
}

/// A fixtures folder (`FX/mappings/`, `FX/__files/`) in a fresh temporary directory, removed by
/// ``remove()``.
package struct TemporaryFixtures: Sendable {
  /// The temporary directory; the fixtures folder is `root/FX`, so a test can put other files beside it.
  package let root: String
  /// The fixtures folder, as `--fixtures` takes it.
  package var fixtures: String { root + "/FX" }

  /// Creates `FX/mappings/` with one file per `(name, json)` and `FX/__files/` with one per `files` entry.
  package init(_ stubs: [(String, String)], files: [(String, [UInt8])] = []) throws {
    root = NSTemporaryDirectory() + "mockserver-fixtures-" + UUID().uuidString
    try TemporaryFixtures.write(stubs, into: root + "/FX")
    try FileManager.default.createDirectory(atPath: fixtures + "/__files", withIntermediateDirectories: true)
    for (name, bytes) in files {
      try Data(bytes).write(to: URL(fileURLWithPath: fixtures + "/__files/" + name))
    }
  }

  /// Writes one mapping file per `(name, json)` into `folder/mappings/`, creating it when missing.
  package static func write(_ stubs: [(String, String)], into folder: String) throws {
    try FileManager.default.createDirectory(atPath: folder + "/mappings", withIntermediateDirectories: true)
    for (name, json) in stubs {
      try json.write(toFile: folder + "/mappings/" + name, atomically: true, encoding: .utf8)
    }
  }

  package func remove() { try? FileManager.default.removeItem(atPath: root) }
}

/// A temporary directory removed at deinit.
package final class TemporaryDirectory {
  package let path: String
  package init() throws {
    path = (NSTemporaryDirectory() as NSString).appendingPathComponent("mockserver-\(UUID().uuidString)")
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  }
  deinit { try? FileManager.default.removeItem(atPath: path) }

  /// Writes `text` to `name` in the directory and returns the path.
  package func write(_ name: String, _ text: String) throws -> String {
    let file = (path as NSString).appendingPathComponent(name)
    try text.write(toFile: file, atomically: true, encoding: .utf8)
    return file
  }
}
