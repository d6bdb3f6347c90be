import Dispatch
import Foundation
import HTTPCore
import Mappings
import MockJSON
import Synchronization
import Templating

/// One WebSocket connection after its 101 (docs/streaming.md, "WebSocket"): RFC 6455's endpoint
/// (``WebSocketEndpoint``), the stub's messages on open, its message mappings and the global ones, pings,
/// and the closing handshake's timeout. The connection pumps its output as a ``ContentSource`` and hands
/// it every byte received (``UpgradedSession``); timers run on a dispatch queue (no thread per
/// connection). Its mutable state is one `Mutex`.
final class WebSocketSession: UpgradedSession {
  /// How long a close we sent waits for the peer's before TCP closes (RFC 6455 §7.1.1 leaves it to us).
  static let closeTimeoutMilliseconds = 5_000
  /// The most delayed steps (messages on open, actions after their `x-delay`) a connection may have
  /// waiting at once: a client sending messages whose mapping waits 24 h must not pile up timers without
  /// bound. Past it the connection is closed with 1013 (Try Again Later) and a reason saying why.
  static let maxPendingSteps = 1_024
  /// Output waiting for a peer that does not read, beyond one message of the largest size: 16 MiB. Past
  /// it the connection ends with a close 1008 (the waiting frames are dropped), so a client that never
  /// reads cannot make the server hold what it is sent without bound.
  static let outputBacklogBytes = 16 << 20
  /// The output bound: ``outputBacklogBytes`` plus the largest message and its frame header.
  private var outputLimit: Int { WebSocketSession.outputBacklogBytes + hub.maxMessageBytes + 14 }

  /// The channel's id (a UUID), as `/__admin/channels` shows it.
  let id: String
  /// The upgrade request, the model of every template and what channel patterns match.
  let upgrade: HTTPRequest
  let context: RequestContext
  let definition: WebSocketDefinition
  let stubID: String?
  let pathParameters: [(String, String)]
  private let hub: WebSocketHub
  private let templating: TemplatingConfiguration

  private struct State {
    var endpoint: WebSocketEndpoint
    var wake: (@Sendable () -> Void)?
    /// `take` found nothing: the next output wakes the connection.
    var wakeWanted = false
    /// The content ends now (the close timeout passed, the server stops).
    var ended = false
    var cancelled = false
    var started = false
    /// Delayed steps scheduled and not yet run.
    var pendingSteps = 0
    /// The close timeout is scheduled (once per connection).
    var closeTimerArmed = false

    /// A peer that does not read: when more than `limit` bytes of frames wait to be written, they are
    /// dropped (whole frames: the stream stays valid) and a close 1008 saying why is all that is left.
    /// True when it happened now.
    mutating func shedOutput(over limit: Int) -> Bool {
      guard endpoint.pendingOutputBytes > limit, !ended else { return false }
      _ = endpoint.takeOutput()
      endpoint.close(code: 1008, reason: "over \(limit >> 20) MiB of output waiting: the peer does not read")
      ended = true
      return true
    }
  }

  private let state: Mutex<State>
  /// The upgrade request's template model, once a template needed it.
  private let model = Mutex<TemplateValue?>(nil)

  init(
    id: String, upgrade: HTTPRequest, context: RequestContext, definition: WebSocketDefinition,
    stubID: String?, pathParameters: [(String, String)], hub: WebSocketHub,
    templating: TemplatingConfiguration
  ) {
    self.id = id
    self.upgrade = upgrade
    self.context = context
    self.definition = definition
    self.stubID = stubID
    self.pathParameters = pathParameters
    self.hub = hub
    self.templating = templating
    state = Mutex(
      State(endpoint: WebSocketEndpoint(role: .server, maxMessageBytes: hub.maxMessageBytes)))
  }

  /// True until the connection is gone or the closing handshake finished.
  var isOpen: Bool { state.withLock { !$0.cancelled && !$0.ended && $0.endpoint.state == .open } }

  // MARK: ContentSource

  func attach(wake: @escaping @Sendable () -> Void) -> Bool {
    let first = state.withLock { s -> Bool in
      s.wake = wake
      defer { s.started = true }
      return !s.started
    }
    if first {
      hub.register(self)
      runOpening()
      schedulePing()
    }
    return state.withLock { $0.endpoint.hasOutput || $0.ended }
  }

