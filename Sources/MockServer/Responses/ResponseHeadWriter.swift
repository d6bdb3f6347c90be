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
  /// `contentLength` nil writes no `Content-Length`: the content is then chunked (`chunked`, which writes
  /// `Transfer-Encoding: chunked`) or ends when the connection closes (RFC 9112 §6.3).
  static func write(
    _ head: HTTPResponseHead, contentLength: Int?, chunked: Bool = false, dateLine: [UInt8], server: [UInt8],
    connection: [UInt8], into out: inout [UInt8]
  ) {
    HTTPSerializer.writeStatusLine(head, into: &out)
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
      HTTPSerializer.writeField(name: field.name, value: field.value, into: &out)
    }
    if let contentLength,
      let length = HTTPSerializer.announcedLength(status: head.status, contentLength: contentLength)
    {
      writeContentLength(length, into: &out)
    } else if contentLength == nil, chunked {
      out.append(contentsOf: transferEncodingChunked)
    }
    writeConnectionFields(
      hasDate: hasDate, hasServer: hasServer, dateLine: dateLine, server: server, connection: connection,
      into: &out)
  }

  /// Appends the line `Content-Length: length CRLF` (length ≥ 0).
  @inline(__always)
  static func writeContentLength(_ length: Int, into out: inout [UInt8]) {
    out.append(contentsOf: contentLengthPrefix)
    appendDecimal(length, to: &out)
    out.append(13)
    out.append(10)
  }

  /// Ends a head: the `Date` line (unless authored), the `Server` line (unless authored), the `Connection`
  /// line, and the empty line. `dateLine`, `server` and `connection` are whole lines with their CRLF (the
  /// latter two may be empty).
  @inline(__always)
  static func writeConnectionFields(
    hasDate: Bool, hasServer: Bool, dateLine: [UInt8], server: [UInt8], connection: [UInt8],
    into out: inout [UInt8]
  ) {
    if !hasDate { out.append(contentsOf: dateLine) }
    if !hasServer { out.append(contentsOf: server) }
    out.append(contentsOf: connection)
    out.append(13)
    out.append(10)
  }

  private static let contentLengthPrefix: [UInt8] = Array("Content-Length: ".utf8)
  private static let transferEncodingChunked: [UInt8] = Array("Transfer-Encoding: chunked\r\n".utf8)
  /// `Connection: close CRLF`.
  static let connectionClose: [UInt8] = Array("Connection: close\r\n".utf8)
  /// `Connection: keep-alive CRLF` (HTTP/1.0 keep-alive).
  static let connectionKeepAlive: [UInt8] = Array("Connection: keep-alive\r\n".utf8)

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
