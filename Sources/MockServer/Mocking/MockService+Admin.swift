import Foundation
import Mappings

/// What an import does with a stub whose id is already present (`importOptions.duplicatePolicy`).
public enum StubImportPolicy: String, Sendable {
  /// Replace the existing stub (WireMock's default).
  case overwrite = "OVERWRITE"
  /// Keep the existing stub and skip the imported one.
  case ignore = "IGNORE"
}

extension MockService {
  /// Called (once, off the event loop) after `POST /__admin/shutdown` was answered; nil when the host
  /// does not support being stopped that way (the endpoint then answers 501).
  public var onShutdownRequested: (@Sendable () -> Void)? {
    get { shutdownHandler.withLock { $0 } }
    set { shutdownHandler.withLock { $0 = newValue } }
  }

  /// The stub with this id, if any.
  public func stub(id: String) -> StubMapping? {
    state.withLock { s in
      s.runtimeStubs.last(where: { $0.id == id }) ?? s.fileStubs.first(where: { $0.id == id })
    }
  }

  /// The current stub table and scenario states (a snapshot).
  var matchingSnapshot: (table: StubTable, scenarios: [String: String]) {
    state.withLock { ($0.table, $0.scenarios) }
  }

  /// Adds `stubs` as runtime stubs in one step (one table rebuild).
  /// - Parameters:
  ///   - policy: what to do with an id that is already present.
  ///   - deleteAllNotInImport: remove every stub (file and runtime) first.
  public func importStubs(_ stubs: [StubMapping], policy: StubImportPolicy, deleteAllNotInImport: Bool) {
    mutateStubs { s in
      if deleteAllNotInImport {
        s.fileStubs = []
        s.runtimeStubs = []
      }
      for stub in stubs {
        let exists = s.fileStubs.contains { $0.id == stub.id } || s.runtimeStubs.contains { $0.id == stub.id }
        if exists {
          if policy == .ignore { continue }
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
    mutateStubs { s in
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
    guard let directory = configuration.fixturesDirectory else { return nil }
    let set = FixtureLoader.load(directory: directory)
    if !set.hasErrors { replaceFileStubs(set, keepRuntimeStubs: keepRuntimeStubs) }
    return set
  }
}
