import ClientKit
import Foundation
import MockServerTesting
import Synchronization
import TestSupport
import Testing

/// Issue 19 parity features against the real `mockserver` binary, over both transports: a cache with
/// only `Cache-Control: max-age`, a 70 MiB download to a file, a multipart upload checked in the
/// server's journal, and the curl logger.
@Suite("Contract: cache, download, multipart, logger (binary)")
struct ParityContractTests {
  @Test("cache-then-fresh with only Cache-Control: max-age", arguments: TransportKind.allCases)
  func maxAgeCache(kind: TransportKind) async throws {
    let server = try MockServerProcess.launch(arguments: ["--quiet"])
    defer { server.stop() }
    try await server.stub(
      .get("/profile").willReturn(json: #"{"id":1}"#, headers: [("Cache-Control", "max-age=60")]))
    let client = makeClient(server.baseURL, kind.make(), cache: ResponseCache())
    let first = try await client.response(Endpoint<Item>(.get, "/profile"))
    #expect(first.source == .network)
    let second = try await client.response(Endpoint<Item>(.get, "/profile"))
    #expect(second.source == .cache)
    #expect(second.value == Item(id: 1))
    #expect(try await server.loggedRequests().filter { ($0["url"] as? String) == "/profile" }.count == 1)

    var deliveries: [ResponseSource] = []
    for try await r in client.cachedThenFresh(Endpoint<Item>(.get, "/profile")) {
      deliveries.append(r.source)
      #expect(r.value == Item(id: 1))
    }
    #expect(deliveries == [.cache, .network])
    // No ETag, no Last-Modified: the fresh delivery was an unconditional request.
    let logged = try await server.loggedRequests().filter { ($0["url"] as? String) == "/profile" }
    #expect(logged.count == 2)
    let headers = logged.first?["headers"] as? [String: Any] ?? [:]
    #expect(!headers.keys.contains { $0.lowercased() == "if-none-match" })
  }

  @Test("a 70 MiB download to a file with monotonic progress", arguments: TransportKind.allCases)
  func largeDownload(kind: TransportKind) async throws {
    let fixtures = try temporaryFixtures("ck-big")
    defer { try? FileManager.default.removeItem(at: fixtures) }
    let size = 70 << 20
    var content = Data(count: size)
    content.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
      for i in stride(from: 0, to: size, by: 4096) { raw[i] = UInt8(truncatingIfNeeded: i >> 12) }
    }
    try content.write(to: fixtures.appendingPathComponent("__files/big.bin"))
    try Data(
      #"{"request":{"method":"GET","url":"/big.bin"},"response":{"status":200,"bodyFileName":"big.bin","headers":{"Content-Type":"application/octet-stream"}}}"#
        .utf8
    ).write(to: fixtures.appendingPathComponent("mappings/big.json"))
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.path, "--quiet"])
    defer { server.stop() }

