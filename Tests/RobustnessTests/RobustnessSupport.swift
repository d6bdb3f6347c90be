import Foundation
import MockServerTesting
import TestSupport

#if canImport(Glibc)
  import Glibc
#endif

/// One `GET path` on a new connection; returns the response text ("" when none came in `timeout`).
func get(_ port: Int, _ path: String, timeout: Double = 10) -> String {
  guard let socket = try? RawClient(port: port) else { return "" }
  socket.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
  return socket.readResponse(timeout: timeout).text
}

/// The status code of a response text, or 0.
func status(_ response: String) -> Int {
  guard response.hasPrefix("HTTP/1.1 ") else { return 0 }
  return Int(response.dropFirst(9).prefix(3)) ?? 0
}

struct RobustnessError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Readings from `/proc/PID`.
enum ProcStat {
  /// Resident set size in bytes (`VmRSS`), or its peak so far (`VmHWM`) when `peak`.
  static func residentBytes(_ pid: Int32, peak: Bool = false) -> Int {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return 0 }
    for line in text.split(separator: "\n") where line.hasPrefix(peak ? "VmHWM:" : "VmRSS:") {
      let kb = line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap {
        Int($0)
      }
      return (kb ?? 0) * 1024
    }
    return 0
  }

  /// Open descriptors (entries of `/proc/PID/fd`).
  static func openDescriptors(_ pid: Int32) -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? 0
  }

  /// Open sockets (listeners and connections) of a process: the descriptors in `/proc/PID/fd` that link
  /// to `socket:[inode]`. Unlike ``openDescriptors(_:)`` it does not count what the runtime opens lazily
  /// (Dispatch's epoll, eventfd and timerfd appear the first time something schedules on it).
  static func openSockets(_ pid: Int32) -> Int {
    let directory = "/proc/\(pid)/fd"
    let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
    return names.count { name in
      ((try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + name)) ?? "")
        .hasPrefix("socket:")
    }
  }

  /// User plus system CPU time in seconds (`/proc/PID/stat` fields 14 and 15).
  static func cpuSeconds(_ pid: Int32) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = text.lastIndex(of: ")")
    else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // fields[0] is the state (field 3); utime is field 14, stime field 15.
    guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }
}

/// A stub answering `GET url` with `body`, plus optional extra response fields (JSON fragment).
func stubJSON(_ url: String, body: String = "ok", extra: String = "") -> String {
  #"{"request":{"method":"GET","url":"\#(url)"},"response":{"status":200,"body":"\#(body)"\#(extra)}}"#
}

/// Runs the `mockserver` binary to its end with `arguments` (in `directory` when given); returns its exit
/// status and what it wrote to standard output and standard error.
func runBinary(_ arguments: [String], in directory: String? = nil) throws -> (Int32, String) {
  let result = try runProcess(
    MockServerProcess.defaultBinary(), arguments, in: directory, mergingErrors: true)
  return (result.status, result.stdout)
}
