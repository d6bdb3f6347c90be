import Foundation
import HTTPCore
import Synchronization

/// An in-memory response cache for `GET` requests that revalidates with `ETag` / `Last-Modified`.
///
/// A 2xx `GET` response is stored when it carries `ETag` or `Last-Modified` and no `Cache-Control:
/// no-store`. The next request for the same key sends `If-None-Match` / `If-Modified-Since` (RFC 9110
/// §13.1); a `304 Not Modified` is answered with the stored body and the stored headers updated by the
/// 304's (RFC 9111 §4.3.4). The key is the method, base URL, request path and the request's own query
/// items; client-wide default query items (timestamps) and adapters are not part of it. Least recently
/// used entries are evicted beyond ``capacity``.
public final class ResponseCache: Sendable {
  private struct Store {
    var entries: [String: CachedResponse] = [:]
    var order: [String] = []
  }

  private let store = Mutex(Store())
  /// The most entries kept.
  public let capacity: Int

  /// Creates an empty cache.
  /// - Parameter capacity: the most entries kept (default 256).
  public init(capacity: Int = 256) {
    self.capacity = max(1, capacity)
  }

  /// The stored response for `key`, or nil (marks it recently used).
  public func lookup(_ key: String) -> CachedResponse? {
    store.withLock { s in
      guard let entry = s.entries[key] else { return nil }
      if let index = s.order.firstIndex(of: key) { s.order.remove(at: index) }
      s.order.append(key)
      return entry
    }
  }

  /// Stores `response` under `key` when it is cacheable (2xx, a validator, no `no-store`).
  /// - Returns: true when stored.
  @discardableResult
  public func store(_ response: CachedResponse, for key: String) -> Bool {
    guard (200..<300).contains(response.statusCode), response.etag != nil || response.lastModified != nil,
      !response.headers.hasToken("no-store", in: "Cache-Control")
    else { return false }
    store.withLock { s in
      if s.entries.updateValue(response, forKey: key) != nil, let index = s.order.firstIndex(of: key) {
        s.order.remove(at: index)
      }
      s.order.append(key)
      while s.order.count > capacity {
        s.entries.removeValue(forKey: s.order.removeFirst())
      }
    }
    return true
  }

  /// Applies a `304 Not Modified`: replaces stored header fields by the 304's, keeps the body.
  /// - Returns: the updated entry, or nil when nothing is stored for `key`.
  public func revalidated(_ key: String, with notModifiedHeaders: HTTPHeaders) -> CachedResponse? {
    store.withLock { s in
      guard var entry = s.entries[key] else { return nil }
      for field in notModifiedHeaders where !Self.isFraming(field.name) {
        entry.headers.replaceOrAdd(name: field.name, value: field.value)
      }
      entry.storedAt = Date()
      s.entries[key] = entry
      return entry
    }
  }

  /// Removes the entry for `key`.
  public func remove(_ key: String) {
    store.withLock { s in
      s.entries.removeValue(forKey: key)
      s.order.removeAll { $0 == key }
    }
  }

  /// Removes every entry.
  public func removeAll() {
    store.withLock { $0 = Store() }
  }

  /// Number of entries.
  public var count: Int { store.withLock { $0.entries.count } }

  private static func isFraming(_ name: String) -> Bool {
    name.equalsIgnoringASCIICase("Content-Length") || name.equalsIgnoringASCIICase("Transfer-Encoding")
      || name.equalsIgnoringASCIICase("Content-Encoding")
  }
}
