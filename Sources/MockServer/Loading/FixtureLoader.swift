import Foundation
import HTTPCore
import Mappings
import MockJSON
import NativeSupport
import Synchronization

/// Everything loaded from a fixtures directory.
public struct FixtureSet: Sendable {
  /// Valid stubs in load order: files sorted by path, stubs in file order (later = newer for ties).
  public var stubs: [StubMapping]
  /// Envelope templates from `envelopes.json`.
  public var envelopes: EnvelopeSet
  /// Every problem, errors and warnings, in file order.
  public var problems: [FixtureProblem]
  /// WireMock 4 message stub mappings from `message-mappings/**/*.json`, in file order.
  public var messageMappings: [WebSocketDefinition.MessageMapping] = []
  /// The stamps (`fstat`) of the mapping files read, by path relative to the fixtures folder: the hot-reload
  /// watcher's baseline needs no second `stat` of each (``FixtureWatcher/start(loaded:)``).
  var loadedStamps: [String: FileTree.Stamp] = [:]

  /// Creates a set, e.g. an empty one for a server that starts without fixtures.
  public init(
    stubs: [StubMapping] = [], envelopes: EnvelopeSet = EnvelopeSet(), problems: [FixtureProblem] = []
  ) {
    self.stubs = stubs
    self.envelopes = envelopes
    self.problems = problems
  }

  /// True when any problem is an error (`serve` refuses to start unless `--skip-invalid`).
  public var hasErrors: Bool { problems.contains(where: \.isError) }
  /// Only the errors.
  public var errors: [FixtureProblem] { problems.filter(\.isError) }
  /// Only the warnings.
  public var warnings: [FixtureProblem] { problems.filter { !$0.isError } }

  /// One problem per line, then a summary line such as `2 errors, 1 warning`.
  public func report() -> String { FixtureLoader.report(problems) }
}

