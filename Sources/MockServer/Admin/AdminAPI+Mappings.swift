import Foundation
import HTTPCore
import Mappings
import MockJSON

extension AdminAPI {
  /// `/__admin/mappings…`
  func mappings(_ call: Call, _ rest: [String]) -> ResponsePlan {
    switch (call.method, rest.count, rest.first ?? "") {
    case ("GET", 0, _): return listMappings(call)
    case ("POST", 0, _), ("POST", 1, "new"): return createMapping(call)
    case ("POST", 1, "find-by-metadata"): return mappingsByMetadata(call, remove: false)
    case ("POST", 1, "remove-by-metadata"): return mappingsByMetadata(call, remove: true)
    case ("DELETE", 0, _):
      let persistent = store.stubs.filter { AdminAPI.isPersistent($0) && $0.file != nil }
      do { try store.change { $0.removeAll() } } catch { return AdminAPI.sharedStateUnavailable(error) }
      return rewrite(Set(persistent.compactMap(\.file))) ?? AdminAPI.empty
    case ("GET", 1, "unmatched"): return unmatchedMappings(remove: false)
    case ("DELETE", 1, "unmatched"): return unmatchedMappings(remove: true)
    case ("POST", 1, "remove"): return removeMappingsLike(call)
    case ("POST", 1, "import"): return importMappings(call)
    case ("POST", 1, "reset"): return resetMappings()
    case ("POST", 1, "save"): return saveMappings()
    case ("GET", 1, let id):
      guard let stub = store.stub(id: id) else { return noStub(id) }
      return AdminAPI.json(AdminAPI.stubJSON(stub))
    case ("PUT", 1, let id): return replaceMapping(call, id: id)
    case ("DELETE", 1, let id):
      guard let stub = store.stub(id: id) else { return noStub(id) }
      return deleteStubs([stub]) ?? AdminAPI.empty
    default: return notFound(call)
    }
  }

  /// `POST /__admin/mappings/find-by-metadata` and `remove-by-metadata`: the body is a matcher (such as
  /// `{"matchesJsonPath": {"expression": "$.team", "equalTo": "payments"}}`) applied to each stub's
  /// `metadata` object; find answers `{"mappings":[…],"meta":{"total":N}}`, remove deletes them.
  func mappingsByMetadata(_ call: Call, remove: Bool) -> ResponsePlan {
    let pattern: StringValuePattern
    switch AdminAPI.metadataMatcher(call) {
    case .failure(let f): return f.plan
    case .success(let p): pattern = p
    }
    let matching = store.stubs.filter { stub in
      guard let metadata = stub.metadata else { return false }
      return pattern.match(metadata.serialized())
    }
    if remove { return deleteStubs(matching) ?? AdminAPI.empty }
    return AdminAPI.json(
      .object(
        JSONObject(pairs: [
          ("mappings", .array(matching.map(AdminAPI.stubJSON))),
          ("meta", .object(JSONObject(pairs: [("total", .number(JSONNumber(matching.count)))]))),
        ])))
  }

  func noStub(_ id: String) -> ResponsePlan {
    AdminAPI.error(.notFound, title: "Stub mapping not found", detail: "no stub mapping has id \(id)")
  }

  /// `GET /__admin/mappings?limit=&offset=` → `{"mappings":[…],"meta":{"total":N}}`.
  func listMappings(_ call: Call) -> ResponsePlan {
    let limit: Int?
    let offset: Int?
    switch (AdminAPI.integerParameter(call, "limit"), AdminAPI.integerParameter(call, "offset")) {
    case (.failure(let f), _), (_, .failure(let f)): return f.plan
    case (.success(let l), .success(let o)):
      limit = l
      offset = o
    }
    let all = store.stubs
    let page = all.dropFirst(offset ?? 0).prefix(limit ?? Int.max)
    return AdminAPI.json(
      .object(
        JSONObject(pairs: [
          ("mappings", .array(page.map(AdminAPI.stubJSON))),
          ("meta", .object(JSONObject(pairs: [("total", .number(JSONNumber(all.count)))]))),
        ])))
  }

