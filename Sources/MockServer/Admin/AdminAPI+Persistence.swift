import Foundation
import HTTPCore
import Mappings
import MockJSON

#if canImport(Glibc)
  import Glibc
#endif

/// Writing admin changes to the fixtures folder (WireMock's `persistent` stubs and `save`).
///
/// A stub whose JSON says `"persistent": true` is written to `mappings/` when it is created, its file is
/// rewritten when it is replaced (`PUT`) and rewritten without it (or removed, when it held nothing else)
/// when it is deleted. Runtime edits of other file stubs stay in memory (they survive hot reloads, see
/// ``StubStore/replaceFileStubs(_:keepRuntimeStubs:changedFiles:)``) until `POST /__admin/mappings/save`
/// writes them. Runs on the event loop, like every admin change; file errors become 500 answers.
extension AdminAPI {
  /// True when the stub's JSON says `"persistent": true`.
  static func isPersistent(_ stub: StubMapping) -> Bool {
    stub.source.objectValue?["persistent"]?.boolValue == true
  }

  /// The fixtures folder's `mappings/`, or nil without a fixtures folder.
  var mappingsFolder: URL? {
    configuration.fixturesDirectory.map {
      URL(fileURLWithPath: $0, isDirectory: true).appendingPathComponent("mappings", isDirectory: true)
    }
  }

  /// Names (lower-cased, relative to `mappings/`) of the files there now.
  func takenMappingFileNames() -> Set<String> {
    guard let folder = mappingsFolder else { return [] }
    return Set(FileTree.files(under: folder.path).map { $0.path.lowercased() })
  }

  /// A file name under `mappings/` for `stub` that no file has (`<name-or-stub>-<id>.json`, then `-2`,
  /// `-3`…, compared without case for case-insensitive file systems). Inserts it into `taken`.
  static func newMappingFileName(for stub: StubMapping, taken: inout Set<String>) -> String {
    let base = fileSafe(stub.name ?? "stub") + "-" + fileSafe(stub.id)
    var name = base + ".json"
    var suffix = 2
    while taken.contains(name.lowercased()) {
      name = base + "-\(suffix).json"
      suffix += 1
    }
    taken.insert(name.lowercased())
    return name
  }

  /// Writes `bytes` to `url` so that the file is either whole or as it was: into a hidden temporary file
  /// in the same folder (`.mockserver-save-XXXXXX`, which the loader skips), `fsync`, then renamed over
  /// `url` (`replacing`) or linked to it (not replacing: a file already there is an error, never
  /// replaced), and the folder synced. A failure (full disk, `kill -9` midway) leaves the old file or
  /// none, never a cut one (a cut mapping file made the next start refuse to run).
  /// - Throws: ``SaveError`` naming the file and the failed call.
  static func writeDurably(_ bytes: [UInt8], to url: URL, replacing: Bool) throws(SaveError) {
    let path = url.path
    let folder = url.deletingLastPathComponent().path
    func failure(_ call: String) -> SaveError {
      SaveError(errorDescription: "\(path): \(call) failed: \(String(cString: strerror(errno)))")
    }
    var template = Array((folder + "/.mockserver-save-XXXXXX").utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { buffer in buffer.baseAddress.map { mkstemp($0) } ?? -1
    }
    guard fd >= 0 else { throw failure("creating a temporary file") }
    let temporary = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
    var done = false
    var open = true
    defer {
      if open { close(fd) }
      if !done { unlink(temporary) }
    }
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if n < 0, errno == EINTR { continue }
      guard n > 0 else { throw failure("write") }
      offset += n
    }
    guard fchmod(fd, 0o644) == 0, fsync(fd) == 0 else { throw failure("fsync") }
    open = false
    guard close(fd) == 0 else { throw failure("close") }
    if replacing {
      guard rename(temporary, path) == 0 else { throw failure("rename") }
    } else {
      guard link(temporary, path) == 0 else { throw failure("link") }
      unlink(temporary)
    }
    done = true
    let directory = Glibc.open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if directory >= 0 {
      _ = fsync(directory)
      close(directory)
    }
  }

  /// Writes `stub` to a new file under `mappings/` and returns the stub as a file stub (its `file` set,
  /// relative to the fixtures folder). Throws file errors.
  func persistNew(_ stub: StubMapping) throws -> StubMapping {
    guard let folder = mappingsFolder else { return stub }
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    var taken = takenMappingFileNames()
    let name = AdminAPI.newMappingFileName(for: stub, taken: &taken)
    let bytes = AdminAPI.stubJSON(stub).serializedBytes(pretty: true) + [10]
    try AdminAPI.writeDurably(bytes, to: folder.appendingPathComponent(name), replacing: false)
    var saved = stub
    saved.file = "mappings/" + name
    saved.location = "$"
    return saved
  }

  /// Writes the stubs the store serves from `file` (relative to the fixtures folder) back to it: one stub
  /// as an object, several as `{"mappings": […]}`, each with its `id`; removes the file when none is left.
  /// Then the store forgets its runtime edits of that file. Throws file errors.
  func rewriteStubFile(_ file: String) throws {
    guard let directory = configuration.fixturesDirectory, file.hasPrefix("mappings/"),
      !file.split(separator: "/").contains("..")
    else { return }
    let url = URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(file)
    let stubs = store.stubs(inFile: file)
    if stubs.isEmpty {
      if FileManager.default.fileExists(atPath: url.path) { try FileManager.default.removeItem(at: url) }
    } else {
      let json: JSONValue =
        stubs.count == 1 && stubs[0].location == "$"
        ? AdminAPI.stubJSON(stubs[0])
        : .object(JSONObject(pairs: [("mappings", .array(stubs.map(AdminAPI.stubJSON)))]))
      try AdminAPI.writeDurably(json.serializedBytes(pretty: true) + [10], to: url, replacing: true)
    }
    store.markWritten(files: [file])
  }

  /// Removes `stubs` from the store; the files of persistent ones are rewritten at once. Returns the 500
  /// to send when a file could not be written (the stubs are removed from serving either way), or the
  /// 503 when the shared state store could not take the change (nothing was removed).
  func deleteStubs(_ stubs: [StubMapping]) -> ResponsePlan? {
    let ids = stubs.map(\.id)
    do { try store.change { $0.remove(ids: ids) } } catch { return AdminAPI.sharedStateUnavailable(error) }
    let files = Set(stubs.filter { AdminAPI.isPersistent($0) }.compactMap(\.file))
    return rewrite(files)
  }

  /// Rewrites each of `files`; the 500 to send for the first that fails.
  func rewrite(_ files: Set<String>) -> ResponsePlan? {
    for file in files.sorted() {
      do {
        try rewriteStubFile(file)
      } catch {
        return AdminAPI.error(
          .internalServerError, title: "Write failed",
          detail: "\(file): \(error.localizedDescription) (the change is served but not written)")
      }
    }
    return nil
  }
}

/// Why a file could not be saved: the file, the call that failed and the system's reason.
struct SaveError: LocalizedError {
  /// `…/mappings/x.json: write failed: No space left on device`.
  var errorDescription: String?
}
