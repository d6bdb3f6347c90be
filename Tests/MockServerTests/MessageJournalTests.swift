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
}