  /// `POST /__admin/mappings` → 201 with the stub (with `id` and `uuid`).
  func createMapping(_ call: Call) -> ResponsePlan {
    let json: JSONValue
    switch AdminAPI.stubBody(call) {
    case .failure(let f): return f.plan
    case .success(let v): json = v
    }
    let (stub, problems) = StubParser.parse(json, file: "", context: parsingContext())
    guard let stub else { return AdminAPI.invalidStub(problems) }
    do {
      if try !add(stub) {
        logger.line("mockserver: stub \(stub.id) is persistent but not written: no fixtures folder")
      }
    } catch let failure as RedisFailure {
      return AdminAPI.sharedStateUnavailable(failure)
    } catch {
      return AdminAPI.error(
        .internalServerError, title: "Write failed",
        detail: "mappings/: \(error.localizedDescription) (the stub was not added)")
    }
    return AdminAPI.withWarnings(AdminAPI.json(AdminAPI.stubJSON(stub), status: .created), problems)
  }

  /// Adds `stub` to the server. A persistent one (WireMock's `"persistent": true`) is first written to a new
  /// file in `mappings/`. Returns false for a persistent stub that could only be added: the server has no
  /// fixtures folder. Throws when writing fails (the stub is then not added), and ``RedisFailure`` when
  /// the shared state store cannot take it (nothing was added). With a shared store, a persistent stub is
  /// a runtime stub of the store (served by every replica), and also written to this replica's folder.
  func add(_ stub: StubMapping) throws -> Bool {
    guard AdminAPI.isPersistent(stub) else {
      try store.change { $0.add(stub) }
      return true
    }
    guard configuration.fixturesDirectory != nil else {
      try store.change { $0.add(stub) }
      return false
    }
    if store.shared != nil {
      try store.change { $0.add(stub) }
      _ = try persistNew(stub)
      return true
    }
    try store.addFileStub(try persistNew(stub))
    return true
  }

  /// The 503 answering a change that the shared state store could not take (nothing was changed, here
  /// or in the store), or a read (`changed: false`) that needs the store's answer, not one replica's.
  static func sharedStateUnavailable(_ failure: RedisFailure, changed: Bool = true) -> ResponsePlan {
    error(
      HTTPStatus(code: 503), title: "Shared state unavailable",
      detail: changed ? "\(failure) (nothing was changed)" : "\(failure)")
  }

  /// `PUT /__admin/mappings/{id}`: replaces the stub in place (the path's id wins over the body's).
  func replaceMapping(_ call: Call, id: String) -> ResponsePlan {
    let json: JSONValue
    switch AdminAPI.stubBody(call) {
    case .failure(let f): return f.plan
    case .success(let v): json = v
    }
    let (parsed, problems) = StubParser.parse(
      AdminAPI.withID(json, id), file: "", context: parsingContext())
    guard var stub = parsed else { return AdminAPI.invalidStub(problems) }
    guard let old = store.stub(id: id) else { return noStub(id) }
    stub.file = old.file
    stub.location = old.location
    let replacement = stub
    do {
      guard try store.change({ $0.replace(replacement) }) else { return noStub(id) }
    } catch {
      return AdminAPI.sharedStateUnavailable(error)
    }
    let persistent = AdminAPI.isPersistent(stub) || AdminAPI.isPersistent(old)
    if persistent, configuration.fixturesDirectory != nil {
      if let file = old.file {
        if let failure = rewrite([file]) { return failure }
      } else if AdminAPI.isPersistent(stub) {
        do {
          let saved = try persistNew(stub)
          store.markSaved([stub.id: saved.file ?? ""])
        } catch {
          return AdminAPI.error(
            .internalServerError, title: "Write failed",
            detail: "mappings/: \(error.localizedDescription) (the change is served but not written)")
        }
      }
    }
    return AdminAPI.withWarnings(AdminAPI.json(AdminAPI.stubJSON(stub)), problems)
  }

  /// `GET /__admin/mappings/unmatched`: stubs no request in the journal matched (since the last journal
  /// reset), as `{"mappings":[…],"meta":{"total":N}}`; `DELETE` removes them.
  func unmatchedMappings(remove: Bool) -> ResponsePlan {
    let unmatched = store.stubs.filter { journal.count(stubID: $0.id) == 0 }
    if remove { return deleteStubs(unmatched) ?? AdminAPI.empty }
    return AdminAPI.json(
      .object(
        JSONObject(pairs: [
          ("mappings", .array(unmatched.map(AdminAPI.stubJSON))),
          ("meta", .object(JSONObject(pairs: [("total", .number(JSONNumber(unmatched.count)))]))),
        ])))
  }

