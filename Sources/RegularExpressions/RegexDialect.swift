/// The regular-expression syntax a pattern is written in. Both are run by ICU; ``CompiledRegex`` rewrites
/// the constructs whose meaning differs from ICU's, and refuses, naming the difference, those it cannot
/// rewrite.
public enum RegexDialect: Sendable, Hashable {
  /// Java's `java.util.regex.Pattern` (WireMock's matchers, JSONPath filters, templating's
  /// `regexExtract`, Pact matching rules written for the JVM).
  case java
  /// ECMA-262 with the `u` flag, as JSON Schema's `pattern` keyword specifies (and as Prism's validator
  /// compiles it): `\d` and `\w` are ASCII, `\s` and `\p{…}` are Unicode.
  case ecma262
}

/// Java's dialect in ICU's. Where the two read one pattern differently:
/// - `\d`, `\w`, `\s` and their negations are ASCII in Java (`[0-9]`, `[a-zA-Z_0-9]`,
///   `[ \t\n\x0B\f\r]`) unless `(?U)` (UNICODE_CHARACTER_CLASS) is given; ICU's are Unicode.
/// - POSIX classes `\p{Lower}`, `\p{Alpha}`, `\p{Punct}`, … are ASCII in Java (Unicode under `(?U)`); ICU
///   refuses some and reads others as Unicode properties.
/// - `\p{javaLowerCase}` and the other `java…` classes, `\p{IsAlphabetic}` (a binary property with the `Is`
///   prefix) and `\p{InGreek}` (a block with the `In` prefix) are Java's spellings; ICU's are
///   `\p{Lowercase}`, `\p{Alphabetic}`, `\p{Block=Greek}`.
/// - `[:alpha:]` is a set of five characters in Java and a POSIX class in ICU: the `:` is escaped.
/// - A `}` that closes no `{n}`, `{n,}` or `{n,m}` quantifier is a literal in Java, an error in ICU.
/// - `(?u)` (Unicode case folding) is ICU's only way of folding; the letter is dropped.
/// - Under case-insensitive matching without `(?u)` Java folds ASCII letters only: a non-ASCII letter
///   outside a character class is matched exactly (`(?-i:é)`); inside one it is refused.
/// Refused, naming the difference: `(?U)` other than at the start, `(?d)` (UNIX_LINES), `\b{g}`, and `java…`
/// classes ICU has no equal for.
struct RegexTranslation {
  let source: [Unicode.Scalar]
  let dialect: RegexDialect
  var unicodeClasses = false
  var foldsASCIIOnly = false
  var out = ""
  var i = 0
  var classDepth = 0
  /// `(?x)` at the start: `#` to the end of the line is a comment.
  var comments = false
  /// A top-level class under ASCII-only folding is wrapped in ``foldGuard`` … `)`.
  var wrappedClass = false
  /// Under Java's ASCII-only case folding, ICU's folding would let `k`, `s` and classes holding them match
  /// the Kelvin sign (U+212A) and the long s (U+017F); this look-ahead keeps them out.
  static let foldGuard = "(?:(?-i:(?![\\x{212A}\\x{17F}]))"

  init(_ pattern: String, dialect: RegexDialect, caseInsensitive: Bool) {
    source = Array(pattern.unicodeScalars)
    self.dialect = dialect
    guard dialect == .java else { return }
    // Java's (?i) folds ASCII only unless (?u) is also given somewhere; ICU always folds Unicode.
    let flagGroups = Self.flagGroups(source)
    comments = Self.flagGroup(source, at: 0)?.on.contains("x") == true
    let hasI = caseInsensitive || flagGroups.contains { $0.on.contains("i") }
    foldsASCIIOnly = hasI && !flagGroups.contains { $0.on.contains("u") }
  }

