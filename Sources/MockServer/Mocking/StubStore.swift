import Foundation
import Mappings
import MockJSON
import Synchronization

/// What an import does with a stub whose id is already present (`importOptions.duplicatePolicy`).
public enum StubImportPolicy: String, Sendable {
  /// Replace the existing stub (WireMock's default).
  case overwrite = "OVERWRITE"
  /// Keep the existing stub and skip the imported one.
  case ignore = "IGNORE"
}

/// The one owner of the stubs: file stubs (from the fixtures folder) and runtime stubs (admin API, test
/// code), the envelope templates, the immutable ``StubTable`` built from them, and the cache of prepared
/// responses.
///
/// Every change rebuilds the table once under the lock and swaps it in; matching takes the current table
/// (one retain) and never holds the lock. The prepared-response cache belongs to one table: a response
/// prepared from an older table is never stored for a newer one.
public final class StubStore: Sendable {
  struct State {
    var fileStubs: [StubMapping]
    var runtimeStubs: [StubMapping] = []
    var envelopes: EnvelopeSet
    var table: StubTable
    /// Serialized responses of stubs answered before, by index in `table.stubs` (an array index, not a
    /// hash of the 36-character id per request); belongs to `table`, grown as responses are stored.
    var prepared: [PreparedStub?] = []
    /// Runtime changes to file stubs not written to their files yet, by stub id. A hot reload applies
    /// them again to what it loads, so they are not undone by a reload of another file.
    var fileEdits: [String: FileEdit] = [:]
  }

  /// A stub's prepared response and, for a plain stub, the whole answer. A class: taking it from the
  /// cache per request is one retain (a struct holding a plan was copied field by field, twice).
  final class PreparedStub: Sendable {
    /// The serialized response (see ``ResponsePlanBuilder/prepare(_:)``).
    let response: PreparedResponse
    /// The plan that answers any request the stub matches, for a stub whose answer takes nothing from the
    /// request and needs nothing done after it: not templated, no delay of its own, no proxy or fault, no
    /// response sequence, scenario transition or webhook (at every log level: the responder adds the log
    /// line to the plan it returns). The responder still checks
    /// what a request or the settings can change (`Accept-Encoding`, CORS, the global delay). Nil otherwise.
    let plainPlan: ResponsePlan?
    /// The stub never compresses (`x-compression: never`, or `auto` with `--disable-gzip`): its prepared
    /// response also answers a request with `Accept-Encoding`.
    let ignoresAcceptEncoding: Bool

    init(response: PreparedResponse, plainPlan: ResponsePlan?, ignoresAcceptEncoding: Bool) {
      self.response = response
      self.plainPlan = plainPlan
      self.ignoresAcceptEncoding = ignoresAcceptEncoding
    }
  }

  /// A runtime change (delete or replace) to a stub loaded from a file, kept until `save` writes it, a
  /// reset drops it, or its file changes on disk (the file's new content then wins).
  struct FileEdit: Sendable {
    /// The stub's file, relative to the fixtures folder.
    var file: String
    /// The stub to serve instead; nil when the stub was deleted.
    var replacement: StubMapping?
  }

  private let state: Mutex<State>
  /// Fixtures folder the file stubs came from (for reset-to-files, save and hot reload), or nil.
  public let fixturesDirectory: String?
  /// The shared store's runtime stubs (`--state-store`), or nil: then every change is local only.
  let shared: SharedRuntimeStubs?
  /// The folder whose `__files/` the body files of stubs parsed here come from: the fixtures folder (a
  /// session's store has none of its own and reads its server's).
  private let bodyFilesDirectory: String?

  /// Creates a store serving `fixtures` (already loaded and validated by the caller).
  public convenience init(fixtures: FixtureSet, fixturesDirectory: String?) {
    self.init(fixtures: fixtures, fixturesDirectory: fixturesDirectory, shared: nil)
  }

  /// Creates a store serving `fixtures` whose runtime stubs are those of `shared` (when given).
  package init(fixtures: FixtureSet, fixturesDirectory: String?, shared: SharedRuntimeStubs?) {
    self.fixturesDirectory = fixturesDirectory
    self.shared = shared
    bodyFilesDirectory = fixturesDirectory
    state = Mutex(
      State(fileStubs: fixtures.stubs, envelopes: fixtures.envelopes, table: StubTable(fixtures.stubs)))
  }

