import Foundation
import HTTPCore
import MockJSON
import MockServer
import MockServerTesting
import NativeSupport
import TestSupport
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Streamed relays and upstream connection reuse (issue 15) over real sockets: the `mockserver` binary in
/// front of the Python `http.server` upstream of this folder.
@Suite("Proxy streaming and pooling")
struct ProxyStreamingTests {
  /// A proxy (catch-all stub) in front of a fresh Python upstream.
  struct Setup {
    let upstream: MockServerProcess
    let folder: TemporaryFolder
    let proxy: MockServerProcess

    init(arguments: [String] = []) throws {
      upstream = try PythonUpstream.launch()
      folder = try TemporaryFolder(files: [
        ("proxy.json", proxyStub(".*", to: "http://127.0.0.1:\(upstream.port)"))
      ])
      proxy = try MockServerProcess.launch(
        arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"] + arguments)
    }

    func stop() {
      proxy.stop()
      upstream.stop()
      folder.remove()
    }
  }

  @Test func relaysAHundredMegabytesAsTheyComeWithBoundedMemory() throws {
    let setup = try Setup()
    defer { setup.stop() }
    let pid = setup.proxy.processIdentifier
    // Warm up (the first exchange loads what the proxy path needs), then measure from here.
    #expect(try exchange(setup.proxy.port, "GET", "/text").status.code == 200)
    let baseline = try #require(ProcessMemory.kilobytes("VmRSS", pid: pid))
    ProcessMemory.resetPeak(pid: pid)
    let size = 100 << 20
    let client = try StreamClient(port: setup.proxy.port)
    defer { client.close() }
    try client.send("GET /big-sha?size=\(size) HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n\r\n")
    let head = try client.head()
    #expect(head.status.code == 200)
    #expect(head.headers.first("Content-Length") == String(size))
    #expect(head.headers.first("Transfer-Encoding") == nil)
    // A client that stops reading for a while: the proxy must stop reading the upstream, not buffer it.
    Thread.sleep(forTimeInterval: 1.5)
    let body = try client.content(expecting: size)
    #expect(body.count == size)
    let digest = LibcryptoDigest.hash(.sha256, body).map { String(format: "%02x", $0) }.joined()
    #expect(digest == head.headers.first("X-Content-SHA256"))
    let peak = ProcessMemory.kilobytes("VmHWM", pid: pid) ?? Int.max
    let growth = peak - baseline
    print("proxy RSS: \(baseline) KiB before, peak \(peak) KiB while relaying 100 MiB (growth \(growth) KiB)")
    #expect(growth < 40 << 10, "RSS grew by \(growth) KiB while relaying \(size) bytes")
    // The proxy keeps serving afterwards.
    #expect(try exchange(setup.proxy.port, "GET", "/json").status.code == 200)
  }

  @Test func relaysAChunkedUpstreamResponseInChunksAsItArrives() throws {
    let setup = try Setup()
    defer { setup.stop() }
    // The upstream sends its head and a first chunk, then waits for /release: the client gets them before
    // the upstream has finished.
    let client = try StreamClient(port: setup.proxy.port)
    defer { client.close() }
    try client.send("GET /held HTTP/1.1\r\nHost: proxy\r\n\r\n")
    let head = try client.head()
    #expect(head.status.code == 200)
    #expect(head.headers.first("Transfer-Encoding") == "chunked")
    #expect(head.headers.first("Content-Length") == nil)
    let first = try client.nextContent()
    #expect(String(decoding: first ?? [], as: UTF8.self) == "first;")
    #expect(try exchange(setup.upstream.port, "GET", "/release").status.code == 200)
    var rest: [UInt8] = []
    while let piece = try client.nextContent() { rest += piece }
    #expect(String(decoding: rest, as: UTF8.self) == "second;third")
    // The connection stays usable after a chunked relay.
    try client.send("GET /text HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n\r\n")
    #expect(try client.head().status.code == 200)
    #expect(String(decoding: try client.content(expecting: nil), as: UTF8.self) == "hello world\n")

    // A large chunked upstream response arrives whole and intact.
    let size = 20 << 20
    let big = try StreamClient(port: setup.proxy.port)
    defer { big.close() }
    try big.send("GET /chunked-big?size=\(size) HTTP/1.1\r\nHost: proxy\r\nConnection: close\r\n\r\n")
    let bigHead = try big.head()
    #expect(bigHead.status.code == 200)
    let content = try big.content(expecting: size)
    #expect(content.count == size)
    let digest = LibcryptoDigest.hash(.sha256, content).map { String(format: "%02x", $0) }.joined()
    #expect(digest == bigHead.headers.first("X-Content-SHA256"))
  }

