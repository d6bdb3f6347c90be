import HTTPCore

/// A stub's response, fully resolved at load time (body bytes read from `__files/`, base64 decoded,
/// `jsonBody` serialized, envelope filled).
public struct ResponseDefinition: Sendable, Hashable {
  /// Where the body came from, for the admin API and diagnostics.
  public enum BodySource: Sendable, Hashable {
    /// No body field.
    case none
    /// `body`: a string.
    case text
    /// `jsonBody`: JSON serialized compactly, numbers as written.
    case json
    /// `base64Body`.
    case base64
    /// `bodyFileName`, relative to `__files/`.
    case file(String)
    /// `x-envelope`: the named envelope template filled with the stub's values.
    case envelope(String)
  }

  /// `status` (default 200).
  public var status: Int
  /// `statusMessage`: reason phrase, nil for the standard one.
  public var statusMessage: String?
  /// `headers` in fixture order; a list value gives several lines. Framing headers
  /// (`Content-Length`, `Transfer-Encoding`) are removed at load time with a warning: the server frames every
  /// response itself, and a fixture's own framing would contradict the body it sends.
  public var headers: HTTPHeaders
  /// Body bytes.
  public var body: [UInt8]
  /// Where the body came from.
  public var bodySource: BodySource
  /// `fixedDelayMilliseconds`.
  public var fixedDelayMilliseconds: Int? {
    get { rare?.fields.fixedDelayMilliseconds }
    set { changeRare { $0.fixedDelayMilliseconds = newValue } }
  }
  /// `delayDistribution`; added to the fixed delay when both are given.
  public var delayDistribution: DelayDistribution? {
    get { rare?.fields.delayDistribution }
    set { changeRare { $0.delayDistribution = newValue } }
  }
  /// `chunkedDribbleDelay`.
  public var chunkedDribbleDelay: ChunkedDribbleDelay? {
    get { rare?.fields.chunkedDribbleDelay }
    set { changeRare { $0.chunkedDribbleDelay = newValue } }
  }
  /// `fault`: instead of a proper response.
  public var fault: Fault?
  /// `x-compression` (our extension): `auto` (gzip/deflate when `Accept-Encoding` allows and the body
  /// is at least 256 bytes), `always` (gzip whatever the request says), `never`.
  public var compression: CompressionMode = .auto
  /// `x-conditional` (our extension): answer `If-None-Match` / `If-Modified-Since` with 304, adding a
  /// strong `ETag` when the stub has none.
  public var conditional = false
  /// `x-respondBeforeBody` (our extension): on `Expect: 100-continue`, answer with this response before
  /// the request content is sent (no `100 Continue`), then close.
  public var respondBeforeContent = false
  /// `x-sandbox` (our extension): false lets an HTML, SVG or XML answer run on the server's own origin,
  /// the admin API's. True (the default): when the admin API is open (no `--admin-token`), such an answer
  /// is sent with `Content-Security-Policy: sandbox …`, so a browser runs it in an opaque origin that the
  /// admin API refuses.
  public var sandbox = true
  /// Response templating: the templated fields compiled at load time, nil when the stub has none.
  public var template: ResponseTemplate? {
    get { rare?.fields.template }
    set { changeRare { $0.template = newValue } }
  }
  /// `proxyBaseUrl` and its fields: forward the request upstream instead of answering from the stub.
  public var proxy: ProxyDefinition? {
    get { rare?.fields.proxy }
    set { changeRare { $0.proxy = newValue } }
  }
  /// `x-sse`: a server-sent events stream instead of a body.
  public var serverSentEvents: ServerSentEventsDefinition? {
    get { rare?.fields.serverSentEvents }
    set { changeRare { $0.serverSentEvents = newValue } }
  }

  /// `x-websocket`: the upgrade is answered with 101 and the connection becomes a WebSocket.
  public var webSocket: WebSocketDefinition? {
    get { rare?.fields.webSocket }
    set { changeRare { $0.webSocket = newValue } }
  }

  /// The fields most stubs leave out (delays, template, proxy: about 390 bytes inline), behind one
  /// reference that is nil when they are all absent: a plain response pays 8 bytes for them (issue 12's
  /// memory figures: a stub's fields are kept once per stub, 10,000 stubs and more).
  private var rare: Rare?

