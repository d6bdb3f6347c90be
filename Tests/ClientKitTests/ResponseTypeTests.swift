import ClientKit
import Foundation
import Testing

/// Envelopes apply to every response type (issue 19), charsets named by the response, BOMs, HTML
/// error pages (a status error, not a decoding error) and decimals.
@Suite("Response types under envelopes, charsets, BOM, Decimal")
struct ResponseTypeTests {
  static let ng = #"{"status":"NG","message":"Out of stock","code":"E42"}"#

  func send<T: Decodable & Sendable>(
    _ type: T.Type, status: Int = 200, body: Data, headers: HTTPHeaders = [:],
    envelope: (any ResponseEnvelope)? = StatusResultEnvelope()
  ) async throws(APIError) -> T {
    let transport = StubTransport { _ throws(APIError) in
      TransportResponse(statusCode: status, headers: headers, body: body)
    }
    return try await makeClient(transport, envelope: envelope).send(Endpoint<T>(.get, "/x"))
  }

  func send<T: Decodable & Sendable>(
    _ type: T.Type, status: Int = 200, _ text: String,
    envelope: (any ResponseEnvelope)? = StatusResultEnvelope()
  ) async throws(APIError) -> T {
    try await send(type, status: status, body: Data(text.utf8), headers: [:], envelope: envelope)
  }

  @Test func ngUnder200IsApplicationErrorForEveryType() async {
    let errors: [APIError?] = [
      await apiError { () async throws(APIError) in try await send(String.self, Self.ng) },
      await apiError { () async throws(APIError) in try await send(Data.self, Self.ng) },
      await apiError { () async throws(APIError) in try await send(Int.self, Self.ng) },
      await apiError { () async throws(APIError) in try await send(String?.self, Self.ng) },
      await apiError { () async throws(APIError) in try await send([Int].self, Self.ng) },
      await apiError { () async throws(APIError) in try await send([User].self, Self.ng) },
      await apiError { () async throws(APIError) in try await send(Bool.self, Self.ng) },
    ]
    for error in errors {
      #expect(error?.caseName == "application")
      #expect(error?.applicationError?.message == "Out of stock")
      #expect(error?.applicationError?.code == "E42")
    }
    let code = #"{"code":500,"data":null,"info":"maintenance"}"#
    let codeError = await apiError { () async throws(APIError) in
      try await send(String.self, code, envelope: CodeDataEnvelope())
    }
    #expect(codeError?.applicationError?.message == "maintenance")
  }

  @Test func okPayloadIsUnwrappedForEveryType() async throws {
    #expect(try await send(String.self, #"{"status":"OK","result":"hello"}"#) == "hello")
    #expect(try await send(String?.self, #"{"status":"OK","result":"hello"}"#) == "hello")
    #expect(try await send(String?.self, #"{"status":"OK","result":null}"#) == nil)
    #expect(try await send(Int.self, #"{"status":"OK","result":42}"#) == 42)
    #expect(try await send([Int].self, #"{"status":"OK","result":[1,2,3]}"#) == [1, 2, 3])
    #expect(try await send(Data.self, #"{"status":"OK","result":"AQID"}"#) == Data([1, 2, 3]))
    #expect(try await send(Int.self, #"{"code":0,"data":7}"#, envelope: CodeDataEnvelope()) == 7)
  }

  @Test func rawPassThroughOnlyWithoutEnvelope() async throws {
    #expect(try await send(String.self, Self.ng, envelope: nil) == Self.ng)
    #expect(try await send(Data.self, Self.ng, envelope: nil) == Data(Self.ng.utf8))
    #expect(try await send(String.self, Self.ng, envelope: NoEnvelope()) == Self.ng)
  }

