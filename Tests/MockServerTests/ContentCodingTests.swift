import Foundation
import NativeSupport
import TestSupport
import Testing

@testable import MockServer

@Suite("Content codings (RFC 9110 §8.4, §12.5.3)")
struct ContentCodingTests {
  @Test(arguments: [ContentCoding.gzip, .deflate, .identity])
  func roundTrip(coding: ContentCoding) throws {
    let text = Array(String(repeating: "{\"status\":\"OK\",\"result\":[1,2,3]}", count: 200).utf8)
    let encoded = coding.encode(text)
    if coding != .identity { #expect(encoded.count < text.count / 5) }
    #expect(try coding.decode(encoded) == text)
  }

  @Test func gzipHasMagicAndPythonCanReadIt() throws {
    let body = Array("hello gzip".utf8)
    let gz = ContentCoding.gzip.encode(body)
    #expect(gz.prefix(2) == [0x1f, 0x8b])
    let file = FileManager.default.temporaryDirectory.appendingPathComponent("cc-\(UUID()).gz")
    try Data(gz).write(to: file)
    defer { try? FileManager.default.removeItem(at: file) }
    let python = try runProcess(
      "python3",
      ["-c", "import gzip,sys; sys.stdout.write(gzip.open(sys.argv[1]).read().decode())", file.path])
    #expect(python.stdout == "hello gzip")
  }

  @Test func corruptAndOversizedInputsAreErrors() {
    #expect(throws: Zlib.Failure.corrupt) { try ContentCoding.gzip.decode([0x1f, 0x8b, 8, 0, 1, 2, 3]) }
    let truncated = Array(ContentCoding.gzip.encode(Array(repeating: 1, count: 1000)).dropLast(6))
    #expect(throws: Zlib.Failure.corrupt) { try ContentCoding.gzip.decode(truncated) }
    let big = ContentCoding.gzip.encode([UInt8](repeating: 0, count: 100_000))
    #expect(throws: Zlib.Failure.tooLarge(limit: 1000)) { try ContentCoding.gzip.decode(big, limit: 1000) }
  }

  static let negotiation: [([String], ContentCoding?)] = [
    ([], .identity),
    (["gzip, deflate, br"], .gzip),
    (["deflate"], .deflate),
    (["gzip;q=0.5, deflate;q=0.8"], .deflate),
    (["gzip;q=0"], .identity),
    (["identity;q=0, gzip"], .gzip),
    (["identity;q=0"], nil),
    (["*;q=0"], nil),
    (["br"], .identity),
    (["*"], .gzip),
    (["GZIP;Q=1.0"], .gzip),
    (["x-gzip"], .gzip),
  ]

  @Test(arguments: negotiation)
  func negotiate(values: [String], expected: ContentCoding?) {
    #expect(ContentCoding.negotiate(acceptEncoding: values) == expected)
  }
}
