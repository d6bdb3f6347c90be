import HTTPCore
import Mappings
import Synchronization

extension MockResponder {
  /// Answers `request` through the upstream `proxy` names (a proxy stub, `--proxy-all` or a recording
  /// session): the journal entry is made now and gets the relayed status when the upstream answers; the
  /// upstream exchange runs on a thread of its own and the connection resumes on its loop with the answer
  /// (a 502/504 JSON error naming the upstream and the reason when there is none). Without a `stub`, the
  /// entry is matched by `journalStubID` (a ``CatchAllProxyStub``). A relayed document gets
  /// ``DocumentSandbox/policy`` while the admin API is open, unless `sandbox` is false (the stub's
  /// `x-sandbox`). `idWords` are the journal id's words when the request's draws were made
  /// (``RequestDraws``); nil draws them.
  func serveProxy(
    _ proxy: ProxyDefinition, stub: StubMapping?, request: HTTPRequest, context: RequestContext,
    delayMilliseconds: Int = 0, journalStubID: String? = nil, sandbox: Bool = true,
    idWords: (UInt64, UInt64)? = nil
  ) -> ResponsePlan {
    let words = idWords ?? nextIDWords()
    let journalID = SplitMix64.uuidString(words.0, words.1)
    let ticket = record(
      request, context: context, stubID: stub?.id ?? journalStubID, status: nil, served: nil, idWords: words,
      proxyBaseURL: proxy.baseURL)
    let started = SocketOps.monotonicNanos()
    let forwarder = self.forwarder
    let journal = self.journal
    let scenarioBook = self.scenarioBook
    let label = stub.map(MockResponder.label) ?? "proxy \(proxy.baseURL)"
    let transition = stub.flatMap { stub in
      stub.scenarioName.flatMap { name in
        stub.newScenarioState.map {
          ScenarioBook.Transition(name: name, required: stub.requiredScenarioState, next: $0)
        }
      }
    }
    let statusBox = StatusBox()
    let sandboxes = sandbox && sandboxesDocuments
    var steps: [ResponsePlan.Step] = []
    if delayMilliseconds > 0 { steps.append(.pause(milliseconds: delayMilliseconds)) }
    steps.append(
      .awaiting { resume in
        forwarder.forward(request, proxy: proxy, journalID: journalID) { outcome in
          let status = outcome.response.status.code
          statusBox.set(status, note: outcome.failure?.description)
          journal.update(ticket) { $0.responseStatus = status }
          let relayed = ProxyForwarder.plan(relaying: outcome, method: request.method)
          resume(sandboxes ? relayed.sandboxingDocuments() : relayed)
        }
      })
    return ResponsePlan(steps: steps) { [self] served in
      let ms = Double(SocketOps.monotonicNanos() - started) / 1e6
      let (status, note) = statusBox.get()
      if served, let transition {
        scenarioBook.recordServed(stubID: stub?.id ?? "", countsServes: false, transition: transition)
      }
      recordCompletion(ticket, served: served, durationMilliseconds: ms)
      log(
        request, status: served ? status : nil, fault: note.map { "upstream: \($0)" }, label: label,
        durationMilliseconds: ms, served: served)
    }
  }
}

/// The relayed status and failure, written on the exchange's thread and read on the loop afterwards.
private final class StatusBox: Sendable {
  private let value = Mutex<(Int?, String?)>((nil, nil))
  func set(_ status: Int, note: String?) { value.withLock { $0 = (status, note) } }
  func get() -> (Int?, String?) { value.withLock { $0 } }
}
