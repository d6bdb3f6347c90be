import HTTPCore
import Mappings
import Synchronization

/// Turns a stub's ``ResponseDefinition`` into the ``ResponsePlan`` a connection executes: delay,
/// content coding, conditional requests (304), slow drip, and network faults.
///
/// Every decision is made per request from the request and the definition alone; nothing is kept
/// between requests except a cache of compressed bodies (a pure function of body and coding).
final class ResponsePlanBuilder: Sendable {
  /// Bodies smaller than this (bytes) are not compressed in `auto` mode.
  static let compressionThreshold = 256
  /// How long `NO_RESPONSE` and `HEADERS_THEN_STALL` hold a connection at most (ms); the server's
  /// `maxHoldMilliseconds` bounds it further.
  let maxHoldMilliseconds: Int
  /// True while the admin API is open (no `--admin-token`): document answers carry
  /// ``DocumentSandbox/policy`` unless their stub says `"x-sandbox": false`.
  let sandboxesDocuments: Bool
  private let compressed = Mutex<[CompressionKey: [UInt8]]>([:])

  private struct CompressionKey: Hashable {
    var coding: ContentCoding
    var body: [UInt8]
  }

  init(maxHoldMilliseconds: Int, sandboxesDocuments: Bool) {
    self.maxHoldMilliseconds = maxHoldMilliseconds
    self.sandboxesDocuments = sandboxesDocuments
  }

  /// True when `request` cannot change the answer of `definition`'s prepared response: no content coding
  /// to negotiate (the definition never compresses, or the request has no `Accept-Encoding`).
  static func servesAsPrepared(_ definition: ResponseDefinition, to request: HTTPRequest) -> Bool {
    definition.compression == .never || !request.headers.contains("Accept-Encoding")
  }

