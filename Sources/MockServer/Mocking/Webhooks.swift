import Dispatch
import Foundation
import HTTPCore
import Mappings
import MockJSON
import Synchronization
import Templating

/// One webhook of a stub: WireMock's `serveEventListeners` entry named `webhook`, or the older
/// `postServeActions` (an array of `{"name":"webhook","parameters":{…}}` or an object `{"webhook":{…}}`).
///
/// Parameters: `method` (default POST), `url` (absolute, http only), `headers` (string or array values),
/// `body` or `base64Body`, `delay` (`{"type":"fixed","milliseconds":n}`, `uniform`, `lognormal`, as
/// `delayDistribution`). Method, URL, header values and a text body are Handlebars templates (as in
/// WireMock, where webhooks are always templated): `{{originalRequest.body}}`,
/// `{{jsonPath originalRequest.body '$.id'}}`; `originalRequest` is the served request (`request` works too)
/// and `originalResponse` what the stub answered (see ``ServedResponse``).
struct Webhook: Sendable {
  var method: String
  var url: String
  var headers: [(String, String)]
  var body: [UInt8]
  /// The body as a template, when it was given as text (`body`).
  var bodyText: String?
  var delay: DelayDistribution?

  /// The webhooks of `stub`, in order (entries that are not webhooks or lack a `url` are skipped).
  static func list(of stub: StubMapping) -> [Webhook] {
    guard stub.extensions.serveActions, case .object(let o) = stub.source else { return [] }
    var out: [Webhook] = []
    for key in ["serveEventListeners", "postServeActions"] {
      guard let value = o[key] else { continue }
      if let list = value.arrayValue {
        for item in list {
          guard let e = item.objectValue, e["name"]?.stringValue == "webhook",
            let p = e["parameters"]?.objectValue, let hook = Webhook(p)
          else { continue }
          out.append(hook)
        }
      } else if let map = value.objectValue, let p = map["webhook"]?.objectValue, let hook = Webhook(p) {
        out.append(hook)
      }
    }
    return out
  }

  /// A webhook from its parameters, or nil without a `url`.
  init?(_ p: JSONObject) {
    guard let url = p["url"]?.stringValue, !url.isEmpty else { return nil }
    self.url = url
    method = p["method"]?.stringValue ?? "POST"
    var headers: [(String, String)] = []
    if let h = p["headers"]?.objectValue {
      for m in h {
        for v in m.value.arrayValue ?? [m.value] {
          if let s = v.stringValue { headers.append((m.key, s)) }
        }
      }
    }
    self.headers = headers
    if let text = p["body"]?.stringValue {
      bodyText = text
      body = Array(text.utf8)
    } else if let json = p["jsonBody"] {
      bodyText = json.serialized()
      body = Array(json.serialized().utf8)
    } else if let b64 = p["base64Body"]?.stringValue, let data = Data(base64Encoded: b64) {
      body = [UInt8](data)
    } else {
      body = []
    }
    if let d = p["delay"] {
      var diagnostics = Diagnostics(file: "")
      delay = StubParser.parseDistribution(d, "$.parameters.delay", &diagnostics)
    }
  }
}

/// What a stub answered, for webhook templates: `originalResponse.status`, `.headers.NAME` (case-insensitive,
/// a list when repeated, as request headers), `.body` (text in the charset of its `Content-Type`) and
/// `.bodyAsBase64`. The response as the stub defined it after templating; the status is the one sent (a
/// `304` from `x-conditional` included).
struct ServedResponse: Sendable {
  var status: Int
  var headers: HTTPHeaders
  var body: [UInt8]

  /// The `originalResponse` model.
  var templateValue: TemplateValue {
    var fields = TemplateMap(caseInsensitive: true)
    for field in headers {
      if case .multi(let existing)? = fields[field.name] {
        fields.set(field.name, .multi(existing + [field.value]))
      } else {
        fields.entries.append((field.name, .multi([field.value])))
      }
    }
    return .map(
      TemplateMap([
        ("status", .int(status)), ("headers", .map(fields)),
        ("body", .string(TextCharset.decode(body, contentType: headers.first("Content-Type")))),
        ("bodyAsBase64", .string(Base64.encode(body))),
      ]))
  }
}

/// Sends webhooks after stubs are served, each on a background queue after its delay: serving never
/// waits for one. At most ``maxInFlight`` are pending or sending at once (more are dropped and logged);
/// every outcome is logged (`webhook POST http://… -> 200` or the reason it failed).
final class WebhookDispatcher: Sendable {
  /// Webhooks pending (delayed) or sending at once, at most.
  static let maxInFlight = 64
  /// The most webhooks or proxies of this server a request may have come through and still fire its
  /// stub's webhooks (counted in its `Via`).
  static let maxHops = 10
  /// Longest delay honoured, in ms (longer ones are clamped).
  static let maxDelayMilliseconds = 600_000
  let logger: RequestLogger
  let templating: TemplatingConfiguration
  private let queue = DispatchQueue(label: "mockserver.webhooks", attributes: .concurrent)
  private let inFlight = Atomic<Int>(0)
  private let sentCount = Atomic<Int>(0)

