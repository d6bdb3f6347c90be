import HTTPCore
import Mappings
import MockJSON
import Templating

/// Response templating settings of a server (`--global-response-templating`, `--template-escaping`, …).
public struct TemplatingConfiguration: Sendable, Equatable {
  /// Template every stub's response, not only stubs naming `response-template` (WireMock's global mode).
  public var global = false
  /// Template stubs naming `response-template` (WireMock's local mode; on by default, as in WireMock 3).
  public var local = true
  /// Escaping, time, allowed environment variables.
  public var environment = TemplateEnvironment()
  /// The state extension's store the `state` helper reads (set by ``MockResponder``); nil: none.
  package var stateLookup: (any TemplateStateLookup)?
  /// Creates the defaults: local mode, no escaping, the clock, no environment variables.
  public init() {}

  /// Equal settings (the same store, by identity).
  public static func == (a: TemplatingConfiguration, b: TemplatingConfiguration) -> Bool {
    a.global == b.global && a.local == b.local && a.environment == b.environment
      && a.stateLookup.map(ObjectIdentifier.init) == b.stateLookup.map(ObjectIdentifier.init)
  }

  /// True when `definition` is rendered per request under these settings.
  func applies(to definition: ResponseDefinition) -> Bool {
    guard let t = definition.template else { return false }
    return global || (local && t.local)
  }
}

/// Renders a stub's templated fields for one request (the untemplated fields are kept as loaded).
enum ResponseTemplating {
  /// The definition with body, header values, status message and templated `bodyFileName` rendered;
  /// runtime problems (also written into the text as WireMock writes them) are returned for the log.
  /// A rendering that passed its budget (``Template/maximumOutputBytes``, ``Template/maximumSteps``) is
  /// not served: the definition is then ``budgetAnswer(_:stub:)``'s 500 and `failed` is true.
  static func render(
    _ definition: ResponseDefinition, request: HTTPRequest, context: RequestContext,
    pathParameters: [String: String], requestID: () -> String, seed: UInt64,
    configuration: TemplatingConfiguration, stubLabel: String
  ) -> (ResponseDefinition, [String], failed: Bool) {
    guard let t = definition.template else { return (definition, [], false) }
    // The context (and its request model) is built only when a template needs the general renderer.
    var builtContext: TemplateContext?
    func templateContext() -> TemplateContext {
      if let builtContext { return builtContext }
      // The request model holds only what the stub's templates read (a templated body file may read
      // anything).
      var fields: Set<String>?
      if t.bodyFileName == nil, t.statusMessage == nil, t.headers.isEmpty {
        fields = t.body.map(\.requestFields) ?? []
      } else {
        fields = t.bodyFileName == nil ? [] : nil
        for template in [t.body, t.statusMessage, t.bodyFileName].compactMap({ $0 })
          + t.headers.map(\.template)
        {
          if let f = template.requestFields { fields?.formUnion(f) } else { fields = nil }
        }
      }
      let made = makeContext(
        t, fields: fields, request: request, context: context, pathParameters: pathParameters,
        requestID: requestID, seed: seed, configuration: configuration)
      builtContext = made
      return made
    }
    var problems: [String] = []
    var exceeded: String?
    func render(_ template: Template) -> String {
      guard exceeded == nil else { return "" }
      let r = template.render(templateContext())
      problems += r.problems
      exceeded = r.budgetExceeded
      return r.text
    }
    var d = definition
    if let path = t.bodyFileName, let files = t.files {
      let name = render(path)
      switch files.read(name) {
      case .success(let bytes):
        d.body = bytes
        d.bodySource = .file(name)
        if !t.disableBodyFileTemplating, let text = String(validating: bytes, as: UTF8.self),
          Template.mayContainTags(text)
        {
          do {
            d.body = Array(render(try Template(text)).utf8)
          } catch {
            problems.append("__files/\(name): \(error.line):\(error.column): \(error.message); served as is")
          }
        }
      case .failure:
        problems.append("bodyFileName \(JSONValue.quoted(name)): no such file under __files/")
        d.status = 404
        d.body = Array("[ERROR: no file __files/\(name)]".utf8)
        d.headers.replaceOrAdd(name: "Content-Type", value: "text/plain")
      }
    } else if let body = t.body {
      let contentType = d.headers.first("Content-Type")
      if let encoding = TextCharset.encoding(ofContentType: contentType), encoding != .utf8 {
        d.body = TextCharset.encode(render(body), contentType: contentType)
      } else {
        // UTF-8 (the default): the rendered bytes are the content, no text in between; written straight
        // from the request when the template only copies request fields.
        if let bytes = body.renderDirect(
          request, pathParameters: pathParameters, escapesHTML: configuration.environment.escapesHTML)
        {
          d.body = bytes
        } else {
          let r = body.renderUTF8(templateContext())
          problems += r.problems
          exceeded = exceeded ?? r.budgetExceeded
          d.body = r.bytes
        }
      }
    }
    if !t.headers.isEmpty {
      var rendered = Array(d.headers.map { ($0.name, $0.value) })
      for h in t.headers where h.index < rendered.count {
        rendered[h.index].1 = fieldValue(render(h.template))
      }
      d.headers = HTTPHeaders(rendered)
    }
    if let message = t.statusMessage { d.statusMessage = fieldValue(render(message)) }
    if let exceeded { return (budgetAnswer(definition, reason: exceeded, stub: stubLabel), problems, true) }
    return (d, problems, false)
  }

