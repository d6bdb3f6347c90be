import Foundation
import MockJSON
import RegularExpressions
import Synchronization

/// WireMock's helpers (and the Handlebars.java string and conditional helpers it registers), by name.
enum TemplateHelpers {
  typealias Helper = @Sendable (inout HelperCall) -> TemplateValue

  /// Block helpers the renderer runs itself.
  static let builtIns: Set<String> = ["if", "unless", "each", "with"]

  static func isKnown(_ name: String) -> Bool { builtIns.contains(name) || table[name] != nil }

  /// Every helper name, for documentation and diagnostics.
  static var names: [String] { (Array(builtIns) + Array(table.keys)).sorted() }

  static let table: [String: Helper] = {
    var t: [String: Helper] = [:]
    // MARK: Handlebars built-ins
    t["lookup"] = { c in
      guard c.params.count >= 2 else { return .null }
      return c.params[0].member(c.params[1].rendered) ?? .null
    }
    t["log"] = { _ in .null }
    t["assign"] = { c in
      guard let name = c.params.first?.rendered else { return c.error("assign needs a variable name") }
      if c.block != nil {
        c.state.variables[name] = .string(c.fn())
      } else if c.params.count > 1 {
        c.state.variables[name] = c.params[1]
      }
      return .null
    }
    // MARK: Conditionals
    @Sendable func compare(_ c: HelperCall) -> Int? {
      guard c.params.count >= 2 else { return nil }
      return order(c.params[0], c.params[1])
    }
    t["eq"] = { c in c.condition(c.params.count >= 2 && same(c.params[0], c.params[1])) }
    t["neq"] = { c in c.condition(!(c.params.count >= 2 && same(c.params[0], c.params[1]))) }
    t["ne"] = t["neq"]
    t["gt"] = { c in c.condition((compare(c) ?? 0) > 0) }
    t["gte"] = { c in c.condition(compare(c).map { $0 >= 0 } ?? false) }
    t["lt"] = { c in c.condition(compare(c).map { $0 < 0 } ?? false) }
    t["lte"] = { c in c.condition(compare(c).map { $0 <= 0 } ?? false) }
    t["and"] = { c in c.condition(!c.params.isEmpty && c.params.allSatisfy(\.isTruthy)) }
    t["or"] = { c in c.condition(c.params.contains(where: \.isTruthy)) }
    t["not"] = { c in c.condition(!(c.params.first?.isTruthy ?? false)) }
    t["contains"] = { c in
      guard c.params.count >= 2 else { return c.condition(false) }
      let needle = c.params[1]
      if let items = c.params[0].listItems {
        return c.condition(items.contains { same($0, needle) })
      }
      if needle.isNull { return c.condition(false) }
      let n = needle.rendered
      return c.condition(n.isEmpty || c.params[0].rendered.contains(n))
    }
    t["matches"] = { c in
      guard c.params.count >= 2 else {
        return c.error("You must specify the string to be matched and the regular expression")
      }
      guard let re = regex(c.params[1].rendered) else { return c.condition(false) }
      return c.condition(re.matches(c.params[0].rendered))
    }
    // MARK: Strings
    @Sendable func text(_ c: HelperCall) -> String {
      c.block != nil ? c.fn() : (c.params.first?.rendered ?? "")
    }
    t["trim"] = { c in .string(text(c).trimmingCharacters(in: .whitespacesAndNewlines)) }
    t["upper"] = { c in .string(text(c).uppercased()) }
    t["lower"] = { c in .string(text(c).lowercased()) }
    t["capitalize"] = { c in
      let fully = c.bool("fully") ?? false
      return .string(
        text(c).split(separator: " ", omittingEmptySubsequences: false).map { w -> String in
          guard let f = w.first else { return "" }
          return f.uppercased() + (fully ? w.dropFirst().lowercased() : String(w.dropFirst()))
        }.joined(separator: " "))
    }
    t["capitalizeFirst"] = { c in
      let s = text(c)
      return .string((s.first.map { $0.uppercased() } ?? "") + s.dropFirst())
    }
    t["abbreviate"] = { c in
      let s = c.params.first?.rendered ?? ""
      guard let width = c.params.count > 1 ? c.params[1].integer : nil else {
        return c.error("abbreviate needs a width")
      }
      if s.count <= width { return .string(s) }
      return .string(String(s.prefix(width > 3 ? width - 3 : 0)) + "...")
    }
    t["replace"] = { c in
      guard c.params.count >= 3 else { return c.error("replace needs a value, a target and a replacement") }
      let (value, target, replacement) = (c.params[0].rendered, c.params[1].rendered, c.params[2].rendered)
      // Each replacement can make the text longer: the result's size is known before it is built.
      let growth = replacement.utf8.count - target.utf8.count
      if growth > 0, !target.isEmpty,
        value.utf8.count + value.utf8.count / target.utf8.count * growth > c.state.remainingBytes
      {
        let found = value.components(separatedBy: target).count - 1
        guard c.fits(bytes: value.utf8.count + found * growth) else { return .null }
      }
      return .string(value.replacingOccurrences(of: target, with: replacement))
    }
    t["substring"] = { c in
      let s = Array(c.params.first?.rendered ?? "")
      guard c.params.count >= 2, let start = c.params[1].integer, start >= 0, start <= s.count else {
        return c.error("substring needs a value and a start index within it")
      }
      let end = c.params.count > 2 ? (c.params[2].integer ?? s.count) : s.count
      guard end >= start, end <= s.count else { return c.error("substring end index out of range") }
      return .string(String(s[start..<end]))
    }
    t["defaultIfEmpty"] = { c in
      let v = c.params.first ?? .null
      return v.isTruthy || v.rendered != "" ? v : (c.params.count > 1 ? c.params[1] : .string(""))
    }
    t["stripTags"] = { c in
      .string(text(c).replacingOccurrences(of: "<[^>]*>", with: "", options: .regularExpression))
    }
    t["join"] = { c in
      // Handlebars.java: {{join list ", "}} or {{join a b c ", "}}
      guard c.params.count >= 2 else { return c.error("join needs items and a separator") }
      let sep = c.params[c.params.count - 1].rendered
      var items: [TemplateValue] = []
      for p in c.params.dropLast() { items += p.listItems ?? [p] }
      let prefix = c.string("prefix") ?? ""
      let suffix = c.string("suffix") ?? ""
      let parts = items.map(\.nested)
      guard c.fits(parts, separator: sep, extra: prefix.utf8.count + suffix.utf8.count) else { return .null }
      return .string(prefix + parts.joined(separator: sep) + suffix)
    }
    t["arrayJoin"] = { c in
      guard let sep = c.params.first, case .string(let separator) = sep else {
        return c.error("Separator parameter must be a String")
      }
      guard c.params.count > 1 else { return c.error("The parameter must be list") }
      var items: [TemplateValue] = []
      if c.params.count == 2 {
        if let list = c.params[1].listItems {
          items = list
        } else {
          items = [c.params[1]]
        }
      } else {
        items = Array(c.params.dropFirst())
      }
      let parts: [String] =
        c.block != nil ? items.map { c.fn($0, blockParams: [$0]) } : items.map(\.nested)
      let prefix = c.string("prefix") ?? ""
      let suffix = c.string("suffix") ?? ""
      guard c.fits(parts, separator: separator, extra: prefix.utf8.count + suffix.utf8.count) else {
        return .null
      }
      return .string(prefix + parts.joined(separator: separator) + suffix)
    }
    t["base64"] = { c in
      let s = text(c)
      if c.bool("decode") == true {
        guard let bytes = Base64.decode(s) else { return c.error("\(s) is not valid base64") }
        return .string(String(decoding: bytes, as: UTF8.self))
      }
      return .string(Base64.encode(Array(s.utf8), padding: c.bool("padding") ?? true))
    }
    t["urlEncode"] = { c in
      let s = text(c)
      if c.bool("decode") == true { return .string(TemplateRequest.percentDecode(s, plusAsSpace: true)) }
      return .string(formEncode(s))
    }
    t["urlDecode"] = { c in .string(TemplateRequest.percentDecode(text(c), plusAsSpace: true)) }
    t["regexExtract"] = { c in
      guard c.params.count >= 2 else { return c.error("regexExtract needs a value and a regular expression") }
      let s = c.params[0].rendered
      let pattern = c.params[1].rendered
      guard let re = regex(pattern) else { return c.error("Invalid regex string \(pattern)") }
      guard let m = re.firstMatch(in: s) else {
        if let d = c.hash["default"] { return d }
        return c.error("Nothing matched \(pattern)")
      }
      if c.params.count > 2 {
        // As WireMock: the groups of every match, in order (the whole match where there are no groups),
        // `{{regexExtract 'abc,def' '([a-z]+)' 'parts'}}` → parts = [abc, def].
        var groups: [TemplateValue] = []
        for match in re.allMatches(in: s, limit: RenderState.maximumListCount) {
          if match.count > 1 {
            groups += match.dropFirst().map { TemplateValue.string($0 ?? "") }
          } else {
            groups.append(.string(match[0] ?? ""))
          }
        }
        c.state.variables[c.params[2].rendered] = .list(groups)
        return .null
      }
      return .string(m[0] ?? "")
    }
    t["size"] = { c in
      guard let v = c.params.first else { return .null }
      switch v {
      case .string(let s): return .int(s.count)
      case .map(let m): return .int(m.entries.count)
      case .json(.object(let o)): return .int(o.members.count)
      case .json(.string(let s)): return .int(s.count)
      case .described(let text, .map(let m)):
        // `request.pathSegments` (children `0`, `1`, …) is a list of segments in WireMock; `request.path`
        // with template variables among its children is text.
        let segments = m.entries.enumerated().allSatisfy { $0.element.key == String($0.offset) }
        return .int(segments ? m.entries.count : text.count)
      default: return v.listItems.map { .int($0.count) } ?? .null
      }
    }
    // MARK: Values and collections
    t["val"] = { c in
      var v = c.params.first ?? .null
      if v.isNull { v = c.hash["or"] ?? c.hash["default"] ?? .null }
      if let name = c.string("assign") {
        c.state.variables[name] = v
        return .null
      }
      return v
    }
    t["array"] = { c in .list(c.params) }
    t["range"] = { c in
      guard c.params.count >= 2, let lo = c.params[0].integer, let hi = c.params[1].integer else {
        return c.error("The range helper requires both lower and upper bounds as integer parameters")
      }
      guard lo <= hi else { return .list([]) }
      let (span, overflow) = hi.subtractingReportingOverflow(lo)
      guard !overflow, span < RenderState.maximumListCount else {
        return c.error("range \(lo) \(hi) has more than \(RenderState.maximumListCount) items")
      }
      return .list((lo...hi).map(TemplateValue.int))
    }
    t["arrayAdd"] = { c in
      guard var items = c.params.first?.listItems else { return c.error("arrayAdd needs a list") }
      guard c.params.count > 1 else {
        return c.error("Missing required parameter: additional value to add to list")
      }
      let position: Int
      switch c.hash["position"] {
      case nil, .string("end")?: position = items.count
      case .string("start")?: position = 0
      case let p?:
        guard let n = p.integer, n >= 0, n <= items.count else {
          return c.error(
            "position must be greater than or equal to 0 and less than or equal to the list size")
        }
        position = n
      }
      items.insert(c.params[1], at: position)
      return .list(items)
    }
    t["arrayRemove"] = { c in
      guard var items = c.params.first?.listItems else { return c.error("arrayRemove needs a list") }
      guard !items.isEmpty else { return .list(items) }
      let position: Int
      switch c.hash["position"] {
      case nil, .string("end")?: position = items.count - 1
      case .string("start")?: position = 0
      case let p?:
        guard let n = p.integer, n >= 0, n < items.count else {
          return c.error("position must be greater than or equal to 0 and less than the list size")
        }
        position = n
      }
      items.remove(at: position)
      return .list(items)
    }
    t["math"] = { c in
      guard c.params.count == 3 else {
        return c.error("All maths functions require two operands and an operator as parameters e.g. 3 '+' 2")
      }
      let op = c.params[1].rendered
      let l = c.params[0]
      let r = c.params[2]
      if let a = l.integer, let b = r.integer, l.number == Double(a), !isDecimalText(l), !isDecimalText(r) {
        // WireMock computes with BigDecimal: a result beyond Int is exact (Decimal), never wrapped.
        func exact(_ result: (partialValue: Int, overflow: Bool), _ wide: (Decimal, Decimal) -> Decimal)
          -> TemplateValue
        {
          result.overflow ? .string("\(wide(Decimal(a), Decimal(b)))") : .int(result.partialValue)
        }
        switch op {
        case "+": return exact(a.addingReportingOverflow(b), +)
        case "-": return exact(a.subtractingReportingOverflow(b), -)
        case "*", "x": return exact(a.multipliedReportingOverflow(by: b), *)
        case "/":
          guard b != 0 else { return c.error("Division by zero") }
          let quotient = (Double(a) / Double(b)).rounded(.toNearestOrAwayFromZero)
          return Int(exactly: quotient).map(TemplateValue.int) ?? .string("\(Decimal(a) / Decimal(b))")
        case "%":
          guard b != 0 else { return c.error("Division by zero") }
          let (remainder, overflow) = a.remainderReportingOverflow(dividingBy: b)
          return .int(overflow ? 0 : remainder)
        default: return c.error("\(op) is not a valid mathematical operator")
        }
      }
      let a = l.number ?? 0
      let b = r.number ?? 0
      if op == "/", b != 0, a.isFinite, b.isFinite {
        // BigDecimal's divide(divisor, HALF_UP), as WireMock: the quotient keeps the dividend's scale
        // (`1.0 / 3` is 0.3, `10 / 4.0` is 3, `7.5 / 2` is 3.8); scale 0 prints as an integer.
        let scale = TemplateHelpers.decimalScale(l.rendered)
        var quotient = Decimal(a) / Decimal(b)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &quotient, scale, .plain)
        let value = NSDecimalNumber(decimal: rounded).doubleValue
        if scale == 0, let whole = Int(exactly: value) { return .int(whole) }
        return .double(value)
      }
      let v: Double
      switch op {
      case "+": v = a + b
      case "-": v = a - b
      case "*", "x": v = a * b
      case "/": v = a / b
      case "%": v = a.truncatingRemainder(dividingBy: b)
      default: return c.error("\(op) is not a valid mathematical operator")
      }
      return .double((v * 1e12).rounded() / 1e12)
    }
    // MARK: Random
    t["randomValue"] = { c in
      let length = max(0, c.int("length") ?? 36)
      guard length <= c.state.maximumOutputBytes else {
        return c.error("randomValue length \(length) is more than \(c.state.maximumOutputBytes)")
      }
      guard c.fits(bytes: length) else { return .null }
      let type = c.string("type") ?? "ALPHANUMERIC"
      let uppercase = c.bool("uppercase") ?? false
      func pick(_ alphabet: String) -> String {
        let a = Array(alphabet)
        return String((0..<length).map { _ in a[Int(c.state.random.below(UInt64(a.count)))] })
      }
      let raw: String
      switch type {
      case "ALPHANUMERIC": raw = pick("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789")
      case "ALPHABETIC": raw = pick("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
      case "NUMERIC": raw = pick("0123456789")
      case "ALPHANUMERIC_AND_SYMBOLS":
        raw = pick(String((33...126).map { Character(UnicodeScalar(UInt8($0))) }))
      case "HEXADECIMAL": raw = pick("ABCDEF0123456789")
      case "UUID": raw = c.state.random.uuid()
      default: raw = pick(String((32...126).map { Character(UnicodeScalar(UInt8($0))) }))
      }
      return .string(uppercase ? raw.uppercased() : raw.lowercased())
    }
    t["randomInt"] = { c in
      let lower = c.hash["lower"]?.integer ?? Int(Int32.min)
      let upper = c.hash["upper"]?.integer ?? Int(Int32.max)
      guard upper > lower else { return c.error("upper must be greater than lower") }
      // The span of any two Ints fits in UInt64; the wrapping sum lands in lower..<upper.
      let span = UInt64(bitPattern: Int64(upper) &- Int64(lower))
      return .int(lower &+ Int(truncatingIfNeeded: c.state.random.below(span)))
    }
    t["randomDecimal"] = { c in
      let lower = c.hash["lower"]?.number ?? -Double(Int64.max)
      let upper = c.hash["upper"]?.number ?? Double(Int64.max)
      return .double(lower + (upper - lower) * c.state.random.nextDouble())
    }
    t["pickRandom"] = { c in
      var items: [TemplateValue] = []
      if c.params.count == 1, let list = c.params[0].listItems { items = list } else { items = c.params }
      guard !items.isEmpty else { return c.error("Must specify at least one item to pick from") }
      if let count = c.int("count") {
        var pool = items
        var picked: [TemplateValue] = []
        while picked.count < count, !pool.isEmpty {
          picked.append(pool.remove(at: Int(c.state.random.below(UInt64(pool.count)))))
        }
        return .list(picked)
      }
      return items[Int(c.state.random.below(UInt64(items.count)))]
    }
    // MARK: Dates
    @Sendable func render(_ date: TemplateDate, _ c: HelperCall) -> TemplateValue {
      var d = date
      if let offset = c.string("offset") {
        guard let moved = d.adding(offset: offset) else { return c.error("\(offset) is not a valid offset") }
        d = moved
      }
      if let f = c.string("format") { d.format = f }
      if let z = c.string("timezone") { d.timezone = z }
      return .date(d)
    }
    t["now"] = { c in render(TemplateDate(epochMilliseconds: c.state.context.nowMilliseconds), c) }
    t["date"] = { c in
      var base = TemplateDate(epochMilliseconds: c.state.context.nowMilliseconds)
      if let p = c.params.first {
        switch p {
        case .date(let d):
          base = d
          base.format = nil
        case .null: break
        default:
          guard let d = TemplateDate.parse(p.rendered, format: nil) else {
            return c.error("\(p.rendered) is not a date")
          }
          base = d
        }
      }
      return render(base, c)
    }
    t["parseDate"] = { c in
      let s = c.params.first?.rendered ?? ""
      let format = c.string("format")
      guard let d = TemplateDate.parse(s, format: format) else {
        return c.error("\(s) could not be parsed as a date" + (format.map { " with format \($0)" } ?? ""))
      }
      return .date(d)
    }
    t["truncateDate"] = { c in
      guard c.params.count >= 2, case .date(let d) = c.params[0] else {
        return c.error("truncateDate needs a date and a truncation")
      }
      guard let t = d.truncated(c.params[1].rendered) else {
        return c.error("\(c.params[1].rendered) is not a valid truncation")
      }
      return .date(t)
    }
    // MARK: JSON
    t["jsonPath"] = { c in
      guard c.params.count >= 2 else { return c.error("The JSONPath cannot be empty") }
      let expression = c.params[1].rendered
      guard !expression.isEmpty else { return c.error("The JSONPath cannot be empty") }
      let document: JSONValue
      switch c.params[0] {
      case .null: return c.hash["default"] ?? .string("")
      case .string(let s), .described(let s, _):
        if s.isEmpty { return c.hash["default"] ?? .string("") }
        // A path of names and indexes reads its node from the text without building the document.
        if let path = compiledPath(expression), path.isDefinite {
          switch path.selectDefinite(inUTF8: Array(s.utf8)) {
          case .found(let v) where v != .null: return .json(v)
          case .found, .notFound: return c.hash["default"] ?? .string("")
          case .undecided: break
          }
        }
        guard let j = try? JSONValue.parse(s) else { return c.error("\(s) is not valid JSON") }
        document = j
      case .multi(let v) where v.count == 1:
        guard let j = try? JSONValue.parse(v[0]) else { return c.error("\(v[0]) is not valid JSON") }
        document = j
      case let other: document = other.asJSON
      }
      guard let path = compiledPath(expression) else {
        return c.error("\(expression) is not a valid JSONPath expression")
      }
      let found = path.evaluate(document)
      let result: JSONValue?
      if path.isDefinite {
        result = found.first
      } else {
        result = .array(found)
      }
      guard let result, result != .null else { return c.hash["default"] ?? .string("") }
      return .json(result)
    }
    t["parseJson"] = { c in
      var source: String?
      var name: String?
      if c.block != nil {
        source = c.fn()
        name = c.params.first?.rendered
      } else {
        source = c.params.first.map(\.rendered)
        if c.params.count > 1 { name = c.params[1].rendered }
      }
      guard let source else { return c.error("Missing required JSON string parameter") }
      let trimmed = source.trimmingCharacters(in: .whitespacesAndNewlines)
      let value: JSONValue
      if trimmed.isEmpty {
        value = .object(JSONObject())
      } else {
        do {
          value = try JSONValue.parse(trimmed)
        } catch {
          return c.error("\(error)")
        }
      }
      if let name {
        c.state.variables[name] = .json(value)
        return .null
      }
      return .json(value)
    }
    t["toJson"] = { c in
      guard let v = c.params.first, !v.isNull else { return .string("") }
      return .string(JacksonPrinter.pretty(v.asJSON))
    }
    t["formatJson"] = { c in
      let usage = "formatJson should take a block of JSON to format or a single parameter of type String"
      let source: String
      if c.block != nil {
        source = c.fn()
      } else if let p = c.params.first, !p.isNull {
        source = p.rendered
      } else {
        return c.error(usage)
      }
      let trimmed = source.trimmingCharacters(in: .whitespacesAndNewlines)
      guard !trimmed.isEmpty else { return c.error(usage) }
      let format = c.hash["format"]
      if let format, case .string(let f) = format, f != "pretty", f != "compact" {
        return c.error("formatJson: format [\(f)] should be one of [pretty, compact]")
      }
      guard let j = try? JSONValue.parse(trimmed) else {
        return c.error("There was an error parsing the json. Please make sure the json is valid")
      }
      if case .string("compact")? = format { return .string(j.serialized()) }
      return .string(JacksonPrinter.pretty(j))
    }
    // MARK: System
    t["hostname"] = { _ in .string(ProcessInfo.processInfo.hostName) }
    t["systemValue"] = { c in
      let key = c.string("key") ?? ""
      guard !key.isEmpty else { return c.error("The key cannot be empty") }
      let type = c.string("type") ?? "ENVIRONMENT"
      guard c.state.context.environment.allowedEnvironment.contains(key) else {
        return c.error("Access to \(key) is denied")
      }
      guard type == "ENVIRONMENT" else { return c.hash["default"] ?? .string("") }
      if let v = ProcessInfo.processInfo.environment[key] { return .string(v) }
      return c.hash["default"] ?? .string("")
    }
    for (name, helper) in moreHelpers { t[name] = helper }
    for (name, helper) in stringHelpers { t[name] = helper }
    for (name, helper) in stateHelpers { t[name] = helper }
    return t
  }()

