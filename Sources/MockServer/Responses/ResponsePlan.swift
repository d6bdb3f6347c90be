import Dispatch
import HTTPCore
import Mappings
import MockJSON

/// What the connection does to answer one request: a sequence of steps, so that normal responses, delays,
/// slow drip and network faults are all executed by the same machinery, in order, per request.
///
/// The connection adds the true framing (`Content-Length`, never both it and `Transfer-Encoding`),
/// `Date`, and `Connection` fields to heads written by ``Step/response(_:body:)`` and
/// ``Step/responseHead(_:contentLength:)``; ``Step/raw(_:)`` bytes go out exactly as given (for faults).
public struct ResponsePlan: Sendable {
  /// One step of a plan.
  public enum Step: Sendable {
    /// A complete response: framed head then content (no content for HEAD, 1xx, 204, 304).
    case response(HTTPResponseHead, body: [UInt8])
    /// A complete response serialized ahead of time (same rules as ``response(_:body:)``).
    case prepared(PreparedResponse)
    /// A framed head announcing `contentLength` bytes (content follows in `.raw` steps, or never).
    case responseHead(HTTPResponseHead, contentLength: Int)
    /// Bytes written exactly as given.
    case raw([UInt8])
    /// Waits this many milliseconds (≥ 0) before the next step; cancelled if the client goes away.
    case pause(milliseconds: Int)
    /// Sends nothing more and keeps the connection open until the client closes it or
    /// `maxMilliseconds` pass, then closes.
    case hold(maxMilliseconds: Int)
    /// Closes at once with a TCP RST (SO_LINGER {1,0}).
    case reset
    /// Flushes what was written, then closes with a FIN.
    case close
    /// Starts work that finishes elsewhere (an upstream exchange on its own thread, a computation on a
    /// background queue: ``deferred(_:)``) and hands the plan that runs next to the given callback,
    /// exactly once, from any thread; the connection takes it back on its loop. Dropped if the client goes
    /// away meanwhile (its completion is told it was not served).
    case awaiting(@Sendable (_ resume: @escaping @Sendable (ResponsePlan) -> Void) -> Void)
    /// A response whose content a ``ContentSource`` produces while the connection writes it: the head at
    /// once, framed as `framing` says, then the content as it comes, taken only while the connection's
    /// unsent output is under the source's bound, with the source's heartbeat while it is idle. A source
    /// that fails part way closes the connection; one that finishes lets the plan go on. Responses without
    /// content (HEAD, 204, 304) send the head alone and cancel the source. Made by proxy stubs relaying a
    /// large upstream answer (``StreamedBody``, `.chunked` or `.length`) and by the admin API's
    /// `GET /__admin/events` (``EventStreamSubscription``, `.untilClose`).
    case streamedResponse(HTTPResponseHead, framing: ContentFraming, source: any ContentSource)
    /// `101 Switching Protocols` (RFC 9110 §7.8): the head as given (no framing, no `Connection: close`),
    /// then the connection belongs to `session`: received bytes go to it, its output is pumped as a
    /// stream's, and the connection closes when its content ends. The plan's completion is told it was
    /// served once the head is written. The last step of a plan.
    case upgrade(HTTPResponseHead, session: any UpgradedSession)

    /// Computes the rest of the answer on a background queue, off the event loop (heavy admin reads, stub
    /// requests with large content), so the loop's other connections are not kept waiting; the plan it
    /// returns runs next. An ``awaiting(_:)`` step.
    public static func deferred(_ make: @escaping @Sendable () -> ResponsePlan) -> Step {
      .awaiting { resume in
        DispatchQueue.global(qos: .userInitiated).async { resume(make()) }
      }
    }

    /// This step with `transform` applied to the plan it hands on, when it is an ``awaiting(_:)`` step;
    /// any other step as it is.
    func mapAwaitedPlan(_ transform: @escaping @Sendable (ResponsePlan) -> ResponsePlan) -> Step {
      guard case .awaiting(let start) = self else { return self }
      return .awaiting { resume in start { resume(transform($0)) } }
    }
  }

  /// The steps in order.
  public var steps: [Step]
  /// False forces `Connection: close` after this response even when the request allows keep-alive.
  public var keepAlive: Bool
  /// Called once on the loop thread when the plan ends: `true` when every step ran (the response was
  /// served), `false` when the client went away or the server stopped first.
  public var onComplete: (@Sendable (_ served: Bool) -> Void)?

  /// Creates a plan.
  public init(steps: [Step], keepAlive: Bool = true, onComplete: (@Sendable (Bool) -> Void)? = nil) {
    self.steps = steps
    self.keepAlive = keepAlive
    self.onComplete = onComplete
  }

  /// A plain response, optionally after `delayMilliseconds`.
  public static func respond(
    status: HTTPStatus, headers: HTTPHeaders = [:], body: [UInt8] = [], delayMilliseconds: Int = 0,
    keepAlive: Bool = true
  ) -> ResponsePlan {
    var steps: [Step] = []
    if delayMilliseconds > 0 { steps.append(.pause(milliseconds: delayMilliseconds)) }
    steps.append(.response(HTTPResponseHead(status: status, headers: headers), body: body))
    return ResponsePlan(steps: steps, keepAlive: keepAlive)
  }

