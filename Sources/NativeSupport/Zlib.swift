import CZlib

/// gzip (RFC 1952) and deflate (zlib format, RFC 1950, as RFC 9110 §8.4.1.2 defines the `deflate`
/// content coding) through zlib: the one compression loop of the server and the client.
package enum Zlib {
  /// The container format around deflate data.
  package enum Format: Sendable {
    /// gzip member (RFC 1952).
    case gzip
    /// zlib stream (RFC 1950), the `deflate` content coding.
    case zlib
    /// Raw deflate data (RFC 1951), which some servers send for `deflate`.
    case raw
    /// gzip or zlib, told apart by the header (decompression only).
    case automatic

    var windowBits: Int32 {
      switch self {
      case .gzip: return 15 + 16
      case .zlib: return 15
      case .raw: return -15
      case .automatic: return 15 + 32
      }
    }
  }

  /// Why decompression failed.
  package enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input is not a valid stream of the expected format, or is truncated.
    case corrupt
    /// The output would exceed the given limit (bytes).
    case tooLarge(limit: Int)
    /// zlib could not be initialised.
    case unavailable

    /// A one-line, human-readable explanation.
    package var description: String {
      switch self {
      case .corrupt: return "corrupt or truncated compressed data"
      case .tooLarge(let limit): return "decompressed data exceeds \(limit) bytes"
      case .unavailable: return "zlib unavailable"
      }
    }
  }

  /// Compresses `input` at `level` (0...9, default 6). Never fails for valid input sizes.
  package static func compress(_ input: [UInt8], format: Format, level: Int32 = 6) -> [UInt8] {
    var stream = z_stream()
    guard
      deflateInit2_(
        &stream, level, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
        Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { return [] }
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, uLong(input.count))) + 32)
    var input = input
    let produced: Int = input.withUnsafeMutableBufferPointer { inBuf in
      output.withUnsafeMutableBufferPointer { outBuf in
        stream.next_in = inBuf.baseAddress
        stream.avail_in = uInt(inBuf.count)
        stream.next_out = outBuf.baseAddress
        stream.avail_out = uInt(outBuf.count)
        _ = deflate(&stream, Z_FINISH)
        return outBuf.count - Int(stream.avail_out)
      }
    }
    output.removeSubrange(produced...)
    return output
  }

  /// Decompresses `input`.
  /// - Parameters:
  ///   - format: the container; `.gzip` and `.automatic` also accept several concatenated gzip members.
  ///   - limit: largest output accepted, in bytes.
  /// - Throws: ``Failure/corrupt`` for invalid or truncated input, ``Failure/tooLarge(limit:)``.
  package static func decompress(_ input: [UInt8], format: Format, limit: Int = 64 << 20) throws(Failure)
    -> [UInt8]
  {
    var stream = z_stream()
    guard
      inflateInit2_(&stream, format.windowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { throw .unavailable }
    defer { inflateEnd(&stream) }
    var output: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    var input = input
    var failure: Failure?
    input.withUnsafeMutableBufferPointer { inBuf in
      stream.next_in = inBuf.baseAddress
      stream.avail_in = uInt(inBuf.count)
      while true {
        let (status, produced) = chunk.withUnsafeMutableBufferPointer { outBuf -> (Int32, Int) in
          stream.next_out = outBuf.baseAddress
          stream.avail_out = uInt(outBuf.count)
          let status = inflate(&stream, Z_NO_FLUSH)
          return (status, outBuf.count - Int(stream.avail_out))
        }
        output.append(contentsOf: chunk[0..<produced])
        if output.count > limit {
          failure = .tooLarge(limit: limit)
          return
        }
        if status == Z_STREAM_END {
          if format == .gzip || format == .automatic, stream.avail_in > 0, inflateReset(&stream) == Z_OK {
            continue
          }
          return
        }
        if status != Z_OK || (stream.avail_in == 0 && produced == 0) {
          failure = .corrupt
          return
        }
      }
    }
    if let failure { throw failure }
    return output
  }
}
