import RegularExpressions
import Synchronization
import Templating
import Testing

@testable import MockServer

/// The state extension's store alone: update counting per write token, expiry after the last write (a
/// read does not extend it), list deletions on unknown contexts, deletion by pattern.
struct StateStoreTests {
  /// A clock the test moves.
  final class Clock: Sendable {
    let now = Atomic<UInt64>(1_000)
    func advance(seconds: UInt64) { now.add(seconds * 1_000_000_000, ordering: .relaxed) }
  }

  @Test func writesOfOneTokenCountOnce() {
    let store = StateStore()
    let first = store.newWriteToken()
    _ = store.write("a", token: first) { c in
      c.properties.append(StateField("x", "1"))
      return nil
    }
    _ = store.write("a", token: first) { c in
      c.list.append([StateField("id", "1")])
      return nil
    }
    #expect(store.stateContext(named: "a")?.updateCount == 1)
    let second = store.newWriteToken()
    #expect(store.changeExisting("a", token: second) { $0.list.removeAll() })
    #expect(store.stateContext(named: "a")?.updateCount == 2)
    #expect(store.stateContext(named: "a")?.list == [])
    #expect(!store.changeExisting("unknown", token: second) { _ in })
    #expect(store.stateContext(named: "unknown") == nil)
  }

  /// Context names are told apart by their bytes, as WireMock's Java strings and the shared store's keys
  /// are: `é` (U+00E9) and `e` + U+0301, which Swift's `String` calls equal, are two contexts.
  @Test func namesThatDifferInTheirBytesAreTwoContexts() {
    let store = StateStore()
    for name in ["\u{E9}", "e\u{301}"] {
      _ = store.write(name, token: store.newWriteToken()) { c in
        c.list.append([StateField("name", name)])
        return nil
      }
    }
    #expect(store.names().count == 2)
    #expect(store.stateContext(named: "\u{E9}")?.list.count == 1)
    #expect(store.stateContext(named: "e\u{301}")?.list.count == 1)
    store.delete("e\u{301}")
    #expect(store.names().map { Array($0.utf8) } == [Array("\u{E9}".utf8)])
  }

  @Test func contextsExpireAfterTheLastWrite() {
    let clock = Clock()
    let store = StateStore(expirationSeconds: 10) { clock.now.load(ordering: .relaxed) }
    _ = store.write("a", token: store.newWriteToken()) { _ in nil }
    clock.advance(seconds: 6)
    #expect(store.stateContext(named: "a") != nil)  // a read does not extend it
    clock.advance(seconds: 5)
    #expect(store.stateContext(named: "a") == nil)
    #expect(store.names() == [])
    // Written again after expiry: a new context, counted from 1.
    _ = store.write("a", token: store.newWriteToken()) { _ in nil }
    #expect(store.stateContext(named: "a")?.updateCount == 1)
  }

  @Test func deletesByNameAndWholeNamePattern() throws {
    let store = StateStore()
    for name in ["knownContextOne", "knownContextTwo", "extOne"] {
      _ = store.write(name, token: store.newWriteToken()) { _ in nil }
    }
    store.delete("nope")
    #expect(store.delete(matching: try CompiledRegex("extOne")) == 1)
    #expect(store.names() == ["knownContextOne", "knownContextTwo"])
    #expect(store.delete(matching: try CompiledRegex(".*")) == 2)
    #expect(store.names() == [])
  }
}
