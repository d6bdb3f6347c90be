import HTTPCore
import Mappings

/// Serving with scenario states and response-sequence positions in the shared state store
/// (`--state-store`, issue 47; docs/scaling.md).
///
/// A request is matched against the newest snapshot of the states this replica read. When the match read
/// no state and its winner neither counts serves nor moves a scenario, it is answered as without the
/// store (a plain stub: no round trip). Otherwise it is answered off the event loop: one commit in the
/// store (``SharedScenarioStates/commit(basedOn:stubID:countsServes:transition:)``) takes the sequence
/// position and applies the transition only if the states the match read are still the store's; when
/// another replica moved them first, the request is matched again against the fresh states the commit
/// returned, as ``OvertakenRetry`` says (a request overtaken until its deadline is answered 503). While the
/// store cannot answer, such a request is answered 503 (the shared state is unavailable), never from one
/// replica's view.
extension MockResponder {
  /// A match made against the shared store's states, with what the commit gave it. A class: the
  /// parameter that carries it is one word, nil on the way without the store.
  final class SharedMatch: Sendable {
    let table: StubTable
    /// The states the match read.
    let states: [String: String]
    let outcome: StubMatch
    let index: Int?
    /// The response-sequence position the store gave this serve (nil when the winner counts none).
    let serveIndex: Int?
    /// The request's use of the state extension's contexts in the store (nil without them).
    let stateAccess: StateAccess?

    init(
      table: StubTable, states: [String: String], outcome: StubMatch, index: Int?, serveIndex: Int? = nil,
      stateAccess: StateAccess? = nil
    ) {
      self.table = table
      self.states = states
      self.outcome = outcome
      self.index = index
      self.serveIndex = serveIndex
      self.stateAccess = stateAccess
    }
  }

  /// Matches `request` against the newest snapshot; answers at once when nothing shared is involved,
  /// else off the event loop through a commit. With the state extension's contexts in the store, a table
  /// with state matchers is matched off the event loop (`offLoop` then says it is), and a winner that
  /// reads or writes contexts is served there.
  func respondSharingScenarios(
    to request: HTTPRequest, context: RequestContext, shared: SharedScenarioStates, offLoop: Bool = false
  ) -> ResponsePlan {
    let contexts = stateStore.shared != nil
    // A session's own stubs are matched before the server's: either table may have state matchers.
    let stateMatchers = store.table.hasStateMatchers || sessionStore?.table.hasStateMatchers == true
    if contexts, stateMatchers, !offLoop {
      return ResponsePlan(steps: [
        .deferred { [self] in
          respondSharingScenarios(to: request, context: context, shared: shared, offLoop: true)
        }
      ])
    }
    // Matching reads contexts only through state matchers (and then this runs off the loop); a plain
    // request allocates nothing for them.
    let access = contexts && stateMatchers ? StateAccess(stateStore) : nil
    let snapshot = shared.latest
    var readState = false
    let (table, outcome, index) = matchScoped(
      request,
      scenarioState: { name in
        readState = true
        return snapshot.state(of: name)
      }, connection: context.connection, stateAccess: access)
    if let failure = access?.failure {
      return sharedStateUnavailable(request, context: context, problem: failure.description)
    }
    let usesContexts = contexts && MockResponder.usesStateContexts(outcome)
    if !readState, MockResponder.commitStep(outcome) == nil, offLoop || !usesContexts {
      return respondDecoded(
        to: request, context: context,
        sharedMatch: SharedMatch(
          table: table, states: snapshot.states, outcome: outcome, index: index, stateAccess: access))
    }
    let first = (table, snapshot, outcome, index, readState)
    if offLoop { return respondCommitting(request, context: context, shared: shared, first: first) }
    return ResponsePlan(steps: [
      .deferred { [self] in respondCommitting(request, context: context, shared: shared, first: first) }
    ])
  }

