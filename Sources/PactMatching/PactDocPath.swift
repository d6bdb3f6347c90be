import Foundation
import MockJSON

/// A matching rule's path expression (Pact specification V2–V4): `$.a.b`, `$.a[0]`, `$.a[*].b`, `$.*`,
/// `$['name with spaces']`; a header or query rule's name is the one-field path `$.name`.
///
/// Weights follow Pact's reference implementation (pact_models `path_exp.rs`): a token matched by name or
/// index weighs 2, a wildcard 1, and a path's weight is the product of its tokens' (0 when any token
/// misses). The rule with the highest weight × length wins; a rule shorter than the value's path applies
/// to it as *cascaded*.
package struct PactDocPath: Sendable, Hashable, CustomStringConvertible {
  package enum Token: Sendable, Hashable {
    case root
    case field(String)
    case index(Int)
    case star
    case starIndex
  }

  package var tokens: [Token]

  package init(tokens: [Token]) { self.tokens = tokens }

  /// Parses an expression.
  /// - Throws: ``PactPathError`` naming the position and what was expected.
  package init(_ expression: String) throws(PactPathError) {
    tokens = try PactDocPath.parse(expression)
  }

  /// The path of a header or query parameter named `name` (`$.name`, bracketed as needed).
  package static func named(_ name: String) -> PactDocPath { PactDocPath(tokens: [.root, .field(name)]) }

  /// `$` followed by the fields and indices of a value's location, as the matcher walks a document.
  package static let root = PactDocPath(tokens: [.root])

  package func joined(_ fragment: String) -> PactDocPath {
    var copy = self
    if fragment == "*" {
      copy.tokens.append(.star)
    } else if let i = Int(fragment), i >= 0, fragment.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) {
      copy.tokens.append(.index(i))
    } else {
      copy.tokens.append(.field(fragment))
    }
    return copy
  }

  /// The path as strings for weighing: `$`, field names, indices as decimal text, `*`, `[*]`.
  package var fragments: [String] {
    tokens.map {
      switch $0 {
      case .root: return "$"
      case .field(let name): return name
      case .index(let i): return String(i)
      case .star: return "*"
      case .starIndex: return "[*]"
      }
    }
  }

  /// The weight of this rule path for a value at `path` (0: it does not apply) and this path's length.
  package func weight(for path: [String]) -> (weight: Int, length: Int) {
    guard path.count >= tokens.count else { return (0, tokens.count) }
    var weight = 1
    for (token, fragment) in zip(tokens, path) {
      weight *= PactDocPath.weight(of: token, for: fragment)
      if weight == 0 { break }
    }
    return (weight, tokens.count)
  }

  private static func weight(of token: Token, for fragment: String) -> Int {
    switch token {
    case .root: return fragment == "$" ? 2 : 0
    case .field(let name): return fragment == name ? 2 : 0
    case .index(let i): return isIndex(fragment) && Int(fragment) == i ? 2 : 0
    case .starIndex: return fragment == "[*]" || isIndex(fragment) ? 1 : 0
    case .star: return 1
    }
  }

  private static func isIndex(_ s: String) -> Bool {
    !s.isEmpty && s.utf8.count <= 18 && s.utf8.allSatisfy { $0 >= 48 && $0 <= 57 }
  }

  /// The expression, with names that are not plain identifiers bracketed (`$['a b']`).
  package var description: String {
    var out = ""
    for token in tokens {
      switch token {
      case .root: out += "$"
      case .field(let name):
        if !name.isEmpty, name.unicodeScalars.allSatisfy({ PactDocPath.isIdentifier($0) }) {
          out += "." + name
        } else {
          out += "['" + name.replacingOccurrences(of: "'", with: "\\'") + "']"
        }
      case .index(let i): out += "[\(i)]"
      case .star: out += ".*"
      case .starIndex: out += "[*]"
      }
    }
    return out
  }

  private static func isIdentifier(_ c: Unicode.Scalar) -> Bool {
    switch c {
    case "a"..."z", "A"..."Z", "0"..."9", "_", "-", ":", "@", "#": return true
    default: return c.value > 0x7F
    }
  }

  private static func parse(_ expression: String) throws(PactPathError) -> [Token] {
    let chars = Array(expression.unicodeScalars)
    if chars.isEmpty { return [] }
    var tokens: [Token] = [.root]
    var i = 0
    func fail(_ message: String) -> PactPathError {
      PactPathError(expression: expression, message: "\(message) at index \(i)")
    }
    func identifier() throws(PactPathError) -> String {
      var name = ""
      while i < chars.count, chars[i] != ".", chars[i] != "[" {
        guard chars[i] != "]", chars[i] != "'" else { throw fail("unexpected \"\(chars[i])\"") }
        name.unicodeScalars.append(chars[i])
        i += 1
      }
      guard !name.isEmpty else { throw fail("expected a name or \"*\"") }
      return name
    }
    if chars[0] == "$" {
      i = 1
    } else {
      let name = try identifier()
      tokens.append(name == "*" ? .star : .field(name))
    }
    while i < chars.count {
      if chars[i] == "." {
        i += 1
        guard i < chars.count else { throw fail("expected a name after \".\"") }
        let name = try identifier()
        tokens.append(name == "*" ? .star : .field(name))
      } else if chars[i] == "[" {
        i += 1
        guard i < chars.count else { throw fail("expected \"'\", a digit or \"*\" after \"[\"") }
        if chars[i] == "'" || chars[i] == "\"" {
          let quote = chars[i]
          i += 1
          var name = ""
          while i < chars.count, chars[i] != quote {
            if chars[i] == "\\", i + 1 < chars.count { i += 1 }
            name.unicodeScalars.append(chars[i])
            i += 1
          }
          guard i < chars.count else { throw fail("unterminated string") }
          guard !name.isEmpty else { throw fail("empty names are not allowed") }
          i += 1
          guard i < chars.count, chars[i] == "]" else { throw fail("expected \"]\"") }
          tokens.append(.field(name))
        } else if chars[i] == "*" {
          i += 1
          guard i < chars.count, chars[i] == "]" else { throw fail("expected \"]\" after \"*\"") }
          tokens.append(.starIndex)
        } else {
          var digits = ""
          while i < chars.count, chars[i] != "]" {
            guard ("0"..."9").contains(chars[i]) else { throw fail("an index takes digits or \"*\"") }
            digits.unicodeScalars.append(chars[i])
            i += 1
          }
          guard i < chars.count else { throw fail("unterminated brackets") }
          guard let index = Int(digits), digits.count <= 18 else { throw fail("expected an index") }
          tokens.append(.index(index))
        }
        i += 1
      } else {
        throw fail("expected \".\" or \"[\" instead of \"\(chars[i])\"")
      }
    }
    return tokens
  }
}

/// A path expression that does not parse.
package struct PactPathError: Error, Sendable, Hashable, CustomStringConvertible {
  package var expression: String
  package var message: String
  package var description: String { "\(JSONValue.quoted(expression)) is not a path expression: \(message)" }
}