  @Test func stringPayloadOfWrongTypeIsDecodingError() async {
    let error = await apiError { () async throws(APIError) in
      try await send(String.self, #"{"status":"OK","result":{"a":1}}"#)
    }
    #expect(error?.caseName == "decoding")
  }

  @Test func stringHonoursCharset() async throws {
    let latin1 = Data([0x63, 0x61, 0x66, 0xE9, 0x20, 0x63, 0x72, 0xE8, 0x6D, 0x65])  // "café crème"
    let text = try await send(
      String.self, body: latin1, headers: ["Content-Type": "text/plain; charset=ISO-8859-1"], envelope: nil)
    #expect(text == "café crème")
    let quoted = try await send(
      String.self, body: latin1, headers: ["Content-Type": #"text/plain;charset="iso-8859-1""#],
      envelope: nil)
    #expect(quoted == "café crème")
    let utf8 = try await send(
      String.self, body: Data("café crème".utf8), headers: ["Content-Type": "text/plain"], envelope: nil)
    #expect(utf8 == "café crème")
    let invalid = await apiError { () async throws(APIError) in
      try await send(String.self, body: latin1, headers: ["Content-Type": "text/plain"], envelope: nil)
    }
    #expect(invalid?.caseName == "decoding")
  }

  @Test("charsets come from the platform's IANA names; an unknown one is a typed error naming it")
  func charsetNamesFromThePlatform() async throws {
    // Windows-1252 has € at 0x80, where ISO-8859-1 has a control character.
    let cp1252 = Data([0x80, 0x20, 0x35])
    #expect(
      try await send(
        String.self, body: cp1252, headers: ["Content-Type": "text/plain; charset=windows-1252"],
        envelope: nil) == "€ 5")
    let utf16 = "café".data(using: .utf16BigEndian) ?? Data()
    #expect(
      try await send(
        String.self, body: utf16, headers: ["Content-Type": "text/plain; charset=UTF-16BE"], envelope: nil)
        == "café")
    #expect(
      try await send(
        String.self, body: Data("plain".utf8), headers: ["Content-Type": "text/plain; charset=US-ASCII"],
        envelope: nil) == "plain")
    let unknown = await apiError { () async throws(APIError) in
      try await send(
        String.self, body: Data("x".utf8), headers: ["Content-Type": "text/plain; charset=x-klingon-9"],
        envelope: nil)
    }
    guard case .decoding(let failure, _)? = unknown else {
      Issue.record("expected .decoding, got \(String(describing: unknown))")
      return
    }
    #expect(failure.reason.contains("x-klingon-9"))
  }

  @Test func byteOrderMarkIsSkipped() async throws {
    let bom = Data([0xEF, 0xBB, 0xBF])
    let user = try await send(
      User.self, body: bom + Data(#"{"id":1,"name":"Ann"}"#.utf8), envelope: nil)
    #expect(user == User(id: 1, name: "Ann"))
    let wrapped = try await send(
      User.self, body: bom + Data(#"{"status":"OK","result":{"id":2,"name":"Bo"}}"#.utf8))
    #expect(wrapped == User(id: 2, name: "Bo"))
    let ng = await apiError { () async throws(APIError) in
      try await send(User.self, body: bom + Data(Self.ng.utf8))
    }
    #expect(ng?.caseName == "application")
    let text = try await send(String.self, body: bom + Data("hi".utf8), envelope: nil)
    #expect(text == "hi")
  }

  @Test func htmlBadGatewayUnderEnvelopeIsStatusError() async {
    let html = "<html><body><h1>502 Bad Gateway</h1></body></html>"
    for type in [0, 1] {
      let error = await apiError { () async throws(APIError) in
        if type == 0 {
          _ = try await send(User.self, status: 502, html)
        } else {
          _ = try await send(String.self, status: 502, html)
        }
      }
      #expect(error?.caseName == "unacceptableStatus")
      #expect(error?.statusCode == 502)
      #expect(error?.applicationError == nil)
    }
  }

  struct Price: Decodable, Sendable, Equatable {
    var amount: Decimal
  }

  @Test func decimalKeepsItsDigits() async throws {
    let price = try await send(
      Price.self, #"{"status":"OK","result":{"amount":1234567890.123456789}}"#)
    #expect(price.amount == Decimal(string: "1234567890.123456789"))
    let small = try await send(Price.self, #"{"amount":0.1}"#, envelope: nil)
    #expect(small.amount == Decimal(string: "0.1"))
  }
}
