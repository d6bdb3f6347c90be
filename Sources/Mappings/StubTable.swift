import HTTPCore
import MockJSON
import Templating

/// The outcome of matching one request.
public enum StubMatch: Sendable {
  /// The winning stub and the path parameters of its `urlPathTemplate` (empty otherwise).
  case matched(StubMapping, pathParameters: [String: String])
  /// No stub matched; the report lists the nearest stubs and what failed (answer 404 with
  /// `report.jsonBody()` and log `report.text()`).
  case unmatched(NearMissReport)
  /// The request-target has invalid percent-encoding (answer 400 with `error.description`).
  case invalidRequest(URLDecodingError)
}

/// An immutable snapshot of stub mappings, built once and shared between threads (a class, so taking the
/// current snapshot for a request is one reference, not a copy of every index).
///
/// Stubs with a literal `url` or `urlPath` are indexed by method and canonical path (dictionary
/// lookups) and `urlPathTemplate` stubs by path segment (``TemplateTrie``), so matching them costs about
/// the same with 10 or 10,000 stubs; pattern and any-URL stubs are checked in rank order. A request whose
/// winner its method and path decide alone is answered without building the ``RequestView``
/// (``matchByMethodAndPath(_:)``). The winner is the matching stub with the lowest `priority` number; among
/// equal priorities the one added last (latest in `stubs`).
public final class StubTable: Sendable {
  /// Stubs in the order they were added (later = newer).
  public let stubs: [StubMapping]

  /// A key of the literal indexes while they are built.
  private struct Key: Hashable {
    var method: String
    var value: String
  }

  /// Stub indexes by (method or "" for ANY, canonical path) for `urlPath` stubs.
  package let pathIndex: LiteralIndex
  /// Stub indexes by (method or "", canonical url) for `url` stubs.
  package let urlIndex: LiteralIndex
  /// Per stub: its pattern is a method (or ANY) and a literal `urlPath` or a `urlPathTemplate` (without
  /// `pathParameters` matchers) and nothing else, and it needs no scenario state: matching it needs only
  /// the request's method and path.
  package let pathOnly: [Bool]
  /// True when a stub has a `state-matcher` custom matcher: requests that reach the full matcher then carry
  /// a ``StateMatchEnvironment``.
  public let hasStateMatchers: Bool
  /// The best-ranked stub of `linear` (patterns, any URL), if any.
  package let bestLinear: Int?
  /// `urlPathTemplate` stubs in a segment trie, so templates are found without scanning them all.
  package let templates: TemplateTrie
  /// Other stubs (regular expressions, any URL), in rank order.
  package let linear: [Int]

  /// Builds the table; `stubs` order is addition order.
  public init(_ stubs: [StubMapping]) {
    self.stubs = stubs
    var pathIndex: [Key: [Int]] = [:]
    var urlIndex: [Key: [Int]] = [:]
    var linear: [Int] = []
    var templates = TemplateTrie()
    for (k, s) in stubs.enumerated() {
      let m = s.request.method?.rawValue ?? ""
      switch s.request.url {
      case .urlPath(let p): pathIndex[Key(method: m, value: p), default: []].append(k)
      case .url(let u): urlIndex[Key(method: m, value: u), default: []].append(k)
      case .urlPathTemplate(let t): templates.insert(t, stub: k)
      default: linear.append(k)
      }
    }
    templates.compact()
    self.templates = templates
    pathOnly = stubs.map { stub in
      let r = stub.request
      switch r.url {
      case .urlPath, .urlPathTemplate: break
      default: return false
      }
      return r.methodSet == nil && r.pathParameters.isEmpty && r.queryParameters.isEmpty && r.headers.isEmpty
        && r.cookies.isEmpty
        && r.basicAuthCredentials == nil && r.bodyPatterns.isEmpty && stub.requiredScenarioState == nil
        && r.formParameters.isEmpty && r.multipartPatterns.isEmpty && !r.hasConnectionParts
        && r.pact == nil && r.stateMatcher == nil
    }
    hasStateMatchers = stubs.contains { $0.request.stateMatcher != nil }
    let rank: (Int, Int) -> Bool = { a, b in
      stubs.withUnsafeBufferPointer { StubTable.outranks(a, b, in: $0) }
    }
    var best: Int?
    for k in linear where best.map({ rank(k, $0) }) ?? true { best = k }
    bestLinear = best
    self.pathIndex = LiteralIndex(pathIndex.map { ($0.key.method, $0.key.value, $0.value.sorted(by: rank)) })
    self.urlIndex = LiteralIndex(urlIndex.map { ($0.key.method, $0.key.value, $0.value.sorted(by: rank)) })
    self.linear = linear.sorted(by: rank)
  }

