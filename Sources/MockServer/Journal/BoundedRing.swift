/// The newest `capacity` elements, oldest first: appending to a full ring replaces the oldest one, and
/// removing the oldest is O(1) (an `Array.removeFirst` shifts every element left; with 1,000 recent proxy
/// exchanges that was a 100 KB move per exchange, under the recorder's lock).
///
/// Storage grows with the elements up to `capacity` slots, so an unused ring costs nothing. A value type:
/// its owner guards it (a `Mutex`) or confines it to one thread.
package struct BoundedRing<Element> {
  /// Most elements kept (at least 1).
  package let capacity: Int
  private var slots: [Element?] = []
  /// The slot of the oldest element.
  private var start = 0
  /// Elements held, 0...capacity.
  package private(set) var count = 0

  /// An empty ring for at most `capacity` elements (values below 1 mean 1).
  package init(capacity: Int) { self.capacity = max(1, capacity) }

  /// True when it holds nothing.
  package var isEmpty: Bool { count == 0 }

  /// The oldest element, or nil.
  package var first: Element? { count == 0 ? nil : slots[start] }

  /// Appends `element` as the newest; returns the oldest one it replaced when the ring was full (for the
  /// caller to release outside its lock), else nil.
  @discardableResult
  package mutating func append(_ element: Element) -> Element? {
    if count == slots.count, slots.count < capacity {
      // Every slot is used but the ring may grow: the slots are put in age order (only after a
      // `removeFirst` while growing), and the element is added at the end.
      if start != 0 {
        slots = Array(slots[start...] + slots[..<start])
        start = 0
      }
      slots.append(element)
      count += 1
      return nil
    }
    let end = (start + count) % slots.count
    if count < slots.count {
      slots[end] = element
      count += 1
      return nil
    }
    let evicted = slots[start]
    slots[start] = element
    start = (start + 1) % slots.count
    return evicted
  }

  /// Removes and returns the oldest element, or nil when empty.
  @discardableResult
  package mutating func removeFirst() -> Element? {
    guard count > 0 else { return nil }
    let oldest = slots[start]
    slots[start] = nil
    start = (start + 1) % slots.count
    count -= 1
    return oldest
  }

  /// The elements, oldest first.
  package var elements: [Element] {
    var out: [Element] = []
    out.reserveCapacity(count)
    for i in 0..<count {
      if let e = slots[(start + i) % slots.count] { out.append(e) }
    }
    return out
  }
}

extension BoundedRing: Sendable where Element: Sendable {}
