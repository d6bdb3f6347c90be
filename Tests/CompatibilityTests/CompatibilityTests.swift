import Foundation
import MockJSON
import MockServerTesting
import TestSupport
import Testing

/// WireMock mapping compatibility: every case file in `Tests/Compatibility/cases/` holds one stub mapping
/// (written from WireMock's documentation) and requests that must and must not match, with the answer
/// expected. Each case is created through the admin API of the real `mockserver` binary and its requests
/// are sent over real sockets (curl). When Java and WireMock 2.35.1's standalone jar (shipped in the
/// Python `wiremock` package) are present, the same cases run against WireMock too, so both servers are
/// held to the same expectations; a case with `"wiremock2"` documents where WireMock 3.x behaves
/// differently from 2.35 (MockServer follows 3.x) and is not checked against 2.35.
///
/// Case file: `{"description", "mapping", "wiremock2"?, "requests": [{"method", "url", "headers"?,
/// "body"?, "expect": {"status", "body"?, "bodyContains"?, "headers"?}}]}`.
@Suite("WireMock compatibility cases", .serialized)
struct CompatibilityTests {
  static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  static let casesFolder = root.appendingPathComponent("Compatibility/cases").path

  struct Case {
    var name: String
    var json: JSONObject
  }

  static func cases() throws -> [Case] {
    let names = try FileManager.default.contentsOfDirectory(atPath: casesFolder).filter {
      $0.hasSuffix(".json")
    }.sorted()
    return try names.map { name in
      let data = try Data(contentsOf: URL(fileURLWithPath: casesFolder + "/" + name))
      guard case .object(let o) = try JSONValue.parse(bytes: [UInt8](data)) else {
        throw CompatibilityError("\(name): not a JSON object")
      }
      return Case(name: name, json: o)
    }
  }

  @Test("at least 80 case files, each with a mapping and requests that match and do not")
  func caseSetIsComplete() throws {
    let all = try Self.cases()
    #expect(all.count >= 80, "\(all.count) cases")
    for c in all {
      #expect(c.json["mapping"]?.objectValue != nil, "\(c.name): no mapping")
      let requests = c.json["requests"]?.arrayValue ?? []
      #expect(!requests.isEmpty, "\(c.name): no requests")
    }
  }