  /// The winner of a request that its method and path decide alone, with the path parameters of a
  /// `urlPathTemplate`.
  package struct PathMatch {
    /// The winning stub.
    package var stub: StubMapping
    /// Its index in ``StubTable/stubs``.
    package var index: Int
    /// The variables of its `urlPathTemplate` (empty for a literal `urlPath`, and when the match was
    /// asked to defer them: ``StubTable/pathParameters(of:for:)`` makes them then).
    package var pathParameters: [String: String]
  }

  /// The variables of `stub`'s `urlPathTemplate` in `head`'s path (empty for any other stub, or a path of
  /// another shape). What a match that deferred them (`deferringPathParameters`) would have given.
  package static func pathParameters(of stub: StubMapping, for head: HTTPRequestHead) -> [String: String] {
    guard case .urlPathTemplate(let template) = stub.request.url,
      var path = try? PercentDecoding.canonicalPath(head.rawPath)
    else { return [:] }
    return path.withUTF8 { template.match(utf8: $0) } ?? [:]
  }

  /// The winner found from the method and path alone, or nil when the full match is needed. It is the
  /// same stub the full match would pick: among the stubs that could match this method and path (the
  /// literal-path stubs of this method or ANY, and the templates of the same shape and method), the
  /// best-ranked one needs nothing but the method and path, and it outranks every pattern and any-URL
  /// stub (`url` stubs make the fast path step aside). The target must need no decoding (no `%` in path
  /// or query), so the full match could not have reported invalid percent-encoding either, and the
  /// path's canonical form is the path as sent.
  package func matchByMethodAndPath(_ head: HTTPRequestHead, deferringPathParameters: Bool = false)
    -> PathMatch?
  {
    guard urlIndex.isEmpty else { return nil }
    // The method alone is captured: a closure holding `head` copied the whole head for every candidate.
    let requestMethod = head.method
    var target = head.target
    var method = requestMethod.rawValue
    return target.withUTF8 { targetBytes -> PathMatch? in
      // Origin-form without `%` anywhere; the path is what precedes `?` or `#` (``HTTPRequestHead/rawPath``
      // of an origin-form target), read in the same scan.
      guard targetBytes.first == UInt8(ascii: "/") else { return nil }
      var pathEnd = targetBytes.count
      for (i, b) in targetBytes.enumerated() {
        if b == 37 { return nil }
        if (b == 63 || b == 35) && pathEnd == targetBytes.count { pathEnd = i }
      }
      let bytes = UnsafeBufferPointer(rebasing: targetBytes[0..<pathEnd])
      var best: Int?
      if !pathIndex.isEmpty {
        best = method.withUTF8 { pathIndex.first(method: $0, value: bytes) }
        if pathIndex.hasAnyMethod,
          let k = pathIndex.first(method: UnsafeBufferPointer(start: nil, count: 0), value: bytes),
          best.map({ outranks(k, $0) }) ?? true
        {
          best = k
        }
      }
      // The candidates' method and rank read through one borrowed buffer: indexing the `stubs` property
      // from the closure retained the array and copied parts of the pattern per candidate.
      stubs.withUnsafeBufferPointer { stubs in
        templates.forEachCandidate(utf8: bytes) { t in
          if let method = stubs[t].request.method, method != requestMethod { return }
          if best.map({ StubTable.outranks(t, $0, in: stubs) }) ?? true { best = t }
        }
      }
      guard let k = best, pathOnly[k] else { return nil }
      if let other = bestLinear, !outranks(k, other) { return nil }
      let stub = stubs[k]
      guard case .urlPathTemplate(let template) = stub.request.url else {
        return PathMatch(stub: stub, index: k, pathParameters: [:])
      }
      // The trie has checked the shape (each literal segment equal, each variable non-empty): the
      // parameters, a dictionary of new strings, are made only for a caller that reads them.
      if deferringPathParameters { return PathMatch(stub: stub, index: k, pathParameters: [:]) }
      guard let parameters = template.match(utf8: bytes) else { return nil }
      return PathMatch(stub: stub, index: k, pathParameters: parameters)
    }
  }

