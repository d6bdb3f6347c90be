import Foundation
import RegularExpressions

/// A media type as Pact compares them (pact_models `ContentType`): main type, subtype, `+suffix` and
/// parameters; names lower-cased.
package struct PactContentType: Sendable, Hashable, CustomStringConvertible {
  package var main: String
  package var sub: String
  package var suffix: String?
  package var parameters: [String: String]

  /// `*/*`: unknown.
  package static let unknown = PactContentType(main: "*", sub: "*", suffix: nil, parameters: [:])
  package static let json = PactContentType(main: "application", sub: "json", suffix: nil, parameters: [:])
  package static let xml = PactContentType(main: "application", sub: "xml", suffix: nil, parameters: [:])
  package static let html = PactContentType(main: "text", sub: "html", suffix: nil, parameters: [:])
  package static let text = PactContentType(main: "text", sub: "plain", suffix: nil, parameters: [:])

  package init(main: String, sub: String, suffix: String?, parameters: [String: String]) {
    self.main = main
    self.sub = sub
    self.suffix = suffix
    self.parameters = parameters
  }

  /// Parses `type/subtype[+suffix]; name=value…`; nil when it is not a media type.
  package init?(_ text: String) {
    let parts = text.split(separator: ";", omittingEmptySubsequences: false)
    let essence = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
    let halves = essence.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
    guard halves.count == 2, !halves[0].isEmpty, !halves[1].isEmpty else { return nil }
    main = String(halves[0])
    var subtype = String(halves[1])
    suffix = nil
    if let plus = subtype.lastIndex(of: "+") {
      suffix = String(subtype[subtype.index(after: plus)...])
      subtype = String(subtype[..<plus])
    }
    sub = subtype
    parameters = [:]
    for p in parts.dropFirst() {
      let kv = p.split(separator: "=", maxSplits: 1)
      guard kv.count == 2 else { continue }
      var value = kv[1].trimmingCharacters(in: .whitespaces)
      if value.hasPrefix("\""), value.hasSuffix("\""), value.count >= 2 {
        value = String(value.dropFirst().dropLast())
      }
      parameters[kv[0].trimmingCharacters(in: .whitespaces).lowercased()] = value
    }
  }

  package var description: String {
    var s = "\(main)/\(sub)" + (suffix.map { "+" + $0 } ?? "")
    for (k, v) in parameters.sorted(by: { $0.key < $1.key }) { s += ";\(k)=\(v)" }
    return s
  }

  package var isUnknown: Bool { main == "*" || sub == "*" }
  package var isJSON: Bool {
    main == "application" && (sub.hasPrefix("json") || suffix == "json" || sub == "graphql")
  }
  package var isXML: Bool { (main == "application" || main == "text") && (sub == "xml" || suffix == "xml") }
  private var isStrictXML: Bool { (main == "application" || main == "text") && sub == "xml" }
  package var isText: Bool {
    main == "text" || isXML || isJSON || (main == "application" && sub == "x-www-form-urlencoded")
  }
  package var isBinary: Bool {
    switch main {
    case "audio", "font", "image", "video": return true
    case "text": return false
    default: return !isText
    }
  }
  /// The type without parameters, its suffix standing for its subtype (`application/vnd.a+json` →
  /// `application/json`).
  package var baseType: PactContentType {
    PactContentType(main: main, sub: suffix ?? sub, suffix: nil, parameters: [:])
  }

  /// pact_models' `is_equivalent_to`.
  package func isEquivalent(to other: PactContentType) -> Bool {
    if isStrictXML && other.isStrictXML { return parameters.isEmpty || parameters == other.parameters }
    if parameters.isEmpty { return main == other.main && sub == other.sub }
    return self == other
  }

  private static let xmlDeclaration = CompiledRegex(constant: #"^\s*<\?xml\s*version.*"#)
  private static let htmlStart = CompiledRegex(constant: #"^\s*(<!DOCTYPE)|(<HTML>).*"#)
  private static let xmlElement = CompiledRegex(constant: #"^\s*<\w+\s*(:\w+=["”][^"”]+["”])?.*"#)
  private static let jsonStart = CompiledRegex(
    constant:
      #"^\s*(true|false|null|[0-9]+|"\w*|\{\s*(\}|"\w+)|\[\s*)"#)

  /// pact_models' detection from text: XML, HTML, JSON, else plain text.
  package static func detect(text s: String) -> PactContentType {
    if xmlDeclaration.containsMatch(in: s) { return .xml }
    if htmlStart.containsMatch(in: s.uppercased()) { return .html }
    if xmlElement.containsMatch(in: s) { return .xml }
    if jsonStart.containsMatch(in: s) { return .json }
    return .text
  }

  /// pact_models' detection from the first 32 bytes: nil when they are not UTF-8.
  package static func detect(bytes: [UInt8]) -> PactContentType? {
    var head = Array(bytes.prefix(32))
    // A multi-byte character cut at byte 32 is still text.
    while !head.isEmpty, String(validating: head, as: UTF8.self) == nil, bytes.count > 32, head.count > 28 {
      head.removeLast()
    }
    guard let s = String(validating: head, as: UTF8.self) else { return nil }
    return detect(text: s)
  }

  /// The media type the bytes' signature names (the `infer` crate's table, for the formats it knows), or
  /// nil.
  package static func sniff(_ b: [UInt8]) -> String? {
    func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
      b.count >= offset + prefix.count && Array(b[offset..<(offset + prefix.count)]) == prefix
    }
    if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
    if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
    if starts(Array("GIF8".utf8)) { return "image/gif" }
    if starts(Array("RIFF".utf8)), starts(Array("WEBP".utf8), at: 8) { return "image/webp" }
    if starts(Array("RIFF".utf8)), starts(Array("WAVE".utf8), at: 8) { return "audio/x-wav" }
    if starts(Array("RIFF".utf8)), starts(Array("AVI ".utf8), at: 8) { return "video/x-msvideo" }
    if starts([0x42, 0x4D]), b.count > 14 { return "image/bmp" }
    if starts([0x49, 0x49, 0x2A, 0x00]) || starts([0x4D, 0x4D, 0x00, 0x2A]) { return "image/tiff" }
    if starts([0x00, 0x00, 0x01, 0x00]) { return "image/x-icon" }
    if starts(Array("%PDF".utf8)) { return "application/pdf" }
    if starts([0x50, 0x4B, 0x03, 0x04]) || starts([0x50, 0x4B, 0x05, 0x06]) { return "application/zip" }
    if starts([0x1F, 0x8B, 0x08]) { return "application/gzip" }
    if starts(Array("BZh".utf8)) { return "application/x-bzip2" }
    if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "application/x-7z-compressed" }
    if starts(Array("Rar!".utf8)) { return "application/vnd.rar" }
    if starts([0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00]) { return "application/x-xz" }
    if starts(Array("ID3".utf8)) || starts([0xFF, 0xFB]) { return "audio/mpeg" }
    if starts(Array("OggS".utf8)) { return "audio/ogg" }
    if starts(Array("fLaC".utf8)) { return "audio/x-flac" }
    if starts(Array("ftyp".utf8), at: 4) { return "video/mp4" }
    if starts([0x1A, 0x45, 0xDF, 0xA3]) { return "video/webm" }
    if starts(Array("wOFF".utf8)) { return "application/font-woff" }
    if starts(Array("wOF2".utf8)) { return "application/font-woff" }
    if starts([0x00, 0x61, 0x73, 0x6D]) { return "application/wasm" }
    if starts([0x7F, 0x45, 0x4C, 0x46]) { return "application/x-executable" }
    if starts(Array("SQLite format 3\0".utf8)) { return "application/vnd.sqlite3" }
    if starts(Array("{\\rtf".utf8)) { return "text/rtf" }
    return nil
  }

  /// pact_matching's `match_content_type`: nil when `data` is of media type `expected`, else why not.
  package static func check(_ data: [UInt8], is expected: String) -> String? {
    let sniffed = sniff(data)
    if let sniffed {
      return sniffed == expected
        ? nil
        : "Expected binary contents to have content type '\(expected)' but detected contents was '\(sniffed)'"
    }
    guard let detected = detect(bytes: data) else {
      return expected == "application/octet-stream"
        ? nil
        : "Expected binary contents to have content type '\(expected)' but detected contents was 'application/octet-stream'"
    }
    if expected == "text/plain", detected == .text { return nil }
    if let wanted = PactContentType(expected), wanted == detected { return nil }
    return
      "Expected binary contents to have content type '\(expected)' but detected contents was '\(detected)'"
  }
}
