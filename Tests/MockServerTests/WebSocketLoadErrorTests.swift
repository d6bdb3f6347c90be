import Foundation
import HTTPCore
import Mappings
import MockJSON
import TestSupport
import Testing

@testable import MockServer

/// Load errors of `x-websocket` stubs and WireMock 4 message stub mappings (docs/streaming.md): each names
/// the JSON path and what was expected; the stub or mapping with an error is left out, the others load.
@Suite("WebSocket stubs and message stub mappings: load errors")
struct WebSocketLoadErrorTests {
  static let context = StubParsingContext(makeID: { "made" })

  /// The problems (`path: message`) of one stub.
  static func stubProblems(_ json: String) throws -> [String] {
    StubParser.parse(try JSONValue.parse(json), file: "", context: context).1.filter(\.isError).map {
      "\($0.path): \($0.message)"
    }
  }

  /// The mappings of a `message-mappings/` file and its problems.
  static func messageFile(_ json: String) throws -> ([WebSocketDefinition.MessageMapping], [String]) {
    var d = Diagnostics(file: "message-mappings/x.json")
    let list = StubParser.parseMessageMappings(try JSONValue.parse(json), context: context, &d)
    return (list, d.problems.filter(\.isError).map { "\($0.path): \($0.message)" })
  }

  static func websocketStub(_ fields: String, response extra: String = "") -> String {
    #"{"request":{"urlPath":"/ws"},"response":{\#(extra)"x-websocket":{\#(fields)}}}"#
  }

