import ClientKit
import Foundation
import HTTPCore
import MockServerTesting
import Testing

/// Resuming a download against the real `mockserver` (issue 19): the first answer is cut at half its body
/// (fault `TRUNCATED_BODY`), the resumed request must carry `Range: bytes=<half>-` and the first answer's
/// `ETag` as `If-Range` to match the stub that answers `206` with the rest, and the file ends up byte for
/// byte the whole body.
@Suite("Contract: download resume")
struct DownloadResumeContractTests {
  @Test(
    "a download cut at half resumes with Range and If-Range; the file is byte-identical",
    arguments: TransportKind.allCases)
  func resumeAfterTruncation(kind: TransportKind) async throws {
    let fixtures = try temporaryFixtures("ck-resume")
    defer { try? FileManager.default.removeItem(at: fixtures) }
    let size = 8 << 20
    let half = size / 2
    let content = Data((0..<size).map { UInt8(truncatingIfNeeded: ($0 &* 13) ^ ($0 >> 11)) })
    try content.write(to: fixtures.appendingPathComponent("__files/video.bin"))
    try content[half...].write(to: fixtures.appendingPathComponent("__files/video-rest.bin"))
    try Data(
      #"""
      {"mappings":[
        {"priority":5,"request":{"method":"GET","url":"/video.bin"},
         "response":{"status":200,"bodyFileName":"video.bin","fault":"TRUNCATED_BODY",
           "headers":{"Content-Type":"application/octet-stream","ETag":"\"v1\"","Accept-Ranges":"bytes"}}},
        {"priority":1,"request":{"method":"GET","url":"/video.bin",
           "headers":{"Range":{"equalTo":"bytes=\#(half)-"},"If-Range":{"equalTo":"\"v1\""}}},
         "response":{"status":206,"bodyFileName":"video-rest.bin",
           "headers":{"Content-Type":"application/octet-stream","ETag":"\"v1\"",
             "Content-Range":"bytes \#(half)-\#(size - 1)/\#(size)"}}}
      ]}
      """#.utf8
    ).write(to: fixtures.appendingPathComponent("mappings/video.json"))
    let server = try MockServerProcess.launch(arguments: ["--fixtures", fixtures.path, "--quiet"])
    defer { server.stop() }

    let file = fixtures.appendingPathComponent("video.bin.part")
    let client = makeClient(server.baseURL, kind.make(), timeout: .seconds(60))
    let first = client.downloadTask(Endpoint<Data>(.get, "/video.bin"), to: file)
    let error = await apiError { () async throws(APIError) in try await first.response }
    #expect(error?.kind == .truncatedBody)
    let resume = try #require(await first.resumeData)
    #expect(resume.byteCount == Int64(half))
    #expect(resume.validator == #""v1""#)
    #expect(resume.totalByteCount == Int64(size))

    let progress = Recorder<DownloadProgress>()
    let done = try await client.downloadTask(
      Endpoint<Data>(.get, "/video.bin"), to: file, resumingFrom: resume
    ) { progress.append($0) }.response
    #expect(done.statusCode == 206)
    #expect(done.byteCount == size)
    #expect(try Data(contentsOf: file) == content)
    let values = progress.all
    #expect(values.first.map { $0.receivedBytes > Int64(half) } == true)
    #expect(zip(values, values.dropFirst()).allSatisfy { $0.receivedBytes <= $1.receivedBytes })
    #expect(values.last?.receivedBytes == Int64(size))
    #expect(values.last?.expectedBytes == Int64(size))

    let logged = try await server.loggedRequests().filter { ($0["url"] as? String) == "/video.bin" }
    #expect(logged.count == 2)
    let ranges = logged.compactMap { entry -> String? in
      let headers = entry["headers"] as? [String: Any] ?? [:]
      return headers.first { $0.key.lowercased() == "range" }?.value as? String
    }
    #expect(ranges == ["bytes=\(half)-"])
  }
}