  /// The store of one session's runtime stubs (docs/scaling.md#sessions): no file stubs and no fixtures
  /// folder of its own; `parent`'s envelopes and body files; its runtime stubs in `shared` when given.
  package init(sessionOf parent: StubStore, shared: SharedRuntimeStubs?) {
    fixturesDirectory = nil
    self.shared = shared
    bodyFilesDirectory = parent.bodyFilesDirectory
    state = Mutex(State(fileStubs: [], envelopes: parent.envelopes, table: StubTable([])))
  }

  /// The current table (an immutable snapshot).
  public var table: StubTable { state.withLock { $0.table } }

  /// Every stub, file stubs first then runtime stubs, in addition order.
  public var stubs: [StubMapping] { state.withLock { $0.fileStubs + $0.runtimeStubs } }

  /// Stubs added at runtime (admin API or test code), in addition order.
  public var runtimeStubs: [StubMapping] { state.withLock { $0.runtimeStubs } }

  /// The envelope templates in effect.
  public var envelopes: EnvelopeSet { state.withLock { $0.envelopes } }

  /// The stub with this id, if any (ids are ASCII and compare as bytes: one that is not names none).
  public func stub(id: String) -> StubMapping? {
    guard StubParser.isASCII(id) else { return nil }
    return state.withLock { s in
      s.runtimeStubs.last(where: { $0.id == id }) ?? s.fileStubs.first(where: { $0.id == id })
    }
  }

  /// Adds a runtime stub (it outranks earlier stubs of equal priority). Replaces a stub with the same id.
  /// With a shared store, a change the store could not take is dropped (the admin API uses ``change(_:)``).
  public func add(_ stub: StubMapping) {
    _ = try? change { $0.add(stub) }
  }

  /// Replaces the stub with `stub.id` in place (keeping its rank). Returns false when there is none.
  @discardableResult
  public func replace(_ stub: StubMapping) -> Bool {
    (try? change { $0.replace(stub) }) ?? false
  }

  /// Removes the stub `id`. Returns false when there is none.
  @discardableResult
  public func remove(id: String) -> Bool {
    (try? change { $0.remove(ids: [id]) }) ?? false
  }

  /// Removes every stub (file and runtime).
  public func removeAll() {
    _ = try? change { $0.removeAll() }
  }

  /// Swaps in a new set of file stubs (hot reload or reset to files).
  /// - Parameters:
  ///   - keepRuntimeStubs: keep stubs added at runtime and the runtime edits (deletes, replacements) of
  ///     file stubs (hot reload), or drop both (reset).
  ///   - changedFiles: files (relative to the fixtures folder) that changed on disk since the last load:
  ///     runtime edits of their stubs are dropped, so what was written to the file wins. Nil: none known.
  public func replaceFileStubs(
    _ fixtures: FixtureSet, keepRuntimeStubs: Bool = true, changedFiles: Set<String>? = nil
  ) {
    _ = try? change {
      $0.replaceFileStubs(fixtures, keepRuntimeStubs: keepRuntimeStubs, changedFiles: changedFiles)
    }
  }

  /// Runtime edits of file stubs not written to their files (deletes and replacements), for the
  /// shutdown message and `save`.
  public var unsavedFileEditCount: Int { state.withLock { $0.fileEdits.count } }

  /// The files holding stubs edited at runtime and not written yet.
  var editedFiles: Set<String> { state.withLock { Set($0.fileEdits.values.map(\.file)) } }

  /// The stubs currently served from `file`, in their order in it.
  func stubs(inFile file: String) -> [StubMapping] {
    state.withLock { s in s.fileStubs.filter { $0.file == file } }
  }

  /// Forgets the runtime edits of `files` (they were written to them).
  func markWritten(files: Set<String>) {
    _ = try? change { s in s.fileEdits = s.fileEdits.filter { !files.contains($0.value.file) } }
  }

  /// Adds `stubs` as runtime stubs in one step (one table rebuild).
  /// - Parameters:
  ///   - policy: what to do with an id that is already present.
  ///   - deleteAllNotInImport: remove every stub (file and runtime) first.
  public func importStubs(_ stubs: [StubMapping], policy: StubImportPolicy, deleteAllNotInImport: Bool) {
    _ = try? change { $0.importStubs(stubs, policy: policy, deleteAllNotInImport: deleteAllNotInImport) }
  }