  @Test func reusesUpstreamConnectionsButNotAfterConnectionClose() throws {
    let setup = try Setup()
    defer { setup.stop() }
    let port = setup.proxy.port
    func upstreamPort(_ path: String) throws -> String {
      let response = try exchange(port, "GET", path)
      #expect(response.status.code == 200)
      return String(decoding: response.body, as: UTF8.self)
    }
    // Sequential exchanges share upstream connections (the upstream sees fewer client ports than
    // requests). Not "always the same one": on a loaded machine a request was once seen to open a second
    // connection while the first was still being put back, so the count is what is checked.
    var ports: [String] = []
    for _ in 0..<6 { ports.append(try upstreamPort("/port")) }
    #expect(Set(ports).count < ports.count, "no upstream connection reused: \(ports)")
    // An answer with `Connection: close` is the last on its connection: its port is never seen again.
    let closed = try upstreamPort("/port-close")
    var after: [String] = []
    for _ in 0..<4 { after.append(try upstreamPort("/port")) }
    #expect(!after.contains(closed), "a connection answered with Connection: close was reused: \(after)")
    #expect(Set(after).count < after.count, "no upstream connection reused after the close: \(after)")
  }

  @Test func retriesAStalePooledConnectionOnlyForIdempotentMethods() throws {
    let setup = try Setup()
    defer { setup.stop() }
    let port = setup.proxy.port
    // /arm-drop: the upstream drops the next request on that connection unanswered, as a server does
    // that closed an idle connection while the request was on its way.
    let armed = String(decoding: try exchange(port, "GET", "/arm-drop").body, as: UTF8.self)
    let json = try exchange(port, "GET", "/json")
    #expect(json.status.code == 200, "a GET is retried once on a new connection")
    #expect(String(decoding: try exchange(port, "GET", "/port").body, as: UTF8.self) != armed)
    // A POST is not repeated: the client gets the 502 naming the reason. The upstream counts the
    // requests it dropped: when none was dropped, the armed connection had outlived the pool's idle
    // timeout before the POST came (a loaded machine) and the POST rightly went out on a new one; then
    // the exchange is tried again, a bounded number of times.
    func drops() throws -> Int {
      Int(String(decoding: try exchange(setup.upstream.port, "GET", "/drops").body, as: UTF8.self)) ?? -1
    }
    var post: HTTPResponse?
    for _ in 0..<5 where post == nil {
      let before = try drops()
      #expect(try exchange(port, "GET", "/arm-drop").status.code == 200)
      let answer = try exchange(
        port, "POST", "/echo", headers: [("Content-Type", "text/plain")], body: Array("x".utf8))
      if try drops() > before {
        post = answer
      } else {
        #expect(answer.status.code == 201, "a POST on a new connection is answered")
      }
    }
    let dropped = try #require(post, "the armed pooled connection was never reused in 5 tries")
    #expect(dropped.status.code == 502)
    let reason = try JSONValue.parse(bytes: dropped.body)["reason"]?.stringValue ?? ""
    #expect(reason.contains("closed"), "\(reason)")
    // And the next exchange works on a new connection.
    #expect(try exchange(port, "GET", "/json").status.code == 200)
  }

