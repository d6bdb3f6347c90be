import Foundation
import MockJSON

/// Handlebars.java's string and number helpers WireMock registers (`append`, `center`, `stringFormat`,
/// `isOdd`, …) and WireMock's `jsonSort`.
extension TemplateHelpers {
  static let stringHelpers: [String: Helper] = {
    var t: [String: Helper] = [:]
    // MARK: Handlebars.java NumberHelpers
    @Sendable func parity(_ c: HelperCall) -> Int? {
      guard let n = c.params.first?.integer else { return nil }
      return n & 1
    }
    t["isEven"] = { c in
      guard let p = parity(c) else {
        return c.error("found '\(c.params.first?.rendered ?? "")', expected 'number'")
      }
      return p == 0 ? (c.params.count > 1 ? c.params[1] : .string("even")) : .null
    }
    t["isOdd"] = { c in
      guard let p = parity(c) else {
        return c.error("found '\(c.params.first?.rendered ?? "")', expected 'number'")
      }
      return p == 1 ? (c.params.count > 1 ? c.params[1] : .string("odd")) : .null
    }
    t["stripes"] = { c in
      guard let p = parity(c) else {
        return c.error("found '\(c.params.first?.rendered ?? "")', expected 'number'")
      }
      if p == 0 { return c.params.count > 1 ? c.params[1] : .string("even") }
      return c.params.count > 2 ? c.params[2] : .string("odd")
    }
    // MARK: Handlebars.java StringHelpers
    t["append"] = { c in
      guard c.params.count >= 2 else { return c.error("append needs a value and the text to append") }
      return .string(c.params[0].rendered + c.params[1].rendered)
    }
    t["prepend"] = { c in
      guard c.params.count >= 2 else { return c.error("prepend needs a value and the text to prepend") }
      return .string(c.params[1].rendered + c.params[0].rendered)
    }
    t["cut"] = { c in
      let strip = c.params.count > 1 ? c.params[1].rendered : " "
      let s = c.params.first?.rendered ?? ""
      return .string(strip.isEmpty ? s : s.replacingOccurrences(of: strip, with: ""))
    }
    @Sendable func padded(_ c: HelperCall, _ side: PadSide) -> TemplateValue {
      guard let size = c.int("size") else { return c.error("found 'null', expected 'size'") }
      var pad = c.string("pad") ?? " "
      if pad.isEmpty { pad = " " }
      return .string(TemplateHelpers.pad(c.params.first?.rendered ?? "", to: size, with: pad, side))
    }
    t["center"] = { c in padded(c, .both) }
    t["ljust"] = { c in padded(c, .right) }
    t["rjust"] = { c in padded(c, .left) }
    t["slugify"] = { c in
      var out = ""
      for ch in (c.params.first?.rendered ?? "").trimmingCharacters(in: .whitespacesAndNewlines) {
        if ch.isLetter {
          out += ch.lowercased()
        } else if ch.isWhitespace {
          out += "-"
        }
      }
      return .string(out)
    }
    t["wordWrap"] = { c in
      guard c.params.count >= 2, let width = c.params[1].integer else {
        return c.error("found '\(max(0, c.params.count - 1))', expected 'length'")
      }
      return .string(wordWrap(c.params[0].rendered, width: max(1, width)))
    }
    t["yesno"] = { c in
      let v = c.params.first ?? .null
      if v.isNull { return .string(c.string("maybe") ?? "maybe") }
      let truth: Bool
      switch v {
      case .bool(let b), .json(.bool(let b)): truth = b
      default: return c.error("found '\(v.rendered)', expected 'boolean'")
      }
      return .string(truth ? (c.string("yes") ?? "yes") : (c.string("no") ?? "no"))
    }
    t["stringFormat"] = { c in
      guard let format = c.params.first?.rendered else { return c.error("stringFormat needs a format") }
      switch JavaFormat.format(format, Array(c.params.dropFirst())) {
      case .success(let s): return .string(s)
      case .failure(let e): return c.error(e.message)
      }
    }
    t["dateFormat"] = { c in
      guard let first = c.params.first, case .date(let date) = first else {
        return c.error("found '\(c.params.first?.rendered ?? "")', expected 'date'")
      }
      let pattern = c.params.count > 1 ? c.params[1].rendered : (c.string("format") ?? "medium")
      let locale = c.params.count > 2 ? c.params[2].rendered : (c.string("locale") ?? "en_US")
      // Handlebars.java formats the instant: the date's own format and time zone (`now timezone=…`) do not
      // apply, `tz` does (UTC without it, the zone WireMock's image runs in).
      var d = TemplateDate(epochMilliseconds: date.epochMilliseconds)
      d.timezone = c.string("tz")
      return .string(d.formatted(pattern: pattern, locale: locale))
    }
    // MARK: WireMock's jsonSort
    t["jsonSort"] = { c in jsonSort(c) }
    return t
  }()

