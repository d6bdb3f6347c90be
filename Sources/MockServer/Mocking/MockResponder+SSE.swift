import HTTPCore
import Mappings
import Templating

/// The answer of an `x-sse` stub (docs/streaming.md, "Server-sent events"): the head after the stub's
/// delay, then a ``ServerSentEventsStream`` of its events rendered for this request.
extension MockResponder {
  /// Plans the event stream of `stub` (its response `definition`, whose `x-sse` is `sse`) for `request`.
  /// The request is journaled once, when the plan ends: the stream ended, the client left or the server
  /// stopped. `stateAccess` is the request's use of the shared store's contexts (nil: this process's).
  func serveEventStream(
    _ sse: ServerSentEventsDefinition, stub: StubMapping, definition: ResponseDefinition,
    request: HTTPRequest, context: RequestContext, pathParameters: () -> [String: String],
    stateAccess: StateAccess? = nil
  ) -> ResponsePlan {
    var definition = definition
    var named = false
    MockResponder.name(stub, in: &definition, once: &named)
    if let cors = corsHeaders(for: stub, request: request) {
      for (name, value) in cors { definition.headers.replaceOrAdd(name: name, value: value) }
    }
    let templated = sse.isTemplated && (templating.global || (templating.local && sse.locallyTemplated))
    let globalDelay = settings.globalDelayMilliseconds
    let globalDistribution = settings.delayDistribution
    let draws = RequestDraws.draw(from: random, templated: templated) { uniform in
      definition.sampleDelayMilliseconds(
        globalFixed: globalDelay, globalDistribution: globalDistribution, random: uniform)
    }
    let addedDelay = MockResponder.delayMilliseconds(draws.delayMilliseconds)
    let label = MockResponder.label(stub)

    // The events' fields, rendered once for this request.
    var rendered: [(event: String?, id: String?, data: String?, retry: Int?, delay: Int)] = sse.events.map {
      ($0.event, $0.id, $0.data, $0.retry, $0.delayMilliseconds)
    }
    if templated {
      var template = definition.template ?? ResponseTemplate(local: sse.locallyTemplated)
      // Under global templating alone a stub without other templated fields has no template description.
      if template.parameters == nil { template.parameters = sse.parameters }
      let templateContext = ResponseTemplating.makeContext(
        template, fields: nil, request: request, context: context, pathParameters: pathParameters(),
        requestID: { draws.requestID }, seed: draws.templateSeed,
        configuration: stateAccess.map { access in
          var reading = templating
          reading.stateLookup = access
          return reading
        } ?? templating)
      var problems: [String] = []
      var exceeded: String?
      func render(_ t: Template?, _ text: String?) -> String? {
        guard let t, exceeded == nil else { return text }
        let r = t.render(templateContext)
        problems += r.problems
        exceeded = r.budgetExceeded
        return r.text
      }
      for (k, e) in sse.events.enumerated() {
        rendered[k].event = render(e.eventTemplate, e.event)
        rendered[k].id = render(e.idTemplate, e.id)
        rendered[k].data = render(e.dataTemplate, e.data)
      }
      for p in problems where logger.level != .quiet || exceeded != nil {
        logger.line("template \(label): \(p)")
      }
      if let exceeded {
        // As any templated answer that passed its budget: its 500, never a cut stream.
        var answer = ResponseTemplating.budgetAnswer(definition, reason: exceeded, stub: label)
        var answerNamed = false
        MockResponder.name(stub, in: &answer, once: &answerNamed)
        var plan = ResponsePlan.respond(
          status: HTTPStatus(code: 500), headers: answer.headers, body: answer.body,
          delayMilliseconds: addedDelay)
        plan.onComplete = journaling(
          request, context: context, stub: stub, draws: draws, addedDelay: addedDelay, status: 500,
          openEnded: false, headWritten: { true })
        return plan
      }
    }

    // `Last-Event-ID`: the stream goes on after the first event of that (rendered) id; an unknown id
    // starts it from the beginning.
    var start = 0
    if sse.resumeFromLastEventId, let last = request.headers.first("Last-Event-ID"),
      let k = rendered.firstIndex(where: { $0.id == last })
    {
      start = k + 1
    }
    var steps: [ResponsePlan.Step] = addedDelay > 0 ? [.pause(milliseconds: addedDelay)] : []
    if start == rendered.count, start > 0, !sse.loop, sse.repeatCount == 1 {
      // Nothing left: 204 stops an EventSource's reconnecting (WHATWG HTML §9.2.3).
      var headers = definition.headers
      headers.remove(name: "Content-Type")
      steps.append(.response(HTTPResponseHead(status: .noContent, headers: headers), body: []))
      return ResponsePlan(
        steps: steps,
        onComplete: journaling(
          request, context: context, stub: stub, draws: draws, addedDelay: addedDelay, status: 204,
          openEnded: false, headWritten: { true }))
    }
    var head = HTTPResponseHead(
      status: HTTPStatus(code: definition.status, reasonPhrase: definition.statusMessage ?? ""),
      headers: definition.headers)
    if !head.headers.contains("Content-Type") {
      head.headers.add(name: "Content-Type", value: "text/event-stream")
    }
    if !head.headers.contains("Cache-Control") { head.headers.add(name: "Cache-Control", value: "no-cache") }
    head.headers.replaceOrAdd(name: "X-Accel-Buffering", value: "no")
    let stream = ServerSentEventsStream(
      events: rendered.map {
        ServerSentEventsStream.Event(
          bytes: ServerSentEventsDefinition.frame(event: $0.event, id: $0.id, data: $0.data, retry: $0.retry),
          delayMilliseconds: $0.delay)
      },
      startIndex: start, passes: sse.loop ? nil : sse.repeatCount,
      ending: sse.closeConnection ? .finish : .hold(milliseconds: builder.maxHoldMilliseconds),
      heartbeatMilliseconds: sse.heartbeatMilliseconds)
    steps.append(.streamedResponse(head, framing: .chunked, source: stream))
    // The connection closes after the stream; a HEAD request (the head alone) keeps it.
    return ResponsePlan(
      steps: steps, keepAlive: request.method == .head,
      onComplete: journaling(
        request, context: context, stub: stub, draws: draws, addedDelay: addedDelay,
        status: definition.status,
        openEnded: sse.loop || !sse.closeConnection, headWritten: { stream.headWritten }))
  }

