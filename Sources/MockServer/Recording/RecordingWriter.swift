import Foundation
import MockJSON

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