  /// The inline flag groups `(?on-off)` and `(?on-off:` of `s`, outside escapes and classes.
  static func flagGroups(_ s: [Unicode.Scalar]) -> [(on: String, off: String)] {
    var found: [(on: String, off: String)] = []
    var k = 0
    var depth = 0
    while k < s.count {
      if s[k] == "\\", k + 1 < s.count, s[k + 1] == "Q" {
        k += 2
        while k + 1 < s.count, !(s[k] == "\\" && s[k + 1] == "E") { k += 1 }
        k += 2
        continue
      }
      if s[k] == "\\" {
        k += 2
        continue
      }
      if s[k] == "[" { depth += 1 } else if s[k] == "]", depth > 0 { depth -= 1 }
      if depth == 0, s[k] == "(", k + 1 < s.count, s[k + 1] == "?", let g = flagGroup(s, at: k) {
        found.append((g.on, g.off))
      }
      k += 1
    }
    return found
  }

  /// The flag group starting at `start` (`(?` then flag letters, an optional `-` and letters, then `)` or
  /// `:`): its letters and the index of its `)` or `:`.
  static func flagGroup(_ s: [Unicode.Scalar], at start: Int) -> (on: String, off: String, end: Int)? {
    var j = start + 2
    var on = ""
    var off = ""
    var negative = false
    while j < s.count {
      let c = s[j]
      if c == ")" || c == ":" {
        return on.isEmpty && off.isEmpty && !negative ? nil : (on, off, j)
      }
      if c == "-", !negative {
        negative = true
      } else if ("a"..."z").contains(c) || ("A"..."Z").contains(c) {
        if negative { off.unicodeScalars.append(c) } else { on.unicodeScalars.append(c) }
      } else {
        return nil
      }
      j += 1
    }
    return nil
  }

  mutating func translate() throws(RegexError) -> String {
    guard dialect == .java || source.contains(where: { $0 == "\\" || $0 == "}" || $0 == "[" }) else {
      return String(String.UnicodeScalarView(source))
    }
    while i < source.count {
      let c = source[i]
      switch c {
      case "\\":
        try escape()
        continue
      case "#" where comments && classDepth == 0:
        // A comment under (?x): copied to the end of the line, unread.
        let end = source[i...].firstIndex(of: "\n") ?? source.count
        out.unicodeScalars.append(contentsOf: source[i..<end])
        i = end
        continue
      case "[":
        if classDepth == 0, foldsASCIIOnly {
          out += Self.foldGuard
          wrappedClass = true
        }
        classDepth += 1
        out.unicodeScalars.append(c)
        i += 1
        if i < source.count, source[i] == "^" {
          out.unicodeScalars.append("^")
          i += 1
        }
        if i < source.count, source[i] == ":" {
          out += "\\:"
          i += 1
        }
        continue
      case "]" where classDepth > 0:
        classDepth -= 1
        if classDepth == 0, wrappedClass {
          out += "])"
          wrappedClass = false
          i += 1
          continue
        }
      case "-" where dialect == .java && classDepth > 0 && i + 1 < source.count && source[i + 1] == "-":
        throw refusal(
          "-- in a character class: Java reads the dashes as characters or a range, ICU as a set difference; "
            + "escape them as \\-")
      case "(" where classDepth == 0 && dialect == .java && i + 1 < source.count && source[i + 1] == "?":
        if try flags() { continue }
      case "{" where classDepth == 0:
        if let close = Self.quantifierEnd(source, from: i) {
          out.unicodeScalars.append(contentsOf: source[i...close])
          i = close + 1
          continue
        }
      case "}" where classDepth == 0:
        out += "\\"
      case "k", "K", "s",
        "S" where foldsASCIIOnly && classDepth == 0:
        out += Self.foldGuard
        out.unicodeScalars.append(c)
        out += ")"
        i += 1
        continue
      default:
        if foldsASCIIOnly, !c.isASCII {
          try appendLiteral(c, as: String(c))
          i += 1
          continue
        }
      }
      out.unicodeScalars.append(c)
      i += 1
    }
    return out
  }

  /// `set` (a bracketed positive set written by this translation) behind ``foldGuard`` when it stands
  /// outside a class under ASCII-only folding.
  func guarded(_ set: String) -> String {
    guard foldsASCIIOnly, classDepth == 0, set.hasPrefix("["), !set.hasPrefix("[^") else { return set }
    return Self.foldGuard + set + ")"
  }

