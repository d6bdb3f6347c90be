/// One step of a parsed message.
public enum HTTPParserEvent: Sendable, Hashable {
  /// A complete request head (request mode).
  case requestHead(HTTPRequestHead)
  /// A complete response head (response mode). A 1xx head is followed directly by `.end`.
  case responseHead(HTTPResponseHead)
  /// Content bytes with the transfer coding removed; may arrive in several pieces.
  case body([UInt8])
  /// The message is complete; trailer fields of a chunked message, or empty.
  case end(trailers: HTTPHeaders)
}

/// What ``HTTPParser/nextKind()`` found; its payload waits in the parser until taken.
package enum HTTPParserEventKind: Sendable {
  /// A request head: ``HTTPParser/takeRequestHead()``.
  case requestHead
  /// A response head: ``HTTPParser/takeResponseHead()``.
  case responseHead
  /// Content bytes: ``HTTPParser/takeContent()``.
  case body
  /// The message is complete: ``HTTPParser/takeTrailers()``.
  case end
}

/// An incremental HTTP/1.1 message parser (RFC 9112), fed bytes in pieces of any size.
///
/// Feed bytes with ``append(_:)-(UnsafeRawBufferPointer)``, then call ``next()`` until it returns nil
/// (more bytes needed). In request mode the parser handles pipelined requests one after another; in
/// response mode call ``expectResponse(to:)`` before each response so that a response to HEAD is known to
/// carry no content. Leading empty lines before a request-line are ignored (RFC 9112 §2.2); bare LF is
/// accepted as a line terminator (RFC 9112 §2.2 allows it). Errors are sticky.
public struct HTTPParser: Sendable {
  /// Which kind of message the stream carries.
  public enum Mode: Sendable, Hashable {
    /// Requests, as a server reads them.
    case request
    /// Responses, as a client reads them.
    case response
  }

  // The state, the buffer and its read index are `@usableFromInline` for the inlinable queries below: a
  // call of an opaque getter from another module copied the whole parser (a memcpy of its fields) to
  // pass it, about 60 instructions for each of the connection's several queries per request.
  @usableFromInline
  enum State: Sendable, Hashable {
    case head
    case fixedBody(remaining: Int)
    case chunkSize
    case chunkData(remaining: Int)
    case chunkDataEnd
    case trailers
    case untilClose
    case failed(HTTPParserError)
  }

  /// The mode this parser was created with.
  public let mode: Mode
  /// The limits enforced.
  public var limits: ParserLimits

  @usableFromInline var buffer: [UInt8] = []
  @usableFromInline var readIndex = 0
  /// Where the search for the end of the current head or line resumes (avoids rescanning).
  private var scanIndex = 0
  @usableFromInline var state: State = .head
  private var bodyReceived = 0
  private var announcedLength: Int?
  private var pendingMethods: [HTTPMethod] = []
  /// Method of the request-line parsed last, even when the rest of that head was rejected (so that the
  /// error response to a `HEAD` request carries no content).
  public private(set) var lastRequestMethod: HTTPMethod?
  /// A message without (more) content is complete; `.end` is the next event.
  @usableFromInline var pendingEnd = false
  /// The payload of the event ``nextKind()`` returned last, until taken. Kept here rather than returned
  /// in an ``HTTPParserEvent``: a multi-payload enum is copied and destroyed through its value witnesses,
  /// about 2,000 instructions per request on the server's path.
  private var parsedRequestHead: HTTPRequestHead?
  private var parsedResponseHead: HTTPResponseHead?
  private var parsedContent: [UInt8] = []
  private var parsedTrailers: HTTPHeaders?

  /// Creates a parser.
  /// - Parameters:
  ///   - mode: request (server side) or response (client side).
  ///   - limits: bounds enforced on every message.
  public init(mode: Mode, limits: ParserLimits = ParserLimits()) {
    self.mode = mode
    self.limits = limits
  }

  /// Bytes received but not yet consumed by ``next()``.
  @inlinable public var bufferedByteCount: Int { buffer.count - readIndex }

  /// True between messages: no partial message is buffered and no message is in progress.
  @inlinable public var isIdle: Bool {
    if case .head = state { return !pendingEnd && readIndex == buffer.count }
    return false
  }

  /// True while the parser waits for (or is inside) a message head.
  @inlinable public var isReadingHead: Bool {
    if case .head = state { return true }
    return false
  }

  /// Appends received bytes.
  public mutating func append(_ bytes: UnsafeRawBufferPointer) {
    compactIfUseful()
    buffer.append(contentsOf: bytes)
  }

