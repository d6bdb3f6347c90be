@preconcurrency import Dispatch
import Foundation
import HTTPCore
import MockJSON
import Synchronization

/// Writes one log line per request to standard error, batched: lines are appended to a buffer under a
/// lock (no I/O on the event loop) and flushed every 100 ms from a background queue.
///
/// `@unchecked Sendable`: the only mutable state is `buffer` (a `Mutex`); `timer` is set once in `init`
/// and only cancelled in `deinit`.
public final class RequestLogger: @unchecked Sendable {
  /// How much to log.
  public enum Level: Sendable {
    /// Nothing per request (warnings and reload reports still go out).
    case quiet
    /// One line per request: method, path, status, stub or "no match", duration.
    case normal
    /// The line plus request and response headers and bodies.
    case verbose
  }

  /// The level in effect.
  public let level: Level
  /// True for `--log-format json`: one JSON object per line.
  public let json: Bool
  private let buffer = LogBuffer()
  private let flushQueue = DispatchQueue(label: "mockserver.log")
  private let timer: DispatchSourceTimer

  /// Creates a logger and starts its flush timer.
  public init(level: Level = .normal, json: Bool = false) {
    self.level = level
    self.json = json
    timer = DispatchSource.makeTimerSource(queue: flushQueue)
    timer.schedule(deadline: .now() + .milliseconds(100), repeating: .milliseconds(100))
    let buffer = self.buffer
    timer.setEventHandler { @Sendable in RequestLogger.flush(buffer) }
    timer.resume()
  }

  deinit {
    timer.cancel()
    RequestLogger.flush(buffer)
  }

  /// Writes anything buffered now.
  public func flush() { RequestLogger.flush(buffer) }

  private static func flush(_ buffer: LogBuffer) {
    let bytes = buffer.lines.withLock { b -> [UInt8] in
      let out = b
      b.removeAll(keepingCapacity: true)
      return out
    }
    guard !bytes.isEmpty else { return }
    FileHandle.standardError.write(Data(bytes))
  }

  /// Appends a line (a newline is added).
  public func line(_ text: String) {
    buffer.lines.withLock { b in
      b.append(contentsOf: text.utf8)
      b.append(10)
    }
  }

  /// Logs a request the parser rejected (the server answered `status` and closed).
  func rejected(client: String, status: Int, reason: String) {
    guard level != .quiet else { return }
    if json {
      line(
        #"{"rejected":true,"client":\#(JSONValue.quoted(client)),"status":\#(status),"error":\#(JSONValue.quoted(reason))}"#
      )
    } else {
      line("rejected request from \(client): \(status) \(reason)")
    }
  }

  /// Logs a served request.
  /// - Parameters:
  ///   - stub: the matched stub's name or id, or nil for no match.
  ///   - durationMilliseconds: request complete to response complete.
  func request(
    _ request: HTTPRequest, status: Int?, fault: String?, stub: String?, durationMilliseconds: Double,
    served: Bool = true, responseHead: HTTPResponseHead? = nil, responseBody: [UInt8] = [],
    nearMisses: String? = nil
  ) {
    guard level != .quiet else { return }
    let ms = (durationMilliseconds * 10).rounded() / 10
    let outcome = served ? (fault ?? status.map(String.init) ?? "-") : "client-closed"
    if json {
      var fields = [
        "\"method\":\(JSONValue.quoted(request.method.rawValue))",
        "\"url\":\(JSONValue.quoted(request.head.target))",
        "\"status\":\(status.map(String.init) ?? "null")",
        "\"stub\":" + (stub.map { "\(JSONValue.quoted($0))" } ?? "null"),
        "\"durationMs\":\(ms)",
      ]
      if let fault { fields.append("\"fault\":\"\(fault)\"") }
      if let nearMisses { fields.append("\"nearMisses\":\(JSONValue.quoted(nearMisses))") }
      if !served { fields.append("\"served\":false") }
      if level == .verbose {
        fields.append("\"requestHeaders\":\(JSONValue.quoted(request.headers.description))")
        fields.append("\"requestBody\":\(JSONValue.quoted(String(decoding: request.body, as: UTF8.self)))")
        fields.append("\"responseBody\":\(JSONValue.quoted(String(decoding: responseBody, as: UTF8.self)))")
      }
      line("{" + fields.joined(separator: ",") + "}")
    } else {
      line("\(request.method.rawValue) \(request.head.target) \(outcome) \(stub ?? "no match") \(ms)ms")
      if let nearMisses { line(nearMisses) }
      if level == .verbose {
        var detail = "  > " + request.headers.description.replacingOccurrences(of: "\n", with: "\n  > ")
        if !request.body.isEmpty { detail += "\n  > " + String(decoding: request.body, as: UTF8.self) }
        if let responseHead {
          detail += "\n  < " + responseHead.headers.description.replacingOccurrences(of: "\n", with: "\n  < ")
        }
        if !responseBody.isEmpty { detail += "\n  < " + String(decoding: responseBody, as: UTF8.self) }
        line(detail)
      }
    }
  }
}

/// The logger's pending bytes.
final class LogBuffer: Sendable {
  let lines = Mutex<[UInt8]>([])
}
