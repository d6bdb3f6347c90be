/// File names for generated mapping files (`import openapi`, `import pact`): visible and distinct.
package enum FixtureFileName {
  /// `raw` as a file name: letters, digits, `.`, `_` and `-` kept, anything else `-`, no leading `.` or
  /// `-` (a hidden file is skipped by the loader, `../x` would leave the folder). When anything had to
  /// change, a hash of `raw` is appended, so that `a/b` and `a?b` stay two files.
  package static func make(_ raw: String) -> String {
    var out = String(raw.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "-" })
    while let first = out.first, first == "." || first == "-" { out.removeFirst() }
    if out.count > 100 { out = String(out.prefix(100)) }
    guard out != raw else { return out }
    var hash: UInt32 = 2_166_136_261  // FNV-1a: stable across runs and platforms
    for byte in raw.utf8 { hash = (hash ^ UInt32(byte)) &* 16_777_619 }
    let suffix = String(hash, radix: 16)
    return (out.isEmpty ? "unnamed" : out) + "-" + String(repeating: "0", count: 8 - suffix.count) + suffix
  }
}
