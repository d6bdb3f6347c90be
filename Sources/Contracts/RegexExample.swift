import Mappings
import RegularExpressions

/// Builds one string a regular expression matches, for concrete requests made from stub patterns
/// (`mockserver verify`, `export pact`): literals kept, `\d` → `0`, `\w` → `a`, `.` → `x`, a class → its
/// first member (or a character outside a negated class), a group → its first alternative, `*`/`?`/`{0,…}`
/// → none, `+`/`{n…}` → the minimum count (at least one). The result is checked against the pattern; nil
/// when the pattern uses constructs this does not cover (lookarounds, back references) or the check fails.
package enum RegexExample {
  /// A string the whole of which `pattern` matches, or nil.
  package static func generate(_ pattern: String) -> String? {
    var parser = Parser(chars: Array(pattern))
    guard let out = parser.alternation(), parser.i == parser.chars.count else { return nil }
    guard let regex = try? CompiledRegex(pattern), regex.matches(out) else { return nil }
    return out
  }

  struct Parser {
    let chars: [Character]
    var i = 0

    /// First alternative of `a|b|c`, skipping the rest.
    mutating func alternation() -> String? {
      guard let first = sequence() else { return nil }
      while i < chars.count, chars[i] == "|" {
        i += 1
        guard sequence() != nil else { return nil }
      }
      return first
    }

    mutating func sequence() -> String? {
      var out = ""
      while i < chars.count, chars[i] != "|", chars[i] != ")" {
        guard let atom = atom() else { return nil }
        let (low, _) = quantifier()
        out += String(repeating: atom, count: low)
      }
      return out
    }

    /// The minimum repetitions of a quantifier after an atom (1 when none), lazy/possessive marks skipped.
    mutating func quantifier() -> (Int, Int?) {
      guard i < chars.count else { return (1, 1) }
      var result: (Int, Int?)
      switch chars[i] {
      case "*": result = (0, nil)
      case "+": result = (1, nil)
      case "?": result = (0, 1)
      case "{":
        guard let close = chars[i...].firstIndex(of: "}") else { return (1, 1) }
        let body = String(chars[(i + 1)..<close])
        let parts = body.split(separator: ",", omittingEmptySubsequences: false)
        guard let n = Int(parts[0]) else { return (1, 1) }
        i = close
        result = (n, parts.count > 1 ? Int(parts[1]) : n)
      default: return (1, 1)
      }
      i += 1
      if i < chars.count, chars[i] == "?" || chars[i] == "+" { i += 1 }
      return result
    }

    mutating func atom() -> String? {
      let c = chars[i]
      i += 1
      switch c {
      case "^", "$": return ""
      case ".": return "x"
      case "(":
        if i < chars.count, chars[i] == "?" {
          guard i + 1 < chars.count, chars[i + 1] == ":" else { return nil }  // lookarounds, named groups
          i += 2
        }
        guard let inner = alternation(), i < chars.count, chars[i] == ")" else { return nil }
        i += 1
        return inner
      case "[": return characterClass()
      case "\\": return escape(inClass: false)
      default: return String(c)
      }
    }

    mutating func escape(inClass: Bool) -> String? {
      guard i < chars.count else { return nil }
      let c = chars[i]
      i += 1
      switch c {
      case "d": return "0"
      case "w": return "a"
      case "s": return " "
      case "D", "W", "S": return "-"
      case "A", "z", "Z", "b", "B", "G": return inClass ? nil : ""
      case "n": return "\n"
      case "t": return "\t"
      case "1"..."9": return nil
      default: return String(c)
      }
    }

    mutating func characterClass() -> String? {
      var negated = false
      if i < chars.count, chars[i] == "^" {
        negated = true
        i += 1
      }
      var members: [ClosedRange<Character>] = []
      var first = true
      while i < chars.count, chars[i] != "]" || first {
        first = false
        var low: Character
        if chars[i] == "\\" {
          i += 1
          guard let e = escape(inClass: true), let ch = e.first else { return nil }
          low = ch
        } else {
          low = chars[i]
          i += 1
        }
        if i + 1 < chars.count, chars[i] == "-", chars[i + 1] != "]" {
          i += 1
          var high = chars[i]
          i += 1
          if high == "\\", i < chars.count {
            high = chars[i]
            i += 1
          }
          guard low <= high else { return nil }
          members.append(low...high)
        } else {
          members.append(low...low)
        }
      }
      guard i < chars.count else { return nil }
      i += 1
      if !negated { return members.first.map { String($0.lowerBound) } }
      for candidate in "xa0_-Z9" where !members.contains(where: { $0.contains(candidate) }) {
        return String(candidate)
      }
      return nil
    }
  }
}