  /// The completion of an event stream's plan: the journal entry (recorded now, once), the scenario move
  /// and the log line. `served` is the connection's word (false when the client left); a stream that only
  /// ends when the client leaves (`loop`, `closeConnection: false`) counts as served once its head went
  /// out, and the status is recorded whenever the head went out.
  private func journaling(
    _ request: HTTPRequest, context: RequestContext, stub: StubMapping, draws: RequestDraws, addedDelay: Int,
    status: Int, openEnded: Bool, headWritten: @escaping @Sendable () -> Bool
  ) -> @Sendable (Bool) -> Void {
    let started = SocketOps.monotonicNanos()
    let label = MockResponder.label(stub)
    let countsServes = stub.responseSequence != nil
    let transition = stub.scenarioName.flatMap { name in
      stub.newScenarioState.map {
        ScenarioBook.Transition(name: name, required: stub.requiredScenarioState, next: $0)
      }
    }
    let stubID = stub.id
    return { [self] served in
      let ms = Double(SocketOps.monotonicNanos() - started) / 1e6
      let sent = served || headWritten()
      let complete = served || (sent && openEnded)
      if complete, countsServes || transition != nil {
        scenarioBook.recordServed(stubID: stubID, countsServes: countsServes, transition: transition)
      }
      record(
        request, context: context, stubID: stubID, status: sent ? status : nil, served: complete,
        durationMilliseconds: ms, addedDelayMilliseconds: addedDelay, idWords: draws.idWords)
      log(request, status: sent ? status : nil, label: label, durationMilliseconds: ms, served: complete)
    }
  }
}
