// libFuzzer entry point for the fixture JSON parser (exact-number JSON used by fixtures, the admin API
// and `equalToJson`): `make fuzz` compiles it with Sources/MockServer/Stubs/JSON. Any input must parse or
// fail with a positioned error, never crash; what parses must serialize and parse back to an equal value.

import MockJSON

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzJSONParser(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  guard let value = try? JSONValue.parse(bytes: bytes) else { return 0 }
  let text = value.serialized()
  guard let again = try? JSONValue.parse(text), again == value else {
    fatalError("round trip changed the value: \(text)")
  }
  return 0
}