  /// True when serving the match's winner reads or writes the state extension's contexts: it has
  /// `recordState`/`deleteState` listeners, or a response (or server-sent event) template that may call
  /// the `state` helper.
  static func usesStateContexts(_ outcome: StubMatch) -> Bool {
    guard case .matched(let stub, _) = outcome else { return false }
    if !stub.extensions.stateListeners.isEmpty || stub.response.template?.mayReadState == true { return true }
    guard let sse = stub.response.serverSentEvents else { return false }
    return sse.events.contains { e in
      [e.eventTemplate, e.idTemplate, e.dataTemplate].contains { $0?.source.contains("state") == true }
    }
  }

  /// The commit loop (off the event loop).
  private func respondCommitting(
    _ request: HTTPRequest, context: RequestContext, shared: SharedScenarioStates,
    first: (StubTable, SharedScenarioStates.Snapshot, StubMatch, Int?, Bool)
  ) -> ResponsePlan {
    var (table, snapshot, outcome, index, readState) = first
    var access = stateStore.shared == nil ? nil : StateAccess(stateStore)
    var retry = OvertakenRetry()
    for attempt in 0... {
      if attempt > 0 {
        guard retry.waitForNextAttempt() else { break }
        readState = false
        let states = snapshot
        access = stateStore.shared == nil ? nil : StateAccess(stateStore)
        (table, outcome, index) = matchScoped(
          request,
          scenarioState: { name in
            readState = true
            return states.state(of: name)
          }, connection: context.connection, stateAccess: access)
        if let failure = access?.failure {
          return sharedStateUnavailable(request, context: context, problem: failure.description)
        }
      }
      let step = MockResponder.commitStep(outcome)
      if step == nil, !readState {
        // Nothing to commit (a stub deferred for the contexts it reads or writes).
        return respondDecoded(
          to: request, context: context,
          sharedMatch: SharedMatch(
            table: table, states: snapshot.states, outcome: outcome, index: index, stateAccess: access))
      }
      do {
        let result = try shared.commit(
          basedOn: readState ? snapshot.version : nil, stubID: step?.stubID ?? "",
          countsServes: step?.countsServes ?? false, transition: step?.transition)
        switch result {
        case .committed(let serveIndex, _):
          return respondDecoded(
            to: request, context: context,
            sharedMatch: SharedMatch(
              table: table, states: snapshot.states, outcome: outcome, index: index,
              serveIndex: step?.countsServes == true ? serveIndex : nil, stateAccess: access))
        case .stale(let fresh):
          snapshot = fresh
        }
      } catch {
        return sharedStateUnavailable(request, context: context, problem: error.description)
      }
    }
    return sharedStateUnavailable(
      request, context: context,
      problem:
        "the scenario states kept changing: every match for \(OvertakenRetry.deadlineText) was overtaken by "
        + "other replicas' commits"
    )
  }

  /// What a serve of the match's winner commits: nil when it counts no serves and moves no scenario.
  static func commitStep(_ outcome: StubMatch) -> (
    stubID: String, countsServes: Bool, transition: (name: String, required: String?, next: String)?
  )? {
    guard case .matched(let stub, _) = outcome else { return nil }
    let transition = stub.scenarioName.flatMap { name in
      stub.newScenarioState.map { (name: name, required: stub.requiredScenarioState, next: $0) }
    }
    let countsServes = stub.responseSequence != nil
    guard countsServes || transition != nil else { return nil }
    return (stub.id, countsServes, transition)
  }

  /// The 503 of a request whose answer needs the shared state that the store cannot give now: journaled
  /// and logged as any answer.
  func sharedStateUnavailable(_ request: HTTPRequest, context: RequestContext, problem: String)
    -> ResponsePlan
  {
    record(request, context: context, stubID: nil, status: 503, served: true)
    log(request, status: 503, label: nil)
    return .errors(HTTPStatus(code: 503), [("Shared state unavailable", problem, nil)])
  }
}