  /// Appends the code point `c` (written as `text`) so that it matches as Java's ASCII-only folding would:
  /// a non-ASCII letter exactly, outside a class; refused inside one.
  mutating func appendLiteral(_ c: Unicode.Scalar, as text: String) throws(RegexError) {
    guard foldsASCIIOnly, !c.isASCII, c.properties.changesWhenCaseMapped else {
      out += text
      return
    }
    guard classDepth == 0 else {
      throw refusal(
        "the letter \(c) in a character class under case-insensitive matching: Java folds ASCII "
          + "letters only (unless (?u) is given), ICU folds every letter; add (?u) or list both cases")
    }
    out += "(?-i:" + text + ")"
  }

  func refusal(_ what: String) -> RegexError {
    RegexError(
      pattern: String(String.UnicodeScalarView(source)),
      message: "\(what) (offset \(i)): Java's regex dialect and ICU's differ here")
  }

  /// A Java flag group at `i`: `(?U)` at the start turns on Unicode classes, `u` is dropped (ICU folds
  /// Unicode case always), `d` and a later `U` are refused. Returns true when it wrote the group itself.
  mutating func flags() throws(RegexError) -> Bool {
    guard let group = Self.flagGroup(source, at: i) else { return false }
    if group.on.contains("d") || group.off.contains("d") {
      throw refusal(
        "(?d) (Java's UNIX_LINES: only \\n ends a line) has no equal here, where \\r, \\u0085, \\u2028 and "
          + "\\u2029 end lines too")
    }
    if group.on.contains("U") {
      guard i == 0, source[group.end] == ")" else {
        throw refusal(
          "(?U) (Java's UNICODE_CHARACTER_CLASS) is taken only as a flag at the start of the pattern, "
            + "not in a group or later")
      }
      unicodeClasses = true
    } else if group.off.contains("U"), i != 0 || source[group.end] != ")" {
      // Turning it off at the start changes nothing; anywhere else it would follow an (?U) we refused.
      throw refusal("(?-U) is taken only as a flag at the start of the pattern")
    }
    let on = group.on.filter { $0 != "U" && $0 != "u" }
    let off = group.off.filter { $0 != "U" && $0 != "u" }
    let closer = source[group.end]
    if on.isEmpty && off.isEmpty {
      out += closer == ":" ? "(?:" : ""
    } else {
      out += "(?" + on + (off.isEmpty ? "" : "-" + off)
      out.unicodeScalars.append(closer)
    }
    i = group.end + 1
    return true
  }

