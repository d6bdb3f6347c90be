import HTTPCore
import Testing

@testable import MockServer

/// The ring behind the dashboard's replay and the recorder's recent exchanges: the newest `capacity`
/// elements, oldest first, whatever mix of appends and removals came before.
@Suite("Bounded ring")
struct BoundedRingTests {
  @Test func keepsTheNewestInOrder() {
    var ring = BoundedRing<Int>(capacity: 3)
    #expect(ring.isEmpty && ring.first == nil && ring.elements.isEmpty)
    #expect(ring.append(1) == nil)
    #expect(ring.append(2) == nil)
    #expect(ring.append(3) == nil)
    #expect(ring.elements == [1, 2, 3])
    #expect(ring.append(4) == 1)
    #expect(ring.append(5) == 2)
    #expect(ring.elements == [3, 4, 5])
    #expect(ring.first == 3 && ring.count == 3)
  }

  @Test func removalsWhileGrowingKeepTheCapacity() {
    // A removal before the ring reached its capacity must not shrink it: the bound stays `capacity`.
    var ring = BoundedRing<Int>(capacity: 4)
    ring.append(1)
    ring.append(2)
    #expect(ring.removeFirst() == 1)
    ring.append(3)
    ring.append(4)
    ring.append(5)
    #expect(ring.elements == [2, 3, 4, 5])
    #expect(ring.append(6) == 2)
    #expect(ring.elements == [3, 4, 5, 6])
  }

  @Test func matchesAnArrayModelOverAMixOfOperations() {
    var ring = BoundedRing<Int>(capacity: 5)
    var model: [Int] = []
    var rng = SplitMix64(seed: 7)
    for k in 0..<2_000 {
      if rng.next() % 3 == 0 {
        #expect(ring.removeFirst() == (model.isEmpty ? nil : model.removeFirst()))
      } else {
        let evicted = ring.append(k)
        model.append(k)
        #expect(evicted == (model.count > 5 ? model.removeFirst() : nil))
      }
      #expect(ring.elements == model)
      #expect(ring.first == model.first)
    }
  }

  @Test func capacityBelowOneKeepsOne() {
    var ring = BoundedRing<String>(capacity: 0)
    ring.append("a")
    #expect(ring.append("b") == "a")
    #expect(ring.elements == ["b"])
  }

  @Test func theRecorderKeepsTheNewestExchangesOldestFirst() {
    let recorder = ProxyRecorder(recording: false)
    let total = ProxyRecorder.maxRecent + 250
    for k in 0..<total {
      recorder.observe(
        RecordedExchange(
          journalID: "j\(k)", request: HTTPRequest(head: HTTPRequestHead(method: .get, target: "/r/\(k)")),
          response: HTTPResponse(head: HTTPResponseHead(status: .ok)), upstream: "http://upstream"))
    }
    let recent = recorder.recent
    #expect(recent.count == ProxyRecorder.maxRecent)
    #expect(recent.first?.journalID == "j250")
    #expect(recent.last?.journalID == "j\(total - 1)")
    #expect(recorder.captureLimit(bufferBytes: 10 << 20) == ProxyRecorder.snapshotCaptureBytes)
    #expect(recorder.start(RecordingSpec()))
    #expect(recorder.captureLimit(bufferBytes: 10 << 20) == 10 << 20)
    #expect(recorder.stop() != nil)
    #expect(recorder.captureLimit(bufferBytes: 10 << 20) == ProxyRecorder.snapshotCaptureBytes)
  }
}
