import Foundation
import HTTPCore
import Mappings
import MockJSON
import NativeSupport

/// The WebSocket opening handshake (RFC 6455 §4.2) for a stub with `x-websocket`, or for an upgrade a
/// global message mapping's channel pattern accepts (WireMock 4's `message-mappings/`).
extension MockResponder {
  /// True for a request asking to switch to WebSocket (`Upgrade: websocket`).
  static func asksForWebSocket(_ request: HTTPRequest) -> Bool {
    request.headers.values("Upgrade").contains { value in
      value.split(separator: ",").contains {
        $0.trimmingCharacters(in: .whitespaces).lowercased() == "websocket"
      }
    }
  }

  /// The handshake's refusal, or nil when the request is a valid opening handshake (RFC 6455 §4.2.1):
  /// 400 for a method other than GET, HTTP/1.0, `Connection` without `Upgrade`, a missing or malformed
  /// `Sec-WebSocket-Key`; 426 with `Sec-WebSocket-Version: 13` for another version (§4.4).
  static func handshakeRefusal(_ request: HTTPRequest) -> ResponsePlan? {
    func refuse(_ status: Int, _ reason: String, headers: HTTPHeaders = [:]) -> ResponsePlan {
      var headers = headers
      headers.add(name: "Content-Type", value: "application/json")
      return .respond(
        status: HTTPStatus(code: status), headers: headers,
        body: Array(#"{"error":\#(JSONValue.quoted(reason)),"status":\#(status)}"#.utf8), keepAlive: false)
    }
    guard request.method == .get else { return refuse(400, "a WebSocket opening handshake is a GET") }
    guard request.head.version == .http1_1 else {
      return refuse(400, "a WebSocket opening handshake needs HTTP/1.1")
    }
    let connectionTokens = request.headers.values("Connection").flatMap { $0.split(separator: ",") }
    guard
      connectionTokens.contains(where: { $0.trimmingCharacters(in: .whitespaces).lowercased() == "upgrade" })
    else {
      return refuse(400, "Connection must carry the Upgrade token")
    }
    guard request.headers.first("Sec-WebSocket-Version")?.trimmingOWS() == "13" else {
      return refuse(
        426, "Sec-WebSocket-Version must be 13", headers: ["Sec-WebSocket-Version": "13"])
    }
    // RFC 6455 §11.3.1: the field must not appear more than once.
    guard request.headers.values("Sec-WebSocket-Key").count == 1,
      let key = request.headers.first("Sec-WebSocket-Key")?.trimmingOWS(),
      let decoded = Data(base64Encoded: key), decoded.count == 16
    else {
      return refuse(400, "Sec-WebSocket-Key must be given once, 16 bytes of base64")
    }
    return nil
  }

  /// `Sec-WebSocket-Accept` for `key`: base64(SHA-1(key + the GUID)), RFC 6455 §4.2.2.
  static func acceptValue(key: String) -> String {
    let digest = LibcryptoDigest.hash(.sha1, Array(WebSocketEndpoint.acceptInput(key: key).utf8))
    return Data(digest).base64EncodedString()
  }

  /// Answers an upgrade request with 101 and a ``WebSocketSession`` (or the handshake's refusal), journaled
  /// with the status sent. `stub` is nil for an upgrade accepted by a global message mapping.
  func serveWebSocket(
    _ definition: WebSocketDefinition, stub: StubMapping?, request: HTTPRequest, context: RequestContext,
    pathParameters: [String: String]
  ) -> ResponsePlan {
    if let refusal = MockResponder.handshakeRefusal(request) {
      let status = refusal.sentStatus ?? 400
      record(request, context: context, stubID: stub?.id, status: status, served: true)
      log(request, status: status, label: stub.map(MockResponder.label))
      return refusal
    }
    // The journal id is drawn when the upgrade is answered; the entry is recorded when the plan completes.
    let idWords = nextIDWords()
    let key = request.headers.first("Sec-WebSocket-Key")?.trimmingOWS() ?? ""
    var headers: HTTPHeaders = [
      "Upgrade": "websocket", "Sec-WebSocket-Accept": MockResponder.acceptValue(key: key),
    ]
    if let subprotocol = definition.subprotocol {
      let offered = request.headers.values("Sec-WebSocket-Protocol").flatMap { $0.split(separator: ",") }
        .map { $0.trimmingCharacters(in: .whitespaces) }
      if offered.contains(subprotocol) { headers.add(name: "Sec-WebSocket-Protocol", value: subprotocol) }
    }
    var delay = 0
    if let stub {
      var response = stub.response
      var named = false
      MockResponder.name(stub, in: &response, once: &named)
      for field in response.headers { headers.add(name: field.name, value: field.value) }
      delay = response.fixedDelayMilliseconds ?? 0
    }
    let session = WebSocketSession(
      id: SplitMix64.uuidString(.random(in: .min ... .max), .random(in: .min ... .max)), upgrade: request,
      context: context, definition: definition,
      stubID: stub?.id, pathParameters: pathParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) },
      hub: webSockets, templating: templating)
    let stubID = stub?.id
    let label = stub.map(MockResponder.label)
    var steps: [ResponsePlan.Step] = []
    if delay > 0 { steps.append(.pause(milliseconds: delay)) }
    steps.append(
      .upgrade(
        HTTPResponseHead(
          status: HTTPStatus(code: 101, reasonPhrase: "Switching Protocols"), headers: headers),
        session: session))
    return ResponsePlan(steps: steps, keepAlive: false) { [self] served in
      record(request, context: context, stubID: stubID, status: 101, served: served, idWords: idWords)
      log(request, status: served ? 101 : nil, label: label)
    }
  }
}