  /// The answer for a rendering that passed its budget: 500 with a plain-text body naming the stub and
  /// the budget (WireMock answers a template that fails while rendering with 500 too), the stub's delays
  /// and no other field of its response.
  static func budgetAnswer(_ definition: ResponseDefinition, reason: String, stub: String)
    -> ResponseDefinition
  {
    var d = ResponseDefinition()
    d.status = 500
    d.headers = ["Content-Type": "text/plain; charset=utf-8"]
    d.body = Array("[ERROR: response template of stub \(stub): \(reason)]\n".utf8)
    d.fixedDelayMilliseconds = definition.fixedDelayMilliseconds
    d.delayDistribution = definition.delayDistribution
    return d
  }

  /// The stub's `proxyBaseUrl` rendered for this request (a trailing `/` removed), with the runtime problems
  /// and the budget the rendering passed, if it did (the URL is then cut); nil when it is not a template or
  /// templating does not apply to the stub.
  static func proxyBaseURL(
    _ definition: ResponseDefinition, request: HTTPRequest, context: RequestContext,
    pathParameters: [String: String], requestID: () -> String, seed: UInt64,
    configuration: TemplatingConfiguration
  ) -> (String, [String], String?)? {
    guard let t = definition.template, let template = t.proxyBaseUrl, configuration.applies(to: definition)
    else {
      return nil
    }
    let r = template.render(
      makeContext(
        t, fields: template.requestFields, request: request, context: context, pathParameters: pathParameters,
        requestID: requestID, seed: seed, configuration: configuration))
    let url = r.text
    return (url.hasSuffix("/") ? String(url.dropLast()) : url, r.problems, r.budgetExceeded)
  }

  /// The context templates of `t` render in: the request model (only `fields` when given), the stub's
  /// `transformerParameters`, and the server's options. The request id, client address and path
  /// parameters are worked out only when the templates read them.
  static func makeContext(
    _ t: ResponseTemplate, fields: Set<String>?, request: HTTPRequest, context: RequestContext,
    pathParameters: [String: String], requestID: () -> String, seed: UInt64,
    configuration: TemplatingConfiguration
  ) -> TemplateContext {
    // (`requestLine` builds the whole model.)
    func reads(_ member: String) -> Bool {
      fields.map { $0.contains(member) || $0.contains("requestLine") } ?? true
    }
    let parameters =
      pathParameters.isEmpty || !reads("path")
      ? [] : pathParameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    let model = TemplateRequest.model(
      request, scheme: context.isTLS ? "https" : "http", port: context.localPort,
      clientIP: reads("clientIp") ? clientIP(context.clientAddress) : "", id: reads("id") ? requestID() : "",
      pathParameters: parameters, fields: fields)
    return TemplateContext(
      request: model, parameters: t.parameters.map(TemplateValue.json) ?? .map(TemplateMap()),
      environment: configuration.environment, seed: seed, state: configuration.stateLookup)
  }

  /// A rendered header value or reason phrase: control characters (CR, LF, …) become spaces.
  static func fieldValue(_ s: String) -> String {
    guard s.utf8.contains(where: { ($0 < 32 && $0 != 9) || $0 == 127 }) else { return s }
    return String(
      s.unicodeScalars.map { ($0.value < 32 && $0 != "\t") || $0.value == 127 ? " " : Character($0) })
  }

  /// The address without its port (`127.0.0.1:5000` → `127.0.0.1`, `[::1]:5000` → `::1`).
  static func clientIP(_ address: String) -> String {
    if address.hasPrefix("["), let end = address.firstIndex(of: "]") {
      return String(address[address.index(after: address.startIndex)..<end])
    }
    let colons = address.utf8.lazy.filter { $0 == UInt8(ascii: ":") }.count
    if colons == 1, let colon = address.utf8.firstIndex(of: UInt8(ascii: ":")) {
      return String(address[..<colon])
    }
    return address
  }
}