  @Test(
    "x-websocket fields are checked where they enter",
    arguments: [
      (#""closeStatus":{"code":1005}"#, "$.response.x-websocket.closeStatus.code"),
      (#""closeStatus":{"code":999}"#, "$.response.x-websocket.closeStatus.code"),
      (
        #""closeStatus":{"reason":"\#(String(repeating: "x", count: 124))"}"#,
        "$.response.x-websocket.closeStatus.reason"
      ),
      (#""subprotocol":"chat v1""#, "$.response.x-websocket.subprotocol"),
      (#""messages":[{"text":"a","binary":"AA=="}]"#, "$.response.x-websocket.messages[0]"),
      (#""messages":[{"binary":"not base64!"}]"#, "$.response.x-websocket.messages[0].binary"),
      (
        #""messages":[{"text":"a","delay":{"timeUnit":"FORTNIGHTS","value":1}}]"#,
        "$.response.x-websocket.messages[0].delay.timeUnit"
      ),
      (
        #""messages":[{"text":"a","delay":{"timeUnit":"DAYS","value":2}}]"#,
        "$.response.x-websocket.messages[0].delay.value"
      ),
      (#""messages":[{"text":"{{#if}}"}]"#, "$.response.x-websocket.messages[0].text"),
      (#""pingIntervalMilliseconds":-1"#, "$.response.x-websocket.pingIntervalMilliseconds"),
      (#""bogus":1"#, "$.response.x-websocket.bogus"),
      (
        #""messageMappings":[{"trigger":{"type":"http-request","requestPattern":{}},"actions":[]}]"#,
        "$.response.x-websocket.messageMappings[0].trigger.type"
      ),
      (
        #""messageMappings":[{"actions":[{"type":"x-close","code":1006}]}]"#,
        "$.response.x-websocket.messageMappings[0].actions[0].code"
      ),
      (
        #""messageMappings":[{"actions":[{"type":"send","message":{"body":{"base64Data":"%%"}}}]}]"#,
        "$.response.x-websocket.messageMappings[0].actions[0].message.body.base64Data"
      ),
      (#""messageMappings":[{"priority":0}]"#, "$.response.x-websocket.messageMappings[0].priority"),
    ])
  func xWebSocketField(fields: String, path: String) throws {
    let problems = try Self.stubProblems(Self.websocketStub(fields))
    #expect(problems.contains { $0.hasPrefix(path + ": ") }, "\(problems)")
  }

  @Test func aWebSocketStubCarriesNoContentAndAnswers101() throws {
    let withBody = try Self.stubProblems(Self.websocketStub("", response: #""body":"x","#))
    #expect(withBody.contains { $0.hasPrefix("$.response.body: expected no body beside x-websocket") })
    let with200 = try Self.stubProblems(Self.websocketStub("", response: #""status":200,"#))
    #expect(with200.contains { $0.hasPrefix("$.response.status: expected 101") })
  }

  @Test func messageMappingFilesAcceptOneMappingOrAList() throws {
    let (one, p1) = try Self.messageFile(
      #"{"id":"a","trigger":{"type":"message"},"actions":[{"type":"send","message":{"body":"x"}}]}"#)
    #expect(p1.isEmpty && one.map(\.id) == ["a"])
    let (two, p2) = try Self.messageFile(
      #"{"messageMappings":[{"id":"a"},{"trigger":{"type":"http-stub","stubId":"s1"},"actions":[]}],"meta":{}}"#
    )
    #expect(p2.isEmpty, "\(p2)")
    #expect(two.count == 2 && two[1].httpTrigger == .stub(id: "s1"))
    // The file's source keeps what was written, with the id it was given.
    #expect(two[1].source["id"] == .string("made"))
  }

  /// An `http-stub` trigger naming an id no stub of the folder has is a warning (it fires only once a runtime
  /// stub takes that id), at the trigger's `stubId`; one naming a file stub is not.
  @Test func anHTTPStubTriggerNamingNoFileStubIsAWarning() throws {
    let folder = try TemporaryFolder(files: [
      ("a.json", #"{"id":"known","request":{"url":"/a"},"response":{"status":200}}"#)
    ])
    defer { folder.remove() }
    try FileManager.default.createDirectory(
      atPath: folder.path + "/message-mappings", withIntermediateDirectories: true)
    try folder.write(
      "message-mappings/triggers.json",
      #"{"messageMappings":[{"id":"k","trigger":{"type":"http-stub","stubId":"known"},"actions":[]},"#
        + #"{"id":"u","trigger":{"type":"http-stub","stubId":"later"},"actions":[]}]}"#)
    let set = FixtureLoader.load(directory: folder.path)
    #expect(!set.hasErrors)
    let warnings = set.warnings.map { "\($0.file) \($0.path): \($0.message)" }
    #expect(warnings.count == 1, "\(warnings)")
    #expect(
      warnings.first?.hasPrefix(#"message-mappings/triggers.json $.messageMappings[1].trigger.stubId: "#)
        == true,
      "\(warnings)")
    #expect(warnings.first?.contains(#"stub "later""#) == true)
  }

  @Test(
    "message mapping files: errors name the path",
    arguments: [
      (#"[1]"#, "$: expected a message stub mapping object"),
      (#"{"messageMappings":{}}"#, "$.messageMappings: expected an array"),
      (#"{"messageMappings":[],"mappings":[]}"#, "$.mappings: expected only messageMappings"),
      (#"{"trigger":{"type":"http-request"}}"#, "$.trigger.requestPattern: expected a request pattern"),
      (#"{"trigger":{"type":"http-stub"}}"#, "$.trigger.stubId: expected the id of an HTTP stub mapping"),
      (
        #"{"trigger":{"type":"kafka"}}"#,
        #"$.trigger.type: expected "message", "http-request" or "http-stub""#
      ),
      (
        #"{"trigger":{"type":"http-request","requestPattern":{"urlPath":"/a"}},"actions":[{"type":"send","message":{"body":"x"}}]}"#,
        "$.actions[0].channelTarget: expected {\"type\": \"request-initiated\""
      ),
      (
        #"{"trigger":{"type":"http-stub","stubId":"s"},"actions":[{"type":"x-close"}]}"#,
        "$.actions[0].type: expected \"send\" (an HTTP trigger has no originating channel to close)"
      ),
      (#"{"metadata":[1]}"#, "$.metadata: expected an object"),
      (#"{"actions":[{"type":"send"}]}"#, "$.actions[0].message: expected {\"body\": …}"),
      (#"{"extra":1}"#, "$.extra: expected a message stub field"),
      (#"{"trigger":{"type":7}}"#, #"$.trigger.type: expected "message", "http-request" or "http-stub""#),
      (#"{"trigger":{"bogus":1}}"#, "$.trigger.bogus: expected a field of a message trigger"),
      (
        #"{"trigger":{"channel":{"url":"/x"}}}"#,
        "$.trigger.channel.url: expected type or initiatingRequestPattern"
      ),
      (
        #"{"trigger":{"type":"http-stub","stubId":"s","requestPattern":{}}}"#,
        "$.trigger.requestPattern: expected a field of a http-stub trigger"
      ),
      (#"{"id":""}"#, "$.id: expected an id of 1 to 256 bytes"),
    ])
  func messageMappingFileErrors(json: String, expected: String) throws {
    let (list, problems) = try Self.messageFile(json)
    #expect(list.isEmpty)
    #expect(problems.contains { $0.hasPrefix(expected) }, "\(problems)")
  }

  @Test func onlyMessageTriggeredMappingsAnswerMessages() throws {
    let (list, problems) = try Self.messageFile(
      #"{"messageMappings":[{"id":"http","priority":1,"trigger":{"type":"http-request","requestPattern":{}},"#
        + #""actions":[{"type":"send","message":{"body":"x"},"channelTarget":{"type":"request-initiated"}}]},"#
        + #"{"id":"low","priority":9,"actions":[]},{"id":"high","priority":2,"actions":[]},"#
        + #"{"id":"tie","priority":2,"actions":[]}]}"#)
    #expect(problems.isEmpty, "\(problems)")
    let upgrade = HTTPRequest(head: HTTPRequestHead(method: .get, target: "/ws"))
    let best = WebSocketDefinition.bestMapping(
      for: .text("hi"), in: list, upgrade: upgrade, connection: nil)
    // The HTTP-triggered mapping never answers a message; of the equal priorities the later one wins.
    #expect(best?.id == "tie")
  }
}
