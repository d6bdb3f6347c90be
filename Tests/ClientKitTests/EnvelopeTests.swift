import ClientKit
import Foundation
import HTTPCore
import Testing

@Suite("Envelopes")
struct EnvelopeTests {
  struct MaybeUser: Request {
    typealias Response = User?
    var path: String { "/maybe" }
  }

  func send<R: Request>(_ request: R, _ status: Int, _ body: String, envelope: any ResponseEnvelope)
    async throws(APIError) -> R.Response
  {
    try await makeClient(StubTransport(statusCode: status, body: body), envelope: envelope).send(request)
  }

  @Test func statusOKUnwrapsResult() async throws {
    let user = try await send(
      GetUser(id: 1), 200, #"{"status":"OK","result":{"id":1,"name":"Ann"}}"#,
      envelope: StatusResultEnvelope())
    #expect(user == User(id: 1, name: "Ann"))
  }

  @Test(arguments: [200, 400, 500])
  func statusNGIsApplicationErrorWhateverTheStatus(status: Int) async {
    let body = #"{"status":"NG","message":"Out of stock","code":"E42","presentation":"toast"}"#
    let error = await apiError { () async throws(APIError) in
      try await send(GetUser(id: 1), status, body, envelope: StatusResultEnvelope())
    }
    let app = error?.applicationError
    #expect(app?.code == "E42")
    #expect(app?.message == "Out of stock")
    #expect(app?.presentation == .toast)
    #expect(error?.presentation == .toast)
    if status == 200 {
      #expect(error?.caseName == "application")
    } else {
      #expect(error?.caseName == "unacceptableStatus")
      #expect(error?.statusCode == status)
    }
  }

