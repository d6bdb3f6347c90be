import Foundation
import Testing

/// The OpenAPI documents in `<repository>/../shared/openapi/` (not copied into the repository).
enum SharedDocuments {
  /// The repository root (this file is `Tests/ContractsTests/SharedDocuments.swift`).
  static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  /// Where the shared folder is looked for, in order: `$MOCKSERVER_SHARED_DIR`, `<repository>/../shared`,
  /// and, for a clone of a local repository (`git clone . /tmp/x`), `<origin>/../shared`.
  static var candidates: [String] {
    var out: [String] = []
    if let dir = ProcessInfo.processInfo.environment["MOCKSERVER_SHARED_DIR"], !dir.isEmpty {
      out.append(dir)
    }
    out.append(
      repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared").standardizedFileURL.path)
    if let origin = localOrigin() {
      out.append(
        URL(fileURLWithPath: origin).standardizedFileURL.deletingLastPathComponent().appendingPathComponent(
          "shared"
        )
        .standardizedFileURL.path)
    }
    return out
  }

  /// The path of a local origin (`url = /path` or `file:///path` of `[remote "origin"]` in `.git/config`).
  static func localOrigin() -> String? {
    let config = repositoryRoot.appendingPathComponent(".git/config").path
    guard let text = try? String(contentsOfFile: config, encoding: .utf8) else { return nil }
    var inOrigin = false
    for line in text.split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
      if line.hasPrefix("[") {
        inOrigin = line == "[remote \"origin\"]"
      } else if inOrigin, line.hasPrefix("url") {
        let value = line.drop { $0 != "=" }.dropFirst().trimmingCharacters(in: .whitespaces)
        if value.hasPrefix("/") { return value }
        if value.hasPrefix("file://") { return String(value.dropFirst("file://".count)) }
        return nil
      }
    }
    return nil
  }

  /// The `openapi` folder of the first candidate that has one; a test that needs it fails (never skips)
  /// when none has.
  static var folder: String {
    let folders = candidates.map { $0 + "/openapi" }
    return folders.first { FileManager.default.fileExists(atPath: $0) } ?? folders[0]
  }

  /// The path of one document, recording a failure when the folder or file is absent.
  static func path(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
    let p = folder + "/" + name
    if !FileManager.default.fileExists(atPath: p) {
      Issue.record(
        "missing \(p): the shared OpenAPI documents must be in ../shared/openapi (looked in \(candidates))",
        sourceLocation: sourceLocation)
    }
    return p
  }
}
