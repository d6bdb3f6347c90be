import HTTPCore
import MockJSON

/// A Handlebars template in WireMock's dialect, compiled once and rendered per request.
///
/// ```swift
/// let template = try Template("Hello {{request.query.name}}")
/// let text = template.render(TemplateContext(request: model)).text
/// ```
public struct Template: Sendable, Hashable, CustomStringConvertible {
  /// The template text.
  public let source: String
  package let nodes: [TemplateNode]
  /// The members of `request` the template reads (`path`, `headers`, …), or nil when it may read any
  /// (`{{toJson request}}`, `../`, `@root`): the request model is built with these only.
  public let requestFields: Set<String>?
  /// The parts of a template the direct renderer writes straight from the request, nil when it needs the
  /// general renderer (see ``renderDirect(_:pathParameters:escapesHTML:)``).
  let direct: [DirectPart]?

  /// Compiles `source`.
  /// - Throws: ``TemplateSyntaxError`` for malformed tags, unbalanced blocks and unknown helpers.
  public init(_ source: String) throws(TemplateSyntaxError) {
    self.source = source
    var parser = TemplateParser(source, isHelper: { TemplateHelpers.isKnown($0) })
    nodes = try parser.parse()
    var fields: Set<String>? = []
    Template.collectFields(nodes, into: &fields)
    requestFields = fields
    direct = Template.directParts(nodes)
  }

  static func collectFields(_ nodes: [TemplateNode], into fields: inout Set<String>?) {
    for node in nodes {
      switch node {
      case .text: break
      case .output(let e, _): collectFields(e, into: &fields)
      case .block(let b):
        for p in b.params { collectFields(p, into: &fields) }
        for (_, e) in b.hash { collectFields(e, into: &fields) }
        collectFields(b.body, into: &fields)
        if let inverse = b.inverse { collectFields(inverse, into: &fields) }
      }
    }
  }

  static func collectFields(_ e: TemplateExpression, into fields: inout Set<String>?) {
    switch e {
    case .literal: break
    case .call(_, let params, let hash):
      for p in params { collectFields(p, into: &fields) }
      for (_, h) in hash { collectFields(h, into: &fields) }
    case .path(let p):
      if p.isData {
        if p.segments.first == "root" { fields = nil }
      } else if p.depth > 0 || p.segments.isEmpty {
        fields = nil
      } else if p.segments[0] == "request" {
        if p.segments.count > 1 { fields?.insert(p.segments[1]) } else { fields = nil }
      }
    }
  }

  /// True when the text has no tags: rendering returns it unchanged.
  public var isConstant: Bool {
    nodes.allSatisfy {
      if case .text = $0 { return true }
      return false
    }
  }

  /// True when `text` contains anything that would be a tag (`{{`).
  public static func mayContainTags(_ text: String) -> Bool {
    var text = text
    return text.withUTF8 { containsDoubleBrace($0) }
  }

  /// ``mayContainTags(_:)`` for UTF-8 text held as bytes (a stub's body), without making a `String` of it.
  public static func mayContainTags(utf8 bytes: [UInt8]) -> Bool {
    bytes.withUnsafeBufferPointer { containsDoubleBrace($0) }
  }

  private static func containsDoubleBrace(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var previousWasBrace = false
    for byte in bytes {
      if byte == UInt8(ascii: "{") {
        if previousWasBrace { return true }
        previousWasBrace = true
      } else {
        previousWasBrace = false
      }
    }
    return false
  }

  /// The template text.
  public var description: String { source }

  /// Equal when the texts are equal.
  public static func == (a: Template, b: Template) -> Bool { a.source == b.source }
  /// Hash of the text.
  public func hash(into hasher: inout Hasher) { hasher.combine(source) }

  /// Renders the template for one request.
  /// - Returns: the text and the runtime problems met (helper errors, which also appear in the text as
  ///   WireMock writes them, `[ERROR: …]`).
  public func render(_ context: TemplateContext) -> TemplateRendering {
    let state = RenderState(context: context)
    state.out.reserveCapacity(source.utf8.count + 64)
    state.render(nodes)
    return TemplateRendering(
      text: String(decoding: state.out, as: UTF8.self), problems: state.problems,
      budgetExceeded: state.budgetExceeded)
  }