  /// Appends received bytes.
  public mutating func append(_ bytes: [UInt8]) {
    compactIfUseful()
    buffer.append(contentsOf: bytes)
  }

  /// Response mode: records the method of the request the next unanswered response belongs to, so that a
  /// response to HEAD is read without content (RFC 9112 §6.3 rule 1). Call once per request sent.
  public mutating func expectResponse(to method: HTTPMethod) {
    pendingMethods.append(method)
  }

  /// Returns the next event, or nil when more bytes are needed.
  /// - Throws: ``HTTPParserError``; once thrown, every later call throws the same error.
  public mutating func next() throws(HTTPParserError) -> HTTPParserEvent? {
    switch try nextKind() {
    case nil: return nil
    case .requestHead?: return .requestHead(takeRequestHead())
    case .responseHead?: return .responseHead(takeResponseHead())
    case .body?: return .body(takeContent())
    case .end?: return .end(trailers: takeTrailers())
    }
  }

  /// ``next()`` without building the event: returns what kind of event is next (nil when more bytes are
  /// needed) and keeps its payload, to be taken with the `take` method of that kind before the next call.
  /// - Throws: ``HTTPParserError``, sticky as in ``next()``.
  package mutating func nextKind() throws(HTTPParserError) -> HTTPParserEventKind? {
    do {
      return try step()
    } catch {
      try fail(error)
    }
  }

  /// The head ``nextKind()`` announced with `.requestHead`.
  /// Takes every byte buffered after the last parsed message (a protocol the connection switched to after
  /// `101 Switching Protocols`, RFC 9110 §7.8, may have sent them with the request); the parser is empty after.
  package mutating func takeUnparsedBytes() -> [UInt8] {
    let rest = Array(buffer[readIndex...])
    buffer = []
    readIndex = 0
    return rest
  }

  package mutating func takeRequestHead() -> HTTPRequestHead {
    defer { parsedRequestHead = nil }
    return parsedRequestHead ?? HTTPRequestHead(method: .get, target: "/")
  }

  /// The head ``nextKind()`` announced with `.responseHead`.
  package mutating func takeResponseHead() -> HTTPResponseHead {
    defer { parsedResponseHead = nil }
    return parsedResponseHead ?? HTTPResponseHead(status: .ok)
  }

  /// The content bytes ``nextKind()`` announced with `.body`.
  package mutating func takeContent() -> [UInt8] {
    defer { parsedContent = [] }
    return parsedContent
  }

  /// The trailer fields of the message ``nextKind()`` announced the `.end` of (empty when it had none).
  package mutating func takeTrailers() -> HTTPHeaders {
    guard let trailers = parsedTrailers else { return HTTPHeaders() }
    parsedTrailers = nil
    return trailers
  }

  /// Signals the end of the stream. Returns `.end` when a read-until-close response body completes;
  /// nil when the stream ended cleanly between messages.
  /// - Throws: ``HTTPParserError/incompleteMessage(expectedBytes:receivedBytes:)`` when the stream ended
  ///   inside a message (a partial head, or fewer content bytes than announced).
  public mutating func finish() throws(HTTPParserError) -> HTTPParserEvent? {
    switch state {
    case .failed(let error):
      throw error
    case .untilClose:
      state = .head
      return .end(trailers: HTTPHeaders())
    case .head:
      if pendingEnd {
        pendingEnd = false
        return .end(trailers: HTTPHeaders())
      }
      var i = readIndex
      while i < buffer.count, buffer[i] == 13 || buffer[i] == 10 { i += 1 }
      if i == buffer.count { return nil }
      try fail(.incompleteMessage(expectedBytes: nil, receivedBytes: 0))
    default:
      try fail(.incompleteMessage(expectedBytes: announcedLength, receivedBytes: bodyReceived))
    }
  }

  /// Makes `error` sticky and throws it.
  private mutating func fail(_ error: HTTPParserError) throws(HTTPParserError) -> Never {
    state = .failed(error)
    throw error
  }

  // MARK: - State machine

