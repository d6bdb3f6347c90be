// libFuzzer entry point for HTTPCore's parser: `make fuzz` compiles it together with Sources/HTTPCore.
// Every input is parsed in request and response mode, whole and split in two at a point derived from the
// input, and then finished as if the peer had closed. The property checked is "no crash, no hang, no
// sanitizer report" on any byte sequence; a parse error is a valid outcome.

import HTTPCore

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTPParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  let limits = ParserLimits(
    maxRequestTargetBytes: 512, maxHeaderSectionBytes: 4096, maxHeaderCount: 32, maxBodyBytes: 1 << 16)
  let split = bytes.isEmpty ? 0 : Int(bytes[0]) % (bytes.count + 1)
  for mode in [HTTPParser.Mode.request, .response] {
    for pieces in [[bytes[...]], [bytes[..<split], bytes[split...]]] {
      var parser = HTTPParser(mode: mode, limits: limits)
      if mode == .response {
        parser.expectResponse(to: .get)
        parser.expectResponse(to: .head)
      }
      var events = 0
      for piece in pieces {
        parser.append(Array(piece))
        while events < 10_000, let event = try? parser.next() {
          events += 1
          if case .requestHead(let head) = event {
            _ = head.rawPath
            _ = head.rawQuery
            _ = head.wantsKeepAlive
          }
        }
      }
      _ = try? parser.finish()
    }
  }
  return 0
}
