import Foundation
import JSONSchema

/// Where the parts of a converted Swagger 2.0 document came from: converted pointer prefix → the pointer
/// prefix in the user's original file (`#/components/schemas` → `#/definitions`,
/// `#/paths/~1pets/get/responses/200/content/application~1json/example` →
/// `#/paths/~1pets/get/responses/200/examples/application~1json`, a body parameter's `requestBody` →
/// `#/paths/~1pets/post/parameters/0`). Built by ``SwaggerConverter`` as it converts; messages about the
/// document are translated through it (longest prefix wins, a pointer with no entry is kept as it is).
package struct SwaggerPointerMap: Sendable {
  /// Converted prefix tokens → original prefix tokens.
  var entries: [[String]: [String]] = [:]
  /// The longest prefix's length, to bound the search.
  var longest = 0

  mutating func add(_ converted: [String], _ original: [String]) {
    entries[converted] = original
    longest = max(longest, converted.count)
  }

  /// The original pointer tokens for converted `tokens` (longest prefix match).
  package func original(_ tokens: [String]) -> [String] {
    var n = min(tokens.count, longest)
    while n > 0 {
      if let prefix = entries[Array(tokens[..<n])] { return prefix + tokens[n...] }
      n -= 1
    }
    return tokens
  }

  /// `text` with every main-document JSON pointer (`#/...`, after the start of the text, a space, a
  /// parenthesis or a quote) translated to the original document's, and `components.securitySchemes`
  /// named `securityDefinitions`. A pointer ends at white space, `)`, `,`, `"`, `]`, or a `:` followed by
  /// white space or the end.
  package func translate(_ text: String) -> String {
    let chars = Array(text)
    var out = ""
    var i = 0
    while i < chars.count {
      let atBoundary = i == 0 || [" ", "(", "\"", "'", "\t", "\n", "["].contains(chars[i - 1])
      guard atBoundary, chars[i] == "#", i + 1 < chars.count, chars[i + 1] == "/" else {
        out.append(chars[i])
        i += 1
        continue
      }
      var end = i + 1
      while end < chars.count {
        let c = chars[end]
        if c.isWhitespace || [")", ",", "\"", "]"].contains(c) { break }
        if c == ":", end + 1 == chars.count || chars[end + 1].isWhitespace { break }
        end += 1
      }
      let pointer = String(chars[(i + 1)..<end])
      // As ``SchemaLocation/pointer`` writes them: `~1` and `~0` escaped, nothing percent-encoded.
      let tokens = pointer.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map {
        $0.replacingOccurrences(of: "~1", with: "/").replacingOccurrences(of: "~0", with: "~")
      }
      out += SchemaLocation(tokens: original(tokens)).description
      i = end
    }
    return out.replacingOccurrences(of: "components.securitySchemes", with: "securityDefinitions")
  }
}