  enum PadSide { case left, right, both }

  /// Apache Commons' `leftPad`/`rightPad`/`center`: `pad` repeated and cut to fill `size` characters.
  static func pad(_ s: String, to size: Int, with pad: String, _ side: PadSide) -> String {
    guard size <= 1_000_000, size > s.count else { return s }
    let missing = size - s.count
    func fill(_ n: Int) -> String {
      let p = Array(pad)
      return String((0..<n).map { p[$0 % p.count] })
    }
    switch side {
    case .left: return fill(missing) + s
    case .right: return s + fill(missing)
    case .both: return fill(missing / 2) + s + fill(missing - missing / 2)
    }
  }

  /// Apache Commons' `WordUtils.wrap(text, width)`: lines broken at the last space within `width`, words
  /// longer than `width` left whole, `\n` between lines.
  static func wordWrap(_ text: String, width: Int) -> String {
    let s = Array(text)
    var out = ""
    var offset = 0
    while s.count - offset > width {
      if s[offset] == " " {
        offset += 1
        continue
      }
      var wrapAt = -1
      var k = min(s.count - 1, offset + width)
      while k >= offset {
        if s[k] == " " {
          wrapAt = k
          break
        }
        k -= 1
      }
      if wrapAt < offset {
        wrapAt = (offset + width..<s.count).first { s[$0] == " " } ?? -1
      }
      if wrapAt >= 0 {
        out += String(s[offset..<wrapAt]) + "\n"
        offset = wrapAt + 1
      } else {
        out += String(s[offset...])
        offset = s.count
      }
    }
    if offset < s.count { out += String(s[offset...]) }
    return out
  }

