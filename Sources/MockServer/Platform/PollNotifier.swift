#if canImport(Glibc)
  import Glibc
#elseif canImport(Darwin)
  import Darwin
#endif

/// Level-triggered POSIX `poll(2)` over an array of descriptors, with a pipe for wake-ups: what a system
/// without epoll (macOS) runs on, and `--event-loop poll` on Linux.
///
/// Each wait passes the whole array (the wake-up pipe's read end first) and scans it for the reports, so
/// a wait costs in proportion to the descriptors watched; thousands are fine. A descriptor's place in
/// the array is kept in ``positions`` (indexed by descriptor), and a removed one is replaced by the last,
/// so adding, changing and removing are constant time.
///
/// Invariant: everything but the pipe's descriptors is read and written on the loop's thread only;
/// ``wake()`` (any thread) only writes to the pipe.
final class PollNotifier: ReadinessNotifier {
  private let wakeRead: Int32
  private let wakeWrite: Int32
  /// What `poll` is given: the wake-up pipe at 0, then every watched descriptor.
  private var descriptors: [pollfd]
  /// The index in ``descriptors`` of each descriptor (indexed by descriptor), -1 when not watched.
  private var positions: [Int32] = []
  /// The reports of the last wait.
  private var ready: [Readiness] = []

  /// Creates the wake-up pipe (both ends non-blocking and close-on-exec).
  /// - Throws: ``IOError`` when the system refuses it.
  init() throws(IOError) {
    var ends: (Int32, Int32) = (-1, -1)
    let rc = withUnsafeMutableBytes(of: &ends) { pipe($0.baseAddress!.assumingMemoryBound(to: Int32.self)) }
    guard rc == 0 else { throw IOError("pipe", errno: errno) }
    for fd in [ends.0, ends.1] {
      _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
      _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL, 0) | O_NONBLOCK)
    }
    wakeRead = ends.0
    wakeWrite = ends.1
    descriptors = [pollfd(fd: ends.0, events: Int16(POLLIN), revents: 0)]
    ready.reserveCapacity(64)
  }

  deinit {
    _ = close(wakeRead)
    _ = close(wakeWrite)
  }

  private static func events(_ interest: Interest) -> Int16 {
    var e: Int16 = 0
    if interest.readable { e |= Int16(POLLIN) }
    if interest.writable { e |= Int16(POLLOUT) }
    return e
  }

  func add(fd: Int32, interest: Interest) {
    let index = Int(fd)
    if index >= positions.count {
      positions.append(
        contentsOf: repeatElement(Int32(-1), count: max(index + 1, positions.count * 2, 64) - positions.count)
      )
    }
    if positions[index] >= 0 {
      modify(fd: fd, interest: interest)
      return
    }
    positions[index] = Int32(descriptors.count)
    descriptors.append(pollfd(fd: fd, events: Self.events(interest), revents: 0))
  }

  func modify(fd: Int32, interest: Interest) {
    let index = Int(fd)
    guard index < positions.count, positions[index] >= 0 else { return }
    descriptors[Int(positions[index])].events = Self.events(interest)
  }

  /// Removes `fd` whether or not it is closed next: `poll` reports a closed descriptor left in the array
  /// as `POLLNVAL` on every wait.
  func remove(fd: Int32, closing: Bool) {
    let index = Int(fd)
    guard index < positions.count, positions[index] >= 0 else { return }
    let position = Int(positions[index])
    positions[index] = -1
    let last = descriptors.removeLast()
    if position < descriptors.count {
      descriptors[position] = last
      positions[Int(last.fd)] = Int32(position)
    }
  }

  func wait(timeoutMilliseconds: Int32) -> Int {
    ready.removeAll(keepingCapacity: true)
    let n = descriptors.withUnsafeMutableBufferPointer {
      poll($0.baseAddress, nfds_t($0.count), timeoutMilliseconds)
    }
    if n < 0 { return errno == EINTR ? 0 : -1 }
    var remaining = Int(n)
    var index = 0
    let count = descriptors.count
    while remaining > 0, index < count {
      let descriptor = descriptors[index]
      index += 1
      let bits = Int32(descriptor.revents)
      guard bits != 0 else { continue }
      remaining -= 1
      if descriptor.fd == wakeRead {
        ready.append(.wakeUp)
        continue
      }
      // POLLNVAL: a descriptor closed while watched (a bug elsewhere); reported as a hang-up so that its
      // owner closes it rather than the loop spinning.
      let hangUp = bits & (Int32(POLLHUP) | Int32(POLLERR) | Int32(POLLNVAL)) != 0
      ready.append(
        Readiness(
          fd: descriptor.fd, readable: bits & Int32(POLLIN) != 0 || hangUp,
          writable: bits & Int32(POLLOUT) != 0,
          hangUp: hangUp))
    }
    return ready.count
  }

  @inline(__always)
  func event(at index: Int) -> Readiness { ready[index] }

  func wake() {
    var one: UInt8 = 1
    // A full pipe (EAGAIN) already wakes the loop.
    _ = write(wakeWrite, &one, 1)
  }

  func acknowledgeWake() {
    withUnsafeTemporaryAllocation(byteCount: 256, alignment: 8) { scratch in
      while read(wakeRead, scratch.baseAddress, scratch.count) > 0 {}
    }
  }
}