  private mutating func step() throws(HTTPParserError) -> HTTPParserEventKind? {
    switch state {
    case .failed(let error):
      throw error
    case .head:
      return try parseHeadIfComplete()
    case .fixedBody(let remaining):
      guard let piece = takeContent(upTo: remaining) else { return nil }
      let n = piece.count
      if n == remaining {
        state = .head
        scanIndex = readIndex
        // Deliver the content now and the end on the next call.
        pendingEnd = true
      } else {
        state = .fixedBody(remaining: remaining - n)
      }
      parsedContent = piece
      return .body
    case .chunkSize:
      guard let lineEnd = try findLineEnd(maxLength: 4096) else { return nil }
      let size = try parseChunkSize(buffer[readIndex..<lineEnd.contentEnd])
      readIndex = lineEnd.next
      scanIndex = readIndex
      if size == 0 {
        state = .trailers
        return try step()
      }
      if bodyReceived + size > limits.maxBodyBytes {
        throw .bodyTooLarge(limit: limits.maxBodyBytes)
      }
      state = .chunkData(remaining: size)
      return try step()
    case .chunkData(let remaining):
      guard let piece = takeContent(upTo: remaining) else { return nil }
      state = piece.count == remaining ? .chunkDataEnd : .chunkData(remaining: remaining - piece.count)
      parsedContent = piece
      return .body
    case .chunkDataEnd:
      let available = buffer.count - readIndex
      if available == 0 { return nil }
      if buffer[readIndex] == 10 {
        readIndex += 1
      } else if buffer[readIndex] == 13 {
        if available < 2 { return nil }
        guard buffer[readIndex + 1] == 10 else { throw .invalidChunk }
        readIndex += 2
      } else {
        throw .invalidChunk
      }
      scanIndex = readIndex
      state = .chunkSize
      return try step()
    case .trailers:
      return try parseTrailersIfComplete()
    case .untilClose:
      guard let piece = takeContent(upTo: Int.max) else { return nil }
      if bodyReceived > limits.maxBodyBytes { throw .bodyTooLarge(limit: limits.maxBodyBytes) }
      parsedContent = piece
      return .body
    }
  }

  /// Takes up to `limit` buffered content bytes (nil when none are buffered) and counts them.
  private mutating func takeContent(upTo limit: Int) -> [UInt8]? {
    let n = min(buffer.count - readIndex, limit)
    guard n > 0 else { return nil }
    let piece = Array(buffer[readIndex..<readIndex + n])
    readIndex += n
    bodyReceived += n
    return piece
  }

  private mutating func compactIfUseful() {
    if readIndex > 0, readIndex == buffer.count {
      buffer.removeAll(keepingCapacity: true)
      scanIndex = max(0, scanIndex - readIndex)
      readIndex = 0
    } else if readIndex > 4096, readIndex * 2 > buffer.count {
      buffer.removeSubrange(0..<readIndex)
      scanIndex = max(0, scanIndex - readIndex)
      readIndex = 0
    }
  }

  /// Finds the end of the line starting at `readIndex`. Returns the index where the line's content ends
  /// (before CR LF or LF) and the index after the terminator.
  private mutating func findLineEnd(maxLength: Int) throws(HTTPParserError) -> (
    contentEnd: Int, next: Int
  )? {
    var i = max(scanIndex, readIndex)
    while i < buffer.count {
      if buffer[i] == 10 {
        let contentEnd = (i > readIndex && buffer[i - 1] == 13) ? i - 1 : i
        return (contentEnd, i + 1)
      }
      i += 1
    }
    scanIndex = i
    if i - readIndex > maxLength { throw .invalidChunk }
    return nil
  }

  private func parseChunkSize(_ line: ArraySlice<UInt8>) throws(HTTPParserError) -> Int {
    var size = 0
    var digits = 0
    var i = line.startIndex
    while i < line.endIndex, let v = hexValue(line[i]) {
      if size > (Int.max >> 4) - 16 { throw .invalidChunk }
      size = size << 4 | v
      digits += 1
      i += 1
    }
    guard digits > 0 else { throw .invalidChunk }
    // chunk-ext = *( BWS ";" BWS chunk-ext-name [ BWS "=" BWS chunk-ext-val ] ); ignored (§7.1.1)
    while i < line.endIndex, line[i] == 32 || line[i] == 9 { i += 1 }
    if i < line.endIndex {
      guard line[i] == 59 else { throw .invalidChunk }
      for byte in line[i...] where byte < 32 && byte != 9 || byte == 127 { throw .invalidChunk }
    }
    return size
  }

  private func hexValue(_ b: UInt8) -> Int? {
    switch b {
    case 48...57: return Int(b - 48)
    case 65...70: return Int(b - 55)
    case 97...102: return Int(b - 87)
    default: return nil
    }
  }

