import Testing

@testable import MockServer

/// ``OutputBuffer`` without a socket: a ``MemoryByteStream`` that takes a set number of bytes (then would
/// block), and a clock the test sets, show what the connection's output does with a slow peer, a stall,
/// a gathering write and a failure.
@Suite struct OutputBufferTests {
  /// A clock the test moves.
  final class Clock {
    var now: UInt64 = 1_000
    var reads = 0
    func read() -> UInt64 {
      reads += 1
      return now
    }
  }

  @Test func aPeerThatTakesEverythingDrainsTheBufferAtOnce() {
    var output = OutputBuffer()
    let peer = MemoryByteStream()
    let clock = Clock()
    output.append(Array("HTTP/1.1 200 OK\r\n\r\n".utf8))
    #expect(output.write(Array("hello".utf8), to: peer, now: clock.read) == .drained)
    #expect(String(decoding: peer.written, as: UTF8.self) == "HTTP/1.1 200 OK\r\n\r\nhello")
    #expect(output.isEmpty && !output.hasPending && output.stalledSince == nil)
    #expect(clock.reads == 0, "the clock is read only when a stall starts")
  }

  @Test func aSlowPeerLeavesTheRestQueuedAndTheStallStartsOnce() {
    var output = OutputBuffer()
    let peer = MemoryByteStream()
    peer.writeAllowance = 3
    let clock = Clock()
    output.append(Array("abcdefgh".utf8))
    #expect(output.flush(to: peer, now: clock.read) == .wouldBlock)
    #expect(output.pendingCount == 5 && output.stalledSince == 1_000)
    // Still nothing taken later: the stall keeps its start.
    clock.now = 9_000
    #expect(output.flush(to: peer, now: clock.read) == .wouldBlock)
    #expect(output.stalledSince == 1_000)
    // The peer takes two bytes: progress ends the stall, and the next block starts a new one.
    peer.writeAllowance = 2
    #expect(output.flush(to: peer, now: clock.read) == .wouldBlock)
    #expect(output.pendingCount == 3 && output.stalledSince == 9_000)
    peer.writeAllowance = nil
    #expect(output.flush(to: peer, now: clock.read) == .drained)
    #expect(String(decoding: peer.written, as: UTF8.self) == "abcdefgh")
    #expect(output.stalledSince == nil && output.isEmpty)
  }

  @Test func largeContentGoesOutBesideTheHeadAndOnlyTheUntakenPartIsCopied() {
    var output = OutputBuffer()
    let head = Array("HTTP/1.1 200 OK\r\nContent-Length: 40000\r\n\r\n".utf8)
    let content = (0..<40_000).map { UInt8(truncatingIfNeeded: $0) }
    let peer = MemoryByteStream()
    peer.writeAllowance = head.count + 10_000
    peer.gathers = true
    output.append(head)
    #expect(output.write(content, to: peer, now: { 7 }) == .wouldBlock)
    #expect(peer.gatheredWrites == 1)
    #expect(output.pendingCount == 30_000, "only the part the peer did not take waits")
    #expect(output.bytes.count == 30_000, "the head and the taken content were not copied")
    peer.writeAllowance = nil
    #expect(output.flush(to: peer, now: { 7 }) == .drained)
    #expect(peer.written == head + content)
  }

  @Test func largeContentOnAStreamThatCannotGatherIsCopiedThenWritten() {
    var output = OutputBuffer()
    let content = [UInt8](repeating: 65, count: OutputBuffer.gatheredContentBytes)
    let peer = MemoryByteStream()
    output.append([1, 2])
    #expect(output.write(content, to: peer, now: { 0 }) == .drained)
    #expect(peer.written == [1, 2] + content)
  }

  @Test func aFailedWriteIsAFailure() {
    var output = OutputBuffer()
    let peer = MemoryByteStream()
    peer.fails = true
    output.append([1])
    #expect(output.flush(to: peer, now: { 0 }) == .failed)
  }

  @Test func aDrainedBufferGivesBackMemoryBeyondOneMiB() {
    var output = OutputBuffer()
    let peer = MemoryByteStream()
    output.append([UInt8](repeating: 0, count: OutputBuffer.keptCapacityBytes + 1))
    #expect(output.flush(to: peer, now: { 0 }) == .drained)
    #expect(output.bytes.capacity == 0)
    output.append([1, 2, 3])
    #expect(output.flush(to: peer, now: { 0 }) == .drained)
    #expect(output.bytes.capacity >= 3, "a small buffer keeps its memory")
  }

  @Test func chunkedContentIsFramedAsOneChunk() {
    var output = OutputBuffer()
    output.append(Array("hello, world".utf8), chunked: true)
    output.append(Array("!".utf8), chunked: false)
    #expect(String(decoding: output.bytes, as: UTF8.self) == "c\r\nhello, world\r\n!")
  }
}
