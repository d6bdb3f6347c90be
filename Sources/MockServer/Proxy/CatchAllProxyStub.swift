import Foundation
import MockJSON
import Synchronization

/// The stub mapping WireMock adds for `--proxy-all URL` and for a recording session started with a
/// `targetBaseUrl` (any method, any URL, `proxyBaseUrl: URL`). Here those requests are forwarded without
/// a stub in the store, but the journal shows them as WireMock does: matched (`wasMatched: true`, not in
/// `/__admin/requests/unmatched` or its near misses) by this stub, whose JSON is the entry's `stubMapping`
/// and whose id `?matchingStub=` filters by.
package struct CatchAllProxyStub: Sendable, Hashable {
  /// A random UUID, made when the base URL is first proxied to.
  package let id: String
  /// The upstream every request goes to.
  package let baseURL: String

  /// `{"id","uuid","request":{"method":"ANY"},"response":{"proxyBaseUrl"}}`, WireMock's shape of it (any
  /// URL is no URL field).
  package var json: JSONValue {
    .object(
      JSONObject(pairs: [
        ("id", .string(id)), ("uuid", .string(id)),
        ("request", .object(JSONObject(pairs: [("method", .string("ANY"))]))),
        ("response", .object(JSONObject(pairs: [("proxyBaseUrl", .string(baseURL))]))),
      ]))
  }
}

/// The catch-all proxy stubs in use, by base URL (the last ``limit`` kept: one for `--proxy-all`, one per
/// recording target).
package final class CatchAllProxyStubs: Sendable {
  /// Most stubs kept; older ones are forgotten (their journal entries then show `{"id"}` only).
  static let limit = 16
  private let stubs = Mutex<[CatchAllProxyStub]>([])

  /// The stub for `baseURL`, made on first use.
  func stub(for baseURL: String) -> CatchAllProxyStub {
    stubs.withLock { list in
      if let found = list.first(where: { $0.baseURL == baseURL }) { return found }
      let made = CatchAllProxyStub(id: UUID().uuidString.lowercased(), baseURL: baseURL)
      list.append(made)
      if list.count > Self.limit { list.removeFirst(list.count - Self.limit) }
      return made
    }
  }

  /// The stub with `id`, or nil.
  func stub(id: String) -> CatchAllProxyStub? {
    stubs.withLock { list in list.first { $0.id == id } }
  }
}
