// libFuzzer entry point for stub mappings: `make fuzz` links it with the HTTPCore, MockJSON and Mappings
// targets. Any
// input is parsed as a stub mapping (with lint diagnostics); a valid stub goes into a table and is matched
// against requests built from the same input (target and header value). Nothing may crash.

import HTTPCore
import Mappings
import MockJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStubs(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let json = try? JSONValue.parse(bytes: bytes) else { return 0 }
  let context = StubParsingContext(makeID: { "fuzz" })
  let (stub, _) = StubParser.parse(json, file: "fuzz.json", context: context)
  guard let stub else { return 0 }
  let table = StubTable([stub])
  let printable = String(
    decoding: bytes.filter { $0 > 32 && $0 < 127 && $0 != 35 }.prefix(200), as: UTF8.self)
  for target in ["/", "/" + printable, "/a?" + printable, "/caf%C3%A9?q=%E4%B8%AD"] {
    for method in [HTTPMethod.get, .post, .head] {
      let head = HTTPRequestHead(
        method: method, target: target, headers: ["Host": "x", "X-Fuzz": printable, "Cookie": printable])
      _ = table.match(HTTPRequest(head: head, body: bytes), scenarioState: { _ in "Started" })
    }
  }
  return 0
}
