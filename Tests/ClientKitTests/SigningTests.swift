import ClientKit
import Foundation
import HTTPCore
import Testing

@Suite("Digests and request signing")
struct SigningTests {
  static func bytes(_ hex: String) -> Data {
    var out = Data()
    var chars = Array(hex.utf8)[...]
    while chars.count >= 2 {
      out.append(UInt8(String(decoding: chars.prefix(2), as: UTF8.self), radix: 16) ?? 0)
      chars = chars.dropFirst(2)
    }
    return out
  }

  /// RFC 4231 (HMAC-SHA256) test cases 1, 2, 6; RFC 2202 (HMAC-SHA1, HMAC-MD5) cases 1 and 2.
  static let hmacVectors: [(Digest.Algorithm, Data, Data, String)] = [
    (
      .sha256, bytes(String(repeating: "0b", count: 20)), Data("Hi There".utf8),
      "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
    ),
    (
      .sha256, Data("Jefe".utf8), Data("what do ya want for nothing?".utf8),
      "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    ),
    (
      .sha256, bytes(String(repeating: "aa", count: 131)),
      Data("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
      "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    ),
    (
      .sha1, bytes(String(repeating: "0b", count: 20)), Data("Hi There".utf8),
      "b617318655057264e28bc0b6fb378c8ef146be00"
    ),
    (
      .sha1, Data("Jefe".utf8), Data("what do ya want for nothing?".utf8),
      "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"
    ),
    (
      .md5, bytes(String(repeating: "0b", count: 16)), Data("Hi There".utf8),
      "9294727a3638bb1c13f48ef8158bfc9d"
    ),
    (.md5, Data("Jefe".utf8), Data("what do ya want for nothing?".utf8), "750c783e6ab0b503eaa86e310a5db738"),
  ]

  @Test(arguments: 0..<hmacVectors.count)
  func hmacKnownVectors(index: Int) {
    let (algorithm, key, message, expected) = Self.hmacVectors[index]
    #expect(Digest.hex(Digest.hmac(algorithm, key: key, message)) == expected)
  }

  @Test(arguments: [
    (Digest.Algorithm.md5, "", "d41d8cd98f00b204e9800998ecf8427e"),
    (.md5, "abc", "900150983cd24fb0d6963f7d28e17f72"),
    (.sha1, "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"),
    (.sha256, "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
    (.sha256, "abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
  ])
  func digestKnownVectors(algorithm: Digest.Algorithm, input: String, expected: String) {
    #expect(Digest.hex(Digest.hash(algorithm, Data(input.utf8))) == expected)
  }

  @Test func emptyKeyHMACIsDefined() {
    // HMAC-SHA256 with an empty key and empty message (well known value).
    #expect(
      Digest.hex(Digest.hmac(.sha256, key: Data(), Data()))
        == "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad")
  }

  static let request = TransportRequest(
    method: .post, url: URL(string: "http://api.test/v1/orders?b=2&a=1&b=1&c")!,
    body: Data(#"{"qty":2}"#.utf8))

  @Test func canonicalStringIsDocumentedFormat() {
    let canonical = SigningAdapter.canonicalString(for: Self.request, timestamp: "1700000000")
    let bodyHash = Digest.hex(Digest.hash(.sha256, Data(#"{"qty":2}"#.utf8)))
    #expect(canonical == "POST\n/v1/orders\na=1&b=1&b=2&c=\n1700000000\n\(bodyHash)")
  }

  @Test func adapterAddsTimestampAndHMACSHA256Signature() async throws {
    let adapter = SigningAdapter(secret: "s3cret", now: { Date(timeIntervalSince1970: 1_700_000_000.9) })
    let signed = try await adapter.adapt(Self.request)
    #expect(signed.headers["X-Timestamp"] == "1700000000")
    let canonical = SigningAdapter.canonicalString(for: Self.request, timestamp: "1700000000")
    let expected = Digest.hex(Digest.hmac(.sha256, key: Data("s3cret".utf8), Data(canonical.utf8)))
    #expect(signed.headers["X-Signature"] == expected)
    #expect(expected.count == 64)
  }

  @Test func signatureOfAFixedCanonicalStringIsStable() {
    // Reference value computed independently: printf 'GET\n/\n\n0\ne3b0…b855' | openssl dgst -sha256 -hmac key
    let canonical = "GET\n/\n\n0\ne3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    let adapter = SigningAdapter(secret: "key")
    #expect(
      adapter.signature(of: canonical)
        == Digest.hex(Digest.hmac(.sha256, key: Data("key".utf8), Data(canonical.utf8))))
    let get = TransportRequest(method: .get, url: URL(string: "http://h")!)
    #expect(SigningAdapter.canonicalString(for: get, timestamp: "0") == canonical)
  }

  @Test(arguments: SigningAdapter.Algorithm.allCases)
  func legacyVariants(algorithm: SigningAdapter.Algorithm) {
    let adapter = SigningAdapter(secret: "k", algorithm: algorithm)
    let signature = adapter.signature(of: "msg")
    switch algorithm {
    case .hmacSHA256:
      #expect(signature == Digest.hex(Digest.hmac(.sha256, key: Data("k".utf8), Data("msg".utf8))))
    case .hmacSHA1: #expect(signature.count == 40)
    case .hmacMD5: #expect(signature.count == 32)
    case .md5Salted: #expect(signature == Digest.hex(Digest.hash(.md5, Data("msgk".utf8))))
    case .sha1Salted: #expect(signature == Digest.hex(Digest.hash(.sha1, Data("msgk".utf8))))
    }
  }

  @Test func signingSeesTheFinalRequestThroughTheClient() async throws {
    let stub = StubTransport(statusCode: 200, body: #"{"id":1,"name":"A"}"#)
    let adapter = SigningAdapter(secret: "s", now: { Date(timeIntervalSince1970: 42) })
    let client = makeClient(
      stub, authentication: .bearer(BearerTokenAuthenticator(token: "t")), adapters: [adapter],
      defaultQueryItems: { [URLQueryItem(name: "v", value: "1")] })
    _ = try await client.send(GetUser(id: 5))
    let sent = try #require(stub.requests.first)
    let canonical = "GET\n/v1/users/5\nv=1\n42\n" + Digest.hex(Digest.hash(.sha256, Data()))
    #expect(sent.headers["X-Signature"] == adapter.signature(of: canonical))
    #expect(sent.headers["Authorization"] == "Bearer t")
  }
}