  /// WireMock's `jsonSort json '$.path[*].field' [order='asc'|'desc'] [nulls='first'|'last']`: the array
  /// before `[*]` sorted (stably) by the value the rest of the path selects in each element; compact JSON.
  static func jsonSort(_ c: HelperCall) -> TemplateValue {
    let input: String
    switch c.params.first {
    case .string(let s)?, .described(let s, _)?, .json(.string(let s))?: input = s
    case .multi(let v)? where v.count == 1: input = v[0]
    default: return c.error("Input JSON must be a string")
    }
    if input == "null" { return c.error("Cannot sort a JSON null value - input must be a JSON array") }
    guard c.params.count == 2 else {
      return c.error("A single JSONPath expression parameter must be supplied")
    }
    guard case .string(let expression) = c.params[1] else {
      return c.error("JSONPath parameter must be a string")
    }
    let order = c.string("order") ?? "asc"
    guard order == "asc" || order == "desc" else { return c.error("order parameter must be 'asc' or 'desc'") }
    let nulls = c.string("nulls") ?? "first"
    guard nulls == "first" || nulls == "last" else {
      return c.error("nulls parameter must be 'first' or 'last'")
    }
    guard let wildcard = expression.range(of: "[*]") else {
      return c.error(
        "JSONPath must include [*] to specify array location (e.g., '$[*].name' or '$.users[*].name')")
    }
    let arrayText =
      expression[..<wildcard.lowerBound].isEmpty ? "$" : String(expression[..<wildcard.lowerBound])
    let rest = expression[wildcard.upperBound...]
    guard let document = try? JSONValue.parse(input) else {
      return c.error("Input JSON string is not valid JSON ('\(input)')")
    }
    guard let arrayPath = compiledPath(arrayText), let keyPath = compiledPath("$" + rest),
      let fullPath = compiledPath(expression)
    else {
      return c.error("Invalid JSONPath expression ('\(expression)')")
    }
    guard arrayPath.isDefinite, let found = arrayPath.evaluate(document).first else {
      return c.error("JSONPath expression did not match any values ('\(expression)')")
    }
    guard case .array(let items) = found else {
      return c.error("JSONPath does not reference an array ('\(arrayText)')")
    }
    let wildcards = expression.components(separatedBy: "[*]").count - 1
    if wildcards > 1 {
      let count = fullPath.evaluate(document).count
      return c.error(
        "Number of sort values (\(count)) does not match array size (\(items.count)). JSONPath contains \(wildcards) wildcards [*] but only single-level array sorting is supported"
      )
    }
    // Each element's sort value: absent and null are nil.
    let keys: [JSONValue?] = items.map { item in
      let v: JSONValue? =
        keyPath.isDefinite ? keyPath.evaluate(item).first : JSONValue.array(keyPath.evaluate(item))
      if case .null? = v { return nil }
      return v
    }
    enum Kind { case number, string, bool }
    var kind: Kind?
    for key in keys {
      guard let key else { continue }
      let k: Kind
      switch key {
      case .number: k = .number
      case .string: k = .string
      case .bool: k = .bool
      default:
        return c.error(
          "All sort field values must be of the same comparable type (Number, String, or Boolean)")
      }
      if let kind, kind != k {
        return c.error(
          "All sort field values must be of the same comparable type (Number, String, or Boolean)")
      }
      kind = k
    }
    func compare(_ a: JSONValue?, _ b: JSONValue?) -> Int {
      switch (a, b) {
      case (nil, nil): return 0
      case (nil, _): return nulls == "first" ? -1 : 1
      case (_, nil): return nulls == "first" ? 1 : -1
      case (.number(let x)?, .number(let y)?):
        let p = Double(x.text) ?? 0
        let q = Double(y.text) ?? 0
        return p < q ? -1 : p > q ? 1 : 0
      case (.string(let x)?, .string(let y)?):
        if x == y { return 0 }
        return x.utf16.lexicographicallyPrecedes(y.utf16) ? -1 : 1
      case (.bool(let x)?, .bool(let y)?): return x == y ? 0 : (x ? 1 : -1)
      default: return 0
      }
    }
    let sign = order == "desc" ? -1 : 1
    let sorted = items.indices.sorted { i, j in
      let r = compare(keys[i], keys[j]) * sign
      return r != 0 ? r < 0 : i < j
    }.map { items[$0] }
    if arrayPath.expression == "$" { return .string(JSONValue.array(sorted).serialized()) }
    guard let edited = replace(arrayPath, in: document, with: { _ in .array(sorted) }) else {
      return c.error("The JSON document is too large for jsonSort")
    }
    return .string(edited.serialized())
  }
}

/// Java's `String.format` for the conversions templates use: `%s %S %d %x %X %o %f %e %E %b %c %n %%`,
/// with `N$` argument indexes, the flags `- 0 + , (space)`, width and precision (`stringFormat`).
enum JavaFormat {
  struct Failure: Error {
    var message: String
  }

