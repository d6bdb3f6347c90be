import HTTPCore
import MockServer
import Testing

/// `actual == expected`, the action evaluated first (`#expect` cannot call a mutating method inside its
/// expansion).
func expectAction<T: Equatable>(
  _ actual: T, _ expected: T, sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(actual == expected, sourceLocation: sourceLocation)
}

/// ``ConnectionStateMachine`` fed events without a loop or a socket: each test is a connection's story
/// told as events, with the actions the machine answers.
@Suite struct ConnectionStateMachineTests {
  typealias Machine = ConnectionStateMachine

  static func head(
    _ method: HTTPMethod = .get, version: HTTPVersion = .http1_1, _ fields: [(String, String)] = []
  ) -> HTTPRequestHead {
    HTTPRequestHead(method: method, target: "/", version: version, headers: HTTPHeaders(fields))
  }

  /// A machine that received `head` and its content, and started a one-step plan for it.
  static func executing(
    _ head: HTTPRequestHead = head(), steps: Int = 1, planKeepAlive: Bool = true, inputBuffered: Bool = false
  ) -> Machine {
    var m = Machine()
    expectAction(m.headReceived(head), .readContent)
    m.requestEnded()
    m.planStarted(
      stepCount: steps, planKeepAlive: planKeepAlive, forceClose: false, serverStopping: false,
      inputBuffered: inputBuffered)
    return m
  }

  /// Runs every remaining step of `m`'s plan; the action after the last.
  static func runToEnd(_ m: inout Machine) -> Machine.Action {
    while true {
      let action = m.nextStep()
      guard case .runStep = action else { return action }
    }
  }

  // MARK: Keep-alive (RFC 9112 §9.3)

  @Test func http11IsPersistentByDefault() {
    var m = Self.executing()
    #expect(m.connectionField == .none)
    expectAction(m.nextStep(), .runStep(0))
    expectAction(m.nextStep(), .completePlan(served: true, then: .readNextRequest))
    #expect(m.isBetweenRequests)
  }

  @Test func connectionCloseEndsTheConnectionAfterTheResponse() {
    var m = Self.executing(Self.head(.get, [("Connection", "close")]))
    #expect(m.connectionField == .close)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .beginClosing))
    // The request was read whole and nothing else is buffered: a plain close, no lingering (§9.6).
    expectAction(m.beginClosing(outputPending: false, inputIdle: true), .close(served: true))
  }

  @Test func http10WithKeepAliveStaysOpenAndSaysSo() {
    var m = Self.executing(Self.head(.get, version: .http1_0, [("Connection", "keep-alive")]))
    #expect(m.connectionField == .keepAlive)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .readNextRequest))
  }

  @Test func http10WithoutKeepAliveCloses() {
    var m = Self.executing(Self.head(.get, version: .http1_0))
    #expect(m.connectionField == .close)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .beginClosing))
  }

  @Test func aPlanThatRefusesKeepAliveCloses() {
    var m = Self.executing(planKeepAlive: false)
    #expect(m.connectionField == .close)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .beginClosing))
  }

  @Test func aStoppingServerWithdrawsKeepAlive() {
    var m = Machine()
    _ = m.headReceived(Self.head())
    m.requestEnded()
    m.planStarted(
      stepCount: 1, planKeepAlive: true, forceClose: false, serverStopping: true, inputBuffered: false)
    #expect(m.connectionField == .close)
  }

  // MARK: Pipelining (RFC 9112 §9.3.2)

  @Test func aPipelinedRequestWaitsUntilThePlanBeforeItCompletes() {
    // The second request's bytes are buffered while the first plan waits (a pause): its head is not
    // taken (the machine is not reading), and the first plan's steps run first.
    var m = Self.executing(steps: 3, inputBuffered: true)
    expectAction(m.nextStep(), .runStep(0))
    m.stepWaits(for: .pause)
    #expect(!m.isReading)
    expectAction(m.headReceived(Self.head()), .none)
    expectAction(m.nextStep(), .none)
    expectAction(m.timerFired(.pause), .continuePlan)
    expectAction(m.nextStep(), .runStep(1))
    expectAction(m.nextStep(), .runStep(2))
    // Complete: back to reading, and the buffered head is parsed now (output drained: process input).
    expectAction(m.nextStep(), .completePlan(served: true, then: .readNextRequest))
    expectAction(m.outputDrained(inputIdle: false), .processInput)
    expectAction(m.headReceived(Self.head()), .readContent)
  }

