// libFuzzer entry point for the admin API's JSON handlers: `make fuzz` links it with the MockServer target
// (built with -enable-testing) and what it depends on. The first input byte picks an admin call (create,
// replace, import, find, count, remove, near misses, settings, scenario state, metadata, paged reads); the
// rest is its JSON body (or query). After each admin call a few ordinary requests go through the same
// service, so stubs the fuzzer created are matched and their responses planned (delays, faults, chunked
// dribble, templates). Deferred (off-loop) admin reads are run too. Every 256 inputs the runtime stubs
// and the journal are cleared. Nothing may crash.

import HTTPCore
import Mappings
import MockJSON

@testable import MockServer

let fuzzService: MockService = {
  var configuration = MockServiceConfiguration()
  configuration.journalCapacity = 64
  configuration.logLevel = .quiet
  configuration.seed = 1
  return MockService(configuration: configuration, fixtures: FixtureSet())
}()

nonisolated(unsafe) var fuzzIterations = 0

let adminCalls: [(method: HTTPMethod, path: String, bodyIsQuery: Bool)] = [
  (.post, "/__admin/mappings", false),
  (.put, "/__admin/mappings/5f0a6a52-0000-4000-8000-000000000001", false),
  (.post, "/__admin/mappings/import", false),
  (.post, "/__admin/requests/find", false),
  (.post, "/__admin/requests/count", false),
  (.post, "/__admin/requests/remove", false),
  (.post, "/__admin/near-misses/request-pattern", false),
  (.post, "/__admin/near-misses/request", false),
  (.post, "/__admin/settings", false),
  (.put, "/__admin/scenarios/fuzz/state", false),
  (.post, "/__admin/mappings/find-by-metadata", false),
  (.post, "/__admin/mappings/remove-by-metadata", false),
  (.get, "/__admin/requests", true),
  (.get, "/__admin/mappings", true),
  (.get, "/__admin/requests/unmatched/near-misses", true),
]

func fuzzContext() -> RequestContext {
  RequestContext(
    client: .ipv4(address: 0x7F00_0001, port: 40000), localPort: 8080, isTLS: false,
    clientCertificateSubject: nil,
    connectionID: 1, requestNumber: 1, receivedAt: 0)
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAdmin(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  guard size > 0 else { return 0 }
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let call = adminCalls[Int(bytes[0]) % adminCalls.count]
  let body = Array(bytes.dropFirst())
  var target = call.path
  if call.bodyIsQuery {
    target +=
      "?" + String(decoding: body.filter { $0 > 32 && $0 < 127 && $0 != 35 }.prefix(200), as: UTF8.self)
  }
  let headers: HTTPHeaders = [
    "Host": "localhost", "Content-Type": "application/json",
    "Content-Length": "\(call.bodyIsQuery ? 0 : body.count)",
  ]
  let head = HTTPRequestHead(method: call.method, target: target, headers: headers)
  let plan = fuzzService.respond(
    to: HTTPRequest(head: head, body: call.bodyIsQuery ? [] : body), context: fuzzContext())
  // Heavy reads are computed off the event loop: run them here.
  for case .deferred(let work) in plan.steps { _ = work() }
  // Requests an admin-made stub may match.
  for path in ["/", "/a", "/api/v1/friends", "/fuzz?q=1"] {
    let head = HTTPRequestHead(method: .get, target: path, headers: ["Host": "localhost", "X-Fuzz": "1"])
    _ = fuzzService.respond(
      to: HTTPRequest(head: head, body: body.prefix(64).map { $0 }), context: fuzzContext())
  }
  fuzzIterations += 1
  if fuzzIterations % 256 == 0 {
    for path in ["/__admin/mappings", "/__admin/requests"] {
      let head = HTTPRequestHead(method: .delete, target: path, headers: ["Host": "localhost"])
      _ = fuzzService.respond(to: HTTPRequest(head: head), context: fuzzContext())
    }
  }
  return 0
}
