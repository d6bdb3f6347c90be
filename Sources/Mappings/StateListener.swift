import MockJSON
import RegularExpressions
import Templating

/// A `recordState` or `deleteState` serve event listener of WireMock's state extension
/// (docs/stateful.md): it writes the store after the response is rendered and before it is sent. Its
/// values are templates over `request` and `response` (`body`, `headers`), always rendered.
package enum StateListener: Sendable {
  /// `recordState`.
  case record(RecordState)
  /// `deleteState`.
  case delete(DeleteState)

  /// `recordState`'s parameters.
  package struct RecordState: Sendable {
    /// The context to write (created when missing).
    package var context: Template
    /// `state`: properties to set (the text `null` removes one), in file order.
    package var properties: [(String, Template)] = []
    /// `list.addFirst`: an entry inserted at the front.
    package var addFirst: [(String, Template)]?
    /// `list.addLast`: an entry appended.
    package var addLast: [(String, Template)]?
  }

  /// `deleteState`'s parameters.
  package struct DeleteState: Sendable {
    /// Which contexts to delete, or the context whose list loses an entry.
    package enum Target: Sendable {
      case context(Template)
      case contexts([Template])
      /// `contextsMatching`: a Java regular expression matched against whole names; `compiled` when it
      /// was written without template tags.
      case matching(Template, compiled: CompiledRegex?)
    }
    /// `list`'s operation (only the first given of these runs).
    package enum ListDeletion: Sendable {
      case first
      case last
      case index(Template)
      case matching(property: Template, value: Template)
    }
    package var target: Target
    /// With `list`: the entry to remove from the `context`'s list (the context itself is kept).
    package var list: ListDeletion?
  }

  /// The state listeners of a stub (`serveEventListeners` entries named `recordState` or `deleteState`),
  /// in file order; entries with configuration errors (reported at load by
  /// ``StubParser/checkStubFields(_:_:_:)``) are left out.
  package static func list(of source: JSONObject) -> [StateListener] {
    guard let entries = source["serveEventListeners"]?.arrayValue else { return [] }
    var out: [StateListener] = []
    var ignored = Diagnostics(file: "")
    for (i, entry) in entries.enumerated() {
      if let l = StubParser.parseStateListener(entry, "$.serveEventListeners[\(i)]", &ignored) {
        out.append(l)
      }
    }
    return out
  }
}