  /// Renders the template for one request as UTF-8 bytes (what a response body sends when its charset is
  /// UTF-8: no text is built in between).
  /// - Returns: the bytes and the runtime problems met, as ``render(_:)`` returns them, and the budget the
  ///   rendering passed (nil when it kept to its budgets; see ``TemplateRendering/budgetExceeded``).
  public func renderUTF8(_ context: TemplateContext) -> (
    bytes: [UInt8], problems: [String], budgetExceeded: String?
  ) {
    let state = RenderState(context: context)
    state.out.reserveCapacity(source.utf8.count + 64)
    state.render(nodes)
    return (state.out, state.problems, state.budgetExceeded)
  }
}

/// The result of rendering a template.
public struct TemplateRendering: Sendable, Hashable {
  /// The rendered text.
  public var text: String
  /// Runtime problems, in order (empty when none).
  public var problems: [String]
  /// Why the rendering stopped part way, when it passed one of its budgets (``Template/maximumOutputBytes``
  /// bytes or ``Template/maximumSteps`` steps); the text is then incomplete and must not be served.
  public var budgetExceeded: String?

  /// Creates a result.
  public init(text: String, problems: [String], budgetExceeded: String? = nil) {
    self.text = text
    self.problems = problems
    self.budgetExceeded = budgetExceeded
  }
}

extension Template {
  /// The most bytes one rendering produces (16 MiB), counted over everything it writes (every block and
  /// capture, a capture's text again where it is used) and every text a helper or sub-expression returns
  /// (`{{join (range …)}}`, `(replace …)` inside another call).
  public static let maximumOutputBytes = RenderState.defaultMaximumOutputBytes
  /// The most steps one rendering takes (1,000,000): each tag and text part rendered, each expression and
  /// sub-expression evaluated, each pass of a loop (`each`, sections, `range`'s items); an XPath helper's
  /// operations count a tenth of a step each. A nested loop over request data stops here.
  public static let maximumSteps = RenderState.defaultMaximumSteps
}

/// What a template can see and how it behaves: the request model, `parameters`, time, randomness, options.
public struct TemplateContext: Sendable {
  /// The `request` model (see ``TemplateRequest``).
  public var request: TemplateValue
  /// The stub's `transformerParameters`, as `parameters`.
  public var parameters: TemplateValue
  /// Options and sources of time and randomness.
  public var environment: TemplateEnvironment
  /// Seed of this rendering's random values (`randomValue`, `randomInt`, `pickRandom`, UUIDs).
  public var seed: UInt64
  /// Current time in milliseconds since 1970 (pinned by `--fixed-time`).
  public var nowMilliseconds: Int64
  /// More top-level names of the model, after `request` and `parameters` (a webhook's
  /// `originalRequest` and `originalResponse`); a name given here replaces a built-in one.
  public var additionalModel: TemplateMap
  /// The state extension's store, read by the `state` helper; nil renders every context as missing.
  public var state: (any TemplateStateLookup)?

  /// Creates a context.
  public init(
    request: TemplateValue, parameters: TemplateValue = .null,
    environment: TemplateEnvironment = TemplateEnvironment(), seed: UInt64 = 0, nowMilliseconds: Int64? = nil,
    additionalModel: TemplateMap = TemplateMap(), state: (any TemplateStateLookup)? = nil
  ) {
    self.request = request
    self.state = state
    self.parameters = parameters
    self.additionalModel = additionalModel
    self.environment = environment
    self.seed = seed
    self.nowMilliseconds =
      nowMilliseconds ?? environment.fixedTimeMilliseconds ?? TemplateDate.currentMilliseconds()
  }
}

