import HTTPCore
import MockJSON
import Templating

/// The `response` part of a stub mapping: status, headers, body, delays, faults and our `x-` extensions;
/// and `x-responseSequence`.
extension StubParser {
  package static func parseResponse(
    _ json: JSONValue, _ path: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> ResponseDefinition {
    var r = ResponseDefinition()
    guard let o = object(json, path, "a response object such as {\"status\": 200}", &d) else { return r }
    checkResponseFields(o, path, &d)
    if let s = o["status"], o["x-websocket"] == nil {
      r.status = parseStatus(s, JSONPathText.child(path, "status"), &d) ?? r.status
    }
    r.statusMessage = parseStatusMessage(o, path, &d)
    if let h = o["headers"] { r.headers = parseResponseHeaders(h, JSONPathText.child(path, "headers"), &d) }
    parseBody(o, path, context, into: &r, &d)
    if !r.body.isEmpty, HTTPStatus(code: r.status).forbidsContent || r.status == 205 {
      d.warning(path, "a \(r.status) response has no content, so its body is not sent")
    }
    r.fixedDelayMilliseconds = nonNegativeInt(o, "fixedDelayMilliseconds", path, &d)
    if let v = o["delayDistribution"] {
      r.delayDistribution = parseDistribution(v, JSONPathText.child(path, "delayDistribution"), &d)
    }
    if let v = o["chunkedDribbleDelay"] {
      r.chunkedDribbleDelay = parseDribble(v, JSONPathText.child(path, "chunkedDribbleDelay"), &d)
    }
    if let v = o["fault"] { r.fault = parseEnumField(v, JSONPathText.child(path, "fault"), &d) }
    if let v = o["x-compression"] {
      r.compression = parseEnumField(v, JSONPathText.child(path, "x-compression"), &d) ?? r.compression
    }
    r.conditional = parseFlag(o, "x-conditional", path, &d) ?? r.conditional
    r.respondBeforeContent = parseFlag(o, "x-respondBeforeBody", path, &d) ?? r.respondBeforeContent
    r.sandbox = parseFlag(o, "x-sandbox", path, &d) ?? r.sandbox
    r.template = parseTemplates(o, path, context, r, &d)
    r.proxy = parseProxy(o, path, &d)
    r.serverSentEvents = parseServerSentEvents(o, path, r, &d)
    if let webSocket = parseWebSocket(o, path, context, &d) { (r.webSocket, r.status) = (webSocket, 101) }
    return r
  }

  static func checkResponseFields(_ o: JSONObject, _ path: String, _ d: inout Diagnostics) {
    for key in o.keys where !responseFields.contains(key) && !proxyFields.contains(key) {
      d.error(
        JSONPathText.child(path, key),
        expected:
          "a response field (status, statusMessage, headers, body, jsonBody, base64Body, bodyFileName, "
          + "fixedDelayMilliseconds, delayDistribution, chunkedDribbleDelay, fault, x-envelope, "
          + "x-compression, x-conditional, x-respondBeforeBody, x-sandbox, x-sse, x-websocket, proxyBaseUrl, additionalProxyRequestHeaders, "
          + "removeProxyRequestHeaders, proxyUrlPrefixToRemove)",
        found: "unknown field \(JSONValue.quoted(key))")
    }
  }

  /// A final status code: 1xx responses are interim (RFC 9110 §15.2), so a stub answers 200...599.
  static func parseStatus(_ s: JSONValue, _ path: @autoclosure () -> String, _ d: inout Diagnostics) -> Int? {
    if let n = s.numberValue?.intValue, (200...599).contains(n) { return n }
    d.error(path(), expected: "an integer final status code 200...599", found: s)
    return nil
  }

  static func parseStatusMessage(_ o: JSONObject, _ path: String, _ d: inout Diagnostics) -> String? {
    guard let message = string(o, "statusMessage", path, &d) else { return nil }
    if message.utf8.contains(where: { ($0 < 32 && $0 != 9) || $0 == 127 }) {
      d.error(
        JSONPathText.child(path, "statusMessage"), expected: "a reason phrase without control characters",
        found: JSONValue.quoted(message))
    }
    return message
  }

  /// Response `headers`: name → string or array of strings; names are tokens, values have no control
  /// characters (RFC 9110 §5.1, §5.5); framing headers are dropped with a warning.
  static func parseResponseHeaders(_ h: JSONValue, _ path: String, _ d: inout Diagnostics) -> HTTPHeaders {
    var headers = HTTPHeaders()
    guard let fields = object(h, path, "an object of header name → string or array of strings", &d) else {
      return headers
    }
    for m in fields {
      guard let values = headerValues(m.key, m.value, JSONPathText.child(path, m.key), &d) else { continue }
      for v in values { headers.add(name: m.key, value: v) }
    }
    return headers
  }

  /// The values of one response header field, or nil when it is refused or dropped (`path`, the field's
  /// JSON path, is made only for a problem).
  static func headerValues(
    _ name: String, _ value: JSONValue, _ path: @autoclosure () -> String, _ d: inout Diagnostics
  ) -> [String]? {
    let values: [String]
    switch value {
    case .string(let s): values = [s]
    case .array(let a) where a.allSatisfy({ $0.stringValue != nil }): values = a.compactMap(\.stringValue)
    default:
      d.error(path(), expected: "a string or an array of strings", found: value)
      return nil
    }
    if !isToken(name) {
      d.error(
        path(), expected: "a header name made of token characters (RFC 9110 §5.1)",
        found: JSONValue.quoted(name))
      return nil
    }
    if let bad = values.first(where: { v in v.utf8.contains { ($0 < 32 && $0 != 9) || $0 == 127 } }) {
      d.error(
        path(), expected: "a header value without CR, LF, NUL or other control characters (RFC 9110 §5.5)",
        found: JSONValue.quoted(bad))
      return nil
    }
    if name.equalsIgnoringASCIICase("Content-Length") || name.equalsIgnoringASCIICase("Transfer-Encoding") {
      d.warning(
        path(),
        "\(name) is a framing header: the server drops it and sends the true framing for the body it actually "
          + "sends")
      return nil
    }
    return values
  }

  /// The one body field of `body`, `jsonBody`, `base64Body`, `bodyFileName`, `x-envelope`.
  static func parseBody(
    _ o: JSONObject, _ path: String, _ context: StubParsingContext, into r: inout ResponseDefinition,
    _ d: inout Diagnostics
  ) {
    let bodyKeys = ["body", "jsonBody", "base64Body", "bodyFileName", "x-envelope"].filter { o[$0] != nil }
    if bodyKeys.count > 1 {
      d.error(
        JSONPathText.child(path, bodyKeys[1]),
        expected: "one body field (body, jsonBody, base64Body, bodyFileName or x-envelope)",
        found: bodyKeys.joined(separator: " and "))
      return
    }
    guard let key = bodyKeys.first, let v = o[key] else { return }
    // The field's JSON path, made only for a problem.
    let p = { JSONPathText.child(path, key) }
    switch key {
    case "body":
      guard let s = v.stringValue else {
        d.error(p(), expected: "a string (use jsonBody for JSON values)", found: v)
        return
      }
      // The text is sent in the charset its Content-Type declares (UTF-8 without one).
      (r.body, r.bodySource) = (TextCharset.encode(s, contentType: r.headers.first("Content-Type")), .text)
    case "jsonBody":
      (r.body, r.bodySource) = (v.serializedBytes(), .json)
    case "base64Body":
      guard let s = v.stringValue, let bytes = Base64.decode(s) else {
        d.error(
          p(), expected: "base64 text",
          found: v.stringValue.map { _ in "text that is not base64" } ?? v.kindDescription)
        return
      }
      (r.body, r.bodySource) = (bytes, .base64)
    case "bodyFileName":
      if let name = v.stringValue, Template.mayContainTags(name) {
        r.bodySource = .file(name)  // read for each request (StubParser+Templates)
        if !isLocallyTemplated(o) {
          // Global templating is a start option the parser does not see: said, not refused.
          d.warning(
            p(),
            "a template: the file is chosen per request under --global-response-templating "
              + "(or with \"transformers\": [\"response-template\"]); without templating no file is served")
        }
      } else if let bytes = parseBodyFile(v, p(), context, &d), let name = v.stringValue {
        (r.body, r.bodySource) = (bytes, .file(name))
      }
    default:
      guard let body = parseEnvelope(v, p(), context.envelopes, &d) else { return }
      r.body = body.serializedBytes()
      if let name = v["name"]?.stringValue { r.bodySource = .envelope(name) }
      if !r.headers.contains("Content-Type") {
        r.headers.add(name: "Content-Type", value: "application/json")
      }
    }
  }

  /// The content of a `bodyFileName` (a path confined to `__files/`).
  static func parseBodyFile(
    _ v: JSONValue, _ p: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> [UInt8]? {
    guard let s = v.stringValue else {
      d.error(p, expected: "a path relative to __files/", found: v)
      return nil
    }
    if let bad = escapingReason(s) {
      d.error(p, expected: "a path inside __files/", found: "\(JSONValue.quoted(s)), \(bad)")
      return nil
    }
    switch context.readBodyFile(s) {
    case .success(let bytes):
      return bytes
    case .failure(.escapes):
      d.error(p, expected: "a path inside __files/", found: "\(JSONValue.quoted(s)), which leads outside it")
    case .failure(.notFound):
      d.error(
        p, expected: "an existing file under __files/", found: "no file \(JSONValue.quoted("__files/" + s))")
    }
    return nil
  }

  /// `chunkedDribbleDelay`: `{"numberOfChunks": n ≥ 1, "totalDuration": ms}`.
  static func parseDribble(_ v: JSONValue, _ p: String, _ d: inout Diagnostics) -> ChunkedDribbleDelay? {
    guard let c = object(v, p, "an object {\"numberOfChunks\": n, \"totalDuration\": ms}", &d) else {
      return nil
    }
    let n = nonNegativeInt(c, "numberOfChunks", p, &d, maximum: ChunkedDribbleDelay.maxChunks)
    let t = nonNegativeInt(c, "totalDuration", p, &d)
    if let n, let t, n >= 1 { return ChunkedDribbleDelay(numberOfChunks: n, totalDuration: t) }
    if c["numberOfChunks"] == nil || c["totalDuration"] == nil {
      d.error(
        p, expected: "both numberOfChunks and totalDuration", found: "only \(c.keys.joined(separator: ", "))")
    } else if n == 0 {
      d.error(JSONPathText.child(p, "numberOfChunks"), expected: "at least 1", found: "0")
    }
    return nil
  }

  /// A string naming one case of `T` (`fault`, `x-compression`).
  static func parseEnumField<T: RawRepresentable & CaseIterable>(
    _ v: JSONValue, _ p: String, _ d: inout Diagnostics
  )
    -> T?
  where T.RawValue == String {
    if let s = v.stringValue, let value = T(rawValue: s) { return value }
    let names = T.allCases.map(\.rawValue)
    d.error(
      p, expected: "one of \(names.joined(separator: ", "))",
      found: v.stringValue.map { JSONValue.quoted($0) } ?? v.kindDescription)
    return nil
  }

  /// A boolean field, or nil when absent (or not a boolean, which is reported).
  static func parseFlag(_ o: JSONObject, _ key: String, _ path: String, _ d: inout Diagnostics) -> Bool? {
    guard let v = o[key] else { return nil }
    guard case .bool(let flag) = v else {
      d.error(JSONPathText.child(path, key), expected: "true or false", found: v.kindDescription)
      return nil
    }
    return flag
  }

  // MARK: - Sequences, delay distributions, envelopes

  package static func parseSequence(
    _ json: JSONValue, _ path: String, _ context: StubParsingContext, _ d: inout Diagnostics
  ) -> ResponseSequence? {
    guard
      let o = object(
        json, path, "an object {\"responses\": [ … ], \"onEnd\": \"stickOnLast\" | \"loop\"}", &d)
    else { return nil }
    for key in o.keys where key != "responses" && key != "onEnd" {
      d.error(
        JSONPathText.child(path, key), expected: "responses or onEnd",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    var onEnd = ResponseSequence.EndBehavior.stickOnLast
    if let e = o["onEnd"] {
      if let s = e.stringValue, let b = ResponseSequence.EndBehavior(rawValue: s) {
        onEnd = b
      } else {
        d.error(
          JSONPathText.child(path, "onEnd"), expected: "\"stickOnLast\" or \"loop\"",
          found: e.stringValue.map { JSONValue.quoted($0) } ?? e.kindDescription)
      }
    }
    let rp = JSONPathText.child(path, "responses")
    guard let list = o["responses"]?.arrayValue, !list.isEmpty else {
      d.error(
        rp, expected: "a non-empty array of response objects",
        found: o["responses"]?.kindDescription ?? "nothing")
      return nil
    }
    let responses = list.enumerated().map { parseResponse($1, JSONPathText.index(rp, $0), context, &d) }
    return ResponseSequence(responses: responses, onEnd: onEnd)
  }

  package static func parseDistribution(_ v: JSONValue, _ path: String, _ d: inout Diagnostics)
    -> DelayDistribution?
  {
    guard let o = object(v, path, "an object with \"type\": fixed, uniform or lognormal", &d) else {
      return nil
    }
    let type = o["type"]?.stringValue
    let allowed: Set<String>
    var result: DelayDistribution?
    switch type {
    case "fixed":
      allowed = ["type", "milliseconds"]
      if let ms = nonNegativeNumber(o, "milliseconds", path, &d) { result = .fixed(milliseconds: ms) }
    case "uniform":
      allowed = ["type", "lower", "upper"]
      let lower = nonNegativeNumber(o, "lower", path, &d)
      let upper = nonNegativeNumber(o, "upper", path, &d)
      if let lower, let upper {
        if lower <= upper {
          result = .uniform(lower: lower, upper: upper)
        } else {
          d.error(
            JSONPathText.child(path, "upper"), expected: "upper ≥ lower (\(o["lower"]?.description ?? ""))",
            found: o["upper"]?.description ?? "")
        }
      }
    case "lognormal":
      allowed = ["type", "median", "sigma", "maxValue"]
      let median = nonNegativeNumber(o, "median", path, &d)
      let sigma = nonNegativeNumber(o, "sigma", path, &d, maximum: DelayDistribution.maxSigma)
      var cap: Double?
      if o["maxValue"] != nil { cap = nonNegativeNumber(o, "maxValue", path, &d) }
      if let median, let sigma, o["maxValue"] == nil || cap != nil {
        result = .lognormal(median: median, sigma: sigma, maxValue: cap)
      }
    default:
      d.error(
        JSONPathText.child(path, "type"), expected: "\"fixed\", \"uniform\" or \"lognormal\"",
        found: o["type"].map { $0.stringValue.map { JSONValue.quoted($0) } ?? $0.kindDescription }
          ?? "nothing")
      return nil
    }
    for key in o.keys where !allowed.contains(key) {
      d.error(
        JSONPathText.child(path, key), expected: "one of \(allowed.sorted().joined(separator: ", "))",
        found: "unknown field \(JSONValue.quoted(key))")
    }
    return result
  }

  package static func parseEnvelope(
    _ v: JSONValue, _ path: String, _ envelopes: EnvelopeSet, _ d: inout Diagnostics
  )
    -> JSONValue?
  {
    guard let o = object(v, path, "an object {\"name\": \"ok\", <slot>: <value>, …}", &d) else { return nil }
    guard let name = o["name"]?.stringValue else {
      d.error(
        JSONPathText.child(path, "name"), expected: "the name of an envelope template (a string)",
        found: o["name"]?.kindDescription ?? "nothing")
      return nil
    }
    guard let slots = envelopes.slots(of: name) else {
      let known = envelopes.templates.keys.sorted()
      d.error(
        JSONPathText.child(path, "name"),
        expected: known.isEmpty
          ? "an envelope template, but envelopes.json defines none"
          : "an envelope template from envelopes.json (\(known.joined(separator: ", ")))",
        found: JSONValue.quoted(name))
      return nil
    }
    var values: [String: JSONValue] = [:]
    var ok = true
    for m in o where m.key != "name" {
      if slots.contains(m.key) {
        values[m.key] = m.value
      } else {
        ok = false
        d.error(
          JSONPathText.child(path, m.key),
          expected: "a slot of envelope \(JSONValue.quoted(name)) (\(slots.joined(separator: ", ")))",
          found: JSONValue.quoted(m.key))
      }
    }
    for s in slots where values[s] == nil {
      ok = false
      d.error(
        JSONPathText.child(path, s),
        expected: "a value for slot \(JSONValue.quoted(s)) of envelope \(JSONValue.quoted(name))",
        found: "nothing")
    }
    return ok ? envelopes.fill(name, values: values) : nil
  }
}