  /// `POST /__admin/mappings/remove`: the body is a stub mapping (or its `request` alone); removes the
  /// stubs with its `id`/`uuid` and the stubs whose request pattern equals its `request` as a pattern.
  func removeMappingsLike(_ call: Call) -> ResponsePlan {
    let o: JSONObject
    switch AdminAPI.objectBody(call, describing: #"a stub mapping {"request": {…}} or its "id""#) {
    case .failure(let f): return f.plan
    case .success(let v): o = v
    }
    let id = o["id"]?.stringValue ?? o["uuid"]?.stringValue
    let request = o["request"] ?? (o["id"] == nil && o["uuid"] == nil ? JSONValue.object(o) : nil)
    var wanted: RequestPattern?
    if let request {
      let (pattern, problems) = StubParser.parseRequestPattern(request)
      guard let pattern else { return AdminAPI.invalid(problems, title: "Invalid request pattern") }
      wanted = pattern
    }
    // As WireMock: the request patterns are compared as patterns, not as JSON text (`"method": "ANY"`
    // is the same as no method, `"caseInsensitive": false` as none).
    let matching = store.stubs.filter { stub in
      if let id, stub.id == id { return true }
      guard let wanted else { return false }
      return stub.request == wanted
    }
    return deleteStubs(matching) ?? AdminAPI.empty
  }

  /// `POST /__admin/mappings/import` `{"mappings":[…],"importOptions":{…}}`: all or nothing.
  func importMappings(_ call: Call) -> ResponsePlan {
    let o: JSONObject
    switch AdminAPI.objectBody(call, describing: #"an object {"mappings": [ … ]}"#) {
    case .failure(let f): return f.plan
    case .success(let v): o = v
    }
    var problems: [FixtureProblem] = []
    var policy = StubImportPolicy.overwrite
    var deleteAll = false
    if let options = o["importOptions"] {
      if let opts = options.objectValue {
        if let p = opts["duplicatePolicy"] {
          if let name = p.stringValue, let v = StubImportPolicy(rawValue: name) {
            policy = v
          } else {
            problems.append(
              .error(
                file: "", path: "$.importOptions.duplicatePolicy", expected: "\"OVERWRITE\" or \"IGNORE\"",
                found: p.kindDescription))
          }
        }
        if let d = opts["deleteAllNotInImport"] {
          if let b = d.boolValue {
            deleteAll = b
          } else {
            problems.append(
              .error(
                file: "", path: "$.importOptions.deleteAllNotInImport", expected: "true or false",
                found: d.kindDescription))
          }
        }
      } else {
        problems.append(
          .error(file: "", path: "$.importOptions", expected: "an object", found: options.kindDescription))
      }
    }
    guard let list = o["mappings"]?.arrayValue else {
      problems.append(
        .error(
          file: "", path: "$.mappings", expected: "an array of stub mappings",
          found: o["mappings"]?.kindDescription ?? "nothing"))
      return AdminAPI.invalidStub(problems)
    }
    var stubs: [StubMapping] = []
    var seen: [String: Int] = [:]
    let context = parsingContext()
    for (k, item) in list.enumerated() {
      let (stub, p) = StubParser.parse(item, file: "", location: "$.mappings[\(k)]", context: context)
      problems += p
      guard let stub else { continue }
      if let first = seen[stub.id] {
        problems.append(
          .error(
            file: "", path: "$.mappings[\(k)].id", expected: "an id used by no other imported stub",
            found: "\(JSONValue.quoted(stub.id)), also used by $.mappings[\(first)]"))
        continue
      }
      seen[stub.id] = k
      stubs.append(stub)
    }
    if problems.contains(where: \.isError) { return AdminAPI.invalidStub(problems) }
    do {
      try store.change { $0.importStubs(stubs, policy: policy, deleteAllNotInImport: deleteAll) }
    } catch {
      return AdminAPI.sharedStateUnavailable(error)
    }
    return AdminAPI.withWarnings(AdminAPI.empty, problems)
  }