  /// Builds the plan.
  /// - Parameters:
  ///   - definition: the stub's response (body already resolved).
  ///   - request: the request being answered (method, `Accept-Encoding`, conditional fields).
  ///   - delayMilliseconds: total delay before anything is sent (fixed + distribution + global), ≥ 0.
  ///   - random: uniform random bytes source for `RANDOM_DATA_THEN_CLOSE` (seeded for reproducibility).
  ///   - prepared: the definition's ``prepare(_:)`` result, sent as it is: pass it only when
  ///     ``servesAsPrepared(_:to:)`` holds.
  func plan(
    for definition: ResponseDefinition, request: HTTPRequest, delayMilliseconds: Int,
    prepared: PreparedResponse? = nil, random: () -> UInt64
  ) -> ResponsePlan {
    if let prepared {
      // An array literal is allocated at its size; appending to an empty array took the growth path
      // (about 350 instructions per request).
      let steps: [ResponsePlan.Step] =
        delayMilliseconds > 0
        ? [.pause(milliseconds: delayMilliseconds), .prepared(prepared)] : [.prepared(prepared)]
      return ResponsePlan(steps: steps, keepAlive: !prepared.closes)
    }
    var steps: [ResponsePlan.Step] = []
    if delayMilliseconds > 0 { steps.append(.pause(milliseconds: delayMilliseconds)) }
    let status = HTTPStatus(code: definition.status, reasonPhrase: definition.statusMessage ?? "")
    var head = HTTPResponseHead(status: status, headers: definition.headers)
    var body = definition.body
    if sandboxesDocuments, definition.sandbox { DocumentSandbox.apply(to: &head, hasContent: !body.isEmpty) }

    if let fault = definition.fault {
      steps += faultSteps(fault, head: head, body: body, random: random)
      return ResponsePlan(steps: steps, keepAlive: false)
    }

    if definition.conditional,
      let notModified = conditionalResponse(head: &head, body: body, request: request)
    {
      steps.append(.response(notModified, body: []))
      return ResponsePlan(steps: steps)
    }

    guard encode(&head, &body, mode: definition.compression, request: request) else {
      // RFC 9110 §12.5.3: identity excluded and no coding we have is acceptable.
      steps.append(
        .response(
          HTTPResponseHead(
            status: HTTPStatus(code: 406),
            headers: ["Content-Type": "application/json", "Vary": "Accept-Encoding"]),
          body: Array(#"{"error":"no acceptable content coding (Accept-Encoding)","status":406}"#.utf8)))
      return ResponsePlan(steps: steps)
    }

    if let dribble = definition.chunkedDribbleDelay, !body.isEmpty,
      HTTPSerializer.sendsContent(status: status, requestMethod: request.method)
    {
      steps.append(.responseHead(head, contentLength: body.count))
      // More pieces than bytes, than milliseconds of totalDuration (a pause under 1 ms is none) or than
      // 10,000 cost a plan step and a copy each and change nothing a client can see: 1,000,000 chunks of
      // a 3 MB body took 219 MB per request.
      let pieces = max(
        1, min(dribble.numberOfChunks, body.count, max(1, dribble.totalDuration), Self.maximumDribblePieces))
      let interval = max(0, dribble.totalDuration) / pieces
      var start = 0
      for i in 0..<pieces {
        let end = i == pieces - 1 ? body.count : start + body.count / pieces
        steps.append(.pause(milliseconds: interval))
        steps.append(.raw(Array(body[start..<end])))
        start = end
      }
      return ResponsePlan(steps: steps)
    }
    steps.append(.response(head, body: body))
    return ResponsePlan(steps: steps, keepAlive: !Self.asksToClose(head))
  }

  /// The most pieces a `chunkedDribbleDelay` body is sent in.
  static let maximumDribblePieces = 10_000

  /// True when the stub's own headers say `Connection: close`: the connection then closes after this
  /// response (the field itself is written by the connection, RFC 9112 §9.6).
  static func asksToClose(_ head: HTTPResponseHead) -> Bool {
    head.headers.hasToken("close", in: "Connection")
  }

  /// The answer to a request without `Accept-Encoding`, serialized once, when nothing else in a request
  /// can change it (no fault, drip, conditional response or forced compression); nil otherwise.
  func prepare(_ definition: ResponseDefinition) -> PreparedResponse? {
    guard definition.fault == nil, definition.chunkedDribbleDelay == nil, !definition.conditional,
      definition.compression != .always, definition.serverSentEvents == nil
    else { return nil }
    let probe = HTTPRequest(head: HTTPRequestHead(method: .get, target: "/", headers: ["Host": "prepare"]))
    let plan = plan(for: definition, request: probe, delayMilliseconds: 0, random: { 0 })
    guard plan.steps.count == 1, case .response(let head, let body) = plan.steps[0] else { return nil }
    return PreparedResponse(head: head, body: body)
  }

  // MARK: Faults

  private func faultSteps(
    _ fault: Fault, head: HTTPResponseHead, body: [UInt8], random: () -> UInt64
  ) -> [ResponsePlan.Step] {
    switch fault {
    case .connectionResetByPeer:
      return [.reset]
    case .emptyResponse:
      return [.close]
    case .malformedResponseChunk:
      // A valid head announcing chunked content, then bytes that are not a chunk, then close.
      var malformed = HTTPResponseHead(status: .ok, headers: head.headers)
      malformed.headers.remove(name: "Content-Length")
      malformed.headers.replaceOrAdd(name: "Transfer-Encoding", value: "chunked")
      var bytes = HTTPSerializer.responseHead(malformed)
      bytes += Array("lskdu018973t09sylgasjkfg1][]'./.sdlv\r\n".utf8)
      return [.raw(bytes), .close]
    case .randomDataThenClose:
      var bytes: [UInt8] = []
      bytes.reserveCapacity(1024)
      while bytes.count < 1024 {
        var word = random()
        for _ in 0..<8 {
          bytes.append(UInt8(truncatingIfNeeded: word))
          word >>= 8
        }
      }
      return [.raw(bytes), .close]
    case .noResponse:
      return [.hold(maxMilliseconds: maxHoldMilliseconds)]
    case .truncatedBody:
      let sent = body.count / 2
      return [.responseHead(head, contentLength: max(body.count, 1)), .raw(Array(body.prefix(sent))), .close]
    case .headersThenStall:
      return [.responseHead(head, contentLength: body.count), .hold(maxMilliseconds: maxHoldMilliseconds)]
    case .corruptGzip:
      var corrupt = ContentCoding.gzip.encode(body.isEmpty ? Array("{}".utf8) : body)
      // Keep the gzip magic and header, ruin the deflate data and the trailer.
      for i in stride(from: 10, to: corrupt.count, by: 3) { corrupt[i] ^= 0x5A }
      var gzHead = head
      gzHead.headers.replaceOrAdd(name: "Content-Encoding", value: "gzip")
      return [.response(gzHead, body: corrupt), .close]
    }
  }

  // MARK: Conditional requests (RFC 9110 §13)

  /// When the stub opts in: ensures an `ETag` (a strong hash of the content unless the stub has one) and
  /// returns a 304 head if `If-None-Match` (or, without it, `If-Modified-Since`) says the client's copy is
  /// current.
  private func conditionalResponse(head: inout HTTPResponseHead, body: [UInt8], request: HTTPRequest)
    -> HTTPResponseHead?
  {
    guard head.status.isSuccess, request.method == .get || request.method == .head else { return nil }
    if !head.headers.contains("ETag") {
      head.headers.add(name: "ETag", value: "\"\(ResponsePlanBuilder.fnv1a(body))\"")
    }
    let etag = head.headers.first("ETag") ?? ""
    let requestTags = request.headers.listElements("If-None-Match")
    var notModified = false
    if !requestTags.isEmpty {
      // Weak comparison (RFC 9110 §8.8.3.2): ignore W/ prefixes.
      func opaque(_ tag: String) -> String { tag.hasPrefix("W/") ? String(tag.dropFirst(2)) : tag }
      notModified = requestTags.contains { $0 == "*" || opaque($0) == opaque(etag) }
    } else if let since = request.headers.first("If-Modified-Since"),
      let modified = head.headers.first("Last-Modified"),
      let sinceDate = HTTPDate.parse(since), let modifiedDate = HTTPDate.parse(modified)
    {
      notModified = modifiedDate <= sinceDate
    }
    guard notModified else { return nil }
    var result = HTTPResponseHead(status: .notModified)
    // RFC 9110 §15.4.5: send the fields a 200 would have carried that describe the representation.
    for name in ["ETag", "Last-Modified", "Cache-Control", "Expires", "Vary", "Content-Location", "Date"] {
      for value in head.headers.values(name) { result.headers.add(name: name, value: value) }
    }
    return result
  }

  /// 64-bit FNV-1a of `bytes` as 16 hex digits: a stable, cheap entity tag.
  static func fnv1a(_ bytes: [UInt8]) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for b in bytes {
      hash ^= UInt64(b)
      hash = hash &* 0x100_0000_01b3
    }
    let hex = String(hash, radix: 16)
    return String(repeating: "0", count: 16 - hex.count) + hex
  }

  // MARK: Content coding

  /// Applies the content coding the stub and the request call for. Returns false when the client
  /// accepts no coding we can produce (identity excluded too).
  private func encode(
    _ head: inout HTTPResponseHead, _ body: inout [UInt8], mode: CompressionMode, request: HTTPRequest
  ) -> Bool {
    guard mode != .never, !body.isEmpty, !head.headers.contains("Content-Encoding"),
      !head.status.forbidsContent
    else { return true }
    let coding: ContentCoding
    switch mode {
    case .never:
      return true
    case .always:
      coding = .gzip
    case .auto:
      let accepted = request.headers.values("Accept-Encoding")
      addVary(&head)
      guard let chosen = ContentCoding.negotiate(acceptEncoding: accepted) else { return false }
      if chosen == .identity { return true }
      if body.count < ResponsePlanBuilder.compressionThreshold,
        ContentCoding.isAcceptable(.identity, acceptEncoding: accepted)
      {
        return true
      }
      coding = chosen
    }
    let key = CompressionKey(coding: coding, body: body)
    if let cached = compressed.withLock({ $0[key] }) {
      body = cached
    } else {
      let encoded = coding.encode(body)
      compressed.withLock { cache in
        if cache.count > 256 { cache.removeAll() }
        cache[key] = encoded
      }
      body = encoded
    }
    head.headers.add(name: "Content-Encoding", value: coding.rawValue)
    if mode == .always { addVary(&head) }
    return true
  }

  private func addVary(_ head: inout HTTPResponseHead) {
    if !head.headers.listElements("Vary").contains(where: { $0.equalsIgnoringASCIICase("Accept-Encoding") }) {
      head.headers.add(name: "Vary", value: "Accept-Encoding")
    }
  }
}