/// Rendering options shared by every template of a server.
public struct TemplateEnvironment: Sendable, Hashable {
  /// HTML-escape the output of `{{expr}}` (Handlebars' default; WireMock 3 turns it off). `{{{expr}}}` never
  /// escapes.
  public var escapesHTML = false
  /// Environment variables `systemValue` may read (`--template-env`); empty means none.
  public var allowedEnvironment: Set<String> = []
  /// `now` pinned to this many milliseconds since 1970 (`--fixed-time`), or nil for the clock.
  public var fixedTimeMilliseconds: Int64?
  /// The most bytes one rendering produces (`--max-template-bytes`; default ``Template/maximumOutputBytes``,
  /// 16 MiB), counted as ``Template/maximumOutputBytes`` says; at least 1.
  public var maximumOutputBytes: Int
  /// The most steps one rendering takes (`--max-template-steps`; default ``Template/maximumSteps``,
  /// 1,000,000), counted as ``Template/maximumSteps`` says; at least 1.
  public var maximumSteps: Int
  /// Creates the defaults.
  public init(
    escapesHTML: Bool = false, allowedEnvironment: Set<String> = [], fixedTimeMilliseconds: Int64? = nil,
    maximumOutputBytes: Int = Template.maximumOutputBytes, maximumSteps: Int = Template.maximumSteps
  ) {
    self.escapesHTML = escapesHTML
    self.allowedEnvironment = allowedEnvironment
    self.fixedTimeMilliseconds = fixedTimeMilliseconds
    self.maximumOutputBytes = max(1, maximumOutputBytes)
    self.maximumSteps = max(1, maximumSteps)
  }
}

/// One rendering: output, scopes, variables, randomness. Lives for one `render` call on one thread.
final class RenderState {
  struct Frame {
    var context: TemplateValue
    var blockParams: [String: TemplateValue] = [:]
    var data: [String: TemplateValue] = [:]
  }

  /// The most bytes one rendering writes by default, counted over every block and capture and every text a
  /// helper returns (16 MiB); past ``maximumOutputBytes`` the rendering stops (``budgetExceeded``), so no
  /// template or request grows memory without bound.
  static let defaultMaximumOutputBytes = 16 << 20
  /// The most steps one rendering takes by default (tags, texts, expressions, loop passes; ``step(_:)``);
  /// past ``maximumSteps`` the rendering stops (``budgetExceeded``), so no template keeps a thread busy
  /// without bound.
  static let defaultMaximumSteps = 1_000_000
  /// This rendering's byte budget (the environment's).
  let maximumOutputBytes: Int
  /// This rendering's step budget (the environment's).
  let maximumSteps: Int
  /// XPath operations per step (libxml2 counts one per operation and per node visited).
  static let xpathOperationsPerStep = 10
  /// The most items a helper builds into one list (`range`): 100,000.
  static let maximumListCount = 100_000

  let context: TemplateContext
  /// The output so far, UTF-8.
  var out: [UInt8] = []
  /// Bytes produced so far, over every capture (a capture's text counts again where it is used) and every
  /// helper's text result.
  private var written = 0
  /// Steps taken so far.
  private(set) var steps = 0
  /// Why the rendering stopped, once it passed ``maximumOutputBytes`` or ``maximumSteps``: nothing more
  /// is rendered or evaluated.
  private(set) var budgetExceeded: String?
  /// True once a budget was passed.
  var isExhausted: Bool { budgetExceeded != nil }
  /// Bytes the rendering may still produce.
  var remainingBytes: Int { max(0, maximumOutputBytes - written) }
  /// Steps the rendering may still take.
  var remainingSteps: Int { max(0, maximumSteps - steps) }
  var problems: [String] = []
  var frames: [Frame]
  var variables: [String: TemplateValue] = [:]
  var random: TemplateRandom

  init(context: TemplateContext) {
    self.context = context
    maximumOutputBytes = context.environment.maximumOutputBytes
    maximumSteps = context.environment.maximumSteps
    random = TemplateRandom(seed: context.seed)
    var root = TemplateMap([("request", context.request), ("parameters", context.parameters)])
    for entry in context.additionalModel.entries { root.set(entry.key, entry.value) }
    frames = [Frame(context: .map(root))]
  }

  func render(_ nodes: [TemplateNode]) {
    for node in nodes {
      guard step() else { return }
      switch node {
      case .text(let s): write(s)
      case .output(let e, let escaped):
        let v = evaluate(e)
        let text = v.rendered
        write(escaped && context.environment.escapesHTML ? RenderState.escapeHTML(text) : text)
      case .block(let block): renderBlock(block)
      }
    }
  }