  /// True when stub `a` outranks stub `b`.
  package func outranks(_ a: Int, _ b: Int) -> Bool {
    stubs.withUnsafeBufferPointer { StubTable.outranks(a, b, in: $0) }
  }

  /// True when `stubs[a]` outranks `stubs[b]`: the lower `priority` wins, then the later added.
  private static func outranks(_ a: Int, _ b: Int, in stubs: UnsafeBufferPointer<StubMapping>) -> Bool {
    stubs[a].priority != stubs[b].priority ? stubs[a].priority < stubs[b].priority : a > b
  }

  /// Matches a raw request: builds the ``RequestView`` and calls ``match(_:scenarioState:nearMissLimit:)``.
  public func match(
    _ request: HTTPRequest, scenarioState: (String) -> String, nearMissLimit: Int = 3,
    connection: RequestView.Connection? = nil
  ) -> StubMatch {
    matchIndexed(request, scenarioState: scenarioState, nearMissLimit: nearMissLimit, connection: connection)
      .match
  }

  /// The same as `match(_:scenarioState:nearMissLimit:connection:)`, with the winner's index in
  /// ``stubs`` (nil unless matched), for what is kept per stub of this table (prepared responses): an
  /// array index instead of a hash of the stub's id. With `deferringPathParameters`, a `urlPathTemplate`
  /// winner may come with empty parameters: ``pathParameters(of:for:)`` makes them when they are read.
  package func matchIndexed(
    _ request: HTTPRequest, scenarioState: (String) -> String, nearMissLimit: Int = 3,
    connection: RequestView.Connection? = nil, deferringPathParameters: Bool = false,
    state: StateMatchSource? = nil
  ) -> (match: StubMatch, stubIndex: Int?) {
    if let fast = matchByMethodAndPath(request.head, deferringPathParameters: deferringPathParameters) {
      return (.matched(fast.stub, pathParameters: fast.pathParameters), fast.index)
    }
    do {
      var view = try RequestView(request, connection: connection)
      if hasStateMatchers, let state {
        view.stateEnvironment = StateMatchEnvironment(
          lookup: state.lookup,
          request: TemplateRequest.model(
            request, scheme: view.scheme, port: connection?.localPort ?? view.port,
            clientIP: view.clientIP ?? ""),
          environment: state.environment)
      }
      return matchIndexed(view, scenarioState: scenarioState, nearMissLimit: nearMissLimit)
    } catch {
      return (.invalidRequest(error), nil)
    }
  }

  /// Finds the winning stub for `request`.
  /// - Parameters:
  ///   - scenarioState: the current state of a scenario by name (return `"Started"` for unknown ones).
  ///   - nearMissLimit: how many near misses to report when nothing matches.
  /// - Returns: the winner and its path parameters, or the near-miss report.
  public func match(
    _ request: RequestView, scenarioState: (String) -> String, nearMissLimit: Int = 3
  ) -> StubMatch {
    matchIndexed(request, scenarioState: scenarioState, nearMissLimit: nearMissLimit).match
  }