  /// Finds the empty line ending a header section starting at `from`; returns (end of fields, next).
  private mutating func findSectionEnd(from start: Int) -> (fieldsEnd: Int, next: Int)? {
    let from = max(scanIndex, start)
    let count = buffer.count
    // Eight bytes a step over the contiguous bytes (the indexed loop over the array, bounds-checked and
    // reloading the buffer per byte, cost about 400 instructions per request; a byte loop about 270).
    let (found, resume) = buffer.withUnsafeBufferPointer { bytes -> ((Int, Int)?, Int) in
      guard let base = bytes.baseAddress else { return (nil, count) }
      var i = from
      while true {
        i = ByteScan.firstIndex(of: 10, in: base, from: i, to: count)
        if i == count { return (nil, count) }
        // An empty line follows this LF if the next byte is LF, or CR LF.
        if i + 1 < count, base[i + 1] == 10 { return ((i + 1, i + 2), i) }
        if i + 2 < count, base[i + 1] == 13, base[i + 2] == 10 { return ((i + 1, i + 3), i) }
        if i + 1 >= count || (i + 2 >= count && base[i + 1] == 13) { return (nil, i) }
        // The head is a single empty line only if it starts with one (handled by caller).
        i += 1
      }
    }
    if found == nil { scanIndex = resume }
    return found
  }

  private mutating func parseHeadIfComplete() throws(HTTPParserError) -> HTTPParserEventKind? {
    if pendingEnd {
      pendingEnd = false
      return .end
    }
    // Ignore empty lines before the request-line or status-line (RFC 9112 §2.2).
    while readIndex < buffer.count, buffer[readIndex] == 13 || buffer[readIndex] == 10 {
      if buffer[readIndex] == 13 {
        if readIndex + 1 >= buffer.count { return nil }
        guard buffer[readIndex + 1] == 10 else {
          throw mode == .request ? .invalidRequestLine : .invalidStatusLine
        }
      }
      readIndex += 1
    }
    if readIndex == buffer.count { return nil }
    guard let end = findSectionEnd(from: readIndex) else {
      try checkPartialHeadLimits()
      return nil
    }
    if end.next - readIndex > limits.maxHeaderSectionBytes {
      try checkRequestLineLimit(upTo: end.next)
      throw .headerSectionTooLarge(limit: limits.maxHeaderSectionBytes)
    }
    let headStart = readIndex
    readIndex = end.next
    scanIndex = readIndex
    bodyReceived = 0
    announcedLength = nil
    switch mode {
    case .request:
      parsedRequestHead = try parseRequestHead(buffer[headStart..<end.fieldsEnd])
      return .requestHead
    case .response:
      parsedResponseHead = try parseResponseHead(buffer[headStart..<end.fieldsEnd])
      return .responseHead
    }
  }

  private func checkPartialHeadLimits() throws(HTTPParserError) {
    let buffered = buffer.count - readIndex
    if buffered > min(limits.maxRequestTargetBytes, Self.maxMethodBytes) {
      try checkRequestLineLimit(upTo: buffer.count)
    }
    if buffered > limits.maxHeaderSectionBytes {
      throw .headerSectionTooLarge(limit: limits.maxHeaderSectionBytes)
    }
  }

  /// Throws 414 when the request-target (possibly still incomplete) is longer than allowed.
  /// Longest method token accepted; longer ones are not a method we implement (501, RFC 9112 §3).
  static let maxMethodBytes = 64

  private func checkRequestLineLimit(upTo limit: Int) throws(HTTPParserError) {
    guard mode == .request else { return }
    var i = readIndex
    while i < limit, buffer[i] != 32, buffer[i] != 10 { i += 1 }
    if i - readIndex > Self.maxMethodBytes { throw .methodTooLong(limit: Self.maxMethodBytes) }
    guard i < limit, buffer[i] == 32 else { return }
    let targetStart = i + 1
    var j = targetStart
    while j < limit, buffer[j] != 32, buffer[j] != 10, buffer[j] != 13 { j += 1 }
    if j - targetStart > limits.maxRequestTargetBytes {
      throw .requestTargetTooLong(limit: limits.maxRequestTargetBytes)
    }
  }

  // MARK: - Heads

  /// The first line of `bytes` (without CR LF or LF) and the bytes after it.
  private func firstLine(_ bytes: ArraySlice<UInt8>) -> (line: ArraySlice<UInt8>, rest: ArraySlice<UInt8>) {
    guard let lf = bytes.firstIndex(of: 10) else {
      var end = bytes.endIndex
      if end > bytes.startIndex, bytes[end - 1] == 13 { end -= 1 }
      return (bytes[bytes.startIndex..<end], bytes[bytes.endIndex...])
    }
    var end = lf
    if end > bytes.startIndex, bytes[end - 1] == 13 { end -= 1 }
    return (bytes[bytes.startIndex..<end], bytes[(lf + 1)...])
  }