  /// Appends `text` to the output and counts it against ``maximumOutputBytes`` (nothing once a budget
  /// was passed).
  func write(_ text: String) {
    guard !isExhausted else { return }
    let count = text.utf8.count
    guard charge(bytes: count) else { return }
    out.append(contentsOf: text.utf8)
  }

  /// Counts `count` bytes produced against ``maximumOutputBytes``; false (and the rendering stopped) when
  /// they do not fit.
  @discardableResult
  func charge(bytes count: Int) -> Bool {
    guard !isExhausted else { return false }
    written += count
    guard written <= maximumOutputBytes else {
      exceed("it produced more than \(maximumOutputBytes) bytes")
      return false
    }
    return true
  }

  /// Counts `count` steps against ``maximumSteps``; false (and the rendering stopped) when they do not
  /// fit.
  @discardableResult
  func step(_ count: Int = 1) -> Bool {
    guard !isExhausted else { return false }
    steps += count
    guard steps <= maximumSteps else {
      exceed("it took more than \(maximumSteps) steps")
      return false
    }
    return true
  }

  /// Stops the rendering: `reason` becomes ``budgetExceeded`` and a problem.
  func exceed(_ reason: String) {
    guard budgetExceeded == nil else { return }
    let message = "the rendering stopped: \(reason) (the limit of one rendering; docs/templating.md, Limits)"
    budgetExceeded = message
    problems.append(message)
  }

  /// Renders `nodes` into a separate string with `context` pushed (when given).
  func capture(_ nodes: [TemplateNode], push frame: Frame? = nil) -> String {
    let saved = out
    out = []
    if let frame { frames.append(frame) }
    render(nodes)
    if frame != nil { frames.removeLast() }
    let result = String(decoding: out, as: UTF8.self)
    out = saved
    return result
  }

  func problem(_ message: String) -> TemplateValue {
    problems.append(message)
    return .string("[ERROR: \(message)]")
  }

  // MARK: Expressions

  func evaluate(_ e: TemplateExpression) -> TemplateValue {
    guard step() else { return .null }
    switch e {
    case .literal(let v): return v
    case .path(let p): return resolve(p)
    case .call(let name, let params, let hash):
      return call(name, params: params, hash: hash, block: nil)
    }
  }

  func call(
    _ name: String, params: [TemplateExpression], hash: [(String, TemplateExpression)], block: TemplateBlock?
  ) -> TemplateValue {
    var h: [String: TemplateValue] = [:]
    for (k, e) in hash { h[k] = evaluateArgument(e) }
    let args = params.map { evaluateArgument($0) }
    guard let helper = TemplateHelpers.table[name] else { return problem("could not find helper: '\(name)'") }
    guard !isExhausted else { return .null }
    var invocation = HelperCall(name: name, params: args, hash: h, block: block, state: self)
    return helper(&invocation)
  }

  /// `e` evaluated as an argument: a sub-expression's result, which is never written itself, counts
  /// against the budgets here (its text's bytes, a list's items as steps), so nested calls cannot build
  /// more than one rendering may.
  func evaluateArgument(_ e: TemplateExpression) -> TemplateValue {
    let value = evaluate(e)
    guard case .call = e else { return value }
    switch value {
    case .string(let s): if !charge(bytes: s.utf8.count) { return .null }
    case .list(let items): if !step(items.count) { return .null }
    case .multi(let items): if !step(items.count) { return .null }
    case .described(let s, _): if !charge(bytes: s.utf8.count) { return .null }
    default: break
    }
    return value
  }