  static func format(_ format: String, _ args: [TemplateValue]) -> Result<String, Failure> {
    let f = Array(format)
    var out = ""
    var i = 0
    var next = 0
    while i < f.count {
      guard f[i] == "%" else {
        out.append(f[i])
        i += 1
        continue
      }
      i += 1
      // %[index$][flags][width][.precision]conversion
      var number = ""
      let start = i
      while i < f.count, f[i].isASCII, f[i].isNumber { number.append(f[i]); i += 1 }
      var index: Int?
      if i < f.count, f[i] == "$", let n = Int(number), n > 0 {
        index = n - 1
        i += 1
      } else {
        i = start
      }
      var flags = Set<Character>()
      while i < f.count, "-0+, (#".contains(f[i]) {
        flags.insert(f[i])
        i += 1
      }
      var widthText = ""
      while i < f.count, f[i].isASCII, f[i].isNumber { widthText.append(f[i]); i += 1 }
      var precision: Int?
      if i < f.count, f[i] == "." {
        i += 1
        var p = ""
        while i < f.count, f[i].isASCII, f[i].isNumber { p.append(f[i]); i += 1 }
        precision = Int(p)
      }
      guard i < f.count else {
        return .failure(Failure(message: "Format specifier '%\(String(f[start...]))'"))
      }
      let conversion = f[i]
      i += 1
      let width = min(Int(widthText) ?? 0, 10_000)
      if conversion == "%" {
        out += pad("%", width, flags)
        continue
      }
      if conversion == "n" {
        out += "\n"
        continue
      }
      let k = index ?? next
      if index == nil { next += 1 }
      guard k < args.count else { return .failure(Failure(message: "Format specifier '%\(conversion)'")) }
      let arg = args[k]
      var text: String
      switch conversion {
      case "s", "S":
        text = arg.isNull ? "null" : arg.rendered
        if let precision { text = String(text.prefix(precision)) }
        if conversion == "S" { text = text.uppercased() }
      case "b", "B":
        if case .bool(let b) = arg {
          text = b ? "true" : "false"
        } else {
          text = arg.isNull ? "false" : "true"
        }
        if conversion == "B" { text = text.uppercased() }
      case "c":
        text =
          arg.integer.flatMap { UnicodeScalar(UInt32(clamping: max(0, $0))) }.map { String(Character($0)) }
          ?? String(arg.rendered.prefix(1))
      case "d", "x", "X", "o":
        guard let n = arg.integer else {
          return .failure(Failure(message: "\(conversion) != \(javaType(arg))"))
        }
        switch conversion {
        case "d":
          var digits = String(n.magnitude)
          if flags.contains(",") { digits = grouped(digits) }
          text = sign(n < 0, digits, flags)
        case "o": text = String(UInt64(bitPattern: Int64(n)), radix: 8)
        default: text = String(UInt64(bitPattern: Int64(n)), radix: 16, uppercase: conversion == "X")
        }
      case "f", "e", "E":
        guard let d = arg.number else {
          return .failure(Failure(message: "\(conversion) != \(javaType(arg))"))
        }
        let p = min(precision ?? 6, 100)
        var digits: String
        if !d.isFinite {
          digits = d.isNaN ? "NaN" : "Infinity"
        } else if conversion == "f" {
          digits = fixed(d.magnitude, precision: p)
        } else {
          digits = scientific(d.magnitude, precision: p, uppercase: conversion == "E")
        }
        if conversion == "f", d.isFinite, flags.contains(",") {
          let parts = digits.split(separator: ".", maxSplits: 1)
          digits = grouped(String(parts[0])) + (parts.count > 1 ? "." + parts[1] : "")
        }
        text = sign(d < 0 || (d == 0 && d.sign == .minus), digits, flags)
      default:
        return .failure(Failure(message: "Conversion = '\(conversion)'"))
      }
      if flags.contains("0"), !flags.contains("-"), "dxXofeE".contains(conversion), text.count < width {
        var signPrefix = ""
        if let first = text.first, "+- (".contains(first) {
          signPrefix = String(first)
          text.removeFirst()
        }
        text = signPrefix + String(repeating: "0", count: width - text.count - signPrefix.count) + text
      }
      out += pad(text, width, flags)
    }
    return .success(out)
  }

  /// The shortest decimal digits that read back as `d` (≥ 0, finite; what Java's `Double.toString` uses)
  /// and the exponent `e` with `d = 0.digits × 10^e`; no digits for zero.
  static func decimalDigits(_ d: Double) -> (digits: [UInt8], exponent: Int) {
    guard d > 0 else { return ([], 1) }
    let text = "\(d)"  // 1.005, 0.0004, 1e-05, 1.2345e+20
    let parts = text.split(separator: "e", maxSplits: 1)
    var exponent = parts.count > 1 ? Int(parts[1]) ?? 0 : 0
    var digits: [UInt8] = []
    var seenPoint = false
    for c in parts[0].utf8 {
      if c == UInt8(ascii: ".") {
        seenPoint = true
      } else if let v = c.asDigit {
        if !seenPoint { exponent += 1 }
        if digits.isEmpty, v == 0 {
          exponent -= 1  // a leading zero: the value starts one place further right
        } else {
          digits.append(v)
        }
      }
    }
    while digits.last == 0 { digits.removeLast() }
    return (digits, exponent)
  }

