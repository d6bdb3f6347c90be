import CZlib

/// Decodes `gzip` and `deflate` content codings (RFC 9110 §8.4.1) with zlib.
enum Inflater {
  /// The decoded bytes, or nil when `data` is not valid gzip/zlib/raw-deflate data.
  static func inflate(_ data: [UInt8], limit: Int) -> [UInt8]? {
    if let out = run(data, windowBits: 15 + 32, limit: limit) { return out }  // gzip or zlib, auto-detected
    return run(data, windowBits: -15, limit: limit)  // raw deflate, as some servers send for "deflate"
  }

  private static func run(_ data: [UInt8], windowBits: Int32, limit: Int) -> [UInt8]? {
    var stream = z_stream()
    guard inflateInit2_(&stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { return nil }
    defer { inflateEnd(&stream) }
    var input = data
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 64 * 1024)
    let status: Int32 = input.withUnsafeMutableBufferPointer { inputBuffer in
      stream.next_in = inputBuffer.baseAddress
      stream.avail_in = uInt(inputBuffer.count)
      while true {
        let rc = chunk.withUnsafeMutableBufferPointer { out -> Int32 in
          stream.next_out = out.baseAddress
          stream.avail_out = uInt(out.count)
          return CZlib.inflate(&stream, Z_NO_FLUSH)
        }
        let produced = chunk.count - Int(stream.avail_out)
        output.append(contentsOf: chunk[0..<produced])
        if output.count > limit { return Z_MEM_ERROR }
        if rc == Z_STREAM_END { return Z_STREAM_END }
        if rc != Z_OK { return rc }
        if stream.avail_in == 0 && produced == 0 { return Z_BUF_ERROR }
      }
    }
    return status == Z_STREAM_END ? output : nil
  }
}
