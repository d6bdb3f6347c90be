import Foundation
import HTTPCore
import Mappings
import MockJSON

/// WireMock's recording API: `POST /__admin/recordings/start`, `POST /__admin/recordings/stop`,
/// `GET /__admin/recordings/status`, `POST /__admin/recordings/snapshot`. See docs/admin-api.md and
/// docs/recording.md.
extension AdminAPI {
  func recordings(_ call: Call, _ rest: [String]) -> ResponsePlan {
    guard let forwarder, rest.count == 1 else { return notFound(call) }
    if let sharedRecordings {
      return recordings(call, rest[0], recorder: forwarder.recorder, shared: sharedRecordings)
    }
    let recorder = forwarder.recorder
    switch (call.method, rest[0]) {
    case ("GET", "status"):
      return AdminAPI.json(.object(JSONObject(pairs: [("status", .string(recorder.status.rawValue))])))
    case ("POST", "start"):
      let o: JSONObject
      switch AdminAPI.objectBody(call, describing: "a record spec {\"targetBaseUrl\": …}") {
      case .failure(let f): return f.plan
      case .success(let v): o = v
      }
      switch RecordingSpec.parse(o, requireTarget: true) {
      case .failure(let p):
        return AdminAPI.error(.badRequest, title: "Invalid record spec", detail: p.detail, pointer: p.pointer)
      case .success(let spec):
        guard recorder.start(spec) else { return AdminAPI.alreadyRecording }
        return AdminAPI.empty
      }
    case ("POST", "stop"):
      guard let (spec, exchanges, dropped) = recorder.stop() else { return AdminAPI.notRecording }
      logDropped(dropped)
      return recorded(exchanges, spec: spec)
    case ("POST", "snapshot"):
      let spec: RecordingSpec
      switch AdminAPI.snapshotSpec(call) {
      case .failure(let f): return f.plan
      case .success(let s): spec = s
      }
      // The exchanges whose requests are still in the journal (a reset forgets them too).
      let exchanges = recorder.recent.filter { journal.entry(id: $0.journalID) != nil }
      return recorded(exchanges, spec: spec)
    default:
      return notFound(call)
    }
  }

  /// The recording API with the shared state store (``SharedRecordings``; runs off the event loop, as
  /// ``talksToStore(_:)`` says): the status is the store's, a start or stop changes it for every replica,
  /// a stop or snapshot sees every replica's exchanges. The store down: 503, nothing changed.
  private func recordings(
    _ call: Call, _ action: String, recorder: ProxyRecorder, shared: SharedRecordings
  ) -> ResponsePlan {
    do throws(RedisFailure) {
      switch (call.method, action) {
      case ("GET", "status"):
        // This replica takes what it read (its subscriber may not have heard of the change yet).
        let now = try shared.refresh(recorder)
        return AdminAPI.json(.object(JSONObject(pairs: [("status", .string(now.rawValue))])))
      case ("POST", "start"):
        let o: JSONObject
        switch AdminAPI.objectBody(call, describing: "a record spec {\"targetBaseUrl\": …}") {
        case .failure(let f): return f.plan
        case .success(let v): o = v
        }
        let spec: RecordingSpec
        switch RecordingSpec.parse(o, requireTarget: true) {
        case .failure(let p):
          return AdminAPI.error(
            .badRequest, title: "Invalid record spec", detail: p.detail, pointer: p.pointer)
        case .success(let s): spec = s
        }
        guard try shared.start(o) else { return AdminAPI.alreadyRecording }
        recorder.mirror(status: .recording, spec: spec)
        return AdminAPI.empty
      case ("POST", "stop"):
        guard let stopped = try shared.stop() else { return AdminAPI.notRecording }
        recorder.mirror(status: .stopped, spec: nil)
        logDropped(stopped.dropped)
        if stopped.unreadable > 0 {
          logger.line(
            "mockserver: \(stopped.unreadable) recorded exchange(s) in the shared state store did not decode: left out"
          )
        }
        guard case .success(let spec) = RecordingSpec.parse(stopped.spec, requireTarget: true) else {
          return AdminAPI.error(
            .internalServerError, title: "Invalid record spec",
            detail: "the shared state store held a record spec this server does not read")
        }
        return recorded(stopped.exchanges, spec: spec)
      case ("POST", "snapshot"):
        let spec: RecordingSpec
        switch AdminAPI.snapshotSpec(call) {
        case .failure(let f): return f.plan
        case .success(let s): spec = s
        }
        var exchanges = try shared.recent()
        // The exchanges whose requests are still in the (shared) journal (a reset forgets them too).
        if let sharedJournal {
          let ids = Set(try sharedJournal.read().entries.map(\.id))
          exchanges = exchanges.filter { ids.contains($0.journalID) }
        } else {
          exchanges = exchanges.filter { journal.entry(id: $0.journalID) != nil }
        }
        return recorded(exchanges, spec: spec)
      default:
        return notFound(call)
      }
    } catch {
      return AdminAPI.sharedStateUnavailable(error, changed: call.method != "GET" && action != "snapshot")
    }
  }

