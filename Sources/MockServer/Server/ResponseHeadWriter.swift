import HTTPCore

/// Writes a response head the way ``Connection`` frames it, in one pass over the authored fields.
///
/// The bytes are exactly those of `HTTPSerializer.framed` (authored `Content-Length` and
/// `Transfer-Encoding` dropped, the true `Content-Length` appended unless the status forbids content),
/// then `Date` and `Server` appended when the author did not set them, any authored `Connection` dropped
/// and `connection` appended, then `HTTPSerializer.writeResponseHead` (CR, LF and NUL in names, values and
/// the reason phrase written as spaces). Doing it in one pass avoids copying the header list three times
/// and appending byte by byte: it is the per-response hot path (see docs/performance.md).
enum ResponseHeadWriter {
  static func write(
    _ head: HTTPResponseHead, contentLength: Int, date: String, server: String?, connection: String?,
    into out: inout [UInt8]
  ) {
    let version = head.version
    if (0...9).contains(version.major), (0...9).contains(version.minor) {
      out.append(contentsOf: [
        72, 84, 84, 80, 47, UInt8(48 + version.major), 46, UInt8(48 + version.minor), 32,
      ])
    } else {
      out.append(contentsOf: "HTTP/\(version.major).\(version.minor) ".utf8)
    }
    let code = head.status.code
    out.append(UInt8(48 + (code / 100) % 10))
    out.append(UInt8(48 + (code / 10) % 10))
    out.append(UInt8(48 + code % 10))
    out.append(32)
    appendSafe(head.status.reasonPhrase, to: &out)
    out.append(13)
    out.append(10)

    var hasDate = false
    var hasServer = false
    for field in head.headers.fields {
      switch field.name.utf8.count {
      case 4 where field.name.equalsIgnoringASCIICase("Date"): hasDate = true
      case 6 where field.name.equalsIgnoringASCIICase("Server"): hasServer = true
      case 10 where field.name.equalsIgnoringASCIICase("Connection"): continue
      case 14 where field.name.equalsIgnoringASCIICase("Content-Length"): continue
      case 17 where field.name.equalsIgnoringASCIICase("Transfer-Encoding"): continue
      default: break
      }
      appendField(field.name, field.value, to: &out)
    }
    if !head.status.forbidsContent {
      out.append(contentsOf: contentLengthPrefix)
      appendDecimal(contentLength, to: &out)
      out.append(13)
      out.append(10)
    }
    if !hasDate { appendField("Date", date, to: &out) }
    if let server, !hasServer { appendField("Server", server, to: &out) }
    if let connection { appendField("Connection", connection, to: &out) }
    out.append(13)
    out.append(10)
  }

  private static let contentLengthPrefix: [UInt8] = Array("Content-Length: ".utf8)

  @inline(__always)
  private static func appendField(_ name: String, _ value: String, to out: inout [UInt8]) {
    appendSafe(name, to: &out)
    out.append(58)
    out.append(32)
    appendSafe(value, to: &out)
    out.append(13)
    out.append(10)
  }

  /// Appends `s` as UTF-8, CR, LF and NUL written as spaces; one copy when there are none.
  @inline(__always)
  static func appendSafe(_ s: String, to out: inout [UInt8]) {
    let copied: Bool? = s.utf8.withContiguousStorageIfAvailable { bytes in
      for b in bytes where b == 13 || b == 10 || b == 0 {
        for c in bytes { out.append(c == 13 || c == 10 || c == 0 ? 32 : c) }
        return true
      }
      out.append(contentsOf: bytes)
      return true
    }
    if copied == nil {
      for c in s.utf8 { out.append(c == 13 || c == 10 || c == 0 ? 32 : c) }
    }
  }

  private static func appendDecimal(_ value: Int, to out: inout [UInt8]) {
    guard value > 0 else {
      if value == 0 {
        out.append(48)
      } else {
        out.append(contentsOf: String(value).utf8)
      }
      return
    }
    var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 24 bytes: enough for Int.max (19 digits)
    var v = value
    var count = 0
    withUnsafeMutableBytes(of: &digits) { buffer in
      while v > 0 {
        count += 1
        buffer[24 - count] = UInt8(48 + v % 10)
        v /= 10
      }
      out.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[(24 - count)...]))
    }
  }
}
