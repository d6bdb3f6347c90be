import Foundation
import HTTPCore

@testable import MockServer

/// A responder for connection tests, driven by the request path:
/// `/delay/N` waits N ms, `/echo` returns the content, `/status/N` answers N, `/big/N` sends N bytes,
/// `/reset`, `/hold` run faults; anything else answers 200 `ok:PATH`. `/reject` refuses content before
/// it is sent (413).
struct PathResponder: HTTPResponder {
  func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan? {
    head.rawPath == "/reject"
      ? .json(status: .contentTooLarge, #"{"error":"too large"}"#, keepAlive: false) : nil
  }

  func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan {
    let path = request.head.rawPath
    let parts = path.split(separator: "/")
    if parts.first == "delay", parts.count == 2, let ms = Int(parts[1]) {
      return .respond(status: .ok, body: Array("delayed \(ms)".utf8), delayMilliseconds: ms)
    }
    if path == "/echo" {
      return .respond(status: .ok, headers: ["X-Trailers": "\(request.trailers.count)"], body: request.body)
    }
    if parts.first == "status", parts.count == 2, let code = Int(parts[1]) {
      return .respond(status: HTTPStatus(code: code), headers: ["Transfer-Encoding": "chunked"], body: [120])
    }
    if parts.first == "big", parts.count == 2, let n = Int(parts[1]) {
      return .respond(status: .ok, body: [UInt8](repeating: 97, count: n))
    }
    if path == "/reset" { return ResponsePlan(steps: [.reset]) }
    if path == "/hold" { return ResponsePlan(steps: [.hold(maxMilliseconds: 60_000)]) }
    return .respond(status: .ok, body: Array("ok:\(path)".utf8))
  }
}

/// Starts an ``HTTPServer`` on a free loopback port for one test and stops it afterwards.
func withServer<T>(
  configure: (inout ServerConfiguration) -> Void = { _ in }, responder: HTTPResponder = PathResponder(),
  _ body: (HTTPServer) async throws -> T
) async throws -> T {
  var configuration = ServerConfiguration()
  configuration.port = 0
  configuration.shutdownGraceMilliseconds = 1000
  configure(&configuration)
  let server = HTTPServer(configuration: configuration, responder: responder)
  try server.start()
  defer { server.shutdown(graceful: false) }
  return try await body(server)
}