  @Test("every case answers as expected from the mockserver binary")
  func mockServerAnswersEveryCase() throws {
    let folder = try temporaryFixtures()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", folder, "--quiet", "--no-watch"])
    defer { _ = server.stop() }
    let failures = try Self.run(port: server.port, server: "mockserver", skipWireMock2Differences: false)
    #expect(
      failures.isEmpty, Comment(rawValue: "\(failures.count) failures:\n" + failures.joined(separator: "\n")))
  }

  @Test("WireMock 2.35.1 answers the same cases the same way (when Java and the jar are installed)")
  func wireMockAgrees() throws {
    guard let jar = Self.wireMockJar(), FileManager.default.isExecutableFile(atPath: "/usr/bin/java") else {
      print("CompatibilityTests: WireMock jar or java missing; differential run skipped")
      return
    }
    let folder = try temporaryFixtures()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/java")
    process.arguments = [
      "-jar", jar, "--port", "0", "--root-dir", folder, "--bind-address", "127.0.0.1",
      "--local-response-templating",
    ]
    let out = Pipe()
    process.standardOutput = out
    process.standardError = FileHandle.nullDevice
    try process.run()
    defer {
      process.terminate()
      process.waitUntilExit()
    }
    // The banner prints `port:                         12345`.
    var text = ""
    var port: Int?
    let deadline = Date().addingTimeInterval(60)
    while port == nil, Date() < deadline, process.isRunning {
      let chunk = out.fileHandleForReading.availableData
      if chunk.isEmpty { break }
      text += String(decoding: chunk, as: UTF8.self)
      for line in text.split(separator: "\n")
      where line.trimmingCharacters(in: .whitespaces).hasPrefix("port:") {
        port = Int(line.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "")
      }
    }
    // Drained so the jar never blocks on a full pipe (a reader thread, not a readabilityHandler).
    let drain = PipeReader(out.fileHandleForReading) { _ in }
    defer { _ = drain }
    guard let port else {
      Issue.record("WireMock did not start: \(text)")
      return
    }
    let failures = try Self.run(port: port, server: "WireMock 2.35.1", skipWireMock2Differences: true)
    #expect(
      failures.isEmpty, Comment(rawValue: "\(failures.count) failures:\n" + failures.joined(separator: "\n")))
  }

  @Test("all case mappings, as files in one folder, pass mockserver lint with no error")
  func lintAcceptsEveryMapping() throws {
    let folder = try temporaryFixtures()
    defer { try? FileManager.default.removeItem(atPath: folder) }
    for c in try Self.cases() {
      guard let mapping = c.json["mapping"] else { continue }
      try Data(mapping.serializedBytes(pretty: true)).write(
        to: URL(fileURLWithPath: folder + "/mappings/" + c.name))
    }
    let (code, output) = try Self.mockserver(["lint", folder])
    #expect(code == 0, "\(output)")
  }

  // MARK: - Running

  static func run(port: Int, server: String, skipWireMock2Differences: Bool) throws -> [String] {
    var failures: [String] = []
    let base = "http://127.0.0.1:\(port)"
    for c in try cases() {
      if skipWireMock2Differences, c.json["wiremock2"] != nil { continue }
      guard let mapping = c.json["mapping"] else { continue }
      _ = try curl(["-X", "DELETE", base + "/__admin/mappings"])
      _ = try curl(["-X", "POST", base + "/__admin/scenarios/reset"])
      let created = try curl(
        ["-X", "POST", base + "/__admin/mappings", "-H", "Content-Type: application/json"],
        body: mapping.serialized())
      guard created.status == 201 else {
        failures.append(
          "\(server) \(c.name): mapping refused (\(created.status)): \(created.body.prefix(400))")
        continue
      }
      for (k, item) in (c.json["requests"]?.arrayValue ?? []).enumerated() {
        guard let r = item.objectValue else { continue }
        let method = r["method"]?.stringValue ?? "GET"
        var args = ["-X", method, base + (r["url"]?.stringValue ?? "/")]
        if method == "HEAD" { args = ["-I", base + (r["url"]?.stringValue ?? "/")] }
        for h in r["headers"]?.objectValue?.members ?? [] {
          for v in h.value.arrayValue ?? [h.value] {
            args += ["-H", "\(h.key): \(v.stringValue ?? v.serialized())"]
          }
        }
        let body = r["body"].map { $0.stringValue ?? $0.serialized() }
        let reply = try curl(args, body: body)
        let expect = r["expect"]?.objectValue ?? JSONObject()
        let label = "\(server) \(c.name) request \(k) (\(method) \(r["url"]?.stringValue ?? "/"))"
        if let status = expect["status"]?.numberValue?.intValue, status != reply.status {
          failures.append(
            "\(label): expected status \(status), got \(reply.status): \(reply.body.prefix(300))")
          continue
        }
        if let want = expect["body"]?.stringValue, want != reply.body {
          failures.append(
            "\(label): expected body \(JSONValue.quoted(want)), got \(JSONValue.quoted(reply.body))")
        }
        if let want = expect["bodyContains"]?.stringValue, !reply.body.contains(want) {
          failures.append(
            "\(label): expected the body to contain \(JSONValue.quoted(want)), got \(reply.body)")
        }
        for h in expect["headers"]?.objectValue?.members ?? [] {
          let got = reply.headers[h.key.lowercased()]
          if got != h.value.stringValue {
            failures.append(
              "\(label): expected header \(h.key): \(h.value.stringValue ?? ""), got \(got ?? "none")")
          }
        }
      }
    }
    return failures
  }

  struct Reply {
    var status: Int
    var headers: [String: String]
    var body: String
  }

  /// One exchange through curl (`-s -i`), the body given on standard input.
  static func curl(_ arguments: [String], body: String? = nil) throws -> Reply {
    var args = ["-s", "-i", "--max-time", "20", "-H", "Expect:"] + arguments
    if body != nil { args += ["--data-binary", "@-"] }
    var text = try runProcess("curl", args, input: body.map { Data($0.utf8) }).stdout
    // Skip interim 100 responses.
    while text.hasPrefix("HTTP/1.1 100"), let r = text.range(of: "\r\n\r\n") {
      text = String(text[r.upperBound...])
    }
    guard let split = text.range(of: "\r\n\r\n") else { return Reply(status: 0, headers: [:], body: text) }
    let lines = text[..<split.lowerBound].components(separatedBy: "\r\n")
    let status = lines.first.flatMap { Int($0.split(separator: " ").dropFirst().first ?? "") } ?? 0
    var headers: [String: String] = [:]
    for line in lines.dropFirst() {
      guard let colon = line.firstIndex(of: ":") else { continue }
      headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(
        in: .whitespaces)
    }
    return Reply(status: status, headers: headers, body: String(text[split.upperBound...]))
  }

  static func mockserver(_ arguments: [String]) throws -> (Int32, String) {
    let result = try runProcess(MockServerProcess.defaultBinary(), arguments, mergingErrors: true)
    return (result.status, result.stdout)
  }

  /// WireMock's standalone jar inside the Python `wiremock` package, when installed.
  static func wireMockJar() -> String? {
    guard
      let result = try? runProcess(
        "python3", ["-c", "import wiremock,os;print(os.path.dirname(wiremock.__file__))"])
    else { return nil }
    let jar =
      result.stdout.trimmingCharacters(in: .whitespacesAndNewlines) + "/server/wiremock-standalone-2.35.1.jar"
    return FileManager.default.fileExists(atPath: jar) ? jar : nil
  }

  func temporaryFixtures() throws -> String {
    try temporaryFolder("compat", creating: ["mappings", "__files"])
  }
}

struct CompatibilityError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
