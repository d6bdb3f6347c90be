import Foundation
import HTTPCore
import Synchronization

/// A private HTTP cache for `GET` responses (RFC 9111), in memory and optionally on disk.
///
/// - **Stored:** 2xx `GET` responses without `Cache-Control: no-store` (in the response or the request).
///   `private` is fine: this is a private cache. Responses without any freshness information or
///   validator are stored too, for "cached, then fresh" (``APIClient/cachedThenFresh(_:)``); a plain
///   ``APIClient/send(_:)`` never answers from them without asking the server.
/// - **Fresh** (answered without contacting the server, ``APIResponse/Source/cache``): while the current
///   age (`Age`, `Date`, time in the cache; §4.2.3) is below the freshness lifetime: `max-age`, else
///   `Expires` − `Date`, else, only when ``heuristicFraction`` is set, that fraction of the time since
///   `Last-Modified` (§4.2.2). `s-maxage` applies to shared caches and is ignored; `no-cache` means
///   always revalidate.
/// - **Stale:** the request is sent with `If-None-Match` / `If-Modified-Since` when there is a validator;
///   a `304` is answered from the cache with the stored header fields updated (§4.3.4,
///   ``APIResponse/Source/revalidated``).
/// - **Key:** method, base URL, path and the request's own query items (default query items such as
///   timestamps are left out).
/// - **Bounds:** ``capacity`` entries in memory (least recently used evicted); with a ``directory``,
///   entries are also written there and the files are kept under ``maxDiskBytes`` (least recently stored
///   removed first), so they survive a restart.
public final class ResponseCache: Sendable {
  private struct Store {
    var entries: [String: CachedResponse] = [:]
    var order: [String] = []
    /// Size of each file in ``directory``, by file name.
    var diskSizes: [String: Int] = [:]
    var diskOrder: [String] = []
  }

  private let store = Mutex(Store())
  /// The most entries kept in memory.
  public let capacity: Int
  /// The folder of the on-disk store, or nil for memory only.
  public let directory: URL?
  /// The most bytes the on-disk store keeps (default 50 MiB).
  public let maxDiskBytes: Int
  /// Heuristic freshness (RFC 9111 §4.2.2) as a fraction of the time since `Last-Modified` (0.1 is usual),
  /// or nil (the default) for none: responses without explicit freshness are always revalidated.
  public let heuristicFraction: Double?

  /// Creates a cache.
  /// - Parameters:
  ///   - capacity: the most entries kept in memory (default 256).
  ///   - directory: a folder for the on-disk store (created when missing), or nil for memory only.
  ///   - maxDiskBytes: the size bound of the on-disk store in bytes (default 50 MiB).
  ///   - heuristicFraction: heuristic freshness fraction, or nil for none (default).
  public init(
    capacity: Int = 256, directory: URL? = nil, maxDiskBytes: Int = 50 << 20, heuristicFraction: Double? = nil
  ) {
    self.capacity = max(1, capacity)
    self.directory = directory
    self.maxDiskBytes = max(0, maxDiskBytes)
    self.heuristicFraction = heuristicFraction
    if let directory {
      try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      let files =
        (try? FileManager.default.contentsOfDirectory(
          at: directory, includingPropertiesForKeys: [.fileSizeKey, .contentModificationDateKey])) ?? []
      let listed = files.filter { $0.pathExtension == "cache" }.map { url -> (String, Int, Date) in
        let values = try? url.resourceValues(forKeys: [.fileSizeKey, .contentModificationDateKey])
        return (url.lastPathComponent, values?.fileSize ?? 0, values?.contentModificationDate ?? .distantPast)
      }.sorted { $0.2 < $1.2 }
      store.withLock { s in
        for (name, size, _) in listed {
          s.diskSizes[name] = size
          s.diskOrder.append(name)
        }
      }
    }
  }

  /// The stored response for `key`, from memory or disk, or nil (marks it recently used).
  public func lookup(_ key: String) -> CachedResponse? {
    if let entry = store.withLock({ s -> CachedResponse? in
      guard let entry = s.entries[key] else { return nil }
      if let index = s.order.firstIndex(of: key) { s.order.remove(at: index) }
      s.order.append(key)
      return entry
    }) {
      return entry
    }
    guard let entry = readFromDisk(key) else { return nil }
    store.withLock { s in insertInMemory(&s, entry, key) }
    return entry
  }

  /// Whether `response` may be stored (RFC 9111 §3): 2xx and no `no-store`.
  public static func isStorable(_ response: CachedResponse, requestHeaders: HTTPHeaders = [:]) -> Bool {
    (200..<300).contains(response.statusCode)
      && !response.headers.hasToken("no-store", in: "Cache-Control")
      && !requestHeaders.hasToken("no-store", in: "Cache-Control")
  }

  /// Stores `response` under `key` when it is storable (see ``isStorable(_:requestHeaders:)``).
  /// - Returns: true when stored.
  @discardableResult
  public func store(_ response: CachedResponse, for key: String, requestHeaders: HTTPHeaders = [:]) -> Bool {
    guard Self.isStorable(response, requestHeaders: requestHeaders) else { return false }
    store.withLock { s in insertInMemory(&s, response, key) }
    writeToDisk(response, key: key)
    return true
  }

