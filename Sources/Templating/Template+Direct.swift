import HTTPCore
import MockJSON

/// The direct way of rendering a template made only of text, `{{request.method}}`, `{{request.url}}`,
/// `{{request.path}}`, `{{request.path.[n]}}`, `{{request.pathSegments.[n]}}` and
/// `{{jsonPath request.body '…'}}` with a path of names and indexes: the output is written straight from
/// the request into bytes, without building the request model or a rendering state.
///
/// It gives exactly the bytes ``Template/renderUTF8(_:)`` gives; whenever it cannot be sure (a body that is
/// not plain ASCII JSON, a path parameter named like an index, a request body in another charset), it
/// declines and the general renderer runs.
package enum DirectPart: Sendable {
  case text([UInt8])
  case method(escaped: Bool)
  case url(escaped: Bool)
  case path(escaped: Bool)
  /// `request.path.[n]` / `request.pathSegments.[n]` (n ≥ 0); `pathParameters` may shadow it only for
  /// `path`.
  case segment(Int, isPath: Bool, escaped: Bool)
  /// `jsonPath request.body 'expression'` with a definite path.
  case jsonPathOnBody(JSONPath, escaped: Bool)
}

extension Template {
  /// The direct parts of `nodes`, or nil when one of them needs the general renderer.
  static func directParts(_ nodes: [TemplateNode]) -> [DirectPart]? {
    var parts: [DirectPart] = []
    for node in nodes {
      switch node {
      case .text(let s): parts.append(.text(Array(s.utf8)))
      case .block: return nil
      case .output(let e, let escaped):
        switch e {
        case .path(let p):
          guard p.depth == 0, !p.isData, p.segments.first == "request" else { return nil }
          let s = p.segments
          switch s.count {
          case 2 where s[1] == "method": parts.append(.method(escaped: escaped))
          case 2 where s[1] == "url": parts.append(.url(escaped: escaped))
          case 2 where s[1] == "path": parts.append(.path(escaped: escaped))
          case 3 where s[1] == "path" || s[1] == "pathSegments":
            // Only the canonical spelling of a non-negative index is a key of the segments' map.
            guard let n = Int(s[2]), n >= 0, String(n) == s[2] else { return nil }
            parts.append(.segment(n, isPath: s[1] == "path", escaped: escaped))
          default: return nil
          }
        case .call(let name, let params, let hash):
          guard name == "jsonPath", hash.isEmpty, params.count == 2,
            case .path(let p) = params[0], p.depth == 0, !p.isData, p.segments == ["request", "body"],
            case .literal(.string(let expression)) = params[1], !expression.isEmpty,
            let path = try? JSONPath(expression), path.isDefinite
          else { return nil }
          parts.append(.jsonPathOnBody(path, escaped: escaped))
        case .literal: return nil
        }
      }
    }
    return parts
  }

  /// The template rendered straight from `request` as UTF-8, or nil when the general renderer must run
  /// (the template reads anything else, or this request's answer is not certain here).
  /// - Parameters:
  ///   - request: the request (content already decoded).
  ///   - pathParameters: the named parameters of a `urlPathTemplate` stub.
  ///   - escapesHTML: ``TemplateEnvironment/escapesHTML``.
  package func renderDirect(_ request: HTTPRequest, pathParameters: [String: String], escapesHTML: Bool)
    -> [UInt8]?
  {
    guard let direct else { return nil }
    var out: [UInt8] = []
    out.reserveCapacity(source.utf8.count + 64)
    func append(_ text: String, _ escaped: Bool) {
      if escaped && escapesHTML {
        out.append(contentsOf: RenderState.escapeHTML(text).utf8)
      } else {
        out.append(contentsOf: text.utf8)
      }
    }
    for part in direct {
      switch part {
      case .text(let bytes): out.append(contentsOf: bytes)
      case .method(let escaped): append(request.method.rawValue, escaped)
      case .url(let escaped): append(request.head.originForm, escaped)
      case .path(let escaped): append(request.head.rawPath, escaped)
      case .segment(let n, let isPath, let escaped):
        if isPath, !pathParameters.isEmpty { return nil }
        append(TemplateRequest.pathSegment(n, of: request.head.rawPath) ?? "", escaped)
      case .jsonPathOnBody(let path, let escaped):
        // The general renderer decodes the body as text in its charset first (invalid UTF-8 repaired):
        // the bytes are that text only for UTF-8, and the scanner decides only for plain ASCII JSON.
        guard !request.body.isEmpty,
          TextCharset.encoding(ofContentType: request.headers.first("Content-Type")).map({ $0 == .utf8 })
            ?? true
        else { return nil }
        switch path.selectDefinite(inUTF8: request.body) {
        case .found(let v) where v != .null: append(TemplateValue.json(v).rendered, escaped)
        case .found, .notFound: break
        case .undecided: return nil
        }
      }
    }
    return out
  }
}
