import HTTPCore
import Mappings

/// How an answered request is recorded: its journal entry (the dashboard hears of it through the journal's
/// listeners) and its log line. Every way the mock answers (a stub, a 404 with its near misses, a `__files/`
/// document, an answer no stub made, a proxied exchange, an event stream, a WebSocket upgrade) records
/// through ``record(_:context:stubID:status:served:durationMilliseconds:addedDelayMilliseconds:nearMisses:idWords:fault:stateProblems:proxyBaseURL:)``,
/// ``recordCompletion(_:served:durationMilliseconds:)`` and ``log(_:status:fault:label:durationMilliseconds:served:logged:report:)``,
/// and nowhere else.
extension MockResponder {
  /// Records `request`'s journal entry and returns its ticket.
  /// - Parameters:
  ///   - stubID: the stub that answered, or the catch-all proxy stub's id; nil for none.
  ///   - status: the status sent; nil while unknown (a proxied answer's comes from the upstream).
  ///   - served: true for an answer complete as it is made (queued whole: its duration is 0 ms) or one
  ///     recorded when it completed; nil while it is still being answered
  ///     (``recordCompletion(_:served:durationMilliseconds:)`` then completes it).
  ///   - durationMilliseconds: the time it took, for an answer recorded when it completed.
  ///   - idWords: the journal id's words when the request's draws were made (``RequestDraws``) or drawn
  ///     when the answer began (``nextIDWords()``); nil draws them now.
  ///   - fault, stateProblems, proxyBaseURL: the stub's fault, its state listeners' problems, the upstream.
  @discardableResult
  func record(
    _ request: HTTPRequest, context: RequestContext, stubID: String?, status: Int?, served: Bool?,
    durationMilliseconds: Double? = nil, addedDelayMilliseconds: Int? = nil, nearMisses: [NearMiss] = [],
    idWords: (UInt64, UInt64)? = nil, fault: String? = nil, stateProblems: [String] = [],
    proxyBaseURL: String? = nil
  ) -> RequestJournal.Ticket {
    let words = idWords ?? nextIDWords()
    var entry = JournalEntry(
      idWords: words, request: request, client: context.client,
      isTLS: context.isTLS, clientCertificateSubject: context.clientCertificateSubject,
      loggedAt: context.receivedAt, stubID: stubID, nearMisses: nearMisses, responseStatus: status,
      fault: fault, served: served, durationMilliseconds: served == nil ? nil : durationMilliseconds ?? 0,
      addedDelayMilliseconds: addedDelayMilliseconds)
    if !stateProblems.isEmpty { entry.stateProblems = stateProblems }
    if let proxyBaseURL { entry.proxyBaseURL = proxyBaseURL }
    if let session = context.session { entry.session = session }
    return journal.record(consume entry)
  }

  /// A journal id's two words, drawn from the responder's generator (`--seed`).
  func nextIDWords() -> (UInt64, UInt64) { random.withLock { ($0.next(), $0.next()) } }

  /// Completes the entry of an answer recorded while it was being answered: whether it was served (false
  /// when the client went away first: the status is then cleared, nothing was sent) and how long it took.
  func recordCompletion(_ ticket: RequestJournal.Ticket, served: Bool, durationMilliseconds: Double) {
    journal.update(ticket) { e in
      e.served = served
      e.durationMilliseconds = durationMilliseconds
      if !served { e.responseStatus = nil }
    }
  }

  /// Writes `request`'s log line (none at `--quiet`).
  /// - Parameters:
  ///   - status: the status sent; nil when none was (the client went away first).
  ///   - label: how the line names what answered (``label(_:)``, `__files/…`, a note); nil for no stub.
  ///   - logged: the answer `--verbose` shows.
  ///   - report: a 404's near-miss report, written below the line (with the unserved-preflight note when
  ///     the request was one).
  func log(
    _ request: HTTPRequest, status: Int?, fault: String? = nil, label: String?,
    durationMilliseconds: Double = 0, served: Bool = true, logged: (HTTPResponseHead, [UInt8])? = nil,
    report: NearMissReport? = nil
  ) {
    guard logger.level != .quiet else { return }
    var text: String?
    if let report {
      text = report.text()
      if let note = MockResponder.unservedPreflightNote(request) { text = note + "\n" + text! }
    }
    logger.request(
      request, status: status, fault: fault, stub: label,
      durationMilliseconds: durationMilliseconds, served: served, responseHead: logged?.0,
      responseBody: logged?.1 ?? [], nearMisses: text, nearMissReport: report)
  }
}
