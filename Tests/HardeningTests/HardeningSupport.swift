import Foundation
import MockServerTesting

#if canImport(Glibc)
  import Glibc
#endif

/// A blocking loopback TCP client with deadlines on every read: raw bytes in, raw bytes out.
final class Socket {
  let fd: Int32

  /// Connects to `127.0.0.1:port`.
  init(port: Int) throws {
    fd = try LoopbackSocket.connect(port: port)
  }

  deinit { Glibc.close(fd) }

  /// Sets the kernel receive buffer (before reading nothing, to make a slow reader).
  func setReceiveBuffer(_ bytes: Int32) {
    var value = bytes
    setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &value, socklen_t(MemoryLayout<Int32>.size))
  }

  /// Sends everything, or stops at the first error; returns the bytes sent.
  @discardableResult
  func send(_ bytes: [UInt8]) -> Int {
    var offset = 0
    while offset < bytes.count {
      let n = bytes[offset...].withUnsafeBytes {
        Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
      }
      if n <= 0 { return offset }
      offset += n
    }
    return offset
  }

  @discardableResult
  func send(_ text: String) -> Int { send(Array(text.utf8)) }

  /// Sends without waiting for room: returns what the kernel took now (0 when full).
  func sendNow(_ bytes: [UInt8]) -> Int {
    let n = bytes.withUnsafeBytes {
      Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT))
    }
    return max(0, n)
  }

  /// Reads until `until` holds, end of stream, an error, or `timeout` seconds.
  func read(timeout: Double = 10, until: ([UInt8]) -> Bool = { _ in false }) -> (bytes: [UInt8], closed: Bool)
  {
    var data: [UInt8] = []
    let deadline = Date().addingTimeInterval(timeout)
    var buffer = [UInt8](repeating: 0, count: 65536)
    while !until(data) {
      let remaining = deadline.timeIntervalSinceNow
      if remaining <= 0 { return (data, false) }
      var pfd = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
      if poll(&pfd, 1, Int32(max(1, remaining * 1000))) == 0 { return (data, false) }
      let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
      if n > 0 {
        data.append(contentsOf: buffer[0..<n])
      } else if n == 0 || errno != EINTR {
        return (data, true)
      }
    }
    return (data, false)
  }

  /// Reads one Content-Length framed response and returns its text ("" when none came).
  func readResponse(timeout: Double = 10) -> String {
    String(decoding: read(timeout: timeout) { responseCount($0) >= 1 }.bytes, as: UTF8.self)
  }

  /// Reads `count` responses; returns how many arrived.
  func readResponses(_ count: Int, timeout: Double = 10) -> Int {
    responseCount(read(timeout: timeout) { responseCount($0) >= count }.bytes)
  }
}

/// Counts complete Content-Length framed responses in `bytes`.
func responseCount(_ bytes: [UInt8]) -> Int {
  var count = 0
  var index = 0
  while index < bytes.count {
    guard let end = findHeadEnd(bytes, from: index) else { return count }
    let head = String(decoding: bytes[index..<end], as: UTF8.self).lowercased()
    var length = 0
    for line in head.split(separator: "\r\n") where line.hasPrefix("content-length:") {
      length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
    }
    guard bytes.count - (end + 4) >= length else { return count }
    count += 1
    index = end + 4 + length
  }
  return count
}

/// The index of the CRLF CRLF that ends the head starting at `start`, if it is in `bytes`.
func findHeadEnd(_ bytes: [UInt8], from start: Int) -> Int? {
  var i = start
  while i + 4 <= bytes.count {
    if bytes[i] == 13, bytes[i + 1] == 10, bytes[i + 2] == 13, bytes[i + 3] == 10 { return i }
    i += 1
  }
  return nil
}

/// One `GET path` on a new connection; returns the response text ("" when none came in `timeout`).
func get(_ port: Int, _ path: String, timeout: Double = 10) -> String {
  guard let socket = try? Socket(port: port) else { return "" }
  socket.send("GET \(path) HTTP/1.1\r\nHost: localhost\r\n\r\n")
  return socket.readResponse(timeout: timeout)
}

/// The status code of a response text, or 0.
func status(_ response: String) -> Int {
  guard response.hasPrefix("HTTP/1.1 ") else { return 0 }
  return Int(response.dropFirst(9).prefix(3)) ?? 0
}

struct HardeningError: Error, CustomStringConvertible {
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

/// A fixtures folder in a fresh temporary directory, removed by ``remove()``.
struct TemporaryFixtures {
  let root: String
  var fixtures: String { root + "/FX" }

  /// Creates `FX/mappings/` with one file per `(name, json)`.
  init(_ stubs: [(String, String)]) throws {
    root = NSTemporaryDirectory() + "hardening-" + UUID().uuidString
    try TemporaryFixtures.write(stubs, into: root + "/FX")
  }

  static func write(_ stubs: [(String, String)], into folder: String) throws {
    try FileManager.default.createDirectory(atPath: folder + "/mappings", withIntermediateDirectories: true)
    for (name, json) in stubs {
      try json.write(toFile: folder + "/mappings/" + name, atomically: true, encoding: .utf8)
    }
  }

  func remove() { try? FileManager.default.removeItem(atPath: root) }
}

/// A stub answering `GET url` with `body`, plus optional extra response fields (JSON fragment).
func stubJSON(_ url: String, body: String = "ok", extra: String = "") -> String {
  #"{"request":{"method":"GET","url":"\#(url)"},"response":{"status":200,"body":"\#(body)"\#(extra)}}"#
}

/// Waits until `condition` holds or `timeout` seconds pass; returns whether it held.
func eventually(timeout: Double = 20, _ condition: () -> Bool) -> Bool {
  let deadline = Date().addingTimeInterval(timeout)
  while Date() < deadline {
    if condition() { return true }
    usleep(50_000)
  }
  return condition()
}

/// Runs the `mockserver` binary to its end with `arguments` (in `directory` when given); returns its exit
/// status and what it wrote to standard output and standard error.
func runBinary(_ arguments: [String], in directory: String? = nil) throws -> (Int32, String) {
  let process = Process()
  process.executableURL = URL(fileURLWithPath: MockServerProcess.defaultBinary())
  process.arguments = arguments
  if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
  let output = Pipe()
  process.standardOutput = output
  process.standardError = output
  try process.run()
  let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
  process.waitUntilExit()
  return (process.terminationStatus, text)
}
