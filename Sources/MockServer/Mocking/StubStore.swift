import Foundation
import Mappings
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

  /// Creates a store serving `fixtures` (already loaded and validated by the caller).
  public init(fixtures: FixtureSet, fixturesDirectory: String?) {
    self.fixturesDirectory = fixturesDirectory
    state = Mutex(
      State(fileStubs: fixtures.stubs, envelopes: fixtures.envelopes, table: StubTable(fixtures.stubs)))
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
  public func add(_ stub: StubMapping) {
    mutate { s in
      s.recordFileEdit(removing: stub.id)
      s.fileStubs.removeAll { $0.id == stub.id }
      s.runtimeStubs.removeAll { $0.id == stub.id }
      s.runtimeStubs.append(stub)
    }
  }

  /// Replaces the stub with `stub.id` in place (keeping its rank). Returns false when there is none.
  @discardableResult
  public func replace(_ stub: StubMapping) -> Bool {
    guard StubParser.isASCII(stub.id) else { return false }
    return mutate { s in
      if let i = s.fileStubs.firstIndex(where: { $0.id == stub.id }) {
        s.fileStubs[i] = stub
        if let file = stub.file { s.fileEdits[stub.id] = FileEdit(file: file, replacement: stub) }
        return true
      }
      if let i = s.runtimeStubs.firstIndex(where: { $0.id == stub.id }) {
        s.runtimeStubs[i] = stub
        return true
      }
      return false
    }
  }

  /// Removes the stub `id`. Returns false when there is none.
  @discardableResult
  public func remove(id: String) -> Bool {
    guard StubParser.isASCII(id) else { return false }
    return mutate { s in
      let before = s.fileStubs.count + s.runtimeStubs.count
      s.recordFileEdit(removing: id)
      s.fileStubs.removeAll { $0.id == id }
      s.runtimeStubs.removeAll { $0.id == id }
      return before != s.fileStubs.count + s.runtimeStubs.count
    }
  }

  /// Removes every stub (file and runtime).
  public func removeAll() {
    mutate { s in
      for stub in s.fileStubs { s.recordFileEdit(removing: stub.id) }
      s.fileStubs = []
      s.runtimeStubs = []
    }
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
    mutate { s in
      if !keepRuntimeStubs {
        s.runtimeStubs = []
        s.fileEdits = [:]
      } else if let changedFiles {
        s.fileEdits = s.fileEdits.filter { !changedFiles.contains($0.value.file) }
      }
      let runtimeIDs = Set(s.runtimeStubs.map(\.id))
      s.fileStubs = fixtures.stubs.compactMap { stub in
        // A runtime stub with this id outranks the file's (it was added or imported over it).
        if runtimeIDs.contains(stub.id) { return nil }
        guard let edit = s.fileEdits[stub.id] else { return stub }
        return edit.replacement
      }
      s.envelopes = fixtures.envelopes
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
    state.withLock { s in s.fileEdits = s.fileEdits.filter { !files.contains($0.value.file) } }
  }

  /// Adds `stubs` as runtime stubs in one step (one table rebuild).
  /// - Parameters:
  ///   - policy: what to do with an id that is already present.
  ///   - deleteAllNotInImport: remove every stub (file and runtime) first.
  public func importStubs(_ stubs: [StubMapping], policy: StubImportPolicy, deleteAllNotInImport: Bool) {
    mutate { s in
      if deleteAllNotInImport {
        for stub in s.fileStubs { s.recordFileEdit(removing: stub.id) }
        s.fileStubs = []
        s.runtimeStubs = []
      }
      for stub in stubs {
        let exists = s.fileStubs.contains { $0.id == stub.id } || s.runtimeStubs.contains { $0.id == stub.id }
        if exists {
          if policy == .ignore { continue }
          s.recordFileEdit(removing: stub.id)
          s.fileStubs.removeAll { $0.id == stub.id }
          s.runtimeStubs.removeAll { $0.id == stub.id }
        }
        s.runtimeStubs.append(stub)
      }
    }
  }

  /// Turns the runtime stubs saved to files into file stubs (`files`: stub id → file relative to the
  /// fixtures folder), so a reload of those files does not duplicate them.
  func markSaved(_ files: [String: String]) {
    mutate { s in
      var moved: [StubMapping] = []
      s.runtimeStubs.removeAll { stub in
        guard let file = files[stub.id] else { return false }
        var saved = stub
        saved.file = file
        saved.location = "$"
        moved.append(saved)
        return true
      }
      s.fileStubs += moved
    }
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
  func addFileStub(_ stub: StubMapping) {
    mutate { s in
      s.recordFileEdit(removing: stub.id)
      s.fileEdits[stub.id] = nil
      s.fileStubs.removeAll { $0.id == stub.id }
      s.runtimeStubs.removeAll { $0.id == stub.id }
      s.fileStubs.append(stub)
    }
  }

  /// Applies `change` to the stubs and swaps in the rebuilt table (the one way stubs change).
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
  /// Records that file stub `id` (if it is one) is no longer served: a reload must not bring it back.
  mutating func recordFileEdit(removing id: String) {
    guard let stub = fileStubs.first(where: { $0.id == id }), let file = stub.file else { return }
    fileEdits[id] = StubStore.FileEdit(file: file, replacement: nil)
  }
}