  private struct RareFields: Sendable, Hashable {
    var fixedDelayMilliseconds: Int?
    var delayDistribution: DelayDistribution?
    var chunkedDribbleDelay: ChunkedDribbleDelay?
    var template: ResponseTemplate?
    var proxy: ProxyDefinition?
    var serverSentEvents: ServerSentEventsDefinition?
    var webSocket: WebSocketDefinition?

    /// Every field is nil. Tested field by field: `== RareFields()` compared whole values (about 900
    /// instructions), and the stub parser sets every rare field of every stub, nearly always to nil.
    var isEmpty: Bool {
      fixedDelayMilliseconds == nil && delayDistribution == nil && chunkedDribbleDelay == nil
        && template == nil && proxy == nil && serverSentEvents == nil && webSocket == nil
    }
  }

  /// Immutable, so copies of a definition share it across threads; a change makes a new one. Compared and
  /// hashed by value: definitions compare as if the fields were stored inline.
  private final class Rare: Sendable, Hashable {
    let fields: RareFields
    init(_ fields: RareFields) { self.fields = fields }
    static func == (a: Rare, b: Rare) -> Bool { a === b || a.fields == b.fields }
    func hash(into hasher: inout Hasher) { hasher.combine(fields) }
  }

  /// Applies `change` (a setter's); no box is kept while every rare field is nil.
  private mutating func changeRare(_ change: (inout RareFields) -> Void) {
    var fields = rare?.fields ?? RareFields()
    change(&fields)
    rare = fields.isEmpty ? nil : Rare(fields)
  }

  /// Creates a response definition.
  public init(
    status: Int = 200, statusMessage: String? = nil, headers: HTTPHeaders = [:], body: [UInt8] = [],
    bodySource: BodySource = .none, fixedDelayMilliseconds: Int? = nil,
    delayDistribution: DelayDistribution? = nil, chunkedDribbleDelay: ChunkedDribbleDelay? = nil,
    fault: Fault? = nil
  ) {
    self.status = status
    self.statusMessage = statusMessage
    self.headers = headers
    self.body = body
    self.bodySource = bodySource
    self.fault = fault
    let rare = RareFields(
      fixedDelayMilliseconds: fixedDelayMilliseconds, delayDistribution: delayDistribution,
      chunkedDribbleDelay: chunkedDribbleDelay)
    self.rare = rare.isEmpty ? nil : Rare(rare)
  }

  /// The HTTP response to send (before delays and faults, which the connection applies).
  ///
  /// No framing headers are included: the serializer adds the one true `Content-Length` or
  /// `Transfer-Encoding`. The body is empty for 1xx/204/304 and for `HEAD` requests.
  /// - Parameter method: the request method (`HEAD` gets no body).
  public func httpResponse(for method: HTTPMethod = .get) -> HTTPResponse {
    let status = HTTPStatus(code: self.status, reasonPhrase: statusMessage ?? "")
    var headers = self.headers
    headers.remove(name: "Content-Length")
    headers.remove(name: "Transfer-Encoding")
    let body = status.forbidsContent || method == .head ? [] : self.body
    return HTTPResponse(head: HTTPResponseHead(status: status, headers: headers), body: body)
  }

  /// Longest delay a stub may ask for, in milliseconds (24 h): `fixedDelayMilliseconds`, every bound of a
  /// `delayDistribution` and a `chunkedDribbleDelay`'s `totalDuration` are refused above it, and sampled
  /// delays are clamped to it.
  public static let maxDelayMilliseconds = 86_400_000

  /// Total delay before the response in milliseconds, as WireMock's `Response.Builder.configureDelay`
  /// works it out: the stub's `fixedDelayMilliseconds`, or the global fixed delay when the stub has none,
  /// plus a sample of the stub's `delayDistribution`, or of the global one when the stub has none (a
  /// stub's own delay replaces the global one of its kind; it does not add to it). Clamped to
  /// `0...maxDelayMilliseconds` (a lognormal sample with a large sigma can be any size, even infinite),
  /// so converting it to an integer and adding to it cannot overflow.
  /// - Parameters:
  ///   - globalFixed: the global fixed delay in ms (`POST /__admin/settings` `fixedDelay`; 0 = none).
  ///   - globalDistribution: the global `delayDistribution`, or nil.
  ///   - random: a source of uniform numbers in [0, 1).
  public func sampleDelayMilliseconds(
    globalFixed: Int = 0, globalDistribution: DelayDistribution? = nil, random: () -> Double
  ) -> Double {
    let fixed = Double(fixedDelayMilliseconds ?? globalFixed)
    let total = fixed + ((delayDistribution ?? globalDistribution)?.sample(random: random) ?? 0)
    guard !total.isNaN else { return 0 }
    return min(max(total, 0), Double(Self.maxDelayMilliseconds))
  }
}