  @Test func ngWithNestedErrorObject() async {
    let body = #"{"status":"NG","error":{"code":"E_TOKEN_EXPIRED"}}"#
    let error = await apiError { () async throws(APIError) in
      try await send(GetUser(id: 1), 200, body, envelope: StatusResultEnvelope())
    }
    #expect(
      error?.applicationError == ApplicationError(code: "E_TOKEN_EXPIRED", message: nil, presentation: .alert)
    )
    #expect(error?.errorDescription?.contains("E_TOKEN_EXPIRED") == true)
  }

  @Test func nullResultDecodesIntoOptional() async throws {
    let value = try await send(
      MaybeUser(), 200, #"{"status":"OK","result":null}"#, envelope: StatusResultEnvelope())
    #expect(value == nil)
    let missing = try await send(MaybeUser(), 200, #"{"status":"OK"}"#, envelope: StatusResultEnvelope())
    #expect(missing == nil)
  }

  @Test(arguments: [#"{"status":"OK","result":null}"#, #"{"status":"OK"}"#])
  func nullResultIsAClearErrorForNonOptional(body: String) async {
    let error = await apiError { () async throws(APIError) in
      try await send(GetUser(id: 1), 200, body, envelope: StatusResultEnvelope())
    }
    guard case .decoding(let failure, let response)? = error else {
      Issue.record("expected .decoding, got \(String(describing: error))")
      return
    }
    #expect(failure.codingPath == "result")
    #expect(failure.reason.contains("not optional"))
    #expect(response.bodyExcerpt == body)
  }

  @Test func missingStatusIsDecodingErrorAtStatus() async {
    let error = await apiError { () async throws(APIError) in
      try await send(
        GetUser(id: 1), 200, #"{"result":{"id":1,"name":"A"}}"#, envelope: StatusResultEnvelope())
    }
    guard case .decoding(let failure, _)? = error else {
      Issue.record("expected .decoding, got \(String(describing: error))")
      return
    }
    #expect(failure.codingPath == "status")
  }

  @Test func payloadFieldErrorsCarryTheFullCodingPath() async {
    let error = await apiError { () async throws(APIError) in
      try await send(
        GetUser(id: 1), 200, #"{"status":"OK","result":{"id":"x","name":"A"}}"#,
        envelope: StatusResultEnvelope())
    }
    guard case .decoding(let failure, _)? = error else {
      Issue.record("expected .decoding, got \(String(describing: error))")
      return
    }
    #expect(failure.codingPath == "result.id")
  }

  @Test(arguments: [
    #"{"code":200,"data":{"id":2,"name":"Bo"},"info":"ok"}"#, #"{"code":0,"data":{"id":2,"name":"Bo"}}"#,
    #"{"code":"200","data":{"id":2,"name":"Bo"}}"#,
  ])
  func codeDataSuccess(body: String) async throws {
    let user = try await send(GetUser(id: 2), 200, body, envelope: CodeDataEnvelope())
    #expect(user == User(id: 2, name: "Bo"))
  }

  @Test func codeDataFailingCodeIsApplicationErrorUnder200() async {
    let error = await apiError { () async throws(APIError) in
      try await send(
        GetUser(id: 2), 200, #"{"code":4001,"data":null,"info":"Invalid coupon"}"#,
        envelope: CodeDataEnvelope())
    }
    guard case .application(let app, let response)? = error else {
      Issue.record("expected .application, got \(String(describing: error))")
      return
    }
    #expect(app.code == "4001")
    #expect(app.message == "Invalid coupon")
    #expect(app.presentation == .alert)
    #expect(response.statusCode == 200)
  }

  @Test func codeDataNullDataIntoOptionalAndMissingCode() async throws {
    let value = try await send(MaybeUser(), 200, #"{"code":200,"data":null}"#, envelope: CodeDataEnvelope())
    #expect(value == nil)
    let error = await apiError { () async throws(APIError) in
      try await send(GetUser(id: 2), 200, #"{"data":{"id":2,"name":"Bo"}}"#, envelope: CodeDataEnvelope())
    }
    guard case .decoding(let failure, _)? = error else {
      Issue.record("expected .decoding, got \(String(describing: error))")
      return
    }
    #expect(failure.codingPath == "code")
    let nullData = await apiError { () async throws(APIError) in
      try await send(GetUser(id: 2), 200, #"{"code":200,"data":null}"#, envelope: CodeDataEnvelope())
    }
    if case .decoding(let failure, _)? = nullData {
      #expect(failure.codingPath == "data")
    } else {
      Issue.record("expected .decoding for null data, got \(String(describing: nullData))")
    }
  }

  @Test func nonJSONBodyWithEnvelopeIsDecodingError() async {
    let error = await apiError { () async throws(APIError) in
      try await send(GetUser(id: 2), 200, "<html>oops</html>", envelope: CodeDataEnvelope())
    }
    #expect(error?.caseName == "decoding")
    #expect(error?.errorDescription?.contains("<html>oops</html>") == true)
  }

  /// A custom envelope: `{"ok":true,"payload":...}` / `{"ok":false,"error":"..."}`.
  struct OkPayloadEnvelope: ResponseEnvelope {
    func outcome(of json: Any) throws(DecodingFailure) -> EnvelopeOutcome {
      let object = try object(json)
      guard let ok = object["ok"] as? Bool else { throw DecodingFailure(codingPath: "ok", reason: "missing") }
      return ok
        ? .success(payloadKey: "payload")
        : .failure(ApplicationError(code: nil, message: text(object["error"]), presentation: .toast))
    }
  }

  @Test func customEnvelope() async throws {
    let user = try await send(
      GetUser(id: 3), 200, #"{"ok":true,"payload":{"id":3,"name":"C"}}"#, envelope: OkPayloadEnvelope())
    #expect(user.id == 3)
    let error = await apiError { () async throws(APIError) in
      try await send(GetUser(id: 3), 200, #"{"ok":false,"error":"nope"}"#, envelope: OkPayloadEnvelope())
    }
    #expect(error?.applicationError?.message == "nope")
    #expect(error?.presentation == .toast)
  }

  @Test func requestCanOptOutOfClientEnvelope() async throws {
    let plain = Endpoint<User>(.get, "/u", envelope: NoEnvelope())
    let user = try await send(plain, 200, #"{"id":4,"name":"D"}"#, envelope: StatusResultEnvelope())
    #expect(user.id == 4)
  }
}