  func resolve(_ p: TemplatePath) -> TemplateValue {
    if p.isData {
      guard let first = p.segments.first else { return .null }
      var v: TemplateValue?
      if first == "root" {
        v = frames[0].context
      } else {
        for f in frames.reversed() {
          if let d = f.data[first] {
            v = d
            break
          }
        }
      }
      return walk(v, p.segments.dropFirst())
    }
    if p.depth > 0 {
      let k = frames.count - 1 - p.depth
      guard k >= 0 else { return .null }
      return walk(frames[k].context, p.segments[...])
    }
    guard let first = p.segments.first else { return frames[frames.count - 1].context }
    for f in frames.reversed() where !f.blockParams.isEmpty {
      if let v = f.blockParams[first] { return walk(v, p.segments.dropFirst()) }
    }
    for f in frames.reversed() {
      if let v = f.context.member(first) { return walk(v, p.segments.dropFirst()) }
    }
    if !variables.isEmpty, let v = variables[first] { return walk(v, p.segments.dropFirst()) }
    return .null
  }

  func walk(_ start: TemplateValue?, _ rest: ArraySlice<String>) -> TemplateValue {
    var v = start
    for s in rest {
      guard let cur = v else { return .null }
      v = cur.member(s)
    }
    return v ?? .null
  }

  // MARK: Blocks

  func renderBlock(_ block: TemplateBlock) {
    if let section = block.section {
      renderSection(block, inverted: section == .inverted)
      return
    }
    switch block.name {
    case "if", "unless":
      let value = block.params.first.map(evaluateArgument) ?? .null
      var truthy = value.isTruthy
      if block.hash.contains(where: { $0.0 == "includeZero" }), case .int(0) = value { truthy = true }
      if block.name == "unless" { truthy.toggle() }
      if truthy {
        render(block.body)
      } else if let inverse = block.inverse {
        render(inverse)
      }
    case "with":
      let value = block.params.first.map(evaluateArgument) ?? .null
      if value.isTruthy {
        var frame = Frame(context: value)
        if let name = block.blockParams.first { frame.blockParams[name] = value }
        frames.append(frame)
        render(block.body)
        frames.removeLast()
      } else if let inverse = block.inverse {
        render(inverse)
      }
    case "each":
      let value = block.params.first.map(evaluateArgument) ?? .null
      guard let items = value.iterationItems, !items.isEmpty else {
        if let inverse = block.inverse { render(inverse) }
        return
      }
      renderEach(items, block)
    default:
      let result = call(block.name, params: block.params, hash: block.hash, block: block)
      write(result.rendered)
    }
  }

  /// A section on a value, `{{#path}}…{{/path}}` (Handlebars' `blockHelperMissing`): a non-empty list
  /// renders the body per item, `true` once in the current context, another truthy value once with it
  /// as the context; a falsy value or an empty list renders the `{{else}}` part. `{{^path}}` inverts.
  func renderSection(_ block: TemplateBlock, inverted: Bool) {
    let value = block.params.first.map(evaluateArgument) ?? .null
    let list = value.listItems
    let truthy = list.map { !$0.isEmpty } ?? value.isTruthy
    if inverted {
      if !truthy {
        render(block.body)
      } else if let inverse = block.inverse {
        render(inverse)
      }
      return
    }
    guard truthy else {
      if let inverse = block.inverse { render(inverse) }
      return
    }
    if let list {
      renderEach(list.map { (key: nil, value: $0) }, block)
    } else if case .bool = value {
      render(block.body)
    } else {
      frames.append(Frame(context: value))
      render(block.body)
      frames.removeLast()
    }
  }

  /// The body of `block` once per item, with Handlebars.java's data: `@index`, `@key`, and `@first`,
  /// `@last`, `@odd`, `@even` as the words themselves or empty (`first` on the first item).
  func renderEach(_ items: [(key: String?, value: TemplateValue)], _ block: TemplateBlock) {
    for (k, item) in items.enumerated() {
      guard step() else { return }
      var frame = Frame(context: item.value)
      frame.data["index"] = .int(k)
      frame.data["first"] = .string(k == 0 ? "first" : "")
      frame.data["last"] = .string(k == items.count - 1 ? "last" : "")
      frame.data["odd"] = .string(k % 2 == 1 ? "odd" : "")
      frame.data["even"] = .string(k % 2 == 0 ? "even" : "")
      if let key = item.key { frame.data["key"] = .string(key) }
      if block.blockParams.count > 0 { frame.blockParams[block.blockParams[0]] = item.value }
      if block.blockParams.count > 1 {
        frame.blockParams[block.blockParams[1]] = item.key.map(TemplateValue.string) ?? .int(k)
      }
      frames.append(frame)
      render(block.body)
      frames.removeLast()
    }
  }

