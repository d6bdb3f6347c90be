import HTTPCore
import MockJSON
import Templating

/// A stub's `x-websocket` (docs/streaming.md, "WebSocket"): the upgrade answered with 101, then messages
/// on open, WireMock 4 message mappings for received messages, server pings and an optional server close.
/// Everything is resolved at load time (templates compiled, base64 decoded, files read).
public struct WebSocketDefinition: Sendable, Hashable {
  /// Text sent: the template compiled when it has tags (every text a connection sends is a template, as
  /// in WireMock 4), the text as written otherwise.
  public struct OutgoingText: Sendable, Hashable {
    /// The text as written (`\{{` unescaped by the template when rendered).
    public var text: String
    /// The compiled template, nil when the text has no tags.
    public var template: Template?
  }

  /// A message the server sends: text (a template) or binary.
  public enum Outgoing: Sendable, Hashable {
    /// A text frame.
    case text(OutgoingText)
    /// A binary frame.
    case binary([UInt8])
  }

  /// A message sent on open, after `delayMilliseconds` counted from the previous one.
  public struct OpeningMessage: Sendable, Hashable {
    /// What is sent.
    public var body: Outgoing
    /// The wait before it (0...24 h).
    public var delayMilliseconds: Int
  }

  /// A close frame's code and reason (`closeStatus`, the `x-close` action).
  public struct CloseStatus: Sendable, Hashable {
    /// 1000–1003, 1007–1014 or 3000–4999.
    public var code: UInt16
    /// At most 123 bytes of UTF-8.
    public var reason: String
    /// A status.
    public init(code: UInt16, reason: String) {
      self.code = code
      self.reason = reason
    }
  }

  /// Which channels a `send` action reaches.
  public enum ChannelTarget: Sendable, Hashable {
    /// The connection whose message triggered it.
    case originating
    /// Every open channel whose upgrade request matches.
    case requestInitiated(RequestPattern)
  }

  /// An action of a message mapping, run in order.
  public enum Action: Sendable, Hashable {
    /// `send`: a message to `target`, after `delayMilliseconds` (`x-delay`).
    case send(Outgoing, target: ChannelTarget, parameters: JSONValue?, delayMilliseconds: Int)
    /// `x-close`: a close frame, after `delayMilliseconds`.
    case close(CloseStatus, delayMilliseconds: Int)
  }

  /// What starts a message mapping that an HTTP request triggers (WireMock 4's `http-request` and
  /// `http-stub` triggers; only in `message-mappings/` and `/__admin/message-mappings`).
  public enum HTTPTrigger: Sendable, Hashable {
    /// `{"type": "http-request", "requestPattern": …}`: any request (matched by a stub or not) the pattern
    /// matches.
    case request(RequestPattern)
    /// `{"type": "http-stub", "stubId": …}`: a request the stub with this id answered.
    case stub(id: String)
  }

  /// A WireMock 4 message stub mapping: a trigger (a message whose body matches, or an HTTP request) and
  /// actions.
  public struct MessageMapping: Sendable, Hashable {
    /// `id` (made when absent).
    public var id: String
    /// `name`.
    public var name: String?
    /// `priority`: 1 is highest, default 5.
    public var priority: Int
    /// `trigger.channel.initiatingRequestPattern`: the upgrade request the channel must have; nil = any.
    public var channelPattern: RequestPattern?
    /// `trigger.message.body`: nil matches any message.
    public var bodyPattern: StringValuePattern?
    /// The actions.
    public var actions: [Action]
    /// Where it was loaded from (file, JSON path), for the journal and diagnostics.
    public var location: String
    /// Set for a mapping an HTTP request triggers (it never answers a received message).
    public var httpTrigger: HTTPTrigger? = nil
    /// `metadata`, as given (`find-by-metadata`, `remove-by-metadata`).
    public var metadata: JSONValue? = nil
    /// The mapping as written, with its `id` (what `GET /__admin/message-mappings` shows).
    public var source: JSONValue = .null
    /// The file it came from (relative to the fixtures folder), nil for one added at run time.
    public var file: String? = nil

    /// True when `message` matches the body pattern: text as text; binary as bytes for `binaryEqualTo`,
    /// as its UTF-8 reading for the others.
    public func matches(_ message: WebSocketMessage) -> Bool {
      Self.message(message, matches: bodyPattern)
    }

    /// True when `message` matches `bodyPattern` (nil matches any), as ``matches(_:)`` reads a message.
    public static func message(_ message: WebSocketMessage, matches bodyPattern: StringValuePattern?) -> Bool
    {
      guard let bodyPattern else { return true }
      switch message {
      case .text(let text): return bodyPattern.match(text)
      case .binary(let bytes):
        if case .binaryEqualTo(let expected) = bodyPattern { return bytes == expected }
        return bodyPattern.match(String(decoding: bytes, as: UTF8.self))
      }
    }
  }

  /// `subprotocol`: sent as `Sec-WebSocket-Protocol` when the client offered it.
  public var subprotocol: String?
  /// `messages`: sent on open, in order.
  public var messages: [OpeningMessage] = []
  /// `closeConnection`: the server closes after the messages.
  public var closeConnection = false
  /// `closeStatus`: the code and reason of that close (1000, "" by default).
  public var closeStatus = CloseStatus(code: 1000, reason: "")
  /// `pingIntervalMilliseconds`: 0 = no pings.
  public var pingIntervalMilliseconds = 0
  /// `messageMappings`: applied to messages received on connections this stub opened.
  public var messageMappings: [MessageMapping] = []

  /// An empty definition (accepts the upgrade, sends nothing).
  public init() {}

  /// The best mapping for `message` among `mappings` (lowest priority number; ties: the later one), on a
  /// channel opened by `upgrade` (`connection` as request matching sees it).
  public static func bestMapping(
    for message: WebSocketMessage, in mappings: [MessageMapping], upgrade: HTTPRequest,
    connection: RequestView.Connection?
  ) -> MessageMapping? {
    var best: MessageMapping?
    for mapping in mappings where mapping.httpTrigger == nil && mapping.matches(message) {
      if let pattern = mapping.channelPattern {
        guard let view = try? RequestView(upgrade, connection: connection), pattern.matches(view).0 else {
          continue
        }
      }
      if let current = best, current.priority < mapping.priority { continue }
      best = mapping
    }
    return best
  }
}