  /// Logs the exchanges a recording did not capture over its bounds.
  private func logDropped(_ dropped: Int) {
    guard dropped > 0 else { return }
    logger.line(
      "mockserver: \(dropped) exchange(s) not recorded: over the recording's bounds (\(ProxyRecorder.maxCaptured) exchanges, \(ProxyRecorder.maxCapturedBytes) bytes)"
    )
  }

  private static var notRecording: ResponsePlan {
    AdminAPI.error(
      .badRequest, title: "Not recording", detail: "no recording is running (POST /__admin/recordings/start)")
  }

  private static var alreadyRecording: ResponsePlan {
    AdminAPI.error(
      HTTPStatus(code: 409), title: "Already recording", detail: "a recording is running: stop it first")
  }

  /// The snapshot's record spec: the body, or the defaults for an empty one.
  private static func snapshotSpec(_ call: Call) -> Result<RecordingSpec, AdminFailure> {
    switch AdminAPI.body(call, allowEmpty: true) {
    case .failure(let f): return .failure(f)
    case .success(let v):
      guard let v else { return .success(RecordingSpec()) }
      guard let o = v.objectValue else {
        return .failure(
          AdminFailure(
            AdminAPI.error(
              .badRequest, title: "Invalid record spec",
              detail: "$: expected an object, found \(v.kindDescription)",
              pointer: "/")))
      }
      switch RecordingSpec.parse(o, requireTarget: false) {
      case .failure(let p):
        return .failure(
          AdminFailure(
            AdminAPI.error(.badRequest, title: "Invalid record spec", detail: p.detail, pointer: p.pointer)))
      case .success(let s): return .success(s)
      }
    }
  }

  /// Stubs from `exchanges` as `spec` says, as `{"mappings": [...]}` (or `{"ids": [...]}`). With
  /// `persist` (the default) they are added to the server and written to the fixtures folder's
  /// `mappings/`, one file each, as persistent stubs are.
  private func recorded(_ exchanges: [RecordedExchange], spec: RecordingSpec) -> ResponsePlan {
    let context = parsingContext()
    var stubs = RecordedStubBuilder.stubs(from: exchanges, spec: spec, makeID: context.makeID).stubs
    if spec.extractsBodies {
      if let directory = configuration.fixturesDirectory {
        let files = URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent(
          "__files", isDirectory: true)
        for i in stubs.indices {
          do {
            let (json, file) = try RecordingWriter.extractingBody(
              stubs[i], into: files, textSizeThreshold: spec.textSizeThreshold ?? 0,
              binarySizeThreshold: spec.binarySizeThreshold ?? 0)
            stubs[i].json = json
            if file != nil { stubs[i].body = nil }
          } catch {
            return AdminAPI.error(
              .internalServerError, title: "Write failed",
              detail: "__files/: \(error.localizedDescription) (extractBodyCriteria)")
          }
        }
      } else {
        logger.line(
          "mockserver: extractBodyCriteria ignored: the server has no fixtures folder to write __files/ to")
      }
    }
    if spec.persist {
      // As WireMock: recorded stubs are persistent, written to mappings/ at once (as `POST
      // /__admin/mappings` writes a persistent stub); without a fixtures folder they are only added.
      var unwritten = 0
      for stub in stubs {
        let (parsed, _) = StubParser.parse(.object(stub.json), file: "", context: context)
        guard let parsed else { continue }
        do {
          if try !add(parsed) { unwritten += 1 }
        } catch let failure as RedisFailure {
          return AdminAPI.sharedStateUnavailable(failure)
        } catch {
          return AdminAPI.error(
            .internalServerError, title: "Write failed",
            detail:
              "mappings/: \(error.localizedDescription) (stub \(parsed.id) and the ones after it not added)")
        }
      }
      if unwritten > 0 {
        logger.line("mockserver: \(unwritten) recorded stub(s) added but not written: no fixtures folder")
      }
    }
    let result: (String, JSONValue) =
      spec.outputIDsOnly
      ? ("ids", .array(stubs.compactMap { $0.json["id"] }))
      : ("mappings", .array(stubs.map { .object($0.json) }))
    return AdminAPI.json(.object(JSONObject(pairs: [result])))
  }
}