  /// `POST /__admin/mappings/reset`: the stubs of the fixtures folder only (runtime stubs dropped).
  func resetMappings() -> ResponsePlan {
    do {
      guard let directory = configuration.fixturesDirectory else {
        try store.change { $0.removeAll() }
        return AdminAPI.empty
      }
      let set = loadFixtures(directory)
      if set.hasErrors { return fixtureErrors(set) }
      try store.change { $0.replaceFileStubs(set, keepRuntimeStubs: false, changedFiles: nil) }
    } catch {
      return AdminAPI.sharedStateUnavailable(error)
    }
    return AdminAPI.empty
  }

  /// 500 listing the fixture errors that kept a reset from happening.
  func fixtureErrors(_ set: FixtureSet) -> ResponsePlan {
    let problems = set.errors
    return AdminAPI.errors(
      .internalServerError,
      problems.map { ("Fixtures have errors; nothing was changed", $0.description, nil) })
  }

  /// `POST /__admin/mappings/save`: writes each runtime stub to `mappings/<name-or-stub>-<id>.json` in the
  /// fixtures folder; they become file stubs.
  /// Writes every runtime stub to its own new file under `mappings/` and answers with what was written:
  /// `{"saved": [{"id", "file"}]}`. A file name is never reused: names that sanitise alike (`a/b`,
  /// `a?b`), or that an existing file already has, get `-2`, `-3`… (compared without case, for
  /// case-insensitive file systems), so no stub overwrites another and is lost at the next reload.
  func saveMappings() -> ResponsePlan {
    guard let directory = configuration.fixturesDirectory else {
      return AdminAPI.error(
        HTTPStatus(code: 409), title: "No fixtures folder",
        detail: "the server was started without a fixtures folder")
    }
    let runtime = store.runtimeStubs
    let mappingsURL = URL(fileURLWithPath: directory, isDirectory: true).appendingPathComponent("mappings")
    var saved: [String: String] = [:]
    var written: [JSONValue] = []
    do {
      try FileManager.default.createDirectory(at: mappingsURL, withIntermediateDirectories: true)
      var taken = takenMappingFileNames()
      for stub in runtime {
        let name = AdminAPI.newMappingFileName(for: stub, taken: &taken)
        let bytes = AdminAPI.stubJSON(stub).serializedBytes(pretty: true) + [10]
        // Not replacing: a file that appeared meanwhile is an error, never replaced.
        try AdminAPI.writeDurably(bytes, to: mappingsURL.appendingPathComponent(name), replacing: false)
        saved[stub.id] = "mappings/" + name
        written.append(
          .object(JSONObject(pairs: [("id", .string(stub.id)), ("file", .string("mappings/" + name))])))
      }
    } catch {
      store.markSaved(saved)
      return AdminAPI.error(
        .internalServerError, title: "Save failed",
        detail: "\(mappingsURL.path): \(error.localizedDescription) (\(saved.count) stub(s) saved before it)")
    }
    store.markSaved(saved)
    // Runtime edits (deletes, replacements) of file stubs: their files are rewritten to what is served.
    let edited = store.editedFiles
    if let failure = rewrite(edited) { return failure }
    return AdminAPI.json(
      .object(
        JSONObject(pairs: [
          ("saved", .array(written)), ("rewritten", .array(edited.sorted().map { .string($0) })),
        ])))
  }

  /// Context for stubs posted to the admin API: the current envelopes, body files from the fixtures
  /// folder's `__files/`, random UUIDs.
  func parsingContext() -> StubParsingContext { store.parsingContext() }

  /// The stub's JSON as written, with `id` and `uuid` set to its id (numbers keep their spelling).
  static func stubJSON(_ stub: StubMapping) -> JSONValue { StubStore.json(of: stub) }

  /// `json` with `id` and `uuid` members set to `id` (added at the front when missing).
  static func withID(_ json: JSONValue, _ id: String) -> JSONValue { StubStore.withID(json, id) }

  /// Letters, digits, `-` and `_` kept; anything else becomes `-`; at most 60 characters.
  static func fileSafe(_ s: String) -> String {
    let mapped = s.unicodeScalars.prefix(60).map { u -> Character in
      let v = u.value
      let ok = (v >= 48 && v <= 57) || (v >= 65 && v <= 90) || (v >= 97 && v <= 122) || v == 45 || v == 95
      return ok ? Character(u) : "-"
    }
    return mapped.isEmpty ? "stub" : String(mapped)
  }
}
