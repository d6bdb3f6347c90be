import Foundation
import HTTPCore
import MockJSON
import MockServer
import MockServerTesting
import TestSupport
import Testing

/// The admin API's `extractBodyCriteria`, redaction of query parameters and text bodies, and the journal's
/// attribution of proxied requests (issue 15), over real sockets against the Python upstream.
@Suite("Recording criteria, redaction and proxied journal entries")
struct RecordingCriteriaTests {
  @Test func extractBodyCriteriaWritesLargeBodiesToFilesAndServesThemBack() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let folder = try TemporaryFolder()
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: ["--fixtures", folder.path, "--no-watch", "--quiet"])
    defer { server.stop() }
    let start = try exchange(
      server.port, "POST", "/__admin/recordings/start", headers: [("Content-Type", "application/json")],
      body: Array(
        #"{"targetBaseUrl":"http://127.0.0.1:\#(upstream.port)","extractBodyCriteria":{"textSizeThreshold":"100","binarySizeThreshold":"0"}}"#
          .utf8))
    #expect(start.status.code == 200, "\(String(decoding: start.body, as: UTF8.self))")
    let binary = try exchange(server.port, "GET", "/binary")
    let text = try exchange(server.port, "GET", "/text")
    let big = try exchange(server.port, "GET", "/big?size=5000")
    let stop = try exchange(server.port, "POST", "/__admin/recordings/stop")
    #expect(stop.status.code == 200)
    let mappings = try JSONValue.parse(bytes: stop.body)["mappings"]?.arrayValue ?? []
    func response(_ url: String) -> JSONValue? {
      mappings.first { $0["request"]?["url"]?.stringValue == url }?["response"]
    }
    // Over the thresholds: written to __files/ and referenced; under: inline.
    let binaryFile = try #require(response("/binary")?["bodyFileName"]?.stringValue, "\(mappings)")
    #expect(big.status.code == 200, "\(String(decoding: big.body.prefix(300), as: UTF8.self))")
    let bigFile = try #require(response("/big?size=5000")?["bodyFileName"]?.stringValue, "\(mappings)")
    #expect(response("/binary")?["base64Body"] == nil)
    #expect(response("/text")?["body"]?.stringValue == "hello world\n")
    #expect(response("/text")?["bodyFileName"] == nil)
    let files = folder.files()
    #expect(files.contains("__files/\(binaryFile)"), "\(files)")
    #expect(files.contains("__files/\(bigFile)"), "\(files)")
    let written = try Data(contentsOf: URL(fileURLWithPath: folder.path + "/__files/" + binaryFile))
    #expect(Array(written) == binary.body)
    // Persisted (the default): served back from the files now that the recording stopped.
    let replayed = try exchange(server.port, "GET", "/big?size=5000")
    #expect(replayed.status.code == 200)
    #expect(replayed.body == big.body)
    #expect(try exchange(server.port, "GET", "/text").body == text.body)
  }

  @Test func redactionCoversQueryParametersAndFormAndTextBodies() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let out = try TemporaryFolder()
    defer { out.remove() }
    let run = try RecordingRun([
      "record", "--upstream", "http://127.0.0.1:\(upstream.port)", "--out", out.path, "--redact",
      "api_key,password",
    ])
    #expect(try exchange(run.port, "GET", "/search?q=hello&api_key=SECRET-QUERY").status.code == 200)
    let form = try exchange(
      run.port, "POST", "/echo", headers: [("Content-Type", "application/x-www-form-urlencoded")],
      body: Array("user=ada&password=SECRET-FORM".utf8))
    #expect(form.status.code == 201)
    let (status, output) = run.interrupt()
    #expect(status == 0, "\(output)")
    #expect(output.contains("query parameter api_key of GET /search request"), "\(output)")
    #expect(output.contains("form field password of POST /echo request body"), "\(output)")
    #expect(output.contains("field password of POST /echo response body"), "\(output)")
    for file in out.files() {
      let text = String(
        decoding: try Data(contentsOf: URL(fileURLWithPath: out.path + "/" + file)), as: UTF8.self)
      #expect(!text.contains("SECRET-"), "\(file): \(text)")
    }
    #expect(try runMockserver(["lint", out.path]).0 == 0)
    // Served back, the stubs match the requests whatever the redacted values.
    let replay = try MockServerProcess.launch(arguments: ["--fixtures", out.path, "--no-watch", "--quiet"])
    defer { replay.stop() }
    let search = try exchange(replay.port, "GET", "/search?q=hello&api_key=another")
    #expect(search.status.code == 200)
    #expect(String(decoding: search.body, as: UTF8.self) == #"{"q":"hello"}"#)
    #expect(try exchange(replay.port, "GET", "/search?q=other&api_key=x").status.code == 404)
    let posted = try exchange(
      replay.port, "POST", "/echo", headers: [("Content-Type", "application/x-www-form-urlencoded")],
      body: Array("user=ada&password=whatever".utf8))
    #expect(posted.status.code == 201)
    #expect(String(decoding: posted.body, as: UTF8.self) == "user=ada&password=REDACTED")
  }

  @Test func proxiedJournalEntriesNameTheStubAndTheUpstream() throws {
    let upstream = try PythonUpstream.launch()
    defer { upstream.stop() }
    let base = "http://127.0.0.1:\(upstream.port)"
    let folder = try TemporaryFolder(files: [
      ("proxy.json", proxyStub("/py/.*", to: base, extra: #","proxyUrlPrefixToRemove":"/py""#))
    ])
    defer { folder.remove() }
    let server = try MockServerProcess.launch(arguments: [
      "--fixtures", folder.path, "--no-watch", "--quiet", "--proxy-all", base,
    ])
    defer { server.stop() }
    #expect(try exchange(server.port, "GET", "/json").status.code == 200)
    #expect(try exchange(server.port, "GET", "/py/text").status.code == 200)
    let journal = try JSONValue.parse(bytes: exchange(server.port, "GET", "/__admin/requests").body)
    let entries = journal["requests"]?.arrayValue ?? []
    let proxyAll = try #require(entries.first { $0["request"]?["url"]?.stringValue == "/json" })
    // As WireMock: `--proxy-all` is a priority-10 catch-all proxy stub, so its requests count as matched.
    #expect(proxyAll["wasMatched"]?.boolValue == true, "\(proxyAll)")
    #expect(proxyAll["stubMapping"]?["response"]?["proxyBaseUrl"]?.stringValue == base)
    #expect(proxyAll["stubMapping"]?["id"]?.stringValue?.count == 36, "\(proxyAll)")
    #expect(proxyAll["responseDefinition"]?["proxyBaseUrl"]?.stringValue == base)
    #expect(proxyAll["response"]?["status"]?.numberValue?.intValue == 200)
    let stubbed = try #require(entries.first { $0["request"]?["url"]?.stringValue == "/py/text" })
    #expect(stubbed["wasMatched"]?.boolValue == true)
    #expect(stubbed["responseDefinition"]?["proxyBaseUrl"]?.stringValue == base)
    let unmatched = try JSONValue.parse(
      bytes: exchange(server.port, "GET", "/__admin/requests/unmatched").body)
    #expect(unmatched["requests"]?.arrayValue?.isEmpty == true, "\(unmatched)")
  }
}