  static func escapeHTML(_ s: String) -> String {
    guard s.utf8.contains(where: { [38, 60, 62, 34, 39, 96, 61].contains($0) }) else { return s }
    var r = ""
    for c in s.unicodeScalars {
      switch c {
      case "&": r += "&amp;"
      case "<": r += "&lt;"
      case ">": r += "&gt;"
      case "\"": r += "&quot;"
      case "'": r += "&#x27;"
      case "`": r += "&#x60;"
      case "=": r += "&#x3D;"
      default: r.unicodeScalars.append(c)
      }
    }
    return r
  }
}

/// A helper's view of one call: evaluated arguments, the block when used as `{{#helper}}`, the rendering.
struct HelperCall {
  let name: String
  var params: [TemplateValue]
  var hash: [String: TemplateValue]
  let block: TemplateBlock?
  let state: RenderState

  /// The block body rendered in the current context (or `context` pushed), "" when inline.
  func fn(_ context: TemplateValue? = nil, blockParams: [TemplateValue] = []) -> String {
    guard let block else { return "" }
    guard let context else {
      var frame = RenderState.Frame(context: state.frames[state.frames.count - 1].context)
      for (n, v) in zip(block.blockParams, blockParams) { frame.blockParams[n] = v }
      return state.capture(block.body, push: frame)
    }
    var frame = RenderState.Frame(context: context)
    for (n, v) in zip(block.blockParams, blockParams) { frame.blockParams[n] = v }
    return state.capture(block.body, push: frame)
  }

  /// The `{{else}}` part rendered, "" when absent.
  func inverse() -> String {
    guard let inverse = block?.inverse else { return "" }
    return state.capture(inverse)
  }

  /// True when a result of `bytes` bytes fits in what the rendering may still produce; otherwise the
  /// rendering is stopped (the budget is passed) and the helper should return at once, building nothing.
  func fits(bytes: Int) -> Bool {
    guard bytes > state.remainingBytes else { return !state.isExhausted }
    state.exceed(
      "a helper (\(name)) would have made more than the \(state.maximumOutputBytes) bytes one rendering may"
    )
    return false
  }

  /// ``fits(bytes:)`` for `parts` joined with `separator`, plus `extra` bytes.
  func fits(_ parts: [String], separator: String, extra: Int) -> Bool {
    var total = extra + max(0, parts.count - 1) * separator.utf8.count
    for part in parts where total <= state.remainingBytes { total += part.utf8.count }
    return fits(bytes: total)
  }

  /// Records a runtime problem and returns WireMock's `[ERROR: message]` text.
  func error(_ message: String) -> TemplateValue { state.problem(message) }

  /// A hash argument's text, or `fallback`.
  func string(_ key: String) -> String? {
    guard let v = hash[key], !v.isNull else { return nil }
    return v.rendered
  }

  /// A hash argument as an integer.
  func int(_ key: String) -> Int? { hash[key]?.integer }

  /// A hash argument as a Boolean (`true`, `'true'`).
  func bool(_ key: String) -> Bool? {
    guard let v = hash[key] else { return nil }
    if case .bool(let b) = v { return b }
    return v.rendered.lowercased() == "true"
  }

  /// Conditional result: the block or inverse for `{{#helper}}`, else `yes`/`no` or the Boolean.
  func condition(_ result: Bool) -> TemplateValue {
    if block != nil { return .string(result ? fn() : inverse()) }
    if result, let yes = hash["yes"] { return yes }
    if !result, let no = hash["no"] { return no }
    return .bool(result)
  }
}

/// The template helpers' generator: HTTPCore's SplitMix64, seeded so `--seed` makes them reproducible.
typealias TemplateRandom = SplitMix64

extension SplitMix64 {
  /// Uniform in `0..<n` (n > 0).
  mutating func below(_ n: UInt64) -> UInt64 { n == 0 ? 0 : next() % n }
  /// A version-4 UUID, lower case.
  mutating func uuid() -> String { SplitMix64.uuidString(next(), next()) }
}