    let destination = fixtures.appendingPathComponent("downloaded.bin")
    let progress = Recorder<Int64>()
    let expected = Recorder<Int64?>()
    let client = makeClient(server.baseURL, kind.make(), timeout: .seconds(120))
    let done = try await client.download(Endpoint<Data>(.get, "/big.bin"), to: destination) { p in
      progress.append(p.receivedBytes)
      expected.append(p.expectedBytes)
    }
    #expect(done.statusCode == 200)
    #expect(done.byteCount == size)
    let attributes = try FileManager.default.attributesOfItem(atPath: destination.path)
    #expect((attributes[.size] as? NSNumber)?.intValue == size)
    #expect(try Data(contentsOf: destination) == content)
    let values = progress.all
    #expect(values.count > 10)
    #expect(zip(values, values.dropFirst()).allSatisfy { $0 <= $1 }, "progress went backwards")
    #expect(values.last == Int64(size))
    // Both transports ask a download for `Accept-Encoding: identity` (libcurl would ask URLSession's for
    // gzip), so the expected size is the file's.
    #expect(expected.all.last == Int64(size))
    // Over the socket limit (64 MiB) in memory, the same body is a size-limit error, not a malformed one.
    if kind == .socket {
      let error = await apiError { () async throws(APIError) in
        try await client.send(Endpoint<Data>(.get, "/big.bin"))
      }
      #expect(error?.kind == .responseTooLarge)
    }
  }

  @Test("a multipart upload arrives with its parts, with upload progress", arguments: TransportKind.allCases)
  func multipartUpload(kind: TransportKind) async throws {
    let server = try MockServerProcess.launch(arguments: ["--quiet"])
    defer { server.stop() }
    try await server.stub(
      .post("/avatar").willReturn(status: 201, json: #"{"status":"OK","result":{"id":9}}"#))
    var form = MultipartFormData()
    form.append("Aiko", name: "name")
    form.append("café", name: "note")
    // Under 64 KiB: since the merge of main the journal keeps the first 64 KiB of a body.
    let image = Data((0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
    form.append(image, name: "avatar", filename: "me.png", contentType: "image/png")
    let progress = Recorder<Int64>()
    let client = makeClient(server.baseURL, kind.make(), envelope: StatusResultEnvelope())
    let r = try await client.response(
      Endpoint<Item>(.post, "/avatar", body: .multipart(form)),
      uploadProgress: { progress.append($0.receivedBytes) })
    #expect(r.value == Item(id: 9))

    let logged = try #require(try await server.loggedRequests().first { ($0["url"] as? String) == "/avatar" })
    let headers = logged["headers"] as? [String: Any] ?? [:]
    let contentType = headers.first { $0.key.lowercased() == "content-type" }?.value as? String
    #expect(contentType == form.contentType)
    let body = try #require(Data(base64Encoded: logged["bodyAsBase64"] as? String ?? ""))
    #expect(body == form.encoded())
    let parts = Self.parts(of: body, boundary: form.boundary)
    #expect(parts.count == 3)
    #expect(parts[0].head.contains(#"Content-Disposition: form-data; name="name""#))
    #expect(parts[0].content == Data("Aiko".utf8))
    #expect(parts[1].content == Data("café".utf8))
    #expect(parts[2].head.contains(#"name="avatar"; filename="me.png""#))
    #expect(parts[2].head.contains("Content-Type: image/png"))
    #expect(parts[2].content == image)
    let sent = progress.all
    #expect(zip(sent, sent.dropFirst()).allSatisfy { $0 <= $1 })
    if kind == .socket { #expect(sent.last == Int64(form.encoded().count)) }
  }

  /// The parts of a multipart body: head text and content.
  static func parts(of body: Data, boundary: String) -> [(head: String, content: Data)] {
    let delimiter = Data("--\(boundary)".utf8)
    var result: [(String, Data)] = []
    var cursor = body.startIndex
    var starts: [Range<Data.Index>] = []
    while let r = body.range(of: delimiter, in: cursor..<body.endIndex) {
      starts.append(r)
      cursor = r.upperBound
    }
    for (a, b) in zip(starts, starts.dropFirst()) {
      let chunk = body[a.upperBound + 2..<b.lowerBound - 2]  // after CRLF, before CRLF
      guard let split = chunk.range(of: Data("\r\n\r\n".utf8)) else { continue }
      result.append(
        (
          String(decoding: chunk[chunk.startIndex..<split.lowerBound], as: UTF8.self),
          Data(chunk[split.upperBound...])
        ))
    }
    return result
  }

  @Test("the curl logger's command, run by curl, reaches the same stub", arguments: TransportKind.allCases)
  func curlLogger(kind: TransportKind) async throws {
    let server = try MockServerProcess.launch(arguments: ["--quiet"])
    defer { server.stop() }
    try await server.stub(
      .post("/echo").header("X-Trace", "abc").willReturn(json: #"{"status":"OK","result":{"id":3}}"#))
    let lines = Recorder<String>()
    let client = APIClient(
      baseURL: server.baseURL, envelope: StatusResultEnvelope(),
      authentication: .bearer(BearerTokenAuthenticator(token: "top-secret")), retryPolicy: .never,
      monitors: [CurlLogger { lines.append($0) }], transport: kind.make())
    let item = try await client.send(
      Endpoint<Item>(.post, "/echo", headers: ["X-Trace": "abc"], body: .json(Item(id: 3))))
    #expect(item == Item(id: 3))
    let command = try #require(lines.all.first { $0.contains("curl ") })
    #expect(command.contains("-H 'Authorization: <redacted>'"))
    #expect(!lines.all.joined().contains("top-secret"))
    #expect(lines.all.contains { $0.contains("← 200 POST") })
    #expect(lines.all.last?.contains("✓ 1 attempt") == true)

    // The logged command, run by curl, gets the same answer.
    let answer = try runProcess(
      "/bin/sh",
      [
        "-c",
        command.replacingOccurrences(of: "[ClientKit ", with: "").drop { $0 != "]" }.dropFirst() + " -s",
      ]
    ).stdout
    #expect(answer == #"{"status":"OK","result":{"id":3}}"#, "\(command)")
  }
}