  init(logger: RequestLogger, templating: TemplatingConfiguration) {
    self.logger = logger
    self.templating = templating
  }

  /// Webhook requests answered with any status since start (for tests and the log).
  var delivered: Int { sentCount.load(ordering: .relaxed) }

  /// Schedules `hooks` of the stub labelled `stubLabel`, served for `request`; `record` gets each
  /// outcome line (for the journal entry of the request).
  func send(
    _ hooks: [Webhook], stubLabel: String, request: HTTPRequest, context: RequestContext,
    response: ServedResponse, record: @escaping @Sendable (String) -> Void = { _ in }
  ) {
    // A webhook that calls a stub of this server whose webhook calls it again would run forever: each
    // webhook request carries the trigger's Via entries and this server's, and a request that already
    // came through ``maxHops`` of them fires none.
    let hops = ProxyForwarder.hopsThroughThisServer(request)
    if !hooks.isEmpty, hops >= WebhookDispatcher.maxHops {
      let outcome = "not sent: the request came through \(hops) webhooks or proxies of this server (a loop?)"
      logger.line("webhook of \(stubLabel) " + outcome)
      record(outcome)
      return
    }
    for hook in hooks {
      guard inFlight.add(1, ordering: .relaxed).newValue <= WebhookDispatcher.maxInFlight else {
        inFlight.subtract(1, ordering: .relaxed)
        logger.line(
          "webhook of \(stubLabel) dropped: \(WebhookDispatcher.maxInFlight) webhooks already pending")
        continue
      }
      let sampled = hook.delay?.sample { Double.random(in: 0..<1) } ?? 0
      let ms =
        sampled.isFinite ? Int(min(max(sampled, 0), Double(WebhookDispatcher.maxDelayMilliseconds))) : 0
      queue.asyncAfter(deadline: .now() + .milliseconds(ms)) { [self] in
        defer { inFlight.subtract(1, ordering: .relaxed) }
        record(deliver(hook, stubLabel: stubLabel, request: request, context: context, response: response))
      }
    }
  }

  /// Sends one webhook; returns its outcome line.
  private func deliver(
    _ hook: Webhook, stubLabel: String, request: HTTPRequest, context: RequestContext,
    response: ServedResponse
  ) -> String {
    var problems: [String] = []
    let model = TemplateRequest.model(
      request, scheme: context.isTLS ? "https" : "http", port: context.localPort,
      clientIP: ResponseTemplating.clientIP(context.clientAddress))
    // WireMock's webhook model calls the served request `originalRequest`; `originalResponse` is ours.
    let templateContext = TemplateContext(
      request: model, environment: templating.environment,
      additionalModel: TemplateMap([("originalRequest", model), ("originalResponse", response.templateValue)]
      ),
      state: templating.stateLookup)
    var exceeded = false
    func render(_ text: String) -> String {
      guard text.contains("{{") else { return text }
      do {
        let r = try Template(text).render(templateContext)
        problems += r.problems
        if r.budgetExceeded != nil { exceeded = true }
        return r.text
      } catch {
        problems.append("\(error)")
        return text
      }
    }
    let method = render(hook.method)
    let url = render(hook.url)
    var headers = HTTPHeaders()
    for (name, value) in hook.headers { headers.add(name: name, value: render(value)) }
    for entry in request.headers.listElements("Via") { headers.add(name: "Via", value: entry) }
    headers.add(name: "Via", value: "1.1 \(ProxyForwarder.viaPseudonym)")
    let body = hook.bodyText.map { Array(render($0).utf8) } ?? hook.body
    for p in problems { logger.line("webhook of \(stubLabel): template: \(p)") }
    // A rendering cut at its budget would send a cut request: none is sent.
    guard !exceeded else {
      let outcome = "\(method) not sent: its template passed the rendering budget"
      logger.line("webhook of \(stubLabel): " + outcome)
      return outcome
    }
    switch WebhookSender.send(method: method, url: url, headers: headers, body: body) {
    case .success(let status):
      sentCount.add(1, ordering: .relaxed)
      let outcome = "\(method) \(url) -> \(status)"
      logger.line("webhook of \(stubLabel): " + outcome)
      return outcome
    case .failure(let failure):
      let outcome = "\(method) \(url) failed: \(failure)"
      logger.line("webhook of \(stubLabel): " + outcome)
      return outcome
    }
  }
}