  /// Turns the runtime stubs saved to files into file stubs (`files`: stub id → file relative to the
  /// fixtures folder), so a reload of those files does not duplicate them. With a shared store they stay
  /// runtime stubs (the store's, served by every replica); a runtime stub hides a file stub of its id.
  func markSaved(_ files: [String: String]) {
    guard shared == nil else { return }
    _ = try? change { $0.markSaved(files) }
  }

  /// Loads the fixtures folder again and, when it has no errors, serves its stubs instead of the current
  /// ones. Does file I/O: never call it with a lock held.
  /// - Parameter keepRuntimeStubs: keep stubs added at runtime (hot reload) or drop them (reset).
  /// - Returns: the loaded set (check `hasErrors`: then nothing changed), or nil without a fixtures folder.
  @discardableResult
  public func reloadFixtures(keepRuntimeStubs: Bool) -> FixtureSet? {
    guard let fixturesDirectory else { return nil }
    let set = FixtureLoader.load(directory: fixturesDirectory)
    if !set.hasErrors { replaceFileStubs(set, keepRuntimeStubs: keepRuntimeStubs) }
    return set
  }

  // MARK: Prepared responses

  /// What was prepared for the stub at `index` in `table.stubs`, if it was stored since `table` was
  /// swapped in.
  func prepared(stubIndex index: Int, table: StubTable) -> PreparedStub? {
    state.withLock { s in
      s.table === table && index >= 0 && index < s.prepared.count ? s.prepared[index] : nil
    }
  }

  /// Stores what was prepared for the stub at `index` in `table.stubs` (dropped when `table` is no longer
  /// current).
  func storePrepared(_ prepared: PreparedStub, stubIndex index: Int, table: StubTable) {
    state.withLock { s in
      guard s.table === table, index >= 0, index < table.stubs.count else { return }
      if s.prepared.count < table.stubs.count {
        s.prepared.append(contentsOf: repeatElement(nil, count: table.stubs.count - s.prepared.count))
      }
      s.prepared[index] = prepared
    }
  }

  /// Adds `stub` as a file stub (written to `stub.file` by the admin API), replacing any stub with its id.
  func addFileStub(_ stub: StubMapping) throws(RedisFailure) {
    try change { s in
      s.recordFileEdit(removing: stub.id)
      s.fileEdits[stub.id] = nil
      s.fileStubs.removeAll { $0.id == stub.id }
      s.runtimeStubs.removeAll { $0.id == stub.id }
      s.fileStubs.append(stub)
    }
  }

  /// Applies `change` to the stubs and swaps in the rebuilt table (the one way stubs change).
  ///
  /// With a shared store (`--state-store`), a change that changes the runtime stubs is written to the
  /// store first and applied here only once written (when another replica changed them meanwhile, it is
  /// applied again to what the store holds, as ``OvertakenRetry`` says); changes and refreshes from the
  /// store run one at a time.
  /// - Throws: ``RedisFailure`` when the store cannot take the change: nothing changed, here or there.
  @discardableResult
  func change<T: Sendable>(_ change: (inout State) -> T) throws(RedisFailure) -> T {
    guard let shared else { return mutate(change) }
    return try shared.serialized { view throws(RedisFailure) -> T in
      var retry = OvertakenRetry()
      repeat {
        var next = state.withLock { $0 }
        let result = change(&next)
        let entries = StubStore.entries(next.runtimeStubs)
        if entries != view.entries {
          switch try shared.write(entries, over: view) {
          case .written(let generation):
            view = SharedRuntimeStubs.View(generation: generation, entries: entries)
          case .stale:
            // Another replica changed them: take the store's, then apply the change to those.
            let fresh = try shared.read()
            adopt(fresh, over: &view)
            continue
          }
        }
        mutate { s in
          s.fileStubs = next.fileStubs
          s.runtimeStubs = next.runtimeStubs
          s.envelopes = next.envelopes
          s.fileEdits = next.fileEdits
        }
        return result
      } while retry.waitForNextAttempt()
      throw .overtaken(
        "the runtime stubs kept changing for \(OvertakenRetry.deadlineText) (other replicas' changes came "
          + "first); nothing changed, try again")
    }
  }