  private mutating func parseRequestHead(_ bytes: ArraySlice<UInt8>) throws(HTTPParserError)
    -> HTTPRequestHead
  {
    lastRequestMethod = nil
    // One pass over the head's contiguous bytes (indexing the slice, bounds-checked per byte, and its
    // generic `firstIndex`/`allSatisfy` cost about 700 instructions per request).
    return try bytes.withUnsafeBufferPointer { (head) throws(HTTPParserError) -> HTTPRequestHead in
      try parseRequestHead(in: head)
    }
  }

  /// `request-line CRLF *( field-line CRLF )` (RFC 9112 §2.1, §3): `head` ends after the last field
  /// line's terminator (the empty line excluded).
  private mutating func parseRequestHead(in head: UnsafeBufferPointer<UInt8>) throws(HTTPParserError)
    -> HTTPRequestHead
  {
    guard let base = head.baseAddress, !head.isEmpty else { throw .invalidRequestLine }
    let n = head.count
    let lf = ByteScan.firstIndex(of: 10, in: base, from: 0, to: n)
    let lineEnd = lf > 0 && base[lf - 1] == 13 ? lf - 1 : lf
    guard lineEnd > 0 else { throw .invalidRequestLine }
    // method SP request-target SP HTTP-version
    let sp1 = ByteScan.firstIndex(of: 32, in: base, from: 0, to: lineEnd)
    guard sp1 < lineEnd, sp1 > 0 else { throw .invalidRequestLine }
    var i = 0
    while i < sp1, Self.isTokenChar(base[i]) { i += 1 }
    guard i == sp1 else { throw .invalidRequestLine }
    if sp1 > Self.maxMethodBytes { throw .methodTooLong(limit: Self.maxMethodBytes) }
    let method = Self.method(UnsafeBufferPointer(start: base, count: sp1))
    lastRequestMethod = method
    let targetStart = sp1 + 1
    let sp2 = ByteScan.firstIndex(of: 32, in: base, from: targetStart, to: lineEnd)
    guard sp2 < lineEnd else { throw .invalidRequestLine }
    let targetBytes = UnsafeBufferPointer(start: base + targetStart, count: sp2 - targetStart)
    if targetBytes.count > limits.maxRequestTargetBytes {
      throw .requestTargetTooLong(limit: limits.maxRequestTargetBytes)
    }
    // Visible ASCII only; no fragment ("#" is not part of any request-target form, RFC 9112 §3.2).
    guard !targetBytes.isEmpty else { throw .invalidRequestLine }
    for b in targetBytes where b <= 32 || b >= 127 || b == 35 { throw .invalidRequestLine }
    let version = try Self.parseVersion(
      UnsafeBufferPointer(start: base + sp2 + 1, count: lineEnd - sp2 - 1), invalid: .invalidRequestLine)
    let fieldsStart = min(lf + 1, n)
    let headers = try parseFields(
      section: UnsafeBufferPointer(start: base + fieldsStart, count: n - fieldsStart))
    let target = String(decoding: targetBytes, as: UTF8.self)
    // request-target forms (RFC 9112 §3.2)
    let first = targetBytes[0]
    if first == 42 {  // "*"
      guard targetBytes.count == 1, method == .options else { throw .invalidRequestLine }
    } else if first != 47 {  // not origin-form
      if method == .connect {
        guard !targetBytes.contains(47) else { throw .invalidRequestLine }
      } else {
        guard Self.isAbsoluteForm(targetBytes) else { throw .invalidRequestLine }
      }
    }
    switch headers.withFirstValueBytes("Host", Self.isValidHost) {
    case nil:
      if version.minor >= 1 { throw .invalidHost("HTTP/1.1 request without Host") }
    case let (valid, repeated)?:
      if repeated { throw .invalidHost("more than one Host field") }
      if !valid, let host = headers.first("Host") {
        throw .invalidHost("'\(host)' is not uri-host [ \":\" port ]")
      }
    }
    let head = HTTPRequestHead(method: method, target: target, version: version, headers: headers)
    try setUpRequestBody(head)
    return head
  }

  /// The method named by `bytes`: the common ones are the shared constants (no string decoded per request).
  private static func method(_ bytes: UnsafeBufferPointer<UInt8>) -> HTTPMethod {
    switch bytes.count {
    case 3:
      if equals(bytes, "GET") { return .get }
      if equals(bytes, "PUT") { return .put }
    case 4:
      if equals(bytes, "POST") { return .post }
      if equals(bytes, "HEAD") { return .head }
    case 5:
      if equals(bytes, "PATCH") { return .patch }
    case 6:
      if equals(bytes, "DELETE") { return .delete }
    case 7:
      if equals(bytes, "OPTIONS") { return .options }
    default:
      break
    }
    return HTTPMethod(rawValue: String(decoding: bytes, as: UTF8.self))
  }

