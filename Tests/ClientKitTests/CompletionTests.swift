import ClientKit
import Dispatch
import Foundation
import HTTPCore
import Synchronization
import Testing

@Suite("Completion-handler API")
struct CompletionTests {
  final class Box<T: Sendable>: Sendable {
    private let value = Mutex<T?>(nil)
    func set(_ v: T) { value.withLock { $0 = v } }
    var get: T? { value.withLock { $0 } }
  }

  @Test func deliversResultOnTheChosenQueue() async {
    let queue = DispatchQueue(label: "test.completion")
    let key = DispatchSpecificKey<Int>()
    queue.setSpecific(key: key, value: 7)
    let client = makeClient(StubTransport(statusCode: 200, body: #"{"id":1,"name":"A"}"#))
    let onQueue = Box<Bool>()
    let result = Box<Result<User, APIError>>()
    let handle = client.send(GetUser(id: 1), queue: queue) { r in
      onQueue.set(DispatchQueue.getSpecific(key: key) == 7)
      result.set(r)
    }
    await handle.wait()
    queue.sync {}
    #expect(onQueue.get == true)
    #expect((try? result.get?.get())?.name == "A")
  }

  @Test func cancelDeliversCancelled() async {
    let client = makeClient(
      StubTransport { _ throws(APIError) in
        do { try await Task.sleep(for: .seconds(30)) } catch { throw .cancelled }
        return reply(200)
      })
    let queue = DispatchQueue(label: "test.cancel")
    let result = Box<Result<User, APIError>>()
    let handle = client.send(GetUser(id: 1), queue: queue) { result.set($0) }
    try? await Task.sleep(for: .milliseconds(20))
    handle.cancel()
    await handle.wait()
    queue.sync {}
    #expect(handle.isCancelled)
    if case .failure(let error)? = result.get {
      #expect(error.caseName == "cancelled")
    } else {
      Issue.record("expected a cancelled failure")
    }
  }

  @Test func perOutcomeHandlers() async {
    let queue = DispatchQueue(label: "test.handlers")
    let seen = Box<String>()
    let ng = makeClient(
      StubTransport(statusCode: 200, body: #"{"status":"NG","message":"m"}"#),
      envelope: StatusResultEnvelope())
    await ng.send(
      GetUser(id: 1), queue: queue, onSuccess: { _ in seen.set("success") },
      onApplicationError: { app, _ in seen.set("app:\(app.message ?? "")") },
      onStatusError: { r, _ in seen.set("status:\(r.statusCode)") }, onFailure: { _ in seen.set("failure") }
    ).wait()
    queue.sync {}
    #expect(seen.get == "app:m")
    let status = makeClient(StubTransport(statusCode: 404, body: "x"))
    await status.send(
      GetUser(id: 1), queue: queue, onSuccess: { _ in seen.set("success") },
      onApplicationError: { _, _ in seen.set("app") },
      onStatusError: { r, _ in seen.set("status:\(r.statusCode)") },
      onFailure: { _ in seen.set("failure") }
    ).wait()
    queue.sync {}
    #expect(seen.get == "status:404")
  }

  @Test func downloadProgressReportsFractionAndBytes() async throws {
    let log = Mutex<[DownloadProgress]>([])
    let client = makeClient(StubTransport(statusCode: 200, body: #"{"id":1,"name":"A"}"#))
    _ = try await client.response(GetUser(id: 1), progress: { p in log.withLock { $0.append(p) } })
    let last = try #require(log.withLock { $0.last })
    #expect(last.receivedBytes == 19)
    #expect(last.fraction == 1)
    #expect(DownloadProgress(receivedBytes: 5, expectedBytes: 20).fraction == 0.25)
    #expect(DownloadProgress(receivedBytes: 5, expectedBytes: nil).fraction == nil)
  }
}