  /// Reads the shared store's runtime stubs and serves them instead of the local ones, when they differ
  /// from what was read last (the subscriber's refresh, and the load at start).
  /// - Throws: ``RedisFailure`` when the store cannot answer (nothing changed).
  package func refreshFromSharedStore() throws(RedisFailure) {
    guard let shared else { return }
    try shared.serialized { view throws(RedisFailure) in
      let fresh = try shared.read()
      adopt(fresh, over: &view)
    }
  }

  /// Serves `fresh` (the store's runtime stubs) as the runtime stubs and takes it as the view. A stub the
  /// store holds that does not parse here is left out, with a log line naming it.
  private func adopt(_ fresh: SharedRuntimeStubs.View, over view: inout SharedRuntimeStubs.View) {
    defer { view = fresh }
    guard fresh.entries != view.entries || fresh.generation != view.generation else { return }
    let context = parsingContext()
    // A stub whose JSON did not change since the last read is kept as parsed then.
    let known = Dictionary(view.entries.map { ($0.id, $0.json) }, uniquingKeysWith: { _, last in last })
    let current = state.withLock { s in
      Dictionary(s.runtimeStubs.map { ($0.id, $0) }, uniquingKeysWith: { _, last in last })
    }
    var stubs: [StubMapping] = []
    for entry in fresh.entries {
      if known[entry.id] == entry.json, let stub = current[entry.id] {
        stubs.append(stub)
        continue
      }
      let parsed = (try? JSONValue.parse(bytes: Array(entry.json.utf8))).flatMap { json in
        let (stub, problems) = StubParser.parse(json, file: "", context: context)
        if stub == nil, let shared {
          let problem = problems.first(where: \.isError)?.description ?? "not a stub mapping"
          shared.logLine("mockserver: shared state store: runtime stub \(entry.id) left out: \(problem)")
        }
        return stub
      }
      if let parsed { stubs.append(parsed) }
    }
    let ids = Set(stubs.map(\.id))
    mutate { s in
      for id in ids { s.recordFileEdit(removing: id) }
      s.fileStubs.removeAll { ids.contains($0.id) }
      s.runtimeStubs = stubs
    }
  }

  /// The shared store's entries for `stubs`: each stub's JSON as the admin API shows it, compact.
  static func entries(_ stubs: [StubMapping]) -> [SharedRuntimeStubs.Entry] {
    stubs.map { SharedRuntimeStubs.Entry(id: $0.id, json: json(of: $0).serialized()) }
  }

  /// The stub's JSON as written, with `id` and `uuid` set to its id (numbers keep their spelling).
  static func json(of stub: StubMapping) -> JSONValue {
    guard case .object(let source) = stub.source, !source.members.isEmpty else {
      var pairs: [(String, JSONValue)] = [("id", .string(stub.id)), ("uuid", .string(stub.id))]
      if let name = stub.name { pairs.append(("name", .string(name))) }
      pairs.append(("priority", .number(JSONNumber(stub.priority))))
      return .object(JSONObject(pairs: pairs))
    }
    return withID(.object(source), stub.id)
  }

  /// `json` with `id` and `uuid` members set to `id` (added at the front when missing).
  static func withID(_ json: JSONValue, _ id: String) -> JSONValue {
    guard case .object(var o) = json else { return json }
    var hasID = false
    var hasUUID = false
    for i in o.members.indices {
      if o.members[i].key == "id" {
        o.members[i].value = .string(id)
        hasID = true
      } else if o.members[i].key == "uuid" {
        o.members[i].value = .string(id)
        hasUUID = true
      }
    }
    if !hasUUID { o.members.insert(.init(key: "uuid", value: .string(id)), at: 0) }
    if !hasID { o.members.insert(.init(key: "id", value: .string(id)), at: 0) }
    return .object(o)
  }

  /// Context for stubs read from the admin API or the shared store: the current envelopes, body files
  /// from the fixtures folder's `__files/`, random UUIDs.
  func parsingContext() -> StubParsingContext {
    let filesRoot = bodyFilesDirectory.map { FileTree.standardized($0) + "/__files" }
    return StubParsingContext(
      envelopes: envelopes,
      readBodyFile: { path in
        guard let filesRoot else { return .failure(.notFound) }
        return FixtureLoader.readBodyFile(path, filesRoot: filesRoot)
      },
      makeID: { UUID().uuidString.lowercased() })
  }