  /// True when `bytes` are exactly the ASCII `literal` (a byte loop: `elementsEqual` on a `UTF8View` cost
  /// more than the rest of the method lookup).
  private static func equals(_ bytes: UnsafeBufferPointer<UInt8>, _ literal: StaticString) -> Bool {
    guard bytes.count == literal.utf8CodeUnitCount else { return false }
    let text = literal.utf8Start
    var i = 0
    for b in bytes {
      guard b == text[i] else { return false }
      i += 1
    }
    return true
  }

  /// `Host = uri-host [ ":" port ]` (RFC 9110 §7.2, RFC 3986 §3.2.2): an IP literal in brackets, or
  /// unreserved, percent-encoded and sub-delims characters; the port all digits. Empty is allowed.
  static func isValidHost(_ value: String) -> Bool {
    var value = value
    return value.withUTF8(isValidHost)
  }

  /// The same check on the value's UTF-8 bytes.
  static func isValidHost(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    let n = bytes.count
    if n > 0, bytes[0] == UInt8(ascii: "[") {
      i = 1
      while i < n, bytes[i] != UInt8(ascii: "]") {
        let b = bytes[i]
        guard isHexDigit(b) || b == 58 || b == 46 || (65...90).contains(b) || (97...122).contains(b) else {
          return false
        }
        i += 1
      }
      guard i < n, i > 1 else { return false }
      i += 1
    } else {
      while i < n, bytes[i] != 58 {
        // unreserved / pct-encoded / sub-delims
        guard ASCIISet.regName.contains(bytes[i]) else { return false }
        i += 1
      }
    }
    guard i < n else { return true }
    guard bytes[i] == 58 else { return false }
    i += 1
    while i < n {
      guard (48...57).contains(bytes[i]) else { return false }
      i += 1
    }
    return true
  }

  private static func isHexDigit(_ b: UInt8) -> Bool {
    (48...57).contains(b) || (65...70).contains(b) || (97...102).contains(b)
  }

  /// True for an absolute-form target this server can answer (RFC 9112 §3.2.2): an `http` or `https`
  /// URI whose authority is a valid, non-empty `uri-host [":" port]` without userinfo (RFC 9110 §4.2.1,
  /// §4.2.4: userinfo is treated as an error).
  private static func isAbsoluteForm(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
    var i = 0
    while i < bytes.count, isAlpha(bytes[i]) { i += 1 }
    let scheme = String(decoding: bytes[0..<i], as: UTF8.self).lowercasedASCII()
    guard scheme == "http" || scheme == "https", bytes.count - i >= 3, bytes[i] == 58, bytes[i + 1] == 47,
      bytes[i + 2] == 47
    else { return false }
    let authorityStart = i + 3
    var end = authorityStart
    while end < bytes.count, bytes[end] != 47, bytes[end] != 63 { end += 1 }
    let authority = String(decoding: bytes[authorityStart..<end], as: UTF8.self)
    guard !authority.isEmpty, !authority.hasPrefix(":"), !authority.hasPrefix("[]") else { return false }
    return isValidHost(authority)
  }

  private static func isAlpha(_ b: UInt8) -> Bool { (65...90).contains(b) || (97...122).contains(b) }

  private static func parseVersion(_ bytes: UnsafeBufferPointer<UInt8>, invalid: HTTPParserError)
    throws(HTTPParserError) -> HTTPVersion
  {
    // HTTP-version = "HTTP" "/" DIGIT "." DIGIT
    // The prefix compared byte by byte: `starts(with:)` an array literal allocated the array per request.
    let s = 0
    let isHTTP =
      bytes.count >= 5 && bytes[s] == 72 && bytes[s + 1] == 84 && bytes[s + 2] == 84 && bytes[s + 3] == 80
      && bytes[s + 4] == 47
    guard bytes.count == 8, isHTTP else { throw isHTTP ? .invalidVersion : invalid }
    let major = bytes[s + 5]
    let dot = bytes[s + 6]
    let minor = bytes[s + 7]
    guard (48...57).contains(major), dot == 46, (48...57).contains(minor) else { throw .invalidVersion }
    let version = HTTPVersion(major: Int(major - 48), minor: Int(minor - 48))
    guard version.major == 1 else { throw .unsupportedVersion(version) }
    return version
  }

  /// Parses `*( field-line CRLF )` (bare LF accepted) into one array: the section's bytes and the table
  /// of field ranges behind them (``ReceivedFields``); no `String` is made here.
  private func parseFields(_ bytes: ArraySlice<UInt8>) throws(HTTPParserError) -> HTTPHeaders {
    try bytes.withUnsafeBufferPointer { (section) throws(HTTPParserError) -> HTTPHeaders in
      try parseFields(section: section)
    }
  }

