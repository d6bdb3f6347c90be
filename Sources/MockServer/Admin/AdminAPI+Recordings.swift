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
        guard recorder.start(spec) else {
          return AdminAPI.error(
            HTTPStatus(code: 409), title: "Already recording", detail: "a recording is running: stop it first"
          )
        }
        return AdminAPI.empty
      }
    case ("POST", "stop"):
      guard let (spec, exchanges, _) = recorder.stop() else {
        return AdminAPI.error(
          .badRequest, title: "Not recording",
          detail: "no recording is running (POST /__admin/recordings/start)")
      }
      return recorded(exchanges, spec: spec)
    case ("POST", "snapshot"):
      var spec = RecordingSpec()
      switch AdminAPI.body(call, allowEmpty: true) {
      case .failure(let f): return f.plan
      case .success(let v):
        if let v {
          guard let o = v.objectValue else {
            return AdminAPI.error(
              .badRequest, title: "Invalid record spec",
              detail: "$: expected an object, found \(v.kindDescription)",
              pointer: "/")
          }
          switch RecordingSpec.parse(o, requireTarget: false) {
          case .failure(let p):
            return AdminAPI.error(
              .badRequest, title: "Invalid record spec", detail: p.detail, pointer: p.pointer)
          case .success(let s): spec = s
          }
        }
      }
      // The exchanges whose requests are still in the journal (a reset forgets them too).
      let exchanges = recorder.recent.filter { journal.entry(id: $0.journalID) != nil }
      return recorded(exchanges, spec: spec)
    default:
      return notFound(call)
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