  /// Loose equality as Handlebars.java's `eq`: equal values, or equal text / numbers.
  static func same(_ a: TemplateValue, _ b: TemplateValue) -> Bool {
    if a.isNull || b.isNull { return a.isNull && b.isNull }
    if let x = a.number, let y = b.number, isNumeric(a) || isNumeric(b) { return x == y }
    return a.rendered == b.rendered
  }

  static func isNumeric(_ v: TemplateValue) -> Bool {
    switch v {
    case .int, .double, .json(.number): return true
    default: return false
    }
  }

  /// The number of digits after the point in a number's text (`7.50` → 2, `3` → 0), as BigDecimal's
  /// scale; 0 for an exponent form. At most 30.
  static func decimalScale(_ text: String) -> Int {
    guard let dot = text.firstIndex(of: "."), !text.contains("e"), !text.contains("E") else { return 0 }
    return min(30, text.distance(from: text.index(after: dot), to: text.endIndex))
  }

  static func isDecimalText(_ v: TemplateValue) -> Bool {
    switch v {
    case .double: return true
    case .string(let s): return s.contains(".")
    case .json(.number(let n)): return n.text.contains(".") || n.text.contains("e") || n.text.contains("E")
    default: return false
    }
  }

  /// Ordering for `gt`/`lt`: numbers numerically, dates by instant, other values as text.
  static func order(_ a: TemplateValue, _ b: TemplateValue) -> Int? {
    if let x = a.number, let y = b.number { return x < y ? -1 : x > y ? 1 : 0 }
    if a.isNull || b.isNull { return nil }
    let x = a.rendered
    let y = b.rendered
    return x < y ? -1 : x > y ? 1 : 0
  }

