import MockJSON

/// One problem found in a fixtures directory, rendered as `file: JSON path: expected …, found …`.
public struct FixtureProblem: Sendable, Hashable, CustomStringConvertible {
  /// How serious the problem is.
  public enum Severity: String, Sendable, Hashable {
    /// The stub (or file) is not loaded; `serve` refuses to start and `lint` exits 1.
    case error
    /// Loaded, but something is ignored or changed (e.g. a `Content-Length` header dropped).
    case warning
  }

  /// Error or warning.
  public var severity: Severity
  /// File relative to the fixtures directory, e.g. `mappings/users.json`.
  public var file: String
  /// JSON path such as `$.mappings[2].request.headers.Authorization`, or `line 3, column 5` for syntax.
  public var path: String
  /// `expected …, found …` (errors) or a description of what happens (warnings).
  public var message: String

  /// Creates a problem with a free-form message.
  public init(severity: Severity, file: String, path: String, message: String) {
    self.severity = severity
    self.file = file
    self.path = path
    self.message = message
  }

  /// Creates an error `expected X, found Y`.
  /// `value` quoted as JSON for a message, its first 200 characters when longer (a 100 KB pattern is not
  /// repeated whole in a lint line).
  package static func excerpt(_ value: String) -> String {
    guard value.count > 200 else { return JSONValue.quoted(value) }
    return JSONValue.quoted(String(value.prefix(200))) + "… (\(value.count) characters)"
  }

  public static func error(file: String, path: String, expected: String, found: String) -> FixtureProblem {
    FixtureProblem(severity: .error, file: file, path: path, message: "expected \(expected), found \(found)")
  }

  /// `mappings/users.json: $.mappings[2].request.headers.Authorization: expected …, found a string`;
  /// warnings read `file: path: warning: message`.
  public var description: String {
    severity == .error ? "\(file): \(path): \(message)" : "\(file): \(path): warning: \(message)"
  }

  /// True for errors.
  public var isError: Bool { severity == .error }
}

/// Collects problems for one file.
package struct Diagnostics {
  package let file: String
  package var problems: [FixtureProblem] = []
  package var errorCount = 0

  package init(file: String) { self.file = file }

  package mutating func error(_ path: String, expected: String, found: String) {
    problems.append(.error(file: file, path: path, expected: expected, found: found))
    errorCount += 1
  }

  package mutating func error(_ path: String, expected: String, found value: JSONValue) {
    error(path, expected: expected, found: value.kindDescription)
  }

  /// An error with a message of its own (template syntax errors: `unclosed {{#each}} opened at 1:14`).
  package mutating func error(_ path: String, message: String) {
    problems.append(FixtureProblem(severity: .error, file: file, path: path, message: message))
    errorCount += 1
  }

  package mutating func warning(_ path: String, _ message: String) {
    problems.append(FixtureProblem(severity: .warning, file: file, path: path, message: message))
  }
}

/// JSON path helpers for diagnostics.
package enum JSONPathText {
  /// `base.key` or `base['key']` when `key` is not a simple name.
  package static func child(_ base: String, _ key: String) -> String {
    // Runs for every field of every stub loaded: one pass over the key's bytes, one string built.
    var key = key
    let simple = key.withUTF8 { bytes in
      guard let first = bytes.first, !(first >= 48 && first <= 57) else { return false }
      for c in bytes
      where !((c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c == 45) {
        return false
      }
      return true
    }
    guard simple else { return base + "['" + key.replacingAll("'", with: "\\'") + "']" }
    // The bytes copied into one string made at its final size (`append` went through the generic
    // string-building path: about 900 instructions a call, ten calls a stub).
    var base = base
    return base.withUTF8 { b in
      key.withUTF8 { k in
        String(unsafeUninitializedCapacity: b.count + 1 + k.count) { out in
          _ = out.initialize(fromContentsOf: b)
          out[b.count] = UInt8(ascii: ".")
          _ = out[(b.count + 1)...].initialize(fromContentsOf: k)
          return b.count + 1 + k.count
        }
      }
    }
  }

  /// `base[k]`.
  package static func index(_ base: String, _ k: Int) -> String { base + "[\(k)]" }
}

extension String {
  /// Replaces every occurrence of `target` (no Foundation).
  package func replacingAll(_ target: String, with replacement: String) -> String {
    guard !target.isEmpty else { return self }
    var out = ""
    var rest = Substring(self)
    while let r = rest.firstRange(of: target) {
      out += rest[..<r.lowerBound]
      out += replacement
      rest = rest[r.upperBound...]
    }
    out += rest
    return out
  }
}
