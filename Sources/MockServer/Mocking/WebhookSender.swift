import Foundation
import HTTPCore

#if canImport(Glibc)
  import Glibc
#endif

/// The smallest HTTP/1.1 client the webhooks need: one request over a plain TCP socket (no TLS, no
/// redirects, no connection reuse), written with HTTPCore's serializer and read with its parser in
/// response mode. Blocking: call it off the event loop. One file on purpose, so a fuller upstream client
/// can replace it.
enum WebhookSender {
  /// Why a webhook was not delivered.
  struct Failure: Error, CustomStringConvertible {
    var description: String
  }

  /// Largest response content read back (the rest is not read; webhooks only report the status).
  static let maxResponseBytes = 1 << 20

  /// Sends `method url` with `headers` and `body`; returns the response status.
  /// - Parameters:
  ///   - url: `http://host[:port]/path?query` (https is refused: no TLS here).
  ///   - timeoutMilliseconds: bound for connecting, and for each send and receive.
  static func send(
    method: String, url: String, headers: HTTPHeaders, body: [UInt8], timeoutMilliseconds: Int = 10_000
  ) -> Result<Int, Failure> {
    guard let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(),
      let host = parsed.host, !host.isEmpty
    else { return .failure(Failure(description: "not an absolute URL: \(url)")) }
    guard scheme == "http" else {
      return .failure(Failure(description: "\(scheme) webhooks are not supported (only http): \(url)"))
    }
    let port = parsed.port ?? 80
    guard (1...65535).contains(port) else { return .failure(Failure(description: "bad port in \(url)")) }
    var target = parsed.percentEncodedPath.isEmpty ? "/" : parsed.percentEncodedPath
    if let q = parsed.percentEncodedQuery { target += "?" + q }

    let fd: Int32
    switch connect(host: host, port: port, timeoutMilliseconds: timeoutMilliseconds) {
    case .failure(let f): return .failure(f)
    case .success(let s): fd = s
    }
    defer { _ = Glibc.close(fd) }

    var fields = headers
    let hostValue = host.contains(":") ? "[\(host)]" : host
    if !fields.contains("Host") {
      fields.add(name: "Host", value: port == 80 ? hostValue : "\(hostValue):\(port)")
    }
    fields.replaceOrAdd(name: "Content-Length", value: String(body.count))
    fields.replaceOrAdd(name: "Connection", value: "close")
    var bytes = HTTPSerializer.requestHead(
      HTTPRequestHead(method: HTTPMethod(rawValue: method), target: target, headers: fields))
    bytes += body
    var sent = 0
    while sent < bytes.count {
      let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
      guard n > 0 else {
        return .failure(Failure(description: "send to \(host):\(port) failed: \(errnoText())"))
      }
      sent += n
    }

    var parser = HTTPParser(mode: .response)
    parser.expectResponse(to: HTTPMethod(rawValue: method))
    var buffer = [UInt8](repeating: 0, count: 16384)
    var received = 0
    while received <= maxResponseBytes {
      do {
        while let event = try parser.next() {
          if case .responseHead(let head) = event, head.status.code >= 200 {
            return .success(head.status.code)
          }
        }
      } catch {
        return .failure(Failure(description: "bad response from \(host):\(port): \(error)"))
      }
      let n = buffer.withUnsafeMutableBytes { Glibc.recv(fd, $0.baseAddress, $0.count, 0) }
      if n <= 0 {
        return .failure(
          Failure(description: "\(host):\(port) closed or timed out before a response (\(errnoText()))"))
      }
      received += n
      parser.append(Array(buffer[0..<n]))
    }
    return .failure(Failure(description: "response head from \(host):\(port) too large"))
  }

  /// A connected TCP socket to `host:port` with send and receive timeouts set.
  private static func connect(host: String, port: Int, timeoutMilliseconds: Int) -> Result<Int32, Failure> {
    var hints = addrinfo()
    hints.ai_family = AF_UNSPEC
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var list: UnsafeMutablePointer<addrinfo>?
    let rc = getaddrinfo(host, String(port), &hints, &list)
    guard rc == 0, let first = list else {
      return .failure(Failure(description: "cannot resolve \(host): \(String(cString: gai_strerror(rc)))"))
    }
    defer { freeaddrinfo(list) }
    var timeout = timeval(
      tv_sec: timeoutMilliseconds / 1000, tv_usec: suseconds_t((timeoutMilliseconds % 1000) * 1000))
    var lastError = "no address"
    var next: UnsafeMutablePointer<addrinfo>? = first
    while let info = next {
      next = info.pointee.ai_next
      let fd = socket(info.pointee.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
      guard fd >= 0 else { continue }
      setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
      setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
      if Glibc.connect(fd, info.pointee.ai_addr, info.pointee.ai_addrlen) == 0 { return .success(fd) }
      lastError = errnoText()
      _ = Glibc.close(fd)
    }
    return .failure(Failure(description: "cannot connect to \(host):\(port): \(lastError)"))
  }

  private static func errnoText() -> String { String(cString: strerror(errno)) }
}
