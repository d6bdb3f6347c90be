import Foundation
import Testing

/// The OpenAPI documents in `<repository>/../shared/openapi/` (not copied into the repository).
enum SharedDocuments {
  /// The repository root (this file is `Tests/ContractsTests/SharedDocuments.swift`).
  static let repositoryRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .deletingLastPathComponent().deletingLastPathComponent()

  /// `<repository>/../shared/openapi`; a test that needs it fails (never skips) when it is missing.
  static var folder: String {
    repositoryRoot.deletingLastPathComponent().appendingPathComponent("shared/openapi").standardizedFileURL
      .path
  }

  /// The path of one document, recording a failure when the folder or file is absent.
  static func path(_ name: String, sourceLocation: SourceLocation = #_sourceLocation) -> String {
    let p = folder + "/" + name
    if !FileManager.default.fileExists(atPath: p) {
      Issue.record(
        "missing \(p): the shared OpenAPI documents must be in ../shared/openapi",
        sourceLocation: sourceLocation)
    }
    return p
  }
}