  @Test func pipelinedRequestsAreAnsweredOneAfterTheOther() {
    var m = Self.executing()
    var order: [Int] = []
    for request in 1...3 {
      if request > 1 {
        expectAction(m.headReceived(Self.head()), .readContent)
        m.requestEnded()
        m.planStarted(
          stepCount: 1, planKeepAlive: true, forceClose: false, serverStopping: false, inputBuffered: true)
      }
      expectAction(m.nextStep(), .runStep(0))
      order.append(request)
      expectAction(m.nextStep(), .completePlan(served: true, then: .readNextRequest))
    }
    #expect(order == [1, 2, 3])
  }

  // MARK: Expect: 100-continue (RFC 9110 §10.1.1)

  @Test func continueIsSentOnlyWhenTheContentIsWanted() {
    var m = Machine()
    let h = Self.head(.post, [("Expect", "100-continue"), ("Content-Length", "5")])
    expectAction(m.headReceived(h), .askBeforeContent)
    expectAction(m.contentWanted(inputBuffered: false), .sendContinue)
    // Once only.
    expectAction(m.contentWanted(inputBuffered: false), .none)
  }

  @Test func noContinueWhenTheClientAlreadySendsTheContent() {
    var m = Machine()
    expectAction(
      m.headReceived(Self.head(.post, [("Expect", "100-continue"), ("Content-Length", "5")])),
      .askBeforeContent)
    expectAction(m.contentWanted(inputBuffered: true), .readContent)
  }

  @Test func aFinalStatusInsteadOfContinueClosesAfterIt() {
    var m = Machine()
    expectAction(
      m.headReceived(Self.head(.put, [("Expect", "100-continue"), ("Content-Length", "9")])),
      .askBeforeContent)
    // The responder answers before the content: a plan that closes (the content was never read).
    m.planStarted(
      stepCount: 1, planKeepAlive: true, forceClose: true, serverStopping: false, inputBuffered: false)
    #expect(m.connectionField == .close)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .beginClosing))
  }

  @Test func noContinueForARequestWithoutContentOrFromHTTP10() {
    var m = Machine()
    expectAction(m.headReceived(Self.head(.get, [("Expect", "100-continue")])), .readContent)
    var m10 = Machine()
    let h10 = Self.head(.post, version: .http1_0, [("Expect", "100-continue"), ("Content-Length", "3")])
    expectAction(m10.headReceived(h10), .readContent)
  }

  @Test func anUnknownExpectationIsRejected() {
    var m = Machine()
    expectAction(
      m.headReceived(Self.head(.post, [("Expect", "teapot"), ("Content-Length", "1")])), .rejectExpectation)
  }

  // MARK: Half-close and lingering close (RFC 9112 §9.6)

  @Test func endOfInputAfterACompleteRequestAnswersItThenCloses() {
    // The end of input is recorded before the buffered request is parsed: its plan knows nothing follows.
    var m = Self.executingAfterHalfClose()
    #expect(m.connectionField == .close)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .beginClosing))
    expectAction(m.beginClosing(outputPending: true, inputIdle: true), .flushThenClose)
    expectAction(m.outputDrained(inputIdle: true), .close(served: true))
  }

  /// A request read, its plan started, then the end of input, all before the plan's first step ran.
  static func executingAfterHalfClose() -> Machine {
    var m = Machine()
    _ = m.headReceived(head())
    m.requestEnded()
    m.endOfInputReceived()
    m.planStarted(
      stepCount: 1, planKeepAlive: true, forceClose: false, serverStopping: false, inputBuffered: false)
    return m
  }

  @Test func endOfInputWithPipelinedRequestsLeftKeepsAnsweringThem() {
    var m = Machine()
    _ = m.headReceived(Self.head())
    m.requestEnded()
    m.endOfInputReceived()
    m.planStarted(
      stepCount: 1, planKeepAlive: true, forceClose: false, serverStopping: false, inputBuffered: true)
    #expect(m.connectionField == .none)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .readNextRequest))
  }

  @Test func endOfInputMidRequestCloses() {
    var m = Machine()
    expectAction(m.headReceived(Self.head(.post, [("Content-Length", "100")])), .readContent)
    m.endOfInputReceived()
    expectAction(m.peerClosed(inputBuffered: true), .stopReading)
    // No complete request is left: close (nothing to flush).
    expectAction(m.inputExhausted(inputIdle: false, outputPending: false), .close(served: true))
  }