  /// An escape at `i`: `\Q…\E` copied whole; ASCII `\d \w \s`; `\p{…}` in ICU's spelling; `\b{g}` refused.
  mutating func escape() throws(RegexError) {
    guard i + 1 < source.count else {
      out.unicodeScalars.append(source[i])
      i += 1
      return
    }
    let e = source[i + 1]
    let braced = e == "x" || e == "N" || (dialect == .ecma262 && (e == "p" || e == "P"))
    if braced, i + 2 < source.count, source[i + 2] == "{" {
      // \x{hhhh}, \N{name} (and \p{…} in ECMA-262): copied through their closing brace.
      let end = source[(i + 2)...].firstIndex(of: "}").map { $0 + 1 } ?? source.count
      let text = String(String.UnicodeScalarView(source[i..<end]))
      if e == "x", end - 1 > i + 3, let value = UInt32(String(text.dropFirst(3).dropLast()), radix: 16),
        let scalar = Unicode.Scalar(value)
      {
        try appendLiteral(scalar, as: text)
      } else {
        out += text
      }
      i = end
      return
    }
    if dialect == .java, e == "x" || e == "u", foldsASCIIOnly {
      // \xhh and \uhhhh: a non-ASCII letter is matched exactly, as a literal one.
      let digits = e == "x" ? 2 : 4
      if i + 2 + digits <= source.count,
        let value = UInt32(String(String.UnicodeScalarView(source[(i + 2)..<(i + 2 + digits)])), radix: 16),
        let scalar = Unicode.Scalar(value)
      {
        try appendLiteral(scalar, as: String(String.UnicodeScalarView(source[i..<(i + 2 + digits)])))
        i += 2 + digits
        return
      }
    }
    switch e {
    case "Q":
      var j = i + 2
      while j < source.count, !(source[j] == "\\" && j + 1 < source.count && source[j + 1] == "E") { j += 1 }
      let end = min(source.count, j + 2)
      if foldsASCIIOnly {
        // Quoted text one character at a time, so that each non-ASCII letter is matched exactly.
        for c in source[(i + 2)..<min(j, source.count)] {
          if classDepth == 0, c == "k" || c == "K" || c == "s" || c == "S" {
            out += Self.foldGuard + String(c) + ")"
          } else if ("a"..."z").contains(c) || ("A"..."Z").contains(c) || ("0"..."9").contains(c) {
            try appendLiteral(c, as: String(c))
          } else {
            try appendLiteral(c, as: "\\x{" + String(c.value, radix: 16) + "}")
          }
        }
      } else {
        out.unicodeScalars.append(contentsOf: source[i..<end])
      }
      i = end
      return
    case "d", "D", "w", "W", "s", "S":
      if let set = asciiShorthand(e) {
        out += guarded(set)
        i += 2
        return
      }
    case "p", "P":
      if dialect == .java {
        try property(negated: e == "P")
        return
      }
    case "b" where dialect == .java && i + 2 < source.count && source[i + 2] == "{":
      throw refusal(
        "\\b{g} (Java's grapheme cluster boundary) has no equal in ICU's syntax; \\X matches a cluster")
    default:
      break
    }
    out.unicodeScalars.append(source[i])
    out.unicodeScalars.append(e)
    i += 2
  }

  /// `\d \D \w \W \s \S` as the dialect reads them, when ICU's reading differs; nil to keep ICU's.
  func asciiShorthand(_ e: Unicode.Scalar) -> String? {
    if unicodeClasses { return nil }
    switch (e, dialect) {
    case ("d", _): return "[0-9]"
    case ("D", _): return "[^0-9]"
    case ("w", _): return "[a-zA-Z_0-9]"
    case ("W", _): return "[^a-zA-Z_0-9]"
    case ("s", .java): return "[ \\t\\n\\x{0B}\\f\\r]"
    case ("S", .java): return "[^ \\t\\n\\x{0B}\\f\\r]"
    default: return nil
    }
  }

  /// `\p{name}`, `\pL` (and `\P` forms) at `i`, in ICU's spelling.
  mutating func property(negated: Bool) throws(RegexError) {
    let name: String
    let next: Int
    if i + 2 < source.count, source[i + 2] == "{" {
      guard let close = source[(i + 3)...].firstIndex(of: "}") else {
        out.unicodeScalars.append(contentsOf: source[i...])
        i = source.count
        return
      }
      name = String(String.UnicodeScalarView(source[(i + 3)..<close]))
      next = close + 1
    } else if i + 2 < source.count {
      name = String(source[i + 2])
      next = i + 3
    } else {
      out += negated ? "\\P" : "\\p"
      i += 2
      return
    }
    let set = try Self.icuSet(for: name, unicode: unicodeClasses) ?? ("\\p{" + name + "}")
    // A set in brackets negates by `[^…]`; a `\p{…}` by `\P{…}` and the other way round.
    if !negated, set.hasPrefix("[") {
      out += guarded(set)
    } else if negated {
      if set.hasPrefix("[") {
        out += "[^" + set + "]"
      } else {
        out += (set.hasPrefix("\\P") ? "\\p" : "\\P") + set.dropFirst(2)
      }
    } else {
      out += set
    }
    i = next
  }