  /// Applies a `304 Not Modified`: replaces stored header fields by the 304's, keeps the body, and restarts
  /// the age from this exchange.
  /// - Parameters:
  ///   - key: the entry.
  ///   - notModifiedHeaders: the 304's header fields.
  ///   - requestTime: when the revalidation request was sent (default now).
  /// - Returns: the updated entry, or nil when nothing is stored for `key`.
  public func revalidated(_ key: String, with notModifiedHeaders: HTTPHeaders, requestTime: Date? = nil)
    -> CachedResponse?
  {
    guard var entry = lookup(key) else { return nil }
    for field in notModifiedHeaders where !Self.isFraming(field.name) {
      entry.headers.replaceOrAdd(name: field.name, value: field.value)
    }
    let now = Date()
    entry.storedAt = now
    entry.requestTime = requestTime ?? now
    store.withLock { s in s.entries[key] = entry }
    writeToDisk(entry, key: key)
    return entry
  }

  /// Removes the entry for `key` (memory and disk).
  public func remove(_ key: String) {
    let name = Self.fileName(key)
    store.withLock { s in
      s.entries.removeValue(forKey: key)
      s.order.removeAll { $0 == key }
      s.diskSizes.removeValue(forKey: name)
      s.diskOrder.removeAll { $0 == name }
    }
    if let directory { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
  }

  /// Removes every entry (memory and disk).
  public func removeAll() {
    let names = store.withLock { s -> [String] in
      let names = s.diskOrder
      s = Store()
      return names
    }
    if let directory {
      for name in names { try? FileManager.default.removeItem(at: directory.appendingPathComponent(name)) }
    }
  }

  /// Number of entries in memory.
  public var count: Int { store.withLock { $0.entries.count } }

  /// Bytes used by the on-disk store.
  public var diskBytes: Int { store.withLock { $0.diskSizes.values.reduce(0, +) } }

  // MARK: - Internals

  private func insertInMemory(_ s: inout Store, _ response: CachedResponse, _ key: String) {
    if s.entries.updateValue(response, forKey: key) != nil, let index = s.order.firstIndex(of: key) {
      s.order.remove(at: index)
    }
    s.order.append(key)
    while s.order.count > capacity {
      s.entries.removeValue(forKey: s.order.removeFirst())
    }
  }

  /// What a file of the on-disk store holds.
  private struct DiskEntry: Codable {
    var key: String
    var statusCode: Int
    var headers: [[String]]
    var body: Data
    var requestTime: Date
    var storedAt: Date
  }

  /// A stable file name for `key` (FNV-1a 64 of its UTF-8).
  static func fileName(_ key: String) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in key.utf8 {
      hash ^= UInt64(byte)
      hash = hash &* 0x0000_0100_0000_01B3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex + ".cache"
  }

  private func writeToDisk(_ response: CachedResponse, key: String) {
    guard let directory else { return }
    let entry = DiskEntry(
      key: key, statusCode: response.statusCode, headers: response.headers.map { [$0.name, $0.value] },
      body: response.body, requestTime: response.requestTime, storedAt: response.storedAt)
    guard let data = try? JSONEncoder().encode(entry), data.count <= maxDiskBytes else { return }
    let name = Self.fileName(key)
    guard (try? data.write(to: directory.appendingPathComponent(name), options: .atomic)) != nil else {
      return
    }
    let evicted = store.withLock { s -> [String] in
      s.diskOrder.removeAll { $0 == name }
      s.diskOrder.append(name)
      s.diskSizes[name] = data.count
      var evicted: [String] = []
      while s.diskSizes.values.reduce(0, +) > maxDiskBytes, let oldest = s.diskOrder.first, oldest != name {
        s.diskOrder.removeFirst()
        s.diskSizes.removeValue(forKey: oldest)
        evicted.append(oldest)
      }
      return evicted
    }
    for old in evicted { try? FileManager.default.removeItem(at: directory.appendingPathComponent(old)) }
  }

  private func readFromDisk(_ key: String) -> CachedResponse? {
    guard let directory,
      let data = try? Data(contentsOf: directory.appendingPathComponent(Self.fileName(key))),
      let entry = try? JSONDecoder().decode(DiskEntry.self, from: data), entry.key == key
    else { return nil }
    var headers = HTTPHeaders()
    for pair in entry.headers where pair.count == 2 { headers.add(name: pair[0], value: pair[1]) }
    return CachedResponse(
      statusCode: entry.statusCode, headers: headers, body: entry.body, requestTime: entry.requestTime,
      storedAt: entry.storedAt)
  }

  private static func isFraming(_ name: String) -> Bool {
    name.equalsIgnoringASCIICase("Content-Length") || name.equalsIgnoringASCIICase("Transfer-Encoding")
      || name.equalsIgnoringASCIICase("Content-Encoding")
  }
}