  @Test func closingWithUnreadRequestBytesLingers() {
    // A rejection (say a 413) while the client still sends: the write side is shut down and input drained
    // for a bounded time, so the client reads the answer instead of a reset.
    var m = Machine()
    _ = m.headReceived(Self.head(.post, [("Content-Length", "1000000")]))
    m.planStarted(
      stepCount: 1, planKeepAlive: false, forceClose: true, serverStopping: false, inputBuffered: true)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .beginClosing))
    expectAction(m.beginClosing(outputPending: true, inputIdle: false), .flushThenClose)
    expectAction(
      m.outputDrained(inputIdle: false), .lingeringClose(milliseconds: Machine.lingeringCloseMilliseconds))
    #expect(m.isDraining)
    #expect(m.wantsInput)
    // The peer closes: done; or the linger time ends first.
    var timedOut = m
    expectAction(m.peerClosed(inputBuffered: false), .close(served: true))
    expectAction(timedOut.timerFired(.lingeringClose), .close(served: true))
  }

  @Test func peerClosingWhileTheLastResponseFlushesFlushesFirst() {
    var m = Self.executing(Self.head(.get, [("Connection", "close")]))
    _ = Self.runToEnd(&m)
    expectAction(m.beginClosing(outputPending: true, inputIdle: true), .flushThenClose)
    expectAction(m.peerClosed(inputBuffered: false), .flushThenClose)
    expectAction(m.outputDrained(inputIdle: true), .close(served: true))
  }

  // MARK: Holds, pauses, resets

  @Test func aHoldEndsWhenItsTimerFires() {
    var m = Self.executing(steps: 1)
    expectAction(m.nextStep(), .runStep(0))
    m.stepWaits(for: .hold)
    expectAction(m.nextStep(), .none)
    expectAction(m.timerFired(.hold), .completePlan(served: true, then: .closeNow))
  }

  @Test func aPeerLeavingDuringAHoldOrPauseStopsThePlanUnserved() {
    for wait in [Machine.Wait.hold, .pause, .work] {
      var m = Self.executing(steps: 2)
      expectAction(m.nextStep(), .runStep(0))
      m.stepWaits(for: wait)
      expectAction(m.peerClosed(inputBuffered: false), .close(served: false))
    }
  }

  @Test func aResetStepCompletesThePlanAndResets() {
    var m = Self.executing()
    expectAction(m.nextStep(), .runStep(0))
    expectAction(m.resetStep(), .completePlan(served: true, then: .reset))
  }

  @Test func anAwaitedPlanRunsInPlaceOfItsStepAndCanRefuseKeepAlive() {
    var m = Self.executing(steps: 2)
    expectAction(m.nextStep(), .runStep(0))
    m.stepWaits(for: .work)
    #expect(m.isAwaitingWork)
    #expect(m.stepIndex == 1)
    // Two arrived steps, then the one left: three from the first.
    let arrived = m.awaitedPlanArrived(stepCount: 3, planKeepAlive: false)
    #expect(arrived)
    // Only once.
    let again = m.awaitedPlanArrived(stepCount: 3, planKeepAlive: true)
    #expect(!again)
    expectAction(m.nextStep(), .runStep(0))
    expectAction(m.nextStep(), .runStep(1))
    expectAction(m.nextStep(), .runStep(2))
    expectAction(m.nextStep(), .completePlan(served: true, then: .beginClosing))
  }

  // MARK: Timeouts

  static func check(
    _ now: UInt64, lastActivity: UInt64 = 0, inputIdle: Bool = true, readingHead: Bool = true,
    outputPending: Bool = false, writeStalledSince: UInt64? = nil, handshaking: Bool = false
  ) -> Machine.TimeoutCheck {
    Machine.TimeoutCheck(
      now: now, idleNanos: 100, headNanos: 50, lastActivity: lastActivity, acceptedAt: 0,
      writeStalledSince: writeStalledSince, outputPending: outputPending, handshaking: handshaking,
      inputIdle: inputIdle, readingHead: readingHead)
  }

  @Test func anIdleKeepAliveConnectionClosesAfterTheIdleTimeout() {
    let m = Machine()
    expectAction(m.timeoutsChecked(Self.check(100)), .none)
    expectAction(m.timeoutsChecked(Self.check(101)), .close(served: false))
  }

  @Test func aHeadNotReceivedInTimeIsAnswered408() {
    var m = Machine()
    m.headBytesArrived(at: 10)
    // Later bytes do not restart the head timeout.
    m.headBytesArrived(at: 40)
    expectAction(m.timeoutsChecked(Self.check(60, lastActivity: 55, inputIdle: false)), .none)
    expectAction(m.timeoutsChecked(Self.check(61, lastActivity: 55, inputIdle: false)), .timeOutRequest)
  }

  @Test func emptyLinesBeforeARequestDoNotStartTheHeadTimeout() {
    // RFC 9112 §2.2: empty lines before a request-line are ignored.
    var m = Machine()
    m.headBytesArrived(at: 10)
    expectAction(m.inputExhausted(inputIdle: true, outputPending: false), .none)
    expectAction(m.timeoutsChecked(Self.check(70, lastActivity: 10)), .none)
  }

  @Test func contentStalledForTheIdleTimeoutIsAnswered408() {
    var m = Machine()
    _ = m.headReceived(Self.head(.post, [("Content-Length", "10")]))
    expectAction(
      m.timeoutsChecked(Self.check(150, lastActivity: 60, inputIdle: false, readingHead: false)), .none)
    expectAction(
      m.timeoutsChecked(Self.check(161, lastActivity: 60, inputIdle: false, readingHead: false)),
      .timeOutRequest)
  }

  @Test func aStalledWriteClosesInAnyPhase() {
    let m = Self.executing()
    expectAction(
      m.timeoutsChecked(Self.check(200, outputPending: true, writeStalledSince: 99)), .close(served: false))
    expectAction(m.timeoutsChecked(Self.check(200, outputPending: true, writeStalledSince: 100)), .none)
  }

  @Test func aTLSHandshakeHasTheHeadTimeoutFromAccept() {
    let m = Machine()
    expectAction(m.timeoutsChecked(Self.check(50, lastActivity: 50, handshaking: true)), .none)
    expectAction(
      m.timeoutsChecked(Self.check(51, lastActivity: 50, handshaking: true)), .close(served: false))
  }

  @Test func noTimeoutWhileAPlanExecutes() {
    let m = Self.executing()
    expectAction(m.timeoutsChecked(Self.check(10_000)), .none)
  }

  // MARK: Streams

  @Test func aStreamHoldsThePlanUntilItEndsThenKeepAliveGoesOn() {
    var m = Self.executing()
    expectAction(m.nextStep(), .runStep(0))
    expectAction(
      m.streamStarting(framing: .chunked, sendsContent: true, heartbeat: false, serverStopping: false),
      .stream(chunked: true))
    expectAction(m.nextStep(), .none)
    expectAction(m.outputDrained(inputIdle: true), .pumpStream)
    expectAction(m.streamEnded(failed: false), .continuePlan)
    expectAction(m.nextStep(), .completePlan(served: true, then: .readNextRequest))
  }

  @Test func aFailedStreamClosesUnserved() {
    var m = Self.executing()
    _ = m.nextStep()
    _ = m.streamStarting(framing: .length(10), sendsContent: true, heartbeat: false, serverStopping: false)
    expectAction(m.streamEnded(failed: true), .completePlan(served: false, then: .beginClosing))
  }

  @Test func chunkedContentToAnHTTP10ClientEndsWithTheConnection() {
    // RFC 9112 §6.3: without a length or chunked coding, the content ends when the connection closes.
    var m = Self.executing(Self.head(.get, version: .http1_0, [("Connection", "keep-alive")]))
    _ = m.nextStep()
    expectAction(
      m.streamStarting(framing: .chunked, sendsContent: true, heartbeat: false, serverStopping: false),
      .stream(chunked: false))
    #expect(m.connectionField == .close)
  }

  @Test func aStreamWithoutContentWritesItsHeadAlone() {
    var m = Self.executing(Self.head(.head))
    _ = m.nextStep()
    expectAction(
      m.streamStarting(framing: .chunked, sendsContent: false, heartbeat: false, serverStopping: false),
      .headOnly)
    expectAction(m.nextStep(), .completePlan(served: true, then: .readNextRequest))
  }

  @Test func anEventStreamEndsOnlyWithTheConnection() {
    var m = Self.executing()
    _ = m.nextStep()
    expectAction(
      m.streamStarting(framing: .untilClose, sendsContent: true, heartbeat: true, serverStopping: false),
      .stream(chunked: false))
    #expect(m.connectionField == .close)
    // A graceful shutdown closes it at once instead of waiting for an end that never comes.
    var stopping = m
    expectAction(stopping.serverStopping(idle: false), .close(served: true))
    // The peer leaving stops it (its heartbeat timer is pending).
    expectAction(m.peerClosed(inputBuffered: false), .close(served: false))
  }

  @Test func peerClosingDuringARelayedStreamLetsItFinishThenCloses() {
    var m = Self.executing()
    _ = m.nextStep()
    _ = m.streamStarting(framing: .length(100), sendsContent: true, heartbeat: false, serverStopping: false)
    expectAction(m.peerClosed(inputBuffered: false), .stopReading)
    #expect(!m.wantsInput)
    expectAction(m.streamEnded(failed: false), .continuePlan)
    expectAction(m.nextStep(), .completePlan(served: true, then: .beginClosing))
  }

  @Test func aStoppingServerTellsARelayedStreamToEndAndWithdrawsKeepAlive() {
    var m = Self.executing()
    _ = m.nextStep()
    _ = m.streamStarting(framing: .length(100), sendsContent: true, heartbeat: false, serverStopping: false)
    expectAction(m.serverStopping(idle: false), .stopStream)
    #expect(m.connectionField == .close)
  }

  // MARK: Upgrade (RFC 9110 §7.8)

  @Test func afterAnUpgradeTheSessionOwnsTheConnectionUntilItEnds() {
    var m = Self.executing()
    expectAction(m.nextStep(), .runStep(0))
    expectAction(m.upgraded(), .completePlan(served: true, then: .handOver))
    #expect(m.isUpgraded)
    expectAction(m.nextStep(), .none)
    expectAction(m.outputDrained(inputIdle: true), .pumpStream)
    // The session's content ends: the connection closes (no keep-alive after an upgrade).
    expectAction(m.streamEnded(failed: false), .continuePlan)
    expectAction(m.nextStep(), .completePlan(served: true, then: .beginClosing))
  }

  @Test func thePeerLeavingAnUpgradedConnectionClosesIt() {
    var m = Self.executing()
    _ = m.nextStep()
    _ = m.upgraded()
    expectAction(m.peerClosed(inputBuffered: false), .close(served: true))
  }

  @Test func anUpgradedSessionReadsWhateverBackPressureHeld() {
    var m = Self.executing()
    expectAction(
      m.applyBackPressure(bufferedInput: Machine.readPauseBytes + 1, unsentOutput: 0), .stopReading)
    _ = m.nextStep()
    _ = m.upgraded()
    expectAction(m.sessionAttached(), .resumeReading)
    #expect(m.wantsInput)
  }

  // MARK: Back-pressure and shutdown

  @Test func readingStopsOverTheBoundAndResumesUnderIt() {
    var m = Machine()
    expectAction(m.applyBackPressure(bufferedInput: 0, unsentOutput: Machine.readPauseBytes), .none)
    expectAction(
      m.applyBackPressure(bufferedInput: 0, unsentOutput: Machine.readPauseBytes + 1), .stopReading)
    #expect(!m.wantsInput)
    expectAction(m.resumeReadingIfRoom(bufferedInput: 0, unsentOutput: Machine.readPauseBytes + 1), .none)
    expectAction(m.resumeReadingIfRoom(bufferedInput: 0, unsentOutput: 0), .resumeReading)
    #expect(m.wantsInput)
  }

  @Test func gracefulShutdownClosesAnIdleConnectionAndLetsAPlanFinish() {
    var idle = Machine()
    expectAction(idle.serverStopping(idle: true), .close(served: false))
    var reading = Machine()
    _ = reading.headReceived(Self.head(.post, [("Content-Length", "5")]))
    expectAction(reading.serverStopping(idle: true), .none)
    var m = Self.executing()
    expectAction(m.serverStopping(idle: false), .none)
    expectAction(Self.runToEnd(&m), .completePlan(served: true, then: .beginClosing))
  }

  @Test func aClosedMachineDoesNothingMore() {
    var m = Self.executing()
    m.closed()
    expectAction(m.nextStep(), .none)
    expectAction(m.peerClosed(inputBuffered: true), .none)
    expectAction(m.outputDrained(inputIdle: true), .none)
    expectAction(m.timerFired(.hold), .none)
  }
}
