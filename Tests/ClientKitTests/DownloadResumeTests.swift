import ClientKit
import Foundation
import HTTPCore
import Synchronization
import Testing

/// Downloads that stop part-way and continue (issue 19): `Range` + `If-Range` on the partial file, over
/// both transports, against a loopback server that honours ranges the way RFC 9110 §14 says.
@Suite("Download resume")
struct DownloadResumeTests {
  enum Kind: String, CaseIterable, Sendable {
    case socket, urlSession
    func make() -> any Transport {
      switch self {
      case .socket: return SocketTransport()
      case .urlSession: return URLSessionTransport()
      }
    }
  }

  static let size = 1 << 20
  static let cut = 256 << 10
  static let body: [UInt8] = (0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 7) ^ ($0 >> 9)) }

  /// Serves `body` with `ETag: "v1"`: a request without `Range` gets the first `cut` bytes of a 200 and
  /// then nothing (until the client goes away); `Range: bytes=N-` with a matching `If-Range` gets a 206
  /// of the rest; a non-matching `If-Range` gets a 200 with `changed` whole.
  static func server(changed: [UInt8]? = nil, requests: Recorder<[String: String]>) throws -> LoopbackServer {
    try LoopbackServer { connection in
      while let request = connection.readRequest() {
        requests.append(request.headers)
        let current = changed ?? body
        if let range = request.headers["range"], range.hasPrefix("bytes="),
          let first = Int(range.dropFirst(6).dropLast()), range.hasSuffix("-"),
          request.headers["if-range"] == #""v1""#, changed == nil, first < current.count
        {
          connection.write(
            "HTTP/1.1 206 Partial Content\r\nETag: \"v1\"\r\nContent-Range: bytes \(first)-\(current.count - 1)/\(current.count)\r\nContent-Length: \(current.count - first)\r\n\r\n"
          )
          connection.write(Array(current[first...]))
          continue
        }
        let etag = changed == nil ? #""v1""# : #""v2""#
        connection.write(
          "HTTP/1.1 200 OK\r\nETag: \(etag)\r\nAccept-Ranges: bytes\r\nContent-Type: application/octet-stream\r\nContent-Length: \(current.count)\r\n\r\n"
        )
        if request.headers["range"] == nil, changed == nil {
          connection.write(Array(current[..<cut]))
          _ = connection.waitForPeerClose(within: 20)
          return
        }
        connection.write(current)
      }
    }
  }

  static func temporaryFile() -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("ck-resume-\(UUID().uuidString).bin")
  }

  /// Starts the download, waits until the first `cut` bytes are in the file, cancels, returns the resume data.
  static func cancelHalfway(_ client: APIClient, to file: URL) async throws -> DownloadResumeData? {
    let received = Recorder<Int64>()
    let download = client.downloadTask(Endpoint<Data>(.get, "/file.bin"), to: file) { p in
      received.append(p.receivedBytes)
    }
    for _ in 0..<2000 where (received.all.last ?? 0) < Int64(cut) {
      try await Task.sleep(for: .milliseconds(10))
    }
    #expect(received.all.last == Int64(cut))
    download.cancel()
    let error = await apiError { () async throws(APIError) in try await download.response }
    #expect(error?.caseName == "cancelled")
    return await download.resumeData
  }

  @Test(
    "cancel mid-way, resume with Range and If-Range: a 206 completes the file byte for byte",
    arguments: Kind.allCases)
  func cancelThenResume(kind: Kind) async throws {
    let requests = Recorder<[String: String]>()
    let server = try Self.server(requests: requests)
    defer { server.stop() }
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let client = APIClient(
      baseURL: URL(string: server.url)!, retryPolicy: .never, transport: kind.make(),
      timeout: .seconds(30))

    let resume = try await Self.cancelHalfway(client, to: file)
    guard let resume else {
      Issue.record("no resume data after a cancelled download with an ETag")
      return
    }
    #expect(resume.byteCount == Int64(Self.cut))
    #expect(resume.validator == #""v1""#)
    #expect(resume.totalByteCount == Int64(Self.size))
    #expect(resume.fileURL == file)
    // Resume data is Codable: an app can keep it across launches.
    let stored = try JSONDecoder().decode(DownloadResumeData.self, from: JSONEncoder().encode(resume))
    #expect(stored == resume)

    let progress = Recorder<DownloadProgress>()
    let done = try await client.downloadTask(
      Endpoint<Data>(.get, "/file.bin"), to: file, resumingFrom: stored
    ) { p in progress.append(p) }.response
    #expect(done.statusCode == 206)
    #expect(done.byteCount == Self.size)
    #expect(try Data(contentsOf: file) == Data(Self.body))
    let resumed = requests.all.last ?? [:]
    #expect(resumed["range"] == "bytes=\(Self.cut)-")
    #expect(resumed["if-range"] == #""v1""#)
    let values = progress.all
    #expect(values.first.map { $0.receivedBytes > Int64(Self.cut) } == true)
    #expect(zip(values, values.dropFirst()).allSatisfy { $0.receivedBytes <= $1.receivedBytes })
    #expect(values.last?.receivedBytes == Int64(Self.size))
    #expect(values.last?.expectedBytes == Int64(Self.size))
    #expect(values.last?.fraction == 1)
  }

  @Test(
    "a changed representation (If-Range fails) is sent whole and replaces the file",
    arguments: Kind.allCases)
  func changedRepresentationRestarts(kind: Kind) async throws {
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    let first = try Self.server(requests: Recorder())
    let client = APIClient(
      baseURL: URL(string: first.url)!, retryPolicy: .never, transport: kind.make(), timeout: .seconds(30))
    let resume = try await Self.cancelHalfway(client, to: file)
    first.stop()
    guard let resume else {
      Issue.record("no resume data")
      return
    }
    let changed = Array(Self.body.reversed().prefix(300_000))
    let requests = Recorder<[String: String]>()
    let second = try Self.server(changed: changed, requests: requests)
    defer { second.stop() }
    let again = APIClient(
      baseURL: URL(string: second.url)!, retryPolicy: .never, transport: kind.make(), timeout: .seconds(30))
    let done = try await again.download(Endpoint<Data>(.get, "/file.bin"), to: file, resumingFrom: resume)
    #expect(done.statusCode == 200)
    #expect(done.byteCount == changed.count)
    #expect(try Data(contentsOf: file) == Data(changed))
    #expect(requests.all.first?["range"] == "bytes=\(Self.cut)-")
  }

  @Test("no resume data without a validator, after success, or when the file lacks the bytes")
  func notResumable() async throws {
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    // No ETag or Last-Modified: the server gives no way to check the bytes belong together.
    let server = try LoopbackServer { connection in
      guard connection.readRequest() != nil else { return }
      connection.write("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n")
      connection.write([UInt8](repeating: 1, count: 400))
    }
    defer { server.stop() }
    let client = APIClient(
      baseURL: URL(string: server.url)!, retryPolicy: .never, transport: SocketTransport())
    let download = client.downloadTask(Endpoint<Data>(.get, "/x"), to: file)
    let error = await apiError { () async throws(APIError) in try await download.response }
    #expect(error?.caseName == "truncatedBody")
    #expect(await download.resumeData == nil)

    let stub = StubTransport(statusCode: 200, body: "whole")
    let ok = APIClient(baseURL: baseURL, transport: stub).downloadTask(Endpoint<Data>(.get, "/y"), to: file)
    #expect(try await ok.response.byteCount == 5)
    #expect(await ok.resumeData == nil)

    let missing = DownloadResumeData(
      url: baseURL, fileURL: file, byteCount: 1 << 30, validator: #""v1""#, totalByteCount: nil)
    let refused = await apiError { () async throws(APIError) in
      try await APIClient(
        baseURL: URL(string: server.url)!, retryPolicy: .never, transport: SocketTransport()
      )
      .download(Endpoint<Data>(.get, "/x"), to: file, resumingFrom: missing)
    }
    #expect(refused?.caseName == "invalidRequest")
  }

  @Test("a 206 that does not start where the file ends is refused")
  func wrongContentRange() async throws {
    let file = Self.temporaryFile()
    defer { try? FileManager.default.removeItem(at: file) }
    try Data(repeating: 7, count: 10).write(to: file)
    let stub = StubTransport { _ throws(APIError) in
      reply(206, "abc", headers: ["Content-Range": "bytes 0-2/13"])
    }
    let resume = DownloadResumeData(url: baseURL, fileURL: file, byteCount: 10, validator: #""v1""#)
    let error = await apiError { () async throws(APIError) in
      try await APIClient(baseURL: baseURL, retryPolicy: .never, transport: stub)
        .download(Endpoint<Data>(.get, "/z"), to: file, resumingFrom: resume)
    }
    #expect(error?.caseName == "malformedResponse")
    #expect(stub.requests.first?.headers["Range"] == "bytes=10-")
    // A transport that returns bodies in memory: the client appends the 206 after the kept bytes.
    let good = StubTransport { _ throws(APIError) in
      reply(206, "abc", headers: ["Content-Range": "bytes 10-12/13"])
    }
    let done = try await APIClient(baseURL: baseURL, retryPolicy: .never, transport: good)
      .download(Endpoint<Data>(.get, "/z"), to: file, resumingFrom: resume)
    #expect(done.byteCount == 13)
    #expect(try Data(contentsOf: file) == Data(repeating: 7, count: 10) + Data("abc".utf8))
  }
}