  /// Applies `change` to the stubs here and swaps in the rebuilt table.
  private func mutate<T>(_ change: (inout State) -> T) -> T {
    state.withLock { s in
      let result = change(&s)
      s.table = StubTable(s.fileStubs + s.runtimeStubs)
      s.prepared = []
      return result
    }
  }
}

extension StubStore.State {
  /// Adds a runtime stub (it outranks earlier stubs of equal priority). Replaces a stub with the same id.
  mutating func add(_ stub: StubMapping) {
    recordFileEdit(removing: stub.id)
    fileStubs.removeAll { $0.id == stub.id }
    runtimeStubs.removeAll { $0.id == stub.id }
    runtimeStubs.append(stub)
  }

  /// Replaces the stub with `stub.id` in place (keeping its rank). Returns false when there is none.
  mutating func replace(_ stub: StubMapping) -> Bool {
    guard StubParser.isASCII(stub.id) else { return false }
    if let i = fileStubs.firstIndex(where: { $0.id == stub.id }) {
      fileStubs[i] = stub
      if let file = stub.file { fileEdits[stub.id] = StubStore.FileEdit(file: file, replacement: stub) }
      return true
    }
    if let i = runtimeStubs.firstIndex(where: { $0.id == stub.id }) {
      runtimeStubs[i] = stub
      return true
    }
    return false
  }

  /// Removes the stubs `ids`. Returns false when there was none of them.
  mutating func remove(ids: [String]) -> Bool {
    let before = fileStubs.count + runtimeStubs.count
    for id in ids where StubParser.isASCII(id) {
      recordFileEdit(removing: id)
      fileStubs.removeAll { $0.id == id }
      runtimeStubs.removeAll { $0.id == id }
    }
    return before != fileStubs.count + runtimeStubs.count
  }

  /// Removes every stub (file and runtime).
  mutating func removeAll() {
    for stub in fileStubs { recordFileEdit(removing: stub.id) }
    fileStubs = []
    runtimeStubs = []
  }

  /// See ``StubStore/replaceFileStubs(_:keepRuntimeStubs:changedFiles:)``.
  mutating func replaceFileStubs(_ fixtures: FixtureSet, keepRuntimeStubs: Bool, changedFiles: Set<String>?) {
    if !keepRuntimeStubs {
      runtimeStubs = []
      fileEdits = [:]
    } else if let changedFiles {
      fileEdits = fileEdits.filter { !changedFiles.contains($0.value.file) }
    }
    let runtimeIDs = Set(runtimeStubs.map(\.id))
    let edits = fileEdits
    fileStubs = fixtures.stubs.compactMap { stub in
      // A runtime stub with this id outranks the file's (it was added or imported over it).
      if runtimeIDs.contains(stub.id) { return nil }
      guard let edit = edits[stub.id] else { return stub }
      return edit.replacement
    }
    envelopes = fixtures.envelopes
  }

  /// See ``StubStore/importStubs(_:policy:deleteAllNotInImport:)``.
  mutating func importStubs(_ stubs: [StubMapping], policy: StubImportPolicy, deleteAllNotInImport: Bool) {
    if deleteAllNotInImport { removeAll() }
    for stub in stubs {
      let exists = fileStubs.contains { $0.id == stub.id } || runtimeStubs.contains { $0.id == stub.id }
      if exists, policy == .ignore { continue }
      add(stub)
    }
  }

  /// See ``StubStore/markSaved(_:)``.
  mutating func markSaved(_ files: [String: String]) {
    var moved: [StubMapping] = []
    runtimeStubs.removeAll { stub in
      guard let file = files[stub.id] else { return false }
      var saved = stub
      saved.file = file
      saved.location = "$"
      moved.append(saved)
      return true
    }
    fileStubs += moved
  }

  /// Records that file stub `id` (if it is one) is no longer served: a reload must not bring it back.
  mutating func recordFileEdit(removing id: String) {
    guard let stub = fileStubs.first(where: { $0.id == id }), let file = stub.file else { return }
    fileEdits[id] = StubStore.FileEdit(file: file, replacement: nil)
  }
}