  /// Keeps the first `keep` digits, rounding half up on the next one as Java's `Formatter` does
  /// (`FormattedFloatingDecimal.applyPrecision`); a negative `keep` keeps them all (they print as zeros).
  static func roundHalfUp(_ digits: inout [UInt8], _ exponent: inout Int, keep: Int) {
    guard keep >= 0, keep < digits.count else { return }
    let up = digits[keep] >= 5
    digits.removeSubrange(keep...)
    guard up else { return }
    var i = keep - 1
    while i >= 0, digits[i] == 9 {
      digits[i] = 0
      i -= 1
    }
    if i >= 0 {
      digits[i] += 1
    } else {
      digits.insert(1, at: 0)
      exponent += 1
    }
  }

  /// Java's `%.Nf` of `d` (≥ 0, finite): the shortest decimal digits of the double rounded half up
  /// (`String.format("%.2f", 0.125)` is `0.13`, `1.005` gives `1.01`), not the binary value's.
  static func fixed(_ d: Double, precision: Int) -> String {
    var (digits, exponent) = decimalDigits(d)
    roundHalfUp(&digits, &exponent, keep: exponent + precision)
    func digit(_ k: Int) -> UInt8 { k >= 0 && k < digits.count ? digits[k] : 0 }
    var out: [UInt8] = []
    if exponent <= 0 {
      out.append(UInt8(ascii: "0"))
    } else {
      for k in 0..<exponent { out.append(48 + digit(k)) }
    }
    if precision > 0 {
      out.append(UInt8(ascii: "."))
      for k in exponent..<(exponent + precision) { out.append(48 + digit(k)) }
    }
    return String(decoding: out, as: UTF8.self)
  }

  /// Java's `%.Ne` of `d` (≥ 0, finite): `1.234568e+04`, rounded half up like ``fixed(_:precision:)``.
  static func scientific(_ d: Double, precision: Int, uppercase: Bool) -> String {
    var (digits, exponent) = decimalDigits(d)
    roundHalfUp(&digits, &exponent, keep: precision + 1)
    func digit(_ k: Int) -> UInt8 { k < digits.count ? digits[k] : 0 }
    var out: [UInt8] = [48 + digit(0)]
    if precision > 0 {
      out.append(UInt8(ascii: "."))
      for k in 1...precision { out.append(48 + digit(k)) }
    }
    let e = digits.isEmpty ? 0 : exponent - 1
    out.append(uppercase ? UInt8(ascii: "E") : UInt8(ascii: "e"))
    out.append(e < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
    let magnitude = String(e.magnitude)
    if magnitude.utf8.count < 2 { out.append(UInt8(ascii: "0")) }
    out.append(contentsOf: magnitude.utf8)
    return String(decoding: out, as: UTF8.self)
  }

  static func pad(_ s: String, _ width: Int, _ flags: Set<Character>) -> String {
    guard s.count < width else { return s }
    let fill = String(repeating: " ", count: width - s.count)
    return flags.contains("-") ? s + fill : fill + s
  }

  static func sign(_ negative: Bool, _ digits: String, _ flags: Set<Character>) -> String {
    if negative { return flags.contains("(") ? "(" + digits + ")" : "-" + digits }
    if flags.contains("+") { return "+" + digits }
    if flags.contains(" ") { return " " + digits }
    return digits
  }

  static func grouped(_ digits: String) -> String {
    var out = ""
    for (k, ch) in digits.enumerated() {
      if k > 0, (digits.count - k) % 3 == 0 { out += "," }
      out.append(ch)
    }
    return out
  }

  static func javaType(_ v: TemplateValue) -> String {
    switch v {
    case .int: return "java.lang.Integer"
    case .double: return "java.lang.Double"
    case .bool: return "java.lang.Boolean"
    default: return "java.lang.String"
    }
  }
}

extension UInt8 {
  /// The value of an ASCII decimal digit, nil for other bytes.
  fileprivate var asDigit: UInt8? { self >= 48 && self <= 57 ? self - 48 : nil }
}
