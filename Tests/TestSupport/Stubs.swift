import HTTPCore
import Mappings
import MockJSON
import Synchronization

/// Why ``makeStub(_:context:)`` found no stub: the parser's errors.
package struct StubParseFailure: Error, CustomStringConvertible {
  package var description: String
}

/// A parse context with in-memory envelopes and body files (`files` by name), and stub ids
/// `stub-1`, `stub-2`… in the order asked for.
package func testContext(envelopes: String = "{}", files: [String: String] = [:]) throws -> StubParsingContext
{
  var diagnostics = Diagnostics(file: "envelopes.json")
  let set = EnvelopeSet.parse(try JSONValue.parse(envelopes), diagnostics: &diagnostics)
  let counter = IDCounter()
  return StubParsingContext(
    envelopes: set,
    readBodyFile: { name in
      if let s = files[name] { return .success(Array(s.utf8)) }
      return .failure(.notFound)
    },
    makeID: { counter.next() })
}

/// Stub ids `stub-1`, `stub-2`… from any thread.
private final class IDCounter: Sendable {
  private let count = Mutex(0)
  func next() -> String {
    let n = count.withLock { value in
      value += 1
      return value
    }
    return "stub-\(n)"
  }
}

/// Parses one stub from JSON text; throws ``StubParseFailure`` when the parser reports an error.
package func makeStub(_ json: String, context: StubParsingContext? = nil) throws -> StubMapping {
  let ctx = try context ?? testContext()
  let (stub, problems) = StubParser.parse(try JSONValue.parse(json), file: "test.json", context: ctx)
  let errors = problems.filter { $0.isError }
  guard errors.isEmpty, let stub else { throw StubParseFailure(description: "\(errors)") }
  return stub
}

/// A request with `method`, `target`, `headers` and a UTF-8 `body`.
package func request(
  _ method: HTTPMethod = .get, _ target: String, headers: HTTPHeaders = [:], body: String = ""
) -> HTTPRequest {
  HTTPRequest(head: HTTPRequestHead(method: method, target: target, headers: headers), body: Array(body.utf8))
}
