import Foundation
import MockJSON
import Synchronization

/// Writes recorded stubs as a fixtures folder: one mapping file per endpoint in `DIR/mappings/` (named
/// from method and path: `get-api-users.json`, a `{"mappings": [...]}` file when the endpoint has several
/// stubs), binary bodies and text bodies over the text threshold in `DIR/__files/` (`bodyFileName`).
/// Existing files are never overwritten: a name in use gets `-2`, `-3`….
package enum RecordingWriter {
  /// Text bodies larger than this go to `__files/` unless the spec says otherwise (bytes).
  package static let defaultTextSizeThreshold = 16 << 10

  /// Writes `stubs` under `directory` and returns the paths written, relative to it.
  /// - Throws: file-system errors (the folder cannot be created or written).
  package static func write(
    _ stubs: [RecordedStub], to directory: String, textSizeThreshold: Int? = nil,
    binarySizeThreshold: Int? = nil
  ) throws -> [String] {
    let root = URL(fileURLWithPath: directory, isDirectory: true)
    let mappings = root.appendingPathComponent("mappings", isDirectory: true)
    let files = root.appendingPathComponent("__files", isDirectory: true)
    let fm = FileManager.default
    try fm.createDirectory(at: mappings, withIntermediateDirectories: true)
    var written: [String] = []
    var order: [String] = []
    var byEndpoint: [String: [RecordedStub]] = [:]
    for stub in stubs {
      if byEndpoint[stub.endpoint] == nil { order.append(stub.endpoint) }
      byEndpoint[stub.endpoint, default: []].append(stub)
    }
    let textLimit = textSizeThreshold ?? defaultTextSizeThreshold
    let binaryLimit = binarySizeThreshold ?? 0
    for endpoint in order {
      guard let group = byEndpoint[endpoint], let first = group.first else { continue }
      var jsons: [JSONValue] = []
      for stub in group {
        let (json, file) = try extractingBody(
          stub, into: files, textSizeThreshold: textLimit, binarySizeThreshold: binaryLimit)
        if let file { written.append("__files/\(file)") }
        jsons.append(.object(json))
      }
      let document: JSONValue =
        jsons.count == 1 ? jsons[0] : .object(JSONObject(pairs: [("mappings", .array(jsons))]))
      let fileName = unusedName(first.name, ext: "json", in: mappings)
      try Data(document.serializedBytes(pretty: true) + [10]).write(
        to: mappings.appendingPathComponent(fileName))
      written.append("mappings/\(fileName)")
    }
    return written
  }

  /// WireMock's `extractBodyCriteria`: when the stub's content is over its threshold (binary or text,
  /// bytes), writes it to a new file in `files` (created when missing) and returns the stub with
  /// `bodyFileName` in place of the body, and the file's name; otherwise the stub as it is and nil.
  /// - Throws: file-system errors.
  package static func extractingBody(
    _ stub: RecordedStub, into files: URL, textSizeThreshold: Int, binarySizeThreshold: Int
  ) throws -> (JSONObject, String?) {
    guard let body = stub.body,
      stub.isBinary ? body.count > binarySizeThreshold : body.count > textSizeThreshold
    else { return (stub.json, nil) }
    try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
    let fileName = unusedName(stub.name, ext: stub.fileExtension, in: files)
    try Data(body).write(to: files.appendingPathComponent(fileName))
    return (replacingBody(stub.json, withFile: fileName), fileName)
  }

  static func replacingBody(_ stub: JSONObject, withFile name: String) -> JSONObject {
    var stub = stub
    guard let i = stub.members.firstIndex(where: { $0.key == "response" }),
      var response = stub.members[i].value.objectValue
    else { return stub }
    response.members.removeAll { ["body", "jsonBody", "base64Body"].contains($0.key) }
    response.members.append(JSONObject.Member(key: "bodyFileName", value: .string(name)))
    stub.members[i].value = .object(response)
    return stub
  }

  static func unusedName(_ base: String, ext: String, in folder: URL) -> String {
    var n = 1
    while true {
      let name = n == 1 ? "\(base).\(ext)" : "\(base)-\(n).\(ext)"
      if !FileManager.default.fileExists(atPath: folder.appendingPathComponent(name).path) { return name }
      n += 1
    }
  }
}