  /// The same on the section's contiguous bytes.
  private func parseFields(section: UnsafeBufferPointer<UInt8>) throws(HTTPParserError) -> HTTPHeaders {
    let n = section.count
    guard n > 0, let source = section.baseAddress else { return HTTPHeaders() }
    let entry = ReceivedFields.entryBytes
    var failure: HTTPParserError?
    var count = 0
    let lines = ByteScan.count(of: 10, in: source, from: 0, to: n) + 1
    let received = ReceivedFields.make(sectionBytes: n, lineBound: lines) { base in
      base.initialize(from: source, count: n)
      let raw = UnsafeMutableRawPointer(base)
      let bytes = UnsafePointer(base)
      var p = 0
      while p < n {
        let lf = ByteScan.firstIndex(of: 10, in: bytes, from: p, to: n)
        var end = lf
        if end > p, base[end - 1] == 13 { end -= 1 }
        let lineStart = p
        p = lf + 1
        if end == lineStart { continue }
        count += 1
        if count > limits.maxHeaderCount {
          failure = .tooManyHeaderFields(limit: limits.maxHeaderCount)
          break
        }
        let first = base[lineStart]
        if first == 32 || first == 9 {
          failure = .invalidHeaderField("obsolete line folding")
          break
        }
        let colon = ByteScan.firstIndex(of: 58, in: bytes, from: lineStart, to: end)
        guard colon < end else {
          failure = .invalidHeaderField("line without a colon")
          break
        }
        if colon == lineStart {
          failure = .invalidHeaderField("empty field name")
          break
        }
        if base[colon - 1] == 32 || base[colon - 1] == 9 {
          failure = .invalidHeaderField("whitespace before the colon")
          break
        }
        var k = lineStart
        while k < colon, Self.isTokenChar(base[k]) { k += 1 }
        guard k == colon else {
          failure = .invalidHeaderField("invalid character in name")
          break
        }
        var vs = colon + 1
        var ve = end
        while vs < ve, base[vs] == 32 || base[vs] == 9 { vs += 1 }
        while ve > vs, base[ve - 1] == 32 || base[ve - 1] == 9 { ve -= 1 }
        let control = ByteScan.firstControl(in: bytes, from: vs, to: ve)
        if control < ve {
          let b = base[control]
          failure = .invalidHeaderField(
            b == 0 ? "NUL in value" : b == 13 ? "CR in value" : "control character in value")
          break
        }
        let at = n + (count - 1) * entry
        raw.storeBytes(of: UInt32(truncatingIfNeeded: lineStart), toByteOffset: at, as: UInt32.self)
        raw.storeBytes(of: UInt32(truncatingIfNeeded: colon), toByteOffset: at + 4, as: UInt32.self)
        raw.storeBytes(of: UInt32(truncatingIfNeeded: vs), toByteOffset: at + 8, as: UInt32.self)
        raw.storeBytes(of: UInt32(truncatingIfNeeded: ve), toByteOffset: at + 12, as: UInt32.self)
      }
      return failure == nil ? count : 0
    }
    if let failure { throw failure }
    return HTTPHeaders(received: received)
  }

  private static func isTokenChar(_ b: UInt8) -> Bool { ASCIISet.tchar.contains(b) }

  /// Decides request framing (RFC 9112 §6.3) and moves to the matching body state.
  private mutating func setUpRequestBody(_ head: HTTPRequestHead) throws(HTTPParserError) {
    // A request without framing has no content (RFC 9112 §6.3 rule 7).
    try beginContent(framing(of: head.headers, version: head.version), unframed: .head)
  }

  /// Moves to the state reading content framed as `framing`; `unframed` is the state for none
  /// (`.head`: no content; `.untilClose`: a response read until the connection closes).
  private mutating func beginContent(_ framing: Framing, unframed: State) throws(HTTPParserError) {
    switch framing {
    case .chunked:
      state = .chunkSize
    case .length(let n):
      if n > limits.maxBodyBytes { throw .bodyTooLarge(limit: limits.maxBodyBytes) }
      announcedLength = n
      state = n == 0 ? .head : .fixedBody(remaining: n)
      if n == 0 { pendingEnd = true }
    case .none:
      state = unframed
      if unframed == .head { pendingEnd = true }
    }
  }

  private enum Framing { case chunked, length(Int), none }