/// How a stub's response body may be compressed (`x-compression`).
public enum CompressionMode: String, Sendable, Hashable, CaseIterable {
  /// Compress when the client accepts it and the body is large enough.
  case auto
  /// Always gzip.
  case always
  /// Never compress.
  case never
}

/// WireMock's `delayDistribution`.
public enum DelayDistribution: Sendable, Hashable {
  /// Largest `sigma` of a lognormal distribution a stub may give (a sample is `median · e^(sigma·z)`).
  public static let maxSigma = 20.0

  /// `{"type":"fixed","milliseconds":n}`.
  case fixed(milliseconds: Double)
  /// `{"type":"uniform","lower":a,"upper":b}`: uniform in [lower, upper] ms.
  case uniform(lower: Double, upper: Double)
  /// `{"type":"lognormal","median":m,"sigma":s,"maxValue":cap?}`: median × e^(σ·N(0,1)), capped.
  case lognormal(median: Double, sigma: Double, maxValue: Double?)

  /// One sample in milliseconds.
  /// - Parameter random: a source of uniform numbers in [0, 1).
  public func sample(random: () -> Double) -> Double {
    switch self {
    case .fixed(let ms): return ms
    case .uniform(let lower, let upper): return lower + (upper - lower) * random()
    case .lognormal(let median, let sigma, let maxValue):
      // Box–Muller transform for one standard normal sample.
      let u1 = max(random(), 1e-12)
      let u2 = random()
      let z = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
      let v = median * exp(sigma * z)
      return maxValue.map { min(v, $0) } ?? v
    }
  }
}

/// WireMock's `chunkedDribbleDelay`: the body sent in `numberOfChunks` pieces spread over
/// `totalDuration` milliseconds.
public struct ChunkedDribbleDelay: Sendable, Hashable {
  /// Most pieces a stub may ask for (the body is never cut into more pieces than it has bytes).
  public static let maxChunks = 1_000_000
  /// Number of pieces, at least 1.
  public var numberOfChunks: Int
  /// Total time in milliseconds.
  public var totalDuration: Int
  /// Creates a dribble delay.
  public init(numberOfChunks: Int, totalDuration: Int) {
    self.numberOfChunks = numberOfChunks
    self.totalDuration = totalDuration
  }
}

/// A `fault` instead of a well-formed response: WireMock's four, plus our documented extensions.
public enum Fault: String, Sendable, Hashable, CaseIterable {
  /// WireMock: close with a TCP reset (SO_LINGER 0).
  case connectionResetByPeer = "CONNECTION_RESET_BY_PEER"
  /// WireMock: close without sending anything.
  case emptyResponse = "EMPTY_RESPONSE"
  /// WireMock: send 200 with a chunked body containing garbage framing, then close.
  case malformedResponseChunk = "MALFORMED_RESPONSE_CHUNK"
  /// WireMock: send random bytes, then close.
  case randomDataThenClose = "RANDOM_DATA_THEN_CLOSE"
  /// Extension: read the request and never answer, keeping the connection open.
  case noResponse = "NO_RESPONSE"
  /// Extension: send the head with the full `Content-Length`, half of the body, then close.
  case truncatedBody = "TRUNCATED_BODY"
  /// Extension: send the head, then nothing more while keeping the connection open.
  case headersThenStall = "HEADERS_THEN_STALL"
  /// Extension: `Content-Encoding: gzip` with a corrupted gzip body.
  case corruptGzip = "CORRUPT_GZIP"

  /// True for our extensions (not understood by WireMock).
  public var isExtension: Bool {
    switch self {
    case .connectionResetByPeer, .emptyResponse, .malformedResponseChunk, .randomDataThenClose: return false
    default: return true
    }
  }
}

#if canImport(Glibc)
  import Glibc
#elseif canImport(Musl)
  import Musl
#elseif canImport(Darwin)
  import Darwin
#endif
