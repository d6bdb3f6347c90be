import Foundation

/// A fresh folder under the temporary directory, `mockserver-LABEL-UUID`, with the empty `subfolders`
/// inside (`["mappings"]` for a fixtures folder); the caller removes it.
package func temporaryFolder(_ label: String, creating subfolders: [String] = []) throws -> String {
  let path = NSTemporaryDirectory() + "mockserver-\(label)-\(UUID().uuidString)"
  try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  for folder in subfolders {
    try FileManager.default.createDirectory(atPath: path + "/" + folder, withIntermediateDirectories: true)
  }
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

/// A fresh temporary folder with `mappings/` holding one file per `files` entry, removed by ``remove()``.
package struct TemporaryFolder: Sendable {
  package let path: String

  package init(files: [(String, String)] = []) throws {
    path = try temporaryFolder("folder", creating: ["mappings"])
    for (name, text) in files {
      try text.write(toFile: path + "/mappings/" + name, atomically: true, encoding: .utf8)
    }
  }

  package func remove() { try? FileManager.default.removeItem(atPath: path) }

  /// Writes `text` to `name` in the folder and returns its path.
  @discardableResult
  package func write(_ name: String, _ text: String) throws -> String {
    let file = path + "/" + name
    try text.write(toFile: file, atomically: true, encoding: .utf8)
    return file
  }

  /// Every file under the folder, relative paths, sorted.
  package func files() -> [String] {
    (FileManager.default.enumerator(atPath: path)?.allObjects as? [String] ?? []).filter {
      var isDirectory: ObjCBool = false
      return FileManager.default.fileExists(atPath: path + "/" + $0, isDirectory: &isDirectory)
        && !isDirectory.boolValue
    }.sorted()
  }
}