  func take(maxBytes: Int) -> (bytes: [UInt8], end: ContentEnd?) {
    state.withLock { s in
      let bytes = s.endpoint.takeOutput()
      let end: ContentEnd? = s.ended || s.endpoint.state == .closed ? .finished : nil
      if bytes.isEmpty, end == nil { s.wakeWanted = true }
      return (bytes, end)
    }
  }

  func cancel() {
    let first = state.withLock { s -> Bool in
      defer { s.cancelled = true }
      return !s.cancelled
    }
    if first { hub.unregister(self) }
  }

  var outputBound: Int { 1 << 20 }
  var heartbeat: ContentHeartbeat? { nil }

  // MARK: UpgradedSession

  func receive(_ bytes: UnsafeRawBufferPointer) {
    let limit = outputLimit
    let (events, shed) = state.withLock { s in
      let events = s.endpoint.receive(bytes)
      return (events, s.shedOutput(over: limit))
    }
    // A channel whose output was shed is no longer one: it leaves the list at once.
    if shed { hub.unregister(self) }
    for event in events {
      switch event {
      case .message(let message): handle(message)
      case .ping, .pong: continue
      case .closed: hub.unregister(self)
      }
    }
  }

  func serverStopping() {
    state.withLock { s in
      s.endpoint.close(code: 1001, reason: "server stopping")
      s.ended = true
    }
  }

  // MARK: Sending

  /// Queues a message and wakes the connection (any thread).
  func send(_ message: WebSocketMessage) {
    guard state.withLock({ $0.endpoint.state == .open && !$0.cancelled }) else { return }
    hub.journal.record(channel: self, eventType: "sent", message: message, mappingID: nil)
    change { $0.endpoint.send(message) }
  }

  /// Starts the closing handshake; TCP closes when the peer answers or after the close timeout.
  func close(code: UInt16, reason: String) {
    var arm = false
    change { s in
      s.endpoint.close(code: code, reason: reason)
      arm = !s.closeTimerArmed
      s.closeTimerArmed = true
    }
    guard arm else { return }
    DispatchQueue.global().asyncAfter(
      deadline: .now() + .milliseconds(WebSocketSession.closeTimeoutMilliseconds)
    ) {
      [weak self] in
      self?.change { $0.ended = true }
    }
  }

  /// Applies `mutation` and wakes the connection when it waits for output.
  private func change(_ mutation: (inout State) -> Void) {
    let limit = outputLimit
    var shed = false
    let wake = state.withLock { s -> (@Sendable () -> Void)? in
      mutation(&s)
      shed = s.shedOutput(over: limit)
      guard s.wakeWanted, s.endpoint.hasOutput || s.ended || s.endpoint.state == .closed else { return nil }
      s.wakeWanted = false
      return s.wake
    }
    if shed { hub.unregister(self) }
    wake?()
  }

