/// Bounds the parser enforces on every message; each maps to a status code when exceeded.
public struct ParserLimits: Sendable, Hashable {
  /// Longest accepted request-target, in bytes (414 URI Too Long above; RFC 9112 §3 suggests ≥ 8000).
  public var maxRequestTargetBytes: Int
  /// Largest header section (request or status line, fields and the empty line), in bytes
  /// (431 Request Header Fields Too Large above, then the connection closes). Default 64 KiB.
  public var maxHeaderSectionBytes: Int
  /// Most field lines in one header (or trailer) section (431 above).
  public var maxHeaderCount: Int
  /// Largest content, in bytes, after removing chunked coding (413 Content Too Large above).
  public var maxBodyBytes: Int

  /// Creates limits; the defaults suit a mock server handling realistic API traffic.
  /// - Parameters:
  ///   - maxRequestTargetBytes: default 8192 bytes.
  ///   - maxHeaderSectionBytes: default 65536 bytes (64 KiB).
  ///   - maxHeaderCount: default 256 field lines.
  ///   - maxBodyBytes: default 64 MiB.
  public init(
    maxRequestTargetBytes: Int = 8192, maxHeaderSectionBytes: Int = 65536, maxHeaderCount: Int = 256,
    maxBodyBytes: Int = 64 << 20
  ) {
    self.maxRequestTargetBytes = maxRequestTargetBytes
    self.maxHeaderSectionBytes = maxHeaderSectionBytes
    self.maxHeaderCount = maxHeaderCount
    self.maxBodyBytes = maxBodyBytes
  }
}
