import HTTPCore
import MockJSON
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// `--log-format json` for lines written with ``StandardError/line(_:waitMilliseconds:)``.
private let jsonLinesMode = Atomic<Bool>(false)

/// Writes to standard error with `write(2)`, never with `FileHandle` (whose `write` traps on `EPIPE` on
/// Linux). A write never blocks for longer than the time given, and a closed or broken standard error
/// (`EPIPE`, `EBADF`) is reported instead of killing the process.
public enum StandardError {
  /// What a write achieved.
  public enum Outcome: Equatable, Sendable {
    /// Every byte was written.
    case written
    /// `count` bytes were written before standard error stayed full for the whole wait; the caller may
    /// keep the rest for later or drop it.
    case full(written: Int)
    /// Standard error is closed or nobody can read it any more (`EPIPE`, `EBADF`, …); nothing more will
    /// get through.
    case broken(written: Int)
  }

  /// Writes `bytes` to descriptor 2, waiting at most `waitMilliseconds` each time it is full.
  /// - Parameters:
  ///   - bytes: what to write.
  ///   - waitMilliseconds: how long to wait for room (0: never wait).
  /// - Returns: whether everything went out, the descriptor stayed full, or it is broken.
  @discardableResult
  public static func write(_ bytes: [UInt8], waitMilliseconds: Int32 = 1000) -> Outcome {
    write(bytes, to: 2, waitMilliseconds: waitMilliseconds)
  }

  /// Writes a line (a newline is added) to standard error; see ``write(_:waitMilliseconds:)``. Under
  /// ``logsJSON`` each line of `text` goes out as a JSON object (``jsonLines(_:)``).
  @discardableResult
  public static func line(_ text: String, waitMilliseconds: Int32 = 1000) -> Outcome {
    let out = jsonLinesMode.load(ordering: .relaxed) ? jsonLines(text) : text
    return write(Array((out + "\n").utf8), waitMilliseconds: waitMilliseconds)
  }

  /// `--log-format json`: when true, ``line(_:waitMilliseconds:)`` writes JSON lines (set once at start).
  package static var logsJSON: Bool {
    get { jsonLinesMode.load(ordering: .relaxed) }
    set { jsonLinesMode.store(newValue, ordering: .relaxed) }
  }

  /// `text` as JSON lines, each with a `time` (RFC 3339, UTC, milliseconds): a line that is a JSON
  /// object already (a request log line) gets `time` as its first member, any other line becomes
  /// `{"time": …, "message": line}`. Empty lines are left out.
  package static func jsonLines(_ text: String) -> String {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    let time = "\"time\":\"" + HTTPDate.iso8601(Double(now.tv_sec) + Double(now.tv_nsec) / 1e9) + "\""
    var out: [String] = []
    for line in text.split(separator: "\n") {
      if line.hasPrefix("{"), line.hasSuffix("}") {
        out.append("{" + time + (line.count > 2 ? "," : "") + line.dropFirst())
      } else {
        out.append("{" + time + ",\"message\":" + JSONValue.quoted(String(line)) + "}")
      }
    }
    return out.joined(separator: "\n")
  }

  /// Writes `bytes` to `fd` in pieces no larger than a pipe's atomic size, each after `poll` said there
  /// is room, so a pipe nobody reads cannot block the caller beyond `waitMilliseconds`.
  static func write(_ bytes: [UInt8], to fd: Int32, waitMilliseconds: Int32) -> Outcome {
    var offset = 0
    while offset < bytes.count {
      var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
      let ready = poll(&descriptor, 1, waitMilliseconds)
      if ready < 0 {
        if errno == EINTR { continue }
        return .broken(written: offset)
      }
      if ready == 0 { return .full(written: offset) }
      // A pipe whose reader is gone polls as POLLERR: stop before a write that would raise SIGPIPE.
      if descriptor.revents & Int16(POLLNVAL | POLLERR) != 0 { return .broken(written: offset) }
      let piece = min(bytes.count - offset, Int(PIPE_BUF))
      let n = bytes[offset..<(offset + piece)].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
      if n > 0 {
        offset += n
        continue
      }
      if n < 0, errno == EINTR || errno == EAGAIN { continue }
      return .broken(written: offset)
    }
    return .written
  }
}
