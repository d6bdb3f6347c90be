import Contracts
import Foundation
import HTTPCore
import JSONSchema
import Mappings
import MockJSON
import MockServer
import MockServerCLI
import Testing

/// Issue 18: `/__admin/openapi.json` describes the admin API, and what the admin API answers agrees with
/// it. A run through every route (successes and errors) is validated with Contracts' response checks
/// (JSON Schema), and every operation of the document is exercised by the run.
@Suite struct AdminOpenAPITests {
  @Test func everyAdminAnswerMatchesTheServedOpenAPIDocument() async throws {
    let folder = NSTemporaryDirectory() + "mockserver-admin-openapi-\(UUID().uuidString)"
    try FileManager.default.createDirectory(atPath: folder + "/mappings", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: folder + "/__files", withIntermediateDirectories: true)
    try Data("hi".utf8).write(to: URL(fileURLWithPath: folder + "/__files/a.txt"))
    defer { try? FileManager.default.removeItem(atPath: folder) }
    var configuration = MockServiceConfiguration()
    configuration.logLevel = .quiet
    configuration.fixturesDirectory = folder
    // The server checks its own answers too (a mismatch would come back as a 500 naming it).
    configuration.adminResponseCheck = AdminResponseCheck.check
    let service = MockService(configuration: configuration, fixtures: FixtureLoader.load(directory: folder))
    service.onShutdownRequested = {}
    var serverConfiguration = ServerConfiguration()
    serverConfiguration.port = 0
    let server = HTTPServer(configuration: serverConfiguration, responder: service)
    try server.start()
    defer { server.shutdown(graceful: false) }
    let base = try #require(URL(string: server.baseURL))

    let served = try await exchange(base, "GET", "/__admin/openapi.json")
    #expect(served.status == 200)
    let document = try OpenAPIDocument.parse(String(decoding: served.body, as: UTF8.self), name: "admin")
    #expect(document.version.hasPrefix("3."))

    let stub =
      #"{"id":"s1","name":"one","metadata":{"team":"a"},"request":{"method":"GET","url":"/x"},"response":{"status":200,"body":"x"}}"#
    let pattern = #"{"method":"GET","url":"/x"}"#
    let metadata = #"{"matchesJsonPath":{"expression":"$.team","equalTo":"a"}}"#
    let messageMapping =
      #"{"id":"m1","metadata":{"team":"a"},"trigger":{"type":"message","message":{"body":{"equalTo":"hi"}}},"actions":[{"type":"send","message":{"body":"hello"}}]}"#
    let messagePattern = #"{"body":{"equalTo":"hi"}}"#
    let calls: [(String, String, String?)] = [
      ("GET", "/__admin/openapi.json", nil), ("GET", "/__admin/docs", nil),
      ("GET", "/__admin/health", nil), ("GET", "/__admin/version", nil),
      ("POST", "/__admin/mappings", stub), ("POST", "/__admin/mappings", #"{"request":{"url":5}}"#),
      ("POST", "/__admin/mappings/new", #"{"id":"s2","request":{"url":"/y"},"response":{"status":204}}"#),
      ("GET", "/__admin/mappings", nil), ("GET", "/__admin/mappings?limit=x", nil),
      ("GET", "/__admin/mappings/s1", nil), ("GET", "/__admin/mappings/nope", nil),
      ("PUT", "/__admin/mappings/s1", stub), ("PUT", "/__admin/mappings/nope", stub),
      ("GET", "/x", nil), ("GET", "/unmatched", nil),
      // In a session (docs/scaling.md#sessions): its own stubs and requests; whole-server routes refused.
      ("POST", "/__session/t1/__admin/mappings", stub), ("GET", "/__session/t1/x", nil),
      ("GET", "/__session/t1/__admin/mappings", nil), ("GET", "/__session/t1/__admin/requests", nil),
      ("POST", "/__session/t1/__admin/requests/count", pattern),
      ("GET", "/__session/t1/__admin/scenarios", nil),
      ("POST", "/__session/t1/__admin/recordings/start", "{}"), ("POST", "/__session/t1/__admin/reset", nil),
      ("POST", "/__admin/mappings/find-by-metadata", metadata),
      ("GET", "/__admin/mappings/unmatched", nil),
      ("GET", "/__admin/requests", nil), ("GET", "/__admin/requests?matchingStub=s1", nil),
      ("GET", "/__admin/requests?limit=-1", nil),
      ("POST", "/__admin/requests/count", pattern), ("POST", "/__admin/requests/find", pattern),
      ("GET", "/__admin/requests/unmatched", nil), ("GET", "/__admin/requests/unmatched/near-misses", nil),
      ("GET", "/__admin/requests/nope", nil), ("DELETE", "/__admin/requests/nope", nil),
      ("POST", "/__admin/near-misses/request", #"{"method":"GET","url":"/z"}"#),
      ("POST", "/__admin/near-misses/request-pattern", pattern),
      ("POST", "/__admin/requests/remove", pattern),
      ("POST", "/__admin/requests/remove-by-metadata", metadata),
      ("POST", "/__admin/requests/reset", nil), ("DELETE", "/__admin/requests", nil),
      ("GET", "/__admin/scenarios", nil), ("POST", "/__admin/scenarios/reset", nil),
      ("GET", "/__admin/state-extension/contexts", nil),
      ("GET", "/__admin/state-extension/contexts/nope", nil),
      ("DELETE", "/__admin/state-extension/contexts/nope", nil),
      ("DELETE", "/__admin/state-extension/contexts", nil),
      ("GET", "/__admin/message-mappings", nil),
      ("POST", "/__admin/message-mappings", messageMapping), ("POST", "/__admin/message-mappings", "{}x"),
      ("POST", "/__admin/message-mappings", #"{"trigger":{"type":"shout"}}"#),
      ("GET", "/__admin/message-mappings/m1", nil), ("GET", "/__admin/message-mappings/nope", nil),
      ("PUT", "/__admin/message-mappings/m1", messageMapping),
      ("PUT", "/__admin/message-mappings/nope", messageMapping),
      ("POST", "/__admin/message-mappings/find-by-metadata", metadata),
      ("POST", "/__admin/message-mappings/remove-by-metadata", metadata),
      ("POST", "/__admin/message-mappings", messageMapping),
      ("DELETE", "/__admin/message-mappings/m1", nil), ("DELETE", "/__admin/message-mappings/m1", nil),
      ("DELETE", "/__admin/message-mappings", nil),
      ("GET", "/__admin/channels", nil), ("GET", "/__admin/channels/nope", nil),
      ("DELETE", "/__admin/channels/nope", nil),
      ("POST", "/__admin/channels/send", #"{"type":"websocket","message":{"body":"hi"}}"#),
      ("POST", "/__admin/channels/send", #"{"type":"websocket"}"#),
      ("GET", "/__admin/messages", nil), ("GET", "/__admin/messages?limit=x", nil),
      ("GET", "/__admin/messages?limit=5", nil), ("DELETE", "/__admin/messages", nil),
      ("POST", "/__admin/messages/count", messagePattern), ("POST", "/__admin/messages/count", #"{"x":1}"#),
      ("POST", "/__admin/messages/find", messagePattern),
      ("POST", "/__admin/messages/remove", messagePattern),
      ("POST", "/__admin/messages/remove-by-metadata", metadata),
      ("POST", "/__admin/messages/wait", #"{"pattern":\#(messagePattern),"timeoutMillis":1}"#),
      ("POST", "/__admin/messages/wait", #"{"timeoutMillis":-1}"#),
      ("POST", "/__admin/messages/wait-for-count", #"{"pattern":{},"count":2,"timeoutMillis":0}"#),
      ("GET", "/__admin/messages/nope", nil), ("DELETE", "/__admin/messages/nope", nil),
      ("PUT", "/__admin/scenarios/none/state", #"{"state":"Started"}"#),
      ("GET", "/__admin/settings", nil),
      (
        "POST", "/__admin/settings",
        #"{"fixedDelay":0,"delayDistribution":{"type":"fixed","milliseconds":0}}"#
      ),
      ("PUT", "/__admin/settings", #"{"settings":{"fixedDelay":0}}"#),
      ("PATCH", "/__admin/settings", #"{"extended":{"a":1}}"#),
      ("POST", "/__admin/settings", #"{"bogus":1}"#),
      ("GET", "/__admin/files", nil), ("GET", "/__admin/files/a.txt", nil),
      ("PUT", "/__admin/files/b.txt", "bee"), ("DELETE", "/__admin/files/b.txt", nil),
      ("GET", "/__admin/files/missing.txt", nil), ("GET", "/__admin/files/%2E%2E", nil),
      ("POST", "/__admin/mappings/remove", #"{"request":{"method":"GET","url":"/y"}}"#),
      ("POST", "/__admin/mappings/remove-by-metadata", metadata),
      ("POST", "/__admin/mappings/import", #"{"mappings":[\#(stub)]}"#),
      ("POST", "/__admin/mappings/save", nil),
      ("DELETE", "/__admin/mappings/s1", nil), ("DELETE", "/__admin/mappings/s1", nil),
      ("DELETE", "/__admin/mappings/unmatched", nil), ("DELETE", "/__admin/mappings", nil),
      ("POST", "/__admin/mappings/reset", nil), ("POST", "/__admin/reset", nil),
      ("GET", "/__admin/recordings/status", nil),
      ("POST", "/__admin/recordings/start", #"{"targetBaseUrl":"http://127.0.0.1:9"}"#),
      ("POST", "/__admin/recordings/start", #"{"targetBaseUrl":"http://127.0.0.1:9"}"#),
      ("POST", "/__admin/recordings/stop", nil), ("POST", "/__admin/recordings/stop", nil),
      ("POST", "/__admin/recordings/snapshot", nil),
      ("GET", "/__admin/dashboard", nil), ("GET", "/__admin/dashboard/state", nil),
      ("GET", "/__admin/events?heartbeat=5", nil), ("GET", "/__admin/no-such-route", nil),
      ("POST", "/__admin/shutdown", nil),
    ]
    var exercised = Set<String>()
    for (method, target, body) in calls {
      let answer = try await exchange(
        base, method, target, headers: body == nil ? [:] : ["Content-Type": "application/json"], body: body)
      guard target.hasPrefix("/__admin") else { continue }
      let text = String(decoding: answer.body, as: UTF8.self)
      #expect(!text.contains("does not match openapi.json"), "\(method) \(target): \(text)")
      let path = String(target.prefix { $0 != "?" })
      if path == "/__admin/no-such-route" {
        #expect(answer.status == 404)
        continue
      }
      let (operation, _) = try #require(
        document.operation(method: method, path: path), "\(method) \(path) is not in the document")
      exercised.insert("\(operation.method.uppercased()) \(operation.path)")
      let declared = try #require(
        operation.response(for: answer.status),
        "\(method) \(target) answered \(answer.status), which the document does not declare")
      var headers = HTTPHeaders()
      for (name, value) in answer.headers { headers.add(name: name, value: value) }
      let violations = OpenAPILinter.responseViolations(
        status: answer.status, headers: headers, body: Array(answer.body), declared, document: document)
      #expect(
        violations.isEmpty,
        "\(method) \(target) \(answer.status): \(violations.map(\.description).joined(separator: "; "))")
    }
    let documented = Set(document.operations.map { "\($0.method.uppercased()) \($0.path)" })
    #expect(documented.subtracting(exercised).isEmpty, "not exercised: \(documented.subtracting(exercised))")
  }

  @Test func theServerReplacesAnAnswerTheDocumentDoesNotAllowWithA500NamingTheOperation() throws {
    let json: HTTPHeaders = ["Content-Type": "application/json"]
    func check(_ method: String, _ path: String, _ status: Int, _ body: String, headers: HTTPHeaders? = nil)
      -> String?
    {
      AdminResponseCheck.violation(
        method: method, rawPath: path, status: status, headers: headers ?? json, body: Array(body.utf8))
    }
    #expect(check("GET", "/__admin/version", 200, #"{"version":"1.0"}"#) == nil)
    #expect(check("GET", "/__admin/mappings/", 200, #"{"mappings":[],"meta":{"total":0}}"#) == nil)
    #expect(
      check("GET", "/__admin/files/a/b.json", 404, #"{"errors":[{"code":404,"title":"t","detail":"d"}]}"#)
        == nil)
    #expect(check("GET", "/__admin/nope", 404, #"{"errors":[{"code":404,"title":"t","detail":"d"}]}"#) == nil)
    #expect(
      check("GET", "/__admin/health", 401, #"{"errors":[{"code":401,"title":"t","detail":"d"}]}"#) == nil)
    let body = try #require(check("GET", "/__admin/health", 200, #"{"status":5,"version":"1"}"#))
    #expect(body.contains("GET /__admin/health") && body.contains("status"), "\(body)")
    let status = try #require(check("GET", "/__admin/version", 418, "{}"))
    #expect(status.contains("418") && status.contains("GET /__admin/version"), "\(status)")
    let type = try #require(
      check("GET", "/__admin/version", 200, "x", headers: ["Content-Type": "text/plain"]))
    #expect(type.contains("Content-Type"), "\(type)")
    #expect(check("GET", "/__admin/nope", 200, "{}")?.contains("not in openapi.json") == true)

    let plan = ResponsePlan.respond(
      status: .ok, headers: json, body: Array(#"{"status":5,"version":"1"}"#.utf8)
    ).checkingAdminAnswers(AdminResponseCheck.check, method: "GET", rawPath: "/__admin/health")
    guard case .response(let head, let answer)? = plan.steps.first else {
      Issue.record("no response step in \(plan.steps)")
      return
    }
    #expect(head.status.code == 500)
    let text = String(decoding: answer, as: UTF8.self)
    #expect(text.contains("does not match openapi.json") && text.contains("GET /__admin/health"), "\(text)")
  }
}
