import HTTPCore
import Testing

@testable import MockServer

/// `ResponseHeadWriter` must write the same bytes as the HTTPCore composition it replaces on the hot path.
@Suite("ResponseHeadWriter matches HTTPSerializer framing")
struct ResponseHeadWriterTests {
  /// The reference: what `Connection.writeHead` did before the one-pass writer.
  static func reference(
    _ authored: HTTPResponseHead, contentLength: Int, date: String, server: String?, connection: String?
  ) -> [UInt8] {
    var h = HTTPSerializer.framed(authored, contentLength: contentLength, requestMethod: .get)
    if !h.headers.contains("Date") { h.headers.add(name: "Date", value: date) }
    if let server, !h.headers.contains("Server") { h.headers.add(name: "Server", value: server) }
    h.headers.remove(name: "Connection")
    if let connection { h.headers.add(name: "Connection", value: connection) }
    var out: [UInt8] = []
    HTTPSerializer.writeResponseHead(h, into: &out)
    return out
  }

  static let heads: [HTTPResponseHead] = [
    HTTPResponseHead(status: .ok, headers: ["Content-Type": "application/json"]),
    HTTPResponseHead(status: .notFound),
    HTTPResponseHead(status: HTTPStatus(code: 204)),
    HTTPResponseHead(status: HTTPStatus(code: 304), headers: ["ETag": "\"x\"", "content-length": "9"]),
    HTTPResponseHead(status: HTTPStatus(code: 100)),
    HTTPResponseHead(
      status: HTTPStatus(code: 299, reasonPhrase: "Odd\r\nReason"),
      headers: [
        "X-Evil": "a\r\nSet-Cookie: b\0", "DATE": "Mon, 01 Jan 2024 00:00:00 GMT",
        "transfer-encoding": "chunked",
        "Connection": "upgrade", "server": "custom",
        "X-Long-Header-Name-Beyond-Small-Strings": String(
          repeating: "é", count: 40),
      ]),
    HTTPResponseHead(
      version: .http1_0, status: .ok,
      headers: ["Content-Length": "1", "Content-Length": "2", "X-Dup": "1", "x-dup": "2"]),
  ]

  @Test(arguments: [0, 7, 67, 1_000_000, Int.max])
  func sameBytes(contentLength: Int) {
    for head in Self.heads {
      for server in [nil, "mockserver"] as [String?] {
        for connection in [nil, "close", "keep-alive"] as [String?] {
          var out: [UInt8] = [1, 2, 3]
          ResponseHeadWriter.write(
            head, contentLength: contentLength,
            dateLine: Array("Date: Tue, 02 Jan 2024 00:00:00 GMT\r\n".utf8),
            server: server.map { Array("Server: \($0)\r\n".utf8) } ?? [],
            connection: connection.map { Array("Connection: \($0)\r\n".utf8) } ?? [], into: &out)
          let expected =
            [1, 2, 3]
            + Self.reference(
              head, contentLength: contentLength, date: "Tue, 02 Jan 2024 00:00:00 GMT", server: server,
              connection: connection)
          #expect(
            out == expected,
            "\(String(decoding: out, as: UTF8.self)) vs \(String(decoding: expected, as: UTF8.self))")
        }
      }
    }
  }
}