  private func matchIndexed(
    _ request: RequestView, scenarioState: (String) -> String, nearMissLimit: Int
  ) -> (match: StubMatch, stubIndex: Int?) {
    var best: (Int, [String: String])?
    func consider(_ list: ArraySlice<Int>?) {
      guard let list else { return }
      for k in list {
        if let b = best, !outranks(k, b.0) { return }
        let stub = stubs[k]
        if let name = stub.scenarioName, let required = stub.requiredScenarioState,
          scenarioState(name) != required
        {
          continue
        }
        let (ok, params) = stub.request.matches(request)
        if ok {
          best = (k, params)
          return
        }
      }
    }
    let m = request.method.rawValue
    if !pathIndex.isEmpty {
      consider(pathIndex.stubs(method: m, value: request.path))
      if pathIndex.hasAnyMethod { consider(pathIndex.stubs(method: "", value: request.path)) }
    }
    if !urlIndex.isEmpty {
      consider(urlIndex.stubs(method: m, value: request.url))
      if urlIndex.hasAnyMethod { consider(urlIndex.stubs(method: "", value: request.url)) }
    }
    let templateCandidates = templates.candidates(for: request.path)
    if !templateCandidates.isEmpty { consider(templateCandidates.sorted(by: outranks)[...]) }
    consider(linear[...])
    if let (k, params) = best { return (.matched(stubs[k], pathParameters: params), k) }
    return (.unmatched(nearMisses(request, scenarioState: scenarioState, limit: nearMissLimit)), nil)
  }

  /// The `limit` stubs closest to matching `request`, nearest first (every stub is evaluated in detail;
  /// only used when nothing matched). Ranked by ``MatchResult/distance`` (ties: the stub that would win).
  public func nearMisses(
    _ request: RequestView, scenarioState: (String) -> String, limit: Int = 3
  ) -> NearMissReport {
    var scored: [(Int, NearMiss)] = []
    scored.reserveCapacity(stubs.count)
    // One budget of string-distance work for the whole report, not one per stub.
    StringDistance.withRequestBudget {
      score(request, scenarioState: scenarioState, into: &scored)
    }
    scored.sort { a, b in a.1.distance != b.1.distance ? a.1.distance < b.1.distance : outranks(a.0, b.0) }
    return NearMissReport(
      method: request.method.rawValue, url: request.target, nearMisses: scored.prefix(max(limit, 0)).map(\.1))
  }

  /// Every stub's near miss for `request`, with its index.
  private func score(
    _ request: RequestView, scenarioState: (String) -> String, into scored: inout [(Int, NearMiss)]
  ) {
    for (k, stub) in stubs.enumerated() {
      var (result, _) = stub.request.evaluate(request, detailed: true)
      if let name = stub.scenarioName, let required = stub.requiredScenarioState {
        let state = scenarioState(name)
        _ = result.record(
          "scenario \(name)", weight: MatchResult.partWeight, matched: state == required,
          expected: "state \(JSONValue.quoted(required))", actual: "state \(JSONValue.quoted(state))")
      }
      scored.append(
        (
          k,
          NearMiss(
            stubID: stub.id, stubName: stub.name, file: stub.file, location: stub.location,
            distance: result.distance, mismatches: result.failures)
        ))
    }
  }
}

