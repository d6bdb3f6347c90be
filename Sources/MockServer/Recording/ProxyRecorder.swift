import HTTPCore
import Synchronization

/// One proxied exchange: the request as the client sent it and the upstream's response (hop-by-hop
/// fields removed, content as received).
package struct RecordedExchange: Sendable {
  /// The journal entry of the request (snapshots keep only exchanges still in the journal).
  package var journalID: String
  /// The request received.
  package var request: HTTPRequest
  /// The upstream's response.
  package var response: HTTPResponse
  /// The upstream's base URL.
  package var upstream: String
  /// The content's whole length when `response.body` holds only its first bytes (the content was over
  /// the capture limit while it was relayed), or nil when the body is whole.
  package var truncatedFrom: Int? = nil

  /// Creates an exchange.
  package init(
    journalID: String, request: HTTPRequest, response: HTTPResponse, upstream: String,
    truncatedFrom: Int? = nil
  ) {
    self.journalID = journalID
    self.request = request
    self.response = response
    self.upstream = upstream
    self.truncatedFrom = truncatedFrom
  }

  /// Bytes held, for the bounds.
  var approximateBytes: Int {
    512 + request.body.count + response.body.count + request.head.target.utf8.count
  }
}

/// The recording state of WireMock's recording API: `NeverStarted`, `Recording` (with its spec), `Stopped`;
/// the exchanges captured while recording; and the most recent proxied exchanges whatever the state, for
/// `POST /__admin/recordings/snapshot`. Both lists are bounded (count and bytes); exchanges past the bound
/// are counted as dropped.
package final class ProxyRecorder: Sendable {
  /// WireMock's status names.
  package enum Status: String, Sendable {
    case neverStarted = "NeverStarted"
    case recording = "Recording"
    case stopped = "Stopped"
  }

  private struct State {
    var status = Status.neverStarted
    var spec = RecordingSpec()
    var captured: [RecordedExchange] = []
    var capturedBytes = 0
    var dropped = 0
    var recent = BoundedRing<RecordedExchange>(capacity: ProxyRecorder.maxRecent)
    var recentBytes = 0
  }

  /// Most exchanges captured in one recording session, and their bytes.
  package static let maxCaptured = 100_000
  package static let maxCapturedBytes = 1 << 30
  /// Most recent exchanges kept for snapshots, and their bytes.
  package static let maxRecent = 1_000
  package static let maxRecentBytes = 64 << 20

  private let state: Mutex<State>
  /// True while a session with a `targetBaseUrl` runs: read on every request, so without the lock.
  private let hasTarget = Atomic(false)
  /// The status is `Recording`: read on every exchange (the capture limit), so without the lock; written
  /// with the status, under it.
  private let isRecording = Atomic(false)
  private let listener = Mutex<CaptureProgress?>(nil)

  /// Boxed for the same reason as ``Sink``.
  private final class CaptureProgress: Sendable {
    let handler: @Sendable (Int, RecordedExchange) -> Void
    init(_ handler: @escaping @Sendable (Int, RecordedExchange) -> Void) { self.handler = handler }
  }
  /// With the shared state store: where every proxied exchange goes instead of this recorder's lists
  /// (``SharedRecordings/send(_:)``, on the exchange's thread); set once, before serving.
  /// In a box: a closure kept directly in the `Mutex` was wrapped in one more pair of reabstraction thunks
  /// at every `withLock` (its `inout` write-back), so each exchange called through a longer chain.
  private let sink = Mutex<Sink?>(nil)

  private final class Sink: Sendable {
    let handler: @Sendable (RecordedExchange, _ recording: Bool) -> Void
    init(_ handler: @escaping @Sendable (RecordedExchange, _ recording: Bool) -> Void) {
      self.handler = handler
    }
  }
  /// Whether ``sink`` is set: read on every exchange, so without the lock.
  private let sinks = Atomic(false)

  /// Creates a recorder, recording from the start when `recording` (`--record-mappings`).
  init(recording: Bool) {
    var s = State()
    if recording { s.status = .recording }
    state = Mutex(s)
    isRecording.store(recording, ordering: .relaxed)
  }

  /// The current status.
  package var status: Status { state.withLock { $0.status } }

  /// Content bytes kept while recording when nobody records (for snapshots only).
  package static let snapshotCaptureBytes = 1 << 20

  /// Most content bytes of one relayed response kept for recording: `bufferBytes` (the proxy's
  /// `maxBodyBytes`) while a session records, at most ``snapshotCaptureBytes`` otherwise. A longer content
  /// is relayed whole but recorded cut (``RecordedExchange/truncatedFrom``).
  package func captureLimit(bufferBytes: Int) -> Int {
    let recording = isRecording.load(ordering: .relaxed)
    return recording ? max(0, bufferBytes) : min(max(0, bufferBytes), Self.snapshotCaptureBytes)
  }

  /// The upstream a recording session started with `targetBaseUrl` proxies every request to, or nil.
  package var recordingTarget: String? {
    guard hasTarget.load(ordering: .relaxed) else { return nil }
    return state.withLock { $0.status == .recording ? $0.spec.targetBaseURL : nil }
  }

  /// Called (on the exchange's thread) with the count so far and each exchange captured while recording:
  /// the progress line of `mockserver record`.
  package func onCapture(_ handler: (@Sendable (Int, RecordedExchange) -> Void)?) {
    let box = handler.map(CaptureProgress.init)
    listener.withLock { $0 = box }
  }

  /// Sends every proxied exchange to `handler` instead of keeping it here (the shared state store holds
  /// the recording: ``SharedRecordings``), with whether this recorder's status is `Recording`; the status
  /// is then what ``mirror(status:spec:)`` sets.
  package func sendExchanges(to handler: @escaping @Sendable (RecordedExchange, _ recording: Bool) -> Void) {
    let box = Sink(handler)
    sink.withLock { $0 = box }
    sinks.store(true, ordering: .releasing)
  }

  /// Takes the status (and the spec while recording) the shared state store holds, keeping no exchanges:
  /// they are in the store.
  package func mirror(status: Status, spec: RecordingSpec?) {
    state.withLock { s in
      s.status = status
      s.spec = status == .recording ? spec ?? RecordingSpec() : RecordingSpec()
      s.captured = []
      s.capturedBytes = 0
      s.dropped = 0
      isRecording.store(status == .recording, ordering: .relaxed)
      hasTarget.store(status == .recording && s.spec.targetBaseURL != nil, ordering: .relaxed)
    }
  }

  /// Notes one proxied exchange.
  func observe(_ exchange: RecordedExchange) {
    if sinks.load(ordering: .acquiring), let box = sink.withLock({ $0 }) {
      box.handler(exchange, isRecording.load(ordering: .relaxed))
      return
    }
    let size = exchange.approximateBytes
    // The exchanges pushed out of the recent ring are released after the lock: freeing a request and a
    // response under it held up every other exchange thread (at 32 concurrent exchanges the recorder's
    // lock was the proxy's main cost).
    var evicted: [RecordedExchange] = []
    let captured: Int? = state.withLock { s in
      if size <= Self.maxRecentBytes {
        if let old = s.recent.append(exchange) {
          s.recentBytes -= old.approximateBytes
          evicted.append(old)
        }
        s.recentBytes += size
        while s.recentBytes > Self.maxRecentBytes, let old = s.recent.removeFirst() {
          s.recentBytes -= old.approximateBytes
          evicted.append(old)
        }
      }
      guard s.status == .recording else { return nil }
      guard s.captured.count < Self.maxCaptured, s.capturedBytes + size <= Self.maxCapturedBytes else {
        s.dropped += 1
        return nil
      }
      s.captured.append(exchange)
      s.capturedBytes += size
      return s.captured.count
    }
    if let captured, let box = listener.withLock({ $0 }) { box.handler(captured, exchange) }
  }

  /// Starts a session; false when one is already running.
  package func start(_ spec: RecordingSpec) -> Bool {
    state.withLock { s in
      guard s.status != .recording else { return false }
      s.status = .recording
      isRecording.store(true, ordering: .relaxed)
      s.spec = spec
      s.captured = []
      s.capturedBytes = 0
      s.dropped = 0
      hasTarget.store(spec.targetBaseURL != nil, ordering: .relaxed)
      return true
    }
  }

  /// Ends the session: its spec, the exchanges captured and how many were dropped over the bounds; nil
  /// when none was running.
  package func stop() -> (spec: RecordingSpec, exchanges: [RecordedExchange], dropped: Int)? {
    state.withLock { s in
      guard s.status == .recording else { return nil }
      s.status = .stopped
      isRecording.store(false, ordering: .relaxed)
      hasTarget.store(false, ordering: .relaxed)
      let result = (s.spec, s.captured, s.dropped)
      s.captured = []
      s.capturedBytes = 0
      return result
    }
  }

  /// The exchanges captured so far in the running session (for `mockserver record` on exit).
  package var captured: [RecordedExchange] { state.withLock { $0.captured } }

  /// The recent exchanges, oldest first.
  package var recent: [RecordedExchange] { state.withLock { $0.recent.elements } }
}
