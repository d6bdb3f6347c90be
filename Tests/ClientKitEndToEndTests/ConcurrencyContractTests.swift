import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Concurrent calls through one client never get each other's answers, whatever the delays; pipelined
/// requests on one connection are answered in order.
@Suite("Contract: concurrent and pipelined calls")
struct ConcurrencyContractTests {
  @Test("30 concurrent calls with random delays each get their own answer", arguments: TransportKind.allCases)
  func concurrentCallsKeepTheirAnswers(kind: TransportKind) async throws {
    let server = try TestMockServer.start(configure: { $0.seed = 7 })
    defer { server.stop() }
    for id in 1...30 {
      try server.stub(
        .get("/items/\(id)").willReturn(
          responseJSON: #"""
            {"status":200,"jsonBody":{"status":"OK","result":{"id":\#(id)}},
             "delayDistribution":{"type":"uniform","lower":0,"upper":150}}
            """#))
    }
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())
    let answers = try await withThrowingTaskGroup(of: (Int, Item).self) { group in
      for id in 1...30 {
        group.addTask { (id, try await client.send(Endpoint<Item>(.get, "/items/\(id)"))) }
      }
      var all: [Int: Item] = [:]
      for try await (id, item) in group { all[id] = item }
      return all
    }
    #expect(answers.count == 30)
    #expect(answers.allSatisfy { $0.key == $0.value.id })
    try server.verify(count: 30, .matching("GET", pathPattern: "/items/[0-9]+"))
    #expect(server.unmatchedRequests.isEmpty)
  }

  @Test("40 concurrent slow calls through SocketTransport run in parallel, not a few at a time")
  func manyConcurrentSlowCallsOverlap() async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/slow").willReturn(json: #"{"id":1}"#, delayMilliseconds: 60_000))
    let client = makeClient(server.baseURL, SocketTransport(), timeout: .seconds(120))
    // Each exchange blocks its caller until the 60 s delay ends: all 40 reach the server while every one
    // of them is still waiting only if they run at once (a pool of 8 would let 8 in, then nothing for a
    // minute). An order check, not a time bound: no answer can come before the delay.
    let calls = Task {
      try await withThrowingTaskGroup(of: Item.self) { group in
        for _ in 0..<40 { group.addTask { try await client.send(Endpoint<Item>(.get, "/slow")) } }
        var n = 0
        for try await _ in group { n += 1 }
        return n
      }
    }
    let allArrived = await eventually(within: .seconds(50)) { server.requests.count == 40 }
    #expect(allArrived, "\(server.requests.count) of 40 slow calls reached the server at once")
    calls.cancel()
    let answered = try? await calls.value
    #expect(answered == nil, "no slow call was answered before its delay")
  }

  @Test("a slow call does not hold back a fast one on the same client", arguments: TransportKind.allCases)
  func slowDoesNotBlockFast(kind: TransportKind) async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/slow").willReturn(json: #"{"id":1}"#, delayMilliseconds: 60_000))
    try server.stub(.get("/fast").willReturn(json: #"{"id":2}"#))
    let client = makeClient(server.baseURL, kind.make(), timeout: .seconds(120))
    let slow = Task { try await client.send(Endpoint<Item>(.get, "/slow")) }
    #expect(
      await eventually(within: .seconds(10)) {
        server.requests.contains { $0.request.head.target == "/slow" }
      })
    // Held back, the fast call would come after the slow call's minute: it must be answered while the
    // slow one is still waiting (an order check, not a time bound).
    #expect(try await client.send(Endpoint<Item>(.get, "/fast")) == Item(id: 2))
    slow.cancel()
    let slowAnswer = try? await slow.value
    #expect(slowAnswer == nil, "the slow call was still waiting when the fast one was answered")
  }

  @Test("pipelined requests on one connection are answered in order, a delayed first one included")
  func pipelinedInOrder() async throws {
    let server = try TestMockServer.start()
    defer { server.stop() }
    try server.stub(.get("/p/1").willReturn(json: #"{"id":1}"#, delayMilliseconds: 300))
    try server.stub(.get("/p/2").willReturn(json: #"{"id":2}"#))
    try server.stub(.get("/p/3").willReturn(json: #"{"id":3}"#))
    let requests =
      "GET /p/1 HTTP/1.1\r\nHost: x\r\n\r\nGET /p/2 HTTP/1.1\r\nHost: x\r\n\r\n"
      + "GET /p/3 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    let port = server.port
    let reply = try await onOwnThread { try rawExchange(port: port, send: requests) }
    let bodies = ["{\"id\":1}", "{\"id\":2}", "{\"id\":3}"].map { reply.range(of: $0)?.lowerBound }
    #expect(bodies.allSatisfy { $0 != nil }, "reply: \(reply)")
    let positions = bodies.compactMap { $0 }
    #expect(positions == positions.sorted())
    #expect(reply.components(separatedBy: "HTTP/1.1 200 OK").count == 4)
    #expect(server.requests.map(\.request.head.target) == ["/p/1", "/p/2", "/p/3"])
  }
}

/// Writes `text` on a new loopback connection to `port` and reads until the server closes (30 s at most).
func rawExchange(port: Int, send text: String) throws -> String {
  String(decoding: try RawClient.exchange(port: port, Array(text.utf8), timeout: 30), as: UTF8.self)
}

/// Runs blocking `work` on a thread of its own, keeping Swift concurrency's few threads free.
func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
  try await withCheckedThrowingContinuation { continuation in
    Thread { continuation.resume(with: Result { try work() }) }.start()
  }
}
