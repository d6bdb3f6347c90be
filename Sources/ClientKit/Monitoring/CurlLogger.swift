import Foundation

/// An ``EventMonitor`` that logs each request as a `curl` command you can paste into a terminal, and one
/// line per response, retry and outcome. `Authorization` (and the other ``redactedHeaders``) are written
/// as `<redacted>`.
///
/// ```swift
/// let client = APIClient(baseURL: base, monitors: [CurlLogger()])          // print()
/// let quiet = CurlLogger(bodyLimit: 0) { line in os_log("%{public}@", line) }
/// ```
///
/// Output for one call:
/// ```
/// [ClientKit #3] curl -X POST 'http://127.0.0.1:8080/api/v1/friends/requests' -H 'Authorization: <redacted>' -H 'Content-Type: application/json' --data-binary '{"userId":7}'
/// [ClientKit #3] ← 201 POST http://127.0.0.1:8080/api/v1/friends/requests (12 ms, 48 bytes)
/// [ClientKit #3] ✓ 1 attempt, 13 ms, sent 12 bytes, received 48 bytes
/// ```
public struct CurlLogger: EventMonitor {
  /// Header names (any case) whose values are replaced by `<redacted>`.
  public var redactedHeaders: Set<String>
  /// The most body bytes shown in `--data-binary` (as UTF-8 text); longer bodies are cut with `…`, binary
  /// ones are shown as `<N bytes>`. 0 hides bodies.
  public var bodyLimit: Int
  /// Receives each line.
  public var output: @Sendable (String) -> Void

  /// Creates a logger.
  /// - Parameters:
  ///   - redactedHeaders: default `Authorization`, `Proxy-Authorization`, `Cookie`, `X-Auth-Token`.
  ///   - bodyLimit: default 1024 bytes.
  ///   - output: default `print`.
  public init(
    redactedHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "x-auth-token"],
    bodyLimit: Int = 1024, output: @escaping @Sendable (String) -> Void = { print($0) }
  ) {
    self.redactedHeaders = Set(redactedHeaders.map { $0.lowercased() })
    self.bodyLimit = bodyLimit
    self.output = output
  }

  /// The `curl` command line for `request` (headers redacted).
  public func curlCommand(for request: TransportRequest) -> String {
    var parts = ["curl"]
    if request.method != .get || !request.body.isEmpty { parts.append("-X \(request.method.rawValue)") }
    parts.append(Self.quote(request.url.absoluteString))
    for field in request.headers {
      let value = redactedHeaders.contains(field.name.lowercased()) ? "<redacted>" : field.value
      parts.append("-H " + Self.quote("\(field.name): \(value)"))
    }
    if !request.body.isEmpty, bodyLimit > 0 {
      if let text = String(data: request.body, encoding: .utf8) {
        let shown =
          text.utf8.count > bodyLimit
          ? String(decoding: text.utf8.prefix(bodyLimit), as: UTF8.self) + "…" : text
        parts.append("--data-binary " + Self.quote(shown))
      } else {
        parts.append("--data-binary '<\(request.body.count) bytes>'")
      }
    }
    return parts.joined(separator: " ")
  }

  /// Logs the curl command.
  public func requestSent(_ call: CallID, request: TransportRequest, attempt: Int) {
    let again = attempt > 1 ? " (attempt \(attempt))" : ""
    output("[ClientKit \(call)]\(again) \(curlCommand(for: request))")
  }

  /// Logs status, method, URL, time and size.
  public func responseReceived(_ call: CallID, response: ResponseInfo, attempt: Int, duration: Duration) {
    output(
      "[ClientKit \(call)] ← \(response.statusCode) \(response.request) (\(Self.milliseconds(duration)) ms, "
        + "\(response.body.count) bytes)")
  }

  /// Logs the error and the delay.
  public func retryScheduled(_ call: CallID, error: APIError, delay: Duration, attempt: Int) {
    output("[ClientKit \(call)] ↻ retry in \(Self.milliseconds(delay)) ms after: \(error)")
  }

  /// Logs a summary of the metrics.
  public func requestDecoded(_ call: CallID, response: ResponseInfo, metrics: RequestMetrics) {
    output("[ClientKit \(call)] ✓ \(Self.summary(metrics))")
  }

  /// Logs the error and a summary of the metrics.
  public func requestFailed(_ call: CallID, error: APIError, metrics: RequestMetrics) {
    output("[ClientKit \(call)] ✗ \(error) — \(Self.summary(metrics))")
  }

  static func summary(_ m: RequestMetrics) -> String {
    if m.fromCache { return "from the cache, \(milliseconds(m.totalDuration)) ms" }
    let n = m.attempts.count
    return
      "\(n) attempt\(n == 1 ? "" : "s"), \(milliseconds(m.totalDuration)) ms, sent \(m.bytesSent) bytes, "
      + "received \(m.bytesReceived) bytes"
  }

  static func milliseconds(_ d: Duration) -> Int64 {
    d.components.seconds * 1000 + d.components.attoseconds / 1_000_000_000_000_000
  }

  /// Single-quoted for a POSIX shell.
  static func quote(_ text: String) -> String {
    "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
  }
}
