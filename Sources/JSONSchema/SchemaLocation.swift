import MockJSON

/// Where a schema lives: a document (empty for the main one) and a JSON Pointer (RFC 6901) inside it.
package struct SchemaLocation: Sendable, Hashable, CustomStringConvertible {
  /// The document's name relative to the main document (`schemas.yaml`), empty for the main document.
  package var document: String
  /// JSON Pointer tokens, unescaped (`["components", "schemas", "User"]`).
  package var tokens: [String]

  /// Creates a location.
  package init(document: String = "", tokens: [String] = []) {
    self.document = document
    self.tokens = tokens
  }

  /// The location of a member of this schema (`properties`, `email` …).
  package func appending(_ token: String...) -> SchemaLocation {
    SchemaLocation(document: document, tokens: tokens + token)
  }

  /// The JSON Pointer fragment, `/components/schemas/User` (`~` and `/` escaped as `~0` and `~1`).
  package var pointer: String {
    tokens.map { "/" + $0.replacingTilde() }.joined()
  }

  /// `#/components/schemas/User` or `schemas.yaml#/Owner`.
  package var description: String { document + "#" + pointer }

  /// Splits a `$ref` value into its document part and its pointer tokens, resolving the document against
  /// this location's document (`./schemas.yaml#/Pet` from `api/main.yaml` is `api/schemas.yaml`).
  /// - Returns: nil when the fragment is not a JSON Pointer (anchors are not supported).
  package func resolving(reference: String) -> SchemaLocation? {
    let hash = reference.firstIndex(of: "#")
    let documentPart = String(reference[..<(hash ?? reference.endIndex)])
    let fragment = hash.map { String(reference[reference.index(after: $0)...]) } ?? ""
    guard fragment.isEmpty || fragment.hasPrefix("/") else { return nil }
    let tokens =
      fragment.isEmpty
      ? []
      : fragment.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
        SchemaLocation.unescape(String($0))
      }
    let document = documentPart.isEmpty ? self.document : SchemaLocation.join(self.document, documentPart)
    return SchemaLocation(document: document, tokens: tokens)
  }

  /// The value at this location's pointer inside `root`, or nil.
  package func value(in root: JSONValue) -> JSONValue? {
    var current = root
    for token in tokens {
      switch current {
      case .object(let o):
        guard let next = o[token] else { return nil }
        current = next
      case .array(let a):
        guard let k = Int(token), k >= 0, k < a.count else { return nil }
        current = a[k]
      default: return nil
      }
    }
    return current
  }

  /// `base`'s folder joined with `relative`, with `.` and `..` segments resolved (`a/b.yaml` + `../c.yaml`
  /// is `c.yaml`).
  package static func join(_ base: String, _ relative: String) -> String {
    if relative.hasPrefix("/") { return normalize(relative) }
    var folder = base.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    folder.removeLast()
    let prefix = folder.joined(separator: "/")
    return normalize(prefix.isEmpty ? relative : prefix + "/" + relative)
  }

  static func normalize(_ path: String) -> String {
    var out: [String] = []
    let absolute = path.hasPrefix("/")
    for part in path.split(separator: "/") {
      switch part {
      case ".": continue
      case "..":
        if let last = out.last, last != ".." {
          out.removeLast()
        } else if !absolute {
          out.append("..")
        }
      default: out.append(String(part))
      }
    }
    return (absolute ? "/" : "") + out.joined(separator: "/")
  }

  static func unescape(_ token: String) -> String {
    // Percent-decoding first (URI fragment), then ~1 → / and ~0 → ~ (RFC 6901 §4).
    var bytes: [UInt8] = []
    var utf8 = Array(token.utf8)[...]
    while let c = utf8.popFirst() {
      if c == UInt8(ascii: "%"), utf8.count >= 2,
        let v = UInt8(String(decoding: utf8.prefix(2), as: UTF8.self), radix: 16)
      {
        bytes.append(v)
        utf8 = utf8.dropFirst(2)
      } else {
        bytes.append(c)
      }
    }
    let decoded = String(decoding: bytes, as: UTF8.self)
    var out = ""
    var it = decoded.makeIterator()
    while let c = it.next() {
      if c == "~" {
        switch it.next() {
        case "1": out.append("/")
        case "0": out.append("~")
        case let other?: out += "~" + String(other)
        case nil: out.append("~")
        }
      } else {
        out.append(c)
      }
    }
    return out
  }
}

extension String {
  fileprivate func replacingTilde() -> String {
    var out = ""
    for c in self {
      switch c {
      case "~": out += "~0"
      case "/": out += "~1"
      default: out.append(c)
      }
    }
    return out
  }
}
