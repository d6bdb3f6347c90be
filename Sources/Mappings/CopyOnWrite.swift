/// Copy-on-write storage for a value with many reference-counted fields: copies of the holder share one
/// box (one retain instead of one per field), and the first mutation of a shared box copies it.
///
/// Used by the values that travel through the request path: ``StubMapping`` and ``JournalEntry``.
package struct CopyOnWrite<Value> {
  private final class Box {
    var value: Value
    init(_ value: Value) { self.value = value }
  }

  private var box: Box

  /// Wraps `value`.
  package init(_ value: Value) { box = Box(value) }

  /// The value: read in place, copied out of a shared box before the first change.
  package var value: Value {
    _read { yield box.value }
    _modify {
      if !isKnownUniquelyReferenced(&box) { box = Box(box.value) }
      yield &box.value
    }
  }
}

/// A box is only mutated while uniquely referenced, so no two threads ever see it change.
extension CopyOnWrite: @unchecked Sendable where Value: Sendable {}
