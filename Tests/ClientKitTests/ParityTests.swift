import ClientKit
import HTTPCore
import Synchronization
import Testing

/// Issue 19 parity features with a stub transport: RFC 9111 freshness, multipart, monitors and metrics,
/// retriers, token schemes, URLRequest interop, downloads.
@Suite("Parity: cache freshness, multipart, monitors, retrier, token schemes, URLRequest")
struct ParityTests {
  static func counting(_ headers: HTTPHeaders, calls: Counter) -> StubTransport {
    StubTransport { _ throws(APIError) in
      let n = calls.increment()
      return TransportResponse(
        statusCode: 200, headers: headers, body: Data(#"{"id":\#(n),"name":"N"}"#.utf8))
    }
  }

  @Test("max-age: fresh answers come from the cache, stale ones from the network")
  func maxAgeFreshness() async throws {
    let calls = Counter()
    let client = makeClient(
      Self.counting(["Cache-Control": "max-age=60"], calls: calls), cache: ResponseCache())
    let first = try await client.response(GetUser(id: 1))
    let second = try await client.response(GetUser(id: 1))
    #expect(first.source == .network)
    #expect(second.source == .cache)
    #expect(second.value.id == 1)
    #expect(calls.count == 1)
    #expect(second.metrics.fromCache)
  }

  @Test("Age, Expires, no-cache, s-maxage and heuristics")
  func freshnessRules() {
    let now = Date()
    func entry(_ headers: HTTPHeaders) -> CachedResponse {
      CachedResponse(statusCode: 200, headers: headers, body: Data(), storedAt: now)
    }
    #expect(entry(["Cache-Control": "max-age=60"]).isFresh(at: now))
    #expect(!entry(["Cache-Control": "max-age=60", "Age": "61"]).isFresh(at: now))
    #expect(!entry(["Cache-Control": "max-age=60"]).isFresh(at: now + 61))
    #expect(!entry(["Cache-Control": "no-cache, max-age=60"]).isFresh(at: now))
    #expect(!entry(["Cache-Control": "s-maxage=60"]).isFresh(at: now), "s-maxage is for shared caches")
    #expect(entry(["Cache-Control": "private, max-age=60"]).isFresh(at: now))
    let date = HTTPDate.format(Int64(now.timeIntervalSince1970))
    let later = HTTPDate.format(Int64(now.timeIntervalSince1970) + 30)
    #expect(entry(["Date": date, "Expires": later]).isFresh(at: now + 20))
    #expect(!entry(["Date": date, "Expires": later]).isFresh(at: now + 31))
    #expect(!entry(["Expires": "0"]).isFresh(at: now))
    let modified = HTTPDate.format(Int64(now.timeIntervalSince1970) - 1000)
    let heuristic = entry(["Date": date, "Last-Modified": modified])
    #expect(!heuristic.isFresh(at: now + 50), "no heuristic freshness by default")
    #expect(heuristic.isFresh(at: now + 50, heuristicFraction: 0.1))
    #expect(!heuristic.isFresh(at: now + 150, heuristicFraction: 0.1))
  }

  @Test("no-store is not stored; a request's no-cache goes to the network")
  func noStoreAndRequestNoCache() async throws {
    let calls = Counter()
    let cache = ResponseCache()
    let client = makeClient(
      Self.counting(["Cache-Control": "no-store, max-age=60"], calls: calls), cache: cache)
    _ = try await client.send(GetUser(id: 1))
    #expect(cache.count == 0)
    let calls2 = Counter()
    let client2 = makeClient(
      Self.counting(["Cache-Control": "max-age=60"], calls: calls2), cache: ResponseCache())
    _ = try await client2.send(GetUser(id: 1))
    _ = try await client2.send(Endpoint<User>(.get, "/users/1", headers: ["Cache-Control": "no-cache"]))
    #expect(calls2.count == 2)
  }

  @Test("cached, then fresh without any validator or freshness")
  func cachedThenFreshWithoutValidators() async throws {
    let calls = Counter()
    let client = makeClient(Self.counting([:], calls: calls), cache: ResponseCache())
    _ = try await client.send(GetUser(id: 1))
    var seen: [(ResponseSource, Int)] = []
    for try await r in client.cachedThenFresh(GetUser(id: 1)) { seen.append((r.source, r.value.id)) }
    #expect(seen.map(\.0) == [.cache, .network])
    #expect(seen.map(\.1) == [1, 2])
  }

  @Test("on-disk store survives a new cache object and stays under its byte bound")
  func diskStore() async throws {
    let dir = FileManager.default.temporaryDirectory.appendingPathComponent("ck-cache-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: dir) }
    let calls = Counter()
    let transport = Self.counting(["Cache-Control": "max-age=600"], calls: calls)
    _ = try await makeClient(transport, cache: ResponseCache(directory: dir)).send(GetUser(id: 1))
    let reopened = ResponseCache(directory: dir)
    let again = try await makeClient(transport, cache: reopened).response(GetUser(id: 1))
    #expect(again.source == .cache)
    #expect(calls.count == 1)
    let small = ResponseCache(directory: dir, maxDiskBytes: 600)
    for i in 0..<10 {
      small.store(
        CachedResponse(statusCode: 200, headers: [:], body: Data(repeating: 65, count: 100)),
        for: "GET /k\(i)")
    }
    #expect(small.diskBytes <= 600)
    #expect(small.diskBytes > 0)
  }

  @Test("multipart: RFC 7578 parts, escaped names, content type with boundary")
  func multipartEncoding() async throws {
    var form = MultipartFormData(boundary: "XyZ")
    form.append("Aiko", name: "name")
    form.append(Data([0, 1, 2]), name: "avatar", filename: "me \"1\".png", contentType: "image/png")
    let expected =
      "--XyZ\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nAiko\r\n"
      + "--XyZ\r\nContent-Disposition: form-data; name=\"avatar\"; filename=\"me %221%22.png\"\r\n"
      + "Content-Type: image/png\r\n\r\n\u{0}\u{1}\u{2}\r\n--XyZ--\r\n"
    #expect(form.encoded() == Data(expected.utf8))
    let stub = StubTransport(statusCode: 204)
    let progress = Recorder<Int64>()
    _ = try await makeClient(stub).response(
      Endpoint<EmptyResponse>(.post, "/upload", body: .multipart(form)),
      uploadProgress: { progress.append($0.receivedBytes) })
    #expect(stub.requests.first?.headers["Content-Type"] == "multipart/form-data; boundary=XyZ")
    #expect(stub.requests.first?.body == form.encoded())
  }

  @Test("events arrive in order with one call id; metrics count attempts and bytes")
  func monitorEventsAndMetrics() async throws {
    let events = Recorder<String>()
    let calls = Counter()
    let stub = StubTransport { request throws(APIError) in
      if calls.increment() == 1 { throw .connectionReset(request.info) }
      return reply(200, #"{"id":1,"name":"A"}"#)
    }
    let monitor = RecordingMonitor(events: events)
    let client = APIClient(
      baseURL: baseURL, retryPolicy: RetryPolicy(maxRetries: 1, baseDelay: .milliseconds(1)),
      monitors: [monitor], transport: stub, sleep: { _ in })
    let r = try await client.response(
      Endpoint<User>(.post, "/users", body: .json(["a": 1]), isIdempotent: true))
    #expect(
      events.all == [
        "created", "adapted 1", "sent 1", "retry 1", "adapted 2", "sent 2", "received 2 200", "decoded 2",
      ])
    #expect(r.metrics.attempts.count == 2)
    #expect(r.metrics.attempts[0].failure != nil)
    #expect(r.metrics.attempts[1].statusCode == 200)
    #expect(r.metrics.bytesSent == 14)
    #expect(r.metrics.bytesReceived == 19)
    #expect(monitor.ids.all.allSatisfy { $0 == monitor.ids.all.first })
  }

  @Test("the curl logger prints a runnable command with Authorization redacted")
  func curlLogger() async throws {
    let lines = Recorder<String>()
    let logger = CurlLogger { lines.append($0) }
    let client = APIClient(
      baseURL: baseURL, authentication: .bearer(BearerTokenAuthenticator(token: "secret-token")),
      retryPolicy: .never, monitors: [logger],
      transport: StubTransport(statusCode: 200, body: #"{"id":1,"name":"A"}"#))
    _ = try await client.send(Endpoint<User>(.post, "/users", body: .json(["name": "O'Neil"])))
    let curl = try #require(lines.all.first)
    #expect(curl.contains("curl -X POST 'http://api.test/v1/users'"), "\(curl)")
    #expect(curl.contains("-H 'Authorization: <redacted>'"), "\(curl)")
    #expect(!curl.contains("secret-token"))
    #expect(curl.contains(#"--data-binary '{"name":"O'\''Neil"}'"#), "\(curl)")
    #expect(lines.all.contains { $0.contains("← 200 POST") })
    #expect(lines.all.last?.contains("✓ 1 attempt") == true)
  }

  struct OnceOnReset: Retrier {
    func retry(_ error: APIError, context: RetryContext) async -> RetryDecision {
      if case .connectionReset = error, context.retryCount == 0 { return .retry(after: .zero) }
      return .doNotRetry
    }
  }

  @Test("a custom retrier replaces the policy, even for a POST")
  func customRetrier() async throws {
    let calls = Counter()
    let stub = StubTransport { request throws(APIError) in
      if calls.increment() == 1 { throw .connectionReset(request.info) }
      return reply(200, #"{"id":1,"name":"A"}"#)
    }
    let client = APIClient(baseURL: baseURL, retrier: OnceOnReset(), transport: stub, sleep: { _ in })
    let user = try await client.send(Endpoint<User>(.post, "/users"))
    #expect(user.id == 1)
    #expect(calls.count == 2)
  }

  @Test("token schemes: bearer, a raw token in a named header, a custom prefix")
  func tokenSchemes() async throws {
    let authenticator = BearerTokenAuthenticator(token: "abc")
    let schemes: [(Authentication, String, String)] = [
      (.bearer(authenticator), "Authorization", "Bearer abc"),
      (.token(authenticator, .header("X-Auth-Token")), "X-Auth-Token", "abc"),
      (.token(authenticator, .authorization(prefix: "Token")), "Authorization", "Token abc"),
    ]
    for (authentication, name, value) in schemes {
      let stub = StubTransport(statusCode: 200, body: #"{"id":1,"name":"A"}"#)
      _ = try await makeClient(stub, authentication: authentication).send(GetUser(id: 1))
      #expect(stub.requests.first?.headers[name] == value)
    }
  }

  @Test("a 401 refreshes the token of a named-header scheme too")
  func tokenSchemeRefresh() async throws {
    let authenticator = BearerTokenAuthenticator(token: "old") { _ in "new" }
    let stub = StubTransport { request throws(APIError) in
      request.headers["X-Auth-Token"] == "new" ? reply(200, #"{"id":1,"name":"A"}"#) : reply(401)
    }
    let client = makeClient(stub, authentication: .token(authenticator, .header("X-Auth-Token")))
    #expect(try await client.send(GetUser(id: 1)).id == 1)
    #expect(stub.requests.map { $0.headers["X-Auth-Token"] } == ["old", "new"])
  }

  @Test("URLRequest interop: built from a request, and sent through the client's interceptors")
  func urlRequestInterop() async throws {
    let stub = StubTransport(statusCode: 200, body: #"{"status":"OK","result":{"id":5,"name":"U"}}"#)
    let client = makeClient(
      stub, envelope: StatusResultEnvelope(), authentication: .bearer(BearerTokenAuthenticator(token: "t")),
      adapters: [
        ClosureAdapter {
          var r = $0; r.headers.add(name: "X-Adapted", value: "1"); return r
        }
      ])
    let built = try await client.urlRequest(for: Endpoint<User>(.put, "/users/5", body: .json(["a": 1])))
    #expect(built.url?.absoluteString == "http://api.test/v1/users/5")
    #expect(built.httpMethod == "PUT")
    #expect(built.value(forHTTPHeaderField: "Authorization") == "Bearer t")
    #expect(built.value(forHTTPHeaderField: "X-Adapted") == "1")
    #expect(built.httpBody == Data(#"{"a":1}"#.utf8))

    var foreign = URLRequest(url: URL(string: "http://other.test/raw?q=1")!)
    foreign.httpMethod = "POST"
    foreign.setValue("text/plain", forHTTPHeaderField: "Content-Type")
    foreign.httpBody = Data("hi".utf8)
    let r = try await client.response(foreign, as: User.self)
    #expect(r.value.id == 5)
    let sent = try #require(stub.requests.last)
    #expect(sent.url.absoluteString == "http://other.test/raw?q=1")
    #expect(sent.method == .post)
    #expect(sent.headers["Authorization"] == "Bearer t")
    #expect(sent.headers["X-Adapted"] == "1")
    #expect(sent.headers["Content-Type"] == "text/plain")
    #expect(sent.body == Data("hi".utf8))
  }

  @Test("download to a file through a transport without file support")
  func downloadFallback() async throws {
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("ck-\(UUID().uuidString).bin")
    defer { try? FileManager.default.removeItem(at: file) }
    let stub = StubTransport(statusCode: 200, body: String(repeating: "z", count: 1000))
    let done = try await makeClient(stub).download(Endpoint<Data>(.get, "/f"), to: file)
    #expect(done.byteCount == 1000)
    #expect(try Data(contentsOf: file).count == 1000)
    let missing = StubTransport(statusCode: 404, body: #"{"status":"NG","message":"gone"}"#)
    let error = await apiError { () async throws(APIError) in
      try await makeClient(missing, envelope: StatusResultEnvelope()).download(
        Endpoint<Data>(.get, "/f"), to: file)
    }
    #expect(error?.statusCode == 404)
    #expect(error?.applicationError?.message == "gone")
    #expect(!FileManager.default.fileExists(atPath: file.path))
  }
}

/// A thread-safe list.
final class Recorder<T: Sendable>: Sendable {
  private let values = Mutex<[T]>([])
  var all: [T] { values.withLock { $0 } }
  func append(_ value: T) { values.withLock { $0.append(value) } }
}

/// Records event names.
struct RecordingMonitor: EventMonitor {
  let events: Recorder<String>
  let ids = Recorder<CallID>()
  func requestCreated(_ call: CallID, request: TransportRequest) {
    ids.append(call)
    events.append("created")
  }
  func requestAdapted(_ call: CallID, request: TransportRequest, attempt: Int) {
    ids.append(call)
    events.append("adapted \(attempt)")
  }
  func requestSent(_ call: CallID, request: TransportRequest, attempt: Int) {
    events.append("sent \(attempt)")
  }
  func responseReceived(_ call: CallID, response: ResponseInfo, attempt: Int, duration: Duration) {
    events.append("received \(attempt) \(response.statusCode)")
  }
  func retryScheduled(_ call: CallID, error: APIError, delay: Duration, attempt: Int) {
    events.append("retry \(attempt)")
  }
  func requestDecoded(_ call: CallID, response: ResponseInfo, metrics: RequestMetrics) {
    ids.append(call)
    events.append("decoded \(metrics.attempts.count)")
  }
  func requestFailed(_ call: CallID, error: APIError, metrics: RequestMetrics) {
    events.append("failed \(metrics.attempts.count)")
  }
}
