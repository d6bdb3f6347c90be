import HTTPCore

/// The admin API under `/__admin` (WireMock's paths and JSON shapes). See `docs/admin-api.md`.
struct AdminAPI {
  let service: MockService

  func handle(_ request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    switch (request.method.rawValue, request.head.rawPath) {
    case ("GET", "/__admin/health"):
      return .json(status: .ok, #"{"status":"healthy","version":"\#(MockServerInfo.version)"}"#)
    default:
      return .json(status: .notFound, #"{"error":"no admin endpoint \#(jsonEscaped(request.head.rawPath))"}"#)
    }
  }
}
