import HTTPCore
import Testing

@testable import Mappings
@testable import MockServer

@Suite("Journal: bounded ring and exact counts")
struct JournalTests {
  static func entry(_ k: Int, url: String = "/x", stub: String? = "s") -> JournalEntry {
    JournalEntry(
      id: "id-\(k)", request: HTTPRequest(head: HTTPRequestHead(method: .get, target: url)),
      clientAddress: "127.0.0.1:1", isTLS: false, clientCertificateSubject: nil, loggedAt: Double(k),
      stubID: stub, nearMisses: [])
  }

  static let pattern = RequestPattern(method: .get, url: .url("/x"))

  @Test("keeps the newest entries; per-stub and tracked counts stay exact past eviction")
  func eviction() {
    let journal = RequestJournal(capacity: 3)
    #expect(journal.count(matching: JournalTests.pattern) == .init(count: 0, exact: true))
    for k in 1...10 { journal.record(JournalTests.entry(k, url: k % 2 == 0 ? "/x" : "/y")) }
    #expect(journal.snapshot().map(\.id) == ["id-8", "id-9", "id-10"])
    #expect(journal.entries(limit: 2).map(\.id) == ["id-10", "id-9"])
    #expect(journal.entries(since: 9).count == 2)
    #expect(journal.count(stubID: "s") == 10)
    #expect(journal.count(matching: JournalTests.pattern) == .init(count: 5, exact: true))
    #expect(journal.evictedCount == 7)
    let late = RequestPattern(url: .url("/y"))
    #expect(journal.count(matching: late) == .init(count: 1, exact: false))
    journal.record(JournalTests.entry(11, url: "/y"))
    #expect(journal.count(matching: late) == .init(count: 2, exact: false))
  }

  @Test("removing entries uncounts them; clear restarts exact counting")
  func removal() {
    let journal = RequestJournal(capacity: 10)
    _ = journal.count(matching: JournalTests.pattern)
    for k in 1...4 { journal.record(JournalTests.entry(k)) }
    #expect(journal.remove(id: "id-2"))
    #expect(!journal.remove(id: "id-2"))
    #expect(journal.count(matching: JournalTests.pattern).count == 3)
    #expect(journal.removeAll { $0.loggedAt >= 3 } == 2)
    #expect(journal.count(matching: JournalTests.pattern).count == 1)
    journal.clear()
    #expect(journal.count(matching: JournalTests.pattern) == .init(count: 0, exact: true))
    journal.record(JournalTests.entry(5))
    #expect(journal.count(matching: JournalTests.pattern).count == 1)
  }

  @Test("tracked patterns are bounded, least recently counted dropped first")
  func trackedBound() {
    let journal = RequestJournal(capacity: 2, maxTrackedPatterns: 2)
    for k in 0..<5 { _ = journal.count(matching: RequestPattern(url: .url("/p\(k)"))) }
    #expect(journal.trackedPatternCount == 2)
  }

  @Test("memory stays bounded: 200,000 records into a small journal")
  func bounded() {
    let journal = RequestJournal(capacity: 100)
    _ = journal.count(matching: JournalTests.pattern)
    for k in 0..<200_000 { journal.record(JournalTests.entry(k, url: "/x")) }
    #expect(journal.retainedCount == 100)
    #expect(journal.count(matching: JournalTests.pattern) == .init(count: 200_000, exact: true))
  }

  @Test("ISO dates and loopback addresses")
  func helpers() {
    #expect(HTTPDate.iso8601(0) == "1970-01-01T00:00:00.000Z")
    #expect(HTTPDate.iso8601(1_714_564_800.25) == "2024-05-01T12:00:00.250Z")
    #expect(JournalEntry.isLoopback("127.0.0.1:80"))
    #expect(JournalEntry.isLoopback("[::1]:80"))
    #expect(JournalEntry.isLoopback("[::ffff:127.0.0.1]:80"))
    #expect(!JournalEntry.isLoopback("10.0.0.1:80"))
    #expect(!JournalEntry.isLoopback("[2001:db8::1]:80"))
    #expect(AdminAPI.parseTime("2024-05-01T12:00:00Z") == 1_714_564_800)
    #expect(AdminAPI.parseTime("1714564800000") == 1_714_564_800)
  }
}
