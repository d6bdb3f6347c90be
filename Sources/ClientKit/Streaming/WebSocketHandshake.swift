import Foundation
import HTTPCore

/// The client side of the opening handshake (RFC 6455 §4.1): the request's header fields and the checks
/// of the server's `101` answer. No I/O.
struct WebSocketHandshake: Sendable {
  /// `Sec-WebSocket-Key`: 16 random bytes, base64.
  let key: String
  let subprotocols: [String]

  init(subprotocols: [String], randomBytes: [UInt8] = (0..<16).map { _ in UInt8.random(in: 0...255) }) {
    self.key = Data(randomBytes).base64EncodedString()
    self.subprotocols = subprotocols
  }

  /// The `Sec-WebSocket-Accept` a server must answer with: base64(SHA-1(key + GUID)).
  var expectedAccept: String {
    Data(Digest.hash(.sha1, Data(WebSocketEndpoint.acceptInput(key: key).utf8))).base64EncodedString()
  }

  /// The request's header fields for the handshake, added to `headers` (replacing any of the same name).
  func headers(adding headers: HTTPHeaders) -> HTTPHeaders {
    var out = headers
    for name in [
      "Upgrade", "Connection", "Sec-WebSocket-Key", "Sec-WebSocket-Version", "Sec-WebSocket-Protocol",
      "Content-Length", "Accept-Encoding",
    ] { out.remove(name: name) }
    out.add(name: "Upgrade", value: "websocket")
    out.add(name: "Connection", value: "Upgrade")
    out.add(name: "Sec-WebSocket-Key", value: key)
    out.add(name: "Sec-WebSocket-Version", value: "13")
    if !subprotocols.isEmpty {
      out.add(name: "Sec-WebSocket-Protocol", value: subprotocols.joined(separator: ", "))
    }
    return out
  }

  /// Checks the server's answer; returns the chosen subprotocol.
  /// - Throws: ``APIError/unacceptableStatus(_:application:)`` for a status other than 101,
  ///   ``APIError/malformedResponse(_:detail:)`` naming the header field that is wrong.
  func validate(statusCode: Int, headers: HTTPHeaders, body: Data = Data(), request: RequestInfo)
    throws(APIError)
    -> String?
  {
    guard statusCode == 101 else {
      throw .unacceptableStatus(
        ResponseInfo(request: request, statusCode: statusCode, headers: headers, body: body), application: nil
      )
    }
    func fail(_ detail: String) -> APIError {
      .malformedResponse(request, detail: "WebSocket handshake: \(detail)")
    }
    guard headers.first("Upgrade")?.trimmingOWS().lowercasedASCII() == "websocket" else {
      throw fail("the 101 response's Upgrade is \(headers.first("Upgrade") ?? "missing"), expected websocket")
    }
    guard headers.hasToken("upgrade", in: "Connection") else {
      throw fail(
        "the 101 response's Connection is \(headers.first("Connection") ?? "missing"), expected Upgrade")
    }
    guard headers.first("Sec-WebSocket-Accept")?.trimmingOWS() == expectedAccept else {
      throw fail(
        "Sec-WebSocket-Accept is \(headers.first("Sec-WebSocket-Accept") ?? "missing"), expected \(expectedAccept)"
      )
    }
    guard let chosen = headers.first("Sec-WebSocket-Protocol")?.trimmingOWS(), !chosen.isEmpty else {
      return nil
    }
    guard subprotocols.contains(chosen) else {
      throw fail("the server chose the subprotocol \(chosen), which was not offered (\(subprotocols))")
    }
    return chosen
  }
}