  /// ICU's set for Java's property `name`; nil when ICU reads `\p{name}` as Java does.
  static func icuSet(for name: String, unicode: Bool) throws(RegexError) -> String? {
    if let posix = posixClasses[name] { return unicode ? posix.unicode : posix.ascii }
    if name.hasPrefix("java") {
      guard let set = javaClasses[name] else {
        throw RegexError(
          pattern: "\\p{\(name)}",
          message:
            "\\p{\(name)} (a java.lang.Character class) has no equal here: use a Unicode property such as "
            + "\\p{Lu}, \\p{Alphabetic} or \\p{White_Space}")
      }
      return set
    }
    if name.hasPrefix("In"), name.count > 2 { return "\\p{Block=" + name.dropFirst(2) + "}" }
    if name.hasPrefix("Is"), name.count > 2 {
      let rest = String(name.dropFirst(2))
      // Java reads \p{IsLower} (and the other POSIX names after Is) as the Unicode property.
      if let posix = posixClasses[rest] { return posix.unicode }
      return "\\p{" + rest + "}"
    }
    return nil
  }

  /// Java's POSIX classes: ASCII by default, Unicode under `(?U)` (as `java.util.regex.Pattern` lists them).
  static let posixClasses: [String: (ascii: String, unicode: String)] = [
    "Lower": ("[a-z]", "\\p{Lowercase}"),
    "Upper": ("[A-Z]", "\\p{Uppercase}"),
    "ASCII": ("[\\x{00}-\\x{7F}]", "[\\x{00}-\\x{7F}]"),
    "Alpha": ("[a-zA-Z]", "\\p{Alphabetic}"),
    "Digit": ("[0-9]", "\\p{Nd}"),
    "Alnum": ("[a-zA-Z0-9]", "[\\p{Alphabetic}\\p{Nd}]"),
    "Punct": ("[\\x{21}-\\x{2F}\\x{3A}-\\x{40}\\x{5B}-\\x{60}\\x{7B}-\\x{7E}]", "\\p{P}"),
    "Graph": ("[!-~]", "[^\\p{White_Space}\\p{Cc}\\p{Cs}\\p{Cn}]"),
    "Print": ("[ -~]", "[[^\\p{White_Space}\\p{Cc}\\p{Cs}\\p{Cn}]\\p{Zs}\\t]"),
    "Blank": ("[ \\t]", "[\\p{Zs}\\t]"),
    "Cntrl": ("[\\x{00}-\\x{1F}\\x{7F}]", "\\p{Cc}"),
    "XDigit": ("[0-9a-fA-F]", "[\\p{Nd}\\p{Hex_Digit}]"),
    "Space": ("[ \\t\\n\\x{0B}\\f\\r]", "\\p{White_Space}"),
  ]

  /// Java's `java.lang.Character` classes with an ICU equal.
  static let javaClasses: [String: String] = [
    "javaLowerCase": "\\p{Lowercase}",
    "javaUpperCase": "\\p{Uppercase}",
    "javaTitleCase": "\\p{Lt}",
    "javaAlphabetic": "\\p{Alphabetic}",
    "javaIdeographic": "\\p{Ideographic}",
    "javaLetter": "\\p{L}",
    "javaDigit": "\\p{Nd}",
    "javaLetterOrDigit": "[\\p{L}\\p{Nd}]",
    "javaDefined": "\\P{Cn}",
    "javaMirrored": "\\p{Bidi_Mirrored}",
    "javaSpaceChar": "\\p{Z}",
    "javaISOControl": "[\\x{00}-\\x{1F}\\x{7F}-\\x{9F}]",
    "javaWhitespace":
      "[\\t\\n\\x{0B}\\f\\r\\x{1C}-\\x{20}\\x{1680}\\x{2000}-\\x{2006}\\x{2008}-\\x{200A}\\x{2028}\\x{2029}"
      + "\\x{205F}\\x{3000}]",
  ]

  /// The index of the `}` of a `{n}`, `{n,}` or `{n,m}` quantifier starting at `start`, or nil.
  static func quantifierEnd(_ b: [Unicode.Scalar], from start: Int) -> Int? {
    var j = start + 1
    var digits = 0
    while j < b.count, ("0"..."9").contains(b[j]) {
      j += 1
      digits += 1
    }
    guard digits > 0, j < b.count else { return nil }
    if b[j] == "," {
      j += 1
      while j < b.count, ("0"..."9").contains(b[j]) { j += 1 }
    }
    return j < b.count && b[j] == "}" ? j : nil
  }
}