  /// Regular expressions compiled once (templates name a handful; the cache is bounded anyway).
  static let regexes = Mutex<[String: CompiledRegex]>([:])

  static func regex(_ pattern: String) -> CompiledRegex? {
    if let r = regexes.withLock({ $0[pattern] }) { return r }
    guard let r = try? CompiledRegex(pattern) else { return nil }
    regexes.withLock { cache in
      if cache.count > 1000 { cache.removeAll() }
      cache[pattern] = r
    }
    return r
  }

  /// JSONPath expressions compiled once (templates name a handful; the cache is bounded anyway).
  static let paths = Mutex<[String: JSONPath]>([:])

  static func compiledPath(_ expression: String) -> JSONPath? {
    if let p = paths.withLock({ $0[expression] }) { return p }
    guard let p = try? JSONPath(expression) else { return nil }
    paths.withLock { cache in
      if cache.count > 1000 { cache.removeAll() }
      cache[expression] = p
    }
    return p
  }

  /// `application/x-www-form-urlencoded` as Java's `URLEncoder` writes it.
  static func formEncode(_ s: String) -> String {
    var out = ""
    for byte in s.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "*"),
        UInt8(ascii: "_"):
        out.unicodeScalars.append(UnicodeScalar(byte))
      case UInt8(ascii: " "): out += "+"
      default:
        let h = String(byte, radix: 16, uppercase: true)
        out += "%" + (h.count == 1 ? "0" + h : h)
      }
    }
    return out
  }
}
