import Foundation
import MockServer
import MockServerTesting
import TestSupport
import Testing

@testable import ClientKit

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// The keep-alive reuse check on TLS connections: records the server sends on its own after the
/// handshake (TLS 1.3 session tickets) must not make an idle connection look unusable, while a
/// close_notify must.
@Suite("TLS: SocketConnection reuse check")
struct TLSConnectionReuseTests {
  private func connect(_ server: TestMockServer) throws -> SocketConnection {
    let port = try #require(server.httpsPort)
    let context = try TLSClientContext(trust: .onlyCertificates(try #require(server.certificatePEM)))
    let deadline = monotonicNanoseconds() + 5_000_000_000
    let connection = try SocketConnection.connect(
      host: "127.0.0.1", port: port, key: "test", deadline: deadline, control: ExchangeControl())
    try connection.startTLS(host: "127.0.0.1", context: context, until: deadline)
    return connection
  }

  /// True when bytes are waiting on the socket (without consuming them).
  private func bytesPending(_ connection: SocketConnection) -> Bool {
    var byte: UInt8 = 0
    return recv(connection.fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) > 0
  }

  @Test func pendingSessionTicketsLeaveTheConnectionReusable() async throws {
    let server = try TestMockServer.start(https: .standard)
    defer { server.stop() }
    try server.stub(.get("/x").willReturn(status: 200, json: "{}"))
    let connection = try connect(server)
    defer { connection.close() }
    #expect(
      await eventually(within: .seconds(10)) { bytesPending(connection) },
      "the server sent records after the handshake (session tickets)")
    #expect(connection.isReusable())
    #expect(!bytesPending(connection), "the tickets were consumed")
    #expect(connection.isReusable())

    let deadline = monotonicNanoseconds() + 5_000_000_000
    try connection.writeAll(Array("GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8), until: deadline)
    var buffer = [UInt8](repeating: 0, count: 4096)
    let n = try connection.read(into: &buffer, until: deadline)
    #expect(String(decoding: buffer[0..<n], as: UTF8.self).hasPrefix("HTTP/1.1 200"))
  }

  @Test func aCloseNotifyMakesTheConnectionUnusable() async throws {
    let server = try TestMockServer.start(
      configureServer: { $0.idleTimeoutMilliseconds = 150 }, https: .standard)
    defer { server.stop() }
    let connection = try connect(server)
    defer { connection.close() }
    // The server closes it after 150 ms idle.
    #expect(await eventually(within: .seconds(10)) { !connection.isReusable() })
  }

  @Test func theTransportReplacesAConnectionTheServerClosedWhileIdle() async throws {
    let server = try TestMockServer.start(
      configureServer: { $0.idleTimeoutMilliseconds = 150 }, https: .standard)
    defer { server.stop() }
    try server.stub(.post("/x").willReturn(status: 200, json: "{}"))
    let transport = SocketTransport(trust: .onlyCertificates(try #require(server.certificatePEM)))
    let url = try #require(server.httpsBaseURL).appendingPathComponent("x")
    let request = TransportRequest(method: .post, url: url, body: Data("a".utf8))
    #expect(try await transport.send(request, progress: nil).statusCode == 200)
    // A connection opened after the pooled one went idle: once the server has closed it, it has closed
    // the pooled one too (same 150 ms idle timeout, started earlier).
    let later = try connect(server)
    defer { later.close() }
    #expect(await eventually(within: .seconds(10)) { !later.isReusable() })
    #expect(try await transport.send(request, progress: nil).statusCode == 200)
    let addresses = server.requests.map(\.clientAddress)
    #expect(addresses.count == 2 && addresses[0] != addresses[1], "\(addresses)")
  }
}