/// `urlPathTemplate` stubs arranged by path segment: literal segments in dictionaries, variables in one
/// wildcard branch, so a lookup walks the request path once instead of trying every template.
package struct TemplateTrie: Sendable {
  package struct Node: Sendable {
    /// The first literal branch, inline: most nodes have one at most (`/users/{id}/items`: one after each
    /// variable), and a one-entry dictionary cost about 160 bytes per template (issue 12's memory figures).
    var firstLiteral: (text: String, node: Int)?
    /// Further literal branches.
    var moreLiterals: [String: Int] = [:]
    var variable: Int?
    var stubs: [Int] = []

    /// The branch for literal segment `text`.
    func literal(_ text: Substring) -> Int? {
      guard let first = firstLiteral else { return nil }
      if text == first.text { return first.node }
      return moreLiterals.isEmpty ? nil : moreLiterals[String(text)]
    }

    /// The branch for the literal segment whose UTF-8 bytes are `bytes` (a `String` is made only to look
    /// in ``moreLiterals``).
    func literal(utf8 bytes: UnsafeBufferPointer<UInt8>) -> Int? {
      guard let first = firstLiteral else { return nil }
      if first.text.hasUTF8Bytes(bytes) { return first.node }
      return moreLiterals.isEmpty ? nil : moreLiterals[String(decoding: bytes, as: UTF8.self)]
    }
  }
  private(set) var nodes = [Node()]

  package mutating func insert(_ template: PathTemplate, stub: Int) {
    var node = 0
    for segment in template.segments {
      switch segment {
      case .literal(let text):
        if let next = nodes[node].literal(Substring(text)) {
          node = next
        } else {
          nodes.append(Node())
          if nodes[node].firstLiteral == nil {
            nodes[node].firstLiteral = (text, nodes.count - 1)
          } else {
            nodes[node].moreLiterals[text] = nodes.count - 1
          }
          node = nodes.count - 1
        }
      case .variable:
        if let next = nodes[node].variable {
          node = next
        } else {
          nodes.append(Node())
          nodes[node].variable = nodes.count - 1
          node = nodes.count - 1
        }
      }
    }
    nodes[node].stubs.append(stub)
  }

  /// Drops the spare capacity that appending left in the node array (up to half of it), once the trie is
  /// complete.
  package mutating func compact() {
    var tight: [Node] = []
    tight.reserveCapacity(nodes.count)
    tight.append(contentsOf: nodes)
    nodes = tight
  }

  /// Stubs whose template has the same shape as `path` (canonical): each literal segment equal, each
  /// variable segment non-empty. Unordered.
  package func candidates(for path: String) -> [Int] {
    var result: [Int] = []
    forEachCandidate(for: path) { result.append($0) }
    return result
  }

  /// Calls `body` with each stub whose template has the same shape as `path` (see ``candidates(for:)``),
  /// walking the path once without building arrays.
  package func forEachCandidate(for path: String, _ body: (Int) -> Void) {
    guard nodes.count > 1 else { return }
    var path = path
    path.withUTF8 { forEachCandidate(utf8: $0, body) }
  }

  /// ``forEachCandidate(for:_:)`` over the path's UTF-8 bytes.
  package func forEachCandidate(utf8 path: UnsafeBufferPointer<UInt8>, _ body: (Int) -> Void) {
    guard nodes.count > 1 else { return }
    nodes.withUnsafeBufferPointer { nodes in TemplateTrie.visit(nodes, 0, path, from: 0, body) }
  }

  /// Matches the segment of `path` starting at `start` against the branches of `node`, depth first.
  private static func visit(
    _ nodes: UnsafeBufferPointer<Node>, _ node: Int, _ path: UnsafeBufferPointer<UInt8>, from start: Int,
    _ body: (Int) -> Void
  ) {
    var end = start
    while end < path.count, path[end] != UInt8(ascii: "/") { end += 1 }
    let last = end == path.count
    if let n = nodes[node].literal(utf8: UnsafeBufferPointer(rebasing: path[start..<end])) {
      if last {
        for s in nodes[n].stubs { body(s) }
      } else {
        visit(nodes, n, path, from: end + 1, body)
      }
    }
    if start != end, let v = nodes[node].variable {
      if last {
        for s in nodes[v].stubs { body(s) }
      } else {
        visit(nodes, v, path, from: end + 1, body)
      }
    }
  }
}