  @Test func recordsAContentOverTheLimitCutAndSaysSo() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let out = try TemporaryFolder()
    defer { out.remove() }
    let run = try RecordingRun([
      "record", "--upstream", "http://127.0.0.1:\(upstream.port)", "--out", out.path, "--max-body-bytes",
      "100000",
    ])
    let size = 300_000
    let big = try exchange(run.port, "GET", "/big?size=\(size)")
    #expect(big.status.code == 200)
    #expect(big.body.count == size, "the client gets the whole content")
    let (status, output) = run.interrupt()
    #expect(status == 0, "\(output)")
    #expect(output.contains("recorded cut: first 100000 of 300000 bytes"), "\(output)")
    let mapping = try #require(out.files().first { $0.hasPrefix("mappings/") })
    let stub = try JSONValue.parse(
      bytes: Array(try Data(contentsOf: URL(fileURLWithPath: out.path + "/" + mapping))))
    let note = stub["metadata"]?["mockserver"]
    #expect(note?["bodyTruncated"]?.boolValue == true, "\(stub)")
    #expect(note?["upstreamBytes"]?.numberValue?.intValue == size)
    #expect(note?["recordedBytes"]?.numberValue?.intValue == 100_000)
  }
}

/// Memory figures of a process from `/proc/PID/status`.
enum ProcessMemory {
  /// The field's value in KiB (`VmRSS`, `VmHWM`), or nil.
  static func kilobytes(_ field: String, pid: Int32) -> Int? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
    for line in text.split(separator: "\n") where line.hasPrefix(field + ":") {
      return Int(
        line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
    }
    return nil
  }

  /// Resets the peak resident set size (`VmHWM`) to the current one (Linux: `5` to clear_refs).
  static func resetPeak(pid: Int32) {
    guard let handle = FileHandle(forWritingAtPath: "/proc/\(pid)/clear_refs") else { return }
    handle.write(Data("5".utf8))
    try? handle.close()
  }
}

/// A blocking HTTP/1.1 client on one connection that reads a response piece by piece (HTTPCore's
/// parser), so a test can hold off reading or look at content before the response has ended.
final class StreamClient {
  private let connection: RawClient
  private var fd: Int32 { connection.fd }
  private var parser = HTTPParser(
    mode: .response, limits: ParserLimits(maxHeaderSectionBytes: 1 << 20, maxBodyBytes: 1 << 40))
  private var buffer = [UInt8](repeating: 0, count: 1 << 16)

  init(port: Int) throws {
    connection = try RawClient(port: port)
  }

  func close() { connection.close() }

  /// Sends a request as written (one per call; the parser expects a GET's response).
  func send(_ request: String) throws {
    parser.expectResponse(to: request.hasPrefix("HEAD ") ? .head : .get)
    let bytes = Array(request.utf8)
    guard connection.send(bytes) == bytes.count else { throw ProxyTestError("send: errno \(errno)") }
  }

  /// The next parser event, reading as needed (60 s without a byte fails); nil when the server closed.
  private func nextEvent() throws -> HTTPParserEvent? {
    while true {
      if let event = try parser.next() { return event }
      var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      guard poll(&descriptor, 1, 60_000) > 0 else { throw ProxyTestError("no bytes for 60 s") }
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n < 0 { throw ProxyTestError("recv: errno \(errno)") }
      if n == 0 { return try parser.finish() }
      buffer.withUnsafeBytes { parser.append(UnsafeRawBufferPointer(rebasing: $0[0..<n])) }
    }
  }

  /// The response head (interim 1xx skipped).
  func head() throws -> HTTPResponseHead {
    while let event = try nextEvent() {
      if case .responseHead(let h) = event, h.status.code >= 200 { return h }
    }
    throw ProxyTestError("closed before a head")
  }

  /// The next content piece; nil at the end of the response.
  func nextContent() throws -> [UInt8]? {
    while let event = try nextEvent() {
      switch event {
      case .body(let bytes): return bytes
      case .end: return nil
      default: throw ProxyTestError("unexpected \(event)")
      }
    }
    throw ProxyTestError("closed inside the content")
  }

  /// The rest of the content.
  func content(expecting size: Int?) throws -> [UInt8] {
    var out: [UInt8] = []
    if let size { out.reserveCapacity(size) }
    while let piece = try nextContent() { out += piece }
    return out
  }
}
