import MockJSON
import RegularExpressions

/// Which part of the URL a request pattern compares, and how (WireMock's five URL fields).
///
/// Every value is compared against the canonical forms built by ``RequestView``: percent-decoded once as
/// UTF-8, except `%2F %3F %23 %25` in the path (and also `%26 %3D %2B` in the query), which stay
/// encoded. Literal fixture values are canonicalized the same way at load time, so `/caf%C3%A9` and
/// `/café` are the same stub path.
public enum URLMatcher: Sendable, Hashable, CustomStringConvertible {
  /// No URL field: any URL.
  case any
  /// `url`: path and query, exactly (query parameter order matters).
  case url(String)
  /// `urlPath`: the path only, exactly; the query is ignored.
  case urlPath(String)
  /// `urlPattern`: a regex against path and query, anchored to the whole text.
  case urlPattern(CompiledRegex)
  /// `urlPathPattern`: a regex against the path only, anchored.
  case urlPathPattern(CompiledRegex)
  /// `urlPathTemplate`: `/contacts/{id}`; each `{name}` takes one whole segment (no `/`).
  case urlPathTemplate(PathTemplate)

  /// The fixture field name (`url`, `urlPath`, …), or "any URL".
  public var fieldName: String {
    switch self {
    case .any: return "any URL"
    case .url: return "url"
    case .urlPath: return "urlPath"
    case .urlPattern: return "urlPattern"
    case .urlPathPattern: return "urlPathPattern"
    case .urlPathTemplate: return "urlPathTemplate"
    }
  }

  /// The value as written in canonical form.
  public var value: String {
    switch self {
    case .any: return ""
    case .url(let s), .urlPath(let s): return s
    case .urlPattern(let r), .urlPathPattern(let r): return r.pattern
    case .urlPathTemplate(let t): return t.template
    }
  }

  /// `urlPath "/users"` form.
  public var description: String { "\(fieldName) \(JSONValue.quoted(value))" }

  /// True when the URL field matches; path parameters of a template are returned in `parameters`.
  public func match(_ request: RequestView, parameters: inout [String: String]) -> Bool {
    switch self {
    case .any: return true
    case .url(let s): return request.url == s
    case .urlPath(let s): return request.path == s
    case .urlPattern(let r): return r.matches(request.url)
    case .urlPathPattern(let r): return r.matches(request.path)
    case .urlPathTemplate(let t):
      guard let p = t.match(request.path) else { return false }
      parameters = p
      return true
    }
  }

  /// What this matcher compares in `request` (for near-miss reports).
  public func actual(_ request: RequestView) -> String {
    switch self {
    case .url, .urlPattern, .any: return request.url
    default: return request.path
    }
  }
}

/// A `urlPathTemplate` such as `/contacts/{contactId}/addresses/{addressId}` (RFC 6570 simple
/// expansion, one whole path segment per variable).
public struct PathTemplate: Sendable, Hashable {
  /// One segment: literal text or a variable.
  package enum Segment: Sendable, Hashable {
    case literal(String)
    case variable(String)
  }

  /// The template as written (canonical form).
  public let template: String
  package let segments: [Segment]

  /// Variable names in order.
  public var variableNames: [String] {
    segments.compactMap {
      if case .variable(let n) = $0 { return n }
      return nil
    }
  }

  /// Parses a template.
  /// - Throws: a message when a `{` is unclosed, a variable name is empty or repeated, or a variable does
  ///   not take a whole segment.
  public init(_ template: String) throws(PathTemplateError) {
    self.template = template
    var segs: [Segment] = []
    var names: [String] = []
    // Over the contiguous UTF-8 bytes ('/', '{' and '}' are ASCII): `Character` comparisons cost a tenth of
    // loading 5,000 templates, and indexes into the string's UTF-8 view half of what was left.
    var text = template
    let problem = text.withUTF8 { (bytes: UnsafeBufferPointer<UInt8>) -> PathTemplateError? in
      let (slash, open, close) = (UInt8(ascii: "/"), UInt8(ascii: "{"), UInt8(ascii: "}"))
      var start = 0
      while true {
        var end = start
        while end < bytes.count, bytes[end] != slash { end += 1 }
        let part = UnsafeBufferPointer(rebasing: bytes[start..<end])
        if part.count >= 2, part[0] == open, part[part.count - 1] == close {
          let inner = UnsafeBufferPointer(rebasing: part[1..<(part.count - 1)])
          guard !inner.isEmpty, !inner.contains(open), !inner.contains(close) else {
            return PathTemplateError(message: "a variable name between { and }")
          }
          let name = String(decoding: inner, as: UTF8.self)
          guard !names.contains(name) else {
            return PathTemplateError(message: "each variable name once, \(name) repeats")
          }
          names.append(name)
          segs.append(.variable(name))
        } else if part.contains(open) || part.contains(close) {
          return PathTemplateError(message: "a variable such as {id} taking a whole path segment")
        } else {
          segs.append(.literal(String(decoding: part, as: UTF8.self)))
        }
        if end == bytes.count { return nil }
        start = end + 1
      }
    }
    if let problem { throw problem }
    segments = segs
  }

  /// Variable values when `path` (canonical) fits the template, each fully percent-decoded; else nil.
  public func match(_ path: String) -> [String: String]? {
    var path = path
    return path.withUTF8 { match(utf8: $0) }
  }

  /// ``match(_:)`` over the path's UTF-8 bytes: segment by segment, literal segments compared as bytes and
  /// a `String` made only for each variable's value (this runs on every template hit; the `UTF8View`
  /// walk it replaces cost about 3,000 instructions per hit).
  package func match(utf8 bytes: UnsafeBufferPointer<UInt8>) -> [String: String]? {
    var values: [String: String] = [:]
    var start = 0
    var k = 0
    while true {
      guard k < segments.count else { return nil }
      var end = start
      while end < bytes.count, bytes[end] != UInt8(ascii: "/") { end += 1 }
      let part = UnsafeBufferPointer(rebasing: bytes[start..<end])
      switch segments[k] {
      case .literal(let l): if !l.hasUTF8Bytes(part) { return nil }
      case .variable(let n):
        guard !part.isEmpty else { return nil }
        let text = String(decoding: part, as: UTF8.self)
        values[n] =
          part.contains(UInt8(ascii: "%"))
          ? (try? PercentDecoding.decode(text[...], component: "path")) ?? text : text
      }
      k += 1
      if end == bytes.count { break }
      start = end + 1
    }
    return k == segments.count ? values : nil
  }
}

/// An invalid `urlPathTemplate`.
public struct PathTemplateError: Error, Sendable, Hashable {
  /// What was expected.
  public var message: String
}

extension URLMatcher {
  /// True for the URL fields that compare the query (`url`, `urlPattern`).
  package var readsQuery: Bool {
    switch self {
    case .url, .urlPattern: return true
    default: return false
    }
  }
}