/// Loads a WireMock-style fixtures directory: `mappings/**/*.json` (one stub or `{"mappings": [...]}` per
/// file), bodies from `__files/`, envelope templates from `envelopes.json`, WireMock 4 message stub
/// mappings from `message-mappings/**/*.json` (one or `{"messageMappings": [...]}` per file).
public enum FixtureLoader {
  /// Loads `directory` (default `Fixtures/`).
  /// - Parameter allowEmpty: when false, a folder without `mappings/` is an error (`lint` without
  ///   `--allow-empty`); when true, a warning that says no stubs are loaded (`serve`, as WireMock).
  /// - Returns: the valid stubs, the envelopes and every problem (a stub with an error is left out; a
  ///   file with a syntax error contributes nothing).
  public static func load(directory: String = "Fixtures", allowEmpty: Bool = true) -> FixtureSet {
    // Plain system calls: Foundation's URL and FileManager code would be paged in for a handful of checks.
    let root = FileTree.standardized(directory)
    var problems: [FixtureProblem] = []
    guard FileTree.isDirectory(root) else {
      problems.append(
        .error(
          file: directory, path: "$", expected: "a fixtures directory holding mappings/",
          found: "no such directory"))
      return FixtureSet(stubs: [], envelopes: EnvelopeSet(), problems: problems)
    }

    var envelopes = EnvelopeSet()
    let envelopesPath = root + "/envelopes.json"
    if FileTree.exists(envelopesPath) {
      var d = Diagnostics(file: "envelopes.json")
      if let json = parseFile(path: envelopesPath, &d) {
        envelopes = EnvelopeSet.parse(json, diagnostics: &d)
      }
      problems += d.problems
    }

    let filesRoot = resolvedFilesRoot(root + "/__files")
    let context = StubParsingContext(
      envelopes: envelopes, readBodyFile: { readBodyFile($0, resolvedRoot: filesRoot) },
      // A file stub without `id` or `uuid` gets its stable id (`stableID`) once parsed: no random one first.
      makeID: { "" })

    let messageMappings = loadMessageMappings(root: root, context: context, &problems)

    let mappingsPath = root + "/mappings"
    guard FileTree.isDirectory(mappingsPath) else {
      if !allowEmpty {
        problems.append(
          .error(
            file: "mappings", path: "$",
            expected: "a mappings/ folder in \(directory) (pass --allow-empty to start with no stubs)",
            found: "no mappings/ folder"))
        var set = FixtureSet(stubs: [], envelopes: envelopes, problems: problems)
        set.messageMappings = messageMappings
        warnOfUnknownTriggerStubs(&set)
        return set
      }
      problems.append(
        FixtureProblem(
          severity: .warning, file: "mappings", path: "$",
          message:
            "no mappings/ folder in \(directory): starting with no stubs (add stubs with POST /__admin/mappings "
            + "or create \(directory)/mappings/*.json)"))
      var set = FixtureSet(stubs: [], envelopes: envelopes, problems: problems)
      set.messageMappings = messageMappings
      warnOfUnknownTriggerStubs(&set)
      return set
    }
    // `.json` in any case (`.JSON` from Windows exports), as WireMock reads them. Files the folder lists
    // as regular are not `stat`ed: each is opened relative to the open mappings/ folder and its `fstat`
    // gives its identity and the watcher's stamp.
    let files = FileTree.unstampedFiles(under: mappingsPath).filter {
      $0.path.lowercased().hasSuffix(".json")
    }
    .sorted { $0.path < $1.path }
    let folder = open(mappingsPath, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if folder < 0 { FileTree.noteOpenFailure() }
    defer { if folder >= 0 { _ = close(folder) } }
    // Files are read and parsed in parallel; the results are merged in file order, so load order (which
    // stub is the most recent), duplicate-id checks and the order of problems are those of one pass.
    let parsed = parseInParallel(files.count) { k in
      parseMappingFile(
        path: folder >= 0 ? files[k].path : mappingsPath + "/" + files[k].path,
        relativeTo: folder >= 0 ? folder : AT_FDCWD, file: "mappings/" + files[k].path, context: context)
    }
    var loadedStamps: [String: FileTree.Stamp] = [:]
    loadedStamps.reserveCapacity(files.count)
    // Each file once, however many paths (symbolic links) lead to it: the first path in sorted order.
    var identities = Set<FileTree.FileIdentity>()
    var kept: [ParsedFile] = []
    kept.reserveCapacity(parsed.count)
    for (k, result) in parsed.enumerated() {
      if let stamp = result.stamp {
        loadedStamps[result.file] = stamp
      }
      if let stamp = result.stamp ?? files[k].stamp, !identities.insert(stamp.identity).inserted { continue }
      kept.append(result)
    }
    var stubs: [StubMapping] = []
    stubs.reserveCapacity(parsed.reduce(0) { $0 + $1.stubs.count })
    // One set insertion per stub; where an id was first used is looked up only for a duplicate.
    var seenIDs = Set<String>()
    seenIDs.reserveCapacity(stubs.capacity)
    for result in kept {
      var from = 0
      for entry in result.stubs {
        problems += result.problems[from..<entry.problemsBefore]
        from = entry.problemsBefore
        if !seenIDs.insert(entry.stub.id).inserted {
          let first = stubs.first { $0.id == entry.stub.id }.map { "\($0.file ?? "") \($0.location)" } ?? ""
          var d = Diagnostics(file: result.file)
          d.error(
            JSONPathText.child(entry.stub.location, entry.uuidOnly ? "uuid" : "id"),
            expected: "an id used by no other stub",
            found: "\(JSONValue.quoted(entry.stub.id)), already used in \(first)")
          problems += d.problems
          continue
        }
        stubs.append(entry.stub)
      }
      problems += result.problems[from...]
    }
    var set = FixtureSet(stubs: stubs, envelopes: envelopes, problems: problems)
    set.loadedStamps = loadedStamps
    set.messageMappings = messageMappings
    warnOfUnknownTriggerStubs(&set)
    return set
  }

  /// A warning for each `http-stub` trigger whose `stubId` no stub of the folder has: it never fires unless
  /// a stub with that id is added at run time (`POST /__admin/mappings`), which is why it is not an error.
  static func warnOfUnknownTriggerStubs(_ set: inout FixtureSet) {
    let triggers = set.messageMappings.compactMap { m -> (WebSocketDefinition.MessageMapping, String)? in
      guard case .stub(let id)? = m.httpTrigger else { return nil }
      return (m, id)
    }
    guard !triggers.isEmpty else { return }
    let ids = Set(set.stubs.map(\.id))
    for (mapping, id) in triggers where !ids.contains(id) {
      set.problems.append(
        FixtureProblem(
          severity: .warning, file: mapping.file ?? "message-mappings",
          path: JSONPathText.child(JSONPathText.child(mapping.location, "trigger"), "stubId"),
          message:
            "http-stub trigger names stub \(JSONValue.quoted(id)), which no stub in mappings/ has: it fires only "
            + "once a stub with that id is added at run time"))
    }
  }

  /// `message-mappings/**/*.json` (absent: none), files in path order. A mapping without `id` or `uuid`
  /// gets a stable one from its file and JSON path; an id used twice is an error at the second use.
  static func loadMessageMappings(
    root: String, context: StubParsingContext, _ problems: inout [FixtureProblem]
  ) -> [WebSocketDefinition.MessageMapping] {
    let folder = root + "/message-mappings"
    guard FileTree.isDirectory(folder) else { return [] }
    let files = FileTree.unstampedFiles(under: folder).map(\.path).filter {
      $0.lowercased().hasSuffix(".json")
    }
    .sorted()
    var out: [WebSocketDefinition.MessageMapping] = []
    var firstUse: [String: String] = [:]
    for path in files {
      let file = "message-mappings/" + path
      var d = Diagnostics(file: file)
      if let json = parseFile(path: folder + "/" + path, allowComments: true, &d) {
        for var m in StubParser.parseMessageMappings(json, context: context, &d) {
          m.file = file
          if m.id.isEmpty {
            m.id = SplitMix64.stableUUIDString("mockserver-message-stub\u{0}\(file)\u{0}\(m.location)")
            if var source = m.source.objectValue {
              if let i = source.members.firstIndex(where: { $0.key == "id" }) {
                source.members[i].value = .string(m.id)
              } else {
                source.members.insert(JSONObject.Member(key: "id", value: .string(m.id)), at: 0)
              }
              m.source = .object(source)
            }
          }
          if let first = firstUse[m.id] {
            d.error(
              JSONPathText.child(m.location, "id"), expected: "an id used by no other message stub mapping",
              found: "\(JSONValue.quoted(m.id)), already used in \(first)")
            continue
          }
          firstUse[m.id] = "\(file) \(m.location)"
          out.append(m)
        }
      }
      problems += d.problems
    }
    return out
  }

  /// One mapping file's valid stubs and its problems, in the order a single pass finds them.
  struct ParsedFile: Sendable {
    struct Entry: Sendable {
      var stub: StubMapping
      /// It has `uuid` but no `id` (a duplicate is reported at `uuid`).
      var uuidOnly: Bool
      /// How many of the file's problems come before this stub's duplicate-id check.
      var problemsBefore: Int
    }
    var file: String
    /// The file's stamp from `fstat` when it was read.
    var stamp: FileTree.Stamp?
    var stubs: [Entry] = []
    var problems: [FixtureProblem] = []
  }

  /// Reads and parses one mapping file (`path` relative to the open folder `directory`; `file`: its path
  /// relative to the fixtures folder, for problems). Touches no shared state, so files can be parsed on
  /// several threads at once.
  static func parseMappingFile(
    path: String, relativeTo directory: Int32, file: String, context: StubParsingContext
  ) -> ParsedFile {
    var d = Diagnostics(file: file)
    var result = ParsedFile(file: file)
    guard let (bytes, stamp) = FileTree.readFile(path, relativeTo: directory) else {
      d.error("$", expected: "a readable file", found: "a file that cannot be read")
      result.problems = d.problems
      return result
    }
    result.stamp = stamp
    guard let json = parseJSON(bytes, allowComments: true, &d) else {
      result.problems = d.problems
      return result
    }
    for (stub, location) in stubObjects(json, &d) {
      let before = d.errorCount
      guard var s = StubParser.parse(stub, location: location, context: context, diagnostics: &d),
        d.errorCount == before
      else { continue }
      if stub["id"] == nil, stub["uuid"] == nil { s.id = stableID(file: file, location: location) }
      result.stubs.append(
        ParsedFile.Entry(
          stub: s, uuidOnly: stub["uuid"] != nil && stub["id"] == nil, problemsBefore: d.problems.count))
    }
    result.problems = d.problems
    return result
  }

  /// `work(0..<count)` on the cores this process may use, results in index order. Small counts, and a
  /// process limited to one core (`taskset -c 0`: its affinity mask, see ``ProcessResources/availableCores``), run inline: a thread costs more than a few files, and on one core worker threads only add
  /// context switches and a malloc arena per thread, grown by an `mprotect` every few pages.
  static func parseInParallel<T: Sendable>(_ count: Int, _ work: @Sendable (Int) -> T) -> [T] {
    let cores = ProcessResources.availableCores
    let chunks = count < 64 || cores < 2 ? 1 : min(count / 32, 4 * cores)
    guard chunks > 1 else { return (0..<count).map(work) }
    let parts = Mutex([[T]?](repeating: nil, count: chunks))
    DispatchQueue.concurrentPerform(iterations: chunks) { c in
      let range = (count * c / chunks)..<(count * (c + 1) / chunks)
      let done = range.map(work)
      parts.withLock { $0[c] = done }
    }
    return parts.withLock { $0.flatMap { $0 ?? [] } }
  }

  /// The id of a file stub that has neither `id` nor `uuid`: a UUID made from its file and JSON path, so
  /// it stays the same across reloads (admin edits, journal entries and logs keep referring to it).
  static func stableID(file: String, location: String) -> String {
    SplitMix64.stableUUIDString("mockserver-stub\u{0}\(file)\u{0}\(location)")
  }

  /// Validates `directory` without serving it: every problem `load` would report.
  public static func lint(directory: String = "Fixtures", allowEmpty: Bool = true) -> [FixtureProblem] {
    load(directory: directory, allowEmpty: allowEmpty).problems
  }

  /// `mockserver lint [DIR]`: the report text and the exit status (1 when any error, else 0).
  public static func runLint(directory: String = "Fixtures", allowEmpty: Bool = true) -> (
    output: String, exitCode: Int32
  ) {
    let set = load(directory: directory, allowEmpty: allowEmpty)
    var summary = "\(set.stubs.count) stub\(set.stubs.count == 1 ? "" : "s") valid"
    let messages = set.messageMappings.count
    if messages > 0 { summary += ", \(messages) message stub mapping\(messages == 1 ? "" : "s") valid" }
    return (set.report() + " (" + summary + ")", set.hasErrors ? 1 : 0)
  }

  /// How many warnings of one kind are printed before the rest are summarised.
  public static let warningsShownPerKind = 3

  /// One problem per line (`file: path: message`; warnings `file: path: warning: message`), then
  /// `N errors, M warnings`. After ``warningsShownPerKind`` warnings of one kind (the same message once
  /// quoted values and numbers are set aside), the rest of that kind are counted in one line.
  public static func report(_ problems: [FixtureProblem]) -> String {
    let errors = problems.filter(\.isError).count
    let warnings = problems.count - errors
    var lines: [String] = []
    var seen: [String: Int] = [:]
    var order: [String] = []
    for p in problems {
      guard !p.isError else {
        lines.append(p.description)
        continue
      }
      let kind = warningKind(p.message)
      let n = seen[kind, default: 0]
      if n == 0 { order.append(kind) }
      seen[kind] = n + 1
      if n < warningsShownPerKind { lines.append(p.description) }
    }
    for kind in order {
      let n = seen[kind, default: 0]
      guard n > warningsShownPerKind else { continue }
      let more = n - warningsShownPerKind
      lines.append("… and \(more) more warning\(more == 1 ? "" : "s") like: \(kind)")
    }
    lines.append("\(errors) error\(errors == 1 ? "" : "s"), \(warnings) warning\(warnings == 1 ? "" : "s")")
    return lines.joined(separator: "\n")
  }

  /// A warning's kind: its message with quoted text shown as `"…"` and numbers as `N`.
  static func warningKind(_ message: String) -> String {
    var out = ""
    var inQuote = false
    var lastDigit = false
    for c in message {
      if c == "\"" {
        if !inQuote { out += "\"…\"" }
        inQuote.toggle()
        continue
      }
      if inQuote { continue }
      if c.isNumber {
        if !lastDigit { out += "N" }
        lastDigit = true
        continue
      }
      lastDigit = false
      out.append(c)
    }
    return out
  }

  /// The stub objects of a mapping file with their JSON paths.
  static func stubObjects(_ json: JSONValue, _ d: inout Diagnostics) -> [(JSONValue, String)] {
    guard case .object(let o) = json else {
      d.error("$", expected: "a stub mapping object or {\"mappings\": [ … ]}", found: json)
      return []
    }
    guard let list = o["mappings"] else { return [(json, "$")] }
    for key in o.keys where key != "mappings" && key != "meta" {
      d.error(
        JSONPathText.child("$", key), expected: "only mappings (and meta) beside a mappings list",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    guard let items = list.arrayValue else {
      d.error("$.mappings", expected: "an array of stub mappings", found: list)
      return []
    }
    return items.enumerated().map { ($1, "$.mappings[\($0)]") }
  }

  /// Reads and parses the JSON file at `path`, reporting unreadable files and syntax errors.
  static func parseFile(path: String, allowComments: Bool = false, _ d: inout Diagnostics) -> JSONValue? {
    guard let bytes = FileTree.contents(path) else {
      d.error("$", expected: "a readable file", found: "a file that cannot be read")
      return nil
    }
    return parseJSON(bytes, allowComments: allowComments, &d)
  }

  /// Parses JSON text read from a file, reporting a syntax error with its line and column.
  static func parseJSON(_ bytes: [UInt8], allowComments: Bool, _ d: inout Diagnostics) -> JSONValue? {
    do {
      return try JSONValue.parse(bytes: bytes, allowComments: allowComments)
    } catch {
      d.error("line \(error.line), column \(error.column)", expected: error.expected, found: error.found)
      return nil
    }
  }

  /// Reads `relative` under `filesRoot` (an absolute path), refusing anything whose resolved path (links
  /// followed) leaves it.
  static func readBodyFile(_ relative: String, filesRoot: String) -> Result<
    [UInt8], StubParsingContext.BodyFileError
  > {
    readBodyFile(relative, resolvedRoot: resolvedFilesRoot(filesRoot))
  }

  /// `filesRoot` with its links followed (as it is when it does not exist yet): what
  /// ``readBodyFile(_:resolvedRoot:)`` confines reads to. A load resolves it once for all its stubs.
  static func resolvedFilesRoot(_ filesRoot: String) -> String {
    FileTree.realPath(filesRoot) ?? FileTree.standardized(filesRoot)
  }

  /// Reads `relative` under `rootPath` (``resolvedFilesRoot(_:)``), refusing anything whose resolved path
  /// leaves it.
  static func readBodyFile(_ relative: String, resolvedRoot rootPath: String) -> Result<
    [UInt8], StubParsingContext.BodyFileError
  > {
    guard let target = FileTree.realPath(rootPath + "/" + relative) else {
      // Nothing there: a path that leaves the folder even before links are followed still escapes it.
      let lexical = FileTree.standardized(rootPath + "/" + relative)
      return .failure(lexical.hasPrefix(rootPath + "/") ? .notFound : .escapes)
    }
    guard target.hasPrefix(rootPath + "/") else { return .failure(.escapes) }
    guard let (bytes, _) = FileTree.readFile(target) else { return .failure(.notFound) }
    return .success(bytes)
  }
}
