/// The bytes a connection has queued for its peer: what was queued, how much of it the peer took, and
/// since when it took nothing (a write stall, which the idle timeout closes). Heads and small content are
/// copied in (`bytes`, which the head writers append to); content from ``gatheredContentBytes`` on goes out
/// beside what is queued in one gathering write, and only what the peer did not take is copied. It reads no
/// clock of its own and knows no socket beyond the ``ByteStream`` it is given, so its tests give it a
/// stream that takes a set number of bytes per write.
struct OutputBuffer {
  /// What a flush ended with.
  enum FlushOutcome: Equatable {
    /// Everything queued was written; the buffer is empty again.
    case drained
    /// The peer takes no more now: wait for the stream to be writable.
    case wouldBlock
    /// The stream failed or the peer is gone: the connection closes.
    case failed
  }

  /// Content from this size on is written beside the queued bytes with one gathering write instead of
  /// being copied behind them. Measured on loopback (docs/performance.md): below about 32 KiB the gather
  /// costs the kernel more than the copy costs user space; at 64 KiB it saves 2 µs of copying per write.
  static let gatheredContentBytes = 32 << 10

  /// A buffer that grew beyond this many bytes is given back once drained (a large answer does not keep
  /// its memory for the connection's life).
  static let keptCapacityBytes = 1 << 20

  /// The queued bytes; those before ``offset`` were written.
  var bytes: [UInt8] = []
  /// How many of ``bytes`` the peer took.
  private(set) var offset = 0
  /// Since when queued bytes have been waiting without the peer taking any (monotonic ns), or nil.
  private(set) var stalledSince: UInt64?

  /// Bytes queued and not written yet.
  var pendingCount: Int { bytes.count &- offset }
  /// True while queued bytes wait to be written.
  var hasPending: Bool { offset < bytes.count }
  /// True when nothing is queued (nor kept after a partial write).
  var isEmpty: Bool { bytes.isEmpty }

  /// Queues `content`.
  mutating func append(_ content: [UInt8]) { bytes.append(contentsOf: content) }

  /// Queues `content` as one chunk (RFC 9112 §7.1: size in hex, CRLF, data, CRLF), or as it is.
  mutating func append(_ content: [UInt8], chunked: Bool) {
    guard chunked else { return bytes.append(contentsOf: content) }
    bytes.append(contentsOf: String(content.count, radix: 16).utf8)
    bytes.append(contentsOf: [13, 10])
    bytes.append(contentsOf: content)
    bytes.append(contentsOf: [13, 10])
  }

  /// Writes `content` after the queued bytes (a head already among them) and flushes. Large content is
  /// sent with them in one gathering write where the stream can; only what the peer did not take is
  /// copied in.
  /// - Parameter now: the monotonic clock (ns), read only when a stall starts.
  mutating func write(_ content: [UInt8], to stream: ByteStream, now: () -> UInt64) -> FlushOutcome {
    guard content.count >= OutputBuffer.gatheredContentBytes else {
      bytes.append(contentsOf: content)
      return flush(to: stream, now: now)
    }
    let pending = pendingCount
    let start = offset
    let result = bytes.withUnsafeBytes { buffer in
      content.withUnsafeBytes { body in
        stream.write(UnsafeRawBufferPointer(rebasing: buffer[start...]), body)
      }
    }
    guard case .bytes(let n) = result else {
      // No gathering write, or it failed or would block: the plain path meets the same condition.
      bytes.append(contentsOf: content)
      return flush(to: stream, now: now)
    }
    if n > 0 { stalledSince = nil }
    if n >= pending {
      bytes.removeAll(keepingCapacity: true)
      offset = 0
      bytes.append(contentsOf: content[(n - pending)...])
    } else {
      offset += n
      bytes.append(contentsOf: content)
    }
    return flush(to: stream, now: now)
  }

  /// Writes the queued bytes until all are written or the peer takes no more.
  /// - Parameter now: the monotonic clock (ns), read only when a stall starts.
  mutating func flush(to stream: ByteStream, now: () -> UInt64) -> FlushOutcome {
    while offset < bytes.count {
      let start = offset
      let result = bytes.withUnsafeBytes { buffer in
        stream.write(UnsafeRawBufferPointer(rebasing: buffer[start...]))
      }
      switch result {
      case .bytes(let n):
        offset += n
        if n > 0 { stalledSince = nil }
      case .wouldBlock:
        if stalledSince == nil { stalledSince = now() }
        return .wouldBlock
      case .eof, .failed:
        return .failed
      }
    }
    if bytes.capacity > OutputBuffer.keptCapacityBytes {
      bytes = []
    } else {
      bytes.removeAll(keepingCapacity: true)
    }
    offset = 0
    stalledSince = nil
    return .drained
  }
}
