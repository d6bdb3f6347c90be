import CLibXML2
import HTTPCore
import MockJSON
import TestSupport
import Testing
import XMLSupport

@testable import Mappings

/// The parts of a stub most stubs leave out are kept behind a reference (issue 12's memory figures):
/// reading, changing, comparing and hashing them behaves as when they were stored inline.
@Suite("Stub storage")
struct StubStorageTests {
  static let full = """
    {"name": "full", "scenarioName": "s", "requiredScenarioState": "Started", "newScenarioState": "next",
     "metadata": {"team": "a"},
     "request": {"method": "GET", "url": "/full", "scheme": "https", "host": {"equalTo": "example.com"},
                 "port": 8443, "clientIp": {"equalTo": "127.0.0.1"},
                 "basicAuthCredentials": {"username": "u", "password": "p"}},
     "response": {"status": 200, "body": "{{request.path}}", "transformers": ["response-template"],
                  "fixedDelayMilliseconds": 5, "delayDistribution": {"type": "uniform", "lower": 1, "upper": 2},
                  "chunkedDribbleDelay": {"numberOfChunks": 2, "totalDuration": 10}}}
    """
  static let proxy = """
    {"request": {"url": "/p"}, "response": {"proxyBaseUrl": "http://127.0.0.1:9"}}
    """
  static let plain = """
    {"request": {"method": "GET", "url": "/plain"}, "response": {"status": 200, "body": "x"}}
    """

  @Test func fieldsBehindTheReferenceReadBackAsParsed() throws {
    let stub = try makeStub(Self.full)
    #expect(stub.name == "full")
    #expect(stub.scenarioName == "s")
    #expect(stub.requiredScenarioState == "Started")
    #expect(stub.newScenarioState == "next")
    #expect(stub.metadata == JSONValue.object(JSONObject(pairs: [("team", .string("a"))])))
    let r = stub.request
    #expect(r.scheme == "https")
    #expect(r.host == .equalTo("example.com", caseInsensitive: false))
    #expect(r.port == 8443)
    #expect(r.clientIp == .equalTo("127.0.0.1", caseInsensitive: false))
    #expect(r.basicAuthCredentials?.username == "u" && r.basicAuthCredentials?.password == "p")
    #expect(r.hasConnectionParts)
    let response = stub.response
    #expect(response.template?.body != nil)
    #expect(response.fixedDelayMilliseconds == 5)
    #expect(response.delayDistribution == .uniform(lower: 1, upper: 2))
    #expect(response.chunkedDribbleDelay == ChunkedDribbleDelay(numberOfChunks: 2, totalDuration: 10))
    #expect(try makeStub(Self.proxy).response.proxy?.baseURL == "http://127.0.0.1:9")

    let plain = try makeStub(Self.plain)
    #expect(plain.name == nil && plain.scenarioName == nil && plain.metadata == nil)
    #expect(!plain.request.hasConnectionParts && plain.request.basicAuthCredentials == nil)
    #expect(plain.response.template == nil && plain.response.proxy == nil)
    #expect(plain.response.fixedDelayMilliseconds == nil && plain.response.delayDistribution == nil)
  }

  @Test func valuesCompareAndHashAsIfStoredInline() throws {
    let full = try makeStub(Self.full)
    let again = try makeStub(Self.full)
    // Two parses of the same stub: separate references, equal values.
    #expect(full.response == again.response)
    #expect(full.response.hashValue == again.response.hashValue)
    #expect(full.request == again.request)

    // A field set and then removed again equals one that never had it.
    var response = ResponseDefinition(status: 200, body: Array("x".utf8), bodySource: .text)
    let untouched = response
    response.fixedDelayMilliseconds = 10
    #expect(response != untouched)
    response.fixedDelayMilliseconds = nil
    #expect(response == untouched)
    #expect(response.hashValue == untouched.hashValue)

    // Changing a copy leaves the original as it was (the reference is shared, never changed in place).
    var copy = full.response
    copy.fixedDelayMilliseconds = 99
    #expect(full.response.fixedDelayMilliseconds == 5)
    #expect(copy.template == full.response.template)
    #expect(copy != full.response)

    var pattern = full.request
    pattern.port = nil
    #expect(pattern != full.request)
    #expect(full.request.port == 8443)
    pattern.scheme = nil
    pattern.host = nil
    pattern.clientIp = nil
    #expect(!pattern.hasConnectionParts)
    #expect(pattern.basicAuthCredentials?.username == "u")

    var stub = full
    stub.scenarioName = nil
    stub.name = "renamed"
    #expect(full.scenarioName == "s" && full.name == "full")
    #expect(stub.scenarioName == nil && stub.name == "renamed" && stub.newScenarioState == "next")
  }

  /// libxml2 is loaded on first use; where it cannot be, the loader says why.
  @Test func libxml2LoaderReportsWhyALibraryCannotBeLoaded() throws {
    #expect(XMLSupport.unavailableReason == nil)
    var functions = clibxml2_functions()
    var message = [CChar](repeating: 0, count: 256)
    let problem = message.withUnsafeMutableBufferPointer { buffer in
      clibxml2_open("libmockserver-no-such-library.so.9", &functions, buffer.baseAddress, buffer.count)
        .map { String(cString: $0) }
    }
    let text = try #require(problem)
    #expect(text.hasPrefix("could not load libxml2 ("), "\(text)")
    #expect(text.contains("libmockserver-no-such-library.so.9"), "\(text)")
  }
}