  /// A JSON response whose body is `json` (already serialized) with `Content-Type: application/json`.
  public static func json(status: HTTPStatus, _ json: String, keepAlive: Bool = true) -> ResponsePlan {
    respond(
      status: status, headers: ["Content-Type": "application/json"], body: Array(json.utf8),
      keepAlive: keepAlive)
  }

  /// WireMock's error shape, `{"errors":[{"code","source":{"pointer"},"title","detail"}]}` (the pointer only
  /// where given; `code` defaults to the status): the admin API's errors, and the mock's own 503 when the
  /// shared state store cannot answer.
  package static func errors(
    _ status: HTTPStatus, _ list: [(title: String, detail: String, pointer: String?)], code: Int? = nil
  ) -> ResponsePlan {
    let errors = list.map { e -> JSONValue in
      var pairs: [(String, JSONValue)] = [("code", .number(JSONNumber(code ?? status.code)))]
      if let p = e.pointer {
        pairs.append(("source", .object(JSONObject(pairs: [("pointer", .string(p))]))))
      }
      pairs += [("title", .string(e.title)), ("detail", .string(e.detail))]
      return .object(JSONObject(pairs: pairs))
    }
    return respond(
      status: status, headers: ["Content-Type": "application/json"],
      body: JSONValue.object(JSONObject(pairs: [("errors", .array(errors))])).serializedBytes(pretty: true))
  }
}

/// Facts about the connection a request arrived on.
public struct RequestContext: Sendable {
  /// The peer as accepted; ``clientAddress`` is its text.
  package var client: ClientAddress
  /// Peer address as `ip:port` (`[v6]:port` for IPv6), formatted when read.
  public var clientAddress: String {
    get { client.text }
    set { client = .text(newValue) }
  }
  /// Local port the request arrived on.
  public var localPort: Int
  /// True on the HTTPS listener.
  public var isTLS: Bool
  /// Subject of the verified client certificate (mutual TLS), or nil.
  public var clientCertificateSubject: String?
  /// Connection number, unique per server run.
  public var connectionID: UInt64
  /// 1 for the first request on the connection, 2 for the next...
  public var requestNumber: Int
  /// Wall-clock time the request head completed, seconds since 1970.
  public var receivedAt: Double
  /// The session the request belongs to (`X-Mock-Session` or a `/__session/{id}/` prefix;
  /// docs/scaling.md#sessions), or nil: its stubs, scenario states and journal entries are the session's.
  package var session: String?

  /// A context for a request from `client` on `localPort` (1...65535).
  package init(
    client: ClientAddress, localPort: Int, isTLS: Bool, clientCertificateSubject: String?,
    connectionID: UInt64,
    requestNumber: Int, receivedAt: Double
  ) {
    self.client = client
    self.localPort = localPort
    self.isTLS = isTLS
    self.clientCertificateSubject = clientCertificateSubject
    self.connectionID = connectionID
    self.requestNumber = requestNumber
    self.receivedAt = receivedAt
  }

  /// What request matching sees of the connection (`scheme`, `port`, `clientIp`).
  var connection: RequestView.Connection {
    RequestView.Connection(isTLS: isTLS, localPort: localPort, client: client)
  }
}

/// The application behind the server: turns requests into plans. Called on an event-loop thread; it must
/// not block (no waiting for I/O or other threads).
public protocol HTTPResponder: Sendable {
  /// A request head arrived with `Expect: 100-continue` and content to follow. Return a plan to answer
  /// with a final status without reading the content (the connection then closes; RFC 9110 §10.1.1), or
  /// nil to send `100 Continue` and read the content.
  func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan?
  /// A complete request (content de-chunked) arrived; return how to answer it.
  func respond(to request: HTTPRequest, context: RequestContext) -> ResponsePlan
  /// A request could not be parsed; the server answers with `error.status` and closes. For logging and
  /// the journal. The default does nothing.
  func didReject(head: HTTPRequestHead?, error: HTTPParserError, context: RequestContext)
}

extension HTTPResponder {
  /// Default: never answers before the content.
  public func respondBeforeContent(to head: HTTPRequestHead, context: RequestContext) -> ResponsePlan? {
    nil
  }
  /// Default: nothing.
  public func didReject(head: HTTPRequestHead?, error: HTTPParserError, context: RequestContext) {}
}

extension ResponsePlan {
  /// A plan that will never run (its connection went away while it was being made): what feeds it stops
  /// and its completion is told it was not served, so its journal entry is closed.
  func abandon() {
    cancelStreams()
    onComplete?(false)
  }

  /// Cancels the content sources of a plan that will not run: a relayed body's producer stops, an event
  /// stream's viewer is forgotten.
  func cancelStreams() {
    for step in steps {
      switch step {
      case .streamedResponse(_, _, let source): source.cancel()
      case .upgrade(_, let session): session.cancel()
      default: continue
      }
    }
  }

  /// The status code of the first response head the plan sends, nil when it sends none (faults).
  var sentStatus: Int? {
    for step in steps {
      switch step {
      case .response(let head, _), .responseHead(let head, _), .streamedResponse(let head, _, _),
        .upgrade(let head, _):
        return head.status.code
      case .prepared(let p): return p.status.code
      default: continue
      }
    }
    return nil
  }
}
