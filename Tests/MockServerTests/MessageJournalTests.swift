import HTTPCore
import Mappings
import Testing

@testable import MockServer

@Suite("Message journal: a bounded ring, oldest first")
struct MessageJournalTests {
  static func event(_ k: Int) -> MessageJournal.Event {
    MessageJournal.Event(
      id: "m-\(k)", eventType: "received", channelID: "c",
      upgrade: HTTPRequest(head: HTTPRequestHead(method: .get, target: "/ws")),
      context: RequestContext(
        client: .ipv4(address: 0x7F00_0001, port: 1), localPort: 1, isTLS: false,
        clientCertificateSubject: nil, connectionID: 1, requestNumber: 1, receivedAt: 0),
      message: .text("\(k)"), mappingID: nil, timestamp: Double(k))
  }

  @Test("keeps the newest events in arrival order past the wrap-around; remove and clear keep that order")
  func ring() {
    let journal = MessageJournal(capacity: 3)
    for k in 1...2 { journal.record(Self.event(k)) }
    #expect(journal.all().map(\.id) == ["m-1", "m-2"])
    for k in 3...7 { journal.record(Self.event(k)) }
    #expect(journal.all().map(\.id) == ["m-5", "m-6", "m-7"])
    #expect(journal.remove { $0.id == "m-6" }.map(\.id) == ["m-6"])
    #expect(journal.all().map(\.id) == ["m-5", "m-7"])
    for k in 8...9 { journal.record(Self.event(k)) }
    #expect(journal.all().map(\.id) == ["m-7", "m-8", "m-9"])
    journal.clear()
    #expect(journal.all().isEmpty)
    journal.record(Self.event(10))
    #expect(journal.all().map(\.id) == ["m-10"])
  }

  @Test("is bounded by bytes too, and keeps a long message as its first bytes, saying so")
  func bytes() {
    // Each event costs its message plus 256 bytes: three 16-byte messages fit in 3 × 272 bytes.
    let journal = MessageJournal(capacity: 100, maxBytes: 3 * 272, maxMessageBytes: 16)
    for k in 1...5 {
      var event = Self.event(k)
      event.message = .text(String(repeating: "\(k)", count: 40))
      journal.record(event)
    }
    let kept = journal.all()
    #expect(kept.map(\.id) == ["m-3", "m-4", "m-5"])
    #expect(kept.allSatisfy { $0.truncated && $0.size == 40 })
    #expect(kept.last?.message == .text(String(repeating: "5", count: 16)))
    let before = journal.generation
    _ = journal.remove { $0.id == "m-4" }
    #expect(journal.generation != before)
    journal.record(Self.event(6))
    #expect(journal.all().map(\.id) == ["m-3", "m-5", "m-6"])
    #expect(journal.all().last?.truncated == false)
  }
}