  private func framing(of headers: HTTPHeaders, version: HTTPVersion) throws(HTTPParserError) -> Framing {
    let hasTE = headers.contains("Transfer-Encoding")
    let hasCL = headers.contains("Content-Length")
    if hasTE {
      if hasCL { throw .ambiguousFraming("both Content-Length and Transfer-Encoding") }
      if version == .http1_0 { throw .ambiguousFraming("Transfer-Encoding in an HTTP/1.0 message") }
      let codings = headers.listElements("Transfer-Encoding").map { $0.lowercasedASCII() }
      for coding in codings where coding != "chunked" {
        throw .unsupportedTransferCoding(coding)
      }
      guard codings.count == 1 else {
        throw .ambiguousFraming(
          codings.isEmpty ? "empty Transfer-Encoding" : "chunked applied more than once")
      }
      return .chunked
    }
    if hasCL {
      var value: Int?
      for field in headers.values("Content-Length") {
        for element in field.split(separator: ",", omittingEmptySubsequences: false) {
          let trimmed = element.trimmingOWS()
          guard let n = parseDecimal(trimmed) else { throw .invalidContentLength }
          if let value, value != n { throw .invalidContentLength }
          value = n
        }
      }
      guard let value else { throw .invalidContentLength }
      return .length(value)
    }
    return .none
  }

  private func parseDecimal(_ s: String) -> Int? {
    guard !s.isEmpty, s.utf8.count <= 18 else { return nil }
    var n = 0
    for b in s.utf8 {
      guard (48...57).contains(b) else { return nil }
      n = n * 10 + Int(b - 48)
    }
    return n
  }

  private mutating func parseResponseHead(_ bytes: ArraySlice<UInt8>) throws(HTTPParserError)
    -> HTTPResponseHead
  {
    let (statusLine, fieldBytes) = firstLine(bytes)
    guard statusLine.count >= 12 else { throw .invalidStatusLine }
    let s = statusLine.startIndex
    let version = try statusLine[s..<s + 8].withUnsafeBufferPointer {
      (v) throws(HTTPParserError) -> HTTPVersion in try Self.parseVersion(v, invalid: .invalidStatusLine)
    }
    guard statusLine[s + 8] == 32 else { throw .invalidStatusLine }
    let digits = statusLine[(s + 9)..<(s + 12)]
    guard digits.allSatisfy({ (48...57).contains($0) }) else { throw .invalidStatusLine }
    let code = digits.reduce(0) { $0 * 10 + Int($1 - 48) }
    var reason = ""
    if statusLine.count > 12 {
      guard statusLine[s + 12] == 32 else { throw .invalidStatusLine }
      reason = String(decoding: statusLine[(s + 13)...], as: UTF8.self)
    }
    let headers = try parseFields(fieldBytes)
    var status = HTTPStatus(code: code)
    status.reasonPhrase = reason
    let head = HTTPResponseHead(version: version, status: status, headers: headers)
    let method: HTTPMethod? = (100..<200).contains(code) ? pendingMethods.first : pendingMethods.first
    if !(100..<200).contains(code), !pendingMethods.isEmpty { pendingMethods.removeFirst() }
    // RFC 9112 §6.3: HEAD, 1xx, 204, 304 have no content.
    if method == .head || status.forbidsContent {
      state = .head
      pendingEnd = true
      return head
    }
    try beginContent(framing(of: headers, version: version), unframed: .untilClose)
    return head
  }

  private mutating func parseTrailersIfComplete() throws(HTTPParserError) -> HTTPParserEventKind? {
    // Trailer section: *( field-line CRLF ) CRLF. Fast path: an empty trailer section.
    let available = buffer.count - readIndex
    if available == 0 { return nil }
    var trailers = HTTPHeaders()
    if buffer[readIndex] == 10 || buffer[readIndex] == 13 {
      if buffer[readIndex] == 13 {
        if available < 2 { return nil }
        guard buffer[readIndex + 1] == 10 else { throw .invalidChunk }
        readIndex += 2
      } else {
        readIndex += 1
      }
    } else {
      guard let end = findSectionEnd(from: readIndex) else {
        if available > limits.maxHeaderSectionBytes {
          throw .headerSectionTooLarge(limit: limits.maxHeaderSectionBytes)
        }
        return nil
      }
      if end.next - readIndex > limits.maxHeaderSectionBytes {
        throw .headerSectionTooLarge(limit: limits.maxHeaderSectionBytes)
      }
      trailers = try parseFields(buffer[readIndex..<end.fieldsEnd])
      readIndex = end.next
    }
    scanIndex = readIndex
    state = .head
    if !trailers.isEmpty { parsedTrailers = trailers }
    return .end
  }
}
