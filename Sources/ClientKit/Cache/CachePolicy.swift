/// How the client's ``ResponseCache`` treats a request. Only `GET` responses are ever cached.
public enum CachePolicy: Sendable, Hashable {
  /// Store responses that carry a validator (`ETag` or `Last-Modified`) and revalidate stored ones with
  /// `If-None-Match` / `If-Modified-Since`; a `304 Not Modified` is answered from the cache.
  case useProtocol
  /// Neither read nor write the cache.
  case ignoreCache
}