  /// Runs `body` after `milliseconds` on a dispatch queue, unless the connection is gone by then. With
  /// ``maxPendingSteps`` already waiting, closes the connection with 1013 instead.
  private func after(_ milliseconds: Int, _ body: @escaping @Sendable (WebSocketSession) -> Void) {
    let admitted = state.withLock { s -> Bool in
      guard s.pendingSteps < WebSocketSession.maxPendingSteps else { return false }
      s.pendingSteps += 1
      return true
    }
    guard admitted else {
      return close(code: 1013, reason: "over \(WebSocketSession.maxPendingSteps) delayed actions waiting")
    }
    DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) { [weak self] in
      guard let self else { return }
      let cancelled = self.state.withLock { s in
        s.pendingSteps -= 1
        return s.cancelled
      }
      guard !cancelled else { return }
      body(self)
    }
  }

  // MARK: Behaviour

  private func runOpening() {
    var steps: [(delay: Int, run: @Sendable (WebSocketSession) -> Void)] = definition.messages.map { m in
      (
        m.delayMilliseconds,
        { session in session.send(session.render(m.body, message: nil, parameters: nil)) }
      )
    }
    if definition.closeConnection {
      let status = definition.closeStatus
      steps.append((0, { session in session.close(code: status.code, reason: status.reason) }))
    }
    runSteps(steps[...])
  }

  /// Runs steps in order, each after its delay (counted from the previous one).
  private func runSteps(_ steps: ArraySlice<(delay: Int, run: @Sendable (WebSocketSession) -> Void)>) {
    guard let first = steps.first else { return }
    let rest = Array(steps.dropFirst())
    let go: @Sendable (WebSocketSession) -> Void = { session in
      first.run(session)
      session.runSteps(rest[...])
    }
    if first.delay == 0 { go(self) } else { after(first.delay, go) }
  }

  private func schedulePing() {
    let interval = definition.pingIntervalMilliseconds
    guard interval > 0 else { return }
    after(interval) { session in
      session.change { $0.endpoint.ping() }
      session.schedulePing()
    }
  }

  /// A received message: journaled, then the best mapping (the stub's and the global ones) runs.
  private func handle(_ message: WebSocketMessage) {
    // The stub's own mappings come last: of equal priorities they win over the global ones.
    let mappings = hub.globalMappings() + definition.messageMappings
    let best = WebSocketDefinition.bestMapping(
      for: message, in: mappings, upgrade: upgrade, connection: context.connection)
    hub.journal.record(channel: self, eventType: "received", message: message, mappingID: best?.id)
    guard let best else { return }
    let text: String =
      switch message {
      case .text(let t): t
      case .binary(let b): String(decoding: b, as: UTF8.self)
      }
    let hub = self.hub
    let steps: [(delay: Int, run: @Sendable (WebSocketSession) -> Void)] = best.actions.map { action in
      switch action {
      case .send(let body, let target, let parameters, let delay):
        return (
          delay,
          { session in
            let rendered = session.render(body, message: text, parameters: parameters)
            switch target {
            case .originating: session.send(rendered)
            case .requestInitiated(let pattern):
              for channel in hub.channels(matching: pattern) { channel.send(rendered) }
            }
          }
        )
      case .close(let status, let delay):
        return (delay, { session in session.close(code: status.code, reason: status.reason) })
      }
    }
    runSteps(steps[...])
  }

  /// The message to send: text rendered over `request` (the upgrade), `message.body` and `parameters`.
  func render(_ body: WebSocketDefinition.Outgoing, message: String?, parameters: JSONValue?)
    -> WebSocketMessage
  {
    WebSocketSession.render(
      body, model: { requestModel() }, message: message, parameters: parameters, templating: templating)
  }

  /// The template model of the upgrade request, built on first use and kept: it is the same for every
  /// message the connection sends (rebuilding it was half of an echo's instructions).
  private func requestModel() -> TemplateValue {
    if let model = model.withLock({ $0 }) { return model }
    let built = WebSocketSession.model(
      of: upgrade, context: context, requestID: id, pathParameters: pathParameters)
    model.withLock { $0 = built }
    return built
  }

  /// The `request` model of `request` as a stub's templates see it.
  static func model(
    of request: HTTPRequest, context: RequestContext, requestID: String, pathParameters: [(String, String)]
  ) -> TemplateValue {
    TemplateRequest.model(
      request, scheme: context.isTLS ? "https" : "http", port: context.localPort,
      clientIP: ResponseTemplating.clientIP(context.clientAddress), id: requestID,
      pathParameters: pathParameters)
  }

  /// A message to send: binary as it is; text rendered, when it is a template, over the model `request`
  /// (`model`, asked for only then), `message.body` (when `message` is given) and `parameters`. A
  /// template over its budget renders as `[ERROR: template: …]`, as a stub's body does.
  static func render(
    _ body: WebSocketDefinition.Outgoing, model: () -> TemplateValue, message: String?,
    parameters: JSONValue?,
    templating: TemplatingConfiguration
  ) -> WebSocketMessage {
    switch body {
    case .binary(let bytes): return .binary(bytes)
    case .text(let text):
      guard let template = text.template else { return .text(text.text) }
      var additional = TemplateMap()
      if let message { additional.set("message", .map(TemplateMap([("body", .string(message))]))) }
      let rendered = template.render(
        TemplateContext(
          request: model(), parameters: parameters.map(TemplateValue.json) ?? .map(TemplateMap()),
          environment: templating.environment, seed: UInt64.random(in: .min ... .max),
          additionalModel: additional, state: templating.stateLookup))
      if let exceeded = rendered.budgetExceeded { return .text("[ERROR: template: \(exceeded)]") }
      return .text(rendered.text)
    }
  }
}
