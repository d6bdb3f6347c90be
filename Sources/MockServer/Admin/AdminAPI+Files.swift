import Foundation
import HTTPCore
import Mappings
import MockJSON

/// `/__admin/files…`: the body files under the fixtures folder's `__files/` (WireMock's file endpoints).
///
/// - `GET /__admin/files` → a JSON array of the files' paths relative to `__files/`, sorted.
/// - `GET /__admin/files/{name}` → the file's bytes; `PUT` writes the request content to it (folders made
///   as needed) and answers with it; `DELETE` removes it.
///
/// `{name}` may have several segments (`a/b.json`). Names with `.`/`..` segments, empty segments, `%2F` or
/// NUL are refused (400), and so is any name whose resolved path (links followed) leaves `__files/` (403):
/// the API can read and write nothing else.
extension AdminAPI {
  func files(_ call: Call, _ rest: [String]) -> ResponsePlan {
    guard let directory = configuration.fixturesDirectory else {
      return AdminAPI.error(
        HTTPStatus(code: 409), title: "No fixtures folder",
        detail: "the server was started without a fixtures folder, so it has no __files/")
    }
    let root = URL(fileURLWithPath: directory, isDirectory: true).standardizedFileURL
      .appendingPathComponent("__files", isDirectory: true)
    if rest.isEmpty {
      guard call.method == "GET" else { return notFound(call) }
      let names = FileTree.files(under: root.path).map(\.path).sorted()
      return AdminAPI.json(.array(names.map { .string($0) }))
    }
    for segment in rest {
      if segment == "." || segment == ".." || segment.isEmpty || segment.contains("/")
        || segment.contains("\u{0}")
      {
        return AdminAPI.error(
          .badRequest, title: "Invalid file name",
          detail: "\(rest.joined(separator: "/")): expected a path inside __files/ without . or .. segments")
      }
    }
    let name = rest.joined(separator: "/")
    let target = root.appendingPathComponent(name)
    guard AdminAPI.staysInside(root, target) else {
      return AdminAPI.error(
        .forbidden, title: "Outside __files",
        detail: "\(name): resolves to a path outside __files/ (a symbolic link?); refused")
    }
    let fm = FileManager.default
    switch call.method {
    case "GET":
      // FileTree's read, not `FileManager.contents(atPath:)`: that leaks the 4 KiB buffer it reads an empty
      // file into (FoundationEssentials of Swift 6.3.1), on every GET of an empty body file. Regular files
      // only (a named pipe would block the loop).
      var isDirectory: ObjCBool = false
      guard fm.fileExists(atPath: target.path, isDirectory: &isDirectory), !isDirectory.boolValue,
        let data = FileTree.contents(target.path)
      else { return noFile(name) }
      let ext = name.split(separator: ".").last.map { String($0).lowercased() } ?? ""
      // A file's content is never run on the admin API's origin (DocumentSandbox).
      return ResponsePlan.respond(
        status: .ok,
        headers: ["Content-Type": MockResponder.bodyFileTypes[ext] ?? "application/octet-stream"],
        body: data
      ).sandboxingDocuments()
    case "PUT":
      do {
        try fm.createDirectory(at: target.deletingLastPathComponent(), withIntermediateDirectories: true)
        // Checked again: a folder made above could only be under the checked parent, but a link placed
        // meanwhile must not be followed out.
        guard AdminAPI.staysInside(root, target) else {
          return AdminAPI.error(
            .forbidden, title: "Outside __files", detail: "\(name): resolves outside __files/; refused")
        }
        try AdminAPI.writeDurably(call.request.body, to: target, replacing: true)
      } catch {
        return AdminAPI.error(
          .internalServerError, title: "Write failed",
          detail: "__files/\(name): \(error.localizedDescription)")
      }
      return .respond(
        status: .ok, headers: ["Content-Type": "application/octet-stream"], body: call.request.body)
    case "DELETE":
      var isDirectory: ObjCBool = false
      guard fm.fileExists(atPath: target.path, isDirectory: &isDirectory), !isDirectory.boolValue else {
        return noFile(name)
      }
      do {
        try fm.removeItem(at: target)
      } catch {
        return AdminAPI.error(
          .internalServerError, title: "Delete failed",
          detail: "__files/\(name): \(error.localizedDescription)"
        )
      }
      return AdminAPI.empty
    default:
      return notFound(call)
    }
  }

  func noFile(_ name: String) -> ResponsePlan {
    AdminAPI.error(.notFound, title: "File not found", detail: "__files/\(name): no such file")
  }

  /// True when `target` (links followed as far as it exists) is inside `root` (links followed).
  static func staysInside(_ root: URL, _ target: URL) -> Bool {
    let rootPath = root.resolvingSymlinksInPath().standardizedFileURL.path
    // The deepest part of the path that exists decides (a file to be created is not there yet).
    var existing = target.standardizedFileURL
    var rest: [String] = []
    while !FileManager.default.fileExists(atPath: existing.path), existing.path != "/" {
      // A dangling link counts as existing: following it must not leave the root either.
      if (try? FileManager.default.destinationOfSymbolicLink(atPath: existing.path)) != nil { return false }
      rest.insert(existing.lastPathComponent, at: 0)
      existing = existing.deletingLastPathComponent()
    }
    var resolved = existing.resolvingSymlinksInPath().standardizedFileURL
    for part in rest { resolved.appendPathComponent(part) }
    let path = resolved.path
    return path == rootPath || path.hasPrefix(rootPath + "/")
  }

  /// `POST /__admin/requests/remove-by-metadata`: removes the journal entries of requests served by stubs
  /// whose `metadata` matches the body's matcher; answers `{}`.
  func removeRequestsByMetadata(_ call: Call, in journal: RequestJournal) -> ResponsePlan {
    let pattern: StringValuePattern
    switch AdminAPI.metadataMatcher(call) {
    case .failure(let f): return f.plan
    case .success(let p): pattern = p
    }
    let ids = Set(
      store.stubs.filter { stub in stub.metadata.map { pattern.match($0.serialized()) } ?? false }.map(\.id))
    journal.removeAll { entry in entry.stubID.map { ids.contains($0) } ?? false }
    return AdminAPI.empty
  }
}