/// A recording written as it grows (`mockserver record`, `--record-mappings`): after every answered
/// exchange the whole recording is written again into the files this session owns, each by
/// write-to-a-temporary-file-then-rename, so any way the process ends (SIGKILL, a closed terminal) leaves
/// every finished exchange on disk in files that parse. Files that were there before the session are never
/// touched: the session's own names are chosen once (`-2`, `-3`… past existing ones) and kept.
package final class RecordingFolder: Sendable {
  private let directory: URL
  private struct Owned {
    /// endpoint → mapping file name; "endpoint#k" → body file name.
    var names: [String: String] = [:]
    var files: Set<String> = []
  }
  private let owned = Mutex(Owned())

  package init(directory: String) {
    self.directory = URL(fileURLWithPath: directory, isDirectory: true)
  }

  /// Writes `stubs` (the recording so far) and removes this session's files they no longer need.
  /// - Returns: the paths written, relative to the folder.
  /// - Throws: file-system errors; the files written before stay as they were.
  @discardableResult
  package func update(_ stubs: [RecordedStub], textSizeThreshold: Int? = nil) throws -> [String] {
    try owned.withLock { state in
      let fm = FileManager.default
      let mappings = directory.appendingPathComponent("mappings", isDirectory: true)
      let files = directory.appendingPathComponent("__files", isDirectory: true)
      try fm.createDirectory(at: mappings, withIntermediateDirectories: true)
      var order: [String] = []
      var byEndpoint: [String: [RecordedStub]] = [:]
      for stub in stubs {
        if byEndpoint[stub.endpoint] == nil { order.append(stub.endpoint) }
        byEndpoint[stub.endpoint, default: []].append(stub)
      }
      let textLimit = textSizeThreshold ?? RecordingWriter.defaultTextSizeThreshold
      var written: [String] = []
      func name(_ key: String, _ base: String, _ ext: String, in folder: URL, _ prefix: String) -> String {
        if let known = state.names[key] { return known }
        var n = 1
        while true {
          let candidate = n == 1 ? "\(base).\(ext)" : "\(base)-\(n).\(ext)"
          let ours = state.names.values.contains(candidate) || state.files.contains(prefix + candidate)
          if !ours && !fm.fileExists(atPath: folder.appendingPathComponent(candidate).path) {
            state.names[key] = candidate
            return candidate
          }
          n += 1
        }
      }
      for endpoint in order {
        guard let group = byEndpoint[endpoint], let first = group.first else { continue }
        var jsons: [JSONValue] = []
        for (k, stub) in group.enumerated() {
          var json = stub.json
          if let body = stub.body, stub.isBinary ? !body.isEmpty : body.count > textLimit {
            try fm.createDirectory(at: files, withIntermediateDirectories: true)
            let file = name("\(endpoint)#\(k)", stub.name, stub.fileExtension, in: files, "__files/")
            try Data(body).write(to: files.appendingPathComponent(file), options: .atomic)
            json = RecordingWriter.replacingBody(json, withFile: file)
            written.append("__files/\(file)")
          }
          jsons.append(.object(json))
        }
        let document: JSONValue =
          jsons.count == 1 ? jsons[0] : .object(JSONObject(pairs: [("mappings", .array(jsons))]))
        let file = name(endpoint, first.name, "json", in: mappings, "mappings/")
        try Data(document.serializedBytes(pretty: true) + [10]).write(
          to: mappings.appendingPathComponent(file), options: .atomic)
        written.append("mappings/\(file)")
      }
      for stale in state.files.subtracting(written) {
        try? fm.removeItem(at: directory.appendingPathComponent(stale))
      }
      state.files = Set(written)
      return written
    }
  }
}
