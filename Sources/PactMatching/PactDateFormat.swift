import RegularExpressions

/// A Java `DateTimeFormatter` pattern (as Pact's `date`, `time` and `timestamp` rules name them),
/// compiled once into a regular expression that accepts exactly the texts the pattern formats: field
/// widths and ranges (`MM` 01–12, `HH` 00–23), month and day names, `'quoted'` literals, `[optional]`
/// sections and the offset forms of `X`, `x`, `Z`.
package struct PactDateFormat: Sendable, Hashable, CustomStringConvertible {
  /// The pattern as written in the pact.
  package let pattern: String
  private let regex: CompiledRegex

  /// Compiles `pattern`.
  /// - Throws: ``PactDateFormatError`` for a pattern letter it does not know.
  package init(_ pattern: String) throws(PactDateFormatError) {
    self.pattern = pattern
    let source = try PactDateFormat.regexSource(pattern)
    do {
      regex = try CompiledRegex(source)
    } catch {
      throw PactDateFormatError(
        pattern: pattern, message: "it compiles to an invalid expression (\(error.message))")
    }
  }

  /// True when the whole of `value` is a text this pattern formats.
  package func accepts(_ value: String) -> Bool { regex.matches(value) }

  package var description: String { pattern }

  package static func == (a: PactDateFormat, b: PactDateFormat) -> Bool { a.pattern == b.pattern }
  package func hash(into hasher: inout Hasher) { hasher.combine(pattern) }

  private static let months =
    "January|February|March|April|May|June|July|August|September|October|November|December"
  private static let shortMonths = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"
  private static let days = "Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday"
  private static let shortDays = "Mon|Tue|Wed|Thu|Fri|Sat|Sun"

  private static func regexSource(_ pattern: String) throws(PactDateFormatError) -> String {
    var out = ""
    let chars = Array(pattern)
    var i = 0
    var open = 0
    while i < chars.count {
      let c = chars[i]
      if c == "'" {
        if i + 1 < chars.count, chars[i + 1] == "'" {
          out += "'"
          i += 2
          continue
        }
        i += 1
        while i < chars.count {
          if chars[i] == "'" {
            if i + 1 < chars.count, chars[i + 1] == "'" {
              out += "'"
              i += 2
              continue
            }
            break
          }
          out += escaped(chars[i])
          i += 1
        }
        i += 1
        continue
      }
      if c == "[" {
        out += "(?:"
        open += 1
        i += 1
        continue
      }
      if c == "]" {
        guard open > 0 else {
          throw PactDateFormatError(pattern: pattern, message: "\"]\" closes no optional section")
        }
        out += ")?"
        open -= 1
        i += 1
        continue
      }
      guard c.isASCII, c.isLetter else {
        out += escaped(c)
        i += 1
        continue
      }
      var n = 1
      while i + n < chars.count, chars[i + n] == c { n += 1 }
      i += n
      out += try field(c, n, pattern)
    }
    guard open == 0 else {
      throw PactDateFormatError(pattern: pattern, message: "an optional section \"[\" is not closed")
    }
    return out
  }

  private static func number(_ n: Int, _ oneOrTwo: String, _ two: String) -> String {
    n == 1 ? "(?:\(oneOrTwo))" : "(?:\(two))"
  }

  private static func field(_ c: Character, _ n: Int, _ pattern: String) throws(PactDateFormatError) -> String
  {
    switch c {
    case "y", "u", "Y":
      return n == 2 ? "[0-9]{2}" : n == 1 ? "-?[0-9]+" : "-?[0-9]{\(n),9}"
    case "M", "L":
      switch n {
      case 1: return "(?:1[0-2]|0?[1-9])"
      case 2: return "(?:0[1-9]|1[0-2])"
      case 3: return "(?:\(shortMonths))"
      default: return "(?:\(months))"
      }
    case "d": return number(n, "3[01]|[12][0-9]|0?[1-9]", "0[1-9]|[12][0-9]|3[01]")
    case "D": return n == 1 ? "[0-9]{1,3}" : "[0-9]{\(n),3}"
    case "H": return number(n, "2[0-3]|[01]?[0-9]", "[01][0-9]|2[0-3]")
    case "k": return number(n, "2[0-4]|1[0-9]|0?[1-9]", "0[1-9]|1[0-9]|2[0-4]")
    case "h": return number(n, "1[0-2]|0?[1-9]", "0[1-9]|1[0-2]")
    case "K": return number(n, "1[01]|0?[0-9]", "0[0-9]|1[01]")
    case "m", "s": return number(n, "[0-5]?[0-9]", "[0-5][0-9]")
    case "S": return "[0-9]{\(n)}"
    case "n", "N", "A": return "[0-9]+"
    case "a": return "(?:AM|PM|am|pm)"
    case "E", "e", "c":
      if (c == "e" || c == "c") && n <= 2 { return "[1-7]" }
      return n <= 3 ? "(?:\(shortDays))" : "(?:\(days))"
    case "G": return n <= 3 ? "(?:AD|BC)" : "(?:Anno Domini|Before Christ)"
    case "Q", "q": return n <= 2 ? "0?[1-4]" : n == 3 ? "Q[1-4]" : "[1-4](?:st|nd|rd|th) quarter"
    case "w": return number(n, "[0-9]{1,2}", "[0-9]{2}")
    case "W", "F": return "[0-9]"
    case "X", "x":
      let zulu = c == "X" ? "Z|" : ""
      switch n {
      case 1: return "(?:\(zulu)[+-][0-9]{2}(?:[0-9]{2})?)"
      case 2, 4: return "(?:\(zulu)[+-][0-9]{4})"
      default: return "(?:\(zulu)[+-][0-9]{2}:[0-9]{2}(?::[0-9]{2})?)"
      }
    case "Z":
      switch n {
      case 1...3: return "[+-][0-9]{4}"
      case 4: return "(?:GMT|GMT[+-][0-9]{2}:[0-9]{2})"
      default: return "(?:Z|[+-][0-9]{2}:[0-9]{2})"
      }
    case "O": return "(?:GMT|GMT[+-][0-9]{1,2}(?::[0-9]{2})?)"
    case "z": return "(?:[A-Z]{2,5}|[A-Za-z_]+/[A-Za-z_]+(?:/[A-Za-z_]+)?)"
    case "V": return "(?:Z|[A-Za-z_]+(?:/[A-Za-z_+-]+)*|[+-][0-9]{2}:[0-9]{2})"
    default:
      throw PactDateFormatError(
        pattern: pattern, message: "the letter \"\(c)\" is not a DateTimeFormatter field")
    }
  }

  private static func escaped(_ c: Character) -> String {
    "\\^$.|?*+()[]{}".contains(c) ? "\\\(c)" : String(c)
  }
}

/// A date/time pattern that cannot be used.
package struct PactDateFormatError: Error, Sendable, Hashable, CustomStringConvertible {
  package var pattern: String
  package var message: String
  package var description: String {
    "expected a Java DateTimeFormatter pattern, found \"\(pattern)\": \(message)"
  }
}
